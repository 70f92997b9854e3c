// A Standard Schema's `validate` is code toolwire does not control: whatever it returns
// (a malformed result, a hostile thenable, a Proxy) is never an acceptance, and a validation
// that never settles is cut by the call's timeout and signal (found in review #21 items 17, 18).
import { afterEach, describe, expect, it, vi } from 'vitest'
import { z } from 'zod'
import { ToolManager, type StandardSchemaV1 } from '../src/index.js'

/** A hand-written Standard Schema whose `validate` returns `result()`. */
function standard(result: () => unknown): StandardSchemaV1 {
  return { '~standard': { version: 1, vendor: 'acme', validate: result, jsonSchema: { input: () => ({ type: 'object' }), output: () => ({ type: 'object' }) } } } as unknown as StandardSchemaV1
}

function throwingProxy(): object {
  return new Proxy({}, { get: () => { throw new Error('trap') }, has: () => { throw new Error('trap') }, getPrototypeOf: () => { throw new Error('trap') } })
}

function revokedProxy(): object {
  const { proxy, revoke } = Proxy.revocable({}, {})
  revoke()
  return proxy
}

/** Malformed results, each returned as it is, inside a Promise, and from a non-Promise thenable. */
const MALFORMED: readonly [string, () => unknown][] = [
  ['null', () => null],
  ['undefined', () => undefined],
  ['a number', () => 42],
  ['a string', () => 'ok'],
  ['an object with neither issues nor value', () => ({})],
  ['issues: undefined and no value', () => ({ issues: undefined })],
  ['an issues getter that throws', () => ({ get issues(): unknown { throw new Error('getter') } })],
  ['a value getter that throws', () => ({ get value(): unknown { throw new Error('getter') } })],
  ['issues that are a throwing Proxy', () => ({ issues: throwingProxy() })],
  ['a Proxy that throws on every read', throwingProxy],
  ['a revoked Proxy', revokedProxy],
]

const WRAPPERS: readonly [string, (r: () => unknown) => () => unknown][] = [
  ['returned', (r) => r],
  ['in a Promise', (r) => () => Promise.resolve().then(r)],
  ['from a non-Promise thenable', (r) => () => ({ then: (ok: (v: unknown) => void) => ok(r()) })],
]

async function callOf(schema: StandardSchemaV1, options?: { timeoutMs?: number; signal?: AbortSignal }): Promise<{ view: unknown; runs: number }> {
  const tm = new ToolManager()
  let runs = 0
  tm.register({ name: 'read', inputSchema: schema, run: () => ++runs })
  const view = await tm.call('read', { path: '../../etc' }, options)
  return { view, runs }
}

describe('a malformed validator result is an issue, never an acceptance', () => {
  for (const [wrapped, wrap] of WRAPPERS) {
    for (const [what, result] of MALFORMED) {
      it(`${what}, ${wrapped}`, async () => {
        const { view, runs } = await callOf(standard(wrap(result)))
        expect(view).toMatchObject({ status: 'invalid', issues: [{ path: '', message: expect.stringMatching(/could not be checked|is not valid/) }] })
        expect(runs).toBe(0)
      })
    }
  }

  it('a thenable whose then throws, whose then getter throws, or that resolves to itself for ever', async () => {
    const loop: { then: (ok: (v: unknown) => void) => void } = { then: (ok) => ok(loop) }
    const cases: (() => unknown)[] = [
      () => ({ then: () => { throw new Error('then') } }),
      () => ({ get then(): unknown { throw new Error('getter') } }),
      () => loop,
      () => ({ then: (_ok: unknown, bad: (e: unknown) => void) => bad(new Error('rejected')) }),
    ]
    for (const result of cases) {
      const { view, runs } = await callOf(standard(result))
      expect(view).toMatchObject({ status: 'invalid' })
      expect(runs).toBe(0)
    }
  })

  it('a hostile thenable that calls back twice is heard once; its first answer counts', async () => {
    const twice = () => ({ then: (ok: (v: unknown) => void) => { ok({ issues: [{ message: 'no' }] }); ok({ value: {} }) } })
    const { view, runs } = await callOf(standard(twice))
    expect(view).toMatchObject({ status: 'invalid', issues: [{ path: '', message: 'no' }] })
    expect(runs).toBe(0)
  })

  it('well-formed results still work: a value (even undefined) is an acceptance, issues are issues', async () => {
    expect((await callOf(standard(() => ({ value: undefined })))).runs).toBe(1)
    expect((await callOf(standard(() => ({ then: (ok: (v: unknown) => void) => ok({ value: {} }) })))).runs).toBe(1)
    expect((await callOf(standard(() => Promise.resolve({ issues: [{ message: 'bad', path: ['path'] }] })))).view).toMatchObject({
      status: 'invalid',
      issues: [{ path: '/path', message: 'bad' }],
    })
  })
})

