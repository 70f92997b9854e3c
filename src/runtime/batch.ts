/**
 * `callMany`: the batch's entries, each read once, and the sink that collects their views
 * and resolves once, when the last call settles.
 */
import type { CallOptions } from './tool.js'
import type { CallResult } from '../core/view.js'

/** One `callMany` entry, each field read once. */
export interface BatchEntry {
  readonly name: unknown
  readonly args: unknown
  readonly input: unknown
  readonly options: unknown
}

/** Reads entry `i` of a `callMany` list; `undefined` when the entry or one of its fields throws. */
export function readBatchEntry(calls: readonly unknown[], i: number): BatchEntry | undefined {
  try {
    const c = calls[i] as { name?: unknown; args?: unknown; input?: unknown; options?: unknown } | null | undefined
    if (typeof c !== 'object' || c === null) return { name: undefined, args: undefined, input: undefined, options: undefined }
    const args = c.args
    return { name: c.name, args, input: args === undefined ? c.input : undefined, options: c.options }
  } catch {
    return undefined
  }
}

/** One call of a `callMany` batch: `args` is JSON text (as models send it) or `input` an object. */
export type BatchCall =
  | { readonly name: string; readonly args: string; readonly input?: undefined; readonly options?: CallOptions }
  | { readonly name: string; readonly input: unknown; readonly args?: undefined; readonly options?: CallOptions }

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
