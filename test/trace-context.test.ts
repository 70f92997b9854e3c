// W3C trace context of a call (issue #22 Deliver 4): the hand parser (strict W3C), the carrier
// reader, `CallOptions.traceContext` parenting the `execute_tool` span with and without a
// registered propagator (no context manager registered), and `ToolContext.traceContext`.
import { propagation, trace, type Context, type TextMapGetter, type TextMapPropagator, type TextMapSetter } from '@opentelemetry/api'
import { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator } from '@opentelemetry/core'
import { createServer } from 'node:http'
import { afterEach, describe, expect, it } from 'vitest'
import { pending, ToolManager, type ToolContext } from '../src/index.js'
import { MemoryStore } from '../src/runtime/store/index.js'
import { parseTraceparent, traceContextOf } from '../src/observe/trace-context.js'
import { useTracerProvider, type FinishedSpan } from './fixtures/tracing.js'

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736'
const SPAN_ID = '00f067aa0ba902b7'
const TRACEPARENT = `00-${TRACE_ID}-${SPAN_ID}-01`

describe('parseTraceparent (W3C Trace Context, by hand)', () => {
  it('reads a version 00 traceparent', () => {
    expect(parseTraceparent(TRACEPARENT)).toEqual({ traceId: TRACE_ID, spanId: SPAN_ID, traceFlags: 1 })
    expect(parseTraceparent(`00-${TRACE_ID}-${SPAN_ID}-00`)).toEqual({ traceId: TRACE_ID, spanId: SPAN_ID, traceFlags: 0 })
  })

  it('rejects what W3C calls invalid, without throwing', () => {
    const invalid: unknown[] = [
      TRACEPARENT.toUpperCase(), // uppercase hex
      `00-${TRACE_ID.toUpperCase()}-${SPAN_ID}-01`,
      `00-${'0'.repeat(32)}-${SPAN_ID}-01`, // all-zero trace id
      `00-${TRACE_ID}-${'0'.repeat(16)}-01`, // all-zero parent id
      `ff-${TRACE_ID}-${SPAN_ID}-01`, // version ff
      `${TRACEPARENT}-extra`, // version 00 has nothing after the flags
      ` ${TRACEPARENT}`,
      `${TRACEPARENT} `,
      `00-${TRACE_ID.slice(1)}-${SPAN_ID}-01`,
      `00-${TRACE_ID}-${SPAN_ID.slice(1)}-01`,
      `00-${TRACE_ID}-${SPAN_ID}-1`,
      `00_${TRACE_ID}_${SPAN_ID}_01`,
      `0-${TRACE_ID}-${SPAN_ID}-01`,
      `00-${TRACE_ID}-${SPAN_ID}-0g`,
      '',
      undefined,
      null,
      42,
      { traceparent: TRACEPARENT },
      `01-${TRACE_ID}-${SPAN_ID}-01${'-x'.repeat(300)}`, // longer than 512 characters
    ]
    for (const value of invalid) expect({ value, parsed: parseTraceparent(value) }).toEqual({ value, parsed: undefined })
  })

  it('reads a higher version by the version 00 layout, with fields after the flags', () => {
    expect(parseTraceparent(`01-${TRACE_ID}-${SPAN_ID}-01`)).toEqual({ traceId: TRACE_ID, spanId: SPAN_ID, traceFlags: 1 })
    expect(parseTraceparent(`cc-${TRACE_ID}-${SPAN_ID}-03-what-the-future-holds`)).toEqual({ traceId: TRACE_ID, spanId: SPAN_ID, traceFlags: 3 })
    expect(parseTraceparent(`cc-${TRACE_ID}-${SPAN_ID}-03x`)).toBeUndefined()
  })
})

