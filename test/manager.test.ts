/**
 * Behaviour of `ToolManager`: one `it` per row of the dispatch table, plus
 * registration, helpers, schemas, permissions, concurrency and events.
 */
import { describe, expect, it, vi } from 'vitest'
import {
  SchemaError,
  TOOL_FAILED_MESSAGE,
  ToolManager,
  canonicalOf,
  cancelled,
  errorResult,
  invalid,
  ok,
  refuse,
  type CallResult,
  type ToolContext,
  type ToolEvents,
} from '../src/index.js'

import { gate, sleep } from './support.js'

/** Resolves once `signal` aborts (never otherwise). */
const untilAborted = (signal: AbortSignal) =>
  new Promise<never>((_, reject) => {
    if (signal.aborted) reject(signal.reason)
    signal.addEventListener('abort', () => reject(signal.reason), { once: true })
  })

function deepFrozen(v: unknown, seen = new Set<unknown>()): boolean {
  if (typeof v !== 'object' || v === null || seen.has(v)) return true
  seen.add(v)
  if (!Object.isFrozen(v)) return false
  return Object.keys(v).every((k) => deepFrozen((v as Record<string, unknown>)[k], seen))
}

/** The invariants every result must satisfy. */
function expectWellFormed(r: CallResult) {
  expect(typeof r.callId).toBe('string')
  expect(deepFrozen(r), 'result is deeply frozen').toBe(true)
  expect(structuredClone(r)).toEqual(r)
  expect(JSON.parse(JSON.stringify(r))).toEqual(r)
}

const anyObject = { type: 'object' } as const

