/**
 * `ToolManager`: registers tools and dispatches calls. `call` and `callJson` never
 * throw or reject: every outcome is a frozen application view over one canonical
 * `ToolResult`.
 */
import { Call, CONTINUE_CONFIRMED } from './call.js'
import type { BatchCall } from './batch.js'
import { badOptions, toolLabel } from './options.js'
import { outcomeOf, settleEarly } from './settlement.js'
import {
  alreadyAnsweredText,
  expiredText,
  noPendingText,
  REFUSALS,
  resumeUnavailableText,
  UNDO_FAILED_MESSAGE,
} from '../core/texts.js'
import type { CallHost, ContinuedOptions, ManagerState, ParkKind, SuspensionExtras, ToolEntry, ToolEventName } from './types.js'
import type { EvidenceStore } from '../observe/evidence.js'
import { MetricsBuffer, type MetricsSnapshot } from '../observe/metrics.js'
import { cancelledResult, describeThrown, invalidAnswerError, normalizeReturn } from './normalize.js'
import type { OutcomeDiagnostics, ToolExecutionOutcome } from './outcome.js'
import { callRecord } from '../observe/record.js'
import { refusalError, toolError, ToolResult } from '../core/result.js'
import { CallTracer, type TelemetryOptions } from '../observe/telemetry.js'
import type { AnswerOptions, CallOptions, PermissionHook, RegisterOptions, ToolContext, ToolDefinition, ToolManifestEntry, UndoContext } from './tool.js'
import type { JsonValue, PendingSchema } from '../core/types.js'
import { sensitiveKeys } from '../core/redact.js'
import { SchemaCompiler, SchemaError, type Issue, type SchemaOptions } from '../core/validate.js'
import { Inflight } from './inflight.js'
import { Events, type Listener } from './events.js'
import { Admission } from './admission.js'
import { checkManagerOptions, checkScopeList, Registry } from './registration.js'
import type { InputOf, ToolSchema } from '../core/schema-types.js'
import { viewOf, type CallResult } from '../core/view.js'
import { confirmationEvent, Durable, finds, ownerOf, undoContext, type DurableHost, type RunAs } from './durable.js'
import { storeKeyList, type StoreKeys } from './store/codec.js'
import { approvalSecretList, type ApprovalSecrets } from './store/approval.js'
import { randomId } from '../core/ids.js'
import { StoreUnavailableError, type ToolStore } from './store/types.js'
import { evidenceOf } from './store/evidence.js'
import { answererOf, approverOf, missingScopes, principalKey, type ImpliedScopes, type Principal, type PrincipalRef } from './principal.js'

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

/** A parked call: a confirmation or a suspension, continued later. */
interface Parked {
  readonly kind: ParkKind
  readonly entry: ToolEntry
  readonly input: unknown
  readonly callId: string
  /** The original call's own timeout (and idempotency key, trace context, principal), which the continued run keeps. */
  readonly options: CallOptions | undefined
  readonly expiresAt: number
  used: boolean
  /** A suspension's pending request schema: the answer must match it. */
  readonly schema?: PendingSchema
  /** A suspension whose pending request asks for a confirmation: `tm.confirm` answers it through `resume`. */
  readonly confirmation?: true
  /** What the body kept for its `resume` (opaque). */
  readonly resumeState?: JsonValue
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
  private readonly parked = new Map<string, Parked>()
  /**
   * Closure undos by call id, with the name of the tool whose call registered them (for the undo's
   * `call_end`) and their owner (the key of the call's principal; `null` for none). `restore` gets the undoer.
   */
  private readonly undos = new Map<string, { readonly tool: string; readonly restore: (undoer: Principal | undefined) => unknown; readonly owner: string | null }>()
  /** The event listeners (events.ts). */
  private readonly events = new Events()
  private readonly compiler: SchemaCompiler
  private readonly tracer: CallTracer | undefined
  private readonly evidence: EvidenceStore | undefined
  private readonly metricsBuffer = new MetricsBuffer()
  private readonly options: ToolManagerOptions
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

