/**
 * One admitted call, from admission to its single settlement, and the stage functions
 * its pipeline is composed of (pipeline.ts composes them per tool): the start stages, the
 * gates (permission, confirmation, breaker, concurrency), the body with its timeout and
 * retries, and the settlement fan-out (metrics, breaker, parking, span, evidence, events).
 * A call depends on its `CallHost`, never on the manager.
 */
import { evidenceIdentity, type EvidenceStore } from '../observe/evidence.js'
import { isHelperResult, isModelResult } from '../core/helpers.js'
import { NotJsonError, toFrozenJson } from '../core/json.js'
import { TOOL_LOG_LEVELS, type CallOptions, type PermissionDecision, type ToolContext, type ToolDefinition, type ToolLogLevel } from './tool.js'
import type { CallHost, CallMode, ContinuationBody, ContinuedOptions, LedgerGate, LedgerTicket, Pipeline, Settlement, Stage, SuspensionExtras, ToolEntry, ToolEvents } from './types.js'
import { cancelledResult, describeThrown, fromHelper, isThenable, normalizeReturn, safeGet, TOOL_FAILED_MESSAGE, when } from './normalize.js'
import type { Issue } from '../core/validate.js'
import type { OutcomeDiagnostics, OutcomeInvocation } from './outcome.js'
import { callRecord } from '../observe/record.js'
import { redact, redactChanges, resultData } from '../core/redact.js'
import { isToolErrorKind, refusalError, toolError, ToolResult } from '../core/result.js'
import type { CallTracer, SpanParent } from '../observe/telemetry.js'
import type { TraceContext } from '../observe/trace-context.js'
import type { FieldChange, JsonValue } from '../core/types.js'
import { canonicalOf, okView, viewOf, type CallResult } from '../core/view.js'
import { containedController } from './signal.js'
import { MAX_TIMER_MS } from './validation-wait.js'
import type { BatchSink } from './batch.js'
import { newDiagnostics, outcomeStatus } from './settlement.js'
import { circuitOpenText, concurrencyLimitText, INSUFFICIENT_SCOPE, insufficientScopeText, invalidOptionsText, REFUSALS, REQUEST_ID_IN_USE, requestIdInUseText, timedOutText, toolFailedText } from '../core/texts.js'
import { interruptedOutcomeResult, replayedView, STORE_WAIT_MS } from './durable.js'
import { missingScopes, principalRef, type Principal } from './principal.js'

/** Marks a call continuing after approval: no permission or confirmation gate again. */
export const CONTINUE_CONFIRMED = Symbol('confirmed')
export type Continuation = typeof CONTINUE_CONFIRMED | ContinuationBody | undefined

/** The stage functions pipelines are composed of (see pipeline.ts). Each is used by every tool that needs it. */
export interface CallStages {
  /** Start: counts the call as started (in-flight gauge). */
  readonly metricsStart: Stage<Call>
  /** Start: the `call_start` event. */
  readonly callStart: Stage<Call>
  /** Start: the call's span. */
  readonly spanStart: Stage<Call>
  /** Start, while the tracer has no provider: asks now and then whether one was registered (then starts the span). */
  readonly spanProbe: Stage<Call>
  /** Gate: the scopes a caller's principal needs (first: a call without them runs no hook). */
  readonly scopes: Stage<Call>
  /** Gate: the permission hooks. */
  readonly permission: Stage<Call>
  /** Gate: the confirmation rule (deferred mode); parks the call when confirmation is needed. */
  readonly confirmation: Stage<Call>
  /** Gate: the circuit breaker. */
  readonly breaker: Stage<Call>
  /** Gate: the tool's concurrency limiter. */
  readonly concurrency: Stage<Call>
  /** Gate (with a store), last before the body: the idempotency ledger. */
  readonly ledger: Stage<Call>
  /** After a successful body: the output schema check (development). */
  readonly outputCheck: Stage<Call>
  /** Settlement: metrics. */
  readonly metricsEnd: Stage<Call>
  /** Settlement (with a store): settles the call's ledger key. */
  readonly ledgerEnd: Stage<Call>
  /** Settlement: the breaker's verdict on an admitted call. */
  readonly breakerEnd: Stage<Call>
  /** Settlement: ends the span. */
  readonly spanEnd: Stage<Call>
  /** Settlement: appends the evidence record. */
  readonly evidence: Stage<Call>
  /** Settlement: the `call_end` event with the call record. */
  readonly callEnd: Stage<Call>
  /** Starts a call the limiter dequeued; false when it settled while it waited. */
  readonly startQueued: (call: Call) => boolean
}