describe('dispatch table', () => {
  it('an unknown tool is refused with code unknown_tool', async () => {
    const tm = new ToolManager()
    const r = await tm.call('nope', {})
    expect(r).toMatchObject({ status: 'refused', code: 'unknown_tool' })
    expect(r.status === 'refused' && r.message).toContain('nope')
    expectWellFormed(r)
    expect(canonicalOf(r)?.statusName()).toBe('denied')
  })

  it('input that fails the schema is invalid, one issue per violation with a JSON Pointer path and a message', async () => {
    const tm = new ToolManager()
    let ran = false
    tm.register({
      name: 't',
      inputSchema: {
        type: 'object',
        properties: {
          a: { type: 'number' },
          b: { type: 'string' },
          'x/y~z': { type: 'integer' },
          nested: { type: 'object', properties: { deep: { type: 'array', items: { type: 'boolean' } } } },
        },
        required: ['a', 'b', 'c'],
        additionalProperties: false,
      },
      run: () => {
        ran = true
        return 1
      },
    })
    const r = await tm.call('t', { a: 'x', b: 1, 'x/y~z': 1.5, nested: { deep: [true, 3] }, d: true })
    expect(ran).toBe(false)
    expect(r.status).toBe('invalid')
    if (r.status !== 'invalid') return
    for (const issue of r.issues) {
      expect(issue.path === '' || issue.path.startsWith('/'), `path ${issue.path} is a JSON Pointer`).toBe(true)
      expect(typeof issue.message).toBe('string')
      expect(issue.message.length).toBeGreaterThan(0)
    }
    const paths = r.issues.map((i) => i.path).sort()
    expect(paths).toEqual(['/a', '/b', '/c', '/d', '/nested/deep/1', '/x~1y~0z'].sort())
    expect(r.issues.find((i) => i.path === '/c')?.message).toMatch(/required/)
    expect(r.issues.find((i) => i.path === '/d')?.message).toMatch(/not allowed/)
    expectWellFormed(r)
  })

  it('malformed JSON text (callJson) is invalid with a clear message', async () => {
    const tm = new ToolManager()
    let ran = false
    tm.register({ name: 't', inputSchema: anyObject, run: () => (ran = true) })
    const r = await tm.callJson('t', '{"a": 1,')
    expect(ran).toBe(false)
    expect(r.status).toBe('invalid')
    if (r.status !== 'invalid') return
    expect(r.issues).toHaveLength(1)
    expect(r.issues[0]!.path).toBe('')
    expect(r.issues[0]!.message).toMatch(/not valid JSON/)
    expectWellFormed(r)
    // the message as docs/calling.md gives it: with the position when JSON.parse names one
    expect(await tm.callJson('t', '{"a" 1}')).toMatchObject({ status: 'invalid', issues: [{ path: '', message: 'The arguments are not valid JSON (at position 5)' }] })
    expect(await tm.callJson('t', '\ufeff{"a":1}')).toMatchObject({ status: 'invalid', issues: [{ path: '', message: 'The arguments are not valid JSON' }] })
    // well-formed text goes through
    expect(await tm.callJson('t', '{"a":1}')).toMatchObject({ status: 'ok', data: true })
  })

  it('callJson text nested deeper than 100 levels is invalid without being parsed; brackets inside strings do not count', async () => {
    const tm = new ToolManager()
    let ran = false
    tm.register({ name: 't', inputSchema: {}, run: () => (ran = true) })
    const text = `{"a":${'['.repeat(100_000)}${']'.repeat(100_000)}}`
    const parse = vi.spyOn(JSON, 'parse')
    const r = await tm.callJson('t', text)
    expect(parse).not.toHaveBeenCalledWith(text)
    parse.mockRestore()
    expect(ran).toBe(false)
    expect(r).toMatchObject({ status: 'invalid', issues: [{ path: '', message: 'nests deeper than 100 levels' }] })
    expect(await tm.callJson('t', JSON.stringify({ a: '['.repeat(500), b: '"\\"[[[' }))).toMatchObject({ status: 'ok' })
  })

  it('a throwing tool gives error with a generic message; the exception goes to the error event only', async () => {
    const tm = new ToolManager()
    const secret = 'db password is hunter2'
    const errors: ToolEvents['error'][] = []
    tm.on('error', (e) => void errors.push(e))
    tm.register({
      name: 't',
      inputSchema: anyObject,
      run: () => {
        throw new Error(secret)
      },
    })
    tm.register({ name: 'async', inputSchema: anyObject, run: async () => Promise.reject(new Error(secret)) })
    for (const name of ['t', 'async']) {
      const r = await tm.call(name, {})
      expect(r).toMatchObject({ status: 'error', kind: 'other', message: TOOL_FAILED_MESSAGE })
      expect(JSON.stringify(r)).not.toContain('hunter2')
      expect(canonicalOf(r)!.toJSONText()).not.toContain('hunter2')
      expectWellFormed(r)
      const e = errors.find((x) => x.callId === r.callId)
      expect(e).toBeDefined()
      expect(e!.tool).toBe(name)
      expect(e!.message).toBe(secret)
      expect(e!.stack).toContain(secret)
      expect(e!.error).toBeInstanceOf(Error)
    }
  })

  it.each([
    ['a BigInt', () => 10n],
    ['a nested BigInt', () => ({ n: [1, 2n] })],
    ['a function', () => () => 1],
    ['a cyclic object', () => {
      const o: Record<string, unknown> = { a: 1 }
      o.self = o
      return o
    }],
    ['a cyclic array', () => {
      const a: unknown[] = [1]
      a.push({ back: a })
      return a
    }],
  ])('a tool returning %s (no JSON form) gives error', async (_, value) => {
    const tm = new ToolManager()
    tm.register({ name: 't', inputSchema: anyObject, run: value })
    const r = await tm.call('t', {})
    expect(r.status).toBe('error')
    expect(r).toMatchObject({ kind: 'other' })
    expectWellFormed(r)
  })

  it('a Date or an object with toJSON is serialized with JSON semantics', async () => {
    const tm = new ToolManager()
    const when = new Date(Date.UTC(2024, 1, 29, 12, 30))
    const value = {
      when,
      custom: { toJSON: (key: string) => ({ key, n: 1 }) },
      gone: undefined,
      fn: () => 1,
      list: [undefined, () => 1, NaN, Infinity, new Date(0)],
      boxed: [new String('s'), new Number(2), new Boolean(false)],
      negativeZero: -0, // JSON writes it as 0
    }
    tm.register({ name: 'obj', inputSchema: anyObject, run: () => value })
    tm.register({ name: 'date', inputSchema: anyObject, run: () => when })
    const r = await tm.call('obj', {})
    expect(r.status).toBe('ok')
    expect(r.status === 'ok' && r.data).toEqual(JSON.parse(JSON.stringify(value)))
    expect(r).toMatchObject({ data: { when: '2024-02-29T12:30:00.000Z', custom: { key: 'custom', n: 1 } } })
    expectWellFormed(r)
    expect(await tm.call('date', {})).toMatchObject({ status: 'ok', data: '2024-02-29T12:30:00.000Z' })
  })

  it('a signal aborted before the run cancels the call by signal and the body never runs', async () => {
    const tm = new ToolManager()
    let ran = false
    tm.register({ name: 't', inputSchema: anyObject, run: () => (ran = true) })
    const ac = new AbortController()
    ac.abort()
    const r = await tm.call('t', {}, { signal: ac.signal })
    expect(r).toMatchObject({ status: 'cancelled', by: 'signal' })
    expect(ran).toBe(false)
    expectWellFormed(r)
  })

  it('a signal aborted during the run cancels the call by signal and aborts ctx.signal', async () => {
    const tm = new ToolManager()
    let ctxSignal: AbortSignal | undefined
    const started = gate()
    tm.register({
      name: 't',
      inputSchema: anyObject,
      run: (_: unknown, ctx: ToolContext) => {
        ctxSignal = ctx.signal
        started.release()
        return untilAborted(ctx.signal)
      },
    })
    const ac = new AbortController()
    const p = tm.call('t', {}, { signal: ac.signal })
    await started.promise
    expect(ctxSignal!.aborted).toBe(false)
    ac.abort()
    const r = await p
    expect(r).toMatchObject({ status: 'cancelled', by: 'signal' })
    expect(ctxSignal!.aborted).toBe(true)
    expectWellFormed(r)
  })

  it('tm.cancel(callId) cancels the call by operator and aborts ctx.signal', async () => {
    const tm = new ToolManager()
    let ctxSignal: AbortSignal | undefined
    const started = gate()
    tm.register({
      name: 't',
      inputSchema: anyObject,
      run: (_: unknown, ctx: ToolContext) => {
        ctxSignal = ctx.signal
        started.release()
        return new Promise(() => {}) // ignores its signal on purpose
      },
    })
    const p = tm.call('t', {}, { callId: 'op-1' })
    await started.promise
    expect(tm.cancel('op-1')).toBe(true)
    const r = await p
    expect(r).toMatchObject({ status: 'cancelled', by: 'operator', callId: 'op-1' })
    expect(ctxSignal!.aborted).toBe(true)
    expect(tm.cancel('op-1')).toBe(false)
    expect(tm.cancel('never-existed')).toBe(false)
    expectWellFormed(r)
  })

  it('a per-tool timeoutMs elapsing gives error of kind timeout and aborts ctx.signal', async () => {
    const tm = new ToolManager()
    let ctxSignal: AbortSignal | undefined
    tm.register({
      name: 't',
      inputSchema: anyObject,
      timeoutMs: 20,
      run: (_: unknown, ctx: ToolContext) => {
        ctxSignal = ctx.signal
        return new Promise(() => {})
      },
    })
    const r = await tm.call('t', {})
    expect(r).toMatchObject({ status: 'error', kind: 'timeout' })
    expect(ctxSignal!.aborted).toBe(true)
    expect((ctxSignal!.reason as Error).name).toBe('TimeoutError')
    expectWellFormed(r)
  })

  it('a per-call timeoutMs elapsing gives error of kind timeout and aborts ctx.signal; it overrides the tool and manager timeouts', async () => {
    const tm = new ToolManager({ timeoutMs: 10_000 })
    let ctxSignal: AbortSignal | undefined
    tm.register({
      name: 't',
      inputSchema: anyObject,
      timeoutMs: 10_000,
      run: (_: unknown, ctx: ToolContext) => {
        ctxSignal = ctx.signal
        return untilAborted(ctx.signal)
      },
    })
    // the tool's and the manager's 10 s would outlive the test's own 5 s limit
    const r = await tm.call('t', {}, { timeoutMs: 15 })
    expect(r).toMatchObject({ status: 'error', kind: 'timeout' })
    expect(ctxSignal!.aborted).toBe(true)
    expectWellFormed(r)
  })

  it('a manager-wide timeoutMs applies to calls that set none', async () => {
    const tm = new ToolManager({ timeoutMs: 15 })
    tm.register({ name: 't', inputSchema: anyObject, run: () => new Promise(() => {}) })
    expect(await tm.call('t', {})).toMatchObject({ status: 'error', kind: 'timeout' })
  })
})

