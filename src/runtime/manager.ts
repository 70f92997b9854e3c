/**
 * `ToolManager`: registers tools and dispatches calls. `call` and `callJson` never
 * throw or reject: every outcome is a frozen application view over one canonical
 * `ToolResult`.
 */
import { Call } from './call.js'
import type { BatchCall } from './batch.js'
import { badOptions, toolLabel } from './options.js'
import { outcomeOf, settleEarly } from './settlement.js'
import { REFUSALS } from '../core/texts.js'
import type { CallHost, ManagerState, ToolEntry, ToolEventName } from './types.js'
import type { EvidenceStore } from '../observe/evidence.js'
import { MetricsBuffer, type MetricsSnapshot } from '../observe/metrics.js'
import { cancelledResult } from './normalize.js'
import type { OutcomeDiagnostics, ToolExecutionOutcome } from './outcome.js'
import { refusalError, ToolResult } from '../core/result.js'
import { CallTracer, type TelemetryOptions } from '../observe/telemetry.js'
import type { AnswerOptions, CallOptions, PermissionHook, RegisterOptions, ToolDefinition, ToolManifestEntry } from './tool.js'
import { SchemaCompiler, type SchemaOptions } from '../core/validate.js'
import { Inflight } from './inflight.js'
import { Events, type Listener } from './events.js'
import { Admission } from './admission.js'
import { ParkedCalls } from './parked.js'
import { LocalUndos } from './undos.js'
import { callHostOf, durableHostOf } from './durable-host.js'
import { checkScopeList, readManagerOptions, Registry } from './registration.js'
import type { InputOf, ToolSchema } from '../core/schema-types.js'
import type { CallResult } from '../core/view.js'
import { Durable, finds, ownerOf, type RunAs } from './durable.js'
import { storeKeyList, type StoreKeys } from './store/codec.js'
import { approvalSecretList, type ApprovalSecrets } from './store/approval.js'
import type { ToolStore } from './store/types.js'
import { evidenceOf } from './store/evidence.js'
import { answererOf, approverOf, missingScopes, principalKey, type ImpliedScopes, type PrincipalRef } from '../core/principal.js'

export type * from './tool.js'
export type { ToolEventName, ToolEvents } from './types.js'
export type { BatchCall } from './batch.js'
export { TOOL_FAILED_MESSAGE } from './normalize.js'

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
  /**
   * A durable store (`toolwire/store`): confirmations, suspensions, undo payloads, the
   * idempotency ledger and (unless `evidence` is given) the evidence live in it, shared by
   * every manager on the same store. See docs/store.md.
   */
  readonly store?: ToolStore
  /**
   * AES-256 key (32 bytes, or their hex or base64 text) sealing parked inputs in the store, so that any instance can run them.
   * Or a list, newest first, to rotate keys: the first seals, any opens (docs/store.md, "Rotating secrets").
   */
  readonly storeKey?: StoreKeys
  /**
   * HMAC secret (at least 16 bytes): each `confirmId` is a signed token bound to its call; a forged one is refused `approval_invalid`.
   * Or a list, newest first, to rotate secrets: the first signs, any verifies.
   */
  readonly approvalSecret?: ApprovalSecrets
  /** With a store: how long a run may hold its claim or idempotency key before it counts as crashed (default 10 minutes). */
  readonly leaseMs?: number
  /** The scopes a caller's principal needs for a tool that declares none (default: none). See docs/auth.md. */
  readonly scopes?: readonly string[]
  /** Scopes that grant others (`{ 'files:admin': ['files:write'] }`), followed when checking a tool's scopes. */
  readonly impliedScopes?: ImpliedScopes
}

/** The decision given to `tm.confirm`. */
export interface ConfirmDecision extends AnswerOptions {
  /** `true` runs the call; `false` denies it. Anything else is refused and leaves the call parked. */
  readonly approve: boolean
  /** Who approved (recorded in the evidence and the `confirmation` event): a signed-in approver, given by your approval page. */
  readonly approvedBy?: PrincipalRef
}

/** Thrown by `tm.execute` (the raw contract) when the call did not succeed. */
export class ToolCallError extends Error {
  override name = 'ToolCallError'
  constructor(readonly result: CallResult) {
    super(`tool call ${result.status}${'message' in result ? `: ${result.message}` : ''}`)
  }
}

