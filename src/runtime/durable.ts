/**
 * What a manager does with a durable store (`new ToolManager({ store })`, see docs/store.md):
 * parks confirmations and suspensions in it, confirms and resumes them through the store's
 * compare-and-swap claim (exactly one run across processes), hands out signed approval
 * tokens, keeps the idempotency ledger around calls, keeps undo payloads, and reports the
 * calls whose outcome a crash made unknown.
 *
 * The manager reaches this module through {@link Durable}; this module reaches the manager
 * through {@link DurableHost} (no import of the manager or of a call).
 */
import { toFrozenJson } from '../core/json.js'
import {
  alreadyAnsweredText,
  expiredText,
  inputUnavailableText,
  noPendingText,
  REFUSALS,
  STORE_TEXTS,
  storeUnreadableText,
  unknownToolText,
} from '../core/texts.js'
import { refusalError, toolError, ToolResult } from '../core/result.js'
import type { JsonValue } from '../core/types.js'
import type { CallResult } from '../core/view.js'
import { signApproval, verifyApproval, type ApprovalClaims } from './store/approval.js'
import { inputHash, inputHashKey, keyBytes, keyedInputHash, openInput, randomId, sealInput, type StoreKey } from './store/codec.js'
import { redact } from '../core/redact.js'
import { StoreUnavailableError, type ClaimResult, type ParkedCall, type ParkedKind, type ToolStore, type UndoEntry } from './store/types.js'
import type { LedgerGate, LedgerTicket } from './types.js'

/** The refusal code of a `confirmId` that is not a token this manager's `approvalSecret` signed. */
export const APPROVAL_INVALID = 'approval_invalid'
/** The refusal code of an idempotency key used before with another input. */
export const IDEMPOTENCY_MISMATCH = 'idempotency_mismatch'
/** The refusal code of an idempotency key whose first call is still running (here or on another instance). */
export const IDEMPOTENCY_IN_FLIGHT = 'idempotency_in_flight'
/** The refusal code of a parked call with redacted sensitive input, no `storeKey`, answered by another process. */
export const INPUT_UNAVAILABLE = 'input_unavailable'
/** The refusal code of a call refused because the store could not be reached (nothing ran). */
export const STORE_UNAVAILABLE = 'store_unavailable'
/** The error code of a call that began and never settled: it may or may not have happened. */
export const OUTCOME_UNKNOWN = 'outcome_unknown'

/** What the model and the app read of an unknown outcome. */
export const OUTCOME_UNKNOWN_MESSAGE: string = STORE_TEXTS.outcomeUnknown

/** Default lease of a run (an idempotency key in flight, a claimed parked call): 10 minutes. */
export const DEFAULT_LEASE_MS = 10 * 60_000

/** The durable options of a manager. */
export interface DurableOptions {
  readonly store: ToolStore
  /** AES-256 key (32 bytes, or their hex/base64 text) sealing parked inputs, so any instance can run them. */
  readonly storeKey?: StoreKey
  /** HMAC secret (at least 16 bytes): `confirmId`s are signed tokens bound to their call. */
  readonly approvalSecret?: string | Uint8Array
  /** How long a run may hold its claim or idempotency key before it counts as crashed (default 10 minutes). */
  readonly leaseMs?: number
}

/** A parked call this process holds in memory: the real input and the original timeout. */
export interface LocalParked {
  readonly kind: ParkedKind
  readonly tool: string
  readonly callId: string
  readonly input: unknown
  readonly timeoutMs: number | undefined
  /** The call's idempotency key: its confirmed or resumed run records it in the ledger. */
  readonly idempotencyKey: string | undefined
}

