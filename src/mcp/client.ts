/**
 * The MCP client side: `importMcpTools` turns a connected MCP server's tools into
 * toolwire tool definitions (and registers them into a manager when given one);
 * `fromMcp` maps a `CallToolResult` back to a canonical `ToolResult`.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { ErrorCode, McpError, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js'
import type { JsonSchema, ToolContext, ToolDefinition, ToolHints, ToolManager } from '../runtime/manager.js'
import { MCP_UNTRUSTED_META_KEY } from '../render/mcp.js'
import { UNTRUSTED_CLOSE, UNTRUSTED_NOTE, UNTRUSTED_OPEN } from '../render/model.js'
import { toolError, ToolResult } from '../core/result.js'
import { TOOL_FAILED_MESSAGE } from '../core/texts.js'
import { pending, type ModelResult } from '../core/helpers.js'
import type { ContentPart, JsonValue } from '../core/types.js'
import { MCP_CONFIRMATION_META_KEY, MCP_UNTRUSTED_CONTENT_META_KEY } from './meta.js'

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
function remoteConfirmation(result: CallToolResult): ModelResult | undefined {
  const meta = result._meta?.[MCP_CONFIRMATION_META_KEY] as { confirmId?: unknown; summary?: unknown; url?: unknown } | undefined
  if (typeof meta !== 'object' || meta === null || typeof meta.confirmId !== 'string' || meta.confirmId === '') return undefined
  const summaryText = typeof meta.summary === 'string' && meta.summary !== '' ? meta.summary : 'a call of a remote tool'
  const summary = summaryText.length > SUMMARY_MAX ? `${summaryText.slice(0, SUMMARY_MAX)}…` : summaryText
  let url: string | undefined
  if (typeof meta.url === 'string') {
    try {
      const parsed = new URL(meta.url)
      if (parsed.protocol === 'https:' || parsed.protocol === 'http:') url = parsed.href
    } catch {
      // not a URL: left out
    }
  }
  return pending(url === undefined ? { kind: 'confirmation', id: meta.confirmId, summary } : { kind: 'confirmation', id: meta.confirmId, summary, url })
}

/** Options of `importMcpTools`. */
export interface ImportMcpToolsOptions {
  /** Prepended to each tool name (e.g. `"files__"`); the server is called with the original name. */
  readonly prefix?: string
  /** Which of the server's tools to import (default: all). */
  readonly filter?: (tool: Tool) => boolean
  /**
   * Mark every imported tool's results as untrusted content. Default: only tools the
   * server marks with `_meta["toolwire/untrustedContent"]`.
   */
  readonly untrusted?: boolean
  /** The MCP request timeout per call, in ms (default: the SDK's, 60 s). */
  readonly requestTimeoutMs?: number
  /** Replace same-named tools already registered in the manager. */
  readonly replace?: boolean
  /**
   * Register names outside the rule every model provider accepts (`^[a-zA-Z0-9_-]{1,64}$`),
   * such as MCP's dotted names; without it such a name fails the import.
   */
  readonly anyName?: boolean
}

function hintsOf(tool: Tool, untrusted: boolean | undefined): ToolHints {
  const a = tool.annotations ?? {}
  const hints: { -readonly [K in keyof ToolHints]: ToolHints[K] } = {}
  if (typeof a.readOnlyHint === 'boolean') hints.readOnly = a.readOnlyHint
  if (typeof a.destructiveHint === 'boolean') hints.destructive = a.destructiveHint
  if (typeof a.idempotentHint === 'boolean') hints.idempotent = a.idempotentHint
  if (untrusted ?? tool._meta?.[MCP_UNTRUSTED_CONTENT_META_KEY] === true) hints.untrustedContent = true
  return hints
}

/** The longest part of a server's error message that reaches the model. */
const SERVER_MESSAGE_MAX = 200

/**
 * A JSON-RPC error from the server as an error result. The server's message is cut to
 * its first line and 200 characters: a raw validation dump (as some servers send with
 * -32602 or -32603) never becomes the model's message.
 */
