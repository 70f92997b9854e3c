/**
 * `ToolManager`: registers tools and dispatches calls. `call` and `callJson` never
 * throw or reject: every outcome is a frozen application view over one canonical
 * `ToolResult`.
 */
import { NotJsonError, toFrozenJson } from './json.js'
import { isHelperResult, isModelResult, pendingOf, type HelperResult, type ModelResult } from './helpers.js'
import { refusalError, toolError, ToolResult } from './result.js'
import type { ContentPart, JsonValue, PendingRequest } from './types.js'
import { SchemaCompiler, type Issue, type SchemaOptions, type Validator } from './validate.js'
import { viewOf, type CallResult, type CancelledBy } from './view.js'

/** What a tool declares about itself. `untrustedContent` marks results as data, not instructions. */
export interface ToolHints {
  readonly untrustedContent?: boolean
  readonly readOnly?: boolean
  readonly destructive?: boolean
  readonly idempotent?: boolean
}

/** What a tool's body receives besides its input. */
export interface ToolContext {
  readonly callId: string
  readonly toolName: string
  /** Aborted when the call is cancelled or times out. Created on first read. */
  readonly signal: AbortSignal
}

/** A permission decision: allow with `true`/`undefined`, deny with `false`, `refuse(...)` or `{ allow: false, code?, message? }`. */
export type PermissionDecision =
  | boolean
  | undefined
  | void
  | HelperResult
  | { readonly allow: boolean; readonly code?: string; readonly message?: string }

/** Runs before the body; nothing the tool does can waive its denial. */
export type PermissionHook = (
  call: { readonly tool: string; readonly input: unknown; readonly callId: string },
) => PermissionDecision | Promise<PermissionDecision>

/** A JSON Schema (draft 2020-12 unless `$schema` says draft-07). */
export type JsonSchema = { readonly [key: string]: unknown } | boolean

/** Per-tool concurrency: at most `limit` bodies run at once; up to `queue` more wait. */
export interface ConcurrencyOptions {
  readonly limit: number
  readonly queue?: number
}

/** A tool: a name, a JSON Schema input and a body. */
export interface ToolDefinition<I = Record<string, unknown>> {
  readonly name: string
  readonly description?: string
  readonly inputSchema: JsonSchema
  readonly outputSchema?: JsonSchema
  readonly hints?: ToolHints
  readonly timeoutMs?: number
  readonly concurrency?: number | ConcurrencyOptions
  readonly permission?: PermissionHook
  /** Returns a helper result, a `{ output, isError, parts?, metadata? }`, a `ToolResult`, or any value (taken as `ok(value)`). */
  run(input: I, ctx: ToolContext): unknown
}

/** Options of one call. */
export interface CallOptions {
  readonly signal?: AbortSignal
  readonly callId?: string
  readonly timeoutMs?: number
}

/** Options of a manager. */
export interface ToolManagerOptions extends SchemaOptions {
  /** Validate outputs against `outputSchema` and emit `output_invalid` on mismatch. Default: `NODE_ENV !== 'production'`. */
  readonly development?: boolean
  /** A permission hook for every tool, run before the tool's own. */
  readonly permission?: PermissionHook
  /** A timeout for every call that sets none. */
  readonly timeoutMs?: number
  /** Default queue bound for tools with a concurrency limit (default 100). */
  readonly queueLimit?: number
}

/** Payloads of the manager's events. */
export interface ToolEvents {
  call_start: { readonly callId: string; readonly tool: string }
  call_end: {
    readonly callId: string
    readonly tool: string
    readonly status: CallResult['status']
    readonly statusName: ReturnType<ToolResult['statusName']>
    readonly durationMs: number
    readonly result: ToolResult
    readonly view: CallResult
  }
  error: { readonly callId: string; readonly tool: string; readonly message: string; readonly stack?: string; readonly error: unknown }
  output_invalid: { readonly callId: string; readonly tool: string; readonly issues: readonly Issue[] }
}

export type ToolEventName = keyof ToolEvents
type Listener<E extends ToolEventName> = (event: ToolEvents[E]) => unknown

interface ToolEntry {
  readonly def: ToolDefinition<never>
  readonly name: string
  readonly validate: Validator
  readonly validateOutput: Validator | undefined
  readonly untrusted: boolean
  readonly timeoutMs: number | undefined
  readonly limit: number
  readonly queueLimit: number
  active: number
  readonly queue: Call[]
}

/** The message a model and an application see when a tool throws. Details go to `error` events. */
export const TOOL_FAILED_MESSAGE = 'The tool failed.'