/**
 * How long a settled call without a timeout waits for the store writes its view depends on
 * (the ledger, a parked call, an undo payload, the evidence) before it hands the view out
 * anyway: a store that never answers must not hang the call. An `error` event says so. A call
 * with a timeout waits at most that timeout.
 */
export { STORE_WAIT_MS }

/**
 * Wall-clock start and end (Unix ms) of a call that took `durationMs` and ends now.
 * The start is derived from the end so that it never follows it: `performance.timeOrigin`
 * drifts from `Date.now()` in a long-lived process.
 */
function wallSpan(durationMs: number): { startMs: number; endMs: number } {
  const endMs = Date.now()
  return { startMs: Math.floor(endMs - durationMs), endMs }
}

const { getPrototypeOf, hasOwn } = Object
const PromiseProto = Promise.prototype
const PromiseThen = PromiseProto.then

/** Subscribes to a body's promise: natively for a plain native promise, else with `when` (any thenable, hostile ones too). */
function subscribe(value: object, onValue: (v: unknown) => void, onError: (e: unknown) => void): void {
  try {
    if (getPrototypeOf(value) === PromiseProto && !hasOwn(value, 'then')) {
      PromiseThen.call(value as Promise<unknown>, onValue, onError)
      return
    }
  } catch {
    // a Proxy trap threw, or an object that only looks like a promise: `when` reads it as any thenable
  }
  when(value, onValue, onError)
}

/** The `resolve` of the promise being constructed (no closure per call). */
let captured: ((value: CallResult | Settlement) => void) | undefined
const capture = (resolve: (value: CallResult | Settlement) => void): void => {
  captured = resolve
}

type Span = ReturnType<CallTracer['start']>

// the bits of a call's #flags
/** The call settled. */
const SETTLED = 1
/** Holds one of the tool's concurrency slots (from the body's start until the call settled and no body runs). */
const RUNNING = 2
/** A body attempt has started and not yet returned or settled its promise. */
const BODY_ACTIVE = 4
const ADMITTED_BY_BREAKER = 8
/** A body attempt started. */
const RAN = 16
const CALLBACK_SETTLED = 32
/** The call settled with a recorded result (an idempotency key settled before). */
const REPLAYED = 64

/**
 * The state only some calls need: kept out of `Call` so that a plain call (no timeout,
 * signal, batch, outcome callback, span or store) allocates and initializes less.
 */
class CallExtras {
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
  /** What the body kept for its resume (`keepForResume`), parked with its suspension. */
  kept: JsonValue | undefined = undefined
  /** What the suspension this run continues kept (`resumeStateOf`). */
  resumed: JsonValue | undefined = undefined
}

