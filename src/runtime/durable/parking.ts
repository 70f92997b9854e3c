/**
 * Parked calls in a durable store: confirmations and suspensions are parked in it (the input
 * redacted, or sealed with the store key), and confirmed, denied or resumed through the
 * store's compare-and-swap claim: exactly one answer applies, whichever manager gives it.
 * Confirmation ids are signed approval tokens with an `approvalSecret`.
 */
import type { JsonValue, PendingSchema } from '../../core/types.js'
import { canonicalOf, type CallResult } from '../../core/view.js'
import {
  alreadyAnsweredText,
  expiredText,
  inputUnavailableText,
  noPendingText,
  REFUSALS,
  STORE_TEXTS,
  storeUnreadableText,
  unknownToolText,
} from '../../core/texts.js'
import { signApproval, verifyApproval, type ApprovalClaims } from '../store/approval.js'
import { openInput, PARKED_HASH_PREFIX, randomId, sealedUnbound, sealInput, type ParkedBinding } from '../store/codec.js'
import { StoreConflictError, type ClaimResult, type ParkedCall, type ParkedKind } from '../store/types.js'
import type { ParkKind, SuspensionExtras, ToolEntry } from '../types.js'
import type { TraceContext } from '../../observe/trace-context.js'
import { principalKey, type Principal, type PrincipalRef } from '../../core/principal.js'
import { APPROVAL_INVALID, finds, INPUT_UNAVAILABLE, ownerOf, refused, STORE_UNAVAILABLE, type DurableContext } from './shared.js'
import { dataField, keyOf, parkedData, principalOf, schemaOf, timeoutOf } from './parked-data.js'
import { confirmationEvent, outcomeKey } from './confirmation-outcome.js'

export { confirmationEvent, confirmationOutcome, confirmedElsewhereRunning, type ConfirmationOutcome } from './confirmation-outcome.js'

/**
 * Who answers a parked call: `principal`, the answerer (only the principal that made the call, or
 * the operator when absent, finds it), and `approvedBy`, who approved (recorded by the continued run).
 */
export interface Answerer {
  readonly principal?: Principal | undefined
  readonly approvedBy?: PrincipalRef | undefined
}

/** What a confirm or resume answered, and for which call (the `confirmation` event). */
export interface Answered {
  readonly view: CallResult
  /** Set when the decision was applied to a parked call (it ran, or was denied). */
  readonly call?: { readonly tool: string; readonly callId: string; readonly principal?: Principal }
}

/** The parked calls of a manager with a store. */
export class Parking {
  constructor(
    private readonly ctx: DurableContext,
    /** The store keys, checked, newest first: the first seals, any opens. */
    private readonly key: readonly Buffer[] | undefined,
    /** The approval secrets, checked, newest first: the first signs, any verifies. */
    private readonly secret: readonly Buffer[] | undefined,
  ) {}

  /** {@link DurableContext.hashParked} of a parked call, or `''` for an input with no JSON form (it then matches no token). */
  private safeHash(id: string, call: ParkedBinding, input: unknown): string {
    try {
      return this.ctx.hashParked(id, { tool: call.tool, callId: call.callId }, input, this.ctx.host.tool(call.tool)?.sensitive)
    } catch {
      return ''
    }
  }

  /**
   * Whether `input`, run as `row`'s tool for its call, hashes to what the row holds (under any key
   * of a rotation): its id, tool, call id and input are bound together. A row parked before that
   * binding holds the input's hash only; it is taken when its input was sealed then too, or
   * there is no store key (docs/store.md, "A stored row is not trusted").
   */
  private matches(id: string, row: ParkedCall, input: unknown): boolean {
    const binding = { tool: row.tool, callId: row.callId }
    try {
      if (row.inputHash.startsWith(PARKED_HASH_PREFIX)) {
        return this.safeHash(id, binding, input) === row.inputHash || this.ctx.otherParkedHashes(id, binding, input).includes(row.inputHash)
      }
      if (this.key !== undefined && !sealedUnbound(row.input)) return false
      return this.ctx.hashInput(input, this.ctx.host.tool(row.tool)?.sensitive) === row.inputHash || this.ctx.otherHashes(input).includes(row.inputHash)
    } catch {
      return false
    }
  }