const isThenable = (v: unknown): v is PromiseLike<unknown> =>
  typeof v === 'object' && v !== null && typeof (v as { then?: unknown }).then === 'function'

let managerSeq = 0

/**
 * Registers tools and dispatches the calls a model makes.
 *
 * @example
 * const tm = new ToolManager()
 * tm.register({ name: 'echo', inputSchema: { type: 'object' }, run: (input) => input })
 * const result = await tm.callJson('echo', '{"text":"hi"}') // { status: 'ok', data: { text: 'hi' }, callId }
 */
export class ToolManager {
  private readonly tools = new Map<string, ToolEntry>()
  private readonly inflight = new Map<string, Call>()
  private readonly listeners: { [E in ToolEventName]?: Listener<E>[] } = {}
  private readonly compiler: SchemaCompiler
  private readonly idPrefix = `call_${(++managerSeq).toString(36)}${Math.random().toString(36).slice(2, 8)}_`
  private seq = 0
  /** @internal */ readonly development: boolean
  /** @internal */ readonly options: ToolManagerOptions

  constructor(options: ToolManagerOptions = {}) {
    this.options = options
    this.compiler = new SchemaCompiler(options)
    this.development = options.development ?? process.env.NODE_ENV !== 'production'
  }

  /**
   * Registers a tool. A duplicate name throws unless `{ replace: true }`; a replacement
   * affects only calls admitted after it.
   * @throws TypeError for a malformed definition; SchemaError for a schema that does not compile.
   */
  register<I>(tool: ToolDefinition<I>, options: { readonly replace?: boolean } = {}): this {
    if (typeof tool !== 'object' || tool === null) throw new TypeError('toolwire: register() takes a tool definition object')
    const { name } = tool
    if (typeof name !== 'string' || name.length === 0) throw new TypeError('toolwire: a tool needs a non-empty string name')
    if (typeof tool.run !== 'function') throw new TypeError(`toolwire: tool "${name}" needs a run(input, ctx) function`)
    if (this.tools.has(name) && options.replace !== true) {
      throw new Error(`toolwire: a tool named "${name}" is already registered; pass { replace: true } to replace it`)
    }
    if (tool.timeoutMs !== undefined && !(typeof tool.timeoutMs === 'number' && tool.timeoutMs > 0)) {
      throw new TypeError(`toolwire: tool "${name}" timeoutMs must be a positive number`)
    }
    const c = tool.concurrency
    const limit = c === undefined ? Infinity : typeof c === 'number' ? c : c.limit
    if (!(limit === Infinity || (Number.isInteger(limit) && limit > 0))) {
      throw new TypeError(`toolwire: tool "${name}" concurrency must be a positive integer`)
    }
    const queueLimit = typeof c === 'object' && c.queue !== undefined ? c.queue : (this.options.queueLimit ?? 100)
    const entry: ToolEntry = {
      def: tool as ToolDefinition<never>,
      name,
      validate: this.compiler.compile(tool.inputSchema, `tool "${name}" inputSchema`),
      validateOutput:
        tool.outputSchema === undefined ? undefined : this.compiler.compile(tool.outputSchema, `tool "${name}" outputSchema`),
      untrusted: tool.hints?.untrustedContent === true,
      timeoutMs: tool.timeoutMs,
      limit,
      queueLimit,
      active: 0,
      queue: [],
    }
    this.tools.set(name, entry)
    return this
  }

  /** Removes a tool; calls already admitted finish. Returns whether it existed. */
  unregister(name: string): boolean {
    return this.tools.delete(name)
  }

  /** The registered tool definitions, in registration order. */
  list(): readonly ToolDefinition<never>[] {
    return [...this.tools.values()].map((e) => e.def)
  }

  /** Subscribes to an event. A throwing listener never affects a call. */
  on<E extends ToolEventName>(event: E, listener: Listener<E>): this {
    const list = (this.listeners[event] ??= [] as never) as Listener<E>[]
    list.push(listener)
    return this
  }

  /** Unsubscribes a listener added with `on`. */
  off<E extends ToolEventName>(event: E, listener: Listener<E>): this {
    const list = this.listeners[event] as Listener<E>[] | undefined
    const i = list ? list.indexOf(listener) : -1
    if (i >= 0) list!.splice(i, 1)
    if (list && list.length === 0) delete this.listeners[event]
    return this
  }

  /** @internal */
  hasListeners(event: ToolEventName): boolean {
    return this.listeners[event] !== undefined
  }