describe('registration', () => {
  it('a duplicate registration throws unless { replace: true }', async () => {
    const tm = new ToolManager()
    tm.register({ name: 't', inputSchema: anyObject, run: () => 1 })
    expect(() => tm.register({ name: 't', inputSchema: anyObject, run: () => 2 })).toThrow(/already registered/)
    expect(await tm.call('t', {})).toMatchObject({ status: 'ok', data: 1 })
    tm.register({ name: 't', inputSchema: anyObject, run: () => 2 }, { replace: true })
    expect(await tm.call('t', {})).toMatchObject({ status: 'ok', data: 2 })
    expect(tm.list()).toHaveLength(1)
  })

  it('a replacement affects only calls admitted after it', async () => {
    const tm = new ToolManager()
    const release = gate()
    const started = gate()
    tm.register({
      name: 't',
      inputSchema: anyObject,
      run: async () => {
        started.release()
        await release.promise
        return 'old'
      },
    })
    const slow = tm.call('t', {})
    await started.promise
    tm.register({ name: 't', inputSchema: { type: 'object', required: ['x'] }, run: () => 'new' }, { replace: true })
    expect(await tm.call('t', { x: 1 })).toMatchObject({ status: 'ok', data: 'new' })
    expect(await tm.call('t', {})).toMatchObject({ status: 'invalid' })
    release.release()
    expect(await slow).toMatchObject({ status: 'ok', data: 'old' })
  })

  it('an invalid schema or $schema throws SchemaError at registration', () => {
    const tm = new ToolManager()
    expect(() => tm.register({ name: 'a', inputSchema: { type: 'nonsense' }, run: () => 1 })).toThrow(SchemaError)
    expect(() =>
      tm.register({ name: 'b', inputSchema: { $schema: 'http://json-schema.org/draft-04/schema#' }, run: () => 1 }),
    ).toThrow(SchemaError)
    expect(tm.list()).toHaveLength(0)
  })
})

