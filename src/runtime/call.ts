/**
 * One admitted call, from admission to its single settlement: the state machine that runs
 * its pipeline's start stages, its gates, the body with its timeout and retries, and the
 * settlement fan-out. The stage functions are in stages/*.ts (pipeline.ts composes them per
 * tool); they, the outcome callback (outcome.ts) and the body's `ctx` members (context.ts)
 * reach the call's `#private` state through {@link CALL_ACCESS}. A call depends on its
 * `CallHost`, never on the manager.
 */
import { isHelperResult, isModelResult } from '../core/helpers.js'
import { NotJsonError, toFrozenJson } from '../core/json.js'
import type { CallOptions, ToolContext, ToolLogLevel } from './tool.js'
import type { CallHost, CallMode, ContinuationBody, Pipeline, Settlement, ToolEntry } from './types.js'
import { cancelledResult, describeThrown, normalizeReturn, TOOL_FAILED_MESSAGE } from './normalize.js'
import { runOutcomeCallback } from './outcome.js'
import { log, registerUndo, reportProgress, traceContextOf } from './context.js'
import { resultData } from '../core/redact.js'
import { toolError, ToolResult } from '../core/result.js'
import type { TraceContext } from '../observe/trace-context.js'
import type { JsonValue } from '../core/types.js'
import { canonicalOf, okView, viewOf, type CallResult } from '../core/view.js'
import { containedController, watchSignal } from './signal.js'
import { MAX_TIMER_MS } from './validation-wait.js'
import type { BatchSink } from './batch.js'
import { newDiagnostics } from './settlement.js'
import { timedOutText } from '../core/texts.js'
import { replayedView, STORE_WAIT_MS } from './durable.js'
import type { Principal } from '../core/principal.js'
import { deliverWithin, settleAttempt, subscribe, thrownResult } from './attempt.js'
import { BODY_ACTIVE, CallExtras, CALLBACK_SETTLED, RAN, REPLAYED, RUNNING, SETTLED, type CallAccess } from './call-access.js'

/** Marks a call continuing after approval: no permission or confirmation gate again. */
export const CONTINUE_CONFIRMED = Symbol('confirmed')
export type Continuation = typeof CONTINUE_CONFIRMED | ContinuationBody | undefined

/**
 * How long a settled call without a timeout waits for the store writes its view depends on
 * (the ledger, a parked call, an undo payload, the evidence) before it hands the view out
 * anyway: a store that never answers must not hang the call. An `error` event says so. A call
 * with a timeout waits at most that timeout.
 */
export { STORE_WAIT_MS }

/** The `resolve` of the promise being constructed (no closure per call). */
let captured: ((value: CallResult | Settlement) => void) | undefined
const capture = (resolve: (value: CallResult | Settlement) => void): void => {
  captured = resolve
}

/** @internal The call's `#private` state for its stage modules (stages/*.ts), its outcome callback (outcome.ts) and its context's members (context.ts); written by the static block of `Call`. */
export let CALL_ACCESS: CallAccess<Call>

/** One admitted call, from admission to its single settlement. */
export class Call implements ToolContext {
  // Everything but the ToolContext members is #private: the body receives this object as
  // `ctx` (one allocation per call instead of two) and sees only its context.
  readonly callId: string
  readonly toolName: string
  /** The call's yes/no state, one bit each (SETTLED, RUNNING, ...): one field instead of seven. */
  #flags = CALLBACK_SETTLED
  #resolve: ((value: CallResult | Settlement) => void) | undefined = undefined
  /** The batch the view lands in instead (`startInto`), at `#index`. */
  #sink: BatchSink | undefined = undefined
  #index = 0
  /** `performance.now()` at the start until the call settles, then how long it took (one number field, not two). */
  #clock = performance.now()
  /** The next gate to run. */
  #gate = 0
  #attemptNo = 1
  /** What the body returned (helper `ok` unwrapped), for the raw contract. */
  #raw: unknown = undefined
  /** What the call settled with (`undefined`: a plain success, `okData`) and its view, for the settlement stages. */
  #result: ToolResult | undefined = undefined
  #view: CallResult | undefined = undefined
  /** What only some calls need (a timeout, a signal, a batch, a store...), made on first use. */
  #x: CallExtras | undefined = undefined
  readonly #host: CallHost
  readonly #entry: ToolEntry
  readonly #pipeline: Pipeline<Call>
  readonly #input: unknown
  readonly #options: CallOptions | undefined
  readonly #mode: CallMode
  readonly #continuation: Continuation
  /** The sequence number of a generated call id; 0 for a caller-chosen id. */
  readonly #seq: number