  /** @internal */
  emit<E extends ToolEventName>(event: E, payload: ToolEvents[E]): void {
    const list = this.listeners[event] as Listener<E>[] | undefined
    if (list === undefined) return
    for (const listener of list.slice()) {
      try {
        const r = listener(payload)
        if (isThenable(r)) (r as Promise<unknown>).then(undefined, () => {})
      } catch {
        // a listener never affects a call
      }
    }
  }

  /**
   * Calls a tool with the arguments as JSON text, as models send them. Never rejects.
   */
  callJson(name: string, argsText: string, options?: CallOptions): Promise<CallResult> {
    let input: unknown
    try {
      if (typeof argsText !== 'string') throw new TypeError(`arguments must be JSON text, got ${typeof argsText}`)
      input = JSON.parse(argsText)
    } catch (err) {
      const message = `The arguments are not valid JSON: ${(err as Error).message}`
      return this.settleEarly(name, options, ToolResult.failed(invalidError([{ path: '', message }])))
    }
    return this.call(name, input, options)
  }

  /**
   * Calls a tool. Resolves to a frozen application view; never throws or rejects.
   */
  call(name: string, input: unknown, options?: CallOptions): Promise<CallResult> {
    try {
      return this.dispatch(name, input, options)
    } catch (err) {
      // a bug in the runtime itself still gives a result
      return this.settleEarly(String(name), undefined, ToolResult.failed(toolError('other', TOOL_FAILED_MESSAGE)), err)
    }
  }

  /** Cancels an in-flight call as the operator. Returns whether a call was stopped. */
  cancel(callId: string): boolean {
    const call = this.inflight.get(callId)
    if (call === undefined) return false
    call.interrupt(cancelledResult('operator'))
    return true
  }

  /** @internal */
  nextCallId(): string {
    return this.idPrefix + ++this.seq
  }

  private dispatch(name: string, input: unknown, options: CallOptions | undefined): Promise<CallResult> {
    const entry = this.tools.get(name)
    if (entry === undefined) {
      return this.settleEarly(
        String(name),
        options,
        ToolResult.failed(refusalError('unknown_tool', `No tool named ${JSON.stringify(String(name))} is registered`)),
      )
    }
    const issues = entry.validate(input)
    if (issues !== undefined) return this.settleEarly(name, options, ToolResult.failed(invalidError(issues)))
    const callId = options?.callId ?? this.nextCallId()
    if (options?.callId !== undefined && (typeof callId !== 'string' || this.inflight.has(callId))) {
      return this.settleEarly(
        name,
        undefined,
        ToolResult.failed(refusalError('duplicate_call_id', `A call with id ${JSON.stringify(callId)} is already in flight`)),
      )
    }
    const call = new Call(this, entry, callId, input, options)
    return call.start()
  }

  /** @internal A call settled before its body could run. */
  settleEarly(tool: string, options: CallOptions | undefined, result: ToolResult, bug?: unknown): Promise<CallResult> {
    const callId = typeof options?.callId === 'string' ? options.callId : this.nextCallId()
    if (this.listeners.call_start !== undefined) this.emit('call_start', { callId, tool })
    if (bug !== undefined) this.reportError(callId, tool, bug)
    const view = viewOf(result, callId)
    if (this.listeners.call_end !== undefined) {
      this.emit('call_end', { callId, tool, status: view.status, statusName: result.statusName(), durationMs: 0, result, view })
    }
    return Promise.resolve(view)
  }

  /** @internal */
  reportError(callId: string, tool: string, error: unknown): void {
    if (this.listeners.error === undefined) return
    const message = error instanceof Error ? error.message : String(error)
    const stack = error instanceof Error ? error.stack : undefined
    this.emit('error', stack === undefined ? { callId, tool, message, error } : { callId, tool, message, stack, error })
  }

  /** @internal */
  track(call: Call): void {
    this.inflight.set(call.callId, call)
  }

  /** @internal */
  untrack(call: Call): void {
    this.inflight.delete(call.callId)
  }
}

function invalidError(issues: readonly Issue[]): ReturnType<typeof toolError> {
  const summary = issues.map((i) => `${i.path || '(root)'}: ${i.message}`).join('; ')
  return toolError('invalid_args', `Invalid arguments: ${summary}`, { details: { issues: issues as unknown as JsonValue } })
}

function cancelledResult(by: CancelledBy): ToolResult {
  return ToolResult.failed(toolError('cancelled', `The call was cancelled (${by})`, { details: { by } }))
}