describe('a validation that never settles', () => {
  afterEach(() => void vi.useRealTimers())
  const never = (): StandardSchemaV1 => standard(() => ({ then() {} }))

  it('is cut by the call\'s timeoutMs: error of kind timeout, the body never runs', async () => {
    vi.useFakeTimers()
    const pending = callOf(never(), { timeoutMs: 300 })
    await vi.advanceTimersByTimeAsync(300)
    const { view, runs } = await pending
    expect(view).toMatchObject({ status: 'error', message: 'The input check did not finish within 300 ms; the tool did not run' })
    expect(runs).toBe(0)
  })

  it('is cut by tm.cancel(callId): cancelled by operator, the body never runs, and the id is free again', async () => {
    const tm = new ToolManager()
    let runs = 0
    let accept: ((v: undefined) => void) | undefined
    tm.register({ name: 'n', inputSchema: never(), run: () => ++runs })
    tm.register({ name: 'ok', inputSchema: standard(() => new Promise((r) => (accept = () => r({ value: {} })))), run: () => ++runs })
    const pending = tm.call('n', {}, { callId: 'cancel-me' })
    expect(tm.cancel('cancel-me')).toBe(true)
    expect(await pending).toMatchObject({ status: 'cancelled', by: 'operator', callId: 'cancel-me' })
    expect(tm.cancel('cancel-me')).toBe(false)
    // a check that passes after the call was admitted runs it under that id, as before
    const later = tm.call('ok', {}, { callId: 'cancel-me' })
    await Promise.resolve()
    accept?.(undefined)
    expect(await later).toMatchObject({ status: 'ok', data: 1 })
    expect(runs).toBe(1)
  })

  it('is cut by the tool\'s and the manager\'s timeoutMs too (a zod refine whose promise never settles)', async () => {
    vi.useFakeTimers()
    const tm = new ToolManager({ timeoutMs: 500 })
    let runs = 0
    tm.register({ name: 'z', inputSchema: z.object({ p: z.string().refine(() => new Promise<boolean>(() => {})) }), run: () => ++runs })
    tm.register({ name: 't', timeoutMs: 200, inputSchema: never(), run: () => ++runs })
    const viaManager = tm.call('z', { p: '../../etc' })
    const viaTool = tm.call('t', {})
    await vi.advanceTimersByTimeAsync(200)
    expect(await viaTool).toMatchObject({ status: 'error', message: expect.stringContaining('200 ms') })
    await vi.advanceTimersByTimeAsync(300)
    expect(await viaManager).toMatchObject({ status: 'error', message: expect.stringContaining('500 ms') })
    expect(runs).toBe(0)
  })

  it('is cut by the call\'s signal: cancelled by signal, also when it was aborted before the call', async () => {
    const controller = new AbortController()
    const pending = callOf(never(), { signal: controller.signal })
    controller.abort()
    expect(await pending).toMatchObject({ view: { status: 'cancelled', by: 'signal' }, runs: 0 })
    expect(await callOf(never(), { signal: AbortSignal.abort() })).toMatchObject({ view: { status: 'cancelled', by: 'signal' }, runs: 0 })
  })

  it('the time validation took counts against the call\'s timeout: the body gets only what is left', async () => {
    vi.useFakeTimers()
    const tm = new ToolManager()
    let release!: () => void
    const gate = new Promise<void>((r) => (release = r))
    let ran = false
    tm.register({
      name: 'slow',
      inputSchema: standard(() => gate.then(() => ({ value: {} }))),
      run: () => {
        ran = true
        return new Promise(() => {})
      },
    })
    const pending = tm.call('slow', {}, { timeoutMs: 1000 })
    await vi.advanceTimersByTimeAsync(700)
    release()
    await vi.advanceTimersByTimeAsync(300)
    expect(ran).toBe(true)
    expect(await pending).toMatchObject({ status: 'error', message: expect.stringContaining('1000 ms') })
  })
})