/** What the durable layer needs of its manager. */
export interface DurableHost {
  /** The call parked under `id` by this process, if it still holds it. */
  local(id: string): LocalParked | undefined
  /** Forgets the local copy of a parked call (it was claimed or denied). */
  forget(id: string): void
  /** Whether a tool of this name is registered. */
  hasTool(name: string): boolean
  /** Runs a claimed call: a confirmation through the gates after confirmation, a suspension through the tool's `resume` with `answer`. */
  run(kind: ParkedKind, tool: string, callId: string, input: unknown, timeoutMs: number | undefined, answer: unknown, idempotencyKey: string | undefined): Promise<CallResult>
  /** The view of a call settled without running (a refusal or an unknown outcome), with its events. */
  early(tool: string, callId: string | undefined, result: ToolResult): Promise<CallResult>
  /** Reports a store failure (the `error` event). Never throws. */
  reportError(callId: string, tool: string, error: unknown): void
  /** Reports a call whose outcome is unknown after a crash: `call_end` and the evidence. */
  unknownOutcome(tool: string, callId: string, startedAt: number): void
}

/** What a confirm or resume answered, and for which call (the `confirmation` event). */
export interface Answered {
  readonly view: CallResult
  /** Set when the decision was applied to a parked call (it ran, or was denied). */
  readonly call?: { readonly tool: string; readonly callId: string }
}

function refused(code: string, message: string): ToolResult {
  return ToolResult.failed(refusalError(code, message))
}

/** The result of a call whose outcome is unknown. */
export function unknownOutcomeResult(): ToolResult {
  return ToolResult.failed(toolError('other', OUTCOME_UNKNOWN_MESSAGE, { code: OUTCOME_UNKNOWN, retryable: false }))
}

/** The ledger key of a call: scoped by tool; `k` for a caller's idempotency key, `c` for a call recorded without one. */
function ledgerKey(kind: 'k' | 'c', tool: string, key: string): string {
  return JSON.stringify([kind, tool, key])
}

/** The tool and call of a ledger key written by {@link ledgerKey}. */
function parseLedgerKey(key: string): { tool: string; callId: string | undefined } | undefined {
  try {
    const parsed: unknown = JSON.parse(key)
    if (!Array.isArray(parsed) || typeof parsed[1] !== 'string') return undefined
    return { tool: parsed[1], callId: parsed[0] === 'c' && typeof parsed[2] === 'string' ? parsed[2] : undefined }
  } catch {
    return undefined
  }
}

/** The result a settled key recorded; `undefined` when it cannot be read back. */
function recordedResult(recorded: JsonValue): ToolResult | undefined {
  if (typeof recorded !== 'object' || recorded === null || Array.isArray(recorded)) return undefined
  const wire = (recorded as { wire?: JsonValue }).wire
  if (wire === undefined) return undefined
  try {
    return ToolResult.fromWire(wire as never)
  } catch {
    return undefined
  }
}

/** A replayed view: the recorded result's view with `replayed: true`, deeply frozen. */
export function replayedView(view: CallResult): CallResult {
  return toFrozenJson({ ...view, replayed: true }) as unknown as CallResult
}

const PASS: LedgerGate = Object.freeze({ run: true, ticket: undefined })

/** The durable half of a manager. */
export class Durable {
  readonly store: ToolStore
  private readonly key: StoreKey | undefined
  private readonly secret: string | Uint8Array | undefined
  private readonly leaseMs: number
  /** Undo payloads being written, by call id: `tm.undo` right after the call waits for its write. */
  private readonly undoWrites = new Map<string, Promise<void>>()
  /** Call ids with a durable undo written by this process (for `canUndo`, bounded). */
  private readonly undoable = new Set<string>()
  private sweeping: Promise<unknown> = Promise.resolve()
  /** The key of every input hash this manager hands out or stores (from the store key, else the approval secret). */
  private readonly hashKey: Buffer | undefined

  constructor(options: DurableOptions) {
    this.store = options.store
    this.key = options.storeKey
    this.secret = options.approvalSecret
    this.leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS
    if (this.secret !== undefined) signApproval(this.secret, { confirmationId: '', callId: '', tool: '', inputHash: '' }) // a short secret throws now
    this.hashKey = this.key !== undefined ? inputHashKey(keyBytes(this.key)) : this.secret !== undefined ? inputHashKey(this.secret) : undefined
  }

