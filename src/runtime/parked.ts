/**
 * The calls parked in this process: confirmations and suspensions waiting for `tm.confirm` or
 * `tm.resume`, answered here without a store (with one, durable/parking.ts decides the one run
 * and this keeps the local copy it runs from), and their continued runs.
 */
import { Call, CONTINUE_CONFIRMED } from './call.js'
import { confirmationEvent, finds, ownerOf, type Durable, type LocalParked, type RunAs } from './durable.js'
import { invalidAnswerError } from './normalize.js'
import { settleEarly } from './settlement.js'
import { refusalError, ToolResult } from '../core/result.js'
import { alreadyAnsweredText, expiredText, noPendingText, REFUSALS, resumeUnavailableText } from '../core/texts.js'
import { SchemaError, type Issue, type SchemaCompiler } from '../core/validate.js'
import type { CallResult } from '../core/view.js'
import type { JsonValue, PendingSchema } from '../core/types.js'
import type { Principal, PrincipalRef } from '../core/principal.js'
import type { CallOptions, ToolContext } from './tool.js'
import type { CallHost, ContinuedOptions, ManagerState, ParkKind, SuspensionExtras, ToolEntry } from './types.js'

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
  /** The store failed to keep it: answered here, by this manager only. */
  localOnly?: true
}

/** What the parked calls are made from; the host and the durable side are read when needed (they are made after). */
export interface ParkedConfig {
  readonly state: ManagerState
  /** The manager's options (`confirmTtlMs` is read at each park). */
  readonly options: { readonly confirmTtlMs?: number }
  readonly compiler: SchemaCompiler
  readonly host: () => CallHost
  readonly durable: () => Durable | undefined
}

/** One manager's parked calls. */
export class ParkedCalls {
  private readonly byId = new Map<string, Parked>()
  private readonly state: ManagerState
  private readonly compiler: SchemaCompiler
  private readonly config: ParkedConfig

  constructor(config: ParkedConfig) {
    this.config = config
    this.state = config.state
    this.compiler = config.compiler
  }

  /** The durable store's side of the manager; `undefined` without a store. */
  private get durable(): Durable | undefined {
    return this.config.durable()
  }

