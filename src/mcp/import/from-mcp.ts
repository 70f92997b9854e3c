/**
 * A remote `CallToolResult` as a canonical `ToolResult` (`fromMcp`), and a toolwire 2025
 * server's held confirmation (`_meta["toolwire/confirmation"]`) as a local one.
 */
import type { CallToolResult } from '@modelcontextprotocol/server'
import { MCP_UNTRUSTED_META_KEY } from '../../render/mcp.js'
import { UNTRUSTED_CLOSE, UNTRUSTED_NOTE, UNTRUSTED_OPEN } from '../../render/model.js'
import { toolError, ToolResult } from '../../core/result.js'
import { TOOL_FAILED_MESSAGE } from '../../core/texts.js'
import { pending, type ModelResult } from '../../core/helpers.js'
import type { ContentPart, JsonValue } from '../../core/types.js'
import { MCP_CONFIRMATION_META_KEY } from '../meta.js'
import { httpUrl } from './remote-input.js'

/** Options of `fromMcp`. */
export interface FromMcpOptions {
  /** Mark the result as untrusted content (default: only when the result carries `_meta["toolwire/untrusted"]`, whose delimiters are then removed from the text so they are not doubled). */
  readonly untrusted?: boolean
}

/**
 * The canonical result of an MCP `CallToolResult`.
 *
 * - `isError: true` → an error (kind `other`) whose message is the result's text (or
 *   "The tool failed." when it has none); media parts are kept.
 * - otherwise a success: the text items joined by newlines, `image` and `audio` items
 *   as parts, embedded resources as `file` parts (a text resource's text is appended to
 *   the text), resource links as URL parts, and `structuredContent` as the data.
 */
export function fromMcp(result: CallToolResult, options: FromMcpOptions = {}): ToolResult {
  const texts: string[] = []
  const parts: ContentPart[] = []
  for (const item of result.content ?? []) {
    switch (item.type) {
      case 'text':
        texts.push(item.text)
        break
      case 'image':
        parts.push({ type: 'image', mimeType: item.mimeType, data: item.data })
        break
      case 'audio':
        parts.push({ type: 'audio', mimeType: item.mimeType, data: item.data })
        break
      case 'resource': {
        const r = item.resource as { uri: string; mimeType?: string; text?: string; blob?: string }
        if (typeof r.blob === 'string') parts.push({ type: partType(r.mimeType), mimeType: r.mimeType ?? 'application/octet-stream', data: r.blob, name: r.uri })
        else if (typeof r.text === 'string') texts.push(r.text)
        break
      }
      case 'resource_link':
        parts.push({ type: partType(item.mimeType), mimeType: item.mimeType ?? 'application/octet-stream', url: item.uri, name: item.name })
        break
    }
  }
  let text = texts.join('\n')
  // a toolwire server already delimited untrusted text: unwrap it, keep the mark
  const markedUntrusted = result._meta?.[MCP_UNTRUSTED_META_KEY] === true
  if (markedUntrusted) {
    const head = `${UNTRUSTED_NOTE}\n${UNTRUSTED_OPEN}\n`
    const tail = `\n${UNTRUSTED_CLOSE}`
    if (text.startsWith(head) && text.endsWith(tail)) text = text.slice(head.length, text.length - tail.length)
  }
  let canonical: ToolResult
  if (result.isError === true) {
    canonical = ToolResult.failed(toolError('other', text === '' ? TOOL_FAILED_MESSAGE : text))
    if (parts.length > 0) canonical = canonical.withOutput({ text: canonical.text(), parts })
  } else if (result.structuredContent !== undefined) {
    const structured = result.structuredContent as JsonValue
    canonical = ToolResult.success({ text: text === '' ? JSON.stringify(structured) : text, ...(parts.length > 0 ? { parts } : {}), structured })
  } else {
    canonical = ToolResult.success(parts.length > 0 ? { text, parts } : text)
  }
  return options.untrusted === true || markedUntrusted ? canonical.withUntrusted(true) : canonical
}

function partType(mimeType: string | undefined): ContentPart['type'] {
  if (mimeType?.startsWith('image/')) return 'image'
  if (mimeType?.startsWith('audio/')) return 'audio'
  return 'file'
}

/** The longest confirmation summary kept from a server. */
const SUMMARY_MAX = 500

/**
 * A toolwire server's "this call waits for confirmation" result
 * (`_meta["toolwire/confirmation"]: { confirmId, summary, url? }`) as a pending
 * confirmation: the imported call ends `needs_confirmation` with the server's
 * `confirmId` and summary, and the approval URL (http or https only) in
 * `metadata.pending.url`. Undefined for any other result.
 */
export function remoteConfirmation(result: CallToolResult): ModelResult | undefined {
  const meta = result._meta?.[MCP_CONFIRMATION_META_KEY] as { confirmId?: unknown; summary?: unknown; url?: unknown } | undefined
  if (typeof meta !== 'object' || meta === null || typeof meta.confirmId !== 'string' || meta.confirmId === '') return undefined
  const summaryText = typeof meta.summary === 'string' && meta.summary !== '' ? meta.summary : 'a call of a remote tool'
  const summary = summaryText.length > SUMMARY_MAX ? `${summaryText.slice(0, SUMMARY_MAX)}…` : summaryText
  const url = httpUrl(meta.url)
  return pending(url === undefined ? { kind: 'confirmation', id: meta.confirmId, summary } : { kind: 'confirmation', id: meta.confirmId, summary, url })
}
