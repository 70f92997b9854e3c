/**
 * The MCP server: serves a `ToolManager`'s tools over the Model Context Protocol
 * (revision 2025-11-25) with the official SDK's low-level `Server`, and a stdio
 * transport that answers malformed input with JSON-RPC errors.
 */
import { readFileSync } from 'node:fs'
import { dirname, join, resolve as resolvePath } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { Protocol } from '@modelcontextprotocol/sdk/shared/protocol.js'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import {
  CallToolRequestSchema,
  CallToolResultSchema,
  ErrorCode,
  JSONRPCMessageSchema,
  LATEST_PROTOCOL_VERSION,
  ListToolsRequestSchema,
  McpError,
  RequestSchema,
  type CallToolResult,
  type JSONRPCMessage,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js'
import { toMcp } from '../render/mcp.js'
import type { CallOptions, JsonSchema, ToolDefinition, ToolEvents, ToolManager, ToolManifestEntry } from '../runtime/manager.js'
import type { CallResult } from '../core/view.js'
import { textNestsDeeper } from '../core/json.js'
import { clipped } from '../core/redact.js'

/** The MCP protocol revision toolwire serves (the SDK negotiates older ones when a client asks). */
export const MCP_PROTOCOL_VERSION: string = LATEST_PROTOCOL_VERSION

/** The `_meta` key on a listed tool whose results are untrusted content (data, not instructions). */
export const MCP_UNTRUSTED_CONTENT_META_KEY = 'toolwire/untrustedContent'
/** The `_meta` key on a listed tool that needs the user's confirmation before it runs. */
export const MCP_NEEDS_CONFIRMATION_META_KEY = 'toolwire/needsConfirmation'
/** The `_meta` key on a `tools/call` result that carries the toolwire call id. */
export const MCP_CALL_ID_META_KEY = 'toolwire/callId'
/** The `_meta` key on a `tools/call` result that waits for confirmation: `{ confirmId, summary }`. */
export const MCP_CONFIRMATION_META_KEY = 'toolwire/confirmation'

/** What the server needs of a manager (a `ToolManager`, possibly from another copy of toolwire). */
export type ServableManager = Pick<ToolManager, 'call' | 'manifest' | 'list' | 'confirm' | 'on' | 'off'>

/** Options of `createMcpServer`. */
export interface McpServerOptions {
  /** The server name in `initialize` (default `toolwire`). */
  readonly name?: string
  /** The server version in `initialize` (default: toolwire's version). */
  readonly version?: string
  /** Instructions for the client's model, sent in `initialize`. */
  readonly instructions?: string
  /**
   * How a call that needs confirmation is answered: `'elicit'` (default) asks the user
   * through MCP elicitation when the client declared that capability, otherwise answers
   * an `isError` result naming what to confirm; `'refuse'` always answers that result.
   */
  readonly confirmations?: 'elicit' | 'refuse'
}

let cachedVersion: string | undefined

/** toolwire's own version, read from its package.json (`0.0.0` when not found). */
export function toolwireVersion(): string {
  if (cachedVersion !== undefined) return cachedVersion
  let dir = dirname(fileURLToPath(import.meta.url))
  for (let i = 0; i < 4; i++) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string }
      if (pkg.name === 'toolwire' && typeof pkg.version === 'string') return (cachedVersion = pkg.version)
    } catch {
      // keep looking upwards
    }
    dir = dirname(dir)
  }
  return (cachedVersion = '0.0.0')
}

/**
 * An MCP `tools/list` entry for a manifest entry.
 *
 * - `inputSchema` and `outputSchema` are passed verbatim (`$schema`, `$defs`,
 *   `additionalProperties` and everything else kept) when they are object schemas
 *   (`type: "object"`), as MCP requires. A boolean `true` input schema becomes
 *   `{ "type": "object" }`; an object schema without `type` gets `type: "object"` added.
 *   A non-object output schema is wrapped as `{ type: "object", properties: { result } }`,
 *   matching how `toMcp` wraps non-object structured output.
 * - hints map to annotations: `readOnly` → `readOnlyHint`, `destructive` →
 *   `destructiveHint`, `idempotent` → `idempotentHint` (only the hints the tool declares).
 * - `_meta`: `"toolwire/untrustedContent": true` for tools marked `untrustedContent`,
 *   `"toolwire/needsConfirmation": true` for tools that need confirmation.
 */
