/**
 * What the parts of the durable layer share (see ../durable.ts): the refusal codes, the
 * options, the host interface through which they reach their manager, and the context
 * each part is made with.
 */
import { STORE_TEXTS } from '../../core/texts.js'
import { refusalError, toolError, ToolResult } from '../../core/result.js'
import type { CallResult } from '../../core/view.js'
import type { JsonValue, PendingSchema } from '../../core/types.js'
import type { EvidenceStore } from '../../observe/evidence.js'
import type { TraceContext } from '../../observe/trace-context.js'
import type { ApprovalSecrets } from '../store/approval.js'
import type { ParkedBinding, StoreKeys } from '../store/codec.js'
import type { ParkedKind, ToolStore } from '../store/types.js'
import type { ToolEntry, ToolEventName, ToolEvents } from '../types.js'
import { principalKey, type Principal, type PrincipalRef } from '../../core/principal.js'

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
/** The refusal code of a confirmation approved on another instance whose run there has not finished (the caller waited for it long enough). */
export const CONFIRMATION_RUNNING = 'confirmation_running'
/** The error code of a call that began and never settled: it may or may not have happened. */
export const OUTCOME_UNKNOWN = 'outcome_unknown'

/** What the model and the app read of an unknown outcome. */
export const OUTCOME_UNKNOWN_MESSAGE: string = STORE_TEXTS.outcomeUnknown

/** Default lease of a run (an idempotency key in flight, a claimed parked call): 10 minutes. */
export const DEFAULT_LEASE_MS = 10 * 60_000

/** The durable options of a manager. */
export interface DurableOptions {
  readonly store: ToolStore
  /** AES-256 key (32 bytes, or their hex/base64 text) sealing parked inputs, so any instance can run them; or several, newest first (the first seals, any opens). */
  readonly storeKey?: StoreKeys
  /** HMAC secret (at least 16 bytes): `confirmId`s are signed tokens bound to their call; or several, newest first (the first signs, any verifies). */
  readonly approvalSecret?: ApprovalSecrets
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
  /** A suspension's pending request schema: the answer must match it. */
  readonly schema?: PendingSchema | undefined
  /** A suspension whose pending request asks for a confirmation (`tm.confirm` answers it through `resume`). */
  readonly confirmation?: true | undefined
  /** What the body kept for its `resume` (opaque). */
  readonly resumeState?: JsonValue | undefined
  /** The call's trace context (kept in this process only, not in the store): its continued run's span is parented to it here. */
  readonly traceContext?: TraceContext | undefined
  /** The principal that made the call: its continued run is that principal's. */
  readonly principal?: Principal | undefined
}

/** Who a continued run is: the principal that made the call (its run is theirs), and who approved it (only recorded). */
export interface RunAs {
  readonly principal?: Principal | undefined
  readonly approvedBy?: PrincipalRef | undefined
}

/** The owner key of a record made by `principal`; `undefined` for none (the operator, or a call made without one). */
export function ownerOf(principal: Principal | undefined): string | undefined {
  return principal === undefined ? undefined : principalKey(principal)
}

/**
 * Whether a request of `asker` (an owner key; `undefined` for the operator) finds a record of
 * `owner`: the operator finds every record, anyone finds a record without an owner, and a
 * principal finds its own. Anything else answers as an unknown id.
 */
export function finds(asker: string | undefined, owner: string | null | undefined): boolean {
  return asker === undefined || owner === null || owner === undefined || owner === asker
}

