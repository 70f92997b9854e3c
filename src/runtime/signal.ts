/**
 * The signal a tool's body reads as `ctx.signal`: created on first read, with `abort`
 * listeners that cannot end the process.
 */
import { refusalError, ToolResult } from '../core/result.js'
import { invalidOptionsText } from '../core/texts.js'
import { cancelledResult, when } from './normalize.js'

type AbortListener = ((this: AbortSignal, event: Event) => unknown) | { handleEvent(event: Event): unknown }

/**
 * An AbortController whose signal's `abort` listeners (added with `addEventListener` or
 * `onabort`) cannot end the process: Node reports a listener's throw, or its rejected
 * promise, as an uncaught exception, and the abort is dispatched by the runtime (a timeout,
 * a cancel). Such errors go to `onError` (the `error` event) instead. Other event types
 * and removal work as on any signal.
 */
export function containedController(onError: (err: unknown) => void): AbortController {
  const controller = new AbortController()
  const signal = controller.signal
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
  return controller
}

/**
 * Listens (once) for the abort of a call's `signal` with `onAbort`. Returns what the call settles
 * with at once instead: cancelled when the signal already aborted, refused `invalid_options`
 * when it cannot be listened to (a signal-like object that throws: the options are at fault,
 * not the tool; `onError` is told); else `undefined`.
 */
export function watchSignal(signal: AbortSignal, onAbort: () => void, onError: (err: unknown) => void): ToolResult | undefined {
  try {
    if (signal.aborted) return cancelledResult('signal')
    signal.addEventListener('abort', onAbort, { once: true })
    return undefined
  } catch (err) {
    onError(err)
    return ToolResult.failed(refusalError('invalid_options', invalidOptionsText('signal')))
  }
}
