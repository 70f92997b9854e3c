/**
 * One admitted call, from admission to its single settlement: the gates (signal,
 * permission, confirmation, breaker, concurrency), the body and its retries, and the
 * one settlement that feeds the view, metrics, spans, evidence and events.
 */
import type { CircuitBreaker } from './breaker.js'
import type { EvidenceStore } from './evidence.js'
import { isHelperResult, isModelResult } from './helpers.js'
import { NotJsonError, toFrozenJson } from './json.js'
import type { CallOptions, PermissionDecision, PermissionHook, ToolContext, ToolDefinition } from './tool.js'
import type { ToolEvents, ToolManager } from './manager.js'
import { cancelledResult, fromHelper, isThenable, normalizeReturn, TOOL_FAILED_MESSAGE } from './normalize.js'
import type { OutcomeDiagnostics, OutcomeInvocation, ToolExecutionOutcome } from './outcome.js'
import { callRecord } from './record.js'
import { redact } from './redact.js'
import { isToolErrorKind, refusalError, toolError, ToolResult } from './result.js'
import type { CallTracer } from './telemetry.js'
import type { FieldChange, JsonValue } from './types.js'
import type { Validator } from './validate.js'
import { canonicalOf, okView, viewOf, type CallResult } from './view.js'

/** @internal A registered tool, compiled. */
export interface ToolEntry {
  readonly def: ToolDefinition<never>
  readonly name: string
  readonly validate: Validator
  readonly validateOutput: Validator | undefined
  readonly untrusted: boolean
  /** The tool's timeout, else the manager's. */
  readonly timeoutMs: number | undefined
  /** The manager's and the tool's permission hooks, in order (empty: none). */
  readonly permissionHooks: readonly PermissionHook[]
  readonly limit: number
  readonly queueLimit: number
  active: number
  readonly queue: Call[]
  readonly breaker: CircuitBreaker | undefined
  readonly outcome: ((args: never, invocation: OutcomeInvocation) => unknown) | undefined
  readonly sensitive: ReadonlySet<string> | undefined
  readonly metricsId: number
}

/** @internal */
export interface Settlement {
  readonly view: CallResult
  readonly result: ToolResult
  readonly raw: unknown
  readonly ran: boolean
  readonly reported: string | undefined
  readonly diagnostics: OutcomeDiagnostics
}

/** Marks a call continuing after approval: no permission or confirmation gate again. */
export const CONTINUE_CONFIRMED = Symbol('confirmed')
export type Continuation = typeof CONTINUE_CONFIRMED | ((ctx: ToolContext) => unknown) | undefined

export function newDiagnostics(): OutcomeDiagnostics {
  return { configurationFailures: [], late: [] }
}

/** The semantic status of a canonical result, as outcomes and evidence report it. */
export function outcomeStatus(result: ToolResult): ToolExecutionOutcome['status'] {
  switch (result.disposition()) {
    case 'success':
      return 'succeeded'
    case 'refused':
      return 'denied'
    case 'skipped':
      return 'skipped'
    case 'pending':
      return 'pending'
    default: {
      const kind = result.error()!.kind
      return kind === 'timeout' ? 'timed_out' : kind === 'cancelled' ? 'cancelled' : kind === 'invalid_args' ? 'invalid' : 'failed'
    }
  }
}

/** The frozen outcome of a settled execution. */
export function outcomeOf(s: Settlement, tool: string): ToolExecutionOutcome {
  const e = s.result.error() ?? s.result.refusal()
  const outcome: Record<string, unknown> = { status: outcomeStatus(s.result), callId: s.view.callId ?? '', tool, reported: s.reported !== undefined }
  if (e !== undefined) outcome.error = Object.freeze({ kind: e.kind, message: e.message })
  return Object.freeze(outcome) as unknown as ToolExecutionOutcome
}

/** Collects the views of one `callMany` batch and resolves once, when the last call settles. */
export class BatchSink {
  readonly views: CallResult[]
  private remaining: number
  readonly promise: Promise<readonly CallResult[]>
  private resolve!: (views: readonly CallResult[]) => void

  constructor(size: number) {
    this.views = new Array<CallResult>(size)
    this.remaining = size
    this.promise = new Promise((resolve) => {
      this.resolve = resolve
    })
    if (size === 0) this.resolve(Object.freeze(this.views))
  }

  put(index: number, view: CallResult): void {
    this.views[index] = view
    if (--this.remaining === 0) this.resolve(Object.freeze(this.views))
  }
}

/**
 * Wall-clock start and end (Unix ms) of a call that took `durationMs` and ends now.
 * The start is derived from the end so that it never follows it: `performance.timeOrigin`
 * drifts from `Date.now()` in a long-lived process.
 */
