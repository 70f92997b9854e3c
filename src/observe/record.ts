/**
 * The event record of one settled call: the same fields and bytes as the Rust
 * core's `toolwire::record::CallRecord` (shared vectors in `test/vectors/records/`).
 */
import type { ToolResult } from '../core/result.js'
import type { StatusName, ToolErrorKind } from '../core/types.js'
import { statusNameOf } from '../core/status.js'

/** One settled call, for logs and audit. Serialize with `JSON.stringify` to get the canonical bytes. */
export interface CallRecord {
  readonly call_id: string
  readonly tool: string
  readonly status: StatusName
  readonly error_kind?: ToolErrorKind
  readonly refusal_code?: string
  /** RFC 3339 UTC with milliseconds. */
  readonly started_at: string
  readonly ended_at: string
  /** Whole milliseconds, never negative (a clock that went backwards gives 0). */
  readonly duration_ms: number
  /** 1 for the first attempt. */
  readonly attempt: number
  readonly undo_available: boolean
  /** Who called: the principal's subject (an OAuth `sub`); absent when the caller is unknown. */
  readonly subject?: string
}

/**
 * Builds the record of a settled call from integer Unix-millisecond timestamps. `subject`
 * (the caller's principal subject) is written last, and only when given.
 */
export function callRecord(
  callId: string,
  tool: string,
  result: ToolResult,
  startedAtMs: number,
  endedAtMs: number,
  attempt: number,
  undoAvailable: boolean,
  subject?: string,
): CallRecord {
  const record: Record<string, unknown> = { call_id: callId, tool, status: statusNameOf(result.disposition()) }
  const error = result.error()
  if (error !== undefined) record.error_kind = error.kind
  const code = result.refusal()?.code
  if (code !== undefined) record.refusal_code = code
  record.started_at = new Date(startedAtMs).toISOString()
  record.ended_at = new Date(endedAtMs).toISOString()
  record.duration_ms = Math.max(0, Math.trunc(endedAtMs) - Math.trunc(startedAtMs))
  record.attempt = attempt
  record.undo_available = undoAvailable
  if (subject !== undefined) record.subject = subject
  return Object.freeze(record) as unknown as CallRecord
}