  /**
   * The input's hash as tokens and the store keep it: keyed (HMAC) with a store key or an
   * approval secret, so it reveals nothing of the input; with neither, the hash of the input with
   * its sensitive fields redacted (two inputs that differ only there then hash the same).
   * @throws TypeError when the input has no JSON form.
   */
  hashInput(input: unknown, sensitive: ReadonlySet<string> | undefined): string {
    return this.hashKey !== undefined ? keyedInputHash(this.hashKey, input) : inputHash(redact(input, sensitive))
  }

  /** {@link hashInput} of a token's call, or `''` for an input with no JSON form (it then matches no token). */
  private safeHash(input: unknown): string {
    try {
      return this.hashInput(input, undefined)
    } catch {
      return ''
    }
  }

  // ------------------------------------------------------------ parking

  /**
   * The ids of a new confirmation: `id` in the store (128 random bits), and `handle`, what the
   * caller is given: the signed token with an `approvalSecret`, else the id itself.
   */
  newConfirmation(tool: string, callId: string, input: unknown): { readonly id: string; readonly handle: string } {
    const id = randomId('c_')
    if (this.secret === undefined) return { id, handle: id }
    return { id, handle: signApproval(this.secret, { confirmationId: id, callId, tool, inputHash: this.hashInput(input, undefined) }) }
  }

  /**
   * Parks a call in the store: the input redacted, and sealed with the store key when there is
   * one. It expires `ttlMs` from now on the store's clock, the one its claims compare with.
   */
  park(
    id: string,
    kind: ParkedKind,
    tool: string,
    callId: string,
    input: unknown,
    sensitive: ReadonlySet<string> | undefined,
    timeoutMs: number | undefined,
    ttlMs: number,
    idempotencyKey?: string,
  ): Promise<void> {
    const stored = sealInput(id, input, sensitive, this.key)
    return this.store.park({
      id,
      kind,
      tool,
      callId,
      input: stored,
      inputHash: this.hashInput(input, sensitive),
      expiresAt: null,
      ttlMs,
      data: parkedData(timeoutMs, idempotencyKey),
    })
  }

  // ------------------------------------------------------------ confirm and resume