describe('return values', () => {
  it('the helpers ok/invalid/refuse/cancelled/errorResult map to the app view', async () => {
    const tm = new ToolManager()
    const cases: [unknown, Record<string, unknown>][] = [
      [ok({ a: 1 }), { status: 'ok', data: { a: 1 } }],
      [ok(undefined), { status: 'ok', data: null }],
      [invalid('bad date'), { status: 'invalid', issues: [{ path: '', message: 'bad date' }] }],
      [invalid([{ path: '/when', message: 'in the past' }]), { status: 'invalid', issues: [{ path: '/when', message: 'in the past' }] }],
      [refuse('stale', 'Reload first'), { status: 'refused', code: 'stale', message: 'Reload first' }],
      [refuse('stale', 'Reload first', { rev: 7 }), { status: 'refused', code: 'stale', message: 'Reload first', rev: 7 }],
      [cancelled('operator'), { status: 'cancelled', by: 'operator' }],
      [cancelled('signal'), { status: 'cancelled', by: 'signal' }],
      [cancelled(), { status: 'cancelled', by: 'policy' }],
      [errorResult('Upstream is down'), { status: 'error', kind: 'other', message: 'Upstream is down' }],
    ]
    for (const [ret, want] of cases) {
      tm.register({ name: 't', inputSchema: anyObject, run: () => ret }, { replace: true })
      const r = await tm.call('t', {})
      const { callId, ...rest } = r
      expect(typeof callId).toBe('string')
      expect(rest).toEqual(want)
      expectWellFormed(r)
    }
    // a refusal without rev has no rev key
    tm.register({ name: 't', inputSchema: anyObject, run: () => refuse('c', 'm') }, { replace: true })
    expect('rev' in (await tm.call('t', {}))).toBe(false)
  })

  it('a toolnexus-style { output, isError, parts?, metadata? } return', async () => {
    const tm = new ToolManager()
    const part = { type: 'image' as const, mimeType: 'image/png', data: 'iVBORw0KGgo=' }
    tm.register({ name: 'good', inputSchema: anyObject, run: () => ({ output: 'done', isError: false, metadata: { rows: 3 } }) })
    tm.register({ name: 'bad', inputSchema: anyObject, run: () => ({ output: 'quota exceeded', isError: true }) })
    tm.register({ name: 'media', inputSchema: anyObject, run: () => ({ output: 'a chart', isError: false, parts: [part] }) })

    const good = await tm.call('good', {})
    expect(good).toMatchObject({ status: 'ok', data: 'done' })
    expect(canonicalOf(good)!.metadata()).toEqual({ rows: 3 })
    expect(canonicalOf(good)!.text()).toBe('done')
    expectWellFormed(good)

    const bad = await tm.call('bad', {})
    expect(bad).toMatchObject({ status: 'error', kind: 'other', message: 'quota exceeded' })
    expectWellFormed(bad)

    const media = await tm.call('media', {})
    expect(media).toMatchObject({ status: 'ok', data: 'a chart' })
    expect(canonicalOf(media)!.parts()).toEqual([part])
    expectWellFormed(media)
  })

  it('a plain value return is ok(value)', async () => {
    const tm = new ToolManager()
    for (const value of [{ x: [1, 'two', null, true] }, 'text', 42, null, false, [], {}]) {
      tm.register({ name: 't', inputSchema: anyObject, run: () => value }, { replace: true })
      const r = await tm.call('t', {})
      expect(r).toEqual({ status: 'ok', data: value, callId: r.callId })
      expectWellFormed(r)
    }
    tm.register({ name: 't', inputSchema: anyObject, run: () => undefined }, { replace: true })
    expect(await tm.call('t', {})).toMatchObject({ status: 'ok', data: null })
    tm.register({ name: 't', inputSchema: anyObject, run: async () => ({ later: true }) }, { replace: true })
    expect(await tm.call('t', {})).toMatchObject({ status: 'ok', data: { later: true } })
  })
})

