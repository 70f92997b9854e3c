import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import {
  callRecord,
  createOutcomeTool,
  errorResult,
  pending,
  refuse,
  ToolManager,
  ToolResult,
  type CallOptions as CallOptionsLike,
  type TelemetryOptions,
  type ToolEvents,
} from '../src/index.js'
import { callRecordJson } from '../src/core/native.js'
import { CallTracer } from '../src/observe/telemetry.js'
import { principalKey, type PrincipalRef } from '../src/core/principal.js'
import { useTracerProvider } from './fixtures/tracing.js'

const { exporter } = useTracerProvider()

const obj = { type: 'object' } as const

function manager(options: ConstructorParameters<typeof ToolManager>[0] = {}): ToolManager {
  const tm = new ToolManager({ telemetry: { recordContent: true }, ...options })
  tm.register({ name: 'ok', description: 'always works', inputSchema: obj, run: (input) => ({ echoed: input }) })
  tm.register({ name: 'boom', inputSchema: obj, run: () => errorResult('nope') })
  tm.register({ name: 'deny', inputSchema: obj, run: () => refuse('not_allowed', 'Owners only') })
  tm.register({ name: 'wait', inputSchema: obj, run: () => pending({ kind: 'input', prompt: 'Which?' }) })
  tm.register({ name: 'slow', inputSchema: obj, timeoutMs: 5, run: () => new Promise(() => {}) })
  tm.register({
    name: 'strict',
    inputSchema: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] },
    run: () => 1,
  })
  return tm
}

describe('spans', () => {
  it('makes one execute_tool span per call with GenAI attributes and error.type', async () => {
    exporter.reset()
    const tm = manager()
    await tm.call('ok', { password: 'hunter2', q: 1 }, { callId: 'c-ok' })
    await tm.call('boom', {}, { callId: 'c-boom' })
    await tm.call('deny', {}, { callId: 'c-deny' })
    await tm.call('wait', {}, { callId: 'c-wait' })
    await tm.call('slow', {}, { callId: 'c-slow' })
    await tm.call('strict', {}, { callId: 'c-strict' })
    const controller = new AbortController()
    controller.abort()
    await tm.call('ok', {}, { callId: 'c-cancel', signal: controller.signal })
    const spans = exporter.getFinishedSpans()
    expect(spans).toHaveLength(7)
    const byId = new Map(spans.map((s) => [s.attributes['gen_ai.tool.call.id'], s]))
    const ok = byId.get('c-ok')!
    expect(ok.name).toBe('execute_tool ok')
    expect(ok.kind).toBe(0) // INTERNAL
    expect(ok.attributes).toMatchObject({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'ok',
      'gen_ai.tool.type': 'function',
      'gen_ai.tool.description': 'always works',
      'toolwire.status': 'success',
    })
    expect(ok.attributes['error.type']).toBeUndefined()
    expect(ok.status.code).toBe(0)
    // content is opt-in and redacted
    expect(ok.attributes['gen_ai.tool.call.arguments']).toBe('{"password":"[redacted]","q":1}')
    expect(ok.attributes['gen_ai.tool.call.result']).toContain('[redacted]')
    const expectations: [string, string, string][] = [
      ['c-boom', 'other', 'error'],
      ['c-deny', 'denied', 'denied'],
      ['c-wait', 'pending', 'pending'],
      ['c-slow', 'timeout', 'error'],
      ['c-strict', 'invalid_args', 'error'],
      ['c-cancel', 'cancelled', 'error'],
    ]
    for (const [id, errorType, status] of expectations) {
      const span = byId.get(id)!
      expect(span.attributes['error.type'], id).toBe(errorType)
      expect(span.attributes['toolwire.status'], id).toBe(status)
      expect(span.status.code, id).toBe(2) // ERROR
    }
  })

  it('records no content unless opted in', async () => {
    exporter.reset()
    const tm = new ToolManager()
    tm.register({ name: 'ok', inputSchema: obj, run: () => 1 })
    await tm.call('ok', { secret: 1 })
    const [span] = exporter.getFinishedSpans()
    expect(span!.attributes['gen_ai.tool.call.arguments']).toBeUndefined()
    expect(span!.attributes['gen_ai.tool.call.result']).toBeUndefined()
  })

  it('can be turned off', async () => {
    exporter.reset()
    const tm = new ToolManager({ telemetry: { tracing: false } })
    tm.register({ name: 'ok', inputSchema: obj, run: () => 1 })
    await tm.call('ok', {})
    expect(exporter.getFinishedSpans()).toHaveLength(0)
  })
})