/** The stage functions, set when the `Call` class is defined (its static block). */
export let STAGES: CallStages

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
    const received = this.#options?.traceContext
    const x = this.#x
    if (x?.span === undefined || x.spanParent === undefined) return received
    try {
      return this.#host.tracer!.traceContextOf(x.span, x.spanParent) ?? received
    } catch (err) {
      // telemetry never fails a call
      this.#host.reportError(this.callId, this.#entry.name, err)
      return received
    }
  }

  registerUndo(restore: (() => unknown) | JsonValue): void {
    if (typeof restore === 'function') return this.#host.registerUndo(this.callId, restore as () => unknown, this.#options?.principal)
    if (typeof this.#entry.def.undo !== 'function') {
      throw new TypeError('toolwire: registerUndo takes a function, or a JSON payload when the tool declares undo(payload, ctx)')
    }
    const written = this.#host.registerUndoPayload(this.callId, this.#entry, toFrozenJson(restore), this.#options?.principal)
    // with a store: the call answers once the payload is written, so that tm.undo on any instance finds it
    if (written !== undefined) {
      const x = this.#more()
      x.wait = x.wait === undefined ? written : Promise.all([x.wait, written])
    }
  }

  reportProgress(progress: number, total?: number, message?: string): void {
    if ((this.#flags & SETTLED) !== 0 || !this.#host.hasListeners('progress')) return
    // what reaches listeners (and the MCP wire) is a finite number and a string, nothing else the tool made
    if (typeof progress !== 'number' || !Number.isFinite(progress)) return
    const event: { -readonly [K in keyof ToolEvents['progress']]: ToolEvents['progress'][K] } = { callId: this.callId, tool: this.toolName, progress }
    if (typeof total === 'number' && Number.isFinite(total)) event.total = total
    if (typeof message === 'string') event.message = message
    this.#host.emit('progress', event)
  }

  log(level: ToolLogLevel, data: unknown): void {
    if ((this.#flags & SETTLED) !== 0 || !this.#host.hasListeners('log') || !TOOL_LOG_LEVELS.includes(level)) return
    this.#host.emit('log', { callId: this.callId, tool: this.toolName, level, data: redact(data, this.#entry.sensitive) })
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
    if (options !== undefined) {
      const signal = options.signal
      if (signal !== undefined) {
        try {
          if (signal.aborted) {
            this.#finish(cancelledResult('signal'))
            return
          }
          const onAbort = (this.#more().onAbort = () => this.#interrupt(cancelledResult('signal')))
          signal.addEventListener('abort', onAbort, { once: true })
        } catch (err) {
          // a signal-like object that throws: the options are at fault, not the tool
          this.#more().onAbort = undefined
          this.#host.reportError(this.callId, this.#entry.name, err)
          this.#finish(ToolResult.failed(refusalError('invalid_options', invalidOptionsText('signal'))))
          return
        }
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

  // ---------------------------------------------------------------- gates

  /** The scope gate: a call with a principal lacking a scope the tool needs is refused; the operator's calls pass. */
  #checkScopes(): void {
    const principal = this.#options?.principal
    if (principal !== undefined) {
      const missing = missingScopes(principal.scopes, this.#entry.scopes, this.#host.impliedScopes)
      if (missing.length !== 0) {
        return this.#finish(ToolResult.failed(refusalError(INSUFFICIENT_SCOPE, insufficientScopeText(missing), { scopes: [...missing] })))
      }
    }
    this.#proceed()
  }

  #checkPermission(): void {
    const hooks = this.#entry.permissionHooks
    const principal = this.#options?.principal
    const request = Object.freeze(
      principal === undefined
        ? { tool: this.#entry.name, input: this.#input, callId: this.callId }
        : { tool: this.#entry.name, input: this.#input, callId: this.callId, principal },
    )
    const step = (i: number): void => {
      if ((this.#flags & SETTLED) !== 0) return
      if (i === hooks.length) return this.#proceed()
      let decision: PermissionDecision | Promise<PermissionDecision>
      try {
        decision = hooks[i]!(request)
      } catch (err) {
        return this.#denyOnError(err)
      }
      when(
        decision,
        (d) =>
          this.#guarded(() => {
            let allowed: boolean
            try {
              allowed = this.#applyDecision(d as PermissionDecision)
            } catch (err) {
              // a decision that cannot be read denies
              return this.#denyOnError(err)
            }
            if (allowed) step(i + 1)
          }),
        (err) => this.#guarded(() => this.#denyOnError(err)),
      )
    }
    step(0)
  }

  #denyOnError(err: unknown): void {
    this.#host.reportError(this.callId, this.#entry.name, err)
    this.#finish(ToolResult.failed(refusalError(REFUSALS.permissionCheckFailed.code, REFUSALS.permissionCheckFailed.message)))
  }

  /** Returns true to allow; otherwise settles the call as refused. */
  #applyDecision(d: PermissionDecision): boolean {
    if ((this.#flags & SETTLED) !== 0) return false
    if (d === undefined || d === true) return true
    if (d === false) {
      this.#finish(ToolResult.failed(refusalError(REFUSALS.permissionDenied.code, REFUSALS.permissionDenied.message)))
      return false
    }
    if (isHelperResult(d)) {
      if (d.status === 'ok') return true
      this.#finish(d.status === 'refused' ? fromHelper(d) : ToolResult.failed(refusalError(REFUSALS.permissionDenied.code, REFUSALS.permissionDenied.message)))
      return false
    }
    const obj = d as { allow?: unknown; code?: unknown; message?: unknown }
    if (obj.allow === true) return true
    this.#finish(
      ToolResult.failed(
        refusalError(
          typeof obj.code === 'string' ? obj.code : REFUSALS.permissionDenied.code,
          typeof obj.message === 'string' ? obj.message : REFUSALS.permissionDenied.message,
        ),
      ),
    )
    return false
  }

  /** The confirmation gate (deferred mode). */
  #checkConfirmation(): void {
    const rule = this.#entry.def.needsConfirmation
    if (rule === undefined || rule === false) return this.#proceed()
    let needed: boolean | Promise<boolean>
    try {
      needed = rule === true ? true : (rule as (i: unknown, c: ToolContext) => boolean | Promise<boolean>)(this.#input, this)
    } catch (err) {
      return this.#fail(err)
    }
    when(
      needed,
      (n) => this.#guarded(() => (n ? this.#askConfirmation() : this.#proceed())),
      (err) => this.#guarded(() => this.#fail(err)),
    )
  }

  #askConfirmation(): void {
    if ((this.#flags & SETTLED) !== 0) return
    const def = this.#entry.def as ToolDefinition<unknown>
    let summarized: unknown
    let changes: unknown
    try {
      // a custom summary is written from the input with its sensitive fields redacted, so it cannot show them
      summarized = def.summarize?.(def.summarize === undefined ? undefined : redact(this.#input, this.#entry.sensitive))
      changes = def.previewChanges?.(this.#input)
    } catch (err) {
      return this.#fail(err)
    }
    let summary: unknown
    const park = (list: unknown): void => {
      if ((this.#flags & SETTLED) !== 0) return
      const { id, handle: confirmId } = this.#host.newConfirmation(this.#entry, this.#input, this.callId)
      let result: ToolResult
      try {
        // previewed changes are shown as a frozen copy, sensitive fields redacted
        const redacted: readonly FieldChange[] | undefined = list === undefined ? undefined : redactChanges(list, this.#entry.sensitive)
        result = ToolResult.pending(
          redacted === undefined
            ? { id: confirmId, kind: 'confirmation', summary: summary as string }
            : { id: confirmId, kind: 'confirmation', summary: summary as string, changes: redacted },
        )
      } catch (err) {
        return this.#fail(err)
      }
      // the park point: the call continues (or not) with tm.confirm; with a store, once the store holds it
      const parked = this.#host.park(id, 'confirmation', this.#entry, this.#input, this.callId, this.#options)
      if (typeof parked === 'boolean') this.#finish(result)
      else this.#more().wait = parked.then(() => this.#guarded(() => this.#finish(result)))
    }
    // either may be async; a rejection of either fails the call (and is never left unhandled)
    let failed = false
    const fail = (err: unknown): void => {
      if (failed) return
      failed = true
      this.#guarded(() => this.#fail(err))
    }
    when(
      summarized,
      (s) =>
        this.#guarded(() => {
          // the default summary shows the input's JSON form (after toJSON), redacted
          summary = s ?? `Run ${this.#entry.name} with ${JSON.stringify(redact(this.#input, this.#entry.sensitive))}`
          when(changes, (list) => (failed ? undefined : this.#guarded(() => park(list))), fail)
        }),
      (err) => {
        fail(err)
        // the changes are not needed any more, but their rejection is still handled
        when(changes, () => undefined, () => undefined)
      },
    )
  }

  #checkBreaker(): void {
    const entry = this.#entry
    if (!entry.breaker!.admit()) {
      this.#finish(ToolResult.failed(refusalError('circuit_open', circuitOpenText(entry.name))))
      return
    }
    this.#flags |= ADMITTED_BY_BREAKER
    this.#proceed()
  }

  #checkConcurrency(): void {
    const entry = this.#entry
    switch (entry.limiter!.acquire(this)) {
      case 'run':
        this.#flags |= RUNNING
        this.#proceed()
        return
      case 'queued':
        return
      case 'full':
        this.#finish(
          ToolResult.failed(refusalError('concurrency_limit', concurrencyLimitText(entry.name))),
        )
    }
  }

  /** The ledger gate (with a store): records the call as in flight before its body, or settles it without running. */
  #checkLedger(): void {
    const options = this.#options
    const key = options?.idempotencyKey
    // a confirmed or resumed call was recorded by its claim
    if (key === undefined && this.#continuation !== undefined) return this.#proceed()
    when(
      this.#host.ledgerBegin(this.#entry, this.callId, this.#input, key, options?.principal),
      (g) =>
        this.#guarded(() => {
          const gate = g as LedgerGate
          if (gate.run) {
            this.#more().ticket = gate.ticket
            // settled while the store answered (timeout, cancel): the body never ran, so the key is
            // free again and a retry runs afresh (settling it would replay the timeout for ever)
            if ((this.#flags & SETTLED) !== 0) {
              if (gate.ticket !== undefined) void this.#host.ledgerRelease(gate.ticket, this.callId, this.#entry.name)
              return
            }
            return this.#proceed()
          }
          if (gate.replayed) this.#flags |= REPLAYED
          // the raw contract (`tm.execute`) of a replay: the recorded data
          if (gate.replayed) this.#raw = gate.result.data()
          this.#finish(gate.result)
        }),
      (err) => this.#guarded(() => this.#fail(err)),
    )
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
        ret = this.#runOutcomeCallback(this.#entry.outcome)
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

  #runOutcomeCallback(callback: NonNullable<ToolEntry['outcome']>): unknown {
    const diagnostics = (this.#more().diagnostics ??= newDiagnostics())
    this.#flags &= ~CALLBACK_SETTLED
    const invocation: OutcomeInvocation = {
      context: this,
      reportFailure: (error: Error) => {
        if ((this.#flags & CALLBACK_SETTLED) !== 0) return // inert once the callback settles
        let isError = false
        try {
          isError = error instanceof Error
        } catch {
          isError = false
        }
        if (!isError) {
          diagnostics.configurationFailures.push(`reportFailure got ${error === null ? 'null' : typeof error}, not an Error`)
          return
        }
        let message: string
        try {
          const m: unknown = error.message // captured when reported
          message = typeof m === 'string' ? m : String(m)
        } catch {
          diagnostics.configurationFailures.push('reportFailure got an Error whose message cannot be read')
          return
        }
        if ((this.#flags & SETTLED) !== 0) {
          diagnostics.late.push(Object.freeze({ message }))
          this.#host.emit('late_report', { callId: this.callId, tool: this.#entry.name, message })
        } else if (this.#x?.reported === undefined) {
          this.#more().reported = message
        }
      },
    }
    let ret: unknown
    try {
      ret = callback(this.#input as never, invocation)
    } catch (err) {
      this.#flags |= CALLBACK_SETTLED
      throw err
    }
    let thenable = false
    try {
      thenable = typeof ret === 'object' && ret !== null && typeof (ret as { then?: unknown }).then === 'function'
    } catch {
      thenable = true // a throwing `then` getter: `when` turns it into a rejection
    }
    if (!thenable) {
      this.#flags |= CALLBACK_SETTLED
      return ret
    }
    return new Promise<unknown>((resolve, reject) =>
      when(
        ret,
        (v) => {
          this.#flags |= CALLBACK_SETTLED
          resolve(v)
        },
        (e) => {
          this.#flags |= CALLBACK_SETTLED
          reject(e)
        },
      ),
    )
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
    else this.#settleAttempt(result)
  }

  /** The output schema check: a development aid that never changes the outcome. */
  #checkOutput(): void {
    const result = this.#result
    try {
      const issues: unknown = this.#entry.validateOutput!(result === undefined ? this.#x?.okData : (result.data() ?? result.text()))
      const report = (list: unknown): void => {
        if (list !== undefined) this.#host.emit('output_invalid', { callId: this.callId, tool: this.#entry.name, issues: list as readonly Issue[] })
      }
      // an asynchronous Standard Schema reports when its check settles; the call does not wait for it
      if (isThenable(issues)) when(issues, report, (err) => this.#host.reportError(this.callId, this.#entry.name, err))
      else report(issues)
    } catch (err) {
      this.#host.reportError(this.callId, this.#entry.name, err)
    }
  }

  #fail(err: unknown): void {
    if ((this.#flags & SETTLED) !== 0) return
    this.#host.reportError(this.callId, this.#entry.name, err)
    const x = this.#x
    if (x?.reported !== undefined && x.diagnostics !== undefined) {
      x.diagnostics.pipeline = describeThrown(err).message
      return this.#settleAttempt(ToolResult.failed(toolError('other', x.reported)))
    }
    // what was thrown is the tool's: each read is guarded (a getter or a Proxy trap may throw)
    const kindValue = safeGet(err, 'kind')
    const kind = isToolErrorKind(kindValue) ? kindValue : 'other'
    const retryable = kind === 'other' ? undefined : safeGet(err, 'retryable')
    const options = typeof retryable === 'boolean' ? { retryable } : {}
    this.#settleAttempt(ToolResult.failed(toolError(kind, toolFailedText(kind), options)))
  }

  /** Ends one attempt: retries a retryable error when allowed, else settles. */
  #settleAttempt(result: ToolResult): void {
    // only a body's failure is retried: a failing gate (permission, confirmation) is not a reason to run the body
    if (this.#pipeline.retry && (this.#flags & RAN) !== 0 && this.#x?.reported === undefined && typeof this.#continuation !== 'function') {
      const error = result.error()
      const retry = this.#entry.def.retry!
      const attempts = retry.attempts ?? 3
      if (error !== undefined && error.retryable && this.#attemptNo < attempts) {
        const base = retry.baseMs ?? 100
        const cap = retry.maxMs ?? 5000
        const delay = Math.random() * Math.min(cap, base * 2 ** (this.#attemptNo - 1))
        const timeoutMs = this.#options?.timeoutMs ?? this.#entry.timeoutMs
        // a retry the timeout would cut short is not started: the caller gets the real error
        if (timeoutMs !== undefined && performance.now() - this.#clock + delay >= timeoutMs) return this.#finish(result)
        this.#more().retryTimer = setTimeout(Call.#retry, delay, this)
        return
      }
    }
    if ((this.#flags & RAN) !== 0 && result.isPending()) return this.#parkSuspension(result)
    this.#finish(result)
  }

  /**
   * The park point of a body that asked for input (`tm.resume` continues it): settles once the
   * call is parked (with a store, once the store holds it), or refused `request_id_in_use` when
   * a parked call holds its request id. A call settled meanwhile (cancelled) is unparked.
   */
  #parkSuspension(result: ToolResult): void {
    const request = result.pendingRequest()!
    const id = request.id
    const settle = (parked: boolean): void => {
      if ((this.#flags & SETTLED) !== 0) {
        if (parked) this.#host.unpark(id, this.callId)
        return
      }
      this.#finish(parked ? result : ToolResult.failed(refusalError(REQUEST_ID_IN_USE, requestIdInUseText(id))))
    }
    const kept = this.#x?.kept
    const extras: SuspensionExtras = {
      ...(request.schema === undefined ? {} : { schema: request.schema }),
      ...(request.kind === 'confirmation' ? { confirmation: true as const } : {}),
      ...(kept === undefined ? {} : { resumeState: kept }),
    }
    const parked = this.#host.park(id, 'suspension', this.#entry, this.#input, this.callId, this.#options, extras)
    if (typeof parked === 'boolean') return settle(parked)
    const x = this.#more()
    // the body is done: what is left is the store's answer, which the store's own bound limits
    if (x.timer !== undefined) clearTimeout(x.timer)
    x.wait = parked.then((ok) => this.#guarded(() => settle(ok)))
  }

  static #retry(call: Call): void {
    call.#more().retryTimer = undefined
    if ((call.#flags & SETTLED) !== 0) return
    call.#attemptNo++
    call.#guarded(() => call.#runBody())
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
    let delivered = false
    const deliver = (): void => {
      if (delivered) return
      delivered = true
      clearTimeout(timer)
      this.#deliver(view)
    }
    const timer = setTimeout(() => {
      if (delivered) return
      this.#host.reportError(this.callId, this.#entry.name, new Error(`toolwire: the store did not answer within ${bound} ms; the call's view is handed out without waiting for it`))
      deliver()
    }, bound)
    // the waits never reject (each reports its own failure); a rejection still delivers
    wait.then(deliver, deliver)
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

  #writeEvidence(store: EvidenceStore, result: ToolResult, durationMs: number): void {
    const fail = (error: unknown): void =>
      this.#host.emit('evidence_error', { callId: this.callId, tool: this.#entry.name, message: describeThrown(error).message, error })
    try {
      let raw: JsonValue | null = null
      try {
        raw = toFrozenJson(this.#raw)
      } catch {
        raw = null
      }
      const status = outcomeStatus(result)
      const { startMs, endMs } = wallSpan(durationMs)
      const written = store.append({
        callId: this.callId,
        tool: this.#entry.name,
        input: redact(this.#input, this.#entry.sensitive),
        result: redact(raw, this.#entry.sensitive),
        status,
        startedAt: new Date(startMs).toISOString(),
        endedAt: new Date(endMs).toISOString(),
        ...evidenceIdentity(this.#options?.principal, (this.#options as ContinuedOptions | undefined)?.approvedBy),
      })
      if (this.#host.awaitEvidence && written instanceof Promise) {
        // evidence in the durable store: the view is handed out once its record is written
        const w = written.then(() => undefined, fail)
        const x = this.#more()
        x.wait = x.wait === undefined ? w : Promise.all([x.wait, w])
      } else when(written, () => undefined, fail)
    } catch (err) {
      fail(err)
    }
  }

  static {
    const stages: CallStages = {
      metricsStart: (c) => c.#host.metrics.started(c.#entry.metricsId),
      callStart: (c) => {
        if (c.#host.hasListeners('call_start')) {
          const principal = c.#options?.principal
          c.#host.emit('call_start', principal === undefined ? { callId: c.callId, tool: c.#entry.name } : { callId: c.callId, tool: c.#entry.name, principal: principalRef(principal) })
        }
      },
      spanStart: (c) => {
        const tracer = c.#host.tracer
        try {
          if (tracer !== undefined) {
            const x = c.#more()
            x.spanParent = tracer.parentOf(c.#options?.traceContext)
            x.span = tracer.start(c.#entry.name, c.callId, c.#entry.def.description, c.#input, c.#entry.sensitive, x.spanParent, c.#options?.principal)
          }
        } catch (err) {
          // telemetry never stops a call
          c.#host.reportError(c.callId, c.#entry.name, err)
        }
      },
      spanProbe: (c) => {
        if (c.#host.tracerReady(c.#clock)) stages.spanStart(c)
      },
      scopes: (c) => c.#checkScopes(),
      permission: (c) => c.#checkPermission(),
      confirmation: (c) => c.#checkConfirmation(),
      breaker: (c) => c.#checkBreaker(),
      concurrency: (c) => c.#checkConcurrency(),
      ledger: (c) => c.#checkLedger(),
      outputCheck: (c) => c.#checkOutput(),
      metricsEnd: (c) => {
        const settled = c.#result
        if (settled === undefined) c.#host.metrics.succeeded(c.#entry.metricsId, c.#clock)
        else c.#host.metrics.settled(c.#entry.metricsId, settled, c.#clock)
      },
      ledgerEnd: (c) => {
        const x = c.#x
        const ticket = x?.ticket
        if (x === undefined || ticket === undefined) return
        x.ticket = undefined
        const bodyActive = (c.#flags & BODY_ACTIVE) !== 0
        // an idempotent tool's retryable failure, its body finished (the last attempt of `retry`),
        // frees the key, so a retry with it runs again: the rule toolwire's own retries follow. A
        // tool not marked idempotent may have done its effect before failing: its failure is final
        // for the key. Settled while its body still runs (timed out, cancelled): what the body
        // does is not known, and the recorded outcome says why
        const settled =
          !bodyActive && c.#entry.def.hints?.idempotent === true && c.#result?.error()?.retryable === true
            ? c.#host.ledgerRelease(ticket, c.callId, c.#entry.name)
            : c.#host.ledgerSettle(ticket, bodyActive ? interruptedOutcomeResult(c.#result) : c.#canonicalResult(), c.callId, c.#entry.name)
        x.wait = x.wait === undefined ? settled : Promise.all([x.wait, settled])
      },
      breakerEnd: (c) => {
        if ((c.#flags & ADMITTED_BY_BREAKER) === 0) return
        const settled = c.#result
        const neutral = settled !== undefined && (settled.isErrorKind('cancelled') || settled.isErrorKind('invalid_args'))
        c.#entry.breaker!.settle(neutral ? 'neutral' : settled !== undefined && settled.isError() ? 'failed' : 'healthy')
      },
      spanEnd: (c) => {
        const span = c.#x?.span
        if (span === undefined) return
        try {
          c.#host.tracer!.end(span, c.#canonicalResult(), c.#entry.sensitive)
        } catch (err) {
          c.#host.reportError(c.callId, c.#entry.name, err)
        }
      },
      evidence: (c) => {
        const store = c.#host.evidence
        if (store !== undefined && (c.#flags & RAN) !== 0) c.#writeEvidence(store, c.#canonicalResult(), c.#clock)
      },
      callEnd: (c) => {
        const host = c.#host
        if (!host.hasListeners('call_end')) return
        const result = c.#canonicalResult()
        const view = c.#view!
        const { startMs, endMs } = wallSpan(c.#clock)
        const principal = c.#options?.principal
        const record = callRecord(c.callId, c.#entry.name, result, startMs, endMs, c.#attemptNo, host.canUndo(c.callId), principal?.subject)
        const payload = { callId: c.callId, tool: c.#entry.name, status: view.status, statusName: result.statusName(), durationMs: c.#clock, result, view, record }
        host.emit('call_end', principal === undefined ? payload : { ...payload, principal: principalRef(principal) })
      },
      startQueued: (c) => {
        if ((c.#flags & SETTLED) !== 0) return false
        c.#flags |= RUNNING
        c.#proceed()
        return true
      },
    }
    STAGES = Object.freeze(stages)
  }
}

/**
 * @internal Keeps `state` (JSON, frozen copy) with the suspension the tool body is about to
 * return (`pending(…)`): it is parked with the call (in the store's row when there is a store,
 * so any instance can continue it) and given to the continued run (`resumeStateOf(ctx)` in
 * `resume`). Opaque to toolwire, never logged. Throws a TypeError when `ctx` is not a call's
 * context or `state` has no JSON form.
 */
export function keepForResume(ctx: ToolContext, state: JsonValue): void {
  if (!(ctx instanceof Call)) throw new TypeError('toolwire: keepForResume takes the ctx a tool body received')
  Call.keep(ctx, state)
}

/** @internal What the suspension a `resume` continues kept with {@link keepForResume}, or `undefined`. */
export function resumeStateOf(ctx: ToolContext): JsonValue | undefined {
  return ctx instanceof Call ? Call.resumed(ctx) : undefined
}
