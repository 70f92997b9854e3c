/**
 * Every status vocabulary of one call's outcome, and every mapping between them, in one
 * place. The core's tables (`coreTables()`) give the dispositions, their telemetry
 * names, the error kinds and the pending kinds; the table below adds the names each
 * audience reads:
 *
 * | outcome | disposition (wire `status`) | status name (telemetry, records, metrics) | app view `status` | outcome `status` | helper `status` | `error.type` |
 * |---|---|---|---|---|---|---|
 * | success | `success` | `success` | `ok` | `succeeded` | `ok` | — |
 * | invalid arguments | `error` (`invalid_args`) | `error` | `invalid` | `invalid` | `invalid` | `invalid_args` |
 * | cancelled | `error` (`cancelled`) | `error` | `cancelled` | `cancelled` | `cancelled` | `cancelled` |
 * | timed out | `error` (`timeout`) | `error` | `error` | `timed_out` | `error` | `timeout` |
 * | any other error | `error` (its kind) | `error` | `error` | `failed` | `error` | the kind |
 * | refused | `refused` | `denied` | `refused` | `denied` | `refused` | `denied` |
 * | skipped | `skipped` | `skipped` | `refused` (code `skipped`) | `skipped` | — | `skipped` |
 * | waiting for confirmation | `pending` (`confirmation`) | `pending` | `needs_confirmation` | `pending` | — | `pending` |
 * | waiting for input or sign-in | `pending` | `pending` | `pending` | `pending` | — | `pending` |
 */
import { coreTables } from './native.js'
import type { Disposition, PendingKind, StatusName, ToolErrorKind } from './types.js'

const tables = coreTables()

/** The wire format version this build reads and writes (from the core). */
export const WIRE_VERSION: number = tables.wireVersion

/** The dispositions in the core's order (the metrics batch's status codes are their indexes). */
export const DISPOSITIONS: readonly Disposition[] = Object.freeze(tables.dispositions.map((d) => d.status as Disposition))

const STATUS_NAMES = new Map<string, StatusName>(tables.dispositions.map((d) => [d.status, d.statusName as StatusName]))
const STATUS_CODES = new Map<string, number>(tables.dispositions.map((d, i) => [d.status, i]))

/** The stable telemetry name of a disposition: success, error, denied, skipped or pending. */
export function statusNameOf(disposition: Disposition): StatusName {
  return STATUS_NAMES.get(disposition) as StatusName
}

/** The metrics batch's status code of a disposition (its index in the core's table). */
export function statusCodeOf(disposition: Disposition): number {
  return STATUS_CODES.get(disposition) as number
}

const DEFAULT_RETRYABLE = new Map<string, boolean>(tables.errorKinds.map((k) => [k.name, k.retryable]))

/** The error kinds the core knows, in wire order (the metrics batch's error codes are their indexes). */
export const ERROR_KINDS: readonly ToolErrorKind[] = Object.freeze(tables.errorKinds.map((k) => k.name as ToolErrorKind))

/** Whether `kind` names one of the core's error kinds. */
export function isToolErrorKind(kind: unknown): kind is ToolErrorKind {
  return typeof kind === 'string' && DEFAULT_RETRYABLE.has(kind)
}

/** The core's default retryability of an error kind. */
export function defaultRetryable(kind: ToolErrorKind): boolean {
  return DEFAULT_RETRYABLE.get(kind) === true
}

/** The pending kinds the core knows. */
export const PENDING_KINDS: readonly PendingKind[] = Object.freeze(tables.pendingKinds as PendingKind[])

const PENDING_KIND_SET = new Set<string>(tables.pendingKinds)

/** Whether `kind` names one of the core's pending kinds. */
export function isPendingKind(kind: unknown): kind is PendingKind {
  return typeof kind === 'string' && PENDING_KIND_SET.has(kind)
}

/** The status of an application view (`CallResult['status']`). */
export type ViewStatus = 'ok' | 'invalid' | 'refused' | 'needs_confirmation' | 'pending' | 'cancelled' | 'error'

/** The status of an execution outcome (`ToolExecutionOutcome['status']`). */
export type OutcomeStatus = 'succeeded' | 'failed' | 'cancelled' | 'timed_out' | 'denied' | 'invalid' | 'pending' | 'skipped'

/** The status of a helper result a tool returns (`ok()`, `invalid()`, `refuse()`, `cancelled()`, `errorResult()`). */
export type HelperStatus = 'ok' | 'invalid' | 'refused' | 'cancelled' | 'error'

/** One outcome in every vocabulary (a row of the table above). */
export interface OutcomeNames {
  readonly disposition: Disposition
  readonly view: ViewStatus
  readonly outcome: OutcomeStatus
  /** The helper that gives this outcome, if one does. */
  readonly helper: HelperStatus | undefined
}

function row(disposition: Disposition, view: ViewStatus, outcome: OutcomeStatus, helper?: HelperStatus): OutcomeNames {
  return Object.freeze({ disposition, view, outcome, helper })
}