/** What the durable layer needs of its manager (no import of the manager or of a call). */
export interface DurableHost {
  /** The call parked under `id` by this process, if it still holds it. */
  local(id: string): LocalParked | undefined
  /** Forgets the local copy of a parked call (it was claimed or denied). */
  forget(id: string): void
  /** The registered tool of this name. */
  tool(name: string): ToolEntry | undefined
  /** The error result of an answer that does not match a suspension's `schema`, or `undefined`. */
  checkAnswer(schema: PendingSchema | undefined, answer: unknown): ToolResult | undefined
  /** Runs a claimed call: a confirmation through the gates after confirmation, a suspension through the tool's `resume` with `answer`. */
  run(
    kind: ParkedKind,
    tool: string,
    callId: string,
    input: unknown,
    timeoutMs: number | undefined,
    answer: unknown,
    idempotencyKey: string | undefined,
    traceContext?: TraceContext,
    resumeState?: JsonValue,
    as?: RunAs,
  ): Promise<CallResult>
  /** The view of a call settled without running (a refusal or an unknown outcome), with its events (emitted before this returns). */
  early(tool: string, callId: string | undefined, result: ToolResult): Promise<CallResult>
  /** Runs an undo of `tool`'s call and gives its view (`call_end` marked `undo`); `after(ok)` runs before the view is given. Never rejects. */
  runUndo(callId: string, tool: string, restore: () => unknown, after: (ok: boolean) => void | Promise<void>): Promise<CallResult>
  /** Reports a store failure (the `error` event). Never throws. */
  reportError(callId: string, tool: string, error: unknown): void
  /** Emits an event of the manager. Never throws. */
  emit<E extends ToolEventName>(event: E, payload: ToolEvents[E]): void
  /** Where the manager's evidence goes. */
  readonly evidence: EvidenceStore | undefined
}

/** What every part of the durable layer is made with. */
export interface DurableContext {
  readonly store: ToolStore
  readonly host: DurableHost
  readonly leaseMs: number
  /**
   * The input's hash as tokens and the store keep it (keyed with a store key or an approval
   * secret, else of the redacted input). @throws TypeError when the input has no JSON form.
   */
  hashInput(input: unknown, sensitive: ReadonlySet<string> | undefined): string
  /**
   * The input's hashes under the other keys of a rotation (the store keys, else the approval
   * secrets, after the first): what a ledger row written with one of them holds. Empty with one
   * key or none. @throws TypeError when the input has no JSON form.
   */
  otherHashes(input: unknown): readonly string[]
  /**
   * A parked row's hash (its id, tool, call id and input), as the row and a token keep it: keyed
   * as {@link hashInput} is, else of the redacted input. @throws TypeError when the input has no JSON form.
   */
  hashParked(id: string, binding: ParkedBinding, input: unknown, sensitive: ReadonlySet<string> | undefined): string
  /** {@link hashParked} under the other keys of a rotation (empty with one key or none). */
  otherParkedHashes(id: string, binding: ParkedBinding, input: unknown): readonly string[]
}

/** A refusal with this code and message. */
export function refused(code: string, message: string): ToolResult {
  return ToolResult.failed(refusalError(code, message))
}

/**
 * Why a run's outcome is unknown: its process stopped before it settled (`crash`: found by a
 * sweep, or by a retry after its lease ran out), or the call settled while its body still ran
 * (`timeout`, `cancelled`; `stopped` for any other end, such as an internal failure).
 */
export type UnknownCause = 'crash' | 'timeout' | 'cancelled' | 'stopped'

const UNKNOWN_TEXTS: Readonly<Record<UnknownCause, string>> = Object.freeze({
  crash: OUTCOME_UNKNOWN_MESSAGE,
  timeout: STORE_TEXTS.outcomeUnknownTimedOut,
  cancelled: STORE_TEXTS.outcomeUnknownCancelled,
  stopped: STORE_TEXTS.outcomeUnknownStopped,
})

/** The result of a call whose outcome is unknown, with the text of its cause (a crash by default). */
export function unknownOutcomeResult(cause: UnknownCause = 'crash'): ToolResult {
  return ToolResult.failed(toolError('other', UNKNOWN_TEXTS[cause], { code: OUTCOME_UNKNOWN, retryable: false }))
}

/**
 * What a keyed call's ledger key records when the call settled while its body still ran
 * (`settled`, its own result: a timeout, a cancellation): an unknown outcome that says so.
 */
export function interruptedOutcomeResult(settled: ToolResult | undefined): ToolResult {
  const cause: UnknownCause = settled?.isErrorKind('timeout') === true ? 'timeout' : settled?.isErrorKind('cancelled') === true ? 'cancelled' : 'stopped'
  return unknownOutcomeResult(cause)
}

/** The message of a thrown value, whatever it is. */
export function describe(err: unknown): string {
  try {
    return err instanceof Error ? err.message : String(err)
  } catch {
    return 'an unreadable error'
  }
}
