import { trace } from '@opentelemetry/api'
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base'
import { describe, expect, it, vi } from 'vitest'
import { ToolManager, type ToolEvents } from '../src/index.js'

/** A Standard Schema whose `validate` answers with a promise (as an async refinement does). */
function asyncSchema(check: (value: unknown) => boolean, reject = false) {
  return {
    '~standard': {
      version: 1 as const,
      vendor: 'test',
      validate: (value: unknown) =>
        reject
          ? Promise.reject(new Error('validator down'))
          : Promise.resolve(check(value) ? { value } : { issues: [{ message: 'is not valid', path: ['n'] }] }),
      jsonSchema: { input: () => ({ type: 'object' }), output: () => ({ type: 'object' }) },
    },
  }
}

describe('pipeline', () => {
  it('an input validator that answers with a promise is awaited: valid input runs, invalid input is invalid, a rejection fails the call', async () => {
    const tm = new ToolManager()
    let runs = 0
    const isEven = (v: unknown) => typeof (v as { n?: unknown }).n === 'number' && (v as { n: number }).n % 2 === 0
    tm.register({ name: 'even', inputSchema: asyncSchema(isEven) as never, run: (input: { n: number }) => (runs++, input.n) })
    tm.register({ name: 'down', inputSchema: asyncSchema(isEven, true) as never, run: () => runs++ })
    expect(await tm.call('even', { n: 2 })).toMatchObject({ status: 'ok', data: 2 })
    expect(await tm.callJson('even', '{"n":3}')).toMatchObject({ status: 'invalid' })
    const [ok, invalid] = await tm.callMany([
      { name: 'even', args: '{"n":4}' },
      { name: 'even', input: { n: 5 } },
    ])
    expect(ok).toMatchObject({ status: 'ok', data: 4 })
    expect(invalid).toMatchObject({ status: 'invalid' })
    expect((await tm.executeWithOutcome('even', { n: 7 })).outcome.status).toBe('invalid')
    expect(await tm.execute('even', { n: 8 })).toBe(8)
    const down = await tm.call('down', { n: 2 })
    expect(down.status === 'invalid' || down.status === 'error').toBe(true)
    expect(runs).toBe(3)
  })

  it('a call_end listener attached after registration, or while a call runs, hears the end; once detached it hears nothing', async () => {
    const tm = new ToolManager()
    let release!: () => void
    const gate = new Promise<void>((r) => (release = r))
    tm.register({ name: 'wait', inputSchema: { type: 'object' }, run: async () => (await gate, 'done') })
    tm.register({ name: 'now', inputSchema: { type: 'object' }, run: () => 'now' })
    const ends: ToolEvents['call_end'][] = []
    const starts: string[] = []
    const inFlight = tm.call('wait', {})
    const onEnd = (e: ToolEvents['call_end']) => ends.push(e)
    const onStart = (e: ToolEvents['call_start']) => starts.push(e.tool)
    tm.on('call_end', onEnd).on('call_start', onStart)
    release()
    await inFlight
    await tm.call('now', {})
    expect(ends.map((e) => [e.tool, e.status])).toEqual([
      ['wait', 'ok'],
      ['now', 'ok'],
    ])
    expect(starts).toEqual(['now'])
    tm.off('call_end', onEnd).off('call_start', onStart)
    await tm.call('now', {})
    expect(ends).toHaveLength(2)
    expect(starts).toHaveLength(1)
  })

  it('each tool has its own limiter: a tool at its limit does not hold back another', async () => {
    const tm = new ToolManager()
    let release!: () => void
    const gate = new Promise<void>((r) => (release = r))
    tm.register({ name: 'a', inputSchema: { type: 'object' }, concurrency: { limit: 1, queue: 0 }, run: async () => (await gate, 'a') })
    tm.register({ name: 'b', inputSchema: { type: 'object' }, concurrency: { limit: 1, queue: 0 }, run: () => 'b' })
    const first = tm.call('a', {})
    expect(await tm.call('a', {})).toMatchObject({ status: 'refused', code: 'concurrency_limit' })
    expect(await tm.call('b', {})).toMatchObject({ status: 'ok', data: 'b' })
    release()
    expect(await first).toMatchObject({ status: 'ok', data: 'a' })
    expect(await tm.call('a', {})).toMatchObject({ status: 'ok', data: 'a' })
  })

  it('a cancelled call queued behind a busy slot leaves the queue; the next queued call runs when the slot frees', async () => {
    const tm = new ToolManager()
    let release!: () => void
    const gate = new Promise<void>((r) => (release = r))
    const ran: string[] = []
    tm.register({
      name: 'q',
      inputSchema: { type: 'object', properties: { id: { type: 'string' } } },
      concurrency: { limit: 1, queue: 2 },
      run: async (input: { id: string }) => {
        ran.push(input.id)
        if (input.id === 'first') await gate
        return input.id
      },
    })
    const first = tm.call('q', { id: 'first' })
    const second = tm.call('q', { id: 'second' }, { callId: 'second' })
    const third = tm.call('q', { id: 'third' })
    expect(tm.cancel('second')).toBe(true)
    expect(await second).toMatchObject({ status: 'cancelled', by: 'operator' })
    release()
    expect(await first).toMatchObject({ status: 'ok', data: 'first' })
    expect(await third).toMatchObject({ status: 'ok', data: 'third' })
    expect(ran).toEqual(['first', 'third'])
  })

  it('a tracer provider registered after the manager made calls: later calls get their spans (asked again after at most 100 ms)', async () => {
    vi.useFakeTimers({ toFake: ['performance'] })
    const exporter = new InMemorySpanExporter()
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
    try {
      const tm = new ToolManager()
      tm.register({ name: 'traced', inputSchema: { type: 'object' }, run: () => 'ok' })
      expect(await tm.call('traced', {})).toMatchObject({ status: 'ok' })
      trace.setGlobalTracerProvider(provider)
      vi.advanceTimersByTime(150)
      expect(await tm.call('traced', {}, { callId: 'after' })).toMatchObject({ status: 'ok' })
      expect(await tm.call('traced', {}, { callId: 'next' })).toMatchObject({ status: 'ok' })
      const ids = exporter.getFinishedSpans().map((s) => s.attributes['gen_ai.tool.call.id'])
      expect(ids).toEqual(['after', 'next'])
    } finally {
      vi.useRealTimers()
      await provider.shutdown()
      trace.disable()
    }
  })

  it('a manager keeps the provider it found: after trace.disable() and a new provider, a new manager uses the new one', async () => {
    const first = new InMemorySpanExporter()
    const second = new InMemorySpanExporter()
    const a = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(first)] })
    const b = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(second)] })
    const tool = { name: 'traced', inputSchema: { type: 'object' }, run: () => 'ok' }
    try {
      trace.setGlobalTracerProvider(a)
      const old = new ToolManager()
      old.register(tool)
      await old.call('traced', {}, { callId: 'old-1' })
      trace.disable()
      trace.setGlobalTracerProvider(b)
      await old.call('traced', {}, { callId: 'old-2' })
      const fresh = new ToolManager()
      fresh.register(tool)
      await fresh.call('traced', {}, { callId: 'new-1' })
      const ids = (e: InMemorySpanExporter) => e.getFinishedSpans().map((s) => s.attributes['gen_ai.tool.call.id'])
      expect(ids(first)).toEqual(['old-1', 'old-2'])
      expect(ids(second)).toEqual(['new-1'])
    } finally {
      await a.shutdown()
      await b.shutdown()
      trace.disable()
    }
  })
})