describe('who called, on the span', () => {
  const caller: PrincipalRef = { subject: 'user-42', issuer: 'https://issuer.example/', clientId: 'agent-app' }
  /** The attributes of the one span a tracer made with `options` for a call by `who`. */
  function spanOf(options: TelemetryOptions, who?: PrincipalRef) {
    exporter.reset()
    const tracer = CallTracer.create(options)!
    const span = tracer.start('transfer', 'c-who', undefined, { amount: 1 }, undefined, undefined, who)!
    tracer.end(span, ToolResult.success('ok'), undefined)
    const spans = exporter.getFinishedSpans()
    expect(spans).toHaveLength(1)
    return spans[0]!.attributes
  }

  it('names the subject, issuer and client by default', () => {
    expect(spanOf({}, caller)).toMatchObject({
      'enduser.id': 'user-42',
      'toolwire.principal.issuer': 'https://issuer.example/',
      'toolwire.principal.client_id': 'agent-app',
      'gen_ai.tool.call.id': 'c-who',
    })
    expect(spanOf({ principal: 'subject' }, caller)).not.toHaveProperty('enduser.pseudo.id')
    const noClient = spanOf({}, { subject: 's', issuer: '' })
    expect(noClient).toMatchObject({ 'enduser.id': 's', 'toolwire.principal.issuer': '' })
    expect(noClient).not.toHaveProperty('toolwire.principal.client_id')
  })

  it("a manager's calls name their principal, also a call refused before its body (invalid input)", async () => {
    exporter.reset()
    const tm = manager({ telemetry: { principal: 'subject' } })
    const principal = { ...caller, scopes: ['x'] }
    await tm.call('ok', {}, { callId: 'p-ok', principal })
    await tm.call('strict', {}, { callId: 'p-bad', principal })
    await tm.call('ok', {}, { callId: 'p-none' })
    const byId = new Map(exporter.getFinishedSpans().map((s) => [s.attributes['gen_ai.tool.call.id'], s.attributes]))
    for (const id of ['p-ok', 'p-bad']) expect(byId.get(id)).toMatchObject({ 'enduser.id': 'user-42', 'toolwire.principal.client_id': 'agent-app' })
    expect(byId.get('p-none')).not.toHaveProperty('enduser.id')
    const pseudo = manager({ telemetry: { principal: 'pseudonymous' } })
    exporter.reset()
    await pseudo.call('ok', {}, { principal })
    expect(exporter.getFinishedSpans()[0]!.attributes['enduser.pseudo.id']).toBe(principalKey(caller))
  })

  it("names only the principal's key in pseudonymous mode", () => {
    const attributes = spanOf({ principal: 'pseudonymous' }, caller)
    expect(attributes['enduser.pseudo.id']).toBe(principalKey(caller))
    const named = Object.keys(attributes).filter((k) => k.startsWith('enduser.') || k.startsWith('toolwire.principal.'))
    expect(named).toEqual(['enduser.pseudo.id'])
    expect(Object.values(attributes)).not.toContain('user-42')
  })

  it('names no one for a call without a principal', () => {
    for (const mode of [undefined, 'subject', 'pseudonymous'] as const) {
      const attributes = spanOf({ principal: mode })
      expect(Object.keys(attributes).filter((k) => k.startsWith('enduser.') || k.startsWith('toolwire.principal.')), String(mode)).toEqual([])
    }
  })

  it('refuses an unknown mode with a TypeError, tracing on or off', () => {
    for (const tracing of [true, false]) {
      expect(() => CallTracer.create({ tracing, principal: 'clear' as never })).toThrow(new TypeError("toolwire: telemetry.principal must be 'subject' or 'pseudonymous'"))
      expect(() => new ToolManager({ telemetry: { tracing, principal: 'hashed' as never } })).toThrow(TypeError)
    }
  })
})