export function mcpToolOf(entry: ToolManifestEntry): Tool {
  const tool: Record<string, unknown> = { name: entry.name }
  if (entry.description !== undefined) tool.description = entry.description
  tool.inputSchema = objectSchema(entry.inputSchema)
  if (entry.outputSchema !== undefined) tool.outputSchema = outputObjectSchema(entry.outputSchema)
  const hints = entry.hints ?? {}
  const annotations: Record<string, boolean> = {}
  if (typeof hints.readOnly === 'boolean') annotations.readOnlyHint = hints.readOnly
  if (typeof hints.destructive === 'boolean') annotations.destructiveHint = hints.destructive
  if (typeof hints.idempotent === 'boolean') annotations.idempotentHint = hints.idempotent
  if (Object.keys(annotations).length > 0) tool.annotations = annotations
  const meta: Record<string, boolean> = {}
  if (hints.untrustedContent === true) meta[MCP_UNTRUSTED_CONTENT_META_KEY] = true
  if (entry.needsConfirmation === true) meta[MCP_NEEDS_CONFIRMATION_META_KEY] = true
  if (Object.keys(meta).length > 0) tool._meta = meta
  return tool as Tool
}

function objectSchema(schema: JsonSchema): Record<string, unknown> {
  if (typeof schema !== 'object' || schema === null) return { type: 'object' }
  if (schema.type === 'object') return schema as Record<string, unknown>
  return { ...schema, type: 'object' }
}

function outputObjectSchema(schema: JsonSchema): Record<string, unknown> {
  if (typeof schema === 'object' && schema !== null && schema.type === 'object') return schema as Record<string, unknown>
  if (typeof schema === 'object' && schema !== null && typeof schema.$schema === 'string') {
    const { $schema, $defs, ...inner } = schema as Record<string, unknown>
    const wrapped: Record<string, unknown> = { $schema, type: 'object', properties: { result: inner }, required: ['result'] }
    if ($defs !== undefined) wrapped.$defs = $defs
    return wrapped
  }
  return { type: 'object', properties: { result: schema }, required: ['result'] }
}

function withMeta(result: CallToolResult, meta: Record<string, unknown>): CallToolResult {
  return { ...result, _meta: { ...(result._meta ?? {}), ...meta } }
}

function confirmationResult(view: Extract<CallResult, { status: 'needs_confirmation' }>, why: string): CallToolResult {
  const rendered = toMcp(view) as unknown as CallToolResult
  const text =
    `This call needs the user's confirmation and did not run: ${view.summary}. ${why} ` +
    'Ask the user to confirm it in the application, or to perform it themselves.'
  return withMeta(
    { ...rendered, content: [{ type: 'text', text }, ...rendered.content.slice(1)], isError: true },
    { [MCP_CONFIRMATION_META_KEY]: { confirmId: view.confirmId, summary: view.summary } },
  )
}

let mcpCallSeq = 0

/** The JSON-RPC error (`-32602`, invalid params) for a `tools/call` of a tool that does not exist. */
export class UnknownToolError extends McpError {
  constructor(readonly tool: string) {
    super(ErrorCode.InvalidParams, `Unknown tool: ${clipped(tool)}`)
    // the SDK prefixes "MCP error -32602: "; the wire message is the plain sentence
    this.message = `Unknown tool: ${clipped(tool)}`
  }
}

/** The JSON-RPC error (`-32602`, invalid params) for `tools/call` params that are not `{ name: string, arguments?: object }`. */
export class InvalidCallParamsError extends McpError {
  constructor(problem: string) {
    super(ErrorCode.InvalidParams, `Invalid params: ${problem}`)
    // the SDK prefixes "MCP error -32602: "; the wire message is the plain sentence
    this.message = `Invalid params: ${problem}`
  }
}