/**
 * Registers tools and dispatches the calls a model makes.
 *
 * @example
 * const tm = new ToolManager()
 * tm.register({ name: 'echo', inputSchema: { type: 'object' }, run: (input) => input })
 * const result = await tm.callJson('echo', '{"text":"hi"}') // { status: 'ok', data: { text: 'hi' }, callId }
 */
export class ToolManager {
  /** The registered tools (registration.ts). */
  private readonly registry: Registry
  private readonly tools: Map<string, ToolEntry>
  /** The calls in flight and the call ids (inflight.ts). */
  private readonly inflight = new Inflight()
  /** The calls parked in this process (parked.ts). */
  private readonly parked: ParkedCalls
  /** The undos registered in this process (undos.ts). */
  private readonly undos: LocalUndos
  /** The event listeners (events.ts). */
  private readonly events = new Events()
  private readonly compiler: SchemaCompiler
  private readonly tracer: CallTracer | undefined
  private readonly evidence: EvidenceStore | undefined
  private readonly metricsBuffer = new MetricsBuffer()
  /** The durable store's side of the manager (durable.ts); `undefined` without a store. */
  private readonly durable: Durable | undefined
  /** What this manager's calls see of it. */
  private readonly host: CallHost
  /** What the manager's modules share of it. */
  private readonly state: ManagerState
  /** Where calls enter (admission.ts). */
  private readonly admission: Admission
  /** A frozen copy of the manager's `impliedScopes`. */
  private readonly impliedScopes: ImpliedScopes | undefined

  constructor(given: ToolManagerOptions = {}) {
    const options = readManagerOptions(given)
    const defaultScopes = options.scopes === undefined ? Object.freeze([]) : checkScopeList(options.scopes, 'scopes')
    this.impliedScopes =
      options.impliedScopes === undefined ? undefined : Object.freeze(Object.fromEntries(Object.entries(options.impliedScopes).map(([scope, grants]) => [scope, Object.freeze([...grants])])))
    this.compiler = new SchemaCompiler(options)
    const development = options.development ?? process.env.NODE_ENV !== 'production'
    this.tracer = CallTracer.create(options.telemetry)
    const store = options.store
    // checked with or without a store (Durable checks them with one): a bad value is a TypeError either way
    if (store === undefined) {
      if (options.storeKey !== undefined) storeKeyList(options.storeKey)
      if (options.approvalSecret !== undefined) approvalSecretList(options.approvalSecret)
    }
    this.evidence = options.evidence ?? (store === undefined ? undefined : evidenceOf(store))
    this.registry = new Registry({
      options,
      compiler: this.compiler,
      defaultScopes,
      development,
      tracer: this.tracer,
      evidence: this.evidence !== undefined,
      store: store !== undefined,
      metrics: this.metricsBuffer,
      events: this.events,
    })
    this.tools = this.registry.tools
    this.state = {
      tools: this.tools,
      events: this.events,
      tracer: this.tracer,
      metrics: this.metricsBuffer,
      nextCallId: () => this.inflight.nextCallId(),
      hasUndo: (callId) => this.undos.has(callId),
    }
    this.parked = new ParkedCalls({ state: this.state, options, compiler: this.compiler, host: () => this.host, durable: () => this.durable })
    this.undos = new LocalUndos({ state: this.state, options, inflight: this.inflight, durable: () => this.durable })
    this.durable =
      store === undefined
        ? undefined
        : new Durable({ store, storeKey: options.storeKey, approvalSecret: options.approvalSecret, leaseMs: options.leaseMs }, durableHostOf(this.state, this.parked, this.undos, this.evidence))
    // runs a crash left unknown (lease run out) are reported once, on the next turn: listeners attached now see them
    this.durable?.ledger.sweepSoon()
    this.host = callHostOf({
      state: this.state,
      impliedScopes: this.impliedScopes,
      tracerReady: (now) => this.registry.tracerReady(now),
      evidence: this.evidence,
      awaitEvidence: store !== undefined && options.evidence === undefined,
      inflight: this.inflight,
      parked: this.parked,
      undos: this.undos,
      durable: this.durable,
    })
    this.admission = new Admission({
      state: this.state,
      inflight: this.inflight,
      host: this.host,
      compiler: this.compiler,
      store: this.durable !== undefined,
      storePrincipals: this.durable?.principals === true,
    })
  }