  /**
   * The ids of a new confirmation: `id` in the store (128 random bits), and `handle`, what the
   * caller is given: the signed token with an `approvalSecret`, else the id itself.
   */
  newConfirmation(entry: ToolEntry, input: unknown, callId: string): { readonly id: string; readonly handle: string } {
    const id = randomId('c_')
    if (this.secret === undefined) return { id, handle: id }
    const inputHash = this.ctx.hashParked(id, { tool: entry.name, callId }, input, entry.sensitive)
    return { id, handle: signApproval(this.secret, { confirmationId: id, callId, tool: entry.name, inputHash }) }
  }

  /**
   * Parks a call in the store: the input redacted, and sealed with the store key when there is
   * one. It expires `ttlMs` from now on the store's clock, the one its claims compare with.
   * Resolves once the store holds it: `true`, or `false` when the store has a row of this id (a
   * suspension's request id held by another call; nothing was parked). Never rejects: a failure
   * is reported, and answers `'local'` (the call stays parked in this process only). A suspension's
   * pending request `schema` is kept in the row's data: its answer is checked against it on any
   * manager on the store. A call made with a `principal` is owned by it (the row's `owner`, its
   * key), and the whole principal is kept in the row's data: the continued run is that principal's.
   */
  park(
    id: string,
    kind: ParkKind,
    entry: ToolEntry,
    input: unknown,
    callId: string,
    timeoutMs: number | undefined,
    ttlMs: number,
    idempotencyKey: string | undefined,
    extras: SuspensionExtras = {},
    principal?: Principal,
  ): Promise<boolean | 'local'> {
    const tool = entry.name
    try {
      const binding = { tool, callId }
      const stored = sealInput(id, input, entry.sensitive, this.key, binding)
      return this.ctx.store
        .park({
          id,
          kind,
          tool,
          callId,
          input: stored,
          inputHash: this.ctx.hashParked(id, binding, input, entry.sensitive),
          expiresAt: null,
          ttlMs,
          data: parkedData(timeoutMs, idempotencyKey, extras, principal),
          ...(principal === undefined ? {} : { owner: principalKey(principal) }),
        })
        .then(
          () => true,
          (err: unknown) => {
            if (err instanceof StoreConflictError && kind === 'suspension') return false
            this.ctx.host.reportError(callId, tool, err)
            return 'local' as const
          },
        )
    } catch (err) {
      this.ctx.host.reportError(callId, tool, err)
      return Promise.resolve('local' as const)
    }
  }

  /** The id a confirmation handle names: the id inside a token this manager's secret signed, else the handle itself; `undefined` for a token it did not sign. */
  idOfHandle(handle: string): string | undefined {
    if (this.secret === undefined) return handle
    return verifyApproval(this.secret, handle)?.confirmationId
  }

  /**
   * Whether another manager answered through the store a call this one holds only in its own
   * copy (its park failed, or its acknowledgement was lost): a row of it still parked is denied
   * first, so the copy is the one run. A store that fails answers `false` (the copy is answered).
   */
  async answeredElsewhere(id: string): Promise<boolean> {
    try {
      const row = await this.ctx.store.getParked(id)
      if (row === undefined) return false
      if (row.state !== 'parked') return true
      return !(await this.ctx.store.deny(id))
    } catch {
      return false
    }
  }

  /** Withdraws a call this manager parked (its call settled otherwise meanwhile): denied in the store, if still parked. Never rejects. */
  withdraw(id: string, callId: string, tool: string): void {
    this.ctx.store.deny(id).catch((err: unknown) => this.ctx.host.reportError(callId, tool, err))
  }

  /**
   * Approves (runs once) or denies a parked confirmation; the outcome is also the `confirmation`
   * event. A confirmation a tool body asked for (a suspension parked from `pending({ kind:
   * 'confirmation' })`) is answered through the tool's `resume` with `{ approve }`. Never rejects.
   */
  async confirm(confirmId: string, approve: boolean, idempotencyKey?: string, by: Answerer = {}): Promise<CallResult> {
    let late: boolean
    try {
      late = await this.isBodyConfirmation(confirmId, ownerOf(by.principal))
    } catch (err) {
      // the store failed (or did not answer in time): answered as the confirmation's own read would be, without a second wait
      this.ctx.host.reportError('', 'unknown', err)
      return (await this.refuse(STORE_UNAVAILABLE, storeUnreadableText('confirmation'))).view
    }
    const answered = late ? this.answer('suspension', confirmId, true, { approve }, undefined, by) : this.answer('confirmation', confirmId, approve, undefined, idempotencyKey, by)
    return answered.then(({ view, call }) => {
      if (call !== undefined) this.ctx.host.emit('confirmation', confirmationEvent(confirmId, call, approve, view, by.approvedBy))
      return view
    })
  }