  /**
   * Approves (runs once) or denies a parked confirmation, or resumes a suspension with
   * `answer`. Of concurrent answers to one id, from any number of managers on the store,
   * exactly one applies; the others are refused `confirmation_used` / `request_used`.
   * Never rejects.
   */
  async answer(kind: ParkedKind, handle: string, approve: boolean, answer: unknown, host: DurableHost): Promise<Answered> {
    const what = kind === 'confirmation' ? 'confirmation' : 'request'
    const unknown = (): Promise<Answered> =>
      this.refuse(host, kind === 'confirmation' ? 'confirmation_unknown' : 'unknown_request', noPendingText(what))
    let claims: ApprovalClaims | undefined
    let id: string
    if (kind === 'confirmation' && this.secret !== undefined) {
      // checked before any lookup: a forged or altered token costs no store read
      claims = verifyApproval(this.secret, handle)
      if (claims === undefined) return this.refuse(host, APPROVAL_INVALID, STORE_TEXTS.approvalInvalid)
      id = claims.confirmationId
    } else {
      if (typeof handle !== 'string' || handle.length === 0 || handle.length > 4096) return unknown()
      id = handle
    }
    const tool = claims?.tool ?? 'unknown'
    /** Whether a token's claims name another call than `c`. */
    const unbound = (c: { readonly callId: string; readonly tool: string }, hash: () => string): boolean =>
      claims !== undefined && (claims.callId !== c.callId || claims.tool !== c.tool || claims.inputHash !== hash())
    try {
      const local = host.local(id)
      let parked: { readonly tool: string; readonly callId: string; readonly timeoutMs: number | undefined; readonly idempotencyKey: string | undefined }
      let input: unknown
      if (local !== undefined && approve) {
        // parked here: the real input is in memory
        if (local.kind !== kind) return await unknown()
        if (unbound(local, () => this.safeHash(local.input))) return await this.refuse(host, APPROVAL_INVALID, STORE_TEXTS.approvalMismatch, local.tool, local.callId)
        parked = local
        input = local.input
      } else {
        // everything that would refuse is checked before the claim, so a refusal never consumes the call
        const pre = await this.store.getParked(id)
        if (pre === undefined || pre.kind !== kind) return await unknown()
        if (unbound(pre, () => pre.inputHash)) return await this.refuse(host, APPROVAL_INVALID, STORE_TEXTS.approvalMismatch, pre.tool, pre.callId)
        if (pre.state !== 'parked') return await this.refusedClaim(kind, pre.state === 'expired' ? 'expired' : 'used', host)
        if (!approve) {
          if (!(await this.store.deny(id))) return await this.refusedClaim(kind, await this.why(id, kind), host)
          host.forget(id)
          const view = await host.early(pre.tool, pre.callId, refused(REFUSALS.confirmationDenied.code, REFUSALS.confirmationDenied.message))
          return { view, call: { tool: pre.tool, callId: pre.callId } }
        }
        try {
          input = openInput(id, pre.input, this.key)
        } catch (err) {
          host.reportError(pre.callId, pre.tool, err)
          input = undefined
        }
        if (input === undefined) {
          return await this.refuse(host, INPUT_UNAVAILABLE, inputUnavailableText(what), pre.tool, pre.callId)
        }
        parked = { tool: pre.tool, callId: pre.callId, timeoutMs: timeoutOf(pre), idempotencyKey: keyOf(pre) }
      }
      if (!host.hasTool(parked.tool)) {
        return await this.refuse(host, 'unknown_tool', unknownToolText(parked.tool), parked.tool, parked.callId)
      }
      const claim: ClaimResult = await this.store.claim(id, { kind, leaseMs: this.leaseMs })
      if (!claim.ok) return await this.refusedClaim(kind, claim.reason, host)
      const call = claim.call
      if (!host.hasTool(call.tool)) {
        // unregistered while the claim was on its way: nothing ran, so the call goes back to parked
        // (confirmable again once the tool is registered) instead of being left running for a sweep
        // to call its outcome unknown
        await this.unclaim(id, claim.fence, call, host)
        return await this.refuse(host, 'unknown_tool', unknownToolText(call.tool), call.tool, call.callId)
      }
      host.forget(id)
      // no await between the check above and the run: the tool cannot go in between
      const view = await host.run(kind, call.tool, call.callId, input, parked.timeoutMs, answer, parked.idempotencyKey)
      try {
        await this.store.finish(id, claim.fence)
      } catch (err) {
        // the run happened; a lost finish leaves the call running until a sweep calls it unknown
        host.reportError(call.callId, call.tool, err)
      }
      return { view, call: { tool: call.tool, callId: call.callId } }
    } catch (err) {
      // the store failed before a claim was won (after one, nothing here throws): nothing ran
      host.reportError(claims?.callId ?? '', tool, err)
      return this.refuse(host, STORE_UNAVAILABLE, storeUnreadableText(what))
    }
  }

  /** Gives a claim back (nothing ran). A store failure here is reported; the lease then makes it `unknown`. */
  private async unclaim(id: string, fence: number, call: ParkedCall, host: DurableHost): Promise<void> {
    try {
      if (!(await this.store.unclaim(id, fence))) host.reportError(call.callId, call.tool, new Error('toolwire: the claim of a parked call that did not run could not be given back'))
    } catch (err) {
      host.reportError(call.callId, call.tool, err)
    }
  }

  private async why(id: string, kind: ParkedKind): Promise<'unknown' | 'used' | 'expired'> {
    const call = await this.store.getParked(id)
    if (call === undefined || call.kind !== kind) return 'unknown'
    return call.state === 'expired' ? 'expired' : 'used'
  }

  private refusedClaim(kind: ParkedKind, reason: 'unknown' | 'used' | 'expired', host: DurableHost): Promise<Answered> {
    const c = kind === 'confirmation'
    const what = c ? 'confirmation' : 'request'
    if (reason === 'used') return this.refuse(host, c ? 'confirmation_used' : 'request_used', alreadyAnsweredText(what))
    if (reason === 'expired') return this.refuse(host, c ? 'confirmation_expired' : 'request_expired', expiredText(what))
    return this.refuse(host, c ? 'confirmation_unknown' : 'unknown_request', noPendingText(what))
  }

