/**
 * Thenables a caller's code produced (a tool body's return, a validator's result): read
 * without ever trusting them (a throwing `then` getter, a `then` that calls back twice or
 * never, a thenable resolving to thenables).
 */

/** Whether `v` is a promise or another thenable. A `then` getter that throws counts as a thenable (that rejects). */
export const isThenable = (v: unknown): v is PromiseLike<unknown> => {
  if (typeof v !== 'object' || v === null) return false
  try {
    return typeof (v as { then?: unknown }).then === 'function'
  } catch {
    return true
  }
}

/** How deep a thenable may resolve to another thenable before `when` gives up. */
const MAX_THENABLE_DEPTH = 8

/**
 * Calls `onValue` with `value`, or, when `value` is a thenable, with what it settles as
 * (following thenables that resolve to thenables, a few levels deep); calls `onError`
 * with a rejection, a throwing `then` getter or a `then` that throws. Exactly one of the
 * two is called, at most once, however the thenable behaves: a hostile `then` that calls
 * both, or one twice, is heard once. A plain value is handled synchronously. The callbacks
 * must not throw.
 */
export function when(value: unknown, onValue: (v: unknown) => void, onError: (e: unknown) => void, depth = 0): void {
  if (typeof value !== 'object' || value === null) return onValue(value)
  let then: unknown
  try {
    then = (value as { then?: unknown }).then
  } catch (err) {
    return onError(err)
  }
  if (typeof then !== 'function') return onValue(value)
  if (depth >= MAX_THENABLE_DEPTH) return onError(new TypeError('toolwire: a thenable resolved to thenables too deeply'))
  let done = false
  const resolve = (v: unknown): void => {
    if (done) return
    done = true
    when(v, onValue, onError, depth + 1)
  }
  const reject = (e: unknown): void => {
    if (done) return
    done = true
    onError(e)
  }
  try {
    ;(then as (this: unknown, ok: (v: unknown) => void, bad: (e: unknown) => void) => unknown).call(value, resolve, reject)
  } catch (err) {
    reject(err)
  }
}
