/**
 * `ToolManager`: registers tools and dispatches calls. `call` and `callJson` never
 * throw or reject: every outcome is a frozen application view over one canonical
 * `ToolResult`.
 */
import { CircuitBreaker, type BreakerOptions } from './breaker.js'
import type { EvidenceStore } from './evidence.js'
import { NotJsonError, toFrozenJson } from './json.js'
import { isHelperResult, isModelResult, pendingOf, type HelperResult, type ModelResult } from './helpers.js'
import { outcomeCallbackOf, type OutcomeDiagnostics, type OutcomeInvocation, type ToolExecutionOutcome } from './outcome.js'
import { MetricsBuffer, type MetricsSnapshot } from './metrics.js'
import { callRecord, type CallRecord } from './record.js'
import { redact } from './redact.js'
import { CallTracer, type TelemetryOptions } from './telemetry.js'
import { isToolErrorKind, refusalError, toolError, ToolResult } from './result.js'
import type { ContentPart, FieldChange, JsonValue, PendingRequest } from './types.js'
import { SchemaCompiler, type Issue, type SchemaOptions, type Validator } from './validate.js'
import { canonicalOf, okView, viewOf, type CallResult, type CancelledBy } from './view.js'

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
  /** 1 for the first attempt; higher when an idempotent tool is retried. */
  readonly attempt: number
  /** Registers how to undo what this call did; `tm.undo(callId)` runs it once. */
  registerUndo(restore: () => unknown): void
  /** Reports progress (MCP `notifications/progress` when the client asked for it). */
  reportProgress(progress: number, total?: number, message?: string): void
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
  /** Deferred mode: the call does not run until `tm.confirm(confirmId, { approve: true })`. */
  readonly needsConfirmation?: boolean | ((input: I, ctx: ToolContext) => boolean | Promise<boolean>)
  /** The human summary of a confirmation (default: "Run <name> with <input>", sensitive fields redacted). */
  summarize?(input: I): string
  /** The changes a confirmed call would make, when known. */
  previewChanges?(input: I): readonly FieldChange[] | Promise<readonly FieldChange[]>
  /** Continues a suspended call: gets the answer given to `tm.resume(requestId, answer)`. */
  resume?(answer: unknown, input: I, ctx: ToolContext): unknown
  /** Opt-in circuit breaker. */
  readonly breaker?: BreakerOptions
  /** Opt-in retries of retryable error kinds, for tools marked `idempotent` only. */
  readonly retry?: RetryOptions
  /** Field names to redact (besides `password` and `cc-*`) in evidence. */
  readonly sensitive?: readonly string[]
  /** Returns a helper result, a `{ output, isError, parts?, metadata? }`, a `ToolResult`, or any value (taken as `ok(value)`). */
  run(input: I, ctx: ToolContext): unknown
}

/** Retries with exponential backoff and full jitter, never past the call's timeout or signal. */
export interface RetryOptions {
  /** Total attempts, the first included (default 3). */
  readonly attempts?: number
  /** The first backoff in ms (default 100); doubles each retry. */
  readonly baseMs?: number
  /** The largest backoff in ms (default 5000). */
  readonly maxMs?: number
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
  /** How long a confirmId stays valid (default 10 minutes). */
  readonly confirmTtlMs?: number
  /** How many undo registrations are kept (default 1000; the oldest go first). */
  readonly undoLimit?: number
  /** Opt-in evidence: every settled call is appended here. */
  readonly evidence?: EvidenceStore
  /** OpenTelemetry spans (on when `@opentelemetry/api` is installed) and content recording (off). */
  readonly telemetry?: TelemetryOptions
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
    /** The call's event record (`JSON.stringify(record)` gives the same bytes as the Rust core). */
    readonly record: CallRecord
  }
  error: { readonly callId: string; readonly tool: string; readonly message: string; readonly stack?: string; readonly error: unknown }
  output_invalid: { readonly callId: string; readonly tool: string; readonly issues: readonly Issue[] }
  confirmation: { readonly confirmId: string; readonly callId: string; readonly tool: string; readonly approved: boolean; readonly result: CallResult }
  progress: { readonly callId: string; readonly tool: string; readonly progress: number; readonly total?: number; readonly message?: string }
  evidence_error: { readonly callId: string; readonly tool: string; readonly message: string; readonly error: unknown }
  late_report: { readonly callId: string; readonly tool: string; readonly message: string }
}

export type ToolEventName = keyof ToolEvents
type Listener<E extends ToolEventName> = (event: ToolEvents[E]) => unknown

interface ToolEntry {
  readonly def: ToolDefinition<never>
  readonly name: string
  readonly validate: Validator
  readonly validateOutput: Validator | undefined
  readonly untrusted: boolean
  /** The tool's timeout, else the manager's. */
  readonly timeoutMs: number | undefined
  /** The manager's and the tool's permission hooks, in order (empty: none). */
  readonly permissionHooks: readonly PermissionHook[]
  readonly limit: number
  readonly queueLimit: number
  active: number
  readonly queue: Call[]
  readonly breaker: CircuitBreaker | undefined
  readonly outcome: ((args: never, invocation: OutcomeInvocation) => unknown) | undefined
  readonly sensitive: ReadonlySet<string> | undefined
  readonly metricsId: number
}

/** A parked call: a confirmation or a suspension, continued later. */
interface Parked {
  readonly kind: 'confirmation' | 'suspension'
  readonly entry: ToolEntry
  readonly input: unknown
  readonly callId: string
  readonly expiresAt: number
  used: boolean
}

/** Everything one execution produced; `tm.executeWithOutcome` reads it. */
interface Settlement {
  readonly view: CallResult
  readonly result: ToolResult
  readonly raw: unknown
  readonly ran: boolean
  readonly reported: string | undefined
  readonly diagnostics: OutcomeDiagnostics
}