function wallSpan(durationMs: number): { startMs: number; endMs: number } {
  const endMs = Date.now()
  return { startMs: Math.floor(endMs - durationMs), endMs }
}

/** One admitted call, from admission to its single settlement. */
export class Call implements ToolContext {
  // Everything but the ToolContext members is #private: the body receives this object as
  // `ctx` (one allocation per call instead of two) and sees only its context.
  readonly callId: string
  readonly toolName: string
  #settled = false
  #controller: AbortController | undefined
  #timer: ReturnType<typeof setTimeout> | undefined
  #retryTimer: ReturnType<typeof setTimeout> | undefined
  #onAbort: (() => void) | undefined
  #resolve!: (value: CallResult | Settlement) => void
  readonly #startedAt = performance.now()
  #running = false
  #admittedByBreaker = false
  #attemptNo = 1
  /** What the body returned (helper `ok` unwrapped), for the raw contract. */
  #raw: unknown = undefined
  #ran = false
  #reported: string | undefined
  #callbackSettled = true
  #diagnostics: OutcomeDiagnostics | undefined
  #span: ReturnType<CallTracer['start']>
  readonly #tm: ToolManager
  readonly #entry: ToolEntry
  readonly #input: unknown
  readonly #options: CallOptions | undefined
  readonly #mode: 'view' | 'settlement'
  readonly #continuation: Continuation
  /** The sequence number of a generated call id; 0 for a caller-chosen id. */
  readonly #seq: number

  constructor(
    tm: ToolManager,
    entry: ToolEntry,
    callId: string,
    input: unknown,
    options: CallOptions | undefined,
    mode: 'view' | 'settlement',
    continuation: Continuation,
    seq = 0,
  ) {
    this.callId = callId
    this.toolName = entry.name
    this.#tm = tm
    this.#entry = entry
    this.#input = input
    this.#options = options
    this.#mode = mode
    this.#continuation = continuation
    this.#seq = seq
  }

  /** @internal */
  static seqOf(call: Call): number {
    return call.#seq
  }

  /** @internal Settles from outside the body (cancel, signal, timeout). */
  static interrupt(call: Call, result: ToolResult): void {
    call.#interrupt(result)
  }

  get signal(): AbortSignal {
    return this.#getSignal()
  }

  get attempt(): number {
    return this.#attemptNo
  }

  registerUndo(restore: () => unknown): void {
    if (typeof restore !== 'function') throw new TypeError('toolwire: registerUndo takes a function')
    this.#tm.registerUndo(this.callId, restore)
  }

  reportProgress(progress: number, total?: number, message?: string): void {
    if (this.#settled || !this.#tm.hasListeners('progress')) return
    const event: { -readonly [K in keyof ToolEvents['progress']]: ToolEvents['progress'][K] } = { callId: this.callId, tool: this.toolName, progress }
    if (total !== undefined) event.total = total
    if (message !== undefined) event.message = message
    this.#tm.emit('progress', event)
  }

  #getSignal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController()
      if (this.#settled) this.#controller.abort()
    }
    return this.#controller.signal
  }

  start(): Promise<CallResult | Settlement> {
    const promise = new Promise<CallResult | Settlement>((resolve) => {
      this.#resolve = resolve
    })
    this.#begin()
    return promise
  }

  /** Starts a call of a batch: its view lands in `sink` instead of a promise of its own. */
  startInto(sink: BatchSink, index: number): void {
    this.#resolve = (view) => sink.put(index, view as CallResult)
    this.#begin()
  }

  #begin(): void {
    const tm = this.#tm
    const entry = this.#entry
    const options = this.#options
    if (tm.hasListeners('call_start')) tm.emit('call_start', { callId: this.callId, tool: entry.name })
    if (tm.tracer !== undefined) this.#span = tm.tracer.start(entry.name, this.callId, entry.def.description, this.#input, entry.sensitive)
    tm.metricsBuffer.started(entry.metricsId)
    const signal = options?.signal
    if (signal !== undefined) {
      if (signal.aborted) {
        this.#finish(cancelledResult('signal'))
        return
      }
      this.#onAbort = () => this.#interrupt(cancelledResult('signal'))
      signal.addEventListener('abort', this.#onAbort, { once: true })
    }
    tm.track(this)
    const timeoutMs = options?.timeoutMs ?? entry.timeoutMs
    if (timeoutMs !== undefined) {
      this.#timer = setTimeout(
        () => this.#interrupt(ToolResult.failed(toolError('timeout', `The tool did not finish within ${timeoutMs} ms`))),
        timeoutMs,
      )
    }
    if (this.#continuation !== undefined) this.#admit()
    else if (entry.permissionHooks.length !== 0) this.#checkPermission()
    else this.#gate()
  }

