/**
 * The idempotency ledger in a durable store: the key a call holds while its body runs (the
 * caller's idempotency key, or one of its own for a tool not marked idempotent), settled with
 * its result; replays of settled keys; and the sweeps that report the runs a crash left
 * unknown (their lease ran out).
 */
import { toFrozenJson } from '../../core/json.js'
import { redact } from '../../core/redact.js'
import { STORE_TEXTS } from '../../core/texts.js'
import { ToolResult } from '../../core/result.js'
import type { JsonValue } from '../../core/types.js'
import type { CallResult } from '../../core/view.js'
import { describeThrown, when } from '../normalize.js'
import { randomIdPair } from '../store/codec.js'
import { StoreClosedError, StoreUnavailableError, type ToolStore } from '../store/types.js'
import type { LedgerGate, LedgerTicket, ToolEntry } from '../types.js'
import { principalKey, principalRef, type Principal, type PrincipalRef } from '../../core/principal.js'
import { evidenceIdentity, type EvidenceRecord } from '../../observe/evidence.js'
import type { SettleWithEvidence } from '../store/evidence.js'
import {
  describe,
  IDEMPOTENCY_IN_FLIGHT,
  IDEMPOTENCY_MISMATCH,
  OUTCOME_UNKNOWN,
  refused,
  STORE_UNAVAILABLE,
  unknownOutcomeResult,
  type DurableContext,
} from './shared.js'

/** How long a sweep (or a call) waits for the evidence of a run it reports as outcome unknown before it answers. */
const EVIDENCE_WAIT_MS = 5_000

/**
 * The ledger key of a call: scoped by tool; `k` for a caller's idempotency key, `c` for a call
 * recorded without one. A caller's key is scoped by its principal too (`owner`, the principal's
 * key, as a 4th element): another principal's key is another key, and a call without a principal
 * keeps the 3-element form (rows written before principals still replay for it).
 */