  /**
   * The most values an input may hold (`new ToolManager({ maxInputValues })`, default
   * 100,000). The MCP transports refuse a frame over it (plus the envelope) unparsed.
   */
  get maxInputValues(): number {
    return this.compiler.maxInputValues
  }

  /**
   * Registers a tool. A duplicate name throws unless `{ replace: true }`; a replacement
   * affects only calls admitted after it.
   * @throws TypeError for a malformed definition; SchemaError for a schema that does not compile.
   */
  register<S extends ToolSchema = ToolSchema, I = InputOf<S>>(tool: ToolDefinition<I, S>, options: RegisterOptions = {}): this {
    this.registry.register(tool as unknown as ToolDefinition<never>, options)
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
    if (this.events.on(event, listener)) this.registry.recompose()
    return this
  }

  /** Unsubscribes a listener added with `on`. */
  off<E extends ToolEventName>(event: E, listener: Listener<E>): this {
    if (this.events.off(event, listener)) this.registry.recompose()
    return this
  }

  /**
   * Runs the calls a model made in one turn, in parallel, and resolves once with their
   * views in order. Each call behaves exactly as `call`/`callJson`; never rejects.
   */
  callMany(calls: readonly BatchCall[]): Promise<readonly CallResult[]> {
    return this.admission.callMany(calls)
  }

  /**
   * Calls a tool with the arguments as JSON text, as models send them. Never throws or rejects.
   */
  callJson(name: string, argsText: string, options?: CallOptions): Promise<CallResult> {
    return this.admission.callJson(name, argsText, options)
  }

  /**
   * Calls a tool. Resolves to a frozen application view; never throws or rejects. A name
   * that is not a string is refused `unknown_tool`; options that throw or are malformed are
   * refused `invalid_options`.
   */
  call(name: string, input: unknown, options?: CallOptions): Promise<CallResult> {
    return this.admission.call(name, input, options, -1)
  }

  /**
   * Cancels an in-flight call: as the operator, or with `{ principal }` a call that principal made
   * (or one made without a principal; another principal's call answers `false`, as an unknown id).
   * Returns whether a call was stopped. Only the exact call id matches.
   */
  /**
   * @internal An integration's `tm.cancel` of a call its framework's signal aborted (an
   * approved run, which `tm.confirm` started without the signal): cancelled `by: 'signal'`.
   */
  cancelBySignal(callId: string): boolean {
    const call = this.inflight.find(callId)
    if (call === undefined) return false
    Call.interrupt(call, cancelledResult('signal'))
    return true
  }

  cancel(callId: string, options?: AnswerOptions): boolean {
    const asker = answererOf(options)
    if (typeof asker === 'string') return false
    const owner = ownerOf(asker)
    const call = this.inflight.find(callId)
    if (call === undefined) {
      const waiting = typeof callId === 'string' ? this.inflight.validating.get(callId) : undefined
      if (waiting === undefined || !finds(owner, waiting.owner)) return false
      waiting.cut(cancelledResult('operator'))
      return true
    }
    if (!finds(owner, ownerOf(call.principal))) return false
    Call.interrupt(call, cancelledResult('operator'))
    return true
  }