  #checkPermission(): void {
    const hooks = this.#entry.permissionHooks
    const request = Object.freeze({ tool: this.#entry.name, input: this.#input, callId: this.callId })
    const step = (i: number): void => {
      if (this.#settled) return
      if (i === hooks.length) return this.#gate()
      let decision: PermissionDecision | Promise<PermissionDecision>
      try {
        decision = hooks[i]!(request)
      } catch (err) {
        return this.#denyOnError(err)
      }
      if (isThenable(decision)) {
        ;(decision as Promise<PermissionDecision>).then(
          (d) => (this.#applyDecision(d) ? step(i + 1) : undefined),
          (err) => this.#denyOnError(err),
        )
      } else if (this.#applyDecision(decision)) {
        step(i + 1)
      }
    }
    step(0)
  }

  #denyOnError(err: unknown): void {
    this.#tm.reportError(this.callId, this.#entry.name, err)
    this.#finish(ToolResult.failed(refusalError('permission_denied', 'The permission check failed')))
  }

  /** Returns true to allow; otherwise settles the call as refused. */
  #applyDecision(d: PermissionDecision): boolean {
    if (this.#settled) return false
    if (d === undefined || d === true) return true
    if (d === false) {
      this.#finish(ToolResult.failed(refusalError('permission_denied', 'Permission denied')))
      return false
    }
    if (isHelperResult(d)) {
      if (d.status === 'ok') return true
      this.#finish(d.status === 'refused' ? fromHelper(d) : ToolResult.failed(refusalError('permission_denied', 'Permission denied')))
      return false
    }
    const obj = d as { allow?: unknown; code?: unknown; message?: unknown }
    if (obj.allow === true) return true
    this.#finish(
      ToolResult.failed(
        refusalError(
          typeof obj.code === 'string' ? obj.code : 'permission_denied',
          typeof obj.message === 'string' ? obj.message : 'Permission denied',
        ),
      ),
    )
    return false
  }

  /** The confirmation gate (deferred mode). */
  #gate(): void {
    const rule = this.#entry.def.needsConfirmation
    if (rule === undefined || rule === false) return this.#admit()
    let needed: boolean | Promise<boolean>
    try {
      needed = rule === true ? true : (rule as (i: unknown, c: ToolContext) => boolean | Promise<boolean>)(this.#input, this)
    } catch (err) {
      return this.#fail(err)
    }
    if (isThenable(needed)) (needed as Promise<boolean>).then((n) => (n ? this.#askConfirmation() : this.#admit()), (err) => this.#fail(err))
    else if (needed) this.#askConfirmation()
    else this.#admit()
  }

  #askConfirmation(): void {
    if (this.#settled) return
    const def = this.#entry.def as ToolDefinition<unknown>
    let summary: string
    let changes: readonly FieldChange[] | Promise<readonly FieldChange[]> | undefined
    try {
      summary = def.summarize?.(this.#input) ?? `Run ${this.#entry.name} with ${JSON.stringify(redact(this.#input, this.#entry.sensitive))}`
      changes = def.previewChanges?.(this.#input)
    } catch (err) {
      return this.#fail(err)
    }
    const park = (list: readonly FieldChange[] | undefined): void => {
      if (this.#settled) return
      const confirmId = globalThis.crypto.randomUUID()
      let result: ToolResult
      try {
        result = ToolResult.pending(list === undefined ? { id: confirmId, kind: 'confirmation', summary } : { id: confirmId, kind: 'confirmation', summary, changes: list })
      } catch (err) {
        return this.#fail(err)
      }
      this.#tm.park(confirmId, 'confirmation', this.#entry, this.#input, this.callId, this.#options?.timeoutMs)
      this.#finish(result)
    }
    if (isThenable(changes)) (changes as Promise<readonly FieldChange[]>).then(park, (err) => this.#fail(err))
    else park(changes as readonly FieldChange[] | undefined)
  }

  #admit(): void {
    if (this.#settled) return
    const entry = this.#entry
    if (entry.breaker !== undefined) {
      if (!entry.breaker.admit()) {
        this.#finish(ToolResult.failed(refusalError('circuit_open', `Tool "${entry.name}" is failing; its circuit breaker is open`)))
        return
      }
      this.#admittedByBreaker = true
    }
    if (entry.active < entry.limit) {
      entry.active++
      this.#running = true
      this.#runBody()
    } else if (entry.queue.length < entry.queueLimit) {
      entry.queue.push(this)
    } else {
      this.#finish(
        ToolResult.failed(refusalError('concurrency_limit', `Tool "${entry.name}" is at its concurrency limit and its queue is full`)),
      )
    }
  }

  /** Starts the body (first attempt or a retry). */
  #runBody(): void {
    this.#ran = true
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
      this.#fail(err)
      return
    }
    if (isThenable(ret)) {
      ret.then(
        (v) => this.#complete(v),
        (e) => this.#fail(e),
      )
    } else {
      this.#complete(ret)
    }
  }

  #runOutcomeCallback(callback: NonNullable<ToolEntry['outcome']>): unknown {
    const diagnostics = (this.#diagnostics ??= newDiagnostics())
    this.#callbackSettled = false
    const invocation: OutcomeInvocation = {
      context: this,
      reportFailure: (error: Error) => {
        if (this.#callbackSettled) return // inert once the callback settles
        if (!(error instanceof Error)) {
          diagnostics.configurationFailures.push(`reportFailure got ${error === null ? 'null' : typeof error}, not an Error`)
          return
        }
        const message = String(error.message) // captured when reported
        if (this.#settled) {
          diagnostics.late.push(Object.freeze({ message }))
          this.#tm.emit('late_report', { callId: this.callId, tool: this.#entry.name, message })
        } else if (this.#reported === undefined) {
          this.#reported = message
        }
      },
    }
    let ret: unknown
    try {
      ret = callback(this.#input as never, invocation)
    } catch (err) {
      this.#callbackSettled = true
      throw err
    }
    if (!isThenable(ret)) {
      this.#callbackSettled = true
      return ret
    }
    return (ret as Promise<unknown>).then(
      (v) => {
        this.#callbackSettled = true
        return v
      },
      (e) => {
        this.#callbackSettled = true
        throw e
      },
    )
  }

  #complete(value: unknown): void {
    if (this.#settled) return
    // the common case, a plain value taken as ok(value), settles without building a ToolResult
    const plain = this.#reported === undefined && !isHelperResult(value) && !isModelResult(value) && !(value instanceof ToolResult)
    this.#raw = isHelperResult(value) && value.status === 'ok' ? value.data : value
    let result: ToolResult | undefined
    let data: JsonValue | undefined
    try {
      if (plain) data = toFrozenJson(value)
      else result = normalizeReturn(value, this.#entry.untrusted)
    } catch (err) {
      this.#tm.reportError(this.callId, this.#entry.name, err)
      const message = err instanceof NotJsonError ? 'The tool returned a value JSON cannot carry.' : TOOL_FAILED_MESSAGE
      result = ToolResult.failed(toolError('other', message))
      if (this.#reported !== undefined && this.#diagnostics !== undefined) this.#diagnostics.pipeline = (err as Error).message
    }
    if (this.#reported !== undefined && !result!.isError()) result = ToolResult.failed(toolError('other', this.#reported))
    if (this.#tm.development && this.#entry.validateOutput !== undefined && (result === undefined || result.isSuccess())) {
      const issues = this.#entry.validateOutput(result === undefined ? data : (result.data() ?? result.text()))
      if (issues !== undefined) this.#tm.emit('output_invalid', { callId: this.callId, tool: this.#entry.name, issues })
    }
    if (result === undefined) this.#finish(undefined, data)
    else this.#settleAttempt(result)
  }

  #fail(err: unknown): void {
    if (this.#settled) return
    this.#tm.reportError(this.callId, this.#entry.name, err)
    if (this.#reported !== undefined && this.#diagnostics !== undefined) {
      this.#diagnostics.pipeline = err instanceof Error ? err.message : String(err)
      return this.#settleAttempt(ToolResult.failed(toolError('other', this.#reported)))
    }
    const e = err as { kind?: unknown; retryable?: unknown }
    const kind = typeof e === 'object' && e !== null && isToolErrorKind(e.kind) ? e.kind : 'other'
    const options = typeof e === 'object' && e !== null && typeof e.retryable === 'boolean' ? { retryable: e.retryable } : {}
    this.#settleAttempt(ToolResult.failed(toolError(kind, kind === 'other' ? TOOL_FAILED_MESSAGE : `The tool failed (${kind}).`, options)))
  }

  /** Ends one attempt: retries a retryable error when allowed, else settles. */
  #settleAttempt(result: ToolResult): void {
    const retry = this.#entry.def.retry
    const error = result.error()
    if (retry !== undefined && error !== undefined && error.retryable && this.#reported === undefined && typeof this.#continuation !== 'function') {
      const attempts = retry.attempts ?? 3
      if (this.#attemptNo < attempts) {
        const base = retry.baseMs ?? 100
        const cap = retry.maxMs ?? 5000
        const delay = Math.random() * Math.min(cap, base * 2 ** (this.#attemptNo - 1))
        const timeoutMs = this.#options?.timeoutMs ?? this.#entry.timeoutMs
        // a retry the timeout would cut short is not started: the caller gets the real error
        if (timeoutMs !== undefined && performance.now() - this.#startedAt + delay >= timeoutMs) return this.#finish(result)
        this.#retryTimer = setTimeout(() => {
          this.#retryTimer = undefined
          if (this.#settled) return
          this.#attemptNo++
          this.#runBody()
        }, delay)
        return
      }
    }
    this.#finish(result)
  }

  /** Settles from outside the body (cancel, signal, timeout) and aborts the tool's signal. */
  #interrupt(result: ToolResult): void {
    if (this.#settled) return
    this.#finish(result)
    this.#controller?.abort(result.isErrorKind('timeout') ? new DOMException('The call timed out', 'TimeoutError') : undefined)
  }

  /** Settles the call once: with `result`, or (no result) as a success with frozen `okData`. */
  #finish(settled: ToolResult | undefined, okData?: JsonValue): void {
    if (this.#settled) return
    this.#settled = true
    const tm = this.#tm
    const entry = this.#entry
    if (this.#timer !== undefined) clearTimeout(this.#timer)
    if (this.#retryTimer !== undefined) clearTimeout(this.#retryTimer)
    if (this.#onAbort !== undefined) this.#options!.signal!.removeEventListener('abort', this.#onAbort)
    tm.untrack(this)
    if (this.#running) {
      entry.active--
      this.#releaseSlot()
    } else {
      const i = entry.queue.indexOf(this)
      if (i >= 0) entry.queue.splice(i, 1)
    }
    if (this.#admittedByBreaker) {
      const neutral = settled !== undefined && (settled.isErrorKind('cancelled') || settled.isErrorKind('invalid_args'))
      entry.breaker!.settle(neutral ? 'neutral' : settled !== undefined && settled.isError() ? 'failed' : 'healthy')
    }
    if (settled !== undefined && settled.isPending() && this.#ran) {
      tm.park(settled.pendingRequest()!.id, 'suspension', entry, this.#input, this.callId, this.#options?.timeoutMs)
    }
    const view = settled === undefined ? okView(okData as JsonValue, this.callId, entry.untrusted) : viewOf(settled, this.callId)
    const durationMs = performance.now() - this.#startedAt
    if (settled === undefined) tm.metricsBuffer.succeeded(entry.metricsId, durationMs)
    else tm.metricsBuffer.settled(entry.metricsId, settled, durationMs)
    const evidence = tm.evidence
    if (this.#span === undefined && evidence === undefined && this.#mode === 'view' && !tm.hasListeners('call_end')) {
      this.#resolve(view)
      return
    }
    const result = settled ?? canonicalOf(view)!
    if (this.#span !== undefined) tm.tracer!.end(this.#span, result, entry.sensitive)
    if (evidence !== undefined && this.#ran) this.#writeEvidence(evidence, result, durationMs)
    if (tm.hasListeners('call_end')) {
      const { startMs, endMs } = wallSpan(durationMs)
      const record = callRecord(this.callId, entry.name, result, startMs, endMs, this.#attemptNo, tm.canUndo(this.callId))
      tm.emit('call_end', { callId: this.callId, tool: entry.name, status: view.status, statusName: result.statusName(), durationMs, result, view, record })
    }
    if (this.#mode === 'view') {
      this.#resolve(view)
    } else {
      this.#resolve({ view, result, raw: this.#raw, ran: this.#ran, reported: this.#reported, diagnostics: (this.#diagnostics ??= newDiagnostics()) })
    }
  }

  #writeEvidence(store: EvidenceStore, result: ToolResult, durationMs: number): void {
    const fail = (error: unknown): void =>
      this.#tm.emit('evidence_error', { callId: this.callId, tool: this.#entry.name, message: error instanceof Error ? error.message : String(error), error })
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
      })
      if (isThenable(written)) (written as Promise<void>).then(undefined, fail)
    } catch (err) {
      fail(err)
    }
  }

  #releaseSlot(): void {
    const entry = this.#entry
    while (entry.queue.length > 0 && entry.active < entry.limit) {
      const next = entry.queue.shift()!
      if (next.#settled) continue
      entry.active++
      next.#running = true
      next.#runBody()
    }
  }
}