  private async refuse(host: DurableHost, code: string, message: string, tool = 'unknown', callId?: string): Promise<Answered> {
    return { view: await host.early(tool, callId, refused(code, message)) }
  }

  // ------------------------------------------------------------ idempotency

  /**
   * The ledger gate of a call, before its body: `key` (the caller's idempotency key) or,
   * for a tool not marked `hints.idempotent`, a key of the call's own, recorded as in flight
   * before the body runs. A settled key with the same input answers its recorded result
   * (replayed, the body does not run); the same key with another input is refused
   * `idempotency_mismatch`; a key in flight elsewhere `idempotency_in_flight`; a key whose run
   * never settled answers `outcome_unknown`. An idempotent tool called without a key passes.
   * Never rejects.
   */
  async begin(
    key: string | undefined,
    tool: string,
    idempotent: boolean,
    callId: string,
    input: unknown,
    sensitive: ReadonlySet<string> | undefined,
    host: Pick<DurableHost, 'reportError' | 'unknownOutcome'>,
  ): Promise<LedgerGate> {
    if (key === undefined && idempotent) return PASS
    const lk = key === undefined ? ledgerKey('c', tool, `${callId}\u0000${randomId()}`) : ledgerKey('k', tool, key)
    let begun: Awaited<ReturnType<ToolStore['begin']>>
    try {
      begun = await this.store.begin(lk, key === undefined ? '' : this.hashInput(input, sensitive), { callId, leaseMs: this.leaseMs })
    } catch (err) {
      host.reportError(callId, tool, err)
      return { run: false, replayed: false, result: refused(STORE_UNAVAILABLE, STORE_TEXTS.callNotRecorded) }
    }
    switch (begun.state) {
      case 'new':
        return { run: true, ticket: { key: lk, token: begun.token, keyed: key !== undefined } }
      case 'settled': {
        const result = recordedResult(begun.result)
        // a run settled as unknown (it was cancelled or timed out while its body ran) stays unknown
        if (result === undefined || result.error()?.code === OUTCOME_UNKNOWN) return { run: false, replayed: false, result: unknownOutcomeResult() }
        return { run: false, replayed: true, result }
      }
      case 'mismatch':
        return { run: false, replayed: false, result: refused(IDEMPOTENCY_MISMATCH, STORE_TEXTS.idempotencyMismatch) }
      case 'in_flight':
        return { run: false, replayed: false, result: refused(IDEMPOTENCY_IN_FLIGHT, STORE_TEXTS.idempotencyInFlight) }
      case 'unknown': {
        // this begin found the dead run's lease run out before any sweep: it reports that run (once across instances)
        if (begun.swept) host.unknownOutcome(tool, begun.callId, begun.startedAt)
        return { run: false, replayed: false, result: unknownOutcomeResult() }
      }
    }
  }

  /** Settles a ledger key with the call's result (the whole result for a caller's key, the status otherwise). Never rejects. */
  async settle(ticket: LedgerTicket, result: ToolResult, callId: string, tool: string, host: Pick<DurableHost, 'reportError'>): Promise<void> {
    try {
      let recorded: JsonValue
      try {
        recorded = ticket.keyed ? { wire: result.toJSON() as unknown as JsonValue } : { status: result.statusName() }
      } catch {
        recorded = { status: result.statusName() }
      }
      if (!(await this.store.settle(ticket.key, ticket.token, recorded))) {
        host.reportError(callId, tool, new Error('toolwire: the ledger key was settled as outcome unknown before this run finished (its lease ran out)'))
      }
    } catch (err) {
      host.reportError(callId, tool, err)
    }
  }

  /** Frees a ticket's key: the call ended (timed out, cancelled) before its body ran, so a retry runs afresh. Never rejects. */
  async release(ticket: LedgerTicket, callId: string, tool: string, host: Pick<DurableHost, 'reportError'>): Promise<void> {
    try {
      await this.store.release(ticket.key, ticket.token)
    } catch (err) {
      host.reportError(callId, tool, err)
    }
  }