describe('traceContextOf (an MCP _meta, a headers object, CallOptions.traceContext)', () => {
  it('keeps a valid traceparent, tracestate and baggage, and nothing else', () => {
    const meta = { traceparent: TRACEPARENT, tracestate: 'rojo=00f067aa0ba902b7 , congo=t61rcWkgMzE', baggage: 'userId=alice , serverNode=DF%2028;ttl=60', progressToken: 3, other: 'x' }
    const tc = traceContextOf(meta)
    expect(tc).toEqual({ traceparent: TRACEPARENT, tracestate: 'rojo=00f067aa0ba902b7,congo=t61rcWkgMzE', baggage: 'userId=alice,serverNode=DF%2028;ttl=60' })
    expect(Object.isFrozen(tc)).toBe(true)
  })

  it('writes a higher version as version 00', () => {
    expect(traceContextOf({ traceparent: `01-${TRACE_ID}-${SPAN_ID}-01-more` })).toEqual({ traceparent: TRACEPARENT })
  })

  it('ignores an invalid or absent traceparent (and the rest with it)', () => {
    for (const carrier of [
      { traceparent: `00-${'0'.repeat(32)}-${SPAN_ID}-01`, tracestate: 'a=b', baggage: 'k=v' },
      { tracestate: 'a=b', baggage: 'k=v' },
      { traceparent: 7 },
      {},
      null,
      undefined,
      'traceparent',
      [TRACEPARENT],
    ]) {
      expect(traceContextOf(carrier)).toBeUndefined()
    }
  })

  it('drops a malformed tracestate or baggage and keeps the traceparent', () => {
    const malformedStates = ['Upper=1', 'a=', '=b', 'a=b,a=c', 'a=b=c,=', `a=${'x'.repeat(257)}`, Array.from({ length: 33 }, (_, i) => `k${i}=v`).join(','), Array.from({ length: 32 }, (_, i) => `k${i}=${'v'.repeat(256)}`).join(','), 'a=b\u00e9', '', 5]
    for (const tracestate of malformedStates) expect(traceContextOf({ traceparent: TRACEPARENT, tracestate })).toEqual({ traceparent: TRACEPARENT })
    const malformedBaggage = ['k', 'k=v,', 'k v=1', 'k=v"', 'k=%E0%A4%A', `k=${'v'.repeat(8200)}`, Array.from({ length: 181 }, (_, i) => `k${i}=v`).join(','), '', {}]
    for (const baggage of malformedBaggage) expect(traceContextOf({ traceparent: TRACEPARENT, baggage })).toEqual({ traceparent: TRACEPARENT })
  })

  it('accepts multi-tenant tracestate keys and empty list members', () => {
    expect(traceContextOf({ traceparent: TRACEPARENT, tracestate: 'fw529a3039@dt=d4cda95b,,a*b/c_d-e=1' })?.tracestate).toBe('fw529a3039@dt=d4cda95b,a*b/c_d-e=1')
  })

  it('never throws on a carrier whose getters throw', () => {
    const hostile = new Proxy({}, { get: () => { throw new Error('trap') } })
    expect(traceContextOf(hostile)).toBeUndefined()
  })
})

const { exporter, provider } = useTracerProvider()
afterEach(() => {
  propagation.disable()
  exporter.reset()
})

/** A manager with `echo`, `seen` (returns its ctx.traceContext) and `strict` (needs `n`). */
function manager(): { tm: ToolManager; seen: (ToolContext['traceContext'] | 'unread')[] } {
  const seen: (ToolContext['traceContext'] | 'unread')[] = []
  const tm = new ToolManager()
  tm.register({ name: 'echo', inputSchema: { type: 'object' }, run: (input) => input })
  tm.register({
    name: 'seen',
    inputSchema: { type: 'object' },
    run: (_input, ctx) => {
      seen.push(ctx.traceContext)
      return 'ok'
    },
  })
  tm.register({ name: 'strict', inputSchema: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] }, run: () => 1 })
  return { tm, seen }
}

function onlySpan(): FinishedSpan {
  const spans = exporter.getFinishedSpans()
  expect(spans).toHaveLength(1)
  return spans[0]!
}

/** A propagator of this test's own over the API interface: W3C `traceparent` only, and it counts its calls. */
class CountingTraceparentPropagator implements TextMapPropagator {
  extracted = 0
  injected = 0
  inject(context: Context, carrier: unknown, setter: TextMapSetter): void {
    this.injected++
    const sc = trace.getSpanContext(context)
    if (sc !== undefined) setter.set(carrier, 'traceparent', `00-${sc.traceId}-${sc.spanId}-0${sc.traceFlags & 1}`)
  }
  extract(context: Context, carrier: unknown, getter: TextMapGetter): Context {
    this.extracted++
    const value = getter.get(carrier, 'traceparent')
    const m = typeof value === 'string' ? /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/.exec(value) : null
    if (m === null) return context
    return trace.setSpanContext(context, { traceId: m[1]!, spanId: m[2]!, traceFlags: parseInt(m[3]!, 16), isRemote: true })
  }
  fields(): string[] {
    return ['traceparent']
  }
}

const nodeSdkPropagator = (): TextMapPropagator =>
  new CompositePropagator({ propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()] })

const setups: [string, () => TextMapPropagator | undefined][] = [
  ['no propagator registered', () => undefined],
  ["NodeSDK's W3C propagators (trace context and baggage)", nodeSdkPropagator],
  ['a propagator without traceparent (b3-like): read by hand', () => ({ inject: () => {}, extract: (c: Context) => c, fields: () => ['x-b3-traceid'] })],
]