/** Thrown by `tm.execute` (the raw contract) when the call did not succeed. */
export class ToolCallError extends Error {
  override name = 'ToolCallError'
  constructor(readonly result: CallResult) {
    super(`tool call ${result.status}${'message' in result ? `: ${result.message}` : ''}`)
  }
}

/** The message a model and an application see when a tool throws. Details go to `error` events. */
export const TOOL_FAILED_MESSAGE = 'The tool failed.'

const isThenable = (v: unknown): v is PromiseLike<unknown> =>
  typeof v === 'object' && v !== null && typeof (v as { then?: unknown }).then === 'function'

let managerSeq = 0
const SLOTS = 4096

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
  /** In-flight calls by caller-chosen id, and (cheaper) by the sequence number of generated ids. */
  private readonly inflight = new Map<string, Call>()
  /** Generated ids index a ring of slots by sequence number (a Map's delete costs more than the whole call). */
  private readonly slots: (Call | undefined)[] = new Array(SLOTS).fill(undefined)
  private readonly parked = new Map<string, Parked>()
  private readonly undos = new Map<string, () => unknown>()
  /** Every event has a slot from the start (a fixed shape keeps the per-call checks cheap). */
  private readonly listeners: { [E in ToolEventName]: Listener<E>[] | undefined } = {
    call_start: undefined,
    call_end: undefined,
    error: undefined,
    output_invalid: undefined,
    confirmation: undefined,
    progress: undefined,
    evidence_error: undefined,
    late_report: undefined,
  }
  private readonly compiler: SchemaCompiler
  private readonly idPrefix = `call_${(++managerSeq).toString(36)}${Math.random().toString(36).slice(2, 8)}_`
  private seq = 0
  /** @internal */ readonly development: boolean
  /** @internal */ readonly tracer: CallTracer | undefined
  /** @internal */ readonly evidence: EvidenceStore | undefined
  /** @internal */ readonly metricsBuffer = new MetricsBuffer()
  /** @internal */ readonly options: ToolManagerOptions

  constructor(options: ToolManagerOptions = {}) {
    this.options = options
    this.compiler = new SchemaCompiler(options)
    this.development = options.development ?? process.env.NODE_ENV !== 'production'
    this.tracer = CallTracer.create(options.telemetry)
    this.evidence = options.evidence
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
    if (tool.retry !== undefined && tool.hints?.idempotent !== true) {
      throw new TypeError(`toolwire: tool "${name}" sets retry but is not marked hints.idempotent; only idempotent tools are retried`)
    }
    const entry: ToolEntry = {
      def: tool as ToolDefinition<never>,
      name,
      validate: this.compiler.compile(tool.inputSchema, `tool "${name}" inputSchema`),
      validateOutput:
        tool.outputSchema === undefined ? undefined : this.compiler.compile(tool.outputSchema, `tool "${name}" outputSchema`),
      untrusted: tool.hints?.untrustedContent === true,
      timeoutMs: tool.timeoutMs ?? this.options.timeoutMs,
      permissionHooks: [this.options.permission, tool.permission].filter((h): h is PermissionHook => h !== undefined),
      limit,
      queueLimit,
      active: 0,
      queue: [],
      breaker: tool.breaker === undefined ? undefined : new CircuitBreaker(tool.breaker),
      outcome: outcomeCallbackOf(tool as { execute?: unknown }),
      sensitive: tool.sensitive === undefined ? undefined : new Set(tool.sensitive),
      metricsId: this.metricsBuffer.register(name),
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
    if (list && list.length === 0) this.listeners[event] = undefined
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
   * Runs the calls a model made in one turn, in parallel, and resolves once with their
   * views in order. Each call behaves exactly as `call`/`callJson`; never rejects.
   */
  callMany(calls: readonly BatchCall[]): Promise<readonly CallResult[]> {
    if (!Array.isArray(calls)) return Promise.resolve(Object.freeze([]))
    const sink = new BatchSink(calls.length)
    for (let i = 0; i < calls.length; i++) {
      const c = calls[i] as BatchCall | undefined
      try {
        this.dispatchInto(sink, i, c)
      } catch (err) {
        this.settleEarly(String(c?.name), undefined, ToolResult.failed(toolError('other', TOOL_FAILED_MESSAGE)), err).then((v) => sink.put(i, v))
      }
    }
    return sink.promise
  }

  private dispatchInto(sink: BatchSink, index: number, c: BatchCall | undefined): void {
    const input = c?.args !== undefined ? parseArgs(c.args) : c?.input
    const admitted = input instanceof ToolResult ? { result: input, options: c?.options } : this.admit(c?.name as string, input, c?.options, 'view')
    if (admitted instanceof Call) admitted.startInto(sink, index)
    else sink.put(index, this.earlyView(String(c?.name), admitted.options, admitted.result))
  }

  /**
   * Calls a tool with the arguments as JSON text, as models send them. Never rejects.
   */
  callJson(name: string, argsText: string, options?: CallOptions): Promise<CallResult> {
    const input = parseArgs(argsText)
    return input instanceof ToolResult ? this.settleEarly(name, options, input) : this.call(name, input, options)
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
    const call = this.inflightCall(callId)
    if (call === undefined) return false
    Call.interrupt(call, cancelledResult('operator'))
    return true
  }

  /**
   * Approves or denies a call waiting for confirmation. Runs the tool on approval;
   * the outcome also arrives as a `confirmation` event. Never rejects.
   */
  confirm(confirmId: string, decision: { readonly approve: boolean }): Promise<CallResult> {
    const parked = this.parked.get(confirmId)
    const refusal = this.checkParked(parked, 'confirmation')
    if (refusal !== undefined) return this.settleEarly(parked?.entry.name ?? 'unknown', undefined, refusal)
    const p = parked!
    p.used = true
    const outcome =
      decision?.approve === true
        ? new Call(this, p.entry, p.callId, p.input, undefined, 'view', CONTINUE_CONFIRMED).start()
        : this.settleEarly(p.entry.name, { callId: p.callId }, ToolResult.failed(refusalError('confirmation_denied', 'The user denied this call')))
    return (outcome as Promise<CallResult>).then((view) => {
      this.emit('confirmation', { confirmId, callId: p.callId, tool: p.entry.name, approved: decision?.approve === true, result: view })
      return view
    })
  }

  /** Continues a suspended call with `answer`: the tool's `resume` handler gets it. Never rejects. */
  resume(requestId: string, answer: unknown): Promise<CallResult> {
    const parked = this.parked.get(requestId)
    const refusal = this.checkParked(parked, 'suspension')
    if (refusal !== undefined) return this.settleEarly(parked?.entry.name ?? 'unknown', undefined, refusal)
    const p = parked!
    p.used = true
    const handler = p.entry.def.resume
    if (typeof handler !== 'function') {
      return this.settleEarly(p.entry.name, { callId: p.callId }, ToolResult.failed(refusalError('resume_unavailable', `Tool "${p.entry.name}" has no resume handler`)))
    }
    const continuation = (ctx: ToolContext): unknown => (handler as (a: unknown, i: unknown, c: ToolContext) => unknown)(answer, p.input, ctx)
    return new Call(this, p.entry, p.callId, p.input, undefined, 'view', continuation).start() as Promise<CallResult>
  }

  private checkParked(parked: Parked | undefined, kind: 'confirmation' | 'suspension'): ToolResult | undefined {
    this.sweepParked()
    const what = kind === 'confirmation' ? 'confirmation' : 'request'
    if (parked === undefined || parked.kind !== kind) {
      return ToolResult.failed(refusalError(kind === 'confirmation' ? 'confirmation_unknown' : 'unknown_request', `No pending ${what} with this id`))
    }
    if (parked.used) {
      return ToolResult.failed(refusalError(kind === 'confirmation' ? 'confirmation_used' : 'request_used', `This ${what} was already answered`))
    }
    if (Date.now() > parked.expiresAt) {
      parked.used = true
      return ToolResult.failed(refusalError(kind === 'confirmation' ? 'confirmation_expired' : 'request_expired', `This ${what} has expired`))
    }
    return undefined
  }

  /** @internal Parks a call under `id` until confirmed or resumed. */
  park(id: string, kind: 'confirmation' | 'suspension', entry: ToolEntry, input: unknown, callId: string): void {
    this.sweepParked()
    const ttl = this.options.confirmTtlMs ?? 10 * 60_000
    this.parked.set(id, { kind, entry, input, callId, expiresAt: Date.now() + ttl, used: false })
  }

  private sweepParked(): void {
    if (this.parked.size < 64) return
    const now = Date.now()
    for (const [id, p] of this.parked) if (now > p.expiresAt) this.parked.delete(id)
  }

  /** Runs the undo a call registered, exactly once. Otherwise refused `undo_unavailable`. Never rejects. */
  undo(callId: string): Promise<CallResult> {
    const restore = this.undos.get(callId)
    const tool = 'undo'
    if (restore === undefined) {
      return this.settleEarly(tool, undefined, ToolResult.failed(refusalError('undo_unavailable', 'There is nothing to undo for this call')))
    }
    this.undos.delete(callId)
    const fail = (err: unknown): CallResult => {
      this.reportError(callId, tool, err)
      return viewOf(ToolResult.failed(toolError('other', 'The undo failed.')), callId)
    }
    try {
      return Promise.resolve(restore()).then((value) => {
        try {
          return viewOf(ToolResult.fromData(toFrozenJson(value)), callId)
        } catch (err) {
          return fail(err)
        }
      }, fail)
    } catch (err) {
      return Promise.resolve(fail(err))
    }
  }

  /** @internal */
  registerUndo(callId: string, restore: () => unknown): void {
    this.undos.delete(callId)
    this.undos.set(callId, restore)
    const limit = this.options.undoLimit ?? 1000
    while (this.undos.size > limit) this.undos.delete(this.undos.keys().next().value as string)
  }

  /** Whether `tm.undo(callId)` would run something. */
  canUndo(callId: string): boolean {
    return this.undos.has(callId)
  }

  /**
   * Raw execution: runs the tool through the same pipeline and returns what its body
   * returned. Throws `ToolCallError` (carrying the application view) when it did not succeed.
   */
  async execute(name: string, args: unknown, options?: CallOptions): Promise<unknown> {
    const s = await this.settle(name, args, options)
    if (s.view.status !== 'ok') throw new ToolCallError(s.view)
    return s.raw
  }

  /** Runs a tool and returns its raw result with the frozen semantic outcome. Never rejects. */
  async executeWithOutcome(
    name: string,
    args: unknown,
    options?: CallOptions,
  ): Promise<{ readonly result: unknown; readonly outcome: ToolExecutionOutcome; readonly diagnostics: OutcomeDiagnostics }> {
    const s = await this.settle(name, args, options)
    return { result: s.raw, outcome: outcomeOf(s, name), diagnostics: s.diagnostics }
  }

  private settle(name: string, input: unknown, options: CallOptions | undefined): Promise<Settlement> {
    const admitted = this.admit(name, input, options, 'settlement')
    if (admitted instanceof Call) return admitted.start() as Promise<Settlement>
    const { result } = admitted
    return this.settleEarly(String(name), admitted.options, result).then((view) => ({
      view,
      result,
      raw: undefined,
      ran: false,
      reported: undefined,
      diagnostics: newDiagnostics(),
    }))
  }

  /**
   * A snapshot of the core's metrics: calls per tool and status, errors per kind,
   * latency histograms, in-flight calls and breaker state. With `{ format: 'prometheus' }`,
   * the Prometheus text exposition format.
   */
  metrics(): MetricsSnapshot
  metrics(options: { readonly format: 'prometheus' }): string
  metrics(options?: { readonly format?: 'json' | 'prometheus' }): MetricsSnapshot | string {
    for (const entry of this.tools.values()) {
      if (entry.breaker !== undefined) this.metricsBuffer.breaker(entry.metricsId, entry.breaker.currentState())
    }
    return options?.format === 'prometheus' ? this.metricsBuffer.prometheus() : this.metricsBuffer.snapshot()
  }

  /** The tools with their schemas and hints, JSON-serializable: the MCP / WebMCP / bridge description. */
  manifest(): readonly ToolManifestEntry[] {
    return [...this.tools.values()].map(({ def }) => {
      const item: Record<string, unknown> = { name: def.name }
      if (def.description !== undefined) item.description = def.description
      item.inputSchema = def.inputSchema
      if (def.outputSchema !== undefined) item.outputSchema = def.outputSchema
      item.hints = { ...def.hints }
      if (def.needsConfirmation !== undefined && def.needsConfirmation !== false) item.needsConfirmation = true
      return item as unknown as ToolManifestEntry
    })
  }

  /** @internal */
  nextCallId(): string {
    return this.idPrefix + ++this.seq
  }

  private dispatch(name: string, input: unknown, options: CallOptions | undefined): Promise<CallResult> {
    const admitted = this.admit(name, input, options, 'view')
    return admitted instanceof Call
      ? (admitted.start() as Promise<CallResult>)
      : this.settleEarly(String(name), admitted.options, admitted.result)
  }

  /**
   * Looks the tool up, validates the input and picks the call id: a call ready to start,
   * or the result of one that cannot run (with the options its view should use).
   */
  private admit(
    name: string,
    input: unknown,
    options: CallOptions | undefined,
    mode: 'view' | 'settlement',
  ): Call | { readonly result: ToolResult; readonly options: CallOptions | undefined } {
    const entry = this.tools.get(name)
    if (entry === undefined) {
      return { result: ToolResult.failed(refusalError('unknown_tool', `No tool named ${JSON.stringify(String(name))} is registered`)), options }
    }
    const issues = entry.validate(input)
    if (issues !== undefined) return { result: ToolResult.failed(invalidError(issues)), options }
    const seq = options?.callId === undefined ? ++this.seq : 0
    const callId = seq !== 0 ? this.idPrefix + seq : options!.callId!
    if (seq === 0 && (typeof callId !== 'string' || this.inflightCall(callId) !== undefined)) {
      const duplicate = refusalError('duplicate_call_id', `A call with id ${JSON.stringify(callId)} is already in flight`)
      return { result: ToolResult.failed(duplicate), options: undefined }
    }
    return new Call(this, entry, callId, input, options, mode, undefined, seq)
  }

  /** @internal A call settled before its body could run. */
  settleEarly(tool: string, options: CallOptions | undefined, result: ToolResult, bug?: unknown): Promise<CallResult> {
    return Promise.resolve(this.earlyView(tool, options, result, bug))
  }

  private earlyView(tool: string, options: CallOptions | undefined, result: ToolResult, bug?: unknown): CallResult {
    const callId = typeof options?.callId === 'string' ? options.callId : this.nextCallId()
    if (this.listeners.call_start !== undefined) this.emit('call_start', { callId, tool })
    if (this.tracer !== undefined) {
      const entry = this.tools.get(tool)
      const span = this.tracer.start(tool, callId, entry?.def.description, undefined, undefined)
      if (span !== undefined) this.tracer.end(span, result, undefined)
    }
    if (bug !== undefined) this.reportError(callId, tool, bug)
    const view = viewOf(result, callId)
    const entry = this.tools.get(tool)
    if (entry !== undefined) this.metricsBuffer.settled(entry.metricsId, result, 0)
    if (this.listeners.call_end !== undefined) {
      const now = Date.now()
      const record = callRecord(callId, tool, result, now, now, 1, this.undos.has(callId))
      this.emit('call_end', { callId, tool, status: view.status, statusName: result.statusName(), durationMs: 0, result, view, record })
    }
    return view
  }

  /** @internal */
  reportError(callId: string, tool: string, error: unknown): void {
    if (this.listeners.error === undefined) return
    const message = error instanceof Error ? error.message : String(error)
    const stack = error instanceof Error ? error.stack : undefined
    this.emit('error', stack === undefined ? { callId, tool, message, error } : { callId, tool, message, stack, error })
  }

  private inflightCall(callId: string): Call | undefined {
    if (typeof callId !== 'string') return undefined
    if (callId.startsWith(this.idPrefix)) {
      const seq = Number(callId.slice(this.idPrefix.length))
      const call = Number.isInteger(seq) ? this.slots[seq & (SLOTS - 1)] : undefined
      if (call !== undefined && Call.seqOf(call) === seq) return call
    }
    return this.inflight.get(callId)
  }

  /** @internal */
  track(call: Call): void {
    if (Call.seqOf(call) !== 0) {
      const i = Call.seqOf(call) & (SLOTS - 1)
      if (this.slots[i] === undefined) {
        this.slots[i] = call
        return
      }
    }
    this.inflight.set(call.callId, call)
  }

  /** @internal */
  untrack(call: Call): void {
    if (Call.seqOf(call) !== 0) {
      const i = Call.seqOf(call) & (SLOTS - 1)
      if (this.slots[i] === call) {
        this.slots[i] = undefined
        return
      }
    }
    this.inflight.delete(call.callId)
  }
}

/** Parses model-sent argument text; malformed text gives the `invalid` result instead. */
function parseArgs(argsText: unknown): unknown {
  try {
    if (typeof argsText !== 'string') throw new TypeError(`arguments must be JSON text, got ${typeof argsText}`)
    return JSON.parse(argsText)
  } catch (err) {
    const message = `The arguments are not valid JSON: ${(err as Error).message}`
    return ToolResult.failed(invalidError(Object.freeze([Object.freeze({ path: '', message })])))
  }
}

/** One tool in `tm.manifest()`. */
export interface ToolManifestEntry {
  readonly name: string
  readonly description?: string
  readonly inputSchema: JsonSchema
  readonly outputSchema?: JsonSchema
  readonly hints: ToolHints
  readonly needsConfirmation?: true
}

/** Marks a call continuing after approval: no permission or confirmation gate again. */
const CONTINUE_CONFIRMED = Symbol('confirmed')
type Continuation = typeof CONTINUE_CONFIRMED | ((ctx: ToolContext) => unknown) | undefined

function newDiagnostics(): OutcomeDiagnostics {
  return { configurationFailures: [], late: [] }
}

function outcomeOf(s: Settlement, tool: string): ToolExecutionOutcome {
  const r = s.result
  const callId = s.view.callId ?? ''
  let status: ToolExecutionOutcome['status']
  switch (r.disposition()) {
    case 'success':
      status = 'succeeded'
      break
    case 'refused':
      status = 'denied'
      break
    case 'skipped':
      status = 'skipped'
      break
    case 'pending':
      status = 'pending'
      break
    default: {
      const kind = r.error()!.kind
      status = kind === 'timeout' ? 'timed_out' : kind === 'cancelled' ? 'cancelled' : kind === 'invalid_args' ? 'invalid' : 'failed'
    }
  }
  const e = r.error() ?? r.refusal()
  const outcome: Record<string, unknown> = { status, callId, tool, reported: s.reported !== undefined }
  if (e !== undefined) outcome.error = Object.freeze({ kind: e.kind, message: e.message })
  return Object.freeze(outcome) as unknown as ToolExecutionOutcome
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


/** Collects the views of one `callMany` batch and resolves once, when the last call settles. */
class BatchSink {
  readonly views: CallResult[]
  private remaining: number
  readonly promise: Promise<readonly CallResult[]>
  private resolve!: (views: readonly CallResult[]) => void

  constructor(size: number) {
    this.views = new Array<CallResult>(size)
    this.remaining = size
    this.promise = new Promise((resolve) => {
      this.resolve = resolve
    })
    if (size === 0) this.resolve(Object.freeze(this.views))
  }

  put(index: number, view: CallResult): void {
    this.views[index] = view
    if (--this.remaining === 0) this.resolve(Object.freeze(this.views))
  }
}

/** One call of a `callMany` batch: `args` is JSON text (as models send it) or `input` an object. */
export type BatchCall =
  | { readonly name: string; readonly args: string; readonly input?: undefined; readonly options?: CallOptions }
  | { readonly name: string; readonly input: unknown; readonly args?: undefined; readonly options?: CallOptions }

/** Unix milliseconds of a `performance.now()` reading. */
function wallClock(monotonic: number): number {
  return Math.round(performance.timeOrigin + monotonic)
}

/** One admitted call, from admission to its single settlement. */
class Call implements ToolContext {
  // Everything but the ToolContext members is #private: the body receives this object as
  // `ctx` (one allocation per call instead of two) and sees only its context.
  readonly callId: string
  readonly toolName: string
  #settled = false
  #controller: AbortController | undefined
  #timer: ReturnType<typeof setTimeout> | undefined
  #retryTimer: ReturnType<typeof setTimeout> | undefined
  #onAbort: (() => void) | undefined
  #resolve!: (value: CallResult | Settlement) => void
  readonly #startedAt = performance.now()
  #running = false
  #admittedByBreaker = false
  #attemptNo = 1
  /** What the body returned (helper `ok` unwrapped), for the raw contract. */
  #raw: unknown = undefined
  #ran = false
  #reported: string | undefined
  #callbackSettled = true
  #diagnostics: OutcomeDiagnostics | undefined
  #span: ReturnType<CallTracer['start']>
  readonly #tm: ToolManager
  readonly #entry: ToolEntry
  readonly #input: unknown
  readonly #options: CallOptions | undefined
  readonly #mode: 'view' | 'settlement'
  readonly #continuation: Continuation
  /** The sequence number of a generated call id; 0 for a caller-chosen id. */
  readonly #seq: number

  constructor(
    tm: ToolManager,
    entry: ToolEntry,
    callId: string,
    input: unknown,
    options: CallOptions | undefined,
    mode: 'view' | 'settlement',
    continuation: Continuation,
    seq = 0,
  ) {
    this.callId = callId
    this.toolName = entry.name
    this.#tm = tm
    this.#entry = entry
    this.#input = input
    this.#options = options
    this.#mode = mode
    this.#continuation = continuation
    this.#seq = seq
  }

  /** @internal */
  static seqOf(call: Call): number {
    return call.#seq
  }

  /** @internal Settles from outside the body (cancel, signal, timeout). */
  static interrupt(call: Call, result: ToolResult): void {
    call.#interrupt(result)
  }

  get signal(): AbortSignal {
    return this.#getSignal()
  }

  get attempt(): number {
    return this.#attemptNo
  }

  registerUndo(restore: () => unknown): void {
    if (typeof restore !== 'function') throw new TypeError('toolwire: registerUndo takes a function')
    this.#tm.registerUndo(this.callId, restore)
  }

  reportProgress(progress: number, total?: number, message?: string): void {
    if (this.#settled || !this.#tm.hasListeners('progress')) return
    const event: { -readonly [K in keyof ToolEvents['progress']]: ToolEvents['progress'][K] } = { callId: this.callId, tool: this.toolName, progress }
    if (total !== undefined) event.total = total
    if (message !== undefined) event.message = message
    this.#tm.emit('progress', event)
  }

  #getSignal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController()
      if (this.#settled) this.#controller.abort()
    }
    return this.#controller.signal
  }

  start(): Promise<CallResult | Settlement> {
    const promise = new Promise<CallResult | Settlement>((resolve) => {
      this.#resolve = resolve
    })
    this.#begin()
    return promise
  }

  /** Starts a call of a batch: its view lands in `sink` instead of a promise of its own. */
  startInto(sink: BatchSink, index: number): void {
    this.#resolve = (view) => sink.put(index, view as CallResult)
    this.#begin()
  }

  #begin(): void {
    const tm = this.#tm
    const entry = this.#entry
    const options = this.#options
    if (tm.hasListeners('call_start')) tm.emit('call_start', { callId: this.callId, tool: entry.name })
    if (tm.tracer !== undefined) this.#span = tm.tracer.start(entry.name, this.callId, entry.def.description, this.#input, entry.sensitive)
    tm.metricsBuffer.started(entry.metricsId)
    const signal = options?.signal
    if (signal !== undefined) {
      if (signal.aborted) {
        this.#finish(cancelledResult('signal'))
        return
      }
      this.#onAbort = () => this.#interrupt(cancelledResult('signal'))
      signal.addEventListener('abort', this.#onAbort, { once: true })
    }
    tm.track(this)
    const timeoutMs = options?.timeoutMs ?? entry.timeoutMs
    if (timeoutMs !== undefined) {
      this.#timer = setTimeout(
        () => this.#interrupt(ToolResult.failed(toolError('timeout', `The tool did not finish within ${timeoutMs} ms`))),
        timeoutMs,
      )
    }
    if (this.#continuation !== undefined) this.#admit()
    else if (entry.permissionHooks.length !== 0) this.#checkPermission()
    else this.#gate()
  }

  #checkPermission(): void {
    const hooks = this.#entry.permissionHooks
    const request = Object.freeze({ tool: this.#entry.name, input: this.#input, callId: this.callId })
    const step = (i: number): void => {
      if (this.#settled) return
      if (i === hooks.length) return this.#gate()
      let decision: PermissionDecision | Promise<PermissionDecision>
      try {
        decision = hooks[i]!(request)
      } catch (err) {
        return this.#denyOnError(err)
      }
      if (isThenable(decision)) {
        ;(decision as Promise<PermissionDecision>).then(
          (d) => (this.#applyDecision(d) ? step(i + 1) : undefined),
          (err) => this.#denyOnError(err),
        )
      } else if (this.#applyDecision(decision)) {
        step(i + 1)
      }
    }
    step(0)
  }

  #denyOnError(err: unknown): void {
    this.#tm.reportError(this.callId, this.#entry.name, err)
    this.#finish(ToolResult.failed(refusalError('permission_denied', 'The permission check failed')))
  }

  /** Returns true to allow; otherwise settles the call as refused. */
  #applyDecision(d: PermissionDecision): boolean {
    if (this.#settled) return false
    if (d === undefined || d === true) return true
    if (d === false) {
      this.#finish(ToolResult.failed(refusalError('permission_denied', 'Permission denied')))
      return false
    }
    if (isHelperResult(d)) {
      if (d.status === 'ok') return true
      this.#finish(d.status === 'refused' ? fromHelper(d) : ToolResult.failed(refusalError('permission_denied', 'Permission denied')))
      return false
    }
    const obj = d as { allow?: unknown; code?: unknown; message?: unknown }
    if (obj.allow === true) return true
    this.#finish(
      ToolResult.failed(
        refusalError(
          typeof obj.code === 'string' ? obj.code : 'permission_denied',
          typeof obj.message === 'string' ? obj.message : 'Permission denied',
        ),
      ),
    )
    return false
  }

  /** The confirmation gate (deferred mode). */
  #gate(): void {
    const rule = this.#entry.def.needsConfirmation
    if (rule === undefined || rule === false) return this.#admit()
    let needed: boolean | Promise<boolean>
    try {
      needed = rule === true ? true : (rule as (i: unknown, c: ToolContext) => boolean | Promise<boolean>)(this.#input, this)
    } catch (err) {
      return this.#fail(err)
    }
    if (isThenable(needed)) (needed as Promise<boolean>).then((n) => (n ? this.#askConfirmation() : this.#admit()), (err) => this.#fail(err))
    else if (needed) this.#askConfirmation()
    else this.#admit()
  }

  #askConfirmation(): void {
    if (this.#settled) return
    const def = this.#entry.def as ToolDefinition<unknown>
    let summary: string
    let changes: readonly FieldChange[] | Promise<readonly FieldChange[]> | undefined
    try {
      summary = def.summarize?.(this.#input) ?? `Run ${this.#entry.name} with ${JSON.stringify(redact(this.#input, this.#entry.sensitive))}`
      changes = def.previewChanges?.(this.#input)
    } catch (err) {
      return this.#fail(err)
    }
    const park = (list: readonly FieldChange[] | undefined): void => {
      if (this.#settled) return
      const confirmId = globalThis.crypto.randomUUID()
      let result: ToolResult
      try {
        result = ToolResult.pending(list === undefined ? { id: confirmId, kind: 'confirmation', summary } : { id: confirmId, kind: 'confirmation', summary, changes: list })
      } catch (err) {
        return this.#fail(err)
      }
      this.#tm.park(confirmId, 'confirmation', this.#entry, this.#input, this.callId)
      this.#finish(result)
    }
    if (isThenable(changes)) (changes as Promise<readonly FieldChange[]>).then(park, (err) => this.#fail(err))
    else park(changes as readonly FieldChange[] | undefined)
  }

  #admit(): void {
    if (this.#settled) return
    const entry = this.#entry
    if (entry.breaker !== undefined) {
      if (!entry.breaker.admit()) {
        this.#finish(ToolResult.failed(refusalError('circuit_open', `Tool "${entry.name}" is failing; its circuit breaker is open`)))
        return
      }
      this.#admittedByBreaker = true
    }
    if (entry.active < entry.limit) {
      entry.active++
      this.#running = true
      this.#runBody()
    } else if (entry.queue.length < entry.queueLimit) {
      entry.queue.push(this)
    } else {
      this.#finish(
        ToolResult.failed(refusalError('concurrency_limit', `Tool "${entry.name}" is at its concurrency limit and its queue is full`)),
      )
    }
  }

  /** Starts the body (first attempt or a retry). */
  #runBody(): void {
    this.#ran = true
    let ret: unknown
    try {
      const continuation = this.#continuation
      if (typeof continuation === 'function') {
        ret = continuation(this)
      } else if (this.#entry.outcome !== undefined) {
        ret = this.#runOutcomeCallback(this.#entry.outcome)
      } else {
        ret = (this.#entry.def.run as (input: unknown, ctx: ToolContext) => unknown)(this.#input, this)
      }
    } catch (err) {
      this.#fail(err)
      return
    }
    if (isThenable(ret)) {
      ret.then(
        (v) => this.#complete(v),
        (e) => this.#fail(e),
      )
    } else {
      this.#complete(ret)
    }
  }

  #runOutcomeCallback(callback: NonNullable<ToolEntry['outcome']>): unknown {
    const diagnostics = (this.#diagnostics ??= newDiagnostics())
    this.#callbackSettled = false
    const invocation: OutcomeInvocation = {
      context: this,
      reportFailure: (error: Error) => {
        if (this.#callbackSettled) return // inert once the callback settles
        if (!(error instanceof Error)) {
          diagnostics.configurationFailures.push(`reportFailure got ${error === null ? 'null' : typeof error}, not an Error`)
          return
        }
        const message = String(error.message) // captured when reported
        if (this.#settled) {
          diagnostics.late.push(Object.freeze({ message }))
          this.#tm.emit('late_report', { callId: this.callId, tool: this.#entry.name, message })
        } else if (this.#reported === undefined) {
          this.#reported = message
        }
      },
    }
    let ret: unknown
    try {
      ret = callback(this.#input as never, invocation)
    } catch (err) {
      this.#callbackSettled = true
      throw err
    }
    if (!isThenable(ret)) {
      this.#callbackSettled = true
      return ret
    }
    return (ret as Promise<unknown>).then(
      (v) => {
        this.#callbackSettled = true
        return v
      },
      (e) => {
        this.#callbackSettled = true
        throw e
      },
    )
  }

  #complete(value: unknown): void {
    if (this.#settled) return
    if (this.#reported === undefined && !isHelperResult(value) && !isModelResult(value) && !(value instanceof ToolResult)) {
      // the common case: a plain value, taken as ok(value)
      this.#raw = value
      let data: JsonValue
      try {
        data = toFrozenJson(value)
      } catch (err) {
        this.#tm.reportError(this.callId, this.#entry.name, err)
        const message = err instanceof NotJsonError ? 'The tool returned a value JSON cannot carry.' : TOOL_FAILED_MESSAGE
        return this.#settleAttempt(ToolResult.failed(toolError('other', message)))
      }
      if (this.#tm.development && this.#entry.validateOutput !== undefined) {
        const issues = this.#entry.validateOutput(data)
        if (issues !== undefined) this.#tm.emit('output_invalid', { callId: this.callId, tool: this.#entry.name, issues })
      }
      return this.#finish(undefined, data)
    }
    this.#raw = isHelperResult(value) && value.status === 'ok' ? value.data : value
    let result: ToolResult
    try {
      result = normalizeReturn(value, this.#entry.untrusted)
    } catch (err) {
      this.#tm.reportError(this.callId, this.#entry.name, err)
      const message = err instanceof NotJsonError ? 'The tool returned a value JSON cannot carry.' : TOOL_FAILED_MESSAGE
      result = ToolResult.failed(toolError('other', message))
      if (this.#reported !== undefined && this.#diagnostics !== undefined) this.#diagnostics.pipeline = (err as Error).message
    }
    if (this.#reported !== undefined && !result.isError()) {
      result = ToolResult.failed(toolError('other', this.#reported))
    }
    if (this.#tm.development && this.#entry.validateOutput !== undefined && result.isSuccess()) {
      const issues = this.#entry.validateOutput(result.data() ?? result.text())
      if (issues !== undefined) this.#tm.emit('output_invalid', { callId: this.callId, tool: this.#entry.name, issues })
    }
    this.#settleAttempt(result)
  }

  #fail(err: unknown): void {
    if (this.#settled) return
    this.#tm.reportError(this.callId, this.#entry.name, err)
    if (this.#reported !== undefined && this.#diagnostics !== undefined) {
      this.#diagnostics.pipeline = err instanceof Error ? err.message : String(err)
      return this.#settleAttempt(ToolResult.failed(toolError('other', this.#reported)))
    }
    const e = err as { kind?: unknown; retryable?: unknown }
    const kind = typeof e === 'object' && e !== null && isToolErrorKind(e.kind) ? e.kind : 'other'
    const options = typeof e === 'object' && e !== null && typeof e.retryable === 'boolean' ? { retryable: e.retryable } : {}
    this.#settleAttempt(ToolResult.failed(toolError(kind, kind === 'other' ? TOOL_FAILED_MESSAGE : `The tool failed (${kind}).`, options)))
  }

  /** Ends one attempt: retries a retryable error when allowed, else settles. */
  #settleAttempt(result: ToolResult): void {
    const retry = this.#entry.def.retry
    const error = result.error()
    if (retry !== undefined && error !== undefined && error.retryable && this.#reported === undefined && typeof this.#continuation !== 'function') {
      const attempts = retry.attempts ?? 3
      if (this.#attemptNo < attempts) {
        const base = retry.baseMs ?? 100
        const cap = retry.maxMs ?? 5000
        const delay = Math.random() * Math.min(cap, base * 2 ** (this.#attemptNo - 1))
        this.#retryTimer = setTimeout(() => {
          this.#retryTimer = undefined
          if (this.#settled) return
          this.#attemptNo++
          this.#runBody()
        }, delay)
        return
      }
    }
    this.#finish(result)
  }

  /** Settles from outside the body (cancel, signal, timeout) and aborts the tool's signal. */
  #interrupt(result: ToolResult): void {
    if (this.#settled) return
    this.#finish(result)
    this.#controller?.abort(result.isErrorKind('timeout') ? new DOMException('The call timed out', 'TimeoutError') : undefined)
  }

  /** Settles the call once: with `result`, or (no result) as a success with frozen `okData`. */
  #finish(settled: ToolResult | undefined, okData?: JsonValue): void {
    if (this.#settled) return
    this.#settled = true
    const tm = this.#tm
    const entry = this.#entry
    if (this.#timer !== undefined) clearTimeout(this.#timer)
    if (this.#retryTimer !== undefined) clearTimeout(this.#retryTimer)
    if (this.#onAbort !== undefined) this.#options!.signal!.removeEventListener('abort', this.#onAbort)
    tm.untrack(this)
    if (this.#running) {
      entry.active--
      this.#releaseSlot()
    } else {
      const i = entry.queue.indexOf(this)
      if (i >= 0) entry.queue.splice(i, 1)
    }
    if (this.#admittedByBreaker) {
      entry.breaker!.settle(settled !== undefined && settled.isError() && !settled.isErrorKind('cancelled') && !settled.isErrorKind('invalid_args'))
    }
    if (settled !== undefined && settled.isPending() && this.#ran) {
      tm.park(settled.pendingRequest()!.id, 'suspension', entry, this.#input, this.callId)
    }
    const view = settled === undefined ? okView(okData as JsonValue, this.callId, entry.untrusted) : viewOf(settled, this.callId)
    const durationMs = performance.now() - this.#startedAt
    if (settled === undefined) tm.metricsBuffer.succeeded(entry.metricsId, durationMs)
    else tm.metricsBuffer.settled(entry.metricsId, settled, durationMs)
    const evidence = tm.evidence
    if (this.#span === undefined && evidence === undefined && this.#mode === 'view' && !tm.hasListeners('call_end')) {
      this.#resolve(view)
      return
    }
    const result = settled ?? canonicalOf(view)!
    if (this.#span !== undefined) tm.tracer!.end(this.#span, result, entry.sensitive)
    if (evidence !== undefined && this.#ran) this.#writeEvidence(evidence, result)
    if (tm.hasListeners('call_end')) {
      const record = callRecord(this.callId, entry.name, result, wallClock(this.#startedAt), Date.now(), this.#attemptNo, tm.canUndo(this.callId))
      tm.emit('call_end', { callId: this.callId, tool: entry.name, status: view.status, statusName: result.statusName(), durationMs, result, view, record })
    }
    if (this.#mode === 'view') {
      this.#resolve(view)
    } else {
      this.#resolve({ view, result, raw: this.#raw, ran: this.#ran, reported: this.#reported, diagnostics: (this.#diagnostics ??= newDiagnostics()) })
    }
  }

  #writeEvidence(store: EvidenceStore, result: ToolResult): void {
    const fail = (error: unknown): void =>
      this.#tm.emit('evidence_error', { callId: this.callId, tool: this.#entry.name, message: error instanceof Error ? error.message : String(error), error })
    try {
      let raw: JsonValue | null = null
      try {
        raw = toFrozenJson(this.#raw)
      } catch {
        raw = null
      }
      const status = outcomeOf(
        { view: viewOf(result, this.callId), result, raw: this.#raw, ran: true, reported: this.#reported, diagnostics: newDiagnostics() },
        this.#entry.name,
      ).status
      const written = store.append({
        callId: this.callId,
        tool: this.#entry.name,
        input: redact(this.#input, this.#entry.sensitive),
        result: redact(raw, this.#entry.sensitive),
        status,
        startedAt: new Date(wallClock(this.#startedAt)).toISOString(),
        endedAt: new Date().toISOString(),
      })
      if (isThenable(written)) (written as Promise<void>).then(undefined, fail)
    } catch (err) {
      fail(err)
    }
  }

  #releaseSlot(): void {
    const entry = this.#entry
    while (entry.queue.length > 0 && entry.active < entry.limit) {
      const next = entry.queue.shift()!
      if (next.#settled) continue
      entry.active++
      next.#running = true
      next.#runBody()
    }
  }
}