  constructor(options: ToolManagerOptions = {}) {
    checkManagerOptions(options)
    this.options = options
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
    this.durable =
      store === undefined
        ? undefined
        : new Durable({ store, storeKey: options.storeKey, approvalSecret: options.approvalSecret, leaseMs: options.leaseMs }, this.makeDurableHost())
    // runs a crash left unknown (lease run out) are reported once, on the next turn: listeners attached now see them
    this.durable?.ledger.sweepSoon()
    this.host = {
      metrics: this.metricsBuffer,
      impliedScopes: this.impliedScopes,
      tracer: this.tracer,
      tracerReady: (now) => this.registry.tracerReady(now),
      evidence: this.evidence,
      awaitEvidence: store !== undefined && options.evidence === undefined,
      hasListeners: (event) => this.events.has(event),
      emit: (event, payload) => this.events.emit(event, payload),
      reportError: (callId, tool, error) => this.events.reportError(callId, tool, error),
      registerUndo: (callId, restore, principal) => this.registerUndo(callId, () => restore(), undefined, ownerOf(principal) ?? null),
      registerUndoPayload: (callId, entry, payload, principal) => this.registerUndoPayload(callId, entry, payload, principal),
      canUndo: (callId) => this.canUndo(callId),
      newConfirmation: (entry, input, callId) => {
        if (this.durable !== undefined) return this.durable.parking.newConfirmation(entry, input, callId)
        const id = randomId()
        return { id, handle: id }
      },
      park: (id, kind, entry, input, callId, options, extras) => this.park(id, kind, entry, input, callId, options, extras),
      unpark: (id, callId) => this.unpark(id, callId),
      ledgerBegin: (entry, callId, input, key, principal) => this.durable!.ledger.begin(entry, callId, input, key, principal),
      ledgerSettle: (ticket, result, callId, tool) => this.durable!.ledger.settle(ticket, result, callId, tool),
      ledgerRelease: (ticket, callId, tool) => this.durable!.ledger.release(ticket, callId, tool),
      track: (call) => this.inflight.track(call as Call),
      untrack: (call) => this.inflight.untrack(call as Call),
    }
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
    if (this.durable !== undefined) return this.durable.parking.confirm(confirmId, approve, undefined, by)
    const parked = this.parkedFor(confirmId, by.principal)
    // a confirmation a tool body asked for (`pending({ kind: 'confirmation' })`): its resume gets the decision
    if (parked?.kind === 'suspension' && parked.confirmation === true) {
      // only an answer that reaches the call is a `confirmation` event (as for a gate's confirmation)
      const answerable = !parked.used && Date.now() <= parked.expiresAt
      return this.resumeAs(confirmId, { approve }, by).then((view) => {
        if (answerable) this.events.emit('confirmation', confirmationEvent(confirmId, { callId: parked.callId, tool: parked.entry.name, principal: parked.options?.principal }, approve, view, by.approvedBy))
        return view
      })
    }
    const refusal = this.checkParked(parked, 'confirmation')
    // a refusal of a known parked call (used, expired) carries its tool and call id; one for an id of another kind names none
    if (refusal !== undefined) return this.refuseParked(parked, 'confirmation', refusal)
    const p = parked!
    p.used = true
    const outcome = approve
      ? this.continueParked('confirmation', p.entry, p.callId, p.input, continued(p.options, by.approvedBy), undefined)
      : settleEarly(this.state, p.entry.name, { callId: p.callId }, ToolResult.failed(refusalError(REFUSALS.confirmationDenied.code, REFUSALS.confirmationDenied.message)))
    return outcome.then((view) => {
      this.events.emit('confirmation', confirmationEvent(confirmId, { callId: p.callId, tool: p.entry.name, principal: p.options?.principal }, approve, view, by.approvedBy))
      return view
    })
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
    if (this.durable === undefined) return this.confirm(confirmId, { approve: true, principal })
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
    if (this.durable !== undefined) return this.durable.parking.resume(requestId, answer, principal)
    return this.resumeAs(requestId, answer, { principal })
  }

