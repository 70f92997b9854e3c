/**
 * The stdio transport: newline-delimited JSON-RPC over a readable and a writable stream,
 * answering malformed input with JSON-RPC errors, and `serveStdio` (both eras: the first
 * message picks 2026-07-28 or 2025-11-25 for the connection, through the SDK v2's entry).
 */
import type { JSONRPCMessage, Transport } from '@modelcontextprotocol/server'
import { serveStdio as serveStdioEntry } from '@modelcontextprotocol/server/stdio'
import { textShape } from '../core/json.js'
import type { ServableManager } from './meta.js'
import { WideIds } from './ids.js'
import { readJsonRpcMessage } from './jsonrpc.js'
import { StdioEra } from './stdio-era.js'
import { MCP_LEGACY_PROTOCOL_VERSION } from './protocol.js'
import { directRequestOf, errorAnswerOf, initializeAllowsDirect, legacyDirectRequestOf, type DirectCalls, type DirectRequest, type McpEra } from './direct-call.js'
import { callParamsError, frameValueLimit, MCP_FRAME_MAX_VALUES, MCP_SERVER_OPTION_RULES, wiredServer, type McpServerOptions } from './server.js'
import type { ToolStore } from '../runtime/store/types.js'
import { serveTasks } from './task-serving.js'
import { checkOptions, isFunction, isObjectWith, isPositiveInteger, isWaitMs, pick, type OptionRules } from './options.js'

/** A JSON-RPC error frame for input the server could not take; `id` only when known. */
function errorFrame(code: number, message: string, id?: string | number, data?: unknown): JSONRPCMessage {
  const frame: Record<string, unknown> = { jsonrpc: '2.0' }
  if (id !== undefined) frame.id = id
  frame.error = data === undefined ? { code, message } : { code, message, data }
  return frame as JSONRPCMessage
}

/** Options of `StdioLineTransport`. */
export interface StdioLineTransportOptions {
  /** The longest line accepted, in bytes (default 64 MiB); longer lines get `-32600`. */
  readonly maxLineBytes?: number
  /**
   * The most values a line may hold (counted as inputs are: each array item and object
   * member), measured before it is parsed; more gets `-32700`, unparsed. Default: 100,064
   * (a default manager's `maxInputValues` plus the JSON-RPC envelope); `serveStdio` sets it
   * from the served manager's `maxInputValues`.
   */
  readonly maxLineValues?: number
  /**
   * When the input ends, how long to wait for requests still in flight to be answered
   * before closing (which cancels them), in ms (default 10 000).
   */
  readonly drainTimeoutMs?: number
}

/** What each of `StdioLineTransportOptions` must be (any other key is refused). */
const STDIO_TRANSPORT_OPTION_RULES: OptionRules = Object.freeze({
  maxLineBytes: isPositiveInteger,
  maxLineValues: isPositiveInteger,
  drainTimeoutMs: isWaitMs,
})