  /** `tm.confirm` without a store, once the decision is read: `approve` runs the call, else denies it. */
  confirm(confirmId: string, approve: boolean, by: RunAs): Promise<CallResult> {
    const parked = this.parkedFor(confirmId, by.principal)
    // a confirmation a tool body asked for (`pending({ kind: 'confirmation' })`): its resume gets the decision
    if (parked?.kind === 'suspension' && parked.confirmation === true) {
      // only an answer that reaches the call is a `confirmation` event (as for a gate's confirmation)
      const answerable = !parked.used && Date.now() <= parked.expiresAt
      return this.resumeAs(confirmId, { approve }, by).then((view) => {
        if (answerable) this.state.events.emit('confirmation', confirmationEvent(confirmId, { callId: parked.callId, tool: parked.entry.name, principal: parked.options?.principal }, approve, view, by.approvedBy))
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
      this.state.events.emit('confirmation', confirmationEvent(confirmId, { callId: p.callId, tool: p.entry.name, principal: p.options?.principal }, approve, view, by.approvedBy))
      return view
    })
  }

  /** `resume` here (no store) by `by.principal`; a body's confirmation keeps `by.approvedBy` for its run. */
  resumeAs(requestId: string, answer: unknown, by: RunAs): Promise<CallResult> {
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
  checkAnswer(schema: PendingSchema | undefined, answer: unknown): ToolResult | undefined {
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
  continueParked(kind: ParkKind, entry: ToolEntry, callId: string, input: unknown, options: CallOptions | undefined, answer: unknown, resumeState?: JsonValue): Promise<CallResult> {
    if (kind === 'confirmation') return new Call(this.config.host(), entry, callId, input, options, 'view', CONTINUE_CONFIRMED).start() as Promise<CallResult>
    const handler = entry.def.resume
    if (typeof handler !== 'function') {
      return settleEarly(this.state, entry.name, { callId }, ToolResult.failed(refusalError('resume_unavailable', resumeUnavailableText(entry.name))))
    }
    const continuation = (ctx: ToolContext): unknown => (handler as (a: unknown, i: unknown, c: ToolContext) => unknown)(answer, input, ctx)
    return Call.resumedWith(new Call(this.config.host(), entry, callId, input, options, 'view', continuation), resumeState).start() as Promise<CallResult>
  }

  /** The call parked here under `id` that `principal` finds (the operator, when absent, finds any): another principal's is not there. */
  private parkedFor(id: string, principal: Principal | undefined): Parked | undefined {
    const parked = this.byId.get(id)
    return parked === undefined || finds(ownerOf(principal), ownerOf(parked.options?.principal)) ? parked : undefined
  }

  /** The view of a refused answer: it names the parked call only when the id is one of its kind (the refusal is about that call). */
  private refuseParked(parked: Parked | undefined, kind: 'confirmation' | 'suspension', refusal: ToolResult): Promise<CallResult> {
    const about = parked !== undefined && parked.kind === kind ? parked : undefined
    return settleEarly(this.state, about?.entry.name ?? 'unknown', about && { callId: about.callId }, refusal)
  }

  private checkParked(parked: Parked | undefined, kind: 'confirmation' | 'suspension'): ToolResult | undefined {
    this.sweep()
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
  park(id: string, kind: ParkKind, entry: ToolEntry, input: unknown, callId: string, callOptions: CallOptions | undefined, extras: SuspensionExtras = {}): boolean | Promise<boolean> {
    this.sweep()
    const held = this.byId.get(id)
    if (held !== undefined && !held.used && Date.now() <= held.expiresAt) return false
    const ttl = this.config.options.confirmTtlMs ?? 10 * 60_000
    // what the confirmed or resumed run keeps of the call's options: its timeout, its idempotency key,
    // its principal (the run is the caller's) and (in this process only, not in the store) its trace context
    const { timeoutMs, idempotencyKey, traceContext, principal } = callOptions ?? {}
    const options = keptOptions(timeoutMs, idempotencyKey, traceContext, principal)
    const expiresAt = Date.now() + ttl
    // the real input stays in this process too: without a storeKey, a call with sensitive input runs only here
    const parked: Parked = { kind, entry, input, callId, options, expiresAt, used: false, ...extras }
    this.byId.set(id, parked)
    if (this.durable === undefined) return true
    // the store dates the expiry on its own clock, the one its claims compare with
    return this.durable.parking.park(id, kind, entry, input, callId, timeoutMs, ttl, idempotencyKey, extras, principal).then((ok) => {
      // the store failed to keep it: `tm.confirm` and `tm.resume` answer it here, from this copy
      if (ok === 'local') {
        parked.localOnly = true
        return true
      }
      // another instance's call holds the id: this one's local copy must not answer for it
      if (!ok && this.byId.get(id) === parked) this.byId.delete(id)
      return ok
    })
  }

  /** Whether the call parked under `id` is held here only (its store failed to keep it): answered here, not through the store. */
  heldHereOnly(id: string): boolean {
    return this.byId.get(id)?.localOnly === true
  }

  /** Withdraws a call parked under `id` (its call settled otherwise meanwhile): here, and denied in the store. */
  unpark(id: string, callId: string): void {
    const held = this.byId.get(id)
    if (held === undefined || held.callId !== callId) return
    this.byId.delete(id)
    this.durable?.parking.withdraw(id, callId, held.entry.name)
  }

  private sweep(): void {
    if (this.byId.size < 64) return
    const now = Date.now()
    for (const [id, p] of this.byId) if (now > p.expiresAt) this.byId.delete(id)
  }

  /** The call parked here under `id`, as the durable side reads it. */
  local(id: string): LocalParked | undefined {
    const p = this.byId.get(id)
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
  }

  /** Forgets the local copy of a parked call (it was claimed or denied in the store). */
  forget(id: string): void {
    this.byId.delete(id)
  }
}

/** What a parked call keeps of its call's options for its continued run; `undefined` when nothing. */
export function keptOptions(
  timeoutMs: number | undefined,
  idempotencyKey: string | undefined,
  traceContext: CallOptions['traceContext'],
  principal: Principal | undefined,
): CallOptions | undefined {
  if (timeoutMs === undefined && idempotencyKey === undefined && traceContext === undefined && principal === undefined) return undefined
  return { timeoutMs, idempotencyKey, traceContext, ...(principal === undefined ? {} : { principal }) }
}

/** The options of a confirmed run: the call's, and who approved it (only recorded: the run stays the caller's). */
export function continued(options: CallOptions | undefined, approvedBy: PrincipalRef | undefined): ContinuedOptions | undefined {
  return approvedBy === undefined ? options : { ...options, approvedBy }
}