  /** `resume` here (no store) by `by.principal`; a body's confirmation keeps `by.approvedBy` for its run. */
  private resumeAs(requestId: string, answer: unknown, by: RunAs): Promise<CallResult> {
    const parked = this.parkedFor(requestId, by.principal)
    const refusal = this.checkParked(parked, 'suspension')
    if (refusal !== undefined) return this.refuseParked(parked, 'suspension', refusal)
    const p = parked!
    // an answer that does not match the request's schema does not use the call up: it can be answered again
    const mismatch = this.checkAnswer(p.schema, answer)
    if (mismatch !== undefined) return settleEarly(this.state, p.entry.name, { callId: p.callId }, mismatch)
    p.used = true
    return this.continueParked('suspension', p.entry, p.callId, p.input, continued(p.options, by.approvedBy), answer, p.resumeState)
  }

  /**
   * The `invalid_args` error (code `invalid_answer`, the issues in `details.issues`) of an answer
   * that does not match a suspension's pending request `schema`, or of a schema that cannot
   * check it; `undefined` when it matches or there is no schema.
   */
  private checkAnswer(schema: PendingSchema | undefined, answer: unknown): ToolResult | undefined {
    if (schema === undefined) return undefined
    let issues: readonly Issue[] | undefined
    try {
      issues = this.compiler.checkOnce(schema, 'the pending request schema', answer)
    } catch (err) {
      issues = [{ path: '', message: err instanceof SchemaError ? err.message : 'the pending request schema cannot check an answer' }]
    }
    return issues === undefined ? undefined : ToolResult.failed(invalidAnswerError(issues))
  }

  /** Runs a parked call once answered: a confirmation through the gates after confirmation, a suspension through the tool's `resume` with `answer`. */
  private continueParked(kind: ParkKind, entry: ToolEntry, callId: string, input: unknown, options: CallOptions | undefined, answer: unknown, resumeState?: JsonValue): Promise<CallResult> {
    if (kind === 'confirmation') return new Call(this.host, entry, callId, input, options, 'view', CONTINUE_CONFIRMED).start() as Promise<CallResult>
    const handler = entry.def.resume
    if (typeof handler !== 'function') {
      return settleEarly(this.state, entry.name, { callId }, ToolResult.failed(refusalError('resume_unavailable', resumeUnavailableText(entry.name))))
    }
    const continuation = (ctx: ToolContext): unknown => (handler as (a: unknown, i: unknown, c: ToolContext) => unknown)(answer, input, ctx)
    return Call.resumedWith(new Call(this.host, entry, callId, input, options, 'view', continuation), resumeState).start() as Promise<CallResult>
  }

  /** The call parked here under `id` that `principal` finds (the operator, when absent, finds any): another principal's is not there. */
  private parkedFor(id: string, principal: Principal | undefined): Parked | undefined {
    const parked = this.parked.get(id)
    return parked === undefined || finds(ownerOf(principal), ownerOf(parked.options?.principal)) ? parked : undefined
  }

  /** The view of a refused answer: it names the parked call only when the id is one of its kind (the refusal is about that call). */
  private refuseParked(parked: Parked | undefined, kind: 'confirmation' | 'suspension', refusal: ToolResult): Promise<CallResult> {
    const about = parked !== undefined && parked.kind === kind ? parked : undefined
    return settleEarly(this.state, about?.entry.name ?? 'unknown', about && { callId: about.callId }, refusal)
  }

  private checkParked(parked: Parked | undefined, kind: 'confirmation' | 'suspension'): ToolResult | undefined {
    this.sweepParked()
    const what = kind === 'confirmation' ? 'confirmation' : 'request'
    if (parked === undefined || parked.kind !== kind) {
      return ToolResult.failed(refusalError(kind === 'confirmation' ? 'confirmation_unknown' : 'unknown_request', noPendingText(what)))
    }
    if (parked.used) {
      return ToolResult.failed(refusalError(kind === 'confirmation' ? 'confirmation_used' : 'request_used', alreadyAnsweredText(what)))
    }
    if (Date.now() > parked.expiresAt) {
      parked.used = true
      return ToolResult.failed(refusalError(kind === 'confirmation' ? 'confirmation_expired' : 'request_expired', expiredText(what)))
    }
    return undefined
  }