/** Turns whatever a body returned into the canonical result. */
export function normalizeReturn(value: unknown, untrusted: boolean): ToolResult {
  if (isHelperResult(value)) return fromHelper(value).withUntrusted(untrusted)
  if (value instanceof ToolResult) return untrusted && !value.isUntrusted() ? value.withUntrusted(true) : value
  if (isModelResult(value)) return fromModelResult(value).withUntrusted(untrusted)
  return ToolResult.fromData(toFrozenJson(value), undefined, untrusted)
}

function fromHelper(h: HelperResult): ToolResult {
  switch (h.status) {
    case 'ok':
      return ToolResult.fromData(toFrozenJson(h.data))
    case 'invalid':
      return ToolResult.failed(invalidError(h.issues))
    case 'refused':
      return ToolResult.failed(refusalError(h.code, h.message, h.rev === undefined ? undefined : { rev: h.rev }))
    case 'cancelled':
      return cancelledResult(h.by)
    case 'error':
      return ToolResult.failed(toolError('other', h.message))
  }
}

function fromModelResult(r: ModelResult): ToolResult {
  const request = pendingOf(r)
  const metadata = r.metadata === undefined ? undefined : (toFrozenJson(r.metadata) as { readonly [key: string]: JsonValue })
  let result: ToolResult
  if (request !== undefined) {
    result = ToolResult.pending(request as PendingRequest)
  } else if (r.isError) {
    result = ToolResult.failed(toolError('other', r.output))
    if (r.parts !== undefined && r.parts.length > 0) result = result.withOutput({ text: r.output, parts: r.parts as ContentPart[] })
  } else {
    result = ToolResult.success(r.parts === undefined ? r.output : { text: r.output, parts: r.parts })
  }
  return metadata === undefined ? result : result.withMetadata(metadata)
}

/** One admitted call, from admission to its single settlement. */
class Call {
  private settled = false
  private controller: AbortController | undefined
  private timer: ReturnType<typeof setTimeout> | undefined
  private onAbort: (() => void) | undefined
  private resolve!: (view: CallResult) => void
  private readonly startedAt = performance.now()
  private running = false
  readonly ctx: ToolContext

  constructor(
    private readonly tm: ToolManager,
    private readonly entry: ToolEntry,
    readonly callId: string,
    private readonly input: unknown,
    private readonly options: CallOptions | undefined,
  ) {
    const call = this
    this.ctx = {
      callId,
      toolName: entry.name,
      get signal() {
        return call.signal()
      },
    }
  }

  signal(): AbortSignal {
    if (this.controller === undefined) {
      this.controller = new AbortController()
      if (this.settled) this.controller.abort()
    }
    return this.controller.signal
  }

  start(): Promise<CallResult> {
    const promise = new Promise<CallResult>((resolve) => {
      this.resolve = resolve
    })
    const { tm, entry, options } = this
    if (tm.hasListeners('call_start')) tm.emit('call_start', { callId: this.callId, tool: entry.name })
    const signal = options?.signal
    if (signal !== undefined) {
      if (signal.aborted) {
        this.finish(cancelledResult('signal'))
        return promise
      }
      this.onAbort = () => this.interrupt(cancelledResult('signal'))
      signal.addEventListener('abort', this.onAbort, { once: true })
    }
    tm.track(this)
    const timeoutMs = options?.timeoutMs ?? entry.timeoutMs ?? tm.options.timeoutMs
    if (timeoutMs !== undefined) {
      this.timer = setTimeout(
        () => this.interrupt(ToolResult.failed(toolError('timeout', `The tool did not finish within ${timeoutMs} ms`))),
        timeoutMs,
      )
    }
    const hooks = tm.options.permission === undefined ? entry.def.permission : undefined
    if (tm.options.permission !== undefined || entry.def.permission !== undefined) {
      this.checkPermission()
    } else {
      void hooks
      this.admit()
    }
    return promise
  }

  private checkPermission(): void {
    const hooks = [this.tm.options.permission, this.entry.def.permission].filter((h): h is PermissionHook => h !== undefined)
    const request = Object.freeze({ tool: this.entry.name, input: this.input, callId: this.callId })
    const step = (i: number): void => {
      if (this.settled) return
      if (i === hooks.length) return this.admit()
      let decision: PermissionDecision | Promise<PermissionDecision>
      try {
        decision = hooks[i]!(request)
      } catch (err) {
        return this.denyOnError(err)
      }
      if (isThenable(decision)) {
        ;(decision as Promise<PermissionDecision>).then(
          (d) => (this.applyDecision(d) ? step(i + 1) : undefined),
          (err) => this.denyOnError(err),
        )
      } else if (this.applyDecision(decision)) {
        step(i + 1)
      }
    }
    step(0)
  }