/** What is wrong with `tools/call` params, in a short sentence, or undefined when they are well-formed. */
function callParamsProblem(params: unknown): string | undefined {
  if (typeof params !== 'object' || params === null || Array.isArray(params)) return 'tools/call needs a params object'
  const { name, arguments: args } = params as { name?: unknown; arguments?: unknown }
  if (name === undefined) return '"name" is required'
  if (typeof name !== 'string') return '"name" must be a string'
  if (args !== undefined && (typeof args !== 'object' || args === null || Array.isArray(args))) return '"arguments" must be an object'
  return undefined
}

/**
 * `tools/call` requests whose params are left to the handler. The SDK's `Server` parses
 * `tools/call` params before any handler runs and answers a failure with `-32603` and
 * the raw validation issues; the handler checks them itself and answers `-32602` with a
 * short message (`InvalidCallParamsError`).
 */
const UncheckedCallToolRequestSchema = RequestSchema.extend({ method: CallToolRequestSchema.shape.method })

/** The result as the SDK's `Server` would send it: parsed with `CallToolResultSchema` (a malformed one is an internal error). */
function checkedResult(result: CallToolResult): CallToolResult {
  const parsed = CallToolResultSchema.safeParse(result)
  if (!parsed.success) {
    const error = new McpError(ErrorCode.InternalError, 'Internal error: the tool result is not a valid CallToolResult')
    error.message = 'Internal error: the tool result is not a valid CallToolResult'
    throw error
  }
  return parsed.data as CallToolResult
}

/**
 * An MCP `Server` (the SDK's low-level class) serving `tm`'s tools: `tools/list` from
 * `tm.manifest()`, `tools/call` through `tm.call` rendered with `toMcp`.
 *
 * - An unknown tool is a JSON-RPC error `-32602` (`McpError(InvalidParams)`), and so are
 *   malformed params (no string `name`, `arguments` not an object), with a short message.
 * - Invalid arguments, refusals and tool failures are `isError: true` results.
 * - A call that needs confirmation asks the user through elicitation when the client
 *   supports it (then `tm.confirm` runs or denies it); otherwise it answers an
 *   `isError` result naming what to confirm, with `_meta["toolwire/confirmation"]`.
 * - `notifications/cancelled` aborts the call's signal (the call ends `cancelled`, and
 *   no response is sent, as the protocol requires).
 * - `ctx.reportProgress` becomes `notifications/progress` when the request carried a
 *   `_meta.progressToken` (non-increasing progress values are dropped).
 * - Every result carries `_meta["toolwire/callId"]`.
 */
