/**
 * Metrics, aggregated in the Rust core. Each settled call writes four numbers into a
 * reusable buffer; the buffer crosses into the core in one call when it fills or when
 * someone reads the metrics, so a call pays no crossing of its own.
 */
import { BindingMetrics } from '../core/native.js'
import type { ToolResult } from '../core/result.js'
import { ERROR_KINDS } from '../core/result.js'
import type { BreakerState } from '../runtime/breaker.js'

const RECORDS = 1024
const STARTED = -1
const STATUS_CODE = { success: 0, error: 1, refused: 2, skipped: 3, pending: 4 } as const
const KIND_CODE = new Map<string, number>(ERROR_KINDS.map((k, i) => [k, i]))
const BREAKER_CODE = { closed: 0, open: 1, half_open: 2 } as const

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

  register(tool: string): number {
    return this.core.registerTool(tool)
  }

  started(toolId: number): void {
    this.push(toolId, STARTED, -1, 0)
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