describe('schemas', () => {
  it('$schema draft-07 is honoured: items: [..] is a tuple there, prefixItems in 2020-12', async () => {
    const tm = new ToolManager()
    tm.register({
      name: 'd7',
      inputSchema: {
        $schema: 'http://json-schema.org/draft-07/schema#',
        type: 'array',
        items: [{ type: 'string' }, { type: 'number' }],
        additionalItems: false,
      },
      run: () => 'ok',
    })
    tm.register({
      name: 'd2020',
      inputSchema: { type: 'array', prefixItems: [{ type: 'string' }, { type: 'number' }], items: false },
      run: () => 'ok',
    })
    for (const name of ['d7', 'd2020']) {
      expect(await tm.call(name, ['a', 1]), name).toMatchObject({ status: 'ok' })
      expect(await tm.call(name, ['a', 'b']), name).toMatchObject({ status: 'invalid', issues: [{ path: '/1' }] })
      expect(await tm.call(name, ['a', 1, 2]), name).toMatchObject({ status: 'invalid' })
    }
    // in draft-07, prefixItems is an unknown keyword and constrains nothing
    tm.register({
      name: 'd7prefix',
      inputSchema: { $schema: 'http://json-schema.org/draft-07/schema#', type: 'array', prefixItems: [{ type: 'string' }] },
      run: () => 'ok',
    })
    expect(await tm.call('d7prefix', [1])).toMatchObject({ status: 'ok' })
    // in 2020-12 the array form of items is not allowed
    expect(() =>
      tm.register({ name: 'bad2020', inputSchema: { type: 'array', items: [{ type: 'string' }] }, run: () => 'ok' }),
    ).toThrow(SchemaError)
  })

  it('boolean and non-object input schemas are accepted', async () => {
    const tm = new ToolManager()
    tm.register({ name: 'yes', inputSchema: true, run: (i: unknown) => i })
    tm.register({ name: 'no', inputSchema: false, run: (i: unknown) => i })
    tm.register({ name: 'str', inputSchema: { type: 'string', minLength: 2 }, run: (i: unknown) => i })
    expect(await tm.call('yes', [1])).toMatchObject({ status: 'ok', data: [1] })
    expect(await tm.call('no', {})).toMatchObject({ status: 'invalid' })
    expect(await tm.call('str', 'ab')).toMatchObject({ status: 'ok', data: 'ab' })
    expect(await tm.call('str', 'a')).toMatchObject({ status: 'invalid' })
  })
})

describe('permissions', () => {
  it('a per-tool permission hook refuses with its code and the body never runs', async () => {
    const tm = new ToolManager()
    let ran = 0
    const seen: unknown[] = []
    tm.register({
      name: 'del',
      inputSchema: anyObject,
      permission: (call) => {
        seen.push(call)
        return refuse('owner_only', 'Only owners can delete')
      },
      run: () => ran++,
    })
    tm.register({ name: 'obj', inputSchema: anyObject, permission: () => ({ allow: false, code: 'quota', message: 'Over quota' }), run: () => ran++ })
    tm.register({ name: 'no', inputSchema: anyObject, permission: async () => false, run: () => ran++ })
    tm.register({ name: 'yes', inputSchema: anyObject, permission: async () => true, run: () => ran++ })
    tm.register({
      name: 'throws',
      inputSchema: anyObject,
      permission: () => {
        throw new Error('hook bug')
      },
      run: () => ran++,
    })

    const r = await tm.call('del', { id: 1 })
    expect(r).toMatchObject({ status: 'refused', code: 'owner_only', message: 'Only owners can delete' })
    expect(seen).toEqual([{ tool: 'del', input: { id: 1 }, callId: r.callId }])
    expect(canonicalOf(r)!.statusName()).toBe('denied')
    expectWellFormed(r)
    expect(await tm.call('obj', {})).toMatchObject({ status: 'refused', code: 'quota', message: 'Over quota' })
    expect(await tm.call('no', {})).toMatchObject({ status: 'refused', code: 'permission_denied' })
    expect(await tm.call('throws', {})).toMatchObject({ status: 'refused', code: 'permission_denied' })
    expect(ran).toBe(0)
    expect(await tm.call('yes', {})).toMatchObject({ status: 'ok' })
    expect(ran).toBe(1)
  })

  it('a manager permission hook runs before the tool hook; a denial is final', async () => {
    const order: string[] = []
    let ran = 0
    const tm = new ToolManager({
      permission: async ({ tool }) => {
        order.push(`manager:${tool}`)
        return tool === 'blocked' ? { allow: false, code: 'policy_block', message: 'Blocked by policy' } : true
      },
    })
    tm.register({
      name: 'blocked',
      inputSchema: anyObject,
      permission: () => {
        order.push('tool:blocked')
        return true
      },
      run: () => ran++,
    })
    tm.register({
      name: 'open',
      inputSchema: anyObject,
      permission: () => {
        order.push('tool:open')
        return true
      },
      run: () => ran++,
    })
    expect(await tm.call('blocked', {})).toMatchObject({ status: 'refused', code: 'policy_block', message: 'Blocked by policy' })
    expect(ran).toBe(0)
    expect(await tm.call('open', {})).toMatchObject({ status: 'ok' })
    expect(order).toEqual(['manager:blocked', 'manager:open', 'tool:open'])
    expect(ran).toBe(1)
  })
})