  constructor(
    host: CallHost,
    entry: ToolEntry,
    callId: string,
    input: unknown,
    options: CallOptions | undefined,
    mode: CallMode,
    continuation: Continuation,
    seq = 0,
  ) {
    this.callId = callId
    this.toolName = entry.name
    this.#host = host
    this.#entry = entry
    this.#pipeline = entry.pipeline as Pipeline<Call>
    this.#input = input
    this.#options = options
    this.#mode = mode
    this.#continuation = continuation
    this.#seq = seq
  }

  /** The call's extras, made on first use. */
  #more(): CallExtras {
    return (this.#x ??= new CallExtras())
  }

  /** @internal */
  static seqOf(call: Call): number {
    return call.#seq
  }

  /** @internal The call started at `startedAt` (`performance.now()`), before its input's asynchronous validation: its timeout and duration count from then. */
  static since(call: Call, startedAt: number): Call {
    call.#clock = startedAt
    return call
  }

  /** @internal A continued run of a suspension that kept `state` for it. */
  static resumedWith(call: Call, state: JsonValue | undefined): Call {
    if (state !== undefined) call.#more().resumed = state
    return call
  }

  /** @internal See {@link keepForResume}. */
  static keep(call: Call, state: JsonValue): void {
    call.#more().kept = toFrozenJson(state)
  }

  /** @internal See {@link resumeStateOf}. */
  static resumed(call: Call): JsonValue | undefined {
    return call.#x?.resumed
  }

  /** @internal Settles from outside the body (cancel, signal, timeout). */
  static interrupt(call: Call, result: ToolResult): void {
    call.#interrupt(result)
  }