describe('metrics', () => {
  it('counts every disposition per tool in the core', async () => {
    const tm = manager()
    await Promise.all([tm.call('ok', {}), tm.call('ok', {}), tm.call('boom', {}), tm.call('deny', {})])
    await Promise.all([tm.call('wait', {}), tm.call('slow', {}), tm.call('strict', {})])
    await tm.call('unknown-tool', {})
    const snap = tm.metrics()
    const by = new Map(snap.tools.map((t) => [t.tool, t]))
    expect(by.get('ok')!.calls).toEqual({ success: 2, error: 0, denied: 0, skipped: 0, pending: 0 })
    expect(by.get('boom')!.calls.error).toBe(1)
    expect(by.get('boom')!.errors.other).toBe(1)
    expect(by.get('deny')!.calls.denied).toBe(1)
    expect(by.get('wait')!.calls.pending).toBe(1)
    expect(by.get('slow')!.errors.timeout).toBe(1)
    expect(by.get('strict')!.errors.invalid_args).toBe(1)
    expect(by.has('unknown-tool')).toBe(false)
    expect(by.get('ok')!.duration.count).toBe(2)
    expect(by.get('ok')!.in_flight).toBe(0)
    const buckets = by.get('ok')!.duration.buckets
    expect(buckets.at(-1)).toEqual({ le: '+Inf', count: 2 })
  })

  it('shows in-flight calls and breaker state', async () => {
    const tm = new ToolManager()
    let release!: () => void
    tm.register({ name: 'hold', inputSchema: obj, run: () => new Promise<void>((r) => (release = r)) })
    tm.register({ name: 'flaky', inputSchema: obj, breaker: { failures: 1, cooldownMs: 60_000 }, run: () => errorResult('x') })
    const held = tm.call('hold', {})
    await tm.call('flaky', {})
    // calls settled before they run (invalid input, malformed JSON) leave the gauge alone
    expect(await tm.call('hold', 'not an object')).toMatchObject({ status: 'invalid' })
    expect(await tm.callJson('hold', '{')).toMatchObject({ status: 'invalid' })
    const snap = tm.metrics()
    expect(snap.tools.find((t) => t.tool === 'hold')!.in_flight).toBe(1)
    expect(snap.tools.find((t) => t.tool === 'hold')!.calls.error).toBe(2)
    expect(snap.tools.find((t) => t.tool === 'flaky')!.breaker).toBe('open')
    release()
    await held
    expect(tm.metrics().tools.find((t) => t.tool === 'hold')!.in_flight).toBe(0)
  })

  it('renders the Prometheus text exposition format', async () => {
    const tm = manager()
    await tm.call('ok', {})
    await tm.call('boom', {})
    const text = tm.metrics({ format: 'prometheus' })
    const families = ['toolwire_tool_calls_total', 'toolwire_tool_errors_total', 'toolwire_tool_call_duration_seconds', 'toolwire_tool_calls_in_flight', 'toolwire_tool_breaker_state']
    for (const name of families) {
      expect(text.match(new RegExp(`^# HELP ${name} `, 'gm')), name).toHaveLength(1)
      expect(text.match(new RegExp(`^# TYPE ${name} (counter|gauge|histogram)$`, 'gm')), name).toHaveLength(1)
    }
    expect(text).toContain('toolwire_tool_calls_total{tool="ok",status="success"} 1')
    expect(text).toContain('toolwire_tool_errors_total{tool="boom",kind="other"} 1')
    // cumulative buckets ending in +Inf, with _sum and _count
    const buckets = [...text.matchAll(/^toolwire_tool_call_duration_seconds_bucket\{tool="ok",le="([^"]+)"\} (\d+)$/gm)]
    expect(buckets.at(-1)![1]).toBe('+Inf')
    const counts = buckets.map((m) => Number(m[2]))
    expect(counts).toEqual([...counts].sort((a, b) => a - b))
    expect(text).toMatch(/^toolwire_tool_call_duration_seconds_sum\{tool="ok"\} [0-9.e+-]+$/m)
    expect(text).toMatch(/^toolwire_tool_call_duration_seconds_count\{tool="ok"\} 1$/m)
    for (const line of text.split('\n')) {
      if (line === '' || line.startsWith('#')) continue
      expect(line, line).toMatch(/^[a-zA-Z_:][a-zA-Z0-9_:]*(\{[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\.)*"(,[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\.)*")*\})? [-+]?([0-9.]+(e[-+]?[0-9]+)?|\+Inf|NaN)$/)
    }
  })

  it('never counts a late report twice', async () => {
    const tm = new ToolManager()
    let invocationReport!: (e: Error) => void
    let finish!: () => void
    const tool = createOutcomeTool({
      definition: { type: 'function', function: { name: 'late', parameters: obj } },
      execute: async (_args, invocation) => {
        invocationReport = invocation.reportFailure.bind(invocation)
        await new Promise<void>((r) => (finish = r))
        return { success: true }
      },
    })
    tm.register({ ...tool, timeoutMs: 5 })
    const ends: ToolEvents['call_end'][] = []
    tm.on('call_end', (e) => ends.push(e))
    const { outcome, diagnostics } = await tm.executeWithOutcome('late', {})
    expect(outcome.status).toBe('timed_out')
    invocationReport(new Error('late failure'))
    finish()
    await new Promise((r) => setTimeout(r, 5))
    expect(diagnostics.late).toEqual([{ message: 'late failure' }])
    expect(ends).toHaveLength(1)
    const m = tm.metrics().tools.find((t) => t.tool === 'late')!
    expect(m.calls.error).toBe(1)
    expect(m.duration.count).toBe(1)
  })
})