  /**
   * Parks a call under `id` until confirmed or resumed; with a store, resolves once the store
   * holds it. `false` (nothing parked) when a suspension's request id is held: here by a parked
   * call not yet answered nor expired, or in the store by a row of that id (until pruned).
   */
  private park(id: string, kind: ParkKind, entry: ToolEntry, input: unknown, callId: string, callOptions: CallOptions | undefined, extras: SuspensionExtras = {}): boolean | Promise<boolean> {
    this.sweepParked()
    const held = this.parked.get(id)
    if (held !== undefined && !held.used && Date.now() <= held.expiresAt) return false
    const ttl = this.options.confirmTtlMs ?? 10 * 60_000
    // what the confirmed or resumed run keeps of the call's options: its timeout, its idempotency key,
    // its principal (the run is the caller's) and (in this process only, not in the store) its trace context
    const { timeoutMs, idempotencyKey, traceContext, principal } = callOptions ?? {}
    const options = keptOptions(timeoutMs, idempotencyKey, traceContext, principal)
    const expiresAt = Date.now() + ttl
    // the real input stays in this process too: without a storeKey, a call with sensitive input runs only here
    const parked: Parked = { kind, entry, input, callId, options, expiresAt, used: false, ...extras }
    this.parked.set(id, parked)
    if (this.durable === undefined) return true
    // the store dates the expiry on its own clock, the one its claims compare with
    return this.durable.parking.park(id, kind, entry, input, callId, timeoutMs, ttl, idempotencyKey, extras, principal).then((ok) => {
      // another instance's call holds the id: this one's local copy must not answer for it
      if (!ok && this.parked.get(id) === parked) this.parked.delete(id)
      return ok
    })
  }

  /** Withdraws a call parked under `id` (its call settled otherwise meanwhile): here, and denied in the store. */
  private unpark(id: string, callId: string): void {
    const held = this.parked.get(id)
    if (held === undefined || held.callId !== callId) return
    this.parked.delete(id)
    this.durable?.parking.withdraw(id, callId, held.entry.name)
  }

  /** What the durable layer uses of this manager. */
  private makeDurableHost(): DurableHost {
    return {
      local: (id) => {
        const p = this.parked.get(id)
        return p === undefined
          ? undefined
          : {
              kind: p.kind,
              tool: p.entry.name,
              callId: p.callId,
              input: p.input,
              timeoutMs: p.options?.timeoutMs,
              idempotencyKey: p.options?.idempotencyKey,
              schema: p.schema,
              confirmation: p.confirmation,
              resumeState: p.resumeState,
              traceContext: p.options?.traceContext,
              principal: p.options?.principal,
            }
      },
      forget: (id) => {
        this.parked.delete(id)
      },
      tool: (name) => this.tools.get(name),
      checkAnswer: (schema, answer) => this.checkAnswer(schema, answer),
      run: (kind, tool, callId, input, timeoutMs, answer, idempotencyKey, traceContext, resumeState, as) => {
        const options = continued(keptOptions(timeoutMs, idempotencyKey, traceContext, as?.principal), as?.approvedBy)
        return this.continueParked(kind, this.tools.get(tool)!, callId, input, options, answer, resumeState)
      },
      early: (tool, callId, result) => settleEarly(this.state, tool, callId === undefined ? undefined : { callId }, result),
      runUndo: (callId, tool, restore, after) => this.runUndo(callId, tool, restore, after),
      reportError: (callId, tool, error) => this.events.reportError(callId, tool, error),
      emit: (event, payload) => this.events.emit(event, payload),
      evidence: this.evidence,
    }
  }

  /**
   * With a store: marks the runs whose lease ran out (their process stopped mid-run) as
   * outcome unknown, and reports each once, across every manager on the store: a `call_end`
   * with an `other` error coded `outcome_unknown`, and an evidence record. A manager sweeps
   * when it is made; call this periodically (or after a restart) to sweep again.
   * Rejects with a `StoreUnavailableError` (`code: 'store_unavailable'`, also an `error` event)
   * when the store fails: an empty answer always means that nothing was found.
   */
  async recover(): Promise<readonly { readonly tool: string; readonly callId: string }[]> {
    return this.durable === undefined ? [] : this.durable.ledger.recover()
  }

