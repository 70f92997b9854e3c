/**
 * The manager's event listeners: `tm.on`/`tm.off`, `emit` (a listener never affects a call) and
 * `reportError` (the `error` event of something thrown).
 */
import { describeThrown, isThenable } from './normalize.js'
import type { ToolEventName, ToolEvents } from './types.js'

/** A listener of event `E`. */
export type Listener<E extends ToolEventName> = (event: ToolEvents[E]) => unknown

/** Whether a listener of `event` changes what a tool's pipeline has (a stage serves it). */
function servedByStage(event: ToolEventName): boolean {
  return event === 'call_start' || event === 'call_end'
}

/** One manager's listeners. */
export class Events {
  /** Every event has a slot from the start (a fixed shape keeps the per-call checks cheap). */
  readonly listeners: { [E in ToolEventName]: Listener<E>[] | undefined } = {
    call_start: undefined,
    call_end: undefined,
    error: undefined,
    output_invalid: undefined,
    confirmation: undefined,
    progress: undefined,
    log: undefined,
    evidence_error: undefined,
    late_report: undefined,
  }

  /** Whether `event` has a listener. */
  has(event: ToolEventName): boolean {
    return this.listeners[event] !== undefined
  }

  /** Adds a listener; `true` when it is the first of an event a pipeline stage serves (pipelines must be recomposed). */
  on<E extends ToolEventName>(event: E, listener: Listener<E>): boolean {
    const list = (this.listeners[event] ??= [] as never) as Listener<E>[]
    list.push(listener)
    return list.length === 1 && servedByStage(event)
  }

  /** Removes a listener; `true` when the last of an event a pipeline stage serves went (pipelines must be recomposed). */
  off<E extends ToolEventName>(event: E, listener: Listener<E>): boolean {
    const list = this.listeners[event] as Listener<E>[] | undefined
    const i = list ? list.indexOf(listener) : -1
    if (i >= 0) list!.splice(i, 1)
    if (list && list.length === 0) {
      this.listeners[event] = undefined
      return servedByStage(event)
    }
    return false
  }

  emit<E extends ToolEventName>(event: E, payload: ToolEvents[E]): void {
    const list = this.listeners[event] as Listener<E>[] | undefined
    if (list === undefined) return
    for (const listener of list.slice()) {
      try {
        const r = listener(payload)
        if (isThenable(r)) (r as Promise<unknown>).then(undefined, () => {})
      } catch {
        // a listener never affects a call
      }
    }
  }

  /** Emits `error` with what was thrown. Never throws, whatever `error` is. */
  reportError(callId: string, tool: string, error: unknown): void {
    if (this.listeners.error === undefined) return
    const { message, stack } = describeThrown(error)
    this.emit('error', stack === undefined ? { callId, tool, message, error } : { callId, tool, message, stack, error })
  }
}