describe('concurrency', () => {
  it('calls beyond the limit queue; the bodies never exceed the limit', async () => {
    const tm = new ToolManager()
    let active = 0
    let maxActive = 0
    tm.register({
      name: 't',
      inputSchema: anyObject,
      concurrency: 2,
      run: async (input: { i?: number }) => {
        active++
        maxActive = Math.max(maxActive, active)
        await sleep(5)
        active--
        return input.i ?? null
      },
    })
    const results = await Promise.all(Array.from({ length: 9 }, (_, i) => tm.call('t', { i })))
    expect(results.map((r) => r.status)).toEqual(Array(9).fill('ok'))
    expect(results.map((r) => (r.status === 'ok' ? r.data : undefined))).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8])
    expect(maxActive).toBe(2)
  })

  it('a full bounded queue refuses with concurrency_limit', async () => {
    const tm = new ToolManager()
    const release = gate()
    let started = 0
    tm.register({
      name: 't',
      inputSchema: anyObject,
      concurrency: { limit: 1, queue: 1 },
      run: async () => {
        started++
        await release.promise
        return started
      },
    })
    const first = tm.call('t', {})
    const queued = tm.call('t', {})
    const third = await tm.call('t', {})
    expect(third).toMatchObject({ status: 'refused', code: 'concurrency_limit' })
    expectWellFormed(third)
    expect(started).toBe(1)
    release.release()
    expect((await first).status).toBe('ok')
    expect((await queued).status).toBe('ok')
    expect(started).toBe(2)
  })

  it('a queued call that is cancelled leaves the queue and never runs', async () => {
    const tm = new ToolManager()
    const release = gate()
    let runs = 0
    tm.register({
      name: 't',
      inputSchema: anyObject,
      concurrency: { limit: 1, queue: 5 },
      run: async () => {
        runs++
        await release.promise
        return runs
      },
    })
    const first = tm.call('t', {})
    const ac = new AbortController()
    const queued = tm.call('t', {}, { signal: ac.signal })
    ac.abort()
    expect(await queued).toMatchObject({ status: 'cancelled', by: 'signal' })
    release.release()
    expect(await first).toMatchObject({ status: 'ok' })
    await sleep(5)
    expect(runs).toBe(1)
  })
})

describe('events', () => {
  it('call_start and call_end carry tool, callId, status, statusName and durationMs', async () => {
    const tm = new ToolManager()
    const starts: ToolEvents['call_start'][] = []
    const ends: ToolEvents['call_end'][] = []
    tm.on('call_start', (e) => void starts.push(e))
    tm.on('call_end', (e) => void ends.push(e))
    tm.register({ name: 't', inputSchema: { type: 'object', required: ['x'] }, run: async () => 'done' })
    const okR = await tm.call('t', { x: 1 })
    const badR = await tm.call('t', {})
    const unknown = await tm.call('missing', {})
    expect(starts.map((s) => [s.tool, s.callId])).toEqual([
      ['t', okR.callId],
      ['t', badR.callId],
      ['missing', unknown.callId],
    ])
    expect(ends.map((e) => [e.tool, e.callId, e.status, e.statusName])).toEqual([
      ['t', okR.callId, 'ok', 'success'],
      ['t', badR.callId, 'invalid', 'error'],
      ['missing', unknown.callId, 'refused', 'denied'],
    ])
    for (const e of ends) {
      expect(typeof e.durationMs).toBe('number')
      expect(e.durationMs).toBeGreaterThanOrEqual(0)
      expect(canonicalOf(e.view)).toBe(e.result)
    }
    expect(ends[0]!.view).toBe(okR)
  })

  it('output_invalid is emitted in development when the output does not match outputSchema; the result is kept', async () => {
    const tm = new ToolManager({ development: true })
    const seen: ToolEvents['output_invalid'][] = []
    tm.on('output_invalid', (e) => void seen.push(e))
    tm.register({
      name: 't',
      inputSchema: anyObject,
      outputSchema: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] },
      run: (input: { n?: unknown }) => input,
    })
    const good = await tm.call('t', { n: 1 })
    expect(good).toMatchObject({ status: 'ok', data: { n: 1 } })
    expect(seen).toHaveLength(0)
    const bad = await tm.call('t', { n: 'one' })
    expect(bad).toMatchObject({ status: 'ok', data: { n: 'one' } })
    expect(seen).toHaveLength(1)
    expect(seen[0]).toMatchObject({ callId: bad.callId, tool: 't', issues: [{ path: '/n' }] })
  })

  it('development: false does not validate outputs', async () => {
    const tm = new ToolManager({ development: false })
    let emitted = 0
    tm.on('output_invalid', () => void emitted++)
    tm.register({ name: 't', inputSchema: anyObject, outputSchema: { type: 'number' }, run: () => 'not a number' })
    expect(await tm.call('t', {})).toMatchObject({ status: 'ok', data: 'not a number' })
    expect(emitted).toBe(0)
  })

  it('without the option, output validation follows NODE_ENV: off in production, on otherwise', async () => {
    const saved = process.env.NODE_ENV
    try {
      for (const [env, expected] of [['production', 0], ['development', 1], [undefined, 1]] as const) {
        if (env === undefined) delete process.env.NODE_ENV
        else process.env.NODE_ENV = env
        const tm = new ToolManager()
        let emitted = 0
        tm.on('output_invalid', () => void emitted++)
        tm.register({ name: 't', inputSchema: anyObject, outputSchema: { type: 'number' }, run: () => 'not a number' })
        expect(await tm.call('t', {})).toMatchObject({ status: 'ok' })
        expect(emitted, String(env)).toBe(expected)
      }
    } finally {
      if (saved === undefined) delete process.env.NODE_ENV
      else process.env.NODE_ENV = saved
    }
  })

  it('a throwing or rejecting listener never affects a call', async () => {
    const tm = new ToolManager({ development: true })
    for (const event of ['call_start', 'call_end', 'error', 'output_invalid'] as const) {
      tm.on(event, () => {
        throw new Error(`listener ${event} broke`)
      })
      tm.on(event, async () => {
        throw new Error(`async listener ${event} broke`)
      })
    }
    let after = 0
    tm.on('call_end', () => void after++)
    tm.register({ name: 'ok', inputSchema: anyObject, outputSchema: { type: 'string' }, run: () => 5 })
    tm.register({
      name: 'boom',
      inputSchema: anyObject,
      run: () => {
        throw new Error('x')
      },
    })
    expect(await tm.call('ok', {})).toMatchObject({ status: 'ok', data: 5 })
    expect(await tm.call('boom', {})).toMatchObject({ status: 'error', message: TOOL_FAILED_MESSAGE })
    expect(await tm.call('none', {})).toMatchObject({ status: 'refused', code: 'unknown_tool' })
    expect(after).toBe(3)
  })

  it('off() removes a listener', async () => {
    const tm = new ToolManager()
    let n = 0
    const l = () => void n++
    tm.on('call_end', l)
    tm.register({ name: 't', inputSchema: anyObject, run: () => 1 })
    await tm.call('t', {})
    tm.off('call_end', l)
    await tm.call('t', {})
    expect(n).toBe(1)
  })
})