export function createMcpServer(tm: ServableManager, options: McpServerOptions = {}): Server {
  const server = new Server(
    { name: options.name ?? 'toolwire', version: options.version ?? toolwireVersion() },
    {
      capabilities: { tools: { listChanged: false } },
      ...(options.instructions === undefined ? {} : { instructions: options.instructions }),
    },
  )
  const progressSinks = new Map<string, (event: ToolEvents['progress']) => void>()
  const onProgress = (event: ToolEvents['progress']): void => progressSinks.get(event.callId)?.(event)
  let listening = false

  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: tm.manifest().map(mcpToolOf) }))

  // Protocol's own registration: the Server override would parse the params first (see UncheckedCallToolRequestSchema)
  Protocol.prototype.setRequestHandler.call(server, UncheckedCallToolRequestSchema, async (request, extra) => {
    const problem = callParamsProblem(request.params)
    if (problem !== undefined) throw new InvalidCallParamsError(problem)
    const { name, arguments: given } = request.params as { name: string; arguments?: Record<string, unknown> }
    const args = given ?? {}
    if (!tm.list().some((def: ToolDefinition<never>) => def.name === name)) {
      throw new UnknownToolError(name)
    }
    const callId = `mcp_${process.pid.toString(36)}_${(++mcpCallSeq).toString(36)}`
    const progressToken = extra._meta?.progressToken
    if (progressToken !== undefined) {
      if (!listening) {
        tm.on('progress', onProgress)
        listening = true
      }
      let last = -Infinity
      progressSinks.set(callId, (event) => {
        if (!(event.progress > last)) return
        last = event.progress
        const params: Record<string, unknown> = { progressToken, progress: event.progress }
        if (event.total !== undefined) params.total = event.total
        if (event.message !== undefined) params.message = event.message
        extra.sendNotification({ method: 'notifications/progress', params } as never).catch(() => undefined)
      })
    }
    try {
      const callOptions: CallOptions = { signal: extra.signal, callId }
      let view = await tm.call(name, args, callOptions)
      if (view.status === 'needs_confirmation') {
        const answered = await confirmThroughElicitation(server, tm, view, options, extra.signal, extra.requestId)
        if (answered === undefined) {
          return checkedResult(withMeta(
            confirmationResult(
              view,
              options.confirmations === 'refuse'
                ? 'This server does not take confirmations over MCP.'
                : 'The client cannot ask the user (it did not declare the elicitation capability).',
            ),
            { [MCP_CALL_ID_META_KEY]: callId },
          ))
        }
        view = answered
      }
      return checkedResult(withMeta(toMcp(view) as unknown as CallToolResult, { [MCP_CALL_ID_META_KEY]: callId }))
    } finally {
      progressSinks.delete(callId)
    }
  })
  return server
}

async function confirmThroughElicitation(
  server: Server,
  tm: ServableManager,
  view: Extract<CallResult, { status: 'needs_confirmation' }>,
  options: McpServerOptions,
  signal: AbortSignal,
  requestId: string | number,
): Promise<CallResult | undefined> {
  if (options.confirmations === 'refuse') return undefined
  const elicitation = server.getClientCapabilities()?.elicitation as { form?: unknown } | undefined
  if (elicitation === undefined || elicitation.form === undefined) return undefined
  let approve = false
  try {
    const answer = await server.elicitInput(
      {
        mode: 'form',
        message: `Confirm: ${view.summary}`,
        requestedSchema: {
          type: 'object',
          properties: { approve: { type: 'boolean', title: 'Approve', description: view.summary } },
          required: ['approve'],
        },
      },
      { signal, relatedRequestId: requestId } as never,
    )
    approve = answer.action === 'accept' && (answer.content as { approve?: unknown } | undefined)?.approve === true
  } catch {
    if (signal.aborted) {
      await tm.confirm(view.confirmId, { approve: false })
      return undefined
    }
    return undefined // the elicitation failed: fall back to naming what to confirm
  }
  return tm.confirm(view.confirmId, { approve })
}

// ---------------------------------------------------------------------------
// stdio transport

/** A JSON-RPC error frame for input the server could not take; `id` only when known. */
function errorFrame(code: number, message: string, id?: string | number): JSONRPCMessage {
  const frame: Record<string, unknown> = { jsonrpc: '2.0' }
  if (id !== undefined) frame.id = id
  frame.error = { code, message }
  return frame as JSONRPCMessage
}

/** Options of `StdioLineTransport`. */
export interface StdioLineTransportOptions {
  /** The longest line accepted, in bytes (default 64 MiB); longer lines get `-32600`. */
  readonly maxLineBytes?: number
  /**
   * When the input ends, how long to wait for requests still in flight to be answered
   * before closing (which cancels them), in ms (default 10 000).
   */
  readonly drainTimeoutMs?: number
}

/**
 * A newline-delimited JSON-RPC transport over a readable and a writable stream (stdin
 * and stdout by default), for the SDK's `Server`.
 *
 * Unlike the SDK's `StdioServerTransport`, which reports unparsable lines to `onerror`
 * and drops them, this one answers them: `-32700` (parse error, no `id`) for a line that
 * is not JSON, `-32600` (invalid request, with the `id` when the object carries a valid
 * one) for JSON that is not a JSON-RPC message (batches included, which 2025-11-25 does
 * not have), and keeps serving. Blank lines are ignored. The end of the input closes it,
 * once the requests already received are answered (or `drainTimeoutMs` passed).
 */