function ledgerKey(kind: 'k' | 'c', tool: string, key: string, owner?: string): string {
  return JSON.stringify(owner === undefined ? [kind, tool, key] : [kind, tool, key, owner])
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
export function recordedResult(recorded: JsonValue): ToolResult | undefined {
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

/** What a settled key records of its run's result: the whole result for a caller's key, the status otherwise. */
function recordedOf(ticket: LedgerTicket, result: ToolResult): JsonValue {
  try {
    return ticket.keyed ? { wire: result.toJSON() as unknown as JsonValue } : { status: result.statusName() }
  } catch {
    return { status: result.statusName() }
  }
}

/** A settle that found its key no longer in flight. */
const leaseRanOut = (): Error => new Error('toolwire: the ledger key was settled as outcome unknown before this run finished (its lease ran out)')

/** Where {@link settleWithEvidence} reports. */
export interface SettleReports {
  /** The ledger's failure (an `error` event), as `Ledger.settle` reports it. */
  readonly reportError: (callId: string, tool: string, err: unknown) => void
  /** The evidence's failure (an `evidence_error` event), as a failed `append` is reported. */
  readonly evidenceFailed: (err: unknown) => void
}

/**
 * `Ledger.settle` and the evidence `append` of a call in one commit, through the evidence half
 * of the store (`settlerOf`, store/evidence.ts): what the two leave, reported as they report it.
 * A failure leaves neither and is reported twice (the ledger's `error` and `evidence_error`); a
 * key no longer in flight (its lease ran out) is reported as `Ledger.settle` reports it, and its
 * record is written. Never rejects.
 */
export async function settleWithEvidence(
  settle: SettleWithEvidence,
  ticket: LedgerTicket,
  result: ToolResult,
  record: EvidenceRecord,
  callId: string,
  tool: string,
  reports: SettleReports,
): Promise<void> {
  try {
    if (!(await settle(ticket.key, ticket.token, recordedOf(ticket, result), record))) reports.reportError(callId, tool, leaseRanOut())
  } catch (err) {
    reports.reportError(callId, tool, err)
    reports.evidenceFailed(err)
  }
}

const PASS: LedgerGate = Object.freeze({ run: true, ticket: undefined })

/** The ledger and the sweeps of a manager with a store. */
export class Ledger {
  private sweeping: Promise<unknown> = Promise.resolve()

  constructor(private readonly ctx: DurableContext) {}

  /**
   * The ledger gate of a call, before its body: `key` (the caller's idempotency key) or,
   * for a tool not marked `hints.idempotent`, a key of the call's own, recorded as in flight
   * before the body runs. A settled key with the same input answers its recorded result
   * (replayed, the body does not run); the same key with another input is refused
   * `idempotency_mismatch`; a key in flight elsewhere `idempotency_in_flight`; a key whose run
   * never settled answers `outcome_unknown`. An idempotent tool called without a key passes.
   * Never rejects. A caller's key is `principal`'s own: the same key of another principal (or of
   * none) is another key.
   */
  async begin(entry: ToolEntry, callId: string, input: unknown, key: string | undefined, principal?: Principal): Promise<LedgerGate> {
    const tool = entry.name
    if (key === undefined && entry.def.hints?.idempotent === true) return PASS
    const host = this.ctx.host
    // a key of the call's own and its token: one draw of the CSPRNG for both (a caller's key: the store draws the token)
    let lk: string
    let token: string | undefined
    if (key === undefined) {
      const [suffix, drawn] = randomIdPair()
      lk = ledgerKey('c', tool, `${callId}\u0000${suffix}`)
      token = drawn
    } else lk = ledgerKey('k', tool, key, principal === undefined ? undefined : principalKey(principal))
    // who began the run (never the scopes), for the evidence of a run a crash leaves unknown
    const by = principal === undefined ? undefined : principalRef(principal)
    let begun: Awaited<ReturnType<ToolStore['begin']>>
    try {
      // the input is kept with the key, redacted as evidence records are, so that a run reported
      // as outcome unknown says which action to verify (never a sensitive field's value)
      const options = { callId, leaseMs: this.ctx.leaseMs, input: redact(input, entry.sensitive), ...(by === undefined ? {} : { principal: by }), ...(token === undefined ? {} : { token }) }
      begun = await this.ctx.store.begin(lk, key === undefined ? '' : this.ctx.hashInput(input, entry.sensitive), options)
      // after a key rotation, a row may hold the input's hash under another key of the list: the
      // same input then matches one of those (a row that matches none is a real mismatch)
      if (begun.state === 'mismatch' && key !== undefined) {
        for (const hash of this.ctx.otherHashes(input)) {
          const again = await this.ctx.store.begin(lk, hash, options)
          if (again.state !== 'mismatch') {
            begun = again
            break
          }
        }
      }
    } catch (err) {
      host.reportError(callId, tool, err)
      return { run: false, replayed: false, result: refused(STORE_UNAVAILABLE, STORE_TEXTS.callNotRecorded) }
    }
    switch (begun.state) {
      case 'new':
        return { run: true, ticket: { key: lk, token: begun.token, keyed: key !== undefined } }
      case 'settled': {
        const result = recordedResult(begun.result)
        if (result === undefined) return { run: false, replayed: false, result: unknownOutcomeResult() }
        // a run settled as unknown (it was cancelled or timed out while its body ran) stays
        // unknown, with the text it recorded (what happened to it), on any instance
        if (result.error()?.code === OUTCOME_UNKNOWN) return { run: false, replayed: false, result }
        return { run: false, replayed: true, result }
      }
      case 'mismatch':
        return { run: false, replayed: false, result: refused(IDEMPOTENCY_MISMATCH, STORE_TEXTS.idempotencyMismatch) }
      case 'in_flight':
        return { run: false, replayed: false, result: refused(IDEMPOTENCY_IN_FLIGHT, STORE_TEXTS.idempotencyInFlight) }
      case 'unknown': {
        // this begin found the dead run's lease run out before any sweep: it reports that run (once across instances)
        if (begun.swept) await this.unknownOutcome(tool, begun.callId, begun.startedAt, begun.input ?? null, begun.principal ?? null)
        return { run: false, replayed: false, result: unknownOutcomeResult() }
      }
    }
  }

  /** Settles a ledger key with the call's result (the whole result for a caller's key, the status otherwise). Never rejects. */
  async settle(ticket: LedgerTicket, result: ToolResult, callId: string, tool: string): Promise<void> {
    const host = this.ctx.host
    try {
      if (!(await this.ctx.store.settle(ticket.key, ticket.token, recordedOf(ticket, result)))) host.reportError(callId, tool, leaseRanOut())
    } catch (err) {
      host.reportError(callId, tool, err)
    }
  }

  /**
   * Frees a ticket's key, so a retry with it runs afresh: the call ended (timed out, cancelled)
   * before its body ran, or its finished body failed with a retryable error. Never rejects.
   */
  async release(ticket: LedgerTicket, callId: string, tool: string): Promise<void> {
    const host = this.ctx.host
    try {
      if (!(await this.ctx.store.release(ticket.key, ticket.token))) {
        host.reportError(callId, tool, new Error('toolwire: the ledger key was settled as outcome unknown before this call released it (its lease ran out): a retry with it answers outcome_unknown'))
      }
    } catch (err) {
      host.reportError(callId, tool, err)
    }
  }

  /**
   * Marks runs whose lease ran out (their process died) as outcome unknown, and reports each
   * once across instances (`call_end` and the evidence). Sweeps run one after another.
   * Rejects with a {@link StoreUnavailableError} when the store fails (never an empty answer).
   */
  sweep(): Promise<readonly { readonly tool: string; readonly callId: string }[]> {
    const run = this.sweeping.then(async () => {
      let swept: Awaited<ReturnType<ToolStore['sweep']>>
      try {
        swept = await this.ctx.store.sweep()
      } catch (err) {
        throw err instanceof StoreUnavailableError ? err : new StoreUnavailableError(`toolwire: the store could not be swept: ${describe(err)}`, { cause: err })
      }
      const out: { tool: string; callId: string }[] = []
      const written: Promise<void>[] = []
      for (const k of swept.keys) {
        const parsed = parseLedgerKey(k.key)
        const entry = { tool: parsed?.tool ?? 'unknown', callId: k.callId }
        out.push(entry)
        written.push(this.unknownOutcome(entry.tool, entry.callId, k.startedAt, k.input ?? null, k.principal ?? null))
      }
      for (const p of swept.parked) {
        out.push({ tool: p.tool, callId: p.callId })
        // a parked call's stored input is its redacted copy
        written.push(this.unknownOutcome(p.tool, p.callId, p.updatedAt, p.input.input, parkedPrincipal(p.data)))
      }
      // the sweep answers once its evidence is written
      await Promise.all(written)
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
  sweepSoon(): void {
    this.sweeping = new Promise<void>((resolve) => setImmediate(resolve))
    // a store the application closed before the first turn (a short script) has nothing to report:
    // the next manager on it sweeps
    this.sweep().catch((err: unknown) => {
      if (!(err instanceof StoreClosedError)) this.ctx.host.reportError('', 'recover', err)
    })
  }

  /** A sweep asked for by the app (`tm.recover()`): a store failure is also an `error` event. */
  async recover(): Promise<readonly { readonly tool: string; readonly callId: string }[]> {
    try {
      return await this.sweep()
    } catch (err) {
      this.ctx.host.reportError('', 'recover', err)
      throw err
    }
  }

  /**
   * A call whose outcome a crash made unknown: `call_end` (and metrics) as for any settled call,
   * and its evidence, with the input the store kept (redacted; `null` when it kept none).
   * Resolves once the evidence is written (a failed write is an `evidence_error` event), or
   * after {@link EVIDENCE_WAIT_MS}: a sink that never settles must not hang the sweep or the
   * call that reports it. Never rejects. `principal`: who began the run, when a principal did
   * (the record's `principal`: subject, issuer and client, never the scopes).
   */
  private unknownOutcome(tool: string, callId: string, startedAt: number, input: JsonValue | null, principal: PrincipalRef | null): Promise<void> {
    const host = this.ctx.host
    const result = unknownOutcomeResult()
    void host.early(tool, callId, result)
    const evidence = host.evidence
    if (evidence === undefined) return Promise.resolve()
    const error = result.error()!
    const fail = (err: unknown): void => host.emit('evidence_error', { callId, tool, message: describeThrown(err).message, error: err })
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, EVIDENCE_WAIT_MS).unref()
      const done = (): void => {
        clearTimeout(timer)
        resolve()
      }
      try {
        const written = evidence.append({
          callId,
          tool,
          input,
          result: { error: { kind: error.kind, code: error.code ?? null, message: error.message } },
          status: 'failed',
          startedAt: new Date(startedAt).toISOString(),
          endedAt: new Date().toISOString(),
          ...evidenceIdentity(principal ?? undefined),
        })
        when(written, () => done(), (err) => (fail(err), done()))
      } catch (err) {
        fail(err)
        done()
      }
    })
  }
}

/** Who began a parked call's run, from its row's data (the principal `park` kept), without its scopes; `null` for none. */
function parkedPrincipal(data: JsonValue): PrincipalRef | null {
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return null
  const p = (data as { readonly principal?: JsonValue }).principal
  if (typeof p !== 'object' || p === null || Array.isArray(p)) return null
  const { subject, issuer, clientId } = p as { readonly subject?: JsonValue; readonly issuer?: JsonValue; readonly clientId?: JsonValue }
  if (typeof subject !== 'string' || typeof issuer !== 'string') return null
  return principalRef(typeof clientId === 'string' ? { subject, issuer, clientId } : { subject, issuer })
}