  private sweepParked(): void {
    if (this.parked.size < 64) return
    const now = Date.now()
    for (const [id, p] of this.parked) if (now > p.expiresAt) this.parked.delete(id)
  }

  /**
   * Runs the undo a call registered, exactly once. Otherwise refused `undo_unavailable`. Never rejects.
   * An undo whose run fails (its view is not `ok`) stays registered: `tm.undo` may try it again.
   * With `options.principal`, only the undo of a call that principal made (or of one made without a
   * principal) is found: another's is refused as for an unknown call id.
   */
  undo(callId: string, options?: AnswerOptions): Promise<CallResult> {
    const tool = 'undo'
    const principal = answererOf(options)
    if (typeof principal === 'string') return settleEarly(this.state, tool, undefined, badOptions(principal))
    const registered = this.undoFor(callId, principal)
    // through the store: exactly one manager on it takes the undo
    if (registered === undefined && this.durable !== undefined) return this.durable.undos.undo(callId, principal)
    if (registered === undefined) {
      return settleEarly(this.state, tool, undefined, ToolResult.failed(refusalError(REFUSALS.undoUnavailable.code, REFUSALS.undoUnavailable.message)))
    }
    // taken while it runs: a concurrent tm.undo of the call is refused
    this.undos.delete(callId)
    return this.runUndo(callId, registered.tool, () => registered.restore(principal), (ok) => {
      // a failed undo is put back, unless the call id was given another undo meanwhile
      if (!ok && !this.undos.has(callId)) this.registerUndo(callId, registered.restore, registered.tool, registered.owner)
    })
  }

  /** The closure undo registered here for `callId` that `principal` finds (the operator, when absent, finds any). */
  private undoFor(callId: string, principal: Principal | undefined): { readonly tool: string; readonly restore: (undoer: Principal | undefined) => unknown; readonly owner: string | null } | undefined {
    const registered = this.undos.get(callId)
    return registered === undefined || finds(ownerOf(principal), registered.owner) ? registered : undefined
  }

  /**
   * Runs an undo and gives its view, with `call_start` and a `call_end` marked `undo: true`
   * (the undone call's id and tool). `after(ok)` runs before `call_end` (and before the view is
   * given): a failed undo is put back there. Never rejects.
   */
  private runUndo(callId: string, tool: string, restore: () => unknown, after: (ok: boolean) => void | Promise<void>): Promise<CallResult> {
    const startedAt = Date.now()
    if (this.events.listeners.call_start !== undefined) this.events.emit('call_start', { callId, tool })
    let result: ToolResult
    const fail = (err: unknown): void => {
      this.events.reportError(callId, tool, err)
      result = ToolResult.failed(toolError('other', UNDO_FAILED_MESSAGE))
    }
    const end = async (): Promise<CallResult> => {
      // done, or nothing left to do (`skipped`); an error or a refusal it returned is a failure
      const ok = result.statusName() === 'success' || result.statusName() === 'skipped'
      try {
        await after(ok)
      } catch (err) {
        this.events.reportError(callId, tool, err)
      }
      const view = viewOf(result, callId)
      if (this.events.listeners.call_end !== undefined) {
        const endedAt = Date.now()
        const record = callRecord(callId, tool, result, startedAt, endedAt, 1, this.canUndo(callId))
        const durationMs = Math.max(0, endedAt - startedAt)
        this.events.emit('call_end', { callId, tool, status: view.status, statusName: result.statusName(), durationMs, result, view, record, undo: true })
      }
      return view
    }
    let value: unknown
    try {
      value = restore()
    } catch (err) {
      fail(err)
      return end()
    }
    return Promise.resolve(value).then(
      (v) => {
        try {
          // read like a body's return (a ToolResult or helper result it returns is its outcome), redacted with the tool's sensitive names
          const entry = this.tools.get(tool)
          result = normalizeReturn(v, entry?.untrusted ?? false, entry?.sensitive, entry?.sensitiveKey ?? sensitiveKeys(undefined))
          if (result.statusName() === 'pending') throw new TypeError('toolwire: an undo cannot suspend (it returned a pending result)')
        } catch (err) {
          fail(err)
        }
        return end()
      },
      (err: unknown) => {
        fail(err)
        return end()
      },
    )
  }