  get signal(): AbortSignal {
    const x = this.#more()
    if (x.controller === undefined) {
      x.controller = containedController((err) => this.#host.reportError(this.callId, this.#entry.name, err))
      if ((this.#flags & SETTLED) !== 0) x.controller.abort()
    }
    return x.controller.signal
  }

  get attempt(): number {
    return this.#attemptNo
  }

  get principal(): Principal | undefined {
    return this.#options?.principal
  }

  get traceContext(): TraceContext | undefined {
    return traceContextOf(CALL_ACCESS, this)
  }

  registerUndo(restore: (() => unknown) | JsonValue): void {
    registerUndo(CALL_ACCESS, this, restore)
  }

  reportProgress(progress: number, total?: number, message?: string): void {
    reportProgress(CALL_ACCESS, this, progress, total, message)
  }

  log(level: ToolLogLevel, data: unknown): void {
    log(CALL_ACCESS, this, level, data)
  }

  start(): Promise<CallResult | Settlement> {
    const promise = new Promise<CallResult | Settlement>(capture)
    this.#resolve = captured
    captured = undefined
    this.#begin()
    return promise
  }

  /** Starts a call of a batch: its view lands in `sink` instead of a promise of its own. */
  startInto(sink: BatchSink, index: number): void {
    this.#sink = sink
    this.#index = index
    this.#begin()
  }

  #begin(): void {
    const start = this.#pipeline.start
    for (let i = 0; i < start.length; i++) start[i]!(this)
    const options = this.#options
    const signal = options?.signal
    if (signal !== undefined) {
      const x = this.#more()
      x.onAbort = () => this.#interrupt(cancelledResult('signal'))
      const early = watchSignal(signal, x.onAbort, (err) => this.#host.reportError(this.callId, this.#entry.name, err))
      if (early !== undefined) {
        x.onAbort = undefined
        this.#finish(early)
        return
      }
    }
    this.#host.track(this)
    const timeoutMs = options?.timeoutMs ?? this.#entry.timeoutMs
    // setTimeout fires at once for a delay it cannot represent: such a timeout never fires;
    // the time an asynchronous validation took (`Call.since`) counts against it
    if (timeoutMs !== undefined && timeoutMs <= MAX_TIMER_MS) {
      this.#more().timer = setTimeout(Call.#timedOut, Math.max(0, timeoutMs - (performance.now() - this.#clock)), this, timeoutMs)
    }
    this.#gate = this.#continuation === undefined ? 0 : this.#pipeline.continueAt
    this.#proceed()
  }

  static #timedOut(call: Call, timeoutMs: number): void {
    call.#interrupt(ToolResult.failed(toolError('timeout', timedOutText(timeoutMs))))
  }

  /**
   * Runs the next gate, or the body once every gate let the call through. Anything a
   * stage throws (a bug, or a hostile value that slipped through) settles the call as a
   * generic error instead of escaping.
   */
  #proceed(): void {
    if ((this.#flags & SETTLED) !== 0) return
    try {
      const gates = this.#pipeline.gates
      if (this.#gate < gates.length) gates[this.#gate++]!(this)
      else this.#runBody()
    } catch (err) {
      this.#panic(err)
    }
  }

  /** Runs a step of the call; a throw settles the call as a generic error. */
  #guarded(step: () => void): void {
    try {
      step()
    } catch (err) {
      this.#panic(err)
    }
  }

  /** Settles the call as a generic error after an unexpected throw in the pipeline. */
  #panic(err: unknown): void {
    this.#host.reportError(this.callId, this.#entry.name, err)
    this.#finish(ToolResult.failed(toolError('other', TOOL_FAILED_MESSAGE)))
  }

  // ---------------------------------------------------------------- the body

  /**
   * Starts the body (first attempt or a retry). The body counts as running, and keeps its
   * concurrency slot, until it returns or its promise settles, even when the call settled
   * before that (cancelled, timed out): at most `limit` bodies of a tool run at once.
   */
  #runBody(): void {
    this.#flags |= RAN
    this.#flags |= BODY_ACTIVE
    let ret: unknown
    try {
      const continuation = this.#continuation
      if (typeof continuation === 'function') {
        ret = continuation(this)
      } else if (this.#entry.outcome !== undefined) {
        ret = runOutcomeCallback(CALL_ACCESS, this, this.#entry.outcome)
      } else {
        ret = (this.#entry.def.run as (input: unknown, ctx: ToolContext) => unknown)(this.#input, this)
      }
    } catch (err) {
      this.#bodyDone()
      this.#guarded(() => this.#fail(err))
      return
    }
    if (typeof ret !== 'object' || ret === null) {
      this.#onValue(ret)
      return
    }
    subscribe(
      ret,
      (v) => this.#onValue(v),
      (e) => this.#onError(e),
    )
  }

  #onValue(value: unknown): void {
    this.#bodyDone()
    try {
      this.#complete(value)
    } catch (err) {
      this.#panic(err)
    }
  }

  #onError(err: unknown): void {
    this.#bodyDone()
    try {
      this.#fail(err)
    } catch (e) {
      this.#panic(e)
    }
  }

  /** The body's attempt returned or settled: a call that already settled gives its slot back now. */
  #bodyDone(): void {
    this.#flags &= ~BODY_ACTIVE
    if ((this.#flags & SETTLED) !== 0) this.#leaveSlot()
  }

  /** Gives the concurrency slot back (once); the limiter starts queued calls. */
  #leaveSlot(): void {
    if ((this.#flags & RUNNING) === 0) return
    this.#flags &= ~RUNNING
    this.#entry.limiter!.release()
  }

  #complete(value: unknown): void {
    if ((this.#flags & SETTLED) !== 0) return
    let result: ToolResult | undefined
    let data: JsonValue | undefined
    this.#raw = value
    try {
      // every read of the value is in here: a getter, a Proxy trap or a toJSON may throw
      const helper = isHelperResult(value)
      if (helper && value.status === 'ok') this.#raw = value.data
      // the common case, a plain value taken as ok(value), settles without building a ToolResult
      const plain = this.#x?.reported === undefined && !helper && !isModelResult(value) && !ToolResult.isBranded(value)
      // the returned data with its sensitive fields redacted (the raw value stays for tm.execute)
      if (plain) data = resultData(value, this.#entry.sensitiveKey)
      else result = normalizeReturn(value, this.#entry.untrusted, this.#entry.sensitive, this.#entry.sensitiveKey)
    } catch (err) {
      this.#host.reportError(this.callId, this.#entry.name, err)
      const message = err instanceof NotJsonError ? 'The tool returned a value JSON cannot carry.' : TOOL_FAILED_MESSAGE
      result = ToolResult.failed(toolError('other', message))
      const x = this.#x
      if (x?.reported !== undefined && x.diagnostics !== undefined) x.diagnostics.pipeline = describeThrown(err).message
    }
    const reported = this.#x?.reported
    if (reported !== undefined && !result!.isError()) result = ToolResult.failed(toolError('other', reported))
    const check = this.#pipeline.check
    if (check !== undefined && (result === undefined || result.isSuccess())) {
      this.#result = result
      this.#more().okData = data
      check(this)
    }
    if (result === undefined) this.#finish(undefined, data)
    else settleAttempt(CALL_ACCESS, this, result)
  }

  #fail(err: unknown): void {
    if ((this.#flags & SETTLED) !== 0) return
    this.#host.reportError(this.callId, this.#entry.name, err)
    const x = this.#x
    if (x?.reported !== undefined && x.diagnostics !== undefined) {
      x.diagnostics.pipeline = describeThrown(err).message
      return settleAttempt(CALL_ACCESS, this, ToolResult.failed(toolError('other', x.reported)))
    }
    settleAttempt(CALL_ACCESS, this, thrownResult(err))
  }

  // ---------------------------------------------------------------- settlement

  /** Settles from outside the body (cancel, signal, timeout) and aborts the tool's signal. */
  #interrupt(result: ToolResult): void {
    if ((this.#flags & SETTLED) !== 0) return
    this.#finish(result)
    try {
      this.#x?.controller?.abort(result.isErrorKind('timeout') ? new DOMException('The call timed out', 'TimeoutError') : undefined)
    } catch (err) {
      // an abort listener the tool added threw: the call is settled already
      this.#host.reportError(this.callId, this.#entry.name, err)
    }
  }

  /** Settles the call once: with `result`, or (no result) as a success with frozen `okData`. */
  #finish(settled: ToolResult | undefined, okData?: JsonValue): void {
    if ((this.#flags & SETTLED) !== 0) return
    this.#flags |= SETTLED
    const host = this.#host
    const entry = this.#entry
    const x = this.#x
    if (x?.timer !== undefined) clearTimeout(x.timer)
    if (x?.retryTimer !== undefined) clearTimeout(x.retryTimer)
    if (x?.onAbort !== undefined) {
      try {
        this.#options!.signal!.removeEventListener('abort', x.onAbort)
      } catch {
        // a signal-like object that throws: its listener is `once` and checks #settled
      }
    }
    host.untrack(this)
    if ((this.#flags & RUNNING) !== 0) {
      // a body still running keeps the slot until it returns or settles
      if ((this.#flags & BODY_ACTIVE) === 0) this.#leaveSlot()
    } else if (entry.limiter !== undefined) {
      entry.limiter.withdraw(this)
    }
    let view: CallResult
    try {
      view = settled === undefined ? okView(okData as JsonValue, this.callId, entry.untrusted) : viewOf(settled, this.callId)
    } catch (err) {
      // a result that cannot be shown (a bug, or a forged result) settles as a generic error
      host.reportError(this.callId, entry.name, err)
      settled = ToolResult.failed(toolError('other', TOOL_FAILED_MESSAGE))
      view = viewOf(settled, this.callId)
    }
    if ((this.#flags & REPLAYED) !== 0) view = replayedView(view)
    this.#result = settled
    this.#view = view
    this.#clock = performance.now() - this.#clock // from here on, the duration
    // the current pipeline's fan-out: a listener attached while the call ran hears its end
    const fanOut = (entry.pipeline as Pipeline<Call>).settle
    for (let i = 0; i < fanOut.length; i++) {
      try {
        fanOut[i]!(this)
      } catch (err) {
        // bookkeeping never keeps a call from settling
        host.reportError(this.callId, entry.name, err)
      }
    }
    const wait = this.#x?.wait
    if (wait === undefined) this.#deliver(view)
    else this.#deliverAfter(wait, view)
  }

  /** Delivers `view` once `wait` settles, or after the call's timeout (else {@link STORE_WAIT_MS}) with an `error` event. */
  #deliverAfter(wait: Promise<unknown>, view: CallResult): void {
    const timeoutMs = this.#options?.timeoutMs ?? this.#entry.timeoutMs
    const bound = timeoutMs !== undefined && timeoutMs < STORE_WAIT_MS ? timeoutMs : STORE_WAIT_MS
    const late = (): void => this.#host.reportError(this.callId, this.#entry.name, new Error(`toolwire: the store did not answer within ${bound} ms; the call's view is handed out without waiting for it`))
    deliverWithin(wait, bound, () => this.#deliver(view), late)
  }

  /** Hands the settled view (or settlement) to the caller. */
  #deliver(view: CallResult): void {
    if (this.#sink !== undefined) {
      this.#sink.put(this.#index, view)
    } else if (this.#mode === 'view') {
      this.#resolve!(view)
    } else {
      const result = this.#canonicalResult()
      this.#resolve!({ view, result, raw: this.#raw, ran: (this.#flags & RAN) !== 0, reported: this.#x?.reported, diagnostics: (this.#more().diagnostics ??= newDiagnostics()) })
    }
  }

  /** The canonical result the call settled with (built on first use for a plain success). */
  #canonicalResult(): ToolResult {
    return this.#result ?? (this.#more().canonical ??= canonicalOf(this.#view!)!)
  }

  static {
    CALL_ACCESS = Object.freeze({
      host: (c) => c.#host,
      entry: (c) => c.#entry,
      input: (c) => c.#input,
      options: (c) => c.#options,
      continued: (c) => c.#continuation !== undefined,
      flags: (c) => c.#flags,
      addFlags: (c, bits) => {
        c.#flags |= bits
      },
      extras: (c) => c.#x,
      more: (c) => c.#more(),
      clock: (c) => c.#clock,
      result: (c) => c.#result,
      view: (c) => c.#view,
      raw: (c) => c.#raw,
      setRaw: (c, raw) => {
        c.#raw = raw
      },
      canonicalResult: (c) => c.#canonicalResult(),
      pipeline: (c) => c.#pipeline,
      bodyContinuation: (c) => typeof c.#continuation === 'function',
      nextAttempt: (c) => {
        c.#attemptNo++
      },
      runBody: (c) => c.#runBody(),
      proceed: (c) => c.#proceed(),
      finish: (c, result) => c.#finish(result),
      fail: (c, err) => c.#fail(err),
      guarded: (c, step) => c.#guarded(step),
      diagnostics: (c) => (c.#more().diagnostics ??= newDiagnostics()),
      settled: (c) => (c.#flags & SETTLED) !== 0,
      callbackSettled: (c) => (c.#flags & CALLBACK_SETTLED) !== 0,
      setCallbackSettled: (c, settled) => {
        if (settled) c.#flags |= CALLBACK_SETTLED
        else c.#flags &= ~CALLBACK_SETTLED
      },
      reported: (c) => c.#x?.reported,
      setReported: (c, message) => {
        c.#more().reported = message
      },
      reportLate: (c, message) => c.#host.emit('late_report', { callId: c.callId, tool: c.#entry.name, message }),
    } satisfies CallAccess<Call>)
  }
}