/**
 * The deepest nesting a frame may have. Tool arguments deeper than `MAX_VALUE_DEPTH` are
 * refused later anyway; this bound only keeps `JSON.parse` from blocking on a hostile line.
 */
const MAX_FRAME_DEPTH = 1000

export class StdioLineTransport implements Transport {
  onclose?: () => void
  onerror?: (error: Error) => void
  onmessage?: (message: JSONRPCMessage) => void

  private chunks: Buffer[] = []
  private buffered = 0
  private discarding = false
  private started = false
  private closed = false
  private readonly maxLineBytes: number
  private readonly drainTimeoutMs: number
  private readonly pending = new Set<string | number>()
  private ending = false

  constructor(
    private readonly input: NodeJS.ReadableStream = process.stdin,
    private readonly output: NodeJS.WritableStream = process.stdout,
    options: StdioLineTransportOptions = {},
  ) {
    this.maxLineBytes = options.maxLineBytes ?? 64 * 1024 * 1024
    this.drainTimeoutMs = options.drainTimeoutMs ?? 10_000
  }

  private readonly onData = (chunk: Buffer | string): void => {
    let data = typeof chunk === 'string' ? Buffer.from(chunk) : chunk
    for (;;) {
      const nl = data.indexOf(0x0a)
      if (nl === -1) {
        if (!this.discarding) {
          this.chunks.push(data)
          this.buffered += data.length
          if (this.buffered > this.maxLineBytes) {
            this.chunks = []
            this.buffered = 0
            this.discarding = true
            this.reply(errorFrame(-32600, `Invalid Request: message longer than ${this.maxLineBytes} bytes`))
          }
        }
        return
      }
      const head = data.subarray(0, nl)
      data = data.subarray(nl + 1)
      if (this.discarding) {
        this.discarding = false
        continue
      }
      const line = this.chunks.length === 0 ? head : Buffer.concat([...this.chunks, head])
      this.chunks = []
      this.buffered = 0
      this.handleLine(line.toString('utf8'))
    }
  }

  private readonly onEnd = (): void => {
    if (this.ending) return
    this.ending = true
    if (this.pending.size === 0) {
      void this.close()
      return
    }
    setTimeout(() => void this.close(), this.drainTimeoutMs).unref()
  }

  private readonly onStreamError = (error: Error): void => {
    this.onerror?.(error)
  }

  private handleLine(raw: string): void {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw
    if (line.trim() === '') return
    if (textNestsDeeper(line, MAX_FRAME_DEPTH)) {
      this.reply(errorFrame(-32700, `Parse error: nested deeper than ${MAX_FRAME_DEPTH} levels`))
      return
    }
    let value: unknown
    try {
      value = JSON.parse(line)
    } catch {
      this.reply(errorFrame(-32700, 'Parse error'))
      return
    }
    const parsed = JSONRPCMessageSchema.safeParse(value)
    if (!parsed.success) {
      const id = (value as { id?: unknown } | null)?.id
      const knownId = typeof id === 'string' || (typeof id === 'number' && Number.isSafeInteger(id)) ? id : undefined
      // a response we cannot read has no one to answer to
      const isResponse = typeof value === 'object' && value !== null && !Array.isArray(value) && !('method' in value) && ('result' in value || 'error' in value)
      if (isResponse) {
        this.onerror?.(new Error('Received an invalid JSON-RPC response'))
        return
      }
      this.reply(errorFrame(-32600, 'Invalid Request: not a JSON-RPC 2.0 message', knownId))
      return
    }
    const message = parsed.data as JSONRPCMessage & { id?: string | number; method?: string; params?: { requestId?: string | number } }
    if (message.method !== undefined && message.id !== undefined) this.pending.add(message.id)
    else if (message.method === 'notifications/cancelled' && message.params?.requestId !== undefined) this.settle(message.params.requestId)
    try {
      this.onmessage?.(message)
    } catch (error) {
      this.onerror?.(error as Error)
    }
  }