  /**
   * Marks runs whose lease ran out (their process died) as outcome unknown, and reports each
   * once across instances (`call_end` and the evidence). Sweeps run one after another.
   * Rejects with a {@link StoreUnavailableError} when the store fails (never an empty answer).
   */
  sweep(host: DurableHost): Promise<readonly { readonly tool: string; readonly callId: string }[]> {
    const run = this.sweeping.then(async () => {
      let swept: Awaited<ReturnType<ToolStore['sweep']>>
      try {
        swept = await this.store.sweep()
      } catch (err) {
        throw err instanceof StoreUnavailableError ? err : new StoreUnavailableError(`toolwire: the store could not be swept: ${describe(err)}`, { cause: err })
      }
      const out: { tool: string; callId: string }[] = []
      for (const k of swept.keys) {
        const parsed = parseLedgerKey(k.key)
        const entry = { tool: parsed?.tool ?? 'unknown', callId: k.callId }
        out.push(entry)
        host.unknownOutcome(entry.tool, entry.callId, k.startedAt)
      }
      for (const p of swept.parked) {
        out.push({ tool: p.tool, callId: p.callId })
        host.unknownOutcome(p.tool, p.callId, p.updatedAt)
      }
      return out
    })
    this.sweeping = run.catch(() => undefined)
    return run
  }

  /**
   * The sweep a manager runs once by itself when it is made: on the next turn of the event
   * loop (`setImmediate`), so that listeners attached right after `new ToolManager(...)` get
   * its `call_end` events. Like any sweep it reports only runs whose lease ran out (a live
   * instance's runs are left alone), each once across instances (the store's sweep claims it).
   * A sweep asked for meanwhile (`tm.recover()`) runs after it.
   */
  sweepSoon(host: DurableHost): Promise<readonly { readonly tool: string; readonly callId: string }[]> {
    this.sweeping = new Promise<void>((resolve) => setImmediate(resolve))
    return this.sweep(host)
  }

  // ------------------------------------------------------------ undo

  /** Records an undo payload for a call (once per call). */
  putUndo(callId: string, tool: string, payload: JsonValue, host: DurableHost): void {
    const write = this.store.putUndo({ callId, tool, payload }).then(
      () => {
        this.undoable.add(callId)
        if (this.undoable.size > 10_000) this.undoable.delete(this.undoable.values().next().value as string)
      },
      (err: unknown) => host.reportError(callId, tool, err),
    )
    this.undoWrites.set(callId, write)
    void write.finally(() => {
      if (this.undoWrites.get(callId) === write) this.undoWrites.delete(callId)
    })
  }

  /** Whether this process wrote an undo for the call that has not been taken (another instance may have taken it). */
  hasUndo(callId: string): boolean {
    return this.undoable.has(callId) || this.undoWrites.has(callId)
  }

  /** Takes a call's undo from the store: exactly one of concurrent takers, on any instance, gets it. */
  async takeUndo(callId: string): Promise<UndoEntry | undefined> {
    await this.undoWrites.get(callId)
    this.undoable.delete(callId)
    return this.store.takeUndo(callId)
  }
}


function describe(err: unknown): string {
  try {
    return err instanceof Error ? err.message : String(err)
  } catch {
    return 'an unreadable error'
  }
}

/** What a parked call keeps of its options: the timeout and the idempotency key, when it has them. */
function parkedData(timeoutMs: number | undefined, idempotencyKey: string | undefined): JsonValue {
  if (timeoutMs === undefined && idempotencyKey === undefined) return null
  return { ...(timeoutMs === undefined ? {} : { timeoutMs }), ...(idempotencyKey === undefined ? {} : { idempotencyKey }) }
}

function keyOf(call: ParkedCall): string | undefined {
  const data = call.data
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return undefined
  const k = (data as { idempotencyKey?: JsonValue }).idempotencyKey
  return typeof k === 'string' ? k : undefined
}

function timeoutOf(call: ParkedCall): number | undefined {
  const data = call.data
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return undefined
  const t = (data as { timeoutMs?: JsonValue }).timeoutMs
  return typeof t === 'number' && t > 0 ? t : undefined
}
