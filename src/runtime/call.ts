/**
 * One admitted call, from admission to its single settlement: the gates (signal,
 * permission, confirmation, breaker, concurrency), the body and its retries, and the
 * one settlement that feeds the view, metrics, spans, evidence and events.
 */
import type { CircuitBreaker } from './breaker.js'
import type { EvidenceStore } from '../observe/evidence.js'
import { isHelperResult, isModelResult } from '../core/helpers.js'
import { NotJsonError, toFrozenJson } from '../core/json.js'
import type { CallOptions, PermissionDecision, PermissionHook, ToolContext, ToolDefinition } from './tool.js'
import type { ToolEvents, ToolManager } from './manager.js'
import { cancelledResult, describeThrown, fromHelper, normalizeReturn, safeGet, TOOL_FAILED_MESSAGE, when } from './normalize.js'
import type { OutcomeDiagnostics, OutcomeInvocation, ToolExecutionOutcome } from './outcome.js'
import { callRecord } from '../observe/record.js'
import { redact, redactChanges } from '../core/redact.js'
import { isToolErrorKind, refusalError, toolError, ToolResult } from '../core/result.js'
import type { CallTracer } from '../observe/telemetry.js'
import type { FieldChange, JsonValue } from '../core/types.js'
import type { Validator } from '../core/validate.js'
import { canonicalOf, okView, viewOf, type CallResult } from '../core/view.js'

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

  /** Places the view of call `index`; a second view for the same call is ignored. */
  put(index: number, view: CallResult): void {
    if (this.views[index] !== undefined) return
    this.views[index] = view
    if (--this.remaining === 0) this.resolve(Object.freeze(this.views))
  }
}

type AbortListener = ((this: AbortSignal, event: Event) => unknown) | { handleEvent(event: Event): unknown }

/**
 * Makes the `abort` listeners a tool adds to its own signal (with `addEventListener` or
 * `onabort`) unable to end the process: Node reports a listener's throw, or its rejected
 * promise, as an uncaught exception, and the abort is dispatched by the runtime (a timeout,
 * a cancel). Such errors go to `onError` (the `error` event) instead. Other event types
 * and removal work as on any signal.
 */
function containAbortListeners(signal: AbortSignal, onError: (err: unknown) => void): void {
  const add = signal.addEventListener
  const remove = signal.removeEventListener
  const wrappers = new WeakMap<object, (event: Event) => void>()
  const wrap = (listener: AbortListener): ((event: Event) => void) => {
    let w = wrappers.get(listener)
    if (w === undefined) {
      w = (event: Event): void => {
        try {
          const r = typeof listener === 'function' ? listener.call(signal, event) : listener.handleEvent(event)
          if (typeof r === 'object' && r !== null) when(r, () => undefined, onError)
        } catch (err) {
          onError(err)
        }
      }
      wrappers.set(listener, w)
    }
    return w
  }
  const contained = (type: unknown, listener: unknown): listener is AbortListener =>
    type === 'abort' && ((typeof listener === 'object' && listener !== null) || typeof listener === 'function')
  const onabort = Object.getOwnPropertyDescriptor(AbortSignal.prototype, 'onabort')
  let handler: unknown = null
  Object.defineProperties(signal, {
    addEventListener: {
      value(this: AbortSignal, type: string, listener: unknown, options?: unknown) {
        return add.call(this, type, (contained(type, listener) ? wrap(listener) : listener) as EventListener, options as AddEventListenerOptions)
      },
      configurable: true,
      writable: true,
    },
    removeEventListener: {
      value(this: AbortSignal, type: string, listener: unknown, options?: unknown) {
        const w = contained(type, listener) ? wrappers.get(listener) : undefined
        return remove.call(this, type, (w ?? listener) as EventListener, options as EventListenerOptions)
      },
      configurable: true,
      writable: true,
    },
    onabort: {
      get: () => handler,
      set(this: AbortSignal, value: unknown) {
        handler = value
        onabort?.set?.call(this, typeof value === 'function' ? wrap(value as AbortListener) : value)
      },
      configurable: true,
    },
  })
}