  private reply(frame: JSONRPCMessage): void {
    this.send(frame).catch((error: unknown) => this.onerror?.(error as Error))
  }

  async start(): Promise<void> {
    if (this.started) throw new Error('toolwire: StdioLineTransport already started')
    this.started = true
    this.input.on('data', this.onData)
    this.input.on('end', this.onEnd)
    this.input.on('close', this.onEnd)
    this.input.on('error', this.onStreamError)
    this.input.resume()
  }

  private settle(id: string | number): void {
    if (this.pending.delete(id) && this.ending && this.pending.size === 0) setImmediate(() => void this.close())
  }

  send(message: JSONRPCMessage): Promise<void> {
    if (this.closed) return Promise.resolve()
    const sent = new Promise<void>((resolve) => {
      if (this.output.write(JSON.stringify(message) + '\n')) resolve()
      else this.output.once('drain', () => resolve())
    })
    const m = message as { id?: string | number; method?: string }
    if (m.method === undefined && m.id !== undefined) this.settle(m.id)
    return sent
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    this.input.off('data', this.onData)
    this.input.off('end', this.onEnd)
    this.input.off('close', this.onEnd)
    this.input.off('error', this.onStreamError)
    this.input.pause()
    this.chunks = []
    this.onclose?.()
  }
}

/** Options of `serveStdio`. */
export interface ServeStdioOptions extends McpServerOptions, StdioLineTransportOptions {
  readonly stdin?: NodeJS.ReadableStream
  readonly stdout?: NodeJS.WritableStream
  /** Called with transport and protocol errors (default: ignored; stdout carries only protocol frames). */
  readonly onError?: (error: Error) => void
}

/**
 * Serves `tm` over stdio until the input ends. Resolves `closed` when the connection is
 * closed (in-flight calls are then cancelled).
 */
export async function serveStdio(tm: ServableManager, options: ServeStdioOptions = {}): Promise<{ readonly server: Server; readonly closed: Promise<void> }> {
  const server = createMcpServer(tm, options)
  const transport = new StdioLineTransport(options.stdin, options.stdout, options)
  const closed = new Promise<void>((resolve) => {
    server.onclose = () => resolve()
  })
  server.onerror = (error) => options.onError?.(error)
  await server.connect(transport)
  return { server, closed }
}

// ---------------------------------------------------------------------------
// tool modules

/** Whether `value` looks like a `ToolManager` (from this or another copy of toolwire). */
export function isServableManager(value: unknown): value is ServableManager {
  if (typeof value !== 'object' || value === null) return false
  const v = value as Record<string, unknown>
  return ['call', 'manifest', 'list', 'confirm', 'on', 'off', 'register'].every((k) => typeof v[k] === 'function')
}

/**
 * Loads a tool module for `toolwire serve <module>`: its default export is a
 * `ToolManager`, a list of tool definitions, or a (possibly async) function returning
 * either. A list is registered into a manager made by `makeManager`.
 * @throws Error when the module cannot be loaded or exports neither.
 */
export async function loadToolModule(
  specifier: string,
  makeManager: () => ServableManager & Pick<ToolManager, 'register'>,
  cwd: string = process.cwd(),
): Promise<ServableManager> {
  const url = /^[a-z][a-z0-9+.-]*:/i.test(specifier) && !/^[a-z]:[\\/]/i.test(specifier) ? specifier : pathToFileURL(resolvePath(cwd, specifier)).href
  const mod = (await import(url)) as { default?: unknown; tools?: unknown }
  let value = mod.default ?? mod.tools
  if (typeof value === 'function' && !isServableManager(value)) value = await (value as () => unknown)()
  if (isServableManager(value)) return value
  if (Array.isArray(value)) {
    const tm = makeManager()
    for (const tool of value) tm.register(tool as ToolDefinition)
    return tm
  }
  throw new Error(`toolwire: ${specifier} must default-export a ToolManager or a list of tools`)
}
