/**
 * What one attempt of a tool's body needs besides the call's own state (call.ts): subscribing
 * to what the body returned, what it threw as a result, the delay before a retry, what a
 * suspension parks beside the call, and the bounded wait for the store writes a view waits on.
 */
import { isToolErrorKind, toolError, ToolResult } from '../core/result.js'
import type { JsonValue, PendingRequest } from '../core/types.js'
import { toolFailedText } from '../core/texts.js'
import { safeGet, when } from './normalize.js'
import type { RetryOptions } from './tool.js'
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
  const retryable = kind === 'other' ? undefined : safeGet(err, 'retryable')
  const options = typeof retryable === 'boolean' ? { retryable } : {}
  return ToolResult.failed(toolError(kind, toolFailedText(kind), options))
}

/** The delay before retry number `attemptNo` (from 1): full jitter over an exponential backoff, capped. */
export function retryDelay(retry: RetryOptions, attemptNo: number): number {
  const base = retry.baseMs ?? 100
  const cap = retry.maxMs ?? 5000
  return Math.random() * Math.min(cap, base * 2 ** (attemptNo - 1))
}

/** What a suspension parks beside the call: its request's schema, whether it asks for a confirmation, and what the body kept for its resume. */
export function suspensionExtras(request: PendingRequest, kept: JsonValue | undefined): SuspensionExtras {
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