/** The largest delay `setTimeout` can represent; a longer timeout never fires. */
const MAX_TIMER_MS = 2 ** 31 - 1

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
  /** Holds one of the tool's concurrency slots (from the body's start until the call settled and no body runs). */
  #running = false
  /** A body attempt has started and not yet returned or settled its promise. */
  #bodyActive = false
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
    // what reaches listeners (and the MCP wire) is a finite number and a string, nothing else the tool made
    if (typeof progress !== 'number' || !Number.isFinite(progress)) return
    const event: { -readonly [K in keyof ToolEvents['progress']]: ToolEvents['progress'][K] } = { callId: this.callId, tool: this.toolName, progress }
    if (typeof total === 'number' && Number.isFinite(total)) event.total = total
    if (typeof message === 'string') event.message = message
    this.#tm.emit('progress', event)
  }

  #getSignal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController()
      containAbortListeners(this.#controller.signal, (err) => this.#tm.reportError(this.callId, this.#entry.name, err))
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
    tm.metricsBuffer.started(entry.metricsId)
    try {
      if (tm.hasListeners('call_start')) tm.emit('call_start', { callId: this.callId, tool: entry.name })
      if (tm.tracer !== undefined) this.#span = tm.tracer.start(entry.name, this.callId, entry.def.description, this.#input, entry.sensitive)
    } catch (err) {
      // telemetry never stops a call
      tm.reportError(this.callId, entry.name, err)
    }
    const signal = options?.signal
    if (signal !== undefined) {
      try {
        if (signal.aborted) {
          this.#finish(cancelledResult('signal'))
          return
        }
        this.#onAbort = () => this.#interrupt(cancelledResult('signal'))
        signal.addEventListener('abort', this.#onAbort, { once: true })
      } catch (err) {
        // a signal-like object that throws: the options are at fault, not the tool
        this.#onAbort = undefined
        tm.reportError(this.callId, entry.name, err)
        this.#finish(ToolResult.failed(refusalError('invalid_options', 'The call options could not be read: signal')))
        return
      }
    }
    tm.track(this)
    const timeoutMs = options?.timeoutMs ?? entry.timeoutMs
    // setTimeout fires at once for a delay it cannot represent: such a timeout never fires
    if (timeoutMs !== undefined && timeoutMs <= MAX_TIMER_MS) {
      this.#timer = setTimeout(
        () => this.#interrupt(ToolResult.failed(toolError('timeout', `The tool did not finish within ${timeoutMs} ms`))),
        timeoutMs,
      )
    }
    this.#guarded(() => {
      if (this.#continuation !== undefined) this.#admit()
      else if (entry.permissionHooks.length !== 0) this.#checkPermission()
      else this.#gate()
    })
  }

  /**
   * Runs a step of the call; anything it throws (a bug, or a hostile value that slipped
   * through) settles the call as a generic error instead of escaping.
   */
  #guarded(step: () => void): void {
    try {
      step()
    } catch (err) {
      this.#panic(err)
    }
  }

  /** Settles the call as a generic error after an unexpected throw in the pipeline. */
  #panic(err: unknown): void {
    this.#tm.reportError(this.callId, this.#entry.name, err)
    this.#finish(ToolResult.failed(toolError('other', TOOL_FAILED_MESSAGE)))
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
    when(
      needed,
      (n) => this.#guarded(() => (n ? this.#askConfirmation() : this.#admit())),
      (err) => this.#guarded(() => this.#fail(err)),
    )
  }

  #askConfirmation(): void {
    if (this.#settled) return
    const def = this.#entry.def as ToolDefinition<unknown>
    let summarized: unknown
    let changes: unknown
    try {
      summarized = def.summarize?.(this.#input)
      changes = def.previewChanges?.(this.#input)
    } catch (err) {
      return this.#fail(err)
    }
    let summary: unknown
    const park = (list: unknown): void => {
      if (this.#settled) return
      const confirmId = globalThis.crypto.randomUUID()
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
      this.#tm.park(confirmId, 'confirmation', this.#entry, this.#input, this.callId, this.#options?.timeoutMs)
      this.#finish(result)
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

  /**
   * Starts the body (first attempt or a retry). The body counts as running, and keeps its
   * concurrency slot, until it returns or its promise settles, even when the call settled
   * before that (cancelled, timed out): at most `limit` bodies of a tool run at once.
   */
  #runBody(): void {
    this.#ran = true
    this.#bodyActive = true
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
    when(
      ret,
      (v) => {
        this.#bodyDone()
        this.#guarded(() => this.#complete(v))
      },
      (e) => {
        this.#bodyDone()
        this.#guarded(() => this.#fail(e))
      },
    )
  }

  /** The body's attempt returned or settled: a call that already settled gives its slot back now. */
  #bodyDone(): void {
    this.#bodyActive = false
    if (this.#settled) this.#leaveSlot()
  }

  /** Gives the concurrency slot back (once) and starts queued calls. */
  #leaveSlot(): void {
    if (!this.#running) return
    this.#running = false
    this.#entry.active--
    this.#releaseSlot()
  }

  #runOutcomeCallback(callback: NonNullable<ToolEntry['outcome']>): unknown {
    const diagnostics = (this.#diagnostics ??= newDiagnostics())
    this.#callbackSettled = false
    const invocation: OutcomeInvocation = {
      context: this,
      reportFailure: (error: Error) => {
        if (this.#callbackSettled) return // inert once the callback settles
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
    let thenable = false
    try {
      thenable = typeof ret === 'object' && ret !== null && typeof (ret as { then?: unknown }).then === 'function'
    } catch {
      thenable = true // a throwing `then` getter: `when` turns it into a rejection
    }
    if (!thenable) {
      this.#callbackSettled = true
      return ret
    }
    return new Promise<unknown>((resolve, reject) =>
      when(
        ret,
        (v) => {
          this.#callbackSettled = true
          resolve(v)
        },
        (e) => {
          this.#callbackSettled = true
          reject(e)
        },
      ),
    )
  }

  #complete(value: unknown): void {
    if (this.#settled) return
    let result: ToolResult | undefined
    let data: JsonValue | undefined
    this.#raw = value
    try {
      // every read of the value is in here: a getter, a Proxy trap or a toJSON may throw
      const helper = isHelperResult(value)
      if (helper && value.status === 'ok') this.#raw = value.data
      // the common case, a plain value taken as ok(value), settles without building a ToolResult
      const plain = this.#reported === undefined && !helper && !isModelResult(value) && !(value instanceof ToolResult)
      if (plain) data = toFrozenJson(value)
      else result = normalizeReturn(value, this.#entry.untrusted, this.#entry.sensitive)
    } catch (err) {
      this.#tm.reportError(this.callId, this.#entry.name, err)
      const message = err instanceof NotJsonError ? 'The tool returned a value JSON cannot carry.' : TOOL_FAILED_MESSAGE
      result = ToolResult.failed(toolError('other', message))
      if (this.#reported !== undefined && this.#diagnostics !== undefined) this.#diagnostics.pipeline = describeThrown(err).message
    }
    if (this.#reported !== undefined && !result!.isError()) result = ToolResult.failed(toolError('other', this.#reported))
    if (this.#tm.development && this.#entry.validateOutput !== undefined && (result === undefined || result.isSuccess())) {
      try {
        const issues = this.#entry.validateOutput(result === undefined ? data : (result.data() ?? result.text()))
        if (issues !== undefined) this.#tm.emit('output_invalid', { callId: this.callId, tool: this.#entry.name, issues })
      } catch (err) {
        // output validation is a development aid: it never changes the outcome
        this.#tm.reportError(this.callId, this.#entry.name, err)
      }
    }
    if (result === undefined) this.#finish(undefined, data)
    else this.#settleAttempt(result)
  }

  #fail(err: unknown): void {
    if (this.#settled) return
    this.#tm.reportError(this.callId, this.#entry.name, err)
    if (this.#reported !== undefined && this.#diagnostics !== undefined) {
      this.#diagnostics.pipeline = describeThrown(err).message
      return this.#settleAttempt(ToolResult.failed(toolError('other', this.#reported)))
    }
    // what was thrown is the tool's: each read is guarded (a getter or a Proxy trap may throw)
    const kindValue = safeGet(err, 'kind')
    const kind = isToolErrorKind(kindValue) ? kindValue : 'other'
    const retryable = kind === 'other' ? undefined : safeGet(err, 'retryable')
    const options = typeof retryable === 'boolean' ? { retryable } : {}
    this.#settleAttempt(ToolResult.failed(toolError(kind, kind === 'other' ? TOOL_FAILED_MESSAGE : `The tool failed (${kind}).`, options)))
  }

  /** Ends one attempt: retries a retryable error when allowed, else settles. */
  #settleAttempt(result: ToolResult): void {
    const retry = this.#entry.def.retry
    const error = result.error()
    // only a body's failure is retried: a failing gate (permission, confirmation) is not a reason to run the body
    if (retry !== undefined && this.#ran && error !== undefined && error.retryable && this.#reported === undefined && typeof this.#continuation !== 'function') {
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
          this.#guarded(() => this.#runBody())
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
    try {
      this.#controller?.abort(result.isErrorKind('timeout') ? new DOMException('The call timed out', 'TimeoutError') : undefined)
    } catch (err) {
      // an abort listener the tool added threw: the call is settled already
      this.#tm.reportError(this.callId, this.#entry.name, err)
    }
  }

  /** Settles the call once: with `result`, or (no result) as a success with frozen `okData`. */
  #finish(settled: ToolResult | undefined, okData?: JsonValue): void {
    if (this.#settled) return
    this.#settled = true
    const tm = this.#tm
    const entry = this.#entry
    if (this.#timer !== undefined) clearTimeout(this.#timer)
    if (this.#retryTimer !== undefined) clearTimeout(this.#retryTimer)
    if (this.#onAbort !== undefined) {
      try {
        this.#options!.signal!.removeEventListener('abort', this.#onAbort)
      } catch {
        // a signal-like object that throws: its listener is `once` and checks #settled
      }
    }
    tm.untrack(this)
    if (this.#running) {
      // a body still running keeps the slot until it returns or settles
      if (!this.#bodyActive) this.#leaveSlot()
    } else {
      const i = entry.queue.indexOf(this)
      if (i >= 0) entry.queue.splice(i, 1)
    }
    let view: CallResult
    try {
      view = settled === undefined ? okView(okData as JsonValue, this.callId, entry.untrusted) : viewOf(settled, this.callId)
    } catch (err) {
      // a result that cannot be shown (a bug, or a forged result) settles as a generic error
      tm.reportError(this.callId, entry.name, err)
      settled = ToolResult.failed(toolError('other', TOOL_FAILED_MESSAGE))
      view = viewOf(settled, this.callId)
    }
    try {
      this.#record(settled, view)
    } catch (err) {
      // bookkeeping never keeps a call from settling
      tm.reportError(this.callId, entry.name, err)
    }
    if (this.#mode === 'view') {
      this.#resolve(view)
    } else {
      const result = settled ?? canonicalOf(view)!
      this.#resolve({ view, result, raw: this.#raw, ran: this.#ran, reported: this.#reported, diagnostics: (this.#diagnostics ??= newDiagnostics()) })
    }
  }

  /** The breaker, parking, metrics, span, evidence and `call_end` of a settled call. */
  #record(settled: ToolResult | undefined, view: CallResult): void {
    const tm = this.#tm
    const entry = this.#entry
    const durationMs = performance.now() - this.#startedAt
    if (settled === undefined) tm.metricsBuffer.succeeded(entry.metricsId, durationMs)
    else tm.metricsBuffer.settled(entry.metricsId, settled, durationMs)
    if (this.#admittedByBreaker) {
      const neutral = settled !== undefined && (settled.isErrorKind('cancelled') || settled.isErrorKind('invalid_args'))
      entry.breaker!.settle(neutral ? 'neutral' : settled !== undefined && settled.isError() ? 'failed' : 'healthy')
    }
    if (settled !== undefined && settled.isPending() && this.#ran) {
      tm.park(settled.pendingRequest()!.id, 'suspension', entry, this.#input, this.callId, this.#options?.timeoutMs)
    }
    const evidence = tm.evidence
    if (this.#span === undefined && evidence === undefined && !tm.hasListeners('call_end')) return
    const result = settled ?? canonicalOf(view)!
    if (this.#span !== undefined) {
      try {
        tm.tracer!.end(this.#span, result, entry.sensitive)
      } catch (err) {
        tm.reportError(this.callId, entry.name, err)
      }
    }
    if (evidence !== undefined && this.#ran) this.#writeEvidence(evidence, result, durationMs)
    if (tm.hasListeners('call_end')) {
      const { startMs, endMs } = wallSpan(durationMs)
      const record = callRecord(this.callId, entry.name, result, startMs, endMs, this.#attemptNo, tm.canUndo(this.callId))
      tm.emit('call_end', { callId: this.callId, tool: entry.name, status: view.status, statusName: result.statusName(), durationMs, result, view, record })
    }
  }

  #writeEvidence(store: EvidenceStore, result: ToolResult, durationMs: number): void {
    const fail = (error: unknown): void =>
      this.#tm.emit('evidence_error', { callId: this.callId, tool: this.#entry.name, message: describeThrown(error).message, error })
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
      when(written, () => undefined, fail)
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
      next.#guarded(() => next.#runBody())
    }
  }
}