const SUCCESS = row('success', 'ok', 'succeeded', 'ok')
const INVALID = row('error', 'invalid', 'invalid', 'invalid')
const CANCELLED = row('error', 'cancelled', 'cancelled', 'cancelled')
const TIMED_OUT = row('error', 'error', 'timed_out', 'error')
const FAILED = row('error', 'error', 'failed', 'error')
const REFUSED = row('refused', 'refused', 'denied', 'refused')
const SKIPPED = row('skipped', 'refused', 'skipped')
const CONFIRMATION = row('pending', 'needs_confirmation', 'pending')
const PENDING = row('pending', 'pending', 'pending')

/** What `outcomeNamesOf` reads of a result: a canonical `ToolResult` has all of it. */
export interface OutcomeLike {
  disposition(): Disposition
  error(): { readonly kind: ToolErrorKind } | undefined
  pendingRequest(): { readonly kind: PendingKind } | undefined
}

/** The names of `result`'s outcome in every vocabulary. */
export function outcomeNamesOf(result: OutcomeLike): OutcomeNames {
  switch (result.disposition()) {
    case 'success':
      return SUCCESS
    case 'refused':
      return REFUSED
    case 'skipped':
      return SKIPPED
    case 'pending':
      return result.pendingRequest()?.kind === 'confirmation' ? CONFIRMATION : PENDING
    case 'error':
      switch (result.error()?.kind) {
        case 'invalid_args':
          return INVALID
        case 'cancelled':
          return CANCELLED
        case 'timeout':
          return TIMED_OUT
        default:
          return FAILED
      }
  }
}

/** The outcome status of a result, as outcomes and evidence report it. */
export function outcomeStatusOf(result: OutcomeLike): OutcomeStatus {
  return outcomeNamesOf(result).outcome
}

/** The disposition and error kind a helper status stands for (`undefined` kind: not an error). */
export function dispositionOfHelper(status: HelperStatus): { readonly disposition: Disposition; readonly kind?: ToolErrorKind } {
  switch (status) {
    case 'ok':
      return SUCCESS_OF_HELPER
    case 'invalid':
      return INVALID_OF_HELPER
    case 'cancelled':
      return CANCELLED_OF_HELPER
    case 'refused':
      return REFUSED_OF_HELPER
    case 'error':
      return ERROR_OF_HELPER
  }
}

const SUCCESS_OF_HELPER = Object.freeze({ disposition: 'success' as const })
const INVALID_OF_HELPER = Object.freeze({ disposition: 'error' as const, kind: 'invalid_args' as const })
const CANCELLED_OF_HELPER = Object.freeze({ disposition: 'error' as const, kind: 'cancelled' as const })
const REFUSED_OF_HELPER = Object.freeze({ disposition: 'refused' as const })
const ERROR_OF_HELPER = Object.freeze({ disposition: 'error' as const, kind: 'other' as const })

/** What `dispositionOfView` reads of an application view (a live one or a copy). */
export interface ViewLike {
  readonly status?: unknown
  readonly code?: unknown
  readonly disposition?: unknown
}

/** Whether a view is the view of a skipped call: `refused` with code `skipped`, unless it says `disposition: 'refused'`. */
export function isSkippedView(view: ViewLike): boolean {
  return view.status === 'refused' && view.code === 'skipped' && view.disposition !== 'refused'
}

/** A view status stands for one disposition (a `refused` view of a skipped call aside). */
const DISPOSITION_OF_VIEW: ReadonlyMap<unknown, Disposition> = new Map(
  [SUCCESS, INVALID, CANCELLED, FAILED, REFUSED, CONFIRMATION, PENDING].map((names) => [names.view, names.disposition]),
)

/** The disposition an application view stands for, or `undefined` when `view` is not one. */
export function dispositionOfView(view: ViewLike): Disposition | undefined {
  if (isSkippedView(view)) return 'skipped'
  return DISPOSITION_OF_VIEW.get(view.status)
}

/** The span's `error.type` of a result: the error kind, or the status name of another non-success (`denied`, `skipped`, `pending`). */
export function errorTypeOf(result: OutcomeLike): string | undefined {
  const disposition = result.disposition()
  if (disposition === 'success') return undefined
  return disposition === 'error' ? result.error()!.kind : statusNameOf(disposition)
}

/** The label a wire without an error flag puts before a non-success text. */
export type DispositionLabel = 'Error' | 'Refused' | 'Skipped' | 'Pending'

const LABELS: { readonly [d in Disposition]: DispositionLabel | undefined } = Object.freeze({
  success: undefined,
  error: 'Error',
  refused: 'Refused',
  skipped: 'Skipped',
  pending: 'Pending',
})

/** The label a wire without an error flag puts before a non-success text; `undefined` for success. */
export function dispositionLabel(disposition: Disposition): DispositionLabel | undefined {
  return LABELS[disposition]
}
