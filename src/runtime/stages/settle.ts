/**
 * The settlement fan-out of a call's pipeline (pipeline.ts composes it; the ledger's stage is
 * in ledger.ts): metrics, the breaker's verdict, the span's end, the evidence record and the
 * `call_end` event; and the output check (development), run before a successful body settles.
 * Each runs once the call settled; a throw is reported and never keeps the call from settling.
 */
import { CALL_ACCESS as access, type Call } from '../call.js'
import { ADMITTED_BY_BREAKER, RAN, waitFor } from '../call-access.js'
import { toFrozenJson } from '../../core/json.js'
import { redact } from '../../core/redact.js'
import type { ToolResult } from '../../core/result.js'
import type { JsonValue } from '../../core/types.js'
import type { Issue } from '../../core/validate.js'
import { evidenceIdentity, type EvidenceRecord, type EvidenceStore } from '../../observe/evidence.js'
import { callRecord } from '../../observe/record.js'
import { describeThrown, isThenable, when } from '../normalize.js'
import { principalRef } from '../../core/principal.js'
import { outcomeStatus } from '../settlement.js'
import type { ContinuedOptions } from '../types.js'

/**
 * Wall-clock start and end (Unix ms) of a call that took `durationMs` and ends now.
 * The start is derived from the end so that it never follows it: `performance.timeOrigin`
 * drifts from `Date.now()` in a long-lived process.
 */
export function wallSpan(durationMs: number): { startMs: number; endMs: number } {
  const endMs = Date.now()
  return { startMs: Math.floor(endMs - durationMs), endMs }
}

/** Counts the call's outcome and duration. */
export function metricsEnd(c: Call): void {
  const host = access.host(c)
  const settled = access.result(c)
  if (settled === undefined) host.metrics.succeeded(access.entry(c).metricsId, access.clock(c))
  else host.metrics.settled(access.entry(c).metricsId, settled, access.clock(c))
}

/** The breaker's verdict on a call it admitted: cancelled and invalid calls are neutral. */
export function breakerEnd(c: Call): void {
  if ((access.flags(c) & ADMITTED_BY_BREAKER) === 0) return
  const settled = access.result(c)
  const neutral = settled !== undefined && (settled.isErrorKind('cancelled') || settled.isErrorKind('invalid_args'))
  access.entry(c).breaker!.settle(neutral ? 'neutral' : settled !== undefined && settled.isError() ? 'failed' : 'healthy')
}

/** Ends the call's span. */
export function spanEnd(c: Call): void {
  const span = access.extras(c)?.span
  if (span === undefined) return
  const host = access.host(c)
  const entry = access.entry(c)
  try {
    host.tracer!.end(span, access.canonicalResult(c), entry.sensitive)
  } catch (err) {
    host.reportError(c.callId, entry.name, err)
  }
}

/** Appends the evidence record of a call whose body ran. */
export function evidence(c: Call): void {
  const store = access.host(c).evidence
  if (store !== undefined && (access.flags(c) & RAN) !== 0) writeEvidence(c, store, access.canonicalResult(c), access.clock(c))
}

/** The evidence record of a call that settled with `result` after `durationMs` (sensitive fields redacted). Throws when it cannot be made. */
export function evidenceRecordOf(c: Call, result: ToolResult, durationMs: number): EvidenceRecord {
  const entry = access.entry(c)
  let raw: JsonValue | null = null
  try {
    raw = toFrozenJson(access.raw(c))
  } catch {
    raw = null
  }
  const status = outcomeStatus(result)
  const { startMs, endMs } = wallSpan(durationMs)
  const options = access.options(c)
  return {
    callId: c.callId,
    tool: entry.name,
    input: access.extras(c)?.evidenceInput ?? redact(access.input(c), entry.sensitive),
    result: redact(raw, entry.sensitive),
    status,
    startedAt: new Date(startMs).toISOString(),
    endedAt: new Date(endMs).toISOString(),
    ...evidenceIdentity(options?.principal, (options as ContinuedOptions | undefined)?.approvedBy),
  }
}

/** Reports that the call's evidence record was not written: an `evidence_error` event. */
export function evidenceFailed(c: Call, error: unknown): void {
  access.host(c).emit('evidence_error', { callId: c.callId, tool: access.entry(c).name, message: describeThrown(error).message, error })
}

/**
 * Appends the call's evidence record to `store`; a failure is an `evidence_error` event. With
 * evidence in the durable store (`awaitEvidence`), the view is handed out once the record is written.
 */
export function writeEvidence(c: Call, store: EvidenceStore, result: ToolResult, durationMs: number): void {
  const host = access.host(c)
  const fail = (error: unknown): void => evidenceFailed(c, error)
  try {
    const written = store.append(evidenceRecordOf(c, result, durationMs))
    if (host.awaitEvidence && written instanceof Promise) {
      // evidence in the durable store: the view is handed out once its record is written
      waitFor(access.more(c), written.then(() => undefined, fail))
    } else when(written, () => undefined, fail)
  } catch (err) {
    fail(err)
  }
}

/** The `call_end` event with the call record. */
export function callEnd(c: Call): void {
  const host = access.host(c)
  if (!host.hasListeners('call_end')) return
  const tool = access.entry(c).name
  const result = access.canonicalResult(c)
  const view = access.view(c)!
  const durationMs = access.clock(c)
  const { startMs, endMs } = wallSpan(durationMs)
  const principal = access.options(c)?.principal
  const record = callRecord(c.callId, tool, result, startMs, endMs, c.attempt, host.canUndo(c.callId), principal?.subject)
  const payload = { callId: c.callId, tool, status: view.status, statusName: result.statusName(), durationMs, result, view, record }
  host.emit('call_end', principal === undefined ? payload : { ...payload, principal: principalRef(principal) })
}

/** After a successful body, before it settles: the output schema check, a development aid that never changes the outcome. */
export function outputCheck(c: Call): void {
  const host = access.host(c)
  const entry = access.entry(c)
  const result = access.result(c)
  try {
    const issues: unknown = entry.validateOutput!(result === undefined ? access.extras(c)?.okData : (result.data() ?? result.text()))
    const report = (list: unknown): void => {
      if (list !== undefined) host.emit('output_invalid', { callId: c.callId, tool: entry.name, issues: list as readonly Issue[] })
    }
    // an asynchronous Standard Schema reports when its check settles; the call does not wait for it
    if (isThenable(issues)) when(issues, report, (err) => host.reportError(c.callId, entry.name, err))
    else report(issues)
  } catch (err) {
    host.reportError(c.callId, entry.name, err)
  }
}
