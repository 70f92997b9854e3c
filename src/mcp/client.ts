/**
 * The MCP client side: `importMcpTools` turns a connected MCP server's tools into
 * toolwire tool definitions (and registers them into a manager when given one);
 * `fromMcp` maps a `CallToolResult` back to a canonical `ToolResult`.
 */
import type { CallToolResult } from '@modelcontextprotocol/server'
import type { JsonSchema, ToolContext, ToolDefinition, ToolHints, ToolManager } from '../runtime/manager.js'
import { keepForResume, resumeStateOf } from '../runtime/call.js'
import { MCP_UNTRUSTED_META_KEY } from '../render/mcp.js'
import { UNTRUSTED_CLOSE, UNTRUSTED_NOTE, UNTRUSTED_OPEN } from '../render/model.js'
import { toolError, ToolResult } from '../core/result.js'
import { REFUSALS, TOOL_FAILED_MESSAGE } from '../core/texts.js'
import { errorResult, pending, refuse, type HelperResult, type ModelResult } from '../core/helpers.js'
import type { ContentPart, JsonValue } from '../core/types.js'
import { MCP_CONFIRMATION_META_KEY, MCP_UNTRUSTED_CONTENT_META_KEY } from './meta.js'
import { callRemote, listRemoteTools, remoteFailure, type McpTool, type McpToolClient, type RemoteCallParams } from './import/remote-client.js'
import { httpUrl, REMOTE_INPUT_MAX_ROUNDS, remoteAsk, remoteInputStateOf, remoteReply, type RemoteInputState } from './import/remote-input.js'

export type { McpClientV1, McpClientV2, McpTool, McpToolClient } from './import/remote-client.js'

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
  const url = httpUrl(meta.url)
  return pending(url === undefined ? { kind: 'confirmation', id: meta.confirmId, summary } : { kind: 'confirmation', id: meta.confirmId, summary, url })
}

/** Options of `importMcpTools`. */
export interface ImportMcpToolsOptions {
  /** Prepended to each tool name (e.g. `"files__"`); the server is called with the original name. */
  readonly prefix?: string
  /** Which of the server's tools to import (default: all). */
  filter?(tool: McpTool): boolean
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

function hintsOf(tool: McpTool, untrusted: boolean | undefined): ToolHints {
  const a = tool.annotations ?? {}
  const hints: { -readonly [K in keyof ToolHints]: ToolHints[K] } = {}
  if (typeof a.readOnlyHint === 'boolean') hints.readOnly = a.readOnlyHint
  if (typeof a.destructiveHint === 'boolean') hints.destructive = a.destructiveHint
  if (typeof a.idempotentHint === 'boolean') hints.idempotent = a.idempotentHint
  if (untrusted ?? tool._meta?.[MCP_UNTRUSTED_CONTENT_META_KEY] === true) hints.untrustedContent = true
  return hints
}

/** The answer to a local `tm.confirm` of a confirmation a toolwire 2025 server holds: it is decided there. */
const DECIDED_REMOTELY = 'This confirmation is decided on the MCP server (its approval page or its own confirmation); it cannot be answered here.'

/** How one imported tool calls its remote tool. */
class RemoteTool {
  constructor(
    private readonly client: McpToolClient,
    private readonly name: string,
    private readonly untrusted: boolean,
    private readonly requestTimeoutMs: number | undefined,
  ) {}

  /** Sends `tools/call` with `extra` (a retry's `inputResponses` and `requestState`), the call's trace context in `_meta`. */
  private send(input: Record<string, unknown>, ctx: ToolContext, extra: Pick<RemoteCallParams, 'inputResponses' | 'requestState'>): Promise<unknown> {
    // trace context (issue #22 Deliver 4): the call's span context travels in _meta (traceparent, tracestate, baggage)
    const traceMeta = ctx.traceContext === undefined ? {} : { _meta: { ...ctx.traceContext } }
    return callRemote(this.client, { name: this.name, arguments: input, ...extra, ...traceMeta }, {
      signal: ctx.signal,
      onprogress: (p) => ctx.reportProgress(p.progress, p.total, p.message),
      ...(this.requestTimeoutMs === undefined ? {} : { timeout: this.requestTimeoutMs }),
    })
  }

