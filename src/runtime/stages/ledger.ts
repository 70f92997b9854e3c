/**
 * The idempotency ledger's stages (with a durable store): the gate, last before the body,
 * records the call as in flight or settles it without running (a replay, a key in use); the
 * settlement stage settles or frees the key the call holds, alone or, when the store is the
 * evidence store too, with the call's evidence record in one commit.
 */
import { CALL_ACCESS as access, type Call } from '../call.js'
import { BODY_ACTIVE, RAN, REPLAYED, SETTLED, waitFor } from '../call-access.js'
import { interruptedOutcomeResult } from '../durable.js'
import { settleWithEvidence } from '../durable/ledger.js'
import { when } from '../normalize.js'
import { settlerOf } from '../store/evidence.js'
import type { LedgerGate } from '../types.js'
import type { EvidenceRecord } from '../../observe/evidence.js'
import { evidence, evidenceFailed, evidenceRecordOf } from './settle.js'

/** The ledger gate: records the call as in flight before its body, or settles it without running. */
export function ledger(c: Call): void {
  const options = access.options(c)
  const key = options?.idempotencyKey
  // a confirmed or resumed call was recorded by its claim
  if (key === undefined && access.continued(c)) return access.proceed(c)
  const host = access.host(c)
  const entry = access.entry(c)
  when(
    host.ledgerBegin(entry, c.callId, access.input(c), key, options?.principal),
    (g) =>
      access.guarded(c, () => {
        const gate = g as LedgerGate
        if (gate.run) {
          access.more(c).ticket = gate.ticket
          // settled while the store answered (timeout, cancel): the body never ran, so the key is
          // free again and a retry runs afresh (settling it would replay the timeout for ever)
          if ((access.flags(c) & SETTLED) !== 0) {
            if (gate.ticket !== undefined) void host.ledgerRelease(gate.ticket, c.callId, entry.name)
            return
          }
          return access.proceed(c)
        }
        if (gate.replayed) access.addFlags(c, REPLAYED)
        // the raw contract (`tm.execute`) of a replay: the recorded data
        if (gate.replayed) access.setRaw(c, gate.result.data())
        access.finish(c, gate.result)
      }),
    (err) => access.guarded(c, () => access.fail(c, err)),
  )
}

/** Settlement: settles the call's ledger key with its outcome, or frees it (see below). The view waits for the write. */
export function ledgerEnd(c: Call): void {
  const x = access.extras(c)
  const ticket = x?.ticket
  if (x === undefined || ticket === undefined) return
  x.ticket = undefined
  const host = access.host(c)
  const entry = access.entry(c)
  const bodyActive = (access.flags(c) & BODY_ACTIVE) !== 0
  const result = access.result(c)
  // an idempotent tool's retryable failure, its body finished (the last attempt of `retry`),
  // frees the key, so a retry with it runs again: the rule toolwire's own retries follow. A
  // tool not marked idempotent may have done its effect before failing: its failure is final
  // for the key. Settled while its body still runs (timed out, cancelled): what the body
  // does is not known, and the recorded outcome says why
  const settled =
    !bodyActive && entry.def.hints?.idempotent === true && result?.error()?.retryable === true
      ? host.ledgerRelease(ticket, c.callId, entry.name)
      : host.ledgerSettle(ticket, bodyActive ? interruptedOutcomeResult(result) : access.canonicalResult(c), c.callId, entry.name)
  waitFor(x, settled)
}

/**
 * Settlement with a store and an evidence store (in place of `ledgerEnd` and `evidence`): where
 * both would write (a call that ran settles its key) and the evidence store is the store's own
 * evidence half with `settleWithEvidence`, the key's settlement and the evidence record in one
 * commit, reported as the two report; otherwise the two stages. The view waits for the write.
 */
export function ledgerEndWithEvidence(c: Call): void {
  const x = access.extras(c)
  const ticket = x?.ticket
  const host = access.host(c)
  const settle = host.awaitEvidence ? settlerOf(host.evidence) : undefined
  const flags = access.flags(c)
  const bodyActive = (flags & BODY_ACTIVE) !== 0
  // one commit only where the two stages would both write: a settle (not a release, see
  // `ledgerEnd`) of a call that ran
  if (
    x === undefined || ticket === undefined || settle === undefined || (flags & RAN) === 0 ||
    (!bodyActive && access.entry(c).def.hints?.idempotent === true && access.result(c)?.error()?.retryable === true)
  ) {
    ledgerEnd(c)
    evidence(c)
    return
  }
  const result = access.canonicalResult(c)
  let record: EvidenceRecord
  try {
    record = evidenceRecordOf(c, result, access.clock(c))
  } catch (err) {
    evidenceFailed(c, err)
    ledgerEnd(c)
    return
  }
  x.ticket = undefined
  const written = settleWithEvidence(settle, ticket, bodyActive ? interruptedOutcomeResult(access.result(c)) : result, record, c.callId, access.entry(c).name, {
    reportError: (callId, tool, err) => host.reportError(callId, tool, err),
    evidenceFailed: (err) => evidenceFailed(c, err),
  })
  waitFor(x, written)
}