describe.each(setups)('CallOptions.traceContext with %s', (_label, make) => {
  const register = (): void => {
    const p = make()
    if (p !== undefined) expect(propagation.setGlobalPropagator(p)).toBe(true)
  }

  it('makes the execute_tool span a child of the sent trace', async () => {
    register()
    const { tm } = manager()
    const view = await tm.call('echo', { a: 1 }, { traceContext: { traceparent: TRACEPARENT, tracestate: 'rojo=00f067aa0ba902b7' } })
    expect(view.status).toBe('ok')
    const span = onlySpan()
    expect(span.spanContext().traceId).toBe(TRACE_ID)
    expect(span.parentSpanContext?.spanId).toBe(SPAN_ID)
    expect(span.parentSpanContext?.isRemote).toBe(true)
    expect(span.spanContext().spanId).not.toBe(SPAN_ID)
    expect(span.spanContext().traceState?.get('rojo')).toBe('00f067aa0ba902b7')
  })

  it('gives the body the span as the trace context to forward, with the tracestate and baggage', async () => {
    register()
    const { tm, seen } = manager()
    await tm.call('seen', {}, { traceContext: { traceparent: TRACEPARENT, tracestate: 'rojo=1', baggage: 'user=alice%20b;p=1' } })
    const span = onlySpan()
    expect(seen).toEqual([{ traceparent: `00-${TRACE_ID}-${span.spanContext().spanId}-01`, tracestate: 'rojo=1', baggage: 'user=alice%20b;p=1' }])
  })

  it('ignores an invalid traceparent: the call runs, its span starts a trace of its own', async () => {
    register()
    const { tm, seen } = manager()
    const view = await tm.call('seen', {}, { traceContext: { traceparent: `00-${TRACE_ID.toUpperCase()}-${SPAN_ID}-01` } })
    expect(view.status).toBe('ok')
    const span = onlySpan()
    expect(span.parentSpanContext).toBeUndefined()
    expect(span.spanContext().traceId).not.toBe(TRACE_ID)
    expect(seen).toEqual([{ traceparent: `00-${span.spanContext().traceId}-${span.spanContext().spanId}-01` }])
  })

  it('parents the span of a call refused before its body (invalid input) too', async () => {
    register()
    const { tm } = manager()
    const view = await tm.call('strict', {}, { traceContext: { traceparent: TRACEPARENT } })
    expect(view.status).toBe('invalid')
    const span = onlySpan()
    expect(span.spanContext().traceId).toBe(TRACE_ID)
    expect(span.parentSpanContext?.spanId).toBe(SPAN_ID)
  })
})

describe('the registered propagator', () => {
  it('is used when it handles traceparent (extract at the start, inject when the body reads ctx.traceContext)', async () => {
    const counting = new CountingTraceparentPropagator()
    propagation.setGlobalPropagator(counting)
    const { tm, seen } = manager()
    await tm.call('seen', {}, { traceContext: { traceparent: TRACEPARENT, baggage: 'k=v' } })
    const span = onlySpan()
    expect(span.parentSpanContext?.spanId).toBe(SPAN_ID)
    expect(counting.extracted).toBe(1)
    expect(counting.injected).toBe(1)
    // what it injects is what the body forwards (this one writes no baggage)
    expect(seen).toEqual([{ traceparent: `00-${TRACE_ID}-${span.spanContext().spanId}-01` }])
  })
})

describe('without spans', () => {
  it('the body forwards the trace context it was called with (tracing off)', async () => {
    const seen: unknown[] = []
    const tm = new ToolManager({ telemetry: { tracing: false } })
    tm.register({ name: 'seen', inputSchema: { type: 'object' }, run: (_i, ctx) => void seen.push(ctx.traceContext) })
    await tm.call('seen', {}, { traceContext: { traceparent: `01-${TRACE_ID}-${SPAN_ID}-00-x`, baggage: 'k=v' } })
    await tm.call('seen', {})
    await tm.call('seen', {}, { traceContext: { traceparent: 'nonsense' } })
    expect(seen).toEqual([{ traceparent: `00-${TRACE_ID}-${SPAN_ID}-00`, baggage: 'k=v' }, undefined, undefined])
    expect(exporter.getFinishedSpans()).toHaveLength(0)
  })

  it('a traced call with no trace context gives the body its span (a root)', async () => {
    const { tm, seen } = manager()
    await tm.call('seen', {})
    const span = onlySpan()
    expect(span.parentSpanContext).toBeUndefined()
    expect(seen).toEqual([{ traceparent: `00-${span.spanContext().traceId}-${span.spanContext().spanId}-01` }])
  })

  it('a traceContext that is not an object, or whose getters throw, is ignored, never a refusal', async () => {
    const { tm } = manager()
    const hostile = new Proxy({}, { get: () => { throw new Error('trap') } })
    for (const traceContext of ['00-x', 42, null, hostile]) {
      const view = await tm.call('echo', {}, { traceContext } as never)
      expect(view.status).toBe('ok')
    }
    expect(exporter.getFinishedSpans().every((s) => s.parentSpanContext === undefined)).toBe(true)
  })

  it('with no tracer provider registered, the body forwards the trace context it was called with', async () => {
    trace.disable()
    try {
      const { tm, seen } = manager()
      await tm.call('seen', {}, { traceContext: { traceparent: TRACEPARENT, tracestate: 'a=b' } })
      expect(seen).toEqual([{ traceparent: TRACEPARENT, tracestate: 'a=b' }])
    } finally {
      trace.setGlobalTracerProvider(provider)
    }
    expect(exporter.getFinishedSpans()).toHaveLength(0)
  })
})

