/**
 * How one attempt of a tool's body ends (call.ts runs it): subscribing to what the body
 * returned, what it threw as a result, a retry after a retryable error, parking a suspension,
 * and the bounded wait for the store writes a view waits on. The call's state is reached
 * through its `CallAccess`.
 */
import { isToolErrorKind, refusalError, toolError, ToolResult } from '../core/result.js'
import type { JsonValue, PendingRequest } from '../core/types.js'
import { REQUEST_ID_IN_USE, requestIdInUseText, toolFailedText } from '../core/texts.js'
import { RAN, SETTLED, type CallAccess } from './call-access.js'
import { safeGet, when } from './normalize.js'
import type { RetryOptions, ToolContext } from './tool.js'
import type { SuspensionExtras } from './types.js'

const { getPrototypeOf, hasOwn } = Object
const PromiseProto = Promise.prototype
const PromiseThen = PromiseProto.then

/** Subscribes to a body's promise: natively for a plain native promise, else with `when` (any thenable, hostile ones too). */
export function subscribe(value: object, onValue: (v: unknown) => void, onError: (e: unknown) => void): void {
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

/** The result of a body that threw `err`: its `kind` and `retryable` when it names them, each read guarded (a getter or a Proxy trap may throw). */
export function thrownResult(err: unknown): ToolResult {
  const kindValue = safeGet(err, 'kind')
  const kind = isToolErrorKind(kindValue) ? kindValue : 'other'
  const retryable = safeGet(err, 'retryable')
  const options = typeof retryable === 'boolean' ? { retryable } : {}
  return ToolResult.failed(toolError(kind, toolFailedText(kind), options))
}

/** The delay before retry number `attemptNo` (from 1): full jitter over an exponential backoff, capped. */
function retryDelay(retry: RetryOptions, attemptNo: number): number {
  const base = retry.baseMs ?? 100
  const cap = retry.maxMs ?? 5000
  return Math.random() * Math.min(cap, base * 2 ** (attemptNo - 1))
}

/** What a suspension parks beside the call: its request's schema, whether it asks for a confirmation, and what the body kept for its resume. */
function suspensionExtras(request: PendingRequest, kept: JsonValue | undefined): SuspensionExtras {
  return {
    ...(request.schema === undefined ? {} : { schema: request.schema }),
    ...(request.kind === 'confirmation' ? { confirmation: true as const } : {}),
    ...(kept === undefined ? {} : { resumeState: kept }),
  }
}

/**
 * Calls `deliver` once `wait` settles, or after `boundMs` with `late()` first (a store that never
 * answers must not hang the call); `deliver` runs once either way.
 */
export function deliverWithin(wait: Promise<unknown>, boundMs: number, deliver: () => void, late: () => void): void {
  let delivered = false
  const once = (): void => {
    if (delivered) return
    delivered = true
    clearTimeout(timer)
    deliver()
  }
  const timer = setTimeout(() => {
    if (delivered) return
    late()
    once()
  }, boundMs)
  // the waits never reject (each reports its own failure); a rejection still delivers
  wait.then(once, once)
}

/** Ends one attempt of `c`: retries a retryable error when the tool allows it, parks a suspension, else settles. */
export function settleAttempt<C extends ToolContext>(a: CallAccess<C>, c: C, result: ToolResult): void {
  const ran = (a.flags(c) & RAN) !== 0
  // only a body's failure is retried: a failing gate (permission, confirmation) is not a reason to run the body
  if (a.pipeline(c).retry && ran && a.extras(c)?.reported === undefined && !a.bodyContinuation(c)) {
    const error = result.error()
    const entry = a.entry(c)
    const retry = entry.def.retry!
    if (error !== undefined && error.retryable && c.attempt < (retry.attempts ?? 3)) {
      const delay = retryDelay(retry, c.attempt)
      const timeoutMs = a.options(c)?.timeoutMs ?? entry.timeoutMs
      // a retry the timeout would cut short is not started: the caller gets the real error
      if (timeoutMs !== undefined && performance.now() - a.clock(c) + delay >= timeoutMs) return a.finish(c, result)
      a.more(c).retryTimer = setTimeout(retryNow, delay, a, c)
      return
    }
  }
  if (ran && result.isPending()) return parkSuspension(a, c, result)
  a.finish(c, result)
}

function retryNow<C extends ToolContext>(a: CallAccess<C>, c: C): void {
  a.more(c).retryTimer = undefined
  if ((a.flags(c) & SETTLED) !== 0) return
  a.nextAttempt(c)
  a.guarded(c, () => a.runBody(c))
}

/**
 * The park point of a body that asked for input (`tm.resume` continues it): settles once the
 * call is parked (with a store, once the store holds it), or refused `request_id_in_use` when
 * a parked call holds its request id. A call settled meanwhile (cancelled) is unparked.
 */
function parkSuspension<C extends ToolContext>(a: CallAccess<C>, c: C, result: ToolResult): void {
  const request = result.pendingRequest()!
  const id = request.id
  const host = a.host(c)
  const settle = (parked: boolean): void => {
    if ((a.flags(c) & SETTLED) !== 0) {
      if (parked) host.unpark(id, c.callId)
      return
    }
    a.finish(c, parked ? result : ToolResult.failed(refusalError(REQUEST_ID_IN_USE, requestIdInUseText(id))))
  }
  const extras = suspensionExtras(request, a.extras(c)?.kept)
  const parked = host.park(id, 'suspension', a.entry(c), a.input(c), c.callId, a.options(c), extras)
  if (typeof parked === 'boolean') return settle(parked)
  const x = a.more(c)
  // the body is done: what is left is the store's answer, which the store's own bound limits
  if (x.timer !== undefined) clearTimeout(x.timer)
  x.wait = parked.then((ok) => a.guarded(c, () => settle(ok)))
}