function protocolFailure(err: unknown): ToolResult {
  if (err instanceof McpError) {
    const kind = err.code === ErrorCode.RequestTimeout ? 'timeout' : err.code === ErrorCode.ConnectionClosed ? 'network' : 'provider'
    // the SDK prefixes "MCP error <code>: " on each side that wraps the message
    const plain = err.message.replace(/^(MCP error -?\d+: )+/, '')
    const line = plain.split('\n', 1)[0]!.trim()
    const short = line.length > SERVER_MESSAGE_MAX ? `${line.slice(0, SERVER_MESSAGE_MAX)}…` : line === '' ? 'no message' : line
    return ToolResult.failed(toolError(kind, `The MCP server answered with an error (${err.code}): ${short}`))
  }
  throw err
}

/**
 * Lists a connected MCP server's tools (following pagination) and returns toolwire
 * tool definitions whose `run` calls `client.callTool` and maps the result back with
 * `fromMcp`: `isError` stays an error, images become parts, `structuredContent` becomes
 * the data. The call's signal cancels the MCP request, and the server's progress
 * notifications become `ctx.reportProgress`. The call's trace context (`ctx.traceContext`)
 * travels in the request's `_meta`, so the remote server's span joins the local trace. A
 * call that a toolwire server holds for the user's confirmation stays one: it ends
 * `needs_confirmation` with the server's `confirmId` and summary, and its approval URL
 * (when the server gives one) in `metadata.pending.url`; it is approved on the server
 * (`tm.confirm` here does not know the id). A JSON-RPC error from the server (for example
 * an unknown tool) becomes an error result (kind `provider`, `timeout` or `network`).
 *
 * With a manager (`importMcpTools(client, tm, options?)`) the tools are also registered.
 *
 * @example
 * const tm = new ToolManager()
 * await importMcpTools(client, tm, { prefix: 'fs__' })
 * await tm.call('fs__read_file', { path: 'notes.txt' })
 */
export async function importMcpTools(
  client: Pick<Client, 'listTools' | 'callTool'>,
  tmOrOptions?: Pick<ToolManager, 'register'> | ImportMcpToolsOptions,
  maybeOptions: ImportMcpToolsOptions = {},
): Promise<ToolDefinition[]> {
  const tm = tmOrOptions !== undefined && typeof (tmOrOptions as { register?: unknown }).register === 'function' ? (tmOrOptions as Pick<ToolManager, 'register'>) : undefined
  const options = tm === undefined ? ((tmOrOptions as ImportMcpToolsOptions | undefined) ?? {}) : maybeOptions
  const tools: Tool[] = []
  let cursor: string | undefined
  do {
    const page = await client.listTools(cursor === undefined ? undefined : { cursor })
    tools.push(...page.tools)
    cursor = page.nextCursor
  } while (cursor !== undefined)

  const definitions = tools
    .filter((tool) => options.filter?.(tool) ?? true)
    .map((tool): ToolDefinition => {
      const hints = hintsOf(tool, options.untrusted)
      const untrusted = hints.untrustedContent === true
      const definition: { -readonly [K in keyof ToolDefinition]: ToolDefinition[K] } = {
        name: (options.prefix ?? '') + tool.name,
        inputSchema: tool.inputSchema as JsonSchema,
        hints,
        async run(input: Record<string, unknown>, ctx: ToolContext) {
          let result: CallToolResult
          try {
            // trace context (issue #22 Deliver 4): the call's span context travels in _meta (traceparent, tracestate, baggage)
            const traceMeta = ctx.traceContext === undefined ? {} : { _meta: { ...ctx.traceContext } }
            result = (await client.callTool({ name: tool.name, arguments: input, ...traceMeta }, undefined, {
              signal: ctx.signal,
              onprogress: (p) => ctx.reportProgress(p.progress, p.total, p.message),
              ...(options.requestTimeoutMs === undefined ? {} : { timeout: options.requestTimeoutMs }),
            })) as CallToolResult
          } catch (err) {
            return protocolFailure(err)
          }
          return remoteConfirmation(result) ?? fromMcp(result, { untrusted })
        },
      }
      const title = tool.title ?? tool.annotations?.title
      if (tool.description !== undefined) definition.description = tool.description
      else if (title !== undefined) definition.description = title
      if (tool.outputSchema !== undefined) definition.outputSchema = tool.outputSchema as JsonSchema
      return definition
    })
  if (tm !== undefined) for (const def of definitions) tm.register(def, { replace: options.replace === true, anyName: options.anyName === true })
  return definitions
}