describe('docs/telemetry.md example', () => {
  it('a body forwards ctx.traceContext as HTTP headers: the server sees the span as the parent', async () => {
    const received: (string | undefined)[] = []
    const server = createServer((req, res) => {
      received.push(req.headers.traceparent as string | undefined)
      res.end('page')
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/`
    try {
      const tm = new ToolManager()
      tm.register({
        name: 'fetch_page',
        inputSchema: { type: 'object', properties: { url: { type: 'string' } } },
        run: ({ url }: { url: string }, ctx) => fetch(url, { headers: { ...ctx.traceContext } }).then((r) => r.text()),
      })
      const view = await tm.call('fetch_page', { url }, { traceContext: { traceparent: TRACEPARENT } })
      expect(view).toMatchObject({ status: 'ok', data: 'page' })
      const span = onlySpan()
      expect(span.parentSpanContext?.spanId).toBe(SPAN_ID)
      expect(received).toEqual([`00-${TRACE_ID}-${span.spanContext().spanId}-01`])
    } finally {
      server.close()
    }
  })
})

describe('a call that waits for confirmation or input', () => {
  /** `guarded` needs confirmation; `ask` waits for input and resumes with the answer. */
  function waiting(tm: ToolManager): ToolManager {
    tm.register({ name: 'guarded', inputSchema: { type: 'object' }, needsConfirmation: true, run: () => 'done' })
    tm.register({ name: 'ask', inputSchema: { type: 'object' }, run: () => pending({ kind: 'input', prompt: 'Which?' }), resume: (answer) => answer })
    return tm
  }
  const parents = (tool: string): (string | undefined)[] =>
    exporter.getFinishedSpans().filter((s) => s.name === `execute_tool ${tool}`).map((s) => s.parentSpanContext?.spanId)

  it('without a store, its confirmed or resumed run keeps the trace context: same parent', async () => {
    const tm = waiting(new ToolManager())
    const asked = await tm.call('guarded', {}, { traceContext: { traceparent: TRACEPARENT } })
    if (asked.status !== 'needs_confirmation') throw new Error(asked.status)
    expect(await tm.confirm(asked.confirmId, { approve: true })).toMatchObject({ status: 'ok', data: 'done' })
    const waits = await tm.call('ask', {}, { traceContext: { traceparent: TRACEPARENT } })
    if (waits.status !== 'pending') throw new Error(waits.status)
    expect(await tm.resume(waits.request.id, 'this one')).toMatchObject({ status: 'ok', data: 'this one' })
    expect(parents('guarded')).toEqual([SPAN_ID, SPAN_ID])
    expect(parents('ask')).toEqual([SPAN_ID, SPAN_ID])
    expect(exporter.getFinishedSpans().every((s) => s.spanContext().traceId === TRACE_ID)).toBe(true)
  })

  it('with a store, confirmed in the process that parked it: the same parent; on another instance: under the active context', async () => {
    const store = new MemoryStore()
    const tm = waiting(new ToolManager({ store }))
    const asked = await tm.call('guarded', {}, { traceContext: { traceparent: TRACEPARENT } })
    if (asked.status !== 'needs_confirmation') throw new Error(asked.status)
    expect(await tm.confirm(asked.confirmId, { approve: true })).toMatchObject({ status: 'ok', data: 'done' })
    expect(parents('guarded')).toEqual([SPAN_ID, SPAN_ID])
    // the store does not hold the trace context: another manager on it continues without it
    const other = waiting(new ToolManager({ store }))
    const again = await tm.call('guarded', {}, { traceContext: { traceparent: TRACEPARENT } })
    if (again.status !== 'needs_confirmation') throw new Error(again.status)
    expect(await other.confirm(again.confirmId, { approve: true })).toMatchObject({ status: 'ok', data: 'done' })
    expect(parents('guarded')).toEqual([SPAN_ID, SPAN_ID, SPAN_ID, undefined])
  })
})