  /**
   * Approves or denies a call waiting for confirmation. Runs the tool on approval;
   * the outcome also arrives as a `confirmation` event. With `decision.principal`, only a call
   * that principal made (or one made without a principal) is found: another's answers as an
   * unknown id. The run is the caller's: it keeps the principal of the call. Never rejects.
   */
  confirm(confirmId: string, decision: ConfirmDecision): Promise<CallResult> {
    let approve: unknown
    let by: RunAs
    try {
      approve = decision?.approve
      const principal = answererOf(decision)
      if (typeof principal === 'string') return settleEarly(this.state, 'unknown', undefined, badOptions(principal))
      const approvedBy = approverOf(decision)
      if (typeof approvedBy === 'string') return settleEarly(this.state, 'unknown', undefined, badOptions(approvedBy))
      // a principal answers for itself: it cannot record someone else as the approver
      if (principal !== undefined && approvedBy !== undefined && principalKey(approvedBy) !== principalKey(principal)) {
        return settleEarly(this.state, 'unknown', undefined, badOptions('approvedBy must name the answering principal (or be left out) when a principal answers'))
      }
      by = { principal, approvedBy }
    } catch (err) {
      // a decision that cannot be read answers nothing: the confirmation stays open
      return settleEarly(this.state, 'unknown', undefined, ToolResult.failed(refusalError(REFUSALS.invalidDecision.code, REFUSALS.invalidDecision.message)), err)
    }
    // only `true` approves and only `false` denies: a missing or other decision (`tm.confirm(id)`,
    // `{ approve: 'yes' }`) answers nothing, and the confirmation stays open
    if (typeof approve !== 'boolean') {
      return settleEarly(this.state, 'unknown', undefined, ToolResult.failed(refusalError(REFUSALS.invalidDecision.code, REFUSALS.invalidDecision.message)))
    }
    // through the store: a claim (compare-and-swap) decides the one run, whichever manager answers
    const durable = this.durable
    if (durable === undefined) return this.parked.confirm(confirmId, approve, by)
    // a call the store failed to park is answered here, by the manager that parked it, from its copy
    const id = this.heldHereOnly(confirmId)
    if (id === undefined) return durable.parking.confirm(confirmId, approve, undefined, by)
    return durable.parking.answeredElsewhere(id).then((elsewhere) => (elsewhere ? durable.parking.confirm(confirmId, approve, undefined, by) : this.parked.confirm(id, approve, by)))
  }

  /** The id of the call `confirmId` names when this manager holds it only in its own copy (its store failed to park it). */
  private heldHereOnly(confirmId: string): string | undefined {
    const id = this.parked.heldHereOnly(confirmId) ? confirmId : this.durable?.parking.idOfHandle(confirmId)
    return id !== undefined && this.parked.heldHereOnly(id) ? id : undefined
  }

  /** @internal Whether the manager has a store (`new ToolManager({ store })`). */
  get durableStore(): boolean {
    return this.durable !== undefined
  }

  /**
   * @internal Approves a confirmation through the store, its run recorded in the ledger under
   * `idempotencyKey` when the call has no key of its own (a framework's approval, keyed by its
   * approval id: a replay on any manager on the store answers the recorded result). Needs a store.
   * `options.principal`: the answerer, as for {@link confirm}.
   */
  approveKeyed(confirmId: string, idempotencyKey: string, options?: AnswerOptions): Promise<CallResult> {
    const principal = answererOf(options)
    if (typeof principal === 'string') return settleEarly(this.state, 'unknown', undefined, badOptions(principal))
    if (this.durable === undefined || this.heldHereOnly(confirmId) !== undefined) return this.confirm(confirmId, { approve: true, principal })
    return this.durable.parking.confirm(confirmId, true, idempotencyKey, { principal })
  }

  /**
   * Continues a suspended call with `answer`: the tool's `resume` handler gets it. With
   * `options.principal`, only a call that principal made (or one made without a principal) is
   * found: another's answers as an unknown id. Never rejects.
   */
  resume(requestId: string, answer: unknown, options?: AnswerOptions): Promise<CallResult> {
    const principal = answererOf(options)
    if (typeof principal === 'string') return settleEarly(this.state, 'unknown', undefined, badOptions(principal))
    const durable = this.durable
    if (durable === undefined) return this.parked.resumeAs(requestId, answer, { principal })
    // a call the store failed to park is answered here, by the manager that parked it, from its copy
    if (typeof requestId !== 'string' || !this.parked.heldHereOnly(requestId)) return durable.parking.resume(requestId, answer, principal)
    return durable.parking.answeredElsewhere(requestId).then((elsewhere) =>
      elsewhere ? durable.parking.resume(requestId, answer, principal) : this.parked.resumeAs(requestId, answer, { principal }),
    )
  }

