/**
 * The idempotency ledger's two stages (with a durable store): the gate, last before the
 * body, records the call as in flight or settles it without running (a replay, a key in
 * use); the settlement stage settles or frees the key the call holds.
 */
import { CALL_ACCESS as access, type Call } from '../call.js'
import { BODY_ACTIVE, REPLAYED, SETTLED, waitFor } from '../call-access.js'
import { interruptedOutcomeResult } from '../durable.js'
import { when } from '../normalize.js'
import type { LedgerGate } from '../types.js'

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
