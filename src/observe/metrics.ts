/**
 * Metrics, aggregated in the Rust core. Each settled call writes four numbers into a
 * reusable buffer; a started call only counts up its tool's number of calls started. Both
 * cross into the core in one flush when the buffer fills or when someone reads the metrics
 * (the counts first, as one started-count record per tool, then the settled records in
 * order), so a call pays no crossing of its own and the in-flight gauge reads as if every
 * start had been recorded one by one.
 */
import { BindingMetrics } from '../core/native.js'
import type { ToolResult } from '../core/result.js'
import { ERROR_KINDS } from '../core/result.js'

const RECORDS = 1024
/** The status code of a started-count record: its last number is how many calls started. */
const STARTED_COUNT = -2
const STATUS_CODE = { success: 0, error: 1, refused: 2, skipped: 3, pending: 4 } as const
const KIND_CODE = new Map<string, number>(ERROR_KINDS.map((k, i) => [k, i]))
const BREAKER_CODE = { closed: 0, open: 1, half_open: 2 } as const

/** The breaker's state, as telemetry reports it. */
export type BreakerState = 'closed' | 'open' | 'half_open'

/** Per-tool figures of a metrics snapshot. */
export interface ToolMetrics {
  readonly tool: string
  readonly calls: Readonly<Record<'success' | 'error' | 'denied' | 'skipped' | 'pending', number>>
  readonly errors: Readonly<Record<string, number>>
  readonly duration: {
    readonly buckets: readonly { readonly le: string; readonly count: number }[]
    readonly sum_ms: number
    readonly count: number
  }
  readonly in_flight: number
  readonly breaker: BreakerState
}

/** What `tm.metrics()` returns. */
export interface MetricsSnapshot {
  readonly tools: readonly ToolMetrics[]
}

/** @internal The batching recorder of one manager. */
export class MetricsBuffer {
  private readonly core = new BindingMetrics()
  private readonly buffer = new Float64Array(RECORDS * 4)
  private used = 0
  /** Calls started per tool id since the last flush. */
  private readonly starts: number[] = []
  /** The tool ids whose count in `starts` is above 0, each once. */
  private readonly startedTools: number[] = []

  register(tool: string): number {
    const id = this.core.registerTool(tool)
    while (this.starts.length <= id) this.starts.push(0)
    return id
  }

  started(toolId: number): void {
    if (this.starts[toolId]!++ === 0) this.startedTools.push(toolId)
  }

  settled(toolId: number, result: ToolResult, durationMs: number): void {
    const error = result.error()
    this.push(toolId, STATUS_CODE[result.disposition()], error === undefined ? -1 : (KIND_CODE.get(error.kind) ?? -1), durationMs > 0 ? durationMs : 0)
  }

  succeeded(toolId: number, durationMs: number): void {
    this.push(toolId, 0, -1, durationMs > 0 ? durationMs : 0)
  }

  private push(a: number, b: number, c: number, d: number): void {
    const i = this.used
    const buf = this.buffer
    buf[i] = a
    buf[i + 1] = b
    buf[i + 2] = c
    buf[i + 3] = d
    this.used = i + 4
    if (this.used === buf.length) this.flush()
  }

  flush(): void {
    // the starts before the settled records: a settled call's start is then always counted
    // first, as it was recorded first, and the gauge never has to go below zero
    const tools = this.startedTools
    if (tools.length > 0) {
      const counts = new Float64Array(tools.length * 4)
      for (let i = 0; i < tools.length; i++) {
        const id = tools[i]!
        counts[4 * i] = id
        counts[4 * i + 1] = STARTED_COUNT
        counts[4 * i + 2] = -1
        counts[4 * i + 3] = this.starts[id]!
        this.starts[id] = 0
      }
      tools.length = 0
      this.core.recordBatch(counts)
    }
    if (this.used === 0) return
    const n = this.used
    this.used = 0
    this.core.recordBatch(this.buffer.subarray(0, n))
  }

  breaker(toolId: number, state: BreakerState): void {
    this.core.setBreakerState(toolId, BREAKER_CODE[state])
  }

  snapshot(): MetricsSnapshot {
    this.flush()
    return JSON.parse(this.core.snapshotJson()) as MetricsSnapshot
  }

  prometheus(): string {
    this.flush()
    return this.core.prometheus()
  }
}
