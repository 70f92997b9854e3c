import { describe, expect, it } from 'vitest'
import { BindingMetrics } from '../src/core/native.js'
import { ERROR_KINDS, refusalError, toolError, ToolResult } from '../src/core/result.js'
import { MetricsBuffer } from '../src/observe/metrics.js'
import { ToolManager } from '../src/runtime/manager.js'

// The buffer counts starts in JS and sends them as one started-count record per tool at each
// flush. What the core reports must be exactly what it reports when every start and every
// settled call is recorded one by one, in the order they happened.

const STATUS = { success: 0, error: 1, refused: 2, skipped: 3, pending: 4 } as const

/** The reference: every start and every settled call sent to the core on its own, in order. */
class OneByOne {
  readonly core = new BindingMetrics()
  register(tool: string): number {
    return this.core.registerTool(tool)
  }
  started(id: number): void {
    this.core.recordBatch(Float64Array.of(id, -1, -1, 0))
  }
  settled(id: number, result: ToolResult, ms: number): void {
    const kind = result.error()?.kind
    this.core.recordBatch(Float64Array.of(id, STATUS[result.disposition()], kind === undefined ? -1 : ERROR_KINDS.indexOf(kind), ms > 0 ? ms : 0))
  }
}

/** A small deterministic generator (mulberry32). */
function random(seed: number): () => number {
  let a = seed
  return () => {
    a = (a + 0x6d2b79f5) | 0
    let t = Math.imul(a ^ (a >>> 15), 1 | a)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const RESULTS = [
  ToolResult.failed(toolError('timeout', 'slow')),
  ToolResult.failed(toolError('other', 'boom')),
  ToolResult.failed(refusalError('denied', 'no')),
  ToolResult.skipped('dry run'),
]

describe('MetricsBuffer', () => {
  it.each([1, 2, 3])('reports what recording one by one reports, read at any point (seed %i)', (seed) => {
    const next = random(seed)
    const buffer = new MetricsBuffer()
    const reference = new OneByOne()
    const tools = ['a', 'b', 'c'].map((name) => [buffer.register(name), reference.register(name)] as const)
    const open: number[] = [] // indexes into `tools` of calls started and not yet settled
    let reads = 0
    for (let step = 0; step < 6000; step++) {
      const r = next()
      if (r < 0.45 || open.length === 0) {
        const t = Math.floor(next() * tools.length)
        buffer.started(tools[t]![0])
        reference.started(tools[t]![1])
        open.push(t)
      } else if (r < 0.995) {
        const t = open.splice(Math.floor(next() * open.length), 1)[0]!
        const ms = next() < 0.1 ? -1 : next() * 100
        if (next() < 0.7) {
          buffer.succeeded(tools[t]![0], ms)
          reference.settled(tools[t]![1], ToolResult.success('ok'), ms)
        } else {
          const result = RESULTS[Math.floor(next() * RESULTS.length)]!
          buffer.settled(tools[t]![0], result, ms)
          reference.settled(tools[t]![1], result, ms)
        }
      } else {
        reads++
        expect(buffer.snapshot()).toEqual(JSON.parse(reference.core.snapshotJson()))
        expect(buffer.prometheus()).toBe(reference.core.prometheus())
      }
    }
    expect(reads).toBeGreaterThan(10)
    const snapshot = buffer.snapshot()
    expect(snapshot).toEqual(JSON.parse(reference.core.snapshotJson()))
    expect(buffer.prometheus()).toBe(reference.core.prometheus())
    expect(snapshot.tools.reduce((n, t) => n + t.in_flight, 0)).toBe(open.length)
  })

  it('a read with nothing new changes nothing', () => {
    const buffer = new MetricsBuffer()
    const id = buffer.register('t')
    buffer.started(id)
    buffer.started(id)
    const first = buffer.snapshot()
    expect(first.tools[0]!.in_flight).toBe(2)
    expect(buffer.snapshot()).toEqual(first)
    buffer.succeeded(id, 1)
    expect(buffer.snapshot().tools[0]).toMatchObject({ in_flight: 1, calls: { success: 1 } })
  })

  it('a tool registered twice counts in one series', () => {
    const buffer = new MetricsBuffer()
    const id = buffer.register('t')
    expect(buffer.register('t')).toBe(id)
    buffer.started(id)
    buffer.started(id)
    expect(buffer.snapshot().tools).toHaveLength(1)
    expect(buffer.snapshot().tools[0]!.in_flight).toBe(2)
  })
})

describe('the in-flight gauge across batch flushes', () => {
  it('counts held calls while thousands of others start and settle', async () => {
    const tm = new ToolManager({ development: false })
    const releases: (() => void)[] = []
    tm.register({ name: 'hold', inputSchema: { type: 'object' }, run: () => new Promise<void>((r) => releases.push(r)) })
    let gate = Promise.resolve()
    tm.register({
      name: 'echo',
      inputSchema: { type: 'object' },
      run: async (input) => {
        await gate
        return input
      },
    })
    const held = [tm.call('hold', {}), tm.call('hold', {}), tm.call('hold', {})]
    const gauge = (tool: string) => tm.metrics().tools.find((t) => t.tool === tool)!
    expect(gauge('hold').in_flight).toBe(3)
    for (let round = 0; round < 3; round++) {
      // more settled calls than one batch holds
      let open!: () => void
      gate = new Promise<void>((r) => (open = r))
      const calls: Promise<unknown>[] = []
      for (let i = 0; i < 1500; i++) calls.push(tm.callJson('echo', '{"i":1}'))
      await new Promise((r) => setTimeout(r, 0))
      expect(gauge('echo').in_flight).toBe(1500)
      open()
      await Promise.all(calls)
      expect(gauge('echo')).toMatchObject({ in_flight: 0, calls: { success: 1500 * (round + 1) } })
      expect(gauge('echo').duration.count).toBe(1500 * (round + 1))
      expect(gauge('hold').in_flight).toBe(3 - round)
      releases.shift()!()
      await held[round]
    }
    expect(gauge('hold')).toMatchObject({ in_flight: 0, calls: { success: 3 } })
    expect(tm.metrics({ format: 'prometheus' })).toContain('toolwire_tool_calls_in_flight{tool="echo"} 0\n')
  })
})