/**
 * A newline-delimited JSON-RPC transport over a readable and a writable stream (stdin
 * and stdout by default), for the SDK v2's `Server` or its `serveStdio` entry.
 *
 * Unlike the SDK's `StdioServerTransport`, which reports unparsable lines to `onerror`
 * and drops them, this one answers them: `-32700` (parse error, no `id`) for a line that
 * is not JSON (or nests deeper than 1000 levels, or holds more than `maxLineValues` values:
 * those are measured, not parsed), `-32600` (invalid request, with the `id` when the object carries a valid
 * one) for JSON that is not a JSON-RPC message (batches included, which MCP does
 * not have), `-32602` with a short message for `tools/call` params that are not
 * `{ name: string, arguments?: object }`, and keeps serving. An integer id beyond ±2^53 (`1e21`) is served and echoed as sent. Blank lines are ignored. The end of the input closes it,
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
  /** Checks each request against the era the connection opened (stdio-era.ts). */
  private readonly era = new StdioEra()
  private buffered = 0
  private discarding = false
  private started = false
  private closed = false
  private readonly maxLineBytes: number
  private readonly maxLineValues: number
  private readonly drainTimeoutMs: number
  private readonly pending = new Set<string | number>()
  /** What `serveStdio` serves without the SDK's dispatch (direct-call.ts), and the abort of each such call in flight. */
  private direct: DirectCalls | undefined
  private readonly directs = new Map<string | number, AbortController>()
  /** A 2025-11-25 connection: the id of its `initialize` while unanswered, then whether its answer lets direct calls serve it. */
  private initializeId: string | number | undefined
  private legacyDirect = false
  /** Ids beyond ±2^53 (`1e21`), carried as aliases and written back as sent. */
  private readonly ids = new WideIds()
  private ending = false
  /** Frames `send` queued for the next flush, each ending in a newline. */
  private queued = ''
  /** Resolves once the queued frames are written; `undefined` when no flush is due. */
  private flushed: Promise<void> | undefined
  private resolveFlushed: () => void = () => undefined
  private ended: () => void = () => undefined
  /** Resolves once the transport is closed (the input ended, or `close()`). @internal */
  readonly finished: Promise<void> = new Promise((resolve) => {
    this.ended = resolve
  })

  constructor(
    private readonly input: NodeJS.ReadableStream = process.stdin,
    private readonly output: NodeJS.WritableStream = process.stdout,
    options: StdioLineTransportOptions = {},
  ) {
    checkOptions('StdioLineTransport', options, STDIO_TRANSPORT_OPTION_RULES)
    this.maxLineBytes = options.maxLineBytes ?? 64 * 1024 * 1024
    this.maxLineValues = options.maxLineValues ?? MCP_FRAME_MAX_VALUES
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
    // one linear pass, so that JSON.parse never blocks on a hostile line
    const shape = textShape(line, MAX_FRAME_DEPTH, this.maxLineValues)
    if (shape !== undefined) {
      this.reply(errorFrame(-32700, shape === 'deep' ? `Parse error: nested deeper than ${MAX_FRAME_DEPTH} levels` : `Parse error: holds more than ${this.maxLineValues} values`))
      return
    }
    let value: unknown
    try {
      value = this.ids.inbound(JSON.parse(line), line)
    } catch {
      this.reply(errorFrame(-32700, 'Parse error'))
      return
    }
    let parsed: JSONRPCMessage
    try {
      parsed = readJsonRpcMessage(value)
    } catch {
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
    const message = parsed as JSONRPCMessage & { id?: string | number; method?: string; params?: { requestId?: string | number } }
    const invalidParams = callParamsError(message)
    if (invalidParams !== undefined) {
      this.reply(errorFrame(invalidParams.code, invalidParams.message, message.id))
      return
    }
    // a connection opened in 2026-07-28 (or probed with server/discover) by an earlier request: the SDK's entry has answered it
    const opened = this.era.modern
    const refused = this.era.check(message)
    if (refused !== undefined) {
      this.reply(errorFrame(refused.code, refused.message, message.id, refused.data))
      return
    }
    if (message.method !== undefined && message.id !== undefined) this.pending.add(message.id)
    else if (message.method === 'notifications/cancelled' && message.params?.requestId !== undefined) {
      this.settle(message.params.requestId)
      this.directs.get(message.params.requestId)?.abort((message.params as { reason?: unknown }).reason)
    }
    if (this.direct !== undefined) {
      if (message.method === 'initialize' && message.id !== undefined && !this.era.modern && initializeAllowsDirect(message)) this.initializeId = message.id
      const era: McpEra | undefined = opened ? 'modern' : this.legacyDirect ? 'legacy' : undefined
      const request = era === 'modern' ? directRequestOf(message) : era === 'legacy' ? legacyDirectRequestOf(message) : undefined
      if (request !== undefined && this.direct.serves(request.name)) return this.callDirect(this.direct, request, era!)
    }
    try {
      this.onmessage?.(message)
    } catch (error) {
      this.onerror?.(error as Error)
    }
  }

  /** Serves `tools/calls` that ask nothing without the SDK's dispatch, answered as it answers them (direct-call.ts). @internal */
  serveDirect(direct: DirectCalls): void {
    this.direct = direct
  }

  /** Runs a direct call; a cancelled one (or one whose connection closed) is not answered, as the SDK answers none. */
  private callDirect(direct: DirectCalls, request: DirectRequest, era: McpEra): void {
    const controller = new AbortController()
    this.directs.set(request.id, controller)
    direct
      .call(request.name, request.args, controller.signal, era)
      .then(
        (result) => {
          if (!controller.signal.aborted) this.reply({ result, jsonrpc: '2.0', id: request.id } as JSONRPCMessage)
        },
        (error: unknown) => {
          if (!controller.signal.aborted) this.reply({ jsonrpc: '2.0', id: request.id, error: errorAnswerOf(error) } as JSONRPCMessage)
        },
      )
      .finally(() => {
        if (this.directs.get(request.id) === controller) this.directs.delete(request.id)
      })
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

  /**
   * Queues `message` for the next flush: every answer made in one turn of the event loop
   * (16 requests read from one chunk answer in the same turn) goes out in one write, the same
   * bytes in the same order as one write each, without a syscall (and a wake-up of the
   * reader) per answer. Resolves once that write is taken (or, when the output is full, drained).
   */
  send(message: JSONRPCMessage): Promise<void> {
    if (this.closed) return Promise.resolve()
    this.queued += this.ids.serialize(message) + '\n'
    let sent = this.flushed
    if (sent === undefined) {
      sent = this.flushed = new Promise<void>((resolve) => (this.resolveFlushed = resolve))
      process.nextTick(this.flush)
    }
    const m = message as { id?: string | number; method?: string; result?: { protocolVersion?: unknown } }
    if (m.method === undefined && m.id !== undefined) {
      this.settle(m.id)
      // the SDK answered this connection's initialize: 2025-11-25 agreed, direct calls may serve it
      if (m.id === this.initializeId) {
        this.initializeId = undefined
        this.legacyDirect = m.result?.protocolVersion === MCP_LEGACY_PROTOCOL_VERSION
      }
    }
    return sent
  }

  /** Writes what `send` queued, in one write. */
  private readonly flush = (): void => {
    const text = this.queued
    const resolve = this.resolveFlushed
    this.queued = ''
    this.flushed = undefined
    if (text === '') return resolve()
    if (this.output.write(text)) resolve()
    else this.output.once('drain', () => resolve())
  }

  async close(): Promise<void> {
    if (this.closed) return
    // what was answered before closing still goes out
    if (this.flushed !== undefined) this.flush()
    this.closed = true
    this.input.off('data', this.onData)
    this.input.off('end', this.onEnd)
    this.input.off('close', this.onEnd)
    this.input.off('error', this.onStreamError)
    this.input.pause()
    this.chunks = []
    const closedError = new Error('Connection closed')
    for (const controller of this.directs.values()) controller.abort(closedError)
    this.directs.clear()
    this.onclose?.()
    this.ended()
  }
}

/** Options of `serveStdio`. */
export interface ServeStdioOptions extends McpServerOptions, StdioLineTransportOptions {
  readonly stdin?: NodeJS.ReadableStream
  readonly stdout?: NodeJS.WritableStream
  /** Called with transport and protocol errors (default: ignored; stdout carries only protocol frames). */
  readonly onError?: (error: Error) => void
  /**
   * The manager's store (the one given to `new ToolManager({ store })`). With task support it
   * serves the tasks extension on 2026-07-28 (advertised in `server/discover`), every task owned
   * by `''` (stdio has no bearer token: whoever holds the pipe is the one client); a store
   * without it is said once to `onError`. A retried confirmation is also answered from it.
   */
  readonly store?: ToolStore
}

/** What each of `ServeStdioOptions` must be (any other key is refused). */
const SERVE_STDIO_OPTION_RULES: OptionRules = Object.freeze({
  ...MCP_SERVER_OPTION_RULES,
  ...STDIO_TRANSPORT_OPTION_RULES,
  stdin: isObjectWith(['on', 'off', 'pause', 'resume'], 'a readable stream'),
  stdout: isObjectWith(['write', 'once'], 'a writable stream'),
  onError: isFunction,
  store: isObjectWith(['close'], 'a ToolStore'),
})

/** A running `serveStdio`. */
export interface StdioMcpServer {
  /** Closes the connection (calls in flight are cancelled). */
  close(): Promise<void>
  /** Resolves when the connection is closed (the input ended, or `close()`). */
  readonly closed: Promise<void>
}

/**
 * Serves `tm` over stdio until the input ends, in the era the first message picks: a
 * `server/discover` or a request carrying the 2026-07-28 `_meta` envelope serves 2026-07-28,
 * `initialize` (or any request without the envelope) serves 2025-11-25, for the connection's
 * lifetime. On a 2026-07-28 connection every request must carry a valid envelope naming
 * 2026-07-28 (stdio-era.ts), else `-32602` or `-32022`. With a `store` that has tasks, a 2026-07-28 request declaring the tasks extension
 * gets tasks as over HTTP (task-serving.ts). `closed` resolves when the connection is closed
 * (in-flight calls are then cancelled) and the task runs started here have recorded their outcome.
 */
export async function serveStdio(tm: ServableManager, options: ServeStdioOptions = {}): Promise<StdioMcpServer> {
  checkOptions('serveStdio', options, SERVE_STDIO_OPTION_RULES)
  const onerror = (error: Error): void => options.onError?.(error)
  const servedTasks = serveTasks(tm, options.store, onerror)
  const { factory, direct } = wiredServer(tm, pick(options, MCP_SERVER_OPTION_RULES), {
    ...(options.store === undefined ? {} : { store: options.store }),
    ...(servedTasks === undefined ? {} : { tasks: servedTasks.tasks }),
    owner: '',
  })
  const transport = new StdioLineTransport(options.stdin, options.stdout, {
    ...pick(options, STDIO_TRANSPORT_OPTION_RULES),
    maxLineValues: options.maxLineValues ?? frameValueLimit(tm),
  })
  transport.serveDirect(direct)
  // the entry starts the transport
  const handle = serveStdioEntry(factory, { transport, legacy: 'serve', onerror })
  // once the connection is closed, the task runs it started still record their outcome
  const closed = transport.finished.then(() => servedTasks?.close())
  return { close: () => handle.close(), closed }
}