describe('every disposition', () => {
  it('one run of success, error, denied, skipped, pending and cancelled: spans, metric counts and records agree', async () => {
    exporter.reset()
    const tm = manager()
    let attempts = 0
    tm.register({ name: 'skip', inputSchema: obj, run: () => ToolResult.skipped('dry run') })
    tm.register({
      name: 'retry',
      inputSchema: obj,
      hints: { idempotent: true },
      retry: { attempts: 3, baseMs: 1, maxMs: 1 },
      run: (_input, ctx) => {
        if (++attempts === 1) throw Object.assign(new Error('reset'), { kind: 'network' })
        ctx.registerUndo(() => undefined)
        return 'second time lucky'
      },
    })
    const records: { call_id: string; status: string; [key: string]: unknown }[] = []
    tm.on('call_end', (e) => records.push(JSON.parse(JSON.stringify(e.record))))
    const controller = new AbortController()
    controller.abort()
    const calls: [string, string, CallOptionsLike?][] = [
      ['ok', 'd-ok'],
      ['boom', 'd-boom'],
      ['deny', 'd-deny'],
      ['skip', 'd-skip'],
      ['wait', 'd-wait'],
      ['ok', 'd-cancel', { signal: controller.signal }],
      ['retry', 'd-retry'],
    ]
    for (const [tool, callId, options] of calls) await tm.call(tool, {}, { callId, ...options })

    const expected: Record<string, { status: string; errorType?: string }> = {
      'd-ok': { status: 'success' },
      'd-boom': { status: 'error', errorType: 'other' },
      'd-deny': { status: 'denied', errorType: 'denied' },
      'd-skip': { status: 'skipped', errorType: 'skipped' },
      'd-wait': { status: 'pending', errorType: 'pending' },
      'd-cancel': { status: 'error', errorType: 'cancelled' },
      'd-retry': { status: 'success' },
    }
    const spans = new Map(exporter.getFinishedSpans().map((s) => [s.attributes['gen_ai.tool.call.id'] as string, s]))
    const byRecord = new Map(records.map((r) => [r.call_id, r]))
    for (const [callId, { status, errorType }] of Object.entries(expected)) {
      expect(spans.get(callId)!.attributes['toolwire.status'], callId).toBe(status)
      expect(spans.get(callId)!.attributes['error.type'], callId).toBe(errorType)
      expect(byRecord.get(callId), callId).toMatchObject({ status })
    }
    expect(byRecord.get('d-retry')).toMatchObject({ attempt: 2, undo_available: true })
    expect(byRecord.get('d-ok')).toMatchObject({ attempt: 1, undo_available: false })

    const metrics = new Map(tm.metrics().tools.map((t) => [t.tool, t]))
    expect(metrics.get('ok')!.calls).toMatchObject({ success: 1, error: 1 })
    expect(metrics.get('ok')!.errors).toMatchObject({ cancelled: 1 })
    expect(metrics.get('boom')!.calls.error).toBe(1)
    expect(metrics.get('deny')!.calls.denied).toBe(1)
    expect(metrics.get('skip')!.calls.skipped).toBe(1)
    expect(metrics.get('wait')!.calls.pending).toBe(1)
    expect(metrics.get('retry')!.calls).toMatchObject({ success: 1, error: 0 })
    for (const t of metrics.values()) expect(t.in_flight, t.tool).toBe(0)
  })
})