  /** A JSON undo payload for the tool's `undo(payload, ctx)`, owned by `principal`: in the store when there is one, else a closure here. */
  private registerUndoPayload(callId: string, entry: ToolEntry, payload: JsonValue, principal: Principal | undefined): void | Promise<void> {
    if (this.durable !== undefined) return this.durable.undos.put(callId, entry.name, payload, principal)
    const handler = entry.def.undo as (p: unknown, c: UndoContext) => unknown
    const toolName = entry.name
    this.registerUndo(callId, (undoer) => handler(payload, undoContext(callId, toolName, undoer)), toolName, ownerOf(principal) ?? null)
  }

  /**
   * Whether `tm.undo(callId)` would run something now, asked of the store when there is one:
   * the call's undo is in it (registered by any manager on the store, before or after a
   * restart, and not taken since; still there after a failed undo) and this manager has its
   * tool's `undo`. Without a store, or with a store of the app's own that has no `getUndo`, the
   * answer is {@link canUndo}'s. Rejects with a `StoreUnavailableError` when the store fails
   * (also an `error` event): `false` always means there is nothing to undo here.
   */
  async undoable(callId: string, options?: AnswerOptions): Promise<boolean> {
    if (typeof callId !== 'string') return false
    const principal = answererOf(options)
    if (typeof principal === 'string') return false
    if (this.undoFor(callId, principal) !== undefined) return true
    if (this.durable === undefined) return false
    try {
      return await this.durable.undos.undoable(callId, principal)
    } catch (err) {
      this.events.reportError(callId, 'undo', err)
      throw err instanceof StoreUnavailableError ? err : new StoreUnavailableError(`toolwire: the store could not be asked for the undo: ${describeThrown(err).message}`, { cause: err })
    }
  }

  /** Registers a closure undo owned by `owner`; `tool` defaults to the tool of the call in flight with this id. */
  private registerUndo(callId: string, restore: (undoer: Principal | undefined) => unknown, tool: string | undefined, owner: string | null): void {
    this.undos.delete(callId)
    this.undos.set(callId, { tool: tool ?? this.inflight.find(callId)?.toolName ?? 'undo', restore, owner })
    const limit = this.options.undoLimit ?? 1000
    while (this.undos.size > limit) this.undos.delete(this.undos.keys().next().value as string)
  }

  /**
   * Whether `tm.undo(callId)` would run something, as far as this process knows: an undo
   * registered here (a closure, or a payload without a store), or a payload this process wrote
   * to the store and has not seen taken. With a store it can be wrong both ways: an undo written
   * by another manager (or before a restart) is not known here, and one that another manager
   * took still answers `true`. Ask {@link undoable} for the store's answer.
   */
  canUndo(callId: string, options?: AnswerOptions): boolean {
    const principal = answererOf(options)
    if (typeof principal === 'string') return false
    return this.undoFor(callId, principal) !== undefined || (this.durable !== undefined && this.durable.undos.has(callId, principal))
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

/** What a parked call keeps of its call's options for its continued run; `undefined` when nothing. */
function keptOptions(
  timeoutMs: number | undefined,
  idempotencyKey: string | undefined,
  traceContext: CallOptions['traceContext'],
  principal: Principal | undefined,
): CallOptions | undefined {
  if (timeoutMs === undefined && idempotencyKey === undefined && traceContext === undefined && principal === undefined) return undefined
  return { timeoutMs, idempotencyKey, traceContext, ...(principal === undefined ? {} : { principal }) }
}

/** The options of a confirmed run: the call's, and who approved it (only recorded: the run stays the caller's). */
function continued(options: CallOptions | undefined, approvedBy: PrincipalRef | undefined): ContinuedOptions | undefined {
  return approvedBy === undefined ? options : { ...options, approvedBy }
}