  private denyOnError(err: unknown): void {
    this.tm.reportError(this.callId, this.entry.name, err)
    this.finish(ToolResult.failed(refusalError('permission_denied', 'The permission check failed')))
  }

  /** Returns true to allow; otherwise settles the call as refused. */
  private applyDecision(d: PermissionDecision): boolean {
    if (this.settled) return false
    if (d === undefined || d === true) return true
    if (d === false) {
      this.finish(ToolResult.failed(refusalError('permission_denied', 'Permission denied')))
      return false
    }
    if (isHelperResult(d)) {
      if (d.status === 'ok') return true
      this.finish(d.status === 'refused' ? fromHelper(d) : ToolResult.failed(refusalError('permission_denied', 'Permission denied')))
      return false
    }
    const obj = d as { allow?: unknown; code?: unknown; message?: unknown }
    if (obj.allow === true) return true
    this.finish(
      ToolResult.failed(
        refusalError(
          typeof obj.code === 'string' ? obj.code : 'permission_denied',
          typeof obj.message === 'string' ? obj.message : 'Permission denied',
        ),
      ),
    )
    return false
  }

  private admit(): void {
    if (this.settled) return
    const entry = this.entry
    if (entry.active < entry.limit) {
      entry.active++
      this.running = true
      this.runBody()
    } else if (entry.queue.length < entry.queueLimit) {
      entry.queue.push(this)
    } else {
      this.finish(
        ToolResult.failed(refusalError('concurrency_limit', `Tool "${entry.name}" is at its concurrency limit and its queue is full`)),
      )
    }
  }

  private runBody(): void {
    let ret: unknown
    try {
      ret = (this.entry.def.run as (input: unknown, ctx: ToolContext) => unknown)(this.input, this.ctx)
    } catch (err) {
      this.fail(err)
      return
    }
    if (isThenable(ret)) {
      ret.then(
        (v) => this.complete(v),
        (e) => this.fail(e),
      )
    } else {
      this.complete(ret)
    }
  }

  private complete(value: unknown): void {
    if (this.settled) return
    let result: ToolResult
    try {
      result = normalizeReturn(value, this.entry.untrusted)
    } catch (err) {
      this.tm.reportError(this.callId, this.entry.name, err)
      const message = err instanceof NotJsonError ? 'The tool returned a value JSON cannot carry.' : TOOL_FAILED_MESSAGE
      result = ToolResult.failed(toolError('other', message))
    }
    if (this.tm.development && this.entry.validateOutput !== undefined && result.isSuccess()) {
      const issues = this.entry.validateOutput(result.data() ?? result.text())
      if (issues !== undefined) this.tm.emit('output_invalid', { callId: this.callId, tool: this.entry.name, issues })
    }
    this.finish(result)
  }

  private fail(err: unknown): void {
    if (this.settled) return
    this.tm.reportError(this.callId, this.entry.name, err)
    this.finish(ToolResult.failed(toolError('other', TOOL_FAILED_MESSAGE)))
  }

  /** Settles from outside the body (cancel, signal, timeout) and aborts the tool's signal. */
  interrupt(result: ToolResult): void {
    if (this.settled) return
    this.finish(result)
    this.controller?.abort(result.isErrorKind('timeout') ? new DOMException('The call timed out', 'TimeoutError') : undefined)
  }

  private finish(result: ToolResult): void {
    if (this.settled) return
    this.settled = true
    const { tm, entry } = this
    if (this.timer !== undefined) clearTimeout(this.timer)
    if (this.onAbort !== undefined) this.options!.signal!.removeEventListener('abort', this.onAbort)
    tm.untrack(this)
    if (this.running) {
      entry.active--
      this.releaseSlot()
    } else {
      const i = entry.queue.indexOf(this)
      if (i >= 0) entry.queue.splice(i, 1)
    }
    const view = viewOf(result, this.callId)
    if (tm.hasListeners('call_end')) {
      tm.emit('call_end', {
        callId: this.callId,
        tool: entry.name,
        status: view.status,
        statusName: result.statusName(),
        durationMs: performance.now() - this.startedAt,
        result,
        view,
      })
    }
    this.resolve(view)
  }

  private releaseSlot(): void {
    const entry = this.entry
    while (entry.queue.length > 0 && entry.active < entry.limit) {
      const next = entry.queue.shift()!
      if (next.settled) continue
      entry.active++
      next.running = true
      next.runBody()
    }
  }
}