  /**
   * Whether `id` names a suspension parked from a body's `pending({ kind: 'confirmation' })`: held
   * here, or in the store. With an approval secret, what has the shape of a gate's confirmation
   * (a `tw1.` token, or a bare `c_` id, which is never a handle then) is not looked up: a forged
   * token still costs no store read. One that `asker` does not find is not (it is then refused
   * as an unknown confirmation). @throws when the store cannot be read.
   */
  private async isBodyConfirmation(id: string, asker: string | undefined): Promise<boolean> {
    if (typeof id !== 'string' || id.length === 0 || id.length > 4096) return false
    const local = this.ctx.host.local(id)
    if (local !== undefined) return local.kind === 'suspension' && local.confirmation === true && finds(asker, ownerOf(local.principal))
    if (this.secret !== undefined && (id.startsWith('tw1.') || id.startsWith('c_'))) return false
    const row = await this.ctx.store.getParked(id)
    return row !== undefined && row.kind === 'suspension' && dataField(row, 'confirmation') === true && finds(asker, row.owner)
  }

  /** Continues a parked suspension with `answer`, for `principal` (the operator when absent). Never rejects. */
  resume(requestId: string, answer: unknown, principal?: Principal): Promise<CallResult> {
    return this.answer('suspension', requestId, true, answer, undefined, { principal }).then(({ view }) => view)
  }

