/**
 * What the stage modules (`stages/*.ts`) and the outcome callback (outcome.ts) see of a call:
 * its flag bits, its extras, and the {@link CallAccess} through which they read and drive the
 * call's `#private` state. The object is `CALL_ACCESS` in call.ts, written once by `Call`'s
 * static block: one module-level object, nothing allocated per call, and nothing of the
 * call's state on the `ctx` its body receives. Generic over the call's type, so that this
 * module imports nothing of call.ts (no cycle, type edges included).
 */
import type { OutcomeAccess, OutcomeDiagnostics } from './outcome.js'
import type { CallOptions } from './tool.js'
import type { CallHost, LedgerTicket, Pipeline, ToolEntry } from './types.js'
import type { ToolResult } from '../core/result.js'
import type { JsonValue } from '../core/types.js'
import type { CallResult } from '../core/view.js'
import type { CallTracer, SpanParent } from '../observe/telemetry.js'

// the bits of a call's flags
/** The call settled. */
export const SETTLED = 1
/** Holds one of the tool's concurrency slots (from the body's start until the call settled and no body runs). */
export const RUNNING = 2
/** A body attempt has started and not yet returned or settled its promise. */
export const BODY_ACTIVE = 4
/** The breaker admitted the call: its settlement is the breaker's verdict. */
export const ADMITTED_BY_BREAKER = 8
/** A body attempt started. */
export const RAN = 16
/** No outcome callback is running: its reports are inert. */
export const CALLBACK_SETTLED = 32
/** The call settled with a recorded result (an idempotency key settled before). */
export const REPLAYED = 64

type Span = ReturnType<CallTracer['start']>

/**
 * The state only some calls need: kept out of `Call` so that a plain call (no timeout,
 * signal, batch, outcome callback, span or store) allocates and initializes less.
 */
export class CallExtras {
  controller: AbortController | undefined = undefined
  timer: ReturnType<typeof setTimeout> | undefined = undefined
  retryTimer: ReturnType<typeof setTimeout> | undefined = undefined
  onAbort: (() => void) | undefined = undefined
  /** The failure an outcome callback reported, and its diagnostics. */
  reported: string | undefined = undefined
  diagnostics: OutcomeDiagnostics | undefined = undefined
  span: Span = undefined
  /** The context the span started under (for the trace context the body forwards). */
  spanParent: SpanParent | undefined = undefined
  /** A plain success's frozen data, while the output check reads it. */
  okData: JsonValue | undefined = undefined
  canonical: ToolResult | undefined = undefined
  /** The ledger key this call holds (with a store). */
  ticket: LedgerTicket | undefined = undefined
  /** Store writes the view waits for (parking, the ledger), so that what it hands out is already durable. */
  wait: Promise<unknown> | undefined = undefined
  /** The input, redacted, as the call started: its evidence record says what the model sent, whatever the body did to its input. */
  evidenceInput: JsonValue | undefined = undefined
  /** What the body kept for its resume (`keepForResume`), parked with its suspension. */
  kept: JsonValue | undefined = undefined
  /** What the suspension this run continues kept (`resumeStateOf`). */
  resumed: JsonValue | undefined = undefined
}

/** Adds a store write to those the call's view waits for. */
export function waitFor(x: CallExtras, written: Promise<unknown>): void {
  x.wait = x.wait === undefined ? written : Promise.all([x.wait, written])
}

/** @internal A call's `#private` state, for its stage modules and its outcome callback (`CALL_ACCESS` in call.ts). */
export interface CallAccess<C> extends OutcomeAccess<C> {
  readonly host: (call: C) => CallHost
  readonly entry: (call: C) => ToolEntry
  readonly input: (call: C) => unknown
  readonly options: (call: C) => CallOptions | undefined
  /** Whether the call continues an approved or suspended one (the gates before `continueAt` passed). */
  readonly continued: (call: C) => boolean
  /** The call's flag bits (`SETTLED`, `RUNNING`, ...). */
  readonly flags: (call: C) => number
  /** Sets `bits` in the call's flags. */
  readonly addFlags: (call: C, bits: number) => void
  /** The call's extras, if made. */
  readonly extras: (call: C) => CallExtras | undefined
  /** The call's extras, made on first use. */
  readonly more: (call: C) => CallExtras
  /** `performance.now()` at the start until the call settles, then how long it took. */
  readonly clock: (call: C) => number
  /** What the call settled with (`undefined`: a plain success), or, during the output check, what the body returned. */
  readonly result: (call: C) => ToolResult | undefined
  /** The settled view. */
  readonly view: (call: C) => CallResult | undefined
  /** What the body returned (helper `ok` unwrapped), for the raw contract and evidence. */
  readonly raw: (call: C) => unknown
  readonly setRaw: (call: C, raw: unknown) => void
  /** The canonical result the call settled with (built on first use for a plain success). */
  readonly canonicalResult: (call: C) => ToolResult
  /** The pipeline the call was admitted with. */
  readonly pipeline: (call: C) => Pipeline<C>
  /** Whether the call continues a suspension with a body of its own (`resume`): not retried. */
  readonly bodyContinuation: (call: C) => boolean
  /** Counts the next attempt (`ctx.attempt`). */
  readonly nextAttempt: (call: C) => void
  /** Starts the body (first attempt or a retry). */
  readonly runBody: (call: C) => void
  /** Runs the next gate, or the body once every gate let the call through. */
  readonly proceed: (call: C) => void
  /** Settles the call once with `result`. */
  readonly finish: (call: C, result: ToolResult) => void
  /** Settles the call (or retries it) after a throw of the tool's. */
  readonly fail: (call: C, err: unknown) => void
  /** Runs a step of the call; a throw settles the call as a generic error. */
  readonly guarded: (call: C, step: () => void) => void
}