describe('event records', () => {
  const dir = join(import.meta.dirname, 'vectors', 'records')
  const files = readdirSync(dir).filter((f) => f.endsWith('.json'))

  it.each(files)('%s: TS and Rust write the same bytes', (file) => {
    const { input, record } = JSON.parse(readFileSync(join(dir, file), 'utf8'))
    const result = ToolResult.fromJSON(JSON.stringify(input.result))
    const ts = JSON.stringify(callRecord(input.callId, input.tool, result, input.startedAtMs, input.endedAtMs, input.attempt, input.undoAvailable, input.subject))
    expect(ts).toBe(record)
    const rust = callRecordJson(input.callId, input.tool, result.toJSONText(), input.startedAtMs, input.endedAtMs, input.attempt, input.undoAvailable, input.subject)
    expect(rust).toBe(record)
  })

  it('names the subject last when the vectors give one, and only then', () => {
    const parsed = files.map((file) => JSON.parse(readFileSync(join(dir, file), 'utf8')) as { input: { subject?: string }; record: string })
    const named = parsed.filter((v) => v.input.subject !== undefined)
    expect(named.length).toBeGreaterThanOrEqual(2)
    for (const { input, record } of parsed) {
      const keys = Object.keys(JSON.parse(record))
      if (input.subject === undefined) expect(keys).not.toContain('subject')
      else expect(keys.slice(-2)).toEqual(['undo_available', 'subject'])
    }
  })

  it('comes with call_end for every disposition', async () => {
    const tm = manager()
    const records: string[] = []
    tm.on('call_end', (e) => records.push(JSON.stringify(e.record)))
    await tm.call('ok', {}, { callId: 'r1' })
    await tm.call('deny', {}, { callId: 'r2' })
    await tm.call('slow', {}, { callId: 'r3' })
    expect(records).toHaveLength(3)
    const [a, b, c] = records.map((r) => JSON.parse(r))
    expect(a).toMatchObject({ call_id: 'r1', tool: 'ok', status: 'success', attempt: 1, undo_available: false })
    expect(b).toMatchObject({ status: 'denied', refusal_code: 'not_allowed' })
    expect(c).toMatchObject({ status: 'error', error_kind: 'timeout' })
    expect(a.started_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
    expect(Object.keys(a)).toEqual(['call_id', 'tool', 'status', 'started_at', 'ended_at', 'duration_ms', 'attempt', 'undo_available'])
  })
})