  /**
   * Approves (runs once) or denies a parked confirmation, or resumes a suspension with
   * `answer`. Of concurrent answers to one id, from any number of managers on the store,
   * exactly one applies; the others are refused `confirmation_used` / `request_used`.
   * Never rejects. `idempotencyKey` records the run under that key when the parked call has
   * none (an integration's approval, keyed by the framework's approval id). A call `by.principal`
   * does not find (another principal made it) answers exactly as an unknown id.
   */
  async answer(kind: ParkedKind, handle: string, approve: boolean, answer: unknown, idempotencyKey?: string, by: Answerer = {}): Promise<Answered> {
    const host = this.ctx.host
    const asker = ownerOf(by.principal)
    const what = kind === 'confirmation' ? 'confirmation' : 'request'
    /** The call the id names once that is known (a verified token's claims, then the parked call): every refusal carries it. */
    let known: { readonly tool: string; readonly callId: string } | undefined
    const unknown = (): Promise<Answered> =>
      this.refuse(kind === 'confirmation' ? 'confirmation_unknown' : 'unknown_request', noPendingText(what), known?.tool, known?.callId)
    let claims: ApprovalClaims | undefined
    let id: string
    if (kind === 'confirmation' && this.secret !== undefined) {
      // checked before any lookup: a forged or altered token costs no store read
      claims = verifyApproval(this.secret, handle)
      if (claims === undefined) return this.refuse(APPROVAL_INVALID, STORE_TEXTS.approvalInvalid)
      id = claims.confirmationId
      known = claims
    } else {
      if (typeof handle !== 'string' || handle.length === 0 || handle.length > 4096) return unknown()
      id = handle
    }
    /** The refusal of a row altered in the store (it does not run); the `error` event names the parked id, never the input. */
    const altered = (row: ParkedBinding): Promise<Answered> => {
      host.reportError(row.callId, row.tool, new Error(`toolwire: parked call ${JSON.stringify(id)} does not match its hash (the row was altered); it does not run`))
      if (claims !== undefined) return this.refuse(APPROVAL_INVALID, STORE_TEXTS.approvalMismatch)
      return this.refuse(INPUT_UNAVAILABLE, inputUnavailableText(what), row.tool, row.callId)
    }
    /** Whether a token's claims name another call than `c`. */
    const unbound = (c: { readonly callId: string; readonly tool: string }, hash: () => string): boolean =>
      claims !== undefined && (claims.callId !== c.callId || claims.tool !== c.tool || claims.inputHash !== hash())
    try {
      const local = host.local(id)
      let parked: {
        readonly tool: string
        readonly callId: string
        readonly timeoutMs: number | undefined
        readonly idempotencyKey: string | undefined
        readonly schema?: PendingSchema | undefined
        readonly resumeState?: JsonValue | undefined
        readonly traceContext?: TraceContext | undefined
        readonly principal?: Principal | undefined
      }
      let input: unknown
      if (local !== undefined && approve) {
        // parked here: the real input is in memory
        // another principal's call does not exist for this answerer
        if (!finds(asker, ownerOf(local.principal))) return await unknown()
        // a refusal that is not about this call (another kind of id, a token for another call) names no call
        if (local.kind !== kind) return await this.refuse(kind === 'confirmation' ? 'confirmation_unknown' : 'unknown_request', noPendingText(what))
        if (unbound(local, () => this.safeHash(id, local, local.input))) return await this.refuse(APPROVAL_INVALID, STORE_TEXTS.approvalMismatch)
        known = local
        parked = local
        input = local.input
      } else {
        // everything that would refuse is checked before the claim, so a refusal never consumes the call
        const pre = await this.ctx.store.getParked(id)
        // another principal's call does not exist for this answerer (its owner is written once, at park: no race with the claim)
        if (pre === undefined || !finds(asker, pre.owner)) return await unknown()
        if (pre.kind !== kind) return await this.refuse(kind === 'confirmation' ? 'confirmation_unknown' : 'unknown_request', noPendingText(what))
        if (unbound(pre, () => pre.inputHash)) return await this.refuse(APPROVAL_INVALID, STORE_TEXTS.approvalMismatch)
        known = pre
        if (pre.state !== 'parked') return await this.refusedClaim(kind, pre.state === 'expired' ? 'expired' : 'used', pre)
        if (!approve) {
          if (!(await this.ctx.store.deny(id))) return await this.refusedClaim(kind, await this.why(id, kind), pre)
          host.forget(id)
          const view = await host.early(pre.tool, pre.callId, refused(REFUSALS.confirmationDenied.code, REFUSALS.confirmationDenied.message))
          return { view, call: { tool: pre.tool, callId: pre.callId, principal: principalOf(pre) || undefined } }
        }
        try {
          input = openInput(id, pre.input, this.key, { tool: pre.tool, callId: pre.callId })
        } catch (err) {
          host.reportError(pre.callId, pre.tool, err)
          input = undefined
        }
        if (input === undefined) {
          return await this.refuse(INPUT_UNAVAILABLE, inputUnavailableText(what), pre.tool, pre.callId)
        }
        // the row's content is not trusted: the tool, call and input that would run must hash to what
        // the row (and so a token, checked against it above) names. With a store key or an approval
        // secret the hash is keyed, and a row rewritten (its input, its tool) cannot be given a matching one
        if (!this.matches(id, pre, input)) return await altered(pre)
        // the principal the continued run is: the one the row's owner names, kept whole in its data
        const principal = principalOf(pre)
        if (principal === false) return await altered(pre)
        parked = {
          tool: pre.tool,
          callId: pre.callId,
          timeoutMs: timeoutOf(pre),
          idempotencyKey: keyOf(pre),
          schema: schemaOf(pre),
          resumeState: dataField(pre, 'resumeState'),
          principal,
        }
      }
      // an answer that does not match the pending request's schema is refused before the claim: the call stays parked
      const mismatch = kind === 'suspension' ? host.checkAnswer(parked.schema, answer) : undefined
      if (mismatch !== undefined) return { view: await host.early(parked.tool, parked.callId, mismatch) }
      if (host.tool(parked.tool) === undefined) {
        return await this.refuse('unknown_tool', unknownToolText(parked.tool), parked.tool, parked.callId)
      }
      const claim: ClaimResult = await this.ctx.store.claim(id, { kind, leaseMs: this.ctx.leaseMs })
      if (!claim.ok) return await this.refusedClaim(kind, claim.reason, parked)
      if (claim.call.tool !== parked.tool || claim.call.callId !== parked.callId) {
        // the row was given another tool or call after it was checked (or, parked here, at any time):
        // what runs is what was checked, and that is not what the row now names
        await this.unclaim(id, claim.fence, claim.call)
        return await altered(parked)
      }
      const call = claim.call
      if (host.tool(call.tool) === undefined) {
        // unregistered while the claim was on its way: nothing ran, so the call goes back to parked
        // (confirmable again once the tool is registered) instead of being left running for a sweep
        // to call its outcome unknown
        await this.unclaim(id, claim.fence, call)
        return await this.refuse('unknown_tool', unknownToolText(call.tool), call.tool, call.callId)
      }
      host.forget(id)
      // no await between the check above and the run: the tool cannot go in between
      const as = { principal: parked.principal, approvedBy: by.approvedBy }
      const view = await host.run(kind, call.tool, call.callId, input, parked.timeoutMs, answer, parked.idempotencyKey ?? idempotencyKey, parked.traceContext, parked.resumeState, as)
      // before `finish`: whoever sees the call done finds its outcome recorded
      if (kind === 'confirmation') await this.recordOutcome(id, call, view)
      try {
        await this.ctx.store.finish(id, claim.fence)
      } catch (err) {
        // the run happened; a lost finish leaves the call running until a sweep calls it unknown
        host.reportError(call.callId, call.tool, err)
      }
      return { view, call: { tool: call.tool, callId: call.callId, principal: parked.principal } }
    } catch (err) {
      // the store failed before a claim was won (after one, nothing here throws): nothing ran
      host.reportError(known?.callId ?? '', known?.tool ?? 'unknown', err)
      return this.refuse(STORE_UNAVAILABLE, storeUnreadableText(what), known?.tool, known?.callId)
    }
  }

