/**
 * The wait for an asynchronous input validation (a Standard Schema's async refinements), cut
 * by the call's timeout and abort signal as its body would be: a validation that never
 * settles cannot hang a call that has either.
 */
import { toolError, ToolResult } from '../core/result.js'
import { validationTimedOutText } from '../core/texts.js'
import { when } from '../core/thenable.js'
import { cancelledResult } from './normalize.js'

/** The largest delay `setTimeout` can represent; a longer timeout never fires. */
export const MAX_TIMER_MS = 2 ** 31 - 1

/** How a validation wait ended: the validator's answer, its failure, or a cut (timeout, signal). */
export interface ValidationWaitHandlers {
  readonly checked: (issues: unknown) => void
  readonly failed: (error: unknown) => void
  /** The call's result when its timeout or signal ended the wait first. */
  readonly cut: (result: ToolResult) => void
}

/**
 * Calls exactly one of `on`'s handlers, once: with what `validation` settles as, or with a
 * `timeout` error after `timeoutMs` (counted from now), or `cancelled` by `signal` when it
 * aborts (at once when it already has). A signal that cannot be read is left to the call,
 * which refuses it when it starts. Answers a function that cuts the wait with a result
 * (`tm.cancel`); it does nothing once the wait ended.
 */
export function awaitValidation(
  validation: PromiseLike<unknown>,
  timeoutMs: number | undefined,
  signal: AbortSignal | undefined,
  on: ValidationWaitHandlers,
): (result: ToolResult) => void {
  let done = false
  let timer: ReturnType<typeof setTimeout> | undefined
  let onAbort: (() => void) | undefined
  const finish = (then: () => void): void => {
    if (done) return
    done = true
    if (timer !== undefined) clearTimeout(timer)
    if (onAbort !== undefined) {
      try {
        signal!.removeEventListener('abort', onAbort)
      } catch {
        // a signal-like object that throws: its listener is `once` and checks `done`
      }
    }
    then()
  }
  if (signal !== undefined) {
    try {
      if (signal.aborted) {
        done = true
        on.cut(cancelledResult('signal'))
        return () => undefined
      }
      onAbort = () => finish(() => on.cut(cancelledResult('signal')))
      signal.addEventListener('abort', onAbort, { once: true })
    } catch {
      onAbort = undefined
    }
  }
  if (timeoutMs !== undefined && timeoutMs <= MAX_TIMER_MS) {
    timer = setTimeout(() => finish(() => on.cut(ToolResult.failed(toolError('timeout', validationTimedOutText(timeoutMs))))), timeoutMs)
  }
  when(
    validation,
    (issues) => finish(() => on.checked(issues)),
    (error) => finish(() => on.failed(error)),
  )
  return (result) => finish(() => on.cut(result))
}