  /**
   * With a store: marks the runs whose lease ran out (their process stopped mid-run) as
   * outcome unknown, and reports each once, across every manager on the store: a `call_end`
   * with an `other` error coded `outcome_unknown`, and an evidence record. A manager sweeps
   * when it is made; call this periodically (or after a restart) to sweep again.
   * Rejects with a `StoreUnavailableError` (`code: 'store_unavailable'`, also an `error` event)
   * when the store fails: an empty answer always means that nothing was found.
   */
  /**
   * Runs the undo a call registered, exactly once. Otherwise refused `undo_unavailable`. Never rejects.
   * An undo whose run fails (its view is not `ok`) stays registered: `tm.undo` may try it again.
   * With `options.principal`, only the undo of a call that principal made (or of one made without a
   * principal) is found: another's is refused as for an unknown call id.
   */
  undo(callId: string, options?: AnswerOptions): Promise<CallResult> {
    return this.undos.undo(callId, options)
  }

  /**
   * Whether `tm.undo(callId)` would run something now, asked of the store when there is one:
   * the call's undo is in it (registered by any manager on the store, before or after a
   * restart, and not taken since; still there after a failed undo) and this manager has its
   * tool's `undo`. Without a store, or with a store of the app's own that has no `getUndo`, the
   * answer is {@link canUndo}'s. Rejects with a `StoreUnavailableError` when the store fails
   * (also an `error` event): `false` always means there is nothing to undo here.
   */
  undoable(callId: string, options?: AnswerOptions): Promise<boolean> {
    return this.undos.undoable(callId, options)
  }

  /**
   * Whether `tm.undo(callId)` would run something, as far as this process knows: an undo
   * registered here (a closure, or a payload without a store), or a payload this process wrote
   * to the store and has not seen taken. With a store it can be wrong both ways: an undo written
   * by another manager (or before a restart) is not known here, and one that another manager
   * took still answers `true`. Ask {@link undoable} for the store's answer.
   */
  canUndo(callId: string, options?: AnswerOptions): boolean {
    return this.undos.canUndo(callId, options)
  }

  async recover(): Promise<readonly { readonly tool: string; readonly callId: string }[]> {
    return this.durable === undefined ? [] : this.durable.ledger.recover()
  }

  /**
   * Raw execution: runs the tool through the same pipeline and returns what its body
   * returned. Throws `ToolCallError` (carrying the application view) when it did not succeed.
   */
  async execute(name: string, args: unknown, options?: CallOptions): Promise<unknown> {
    const s = await this.admission.settle(name, args, options)
    if (s.view.status !== 'ok') throw new ToolCallError(s.view)
    return s.raw
  }

  /** Runs a tool and returns its raw result with the frozen semantic outcome. Never rejects. */
  async executeWithOutcome(
    name: string,
    args: unknown,
    options?: CallOptions,
  ): Promise<{ readonly result: unknown; readonly outcome: ToolExecutionOutcome; readonly diagnostics: OutcomeDiagnostics }> {
    const s = await this.admission.settle(name, args, options)
    return { result: s.raw, outcome: outcomeOf(s, toolLabel(name)), diagnostics: s.diagnostics }
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

  /**
   * @internal The scopes of `scopes` a caller lacks for tool `name` (`[]`: none; `impliedScopes`
   * followed), or `undefined` for a tool not registered. The MCP layer asks it for its 403
   * step-up and to filter `tools/list`.
   */
  scopesMissing(name: string, scopes: readonly string[]): readonly string[] | undefined {
    const entry = this.tools.get(name)
    return entry === undefined ? undefined : missingScopes(scopes, entry.scopes, this.impliedScopes)
  }

  /** The tools with their schemas and hints, JSON-serializable: the MCP / WebMCP / bridge description. */
  manifest(): readonly ToolManifestEntry[] {
    return [...this.tools.values()].map(({ def, scopes }) => {
      const item: Record<string, unknown> = { name: def.name }
      if (def.description !== undefined) item.description = def.description
      item.inputSchema = def.inputSchema
      if (def.outputSchema !== undefined) item.outputSchema = def.outputSchema
      item.hints = { ...def.hints }
      if (def.needsConfirmation !== undefined && def.needsConfirmation !== false) item.needsConfirmation = true
      if (def.longRunning !== undefined) item.longRunning = def.longRunning === true ? true : { afterMs: def.longRunning.afterMs }
      if (def.confirmVia !== undefined) item.confirmVia = def.confirmVia
      if (scopes.length !== 0) item.scopes = scopes
      return item as unknown as ToolManifestEntry
    })
  }

}