  /**
   * Records a confirmed run's outcome in the ledger under the confirmation's id, for an
   * instance whose client waits for that confirmation (URL elicitation) while another instance
   * ran it ({@link confirmationOutcome}): the canonical result behind the view, as a keyed
   * call's ledger entry holds it. Never rejects (a failure is reported, and that instance then
   * answers that the result could not be read).
   */
  private async recordOutcome(id: string, call: ParkedCall, view: CallResult): Promise<void> {
    try {
      const result = canonicalOf(view)
      if (result === undefined) return
      const key = outcomeKey(id)
      const begun = await this.ctx.store.begin(key, '', { callId: call.callId })
      if (begun.state !== 'new') return
      await this.ctx.store.settle(key, begun.token, { wire: result.toJSON() as unknown as JsonValue })
    } catch (err) {
      this.ctx.host.reportError(call.callId, call.tool, err)
    }
  }

  /** Gives a claim back (nothing ran). A store failure here is reported; the lease then makes it `unknown`. */
  private async unclaim(id: string, fence: number, call: ParkedCall): Promise<void> {
    const host = this.ctx.host
    try {
      if (!(await this.ctx.store.unclaim(id, fence))) host.reportError(call.callId, call.tool, new Error('toolwire: the claim of a parked call that did not run could not be given back'))
    } catch (err) {
      host.reportError(call.callId, call.tool, err)
    }
  }

  private async why(id: string, kind: ParkedKind): Promise<'unknown' | 'used' | 'expired'> {
    const call = await this.ctx.store.getParked(id)
    if (call === undefined || call.kind !== kind) return 'unknown'
    return call.state === 'expired' ? 'expired' : 'used'
  }

  /** The refusal of an answer to `call` (known from its parked row) that the store no longer takes. */
  private refusedClaim(kind: ParkedKind, reason: 'unknown' | 'used' | 'expired', call: { readonly tool: string; readonly callId: string }): Promise<Answered> {
    const c = kind === 'confirmation'
    const what = c ? 'confirmation' : 'request'
    if (reason === 'used') return this.refuse(c ? 'confirmation_used' : 'request_used', alreadyAnsweredText(what), call.tool, call.callId)
    if (reason === 'expired') return this.refuse(c ? 'confirmation_expired' : 'request_expired', expiredText(what), call.tool, call.callId)
    return this.refuse(c ? 'confirmation_unknown' : 'unknown_request', noPendingText(what), call.tool, call.callId)
  }

  /** A refusal's view and events: of `tool` and `callId` when the answer named a known call, else of tool `'unknown'` under a fresh call id. */
  private async refuse(code: string, message: string, tool = 'unknown', callId?: string): Promise<Answered> {
    return { view: await this.ctx.host.early(tool, callId, refused(code, message)) }
  }
}