  /** The first round: the call as the model made it. */
  async run(input: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult | ModelResult | HelperResult> {
    let result: unknown
    try {
      result = await this.send(input, ctx, {})
    } catch (err) {
      return remoteFailure(err)
    }
    return this.settle(result, 1, ctx)
  }

  /**
   * A later round: `tm.confirm(id, { approve })` or `tm.resume(id, answer)` retries the original
   * call with the answer under the asked key and the remote's `requestState` echoed. A decline
   * is sent too (the remote records it), and the call ends refused `confirmation_denied`.
   */
  async resume(answer: unknown, input: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult | ModelResult | HelperResult> {
    const state = remoteInputStateOf(resumeStateOf(ctx))
    if (state === undefined) return refuse('confirmation_remote', DECIDED_REMOTELY)
    const reply = remoteReply(state, answer)
    if (!reply.ok) return errorResult(`The answer could not be sent to the MCP server: ${reply.problem}.`)
    const extra = { inputResponses: { [state.key]: reply.response }, ...(state.requestState === undefined ? {} : { requestState: state.requestState }) }
    let result: unknown
    try {
      result = await this.send(input, ctx, extra)
    } catch (err) {
      if (reply.declined) return declined(state)
      return remoteFailure(err)
    }
    return reply.declined ? declined(state) : this.settle(result, state.round + 1, ctx)
  }

  /** A remote answer as this call's result: an `input_required` becomes a local confirmation or input request (parked with its state). */
  private settle(result: unknown, round: number, ctx: ToolContext): ToolResult | ModelResult | HelperResult {
    const r = result as { resultType?: unknown; inputRequests?: unknown; requestState?: unknown }
    if (typeof r === 'object' && r !== null && r.resultType === 'input_required') {
      if (round > REMOTE_INPUT_MAX_ROUNDS) return errorResult(`The MCP server asked for input more than ${REMOTE_INPUT_MAX_ROUNDS} times in one call.`)
      const ask = remoteAsk(r, round)
      if (ask.kind === 'unsupported') return errorResult(`The MCP server asked for input importMcpTools cannot give (${ask.what}).`)
      keepForResume(ctx, ask.state as unknown as JsonValue)
      if (ask.kind === 'input') return pending({ kind: 'input', prompt: ask.prompt, schema: ask.schema })
      return pending(ask.url === undefined ? { kind: 'confirmation', summary: ask.summary } : { kind: 'confirmation', summary: ask.summary, url: ask.url })
    }
    const complete = result as CallToolResult
    return remoteConfirmation(complete) ?? fromMcp(complete, { untrusted: this.untrusted })
  }
}

/** The local result of a declined remote confirmation. */
function declined(state: RemoteInputState): HelperResult {
  const what = state.summary === undefined ? '' : `: ${state.summary}`
  return refuse(REFUSALS.confirmationDenied.code, `${REFUSALS.confirmationDenied.message}${what}`)
}

/**
 * Lists a connected MCP server's tools (following pagination) and returns toolwire
 * tool definitions whose `run` calls the remote tool and maps the result back with
 * `fromMcp`: `isError` stays an error, images become parts, `structuredContent` becomes
 * the data. `client` is the SDK v2 `Client` (`@modelcontextprotocol/client`, any negotiation
 * mode; `versionNegotiation: { mode: 'auto' }` recommended) or a 1.x `Client`. The call's
 * signal cancels the MCP request, and the server's progress notifications become
 * `ctx.reportProgress`. The call's trace context (`ctx.traceContext`) travels in the request's
 * `_meta`, so the remote server's span joins the local trace.
 *
 * A remote `input_required` (2026-07-28) becomes a local suspension: a URL elicitation, or a
 * form whose one field is a boolean (a toolwire server's confirmation), ends
 * `needs_confirmation` with the elicitation's message as the summary; another form ends
 * `pending` kind `input` with the requested schema. `tm.confirm(id, { approve })` (or
 * `tm.resume(id, { approve })`) and `tm.resume(id, answer)` then retry the original call with
 * `inputResponses` and the remote's `requestState`; the retry's result is the call's result (a
 * further `input_required` parks again, at most 10 rounds). A decline is sent to the remote too,
 * and the call ends refused `confirmation_denied`.
 *
 * A call that a toolwire 2025 server holds for the user's confirmation (its
 * `_meta["toolwire/confirmation"]`) ends `needs_confirmation` with the server's `confirmId`;
 * it is decided on the server (a local `tm.confirm` answers refused `confirmation_remote`). A
 * JSON-RPC error from the server (for example an unknown tool) becomes an error result (kind
 * `provider`, `timeout` or `network`).
 *
 * With a manager (`importMcpTools(client, tm, options?)`) the tools are also registered.
 *
 * @example
 * const tm = new ToolManager()
 * await importMcpTools(client, tm, { prefix: 'fs__' })
 * await tm.call('fs__read_file', { path: 'notes.txt' })
 */
export async function importMcpTools(
  client: McpToolClient,
  tmOrOptions?: Pick<ToolManager, 'register'> | ImportMcpToolsOptions,
  maybeOptions: ImportMcpToolsOptions = {},
): Promise<ToolDefinition[]> {
  const tm = tmOrOptions !== undefined && typeof (tmOrOptions as { register?: unknown }).register === 'function' ? (tmOrOptions as Pick<ToolManager, 'register'>) : undefined
  const options = tm === undefined ? ((tmOrOptions as ImportMcpToolsOptions | undefined) ?? {}) : maybeOptions
  const tools = await listRemoteTools(client)
  const definitions = tools
    .filter((tool) => options.filter?.(tool) ?? true)
    .map((tool): ToolDefinition => {
      const hints = hintsOf(tool, options.untrusted)
      const remote = new RemoteTool(client, tool.name, hints.untrustedContent === true, options.requestTimeoutMs)
      const definition: { -readonly [K in keyof ToolDefinition]: ToolDefinition[K] } = {
        name: (options.prefix ?? '') + tool.name,
        inputSchema: tool.inputSchema as JsonSchema,
        hints,
        run: (input: Record<string, unknown>, ctx: ToolContext) => remote.run(input, ctx),
        resume: (answer: unknown, input: Record<string, unknown>, ctx: ToolContext) => remote.resume(answer, input, ctx),
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