describe('results', () => {
  it('are deeply frozen, structuredClone-able, unchanged by a JSON round trip and carry callId', async () => {
    const tm = new ToolManager()
    tm.register({ name: 't', inputSchema: anyObject, run: (input: unknown) => ({ echo: input, list: [{ a: [1, { b: null }] }] }) })
    const r = await tm.call('t', { q: 'x', nested: { arr: [1, 2, { deep: true }] } })
    expect(r.status).toBe('ok')
    expectWellFormed(r)
    const withId = await tm.call('t', {}, { callId: 'my-id' })
    expect(withId.callId).toBe('my-id')
    const a = await tm.call('t', {})
    const b = await tm.call('t', {})
    expect(a.callId).not.toBe(b.callId)
  })

  it('a callId already in flight is refused with duplicate_call_id', async () => {
    const tm = new ToolManager()
    const release = gate()
    tm.register({ name: 't', inputSchema: anyObject, run: () => release.promise.then(() => 1) })
    const first = tm.call('t', {}, { callId: 'same' })
    expect(await tm.call('t', {}, { callId: 'same' })).toMatchObject({ status: 'refused', code: 'duplicate_call_id' })
    release.release()
    expect(await first).toMatchObject({ status: 'ok', callId: 'same' })
  })

  it('a returned value is copied with JSON semantics: functions and symbols inside are left out, a whole one or a BigInt anywhere is an error', async () => {
    const tm = new ToolManager()
    const returns: [unknown, unknown][] = [
      [{ f: () => 1, s: Symbol('x'), u: undefined, keep: 1 }, { keep: 1 }],
      [[() => 1, Symbol('x'), undefined, 2], [null, null, null, 2]],
    ]
    for (const [ret, data] of returns) {
      tm.register({ name: 'r', inputSchema: anyObject, run: () => ret }, { replace: true })
      expect(await tm.call('r', {})).toMatchObject({ status: 'ok', data })
    }
    for (const ret of [() => 1, Symbol('x'), { deep: { n: 1n } }]) {
      tm.register({ name: 'r', inputSchema: anyObject, run: () => ret }, { replace: true })
      expect(await tm.call('r', {})).toMatchObject({ status: 'error', kind: 'other' })
    }
  })

  it("a tool's throw: the view says 'The tool failed.'; the error event has its message, stack and the thrown value itself, as thrown", async () => {
    const tm = new ToolManager()
    const thrown = Object.assign(new Error('boom'), { token: 'tok-secret' })
    tm.register({ name: 'x', inputSchema: anyObject, sensitive: ['token'], run: () => { throw thrown } })
    const events: { message: string; stack?: string; error: unknown }[] = []
    tm.on('error', (e) => void events.push(e))
    const view = await tm.call('x', {})
    expect(view).toMatchObject({ status: 'error', kind: 'other', message: 'The tool failed.' })
    expect(JSON.stringify(view)).not.toContain('tok-secret')
    expect(events).toHaveLength(1)
    expect(events[0]!.message).toBe('boom')
    expect(events[0]!.stack).toContain('boom')
    expect(events[0]!.error).toBe(thrown)
  })

  it('a replaced tool has slots of its own; a body that outlived its timeout may still register its undo', async () => {
    const tm = new ToolManager()
    let releaseOld!: () => void
    tm.register({ name: 'c', inputSchema: anyObject, concurrency: 1, run: () => new Promise<string>((r) => (releaseOld = () => r('old'))) })
    const old = tm.call('c', {})
    tm.register({ name: 'c', inputSchema: anyObject, concurrency: 1, run: () => 'new' }, { replace: true })
    expect(await tm.call('c', {})).toMatchObject({ status: 'ok', data: 'new' })
    releaseOld()
    expect(await old).toMatchObject({ status: 'ok', data: 'old' })

    let ctxOf!: ToolContext
    tm.register({ name: 'u', inputSchema: anyObject, timeoutMs: 10, run: (_i, ctx) => { ctxOf = ctx; return new Promise(() => {}) } })
    const timedOut = await tm.call('u', {})
    expect(timedOut).toMatchObject({ status: 'error', kind: 'timeout' })
    expect(tm.canUndo(timedOut.callId!)).toBe(false)
    ctxOf.registerUndo(() => 'undone')
    expect(tm.canUndo(timedOut.callId!)).toBe(true)
    expect(await tm.undo(timedOut.callId!)).toMatchObject({ status: 'ok', data: 'undone' })
  })

  it('a view equals its plain copies loosely; strict deep equality tells it from them (docs/result.md)', async () => {
    const { isDeepStrictEqual } = await import('node:util')
    const tm = new ToolManager()
    tm.register({ name: 'n', inputSchema: anyObject, run: () => ({ a: 1 }) })
    const view = await tm.call('n', {})
    for (const copy of [structuredClone(view), JSON.parse(JSON.stringify(view)) as unknown]) {
      expect(copy).toEqual(view)
      expect(isDeepStrictEqual(copy, view)).toBe(false)
    }
  })

  it('a generated call id never takes one a caller chose for a call in flight: tm.cancel stops the call it names', async () => {
    const tm = new ToolManager()
    const releases: (() => void)[] = []
    tm.register({ name: 't', inputSchema: anyObject, run: (_i, ctx) => new Promise((resolve) => { releases.push(() => resolve(ctx.callId)); ctx.signal.addEventListener('abort', () => resolve('aborted')) }) })
    const probe = await tm.call('t', {}, { signal: AbortSignal.abort() })
    const probeId = probe.callId!
    const prefix = probeId.replace(/\d+$/, '')
    const seq = Number(probeId.slice(prefix.length))
    const starts: string[] = []
    tm.on('call_start', (e) => starts.push(e.callId))
    const chosen = `${prefix}${seq + 2}`
    const a = tm.call('t', {}, { callId: chosen })
    const b = tm.call('t', {})
    const c = tm.call('t', {})
    await new Promise((r) => setTimeout(r, 0))
    expect(new Set(starts).size).toBe(3)
    expect(tm.cancel(chosen)).toBe(true)
    expect(await a).toMatchObject({ status: 'cancelled', callId: chosen })
    for (const release of releases) release()
    const [vb, vc] = await Promise.all([b, c])
    expect(vb.status).toBe('ok')
    expect(vc.status).toBe('ok')
    expect([vb.callId, vc.callId]).not.toContain(chosen)
  })

  it('canonicalOf(view) gives the canonical ToolResult with the matching statusName', async () => {
    const tm = new ToolManager()
    const rows: [unknown, string, string][] = [
      [ok(1), 'ok', 'success'],
      [invalid('x'), 'invalid', 'error'],
      [refuse('no', 'No'), 'refused', 'denied'],
      [cancelled('operator'), 'cancelled', 'error'],
      [errorResult('e'), 'error', 'error'],
    ]
    for (const [ret, status, statusName] of rows) {
      tm.register({ name: 't', inputSchema: anyObject, run: () => ret }, { replace: true })
      const r = await tm.call('t', {})
      expect(r.status).toBe(status)
      const canonical = canonicalOf(r)
      expect(canonical, status).toBeDefined()
      expect(canonical!.statusName(), status).toBe(statusName)
      // the canonical result survives neither structuredClone nor JSON: it is process-local
      expect(canonicalOf(structuredClone(r))).toBeUndefined()
    }
    const cancelledResult = canonicalOf((await tm.call('t', {})) as CallResult)!
    expect(cancelledResult.isErrorKind('other')).toBe(true)
    expect(canonicalOf(await tm.call('nope', {}))!.isRefused()).toBe(true)
  })
})
