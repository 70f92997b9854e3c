/**
 * Hostile tools and callers (issue 11): whatever a tool throws or returns, and whatever a
 * caller passes, `tm.call` / `callJson` / `callMany` settle exactly once with a view, never
 * throw, never leave an unhandled rejection, and release the concurrency slot and the
 * in-flight entry. Also: redaction of toJSON'd input and of previewed changes, a form
 * preview that is a copy, exact cancel ids, and a concurrency limit on running bodies.
 */
import { execFile, spawn } from 'node:child_process'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import {
  createFormTool,
  createOutcomeTool,
  REDACTED,
  ToolManager,
  ToolResult,
  toolError,
  type CallResult,
  type EvidenceRecord,
  type EvidenceStore,
  type ToolContext,
  type ToolEvents,
} from '../src/index.js'
import { cli, ensureBuilt, until } from './fixtures/mcp/helpers.js'
import { withoutWasiWarning } from './fixtures/wasi-warning.js'
import { gate } from './support.js'

const unhandled: unknown[] = []
const onUnhandled = (reason: unknown): void => {
  unhandled.push(reason)
}
beforeEach(() => {
  unhandled.length = 0
  process.on('unhandledRejection', onUnhandled)
})
afterEach(async () => {
  // unhandled rejections are reported after the microtask queue drains
  await new Promise((r) => setImmediate(r))
  await new Promise((r) => setImmediate(r))
  process.off('unhandledRejection', onUnhandled)
  expect(unhandled, 'no unhandled rejection').toEqual([])
})

function deepFrozen(v: unknown, seen = new Set<unknown>()): boolean {
  if (typeof v !== 'object' || v === null || seen.has(v)) return true
  seen.add(v)
  if (!Object.isFrozen(v)) return false
  return Object.keys(v).every((k) => deepFrozen((v as Record<string, unknown>)[k], seen))
}

function throwing(what: string): never {
  throw new Error(`hostile ${what}`)
}

/** Values a tool may throw, reject with, or return, built fresh for each use. */
const HOSTILE: Record<string, () => unknown> = {
  'a throwing kind getter': () => ({
    get kind() {
      return throwing('kind')
    },
  }),
  'a throwing retryable getter': () => ({
    kind: 'network',
    get retryable() {
      return throwing('retryable')
    },
  }),
  'a Proxy whose every trap throws': () =>
    new Proxy(
      {},
      {
        get: () => throwing('get'),
        has: () => throwing('has'),
        ownKeys: () => throwing('ownKeys'),
        getPrototypeOf: () => throwing('getPrototypeOf'),
        getOwnPropertyDescriptor: () => throwing('getOwnPropertyDescriptor'),
      },
    ),
  'a revoked Proxy': () => {
    const { proxy, revoke } = Proxy.revocable({}, {})
    revoke()
    return proxy
  },
  'a revoked function Proxy': () => {
    const { proxy, revoke } = Proxy.revocable(() => 1, {})
    revoke()
    return proxy
  },
  'an object whose output getter throws': () => ({
    get output() {
      return throwing('output')
    },
    isError: false,
  }),
  'an object whose isError getter throws': () => ({
    output: 'x',
    get isError() {
      return throwing('isError')
    },
  }),
  'an object whose then getter throws': () => ({
    get then() {
      return throwing('then')
    },
  }),
  'a thenable whose then throws': () => ({
    then() {
      throwing('then()')
    },
  }),
  'a thenable that resolves with a revoked Proxy': () => ({
    then(resolve: (v: unknown) => void) {
      const { proxy, revoke } = Proxy.revocable({}, {})
      revoke()
      resolve(proxy)
    },
  }),
  'a thenable that rejects, then resolves': () => ({
    then(resolve: (v: unknown) => void, reject: (e: unknown) => void) {
      reject(new Error('first'))
      resolve('second')
    },
  }),
  'a thenable that resolves, then rejects': () => ({
    then(resolve: (v: unknown) => void, reject: (e: unknown) => void) {
      resolve('first')
      reject(new Error('second'))
    },
  }),
  'Object.create(null)': () => Object.create(null),
  'Object.create(null) with a kind': () => Object.assign(Object.create(null), { kind: 'network', message: 'm' }),
  'an Error whose message getter throws': () =>
    Object.defineProperty(new Error('x'), 'message', {
      get: () => throwing('message'),
    }),
  'an Error whose stack getter throws': () =>
    Object.defineProperty(new Error('x'), 'stack', {
      get: () => throwing('stack'),
    }),
  'an Error whose toString throws': () => Object.defineProperty(new Error('x'), 'toString', { value: () => throwing('toString') }),
  'an object whose toString and valueOf throw': () => ({
    toString: () => throwing('toString'),
    valueOf: () => throwing('valueOf'),
  }),
  'a symbol': () => Symbol('hostile'),
  'a BigInt': () => 10n,
  'a function': () => () => 1,
  'an object with a throwing toJSON': () => ({ toJSON: () => throwing('toJSON') }),
  'an object with a throwing getter': () => ({
    get value() {
      return throwing('value')
    },
  }),
  undefined: () => undefined,
  null: () => null,
}

type Mode = 'throw' | 'return' | 'reject' | 'resolve'
const MODES: readonly Mode[] = ['throw', 'return', 'reject', 'resolve']

function bodyOf(mode: Mode, make: () => unknown): () => unknown {
  switch (mode) {
    case 'throw':
      return () => {
        throw make()
      }
    case 'return':
      return make
    case 'reject':
      return async () => {
        await null
        throw make()
      }
    case 'resolve':
      return async () => {
        await null
        return make()
      }
  }
}

/**
 * A manager with one tool `t` (concurrency 1, so a leaked slot blocks the next call) that
 * runs `hostile` for `{ case: 'hostile' }` and answers ok otherwise. With `hostile` a
 * mode, `{ case: <name of a HOSTILE value> }` runs that value in that mode.
 */
function managerWith(hostile: (() => unknown) | Mode, listeners: 'none' | 'error' | 'all'): ToolManager {
  const tm = new ToolManager()
  if (listeners !== 'none') {
    tm.on('error', (e) => {
      // a listener that reads everything it is given
      void `${e.message} ${e.stack ?? ''}`
    })
  }
  if (listeners === 'all') {
    tm.on('call_end', (e) => JSON.stringify(e.view))
    tm.on('call_start', () => undefined)
  }
  tm.register({
    name: 't',
    inputSchema: { type: 'object' },
    concurrency: { limit: 1, queue: 10 },
    run: (input: { case?: string }) => {
      if (input.case === 'fine') return { fine: true }
      if (typeof hostile === 'function') return hostile()
      return bodyOf(hostile, HOSTILE[input.case!]!)()
    },
  })
  return tm
}

/** One manager per listener setting and mode, shared by the tests of the matrix (registering costs a schema compile). */
const shared = new Map<string, ToolManager>()
function sharedManager(mode: Mode, listeners: 'none' | 'error' | 'all'): ToolManager {
  const key = `${mode}/${listeners}`
  let tm = shared.get(key)
  if (tm === undefined) shared.set(key, (tm = managerWith(mode, listeners)))
  return tm
}

async function expectRecovered(tm: ToolManager, hostileView: CallResult): Promise<void> {
  expect(typeof hostileView.status).toBe('string')
  expect(typeof hostileView.callId).toBe('string')
  expect(deepFrozen(hostileView)).toBe(true)
  expect(() => JSON.stringify(hostileView)).not.toThrow()
  // the in-flight entry is gone
  expect(tm.cancel(hostileView.callId!)).toBe(false)
  // the slot is free: the next call runs (a leaked slot would leave it queued until its timeout)
  const next = await tm.call('t', { case: 'fine' }, { timeoutMs: 5000 })
  expect(next).toMatchObject({ status: 'ok', data: { fine: true } })
  const metrics = tm.metrics().tools.find((m) => m.tool === 't')!
  expect(metrics.in_flight).toBe(0)
}

describe('a hostile throw or return settles the call once, releases its slot, and leaves no unhandled rejection', () => {
  for (const listeners of ['none', 'error', 'all'] as const) {
    describe(`with ${listeners === 'none' ? 'no listeners' : listeners === 'error' ? 'an error listener' : 'error, call_start and call_end listeners'}`, () => {
      for (const name of Object.keys(HOSTILE)) {
        for (const mode of MODES) {
          it(`${mode}: ${name}`, async () => {
            const tm = sharedManager(mode, listeners)
            const view = await tm.call('t', { case: name })
            if (mode === 'throw' || mode === 'reject') {
              expect(['error', 'cancelled', 'invalid', 'refused']).toContain(view.status)
            }
            if (view.status === 'error') expect(view.message).not.toMatch(/hostile/)
            await expectRecovered(tm, view)
          })
        }
      }
    })
  }

  it('a thenable that never settles is settled by the timeout; its body keeps its slot, as a running body does', async () => {
    let runs = 0
    const tm = managerWith(() => {
      runs++
      return { then() {} }
    }, 'error')
    const view = await tm.call('t', { case: 'hostile' }, { timeoutMs: 20 })
    expect(view).toMatchObject({ status: 'error', kind: 'timeout' })
    expect(tm.cancel(view.callId!)).toBe(false)
    // the body never settled, so it still counts as running: the next call waits in the queue
    const next = await tm.call('t', { case: 'hostile' }, { timeoutMs: 20 })
    expect(next).toMatchObject({ status: 'error', kind: 'timeout' })
    expect(runs).toBe(1)
    expect(tm.metrics().tools[0]!.in_flight).toBe(0)
  })

  it('a thenable that resolves, then rejects, settles ok with the first value', async () => {
    const tm = managerWith(
      () => ({
        then(resolve: (v: unknown) => void, reject: (e: unknown) => void) {
          resolve({ first: true })
          reject(new Error('second'))
        },
      }),
      'none',
    )
    expect(await tm.call('t', { case: 'hostile' })).toMatchObject({ status: 'ok', data: { first: true } })
  })

  it("abort listeners a tool adds to its signal cannot end the process when a timeout or a cancel aborts it", async () => {
    const tm = new ToolManager()
    const errors: string[] = []
    tm.on('error', (e) => errors.push(e.message))
    let removedCalled = false
    let plainCalled = 0
    tm.register({
      name: 't',
      inputSchema: { type: 'object' },
      run: (_input, ctx: ToolContext) => {
        const signal = ctx.signal
        signal.addEventListener('abort', () => throwing('listener'))
        signal.addEventListener('abort', async () => {
          await null
          throwing('async listener')
        })
        signal.addEventListener('abort', { handleEvent: () => throwing('handleEvent') })
        signal.onabort = () => throwing('onabort')
        const removed = (): void => {
          removedCalled = true
        }
        signal.addEventListener('abort', removed)
        signal.removeEventListener('abort', removed)
        const plain = (): void => {
          plainCalled++
        }
        // the same listener twice is one listener, as on any signal
        signal.addEventListener('abort', plain)
        signal.addEventListener('abort', plain)
        return new Promise(() => undefined)
      },
    })
    const timedOut = await tm.call('t', {}, { timeoutMs: 1 })
    expect(timedOut).toMatchObject({ status: 'error', kind: 'timeout' })
    const p = tm.call('t', {}, { callId: 'x' })
    expect(tm.cancel('x')).toBe(true)
    expect(await p).toMatchObject({ status: 'cancelled' })
    await new Promise((r) => setImmediate(r))
    expect(removedCalled).toBe(false)
    expect(plainCalled).toBe(2)
    expect(errors.filter((m) => m === 'hostile async listener')).toHaveLength(2)
    expect(errors.filter((m) => m === 'hostile listener')).toHaveLength(2)
    expect(errors.filter((m) => m === 'hostile handleEvent')).toHaveLength(2)
    expect(errors.filter((m) => m === 'hostile onabort')).toHaveLength(2)
  })

  it('a ToolResult subclass or an instance with overridden methods cannot break the settlement', async () => {
    class Hostile extends ToolResult {
      override isError(): boolean {
        return throwing('isError')
      }
      override error(): never {
        return throwing('error')
      }
      override disposition(): never {
        return throwing('disposition')
      }
    }
    class Honest extends ToolResult {}
    const values: (() => unknown)[] = [
      () => Object.setPrototypeOf(ToolResult.fromData({ a: 1 }), Hostile.prototype),
      () => Object.setPrototypeOf(ToolResult.failed(toolError('network', 'down')), Honest.prototype),
      () => Object.defineProperty(ToolResult.fromData({ a: 1 }), 'isError', { value: () => throwing('own isError') }),
      () => Object.defineProperty(ToolResult.fromData({ a: 1 }), 'toJSONText', { value: () => throwing('own toJSONText') }),
    ]
    const tm = new ToolManager()
    tm.on('error', (e) => void e.message)
    let i = 0
    tm.register({ name: 't', inputSchema: { type: 'object' }, concurrency: 1, breaker: { failures: 100, cooldownMs: 1 }, run: (input: { case?: string }) => (input.case === 'fine' ? { fine: true } : values[i++]!()) })
    const views: CallResult[] = []
    for (let n = 0; n < values.length; n++) {
      const view = await tm.call('t', {})
      views.push(view)
      await expectRecovered(tm, view)
    }
    expect(views[1]).toMatchObject({ status: 'error', kind: 'network' })
    expect(views[2]).toMatchObject({ status: 'ok', data: { a: 1 } })
  })

  it('the error event carries a message even when the thrown value cannot be printed', async () => {
    const tm = managerWith(() => {
      throw Object.create(null)
    }, 'none')
    const errors: ToolEvents['error'][] = []
    tm.on('error', (e) => errors.push(e))
    await tm.call('t', { case: 'hostile' })
    expect(errors).toHaveLength(1)
    expect(typeof errors[0]!.message).toBe('string')
  })

  for (const mode of MODES) {
    it(`an outcome tool (${mode}) with a hostile value settles and frees its slot`, async () => {
      const tm = new ToolManager()
      tm.on('error', (e) => void e.message)
      tm.register({
        ...createOutcomeTool({
          definition: { type: 'function', function: { name: 't', parameters: { type: 'object' } } },
          execute: (args: { case?: string }, invocation) => {
            if (args.case === 'fine') return { fine: true }
            const make = HOSTILE[args.case!]!
            // a hostile value reported as the failure, and one thrown or returned
            invocation.reportFailure(make() as Error)
            return bodyOf(mode, make)()
          },
        }),
        concurrency: 1,
      })
      for (const name of Object.keys(HOSTILE)) {
        const view = await tm.call('t', { case: name })
        await expectRecovered(tm, view)
        const out = await tm.executeWithOutcome('t', { case: name })
        expect(typeof out.outcome.status).toBe('string')
      }
    })
  }

  it('a hostile value from a permission hook, needsConfirmation, summarize or previewChanges settles the call', async () => {
    const tm = new ToolManager()
    tm.on('error', (e) => void e.message)
    for (const where of ['permission', 'needsConfirmation', 'summarize', 'previewChanges'] as const) {
      for (const mode of MODES) {
        const hostile = (input: { case: string }) => bodyOf(mode, HOSTILE[input.case]!)()
        const name = `${where}-${mode}`
        tm.register({
          name,
          inputSchema: { type: 'object' },
          concurrency: 1,
          ...(where === 'permission' ? { permission: (call: { input: unknown }) => hostile(call.input as never) as never } : {}),
          ...(where === 'needsConfirmation' ? { needsConfirmation: hostile as never } : {}),
          ...(where === 'summarize' ? { needsConfirmation: true, summarize: hostile as never } : {}),
          ...(where === 'previewChanges' ? { needsConfirmation: true, previewChanges: hostile as never } : {}),
          run: () => ({ fine: true }),
        })
        for (const c of Object.keys(HOSTILE)) {
          const view = await tm.call(name, { case: c })
          expect(typeof view.status).toBe('string')
          expect(tm.cancel(view.callId!)).toBe(false)
          expect(() => JSON.stringify(view)).not.toThrow()
        }
      }
    }
  })
})

describe('tm.call, callJson, callMany and friends never throw synchronously', () => {
  const hostileName = {
    toString: () => throwing('toString'),
    valueOf: () => throwing('valueOf'),
  }
  const revoked = (): object => {
    const { proxy, revoke } = Proxy.revocable({}, {})
    revoke()
    return proxy
  }
  const throwingOptions = (key: string) =>
    Object.defineProperty({}, key, {
      get: () => throwing(key),
      enumerable: true,
    })

  function fresh(): ToolManager {
    const tm = new ToolManager()
    tm.on('error', (e) => void e.message)
    tm.on('call_start', () => undefined)
    tm.on('call_end', () => undefined)
    tm.register({ name: 't', inputSchema: { type: 'object' }, concurrency: 1, run: () => ({ fine: true }) })
    return tm
  }

  it('a name whose toString throws, a symbol, a revoked Proxy: refused unknown_tool', async () => {
    const tm = fresh()
    for (const name of [hostileName, Symbol('n'), revoked(), undefined, null, 42]) {
      let p!: Promise<CallResult>
      expect(() => (p = tm.call(name as never, {}))).not.toThrow()
      expect(await p).toMatchObject({ status: 'refused', code: 'unknown_tool' })
      expect(() => (p = tm.callJson(name as never, '{}'))).not.toThrow()
      expect(await p).toMatchObject({ status: 'refused', code: 'unknown_tool' })
      expect(() => (p = tm.callJson(name as never, '{nope'))).not.toThrow()
      expect((await p).status).toMatch(/refused|invalid/)
    }
    expect(await tm.call('t', {})).toMatchObject({ status: 'ok' })
  })

  it('throwing options or option getters give a refused invalid_options view', async () => {
    const tm = fresh()
    const bad = [
      throwingOptions('signal'),
      throwingOptions('callId'),
      throwingOptions('timeoutMs'),
      revoked(),
      new Proxy({}, { get: () => throwing('get') }),
      { signal: revoked() },
      {
        signal: {
          get aborted() {
            return throwing('aborted')
          },
          addEventListener: () => undefined,
          removeEventListener: () => undefined,
        },
      },
      { signal: { aborted: false, addEventListener: () => throwing('addEventListener'), removeEventListener: () => undefined } },
      { signal: 'not a signal' },
      { timeoutMs: 'soon' },
      { timeoutMs: -1 },
      { timeoutMs: Number.NaN },
      { callId: 42 },
    ]
    for (const options of bad) {
      let p!: Promise<CallResult>
      expect(() => (p = tm.call('t', {}, options as never))).not.toThrow()
      expect(await p).toMatchObject({ status: 'refused', code: 'invalid_options' })
      expect(() => (p = tm.callJson('t', '{}', options as never))).not.toThrow()
      expect(await p).toMatchObject({ status: 'refused', code: 'invalid_options' })
      expect(() => (p = tm.callJson('t', '{nope', options as never))).not.toThrow()
      expect((await p).status).toMatch(/refused|invalid/)
      const [many] = await tm.callMany([{ name: 't', input: {}, options: options as never }])
      expect(many).toMatchObject({ status: 'refused', code: 'invalid_options' })
      await expect(tm.executeWithOutcome('t', {}, options as never)).resolves.toMatchObject({ outcome: { status: 'denied' } })
    }
    // nothing leaked: the tool (concurrency 1) still runs
    expect(await tm.call('t', {}, { timeoutMs: 5000 })).toMatchObject({ status: 'ok' })
    expect(tm.metrics().tools.find((m) => m.tool === 't')!.in_flight).toBe(0)
  })

  it('a throwing callMany entry, entry getter or list settles that entry only', async () => {
    const tm = fresh()
    const getterEntry = Object.defineProperty({}, 'name', { get: () => throwing('name') })
    const argsEntry = Object.defineProperty({ name: 't' }, 'args', { get: () => throwing('args') })
    const inputEntry = Object.defineProperty({ name: 't' }, 'input', { get: () => throwing('input') })
    const optionsEntry = Object.defineProperty({ name: 't', input: {} }, 'options', { get: () => throwing('options') })
    const proxyList = new Proxy([{ name: 't', input: {} }, { name: 't', input: {} }], {
      get: (target, key) => (key === '1' ? throwing('1') : Reflect.get(target, key)),
    })
    let p!: Promise<readonly CallResult[]>
    expect(() => (p = tm.callMany([getterEntry, argsEntry, inputEntry, optionsEntry, revoked(), { name: hostileName, input: {} }, { name: 't', input: {} }] as never))).not.toThrow()
    const views = await p
    expect(views.map((v) => v.status)).toEqual(['refused', 'refused', 'refused', 'refused', 'refused', 'refused', 'ok'])
    expect(() => (p = tm.callMany(proxyList as never))).not.toThrow()
    expect((await p).map((v) => v.status)).toEqual(['ok', 'refused'])
    for (const list of [revoked(), null, 'x', 42]) {
      expect(() => (p = tm.callMany(list as never))).not.toThrow()
      expect(Array.isArray(await p)).toBe(true)
    }
    const lengthProxy = new Proxy([], { get: (t, k) => (k === 'length' ? throwing('length') : Reflect.get(t, k)) })
    expect(() => (p = tm.callMany(lengthProxy as never))).not.toThrow()
    expect(await p).toEqual([])
    expect(await tm.call('t', {}, { timeoutMs: 5000 })).toMatchObject({ status: 'ok' })
  })

  it('hostile inputs (revoked Proxy, throwing getters, toJSON, cycles) settle with evidence and every listener on', async () => {
    const records: EvidenceRecord[] = []
    const tm = new ToolManager({ evidence: { append: (r) => void records.push(r), readAll: async () => records } })
    tm.on('error', (e) => void e.message)
    tm.on('call_end', (e) => JSON.stringify(e.record))
    tm.register({ name: 'any', inputSchema: {}, concurrency: 1, run: (input: unknown) => input })
    tm.register({
      name: 'typed',
      inputSchema: { type: 'object', properties: { a: { type: 'string' } } },
      concurrency: 1,
      needsConfirmation: true,
      run: () => 1,
    })
    const cyclic: Record<string, unknown> = { password: 'hunter2' }
    cyclic.self = cyclic
    const inputs = [
      revoked(),
      new Proxy({}, { get: () => throwing('get'), ownKeys: () => throwing('ownKeys'), getPrototypeOf: () => throwing('proto') }),
      Object.defineProperty({}, 'a', { get: () => throwing('a'), enumerable: true }),
      { toJSON: () => throwing('toJSON') },
      cyclic,
      { big: 1n },
    ]
    for (const input of inputs) {
      for (const name of ['any', 'typed']) {
        let p!: Promise<CallResult>
        expect(() => (p = tm.call(name, input))).not.toThrow()
        const view = await p
        expect(typeof view.status).toBe('string')
        expect(JSON.stringify(view)).not.toContain('hunter2')
        const [many] = await tm.callMany([{ name, input }])
        expect(typeof many!.status).toBe('string')
      }
    }
    expect(JSON.stringify(records)).not.toContain('hunter2')
    expect(await tm.call('any', { fine: true }, { timeoutMs: 5000 })).toMatchObject({ status: 'ok' })
    expect(tm.metrics().tools.every((m) => m.in_flight === 0)).toBe(true)
  })

  it('executeWithOutcome with a name that is not a string reports a string tool', async () => {
    const tm = fresh()
    const out = await tm.executeWithOutcome(hostileName as never, {})
    expect(out.outcome).toMatchObject({ status: 'denied', tool: '<object>' })
    await expect(tm.execute(hostileName as never, {})).rejects.toMatchObject({ name: 'ToolCallError' })
  })

  it('confirm, resume, undo and cancel with hostile arguments never throw', async () => {
    const tm = fresh()
    tm.register({ name: 'c', inputSchema: { type: 'object' }, needsConfirmation: true, run: () => 1 })
    const asked = await tm.call('c', {})
    expect(asked.status).toBe('needs_confirmation')
    const confirmId = (asked as { confirmId: string }).confirmId
    const decision = Object.defineProperty({}, 'approve', { get: () => throwing('approve') })
    let p!: Promise<CallResult>
    expect(() => (p = tm.confirm(confirmId, decision as never))).not.toThrow()
    expect((await p).status).toMatch(/refused|error/)
    for (const id of [hostileName, revoked(), Symbol('x')]) {
      expect(() => (p = tm.confirm(id as never, { approve: true }))).not.toThrow()
      expect(await p).toMatchObject({ status: 'refused' })
      expect(() => (p = tm.resume(id as never, 1))).not.toThrow()
      expect(await p).toMatchObject({ status: 'refused' })
      expect(() => (p = tm.undo(id as never))).not.toThrow()
      expect(await p).toMatchObject({ status: 'refused' })
      expect(tm.cancel(id as never)).toBe(false)
    }
  })
})

describe('mixed hostile load', () => {
  it('2,000 mixed calls (hostile values, limits, timeouts, cancels, aborted signals) each settle exactly once; nothing leaks', async () => {
    const tm = new ToolManager()
    const limit = 3
    let running = 0
    let peak = 0
    const ends = new Map<string, number>()
    tm.on('call_end', (e) => ends.set(e.callId, (ends.get(e.callId) ?? 0) + 1))
    tm.on('error', (e) => void e.message)
    const names = Object.keys(HOSTILE)
    tm.register({
      name: 'h',
      inputSchema: { type: 'object' },
      concurrency: { limit, queue: 10_000 },
      run: (input: { n: number; fine?: true }) => {
        if (input.fine) return 'fine'
        running++
        peak = Math.max(peak, running)
        const mode = MODES[input.n % MODES.length]!
        const make = HOSTILE[names[input.n % names.length]!]!
        let out: unknown
        try {
          out = bodyOf(mode, make)()
        } catch (err) {
          running--
          throw err
        }
        if (mode === 'throw' || mode === 'return') {
          running--
          return out
        }
        return (out as Promise<unknown>).finally(() => running--)
      },
    })
    const aborted = AbortSignal.abort()
    const calls: Promise<CallResult>[] = []
    for (let n = 0; n < 2000; n++) {
      const options = { callId: `m${n}`, ...(n % 7 === 0 ? { timeoutMs: 1 } : {}), ...(n % 11 === 0 ? { signal: aborted } : {}) }
      calls.push(n % 13 === 0 ? tm.callMany([{ name: 'h', input: { n }, options }]).then((v) => v[0]!) : tm.call('h', { n }, options))
      if (n % 5 === 0) tm.cancel(`m${n - 2}`)
    }
    const views = await Promise.all(calls)
    expect(views).toHaveLength(2000)
    expect(views.every((v) => typeof v.status === 'string' && deepFrozen(v))).toBe(true)
    expect(ends.size).toBe(2000)
    expect([...ends.values()].every((count) => count === 1)).toBe(true)
    while (running > 0) await new Promise((r) => setImmediate(r))
    expect(peak).toBeLessThanOrEqual(limit)
    expect(tm.metrics().tools[0]!.in_flight).toBe(0)
    expect(await tm.call('h', { n: 0, fine: true }, { timeoutMs: 5000 })).toMatchObject({ status: 'ok', data: 'fine' })
  })

  it('undo with a hostile restore settles', async () => {
    const tm = new ToolManager()
    tm.on('error', (e) => void e.message)
    let k = 0
    const makers = Object.values(HOSTILE)
    tm.register({
      name: 'u',
      inputSchema: { type: 'object' },
      run: (_i, ctx: ToolContext) => {
        const make = makers[Math.floor(k / MODES.length) % makers.length]!
        const mode = MODES[k % MODES.length]!
        k++
        ctx.registerUndo(bodyOf(mode, make))
        return 'done'
      },
    })
    for (let i = 0; i < makers.length * MODES.length; i++) {
      const done = await tm.call('u', {})
      let p!: Promise<CallResult>
      expect(() => (p = tm.undo(done.callId!))).not.toThrow()
      expect(typeof (await p).status).toBe('string')
    }
  })
})

describe('cancel ids match exactly', () => {
  it("tm.cancel(prefix + '0x1') does not cancel prefix + '1'", async () => {
    const tm = new ToolManager()
    const release = gate()
    tm.register({ name: 't', inputSchema: { type: 'object' }, run: () => release.promise.then(() => 'done') })
    const p = tm.call('t', {})
    // the generated id of the first call; read it off the call_start of a second call
    const starts: string[] = []
    tm.on('call_start', (e) => starts.push(e.callId))
    const q = tm.call('t', {})
    const second = starts[0]!
    const prefix = second.slice(0, -1)
    expect(second.endsWith('2')).toBe(true)
    for (const alias of ['0x1', '1.0', '01', ' 1', '1 ', '+1', '1e0', '0b1', '0o1', '4097']) {
      expect(tm.cancel(prefix + alias), alias).toBe(false)
    }
    release.release()
    expect(await p).toMatchObject({ status: 'ok', callId: prefix + '1' })
    expect(await q).toMatchObject({ status: 'ok' })
  })

  it('a caller-chosen id is cancelled by exactly that id', async () => {
    const tm = new ToolManager()
    tm.register({ name: 't', inputSchema: { type: 'object' }, run: (_i, ctx: ToolContext) => new Promise((r) => ctx.signal.addEventListener('abort', () => r('stopped'))) })
    const p = tm.call('t', {}, { callId: 'job-7' })
    expect(tm.cancel('job-07')).toBe(false)
    expect(tm.cancel('job-7')).toBe(true)
    expect(await p).toMatchObject({ status: 'cancelled', by: 'operator' })
  })
})

describe('the concurrency limit bounds running bodies', () => {
  it('a timed-out or cancelled body holds its slot until it settles', async () => {
    const tm = new ToolManager()
    let running = 0
    let peak = 0
    const releases: (() => void)[] = []
    tm.register({
      name: 't',
      inputSchema: { type: 'object' },
      concurrency: { limit: 2, queue: 100 },
      // a body that ignores its signal and runs until the test releases it
      run: () => {
        running++
        peak = Math.max(peak, running)
        return new Promise<string>((resolve) => {
          releases.push(() => {
            running--
            resolve('done')
          })
        })
      },
    })
    const first = tm.call('t', {}, { callId: 'a' })
    const second = tm.call('t', {}, { callId: 'b', timeoutMs: 1 })
    expect(running).toBe(2)
    expect(tm.cancel('a')).toBe(true)
    expect(await first).toMatchObject({ status: 'cancelled' })
    expect(await second).toMatchObject({ status: 'error', kind: 'timeout' })
    // both bodies still run: new calls wait in the queue
    const third = tm.call('t', {}, { callId: 'c' })
    const fourth = tm.call('t', {}, { callId: 'd' })
    await Promise.resolve()
    expect(running).toBe(2)
    expect(releases).toHaveLength(2)
    releases[0]!()
    // the first body settled: one queued call starts
    await new Promise((r) => setImmediate(r))
    expect(running).toBe(2)
    expect(releases).toHaveLength(3)
    releases[1]!()
    await new Promise((r) => setImmediate(r))
    expect(releases).toHaveLength(4)
    releases[2]!()
    releases[3]!()
    expect(await third).toMatchObject({ status: 'ok' })
    expect(await fourth).toMatchObject({ status: 'ok' })
    expect(peak).toBe(2)
    expect(tm.metrics().tools[0]!.in_flight).toBe(0)
  })

  it('under many timeouts and cancels, running bodies never exceed the limit', async () => {
    const tm = new ToolManager()
    const limit = 5
    let running = 0
    let peak = 0
    tm.register({
      name: 't',
      inputSchema: { type: 'object' },
      concurrency: { limit, queue: 10_000 },
      run: (input: { n: number }) => {
        running++
        peak = Math.max(peak, running)
        // ignores the signal; settles a few macrotasks later
        return new Promise((resolve) => {
          let ticks = input.n % 4
          const step = (): void => {
            if (ticks-- > 0) setImmediate(step)
            else {
              running--
              resolve(input.n)
            }
          }
          setImmediate(step)
        })
      },
    })
    const calls: Promise<CallResult>[] = []
    for (let n = 0; n < 300; n++) {
      calls.push(tm.call('t', { n }, { callId: `c${n}`, ...(n % 3 === 0 ? { timeoutMs: 1 } : {}) }))
      if (n % 5 === 0) tm.cancel(`c${n - 1}`)
    }
    const views = await Promise.all(calls)
    expect(views).toHaveLength(300)
    // let the last abandoned bodies finish
    while (running > 0) await new Promise((r) => setImmediate(r))
    expect(peak).toBeLessThanOrEqual(limit)
    expect(tm.metrics().tools[0]!.in_flight).toBe(0)
  })
})

describe('redaction', () => {
  class Credentials {
    constructor(private readonly secret: string) {}
    toJSON() {
      return { user: 'ann', password: this.secret, nested: { 'cc-number': this.secret, token: this.secret } }
    }
  }

  it("the default confirmation summary and the evidence use the input's JSON form, redacted", async () => {
    const records: EvidenceRecord[] = []
    const evidence: EvidenceStore = {
      append: (r) => void records.push(r),
      readAll: async () => records,
    }
    const tm = new ToolManager({ evidence })
    tm.register({ name: 'login', inputSchema: { type: 'object' }, needsConfirmation: true, sensitive: ['token'], run: () => 'in' })
    const input = { creds: new Credentials('hunter2-SECRET'), when: new Date(0) }
    const asked = await tm.call('login', input)
    expect(asked.status).toBe('needs_confirmation')
    const summary = (asked as { summary: string }).summary
    expect(summary).not.toContain('hunter2')
    expect(summary).toContain('"user":"ann"')
    expect(summary).toContain(`"password":"${REDACTED}"`)
    expect(summary).toContain('1970-01-01T00:00:00.000Z')
    const done = await tm.confirm((asked as { confirmId: string }).confirmId, { approve: true })
    expect(done).toMatchObject({ status: 'ok' })
    expect(records).toHaveLength(1)
    const text = JSON.stringify(records)
    expect(text).not.toContain('hunter2')
    expect(records[0]!.input).toEqual({
      creds: { user: 'ann', password: REDACTED, nested: { 'cc-number': REDACTED, token: REDACTED } },
      when: '1970-01-01T00:00:00.000Z',
    })
  })

  it('an input whose JSON form throws or cycles gives a redacted summary, not a leak or a crash', async () => {
    const tm = new ToolManager()
    tm.register({ name: 't', inputSchema: {}, needsConfirmation: true, run: () => 1 })
    const cyclic: Record<string, unknown> = { password: 'hunter2' }
    cyclic.self = cyclic
    for (const input of [cyclic, { a: 1n, password: 'hunter2' }, { toJSON: () => throwing('toJSON') }]) {
      const view = await tm.call('t', input)
      expect(JSON.stringify(view)).not.toContain('hunter2')
      expect(typeof view.status).toBe('string')
    }
  })

  it('previewChanges output is redacted: a path naming a sensitive field (any segment) shows [redacted]', async () => {
    const tm = new ToolManager()
    tm.register({
      name: 'account',
      inputSchema: { type: 'object' },
      needsConfirmation: true,
      sensitive: ['apiKey'],
      previewChanges: () => [
        { path: '/password', before: 'old-SECRET', after: 'new-SECRET' },
        { path: '/user/Password', after: 'new-SECRET' },
        { path: '/billing/cc-number', before: '4111-SECRET' },
        { path: '/keys/apiKey', before: 'k-SECRET', after: 'k2-SECRET' },
        { path: 'user.password', after: 'x-SECRET' },
        { path: '/cards/0/cc-number', after: 'y-SECRET' },
        { path: '/profile', before: { name: 'ann', password: 'p-SECRET' }, after: { name: 'bob', apiKey: 'q-SECRET' } },
        { path: '/theme', before: 'light', after: 'dark' },
      ],
      run: () => 1,
    })
    const view = await tm.call('account', {})
    expect(view.status).toBe('needs_confirmation')
    expect(JSON.stringify(view)).not.toContain('SECRET')
    const changes = (view as { changes: unknown }).changes
    expect(changes).toEqual([
      { path: '/password', before: REDACTED, after: REDACTED },
      { path: '/user/Password', after: REDACTED },
      { path: '/billing/cc-number', before: REDACTED },
      { path: '/keys/apiKey', before: REDACTED, after: REDACTED },
      { path: 'user.password', after: REDACTED },
      { path: '/cards/0/cc-number', after: REDACTED },
      { path: '/profile', before: { name: 'ann', password: REDACTED }, after: { name: 'bob', apiKey: REDACTED } },
      { path: '/theme', before: 'light', after: 'dark' },
    ])
    expect(deepFrozen(view)).toBe(true)
  })

  it('a pending confirmation a tool returns has its changes redacted too', async () => {
    const tm = new ToolManager()
    tm.register({
      name: 't',
      inputSchema: { type: 'object' },
      run: () => ({
        output: 'Waiting',
        isError: true,
        metadata: { pending: { id: 'p1', kind: 'confirmation', summary: 'Change it', changes: [{ path: '/password', before: 'a-SECRET', after: 'b-SECRET' }] } },
      }),
    })
    const view = await tm.call('t', {})
    expect(view.status).toBe('needs_confirmation')
    expect(JSON.stringify(view)).not.toContain('SECRET')
    expect((view as { changes: unknown }).changes).toEqual([{ path: '/password', before: REDACTED, after: REDACTED }])
  })
})

describe('progress', () => {
  it('only a finite number and a string message reach progress listeners', async () => {
    const tm = new ToolManager()
    const events: ToolEvents['progress'][] = []
    tm.on('progress', (e) => events.push(e))
    tm.register({
      name: 't',
      inputSchema: { type: 'object' },
      run: (_input, ctx: ToolContext) => {
        const { proxy, revoke } = Proxy.revocable({}, {})
        revoke()
        ctx.reportProgress(proxy as never)
        ctx.reportProgress(1n as never)
        ctx.reportProgress(Number.NaN)
        ctx.reportProgress(1, proxy as never, proxy as never)
        ctx.reportProgress(2, 4, 'half')
        return 'done'
      },
    })
    expect(await tm.call('t', {})).toMatchObject({ status: 'ok' })
    expect(events.map(({ progress, total, message }) => ({ progress, total, message }))).toEqual([
      { progress: 1, total: undefined, message: undefined },
      { progress: 2, total: 4, message: 'half' },
    ])
    expect(events.every((e) => !('total' in e) || typeof e.total === 'number')).toBe(true)
  })
})

describe('argument text', () => {
  it('invalid JSON arguments never quote the text back', async () => {
    const tm = new ToolManager()
    tm.register({ name: 't', inputSchema: { type: 'object' }, run: () => 1 })
    for (const text of ['{"password": hunter2-SECRET}', 'hunter2-SECRET', '{"a":"hunter2-SECRET"', '{"a":1}hunter2-SECRET', '']) {
      const view = await tm.callJson('t', text)
      expect(view.status).toBe('invalid')
      expect(JSON.stringify(view)).not.toContain('SECRET')
      expect(JSON.stringify(view)).not.toContain('hunter2')
      const [many] = await tm.callMany([{ name: 't', args: text }])
      expect(JSON.stringify(many)).not.toContain('hunter2')
    }
    const view = await tm.callJson('t', '{"a": x}')
    expect(view).toMatchObject({ status: 'invalid', issues: [{ path: '', message: expect.stringMatching(/^The arguments are not valid JSON/) }] })
  })
})

describe('form tool preview', () => {
  it('hands out a deep frozen copy: mutating the view cannot change the store', async () => {
    const store: Record<string, unknown> = { address: { city: 'Oslo', zip: '0150' }, tags: ['a'] }
    const tool = createFormTool({
      name: 'profile',
      fields: { type: 'object', properties: { address: { type: 'object' }, tags: { type: 'array' } } },
      read: () => store as never,
      write: (values) => {
        for (const k of Object.keys(store)) delete store[k]
        Object.assign(store, values)
      },
    })
    const tm = new ToolManager()
    tm.register({ ...tool, needsConfirmation: true })
    const input = { address: { city: 'Bergen', zip: '5003' }, tags: ['b'] }
    const view = await tm.call('profile', input)
    if (view.status !== 'needs_confirmation') throw new Error(`expected needs_confirmation, got ${JSON.stringify(view)}`)
    expect(view.changes).toBeDefined()
    const changes = view.changes!
    expect(deepFrozen(changes)).toBe(true)
    const before = changes[0]!.before as { city: string }
    expect(() => {
      ;(before as { city: string }).city = 'Hacked'
    }).toThrow()
    expect(store.address).toEqual({ city: 'Oslo', zip: '0150' })
    // the preview does not alias the caller's input either
    const preview = await tool.previewChanges!(input)
    expect(deepFrozen(preview)).toBe(true)
    expect(preview[0]!.after).not.toBe(input.address)
    expect(preview[0]!.before).not.toBe(store.address)
    // and a fill stores copies: mutating the input afterwards does not reach the store
    const filled = await tm.confirm((view as { confirmId: string }).confirmId, { approve: true })
    expect(filled.status).toBe('ok')
    input.address.city = 'Changed later'
    expect(store.address).toEqual({ city: 'Bergen', zip: '5003' })
  })
})

describe('in a process (dist/, subprocesses): hostile tools do not end the process', () => {
  const fixtures = join(import.meta.dirname, 'fixtures', 'hostile')
  const toolModule = join(fixtures, 'tools.mjs')
  const modes = ['throw', 'return', 'reject', 'resolve']
  const values = ['kind_getter', 'proxy', 'revoked', 'output_getter', 'is_error_getter', 'then_getter', 'null_proto', 'message_getter', 'stack_getter', 'resolves_and_rejects', 'symbol']

  beforeAll(() => ensureBuilt(), 200_000)

  interface Run {
    code: number | null
    signal: NodeJS.Signals | null
    out: string
    err: string
  }
  const run = (args: string[], env: NodeJS.ProcessEnv = {}): Promise<Run> =>
    new Promise((resolve) => {
      const child = execFile(process.execPath, args, { encoding: 'utf8', timeout: 30_000, env: { ...process.env, ...env } }, (_err, out, err) =>
        resolve({ code: child.exitCode, signal: child.signalCode, out, err }),
      )
    })

  for (const listener of [false, true]) {
    it(`a manager in a plain node process settles every hostile call${listener ? ' (with an error listener)' : ''}; no rejection ends it`, async () => {
      const r = await run([join(fixtures, 'manager.mjs'), ...(listener ? ['--error-listener'] : [])])
      expect(withoutWasiWarning(r.err)).toBe('')
      expect(r.code).toBe(0)
      const summary = JSON.parse(r.out) as { tools: number; settled: number; recovered: number; statuses: Record<string, number>; inFlight: number }
      expect(summary.tools).toBe(modes.length * values.length)
      expect(summary.settled).toBe(summary.tools * 4 + 4)
      expect(summary.recovered).toBe(summary.tools)
      expect(summary.inFlight).toBe(0)
    }, 60_000)
  }

  it('toolwire call survives each hostile tool: a JSON view and the exit code of its status', async () => {
    // every value as a rejection (what used to end the process), and the sync variants of a few;
    // manager.mjs and the serve test run every value in every mode
    const names = [...values.map((v) => `reject_${v}`), 'throw_revoked', 'return_proxy', 'resolve_then_getter']
    const runs: Run[] = []
    // a few at a time: each run is a node process
    for (let i = 0; i < names.length; i += 6) {
      runs.push(...(await Promise.all(names.slice(i, i + 6).map((name) => run([cli, 'call', name, '--module', toolModule])))))
    }
    runs.forEach((r, i) => {
      const name = names[i]!
      expect(r.signal, name).toBe(null)
      const view = JSON.parse(r.out) as CallResult
      expect([0, 1, 2, 3], name).toContain(r.code)
      if (name.startsWith('throw_') || name.startsWith('reject_')) expect(view.status, name).toBe('error')
      expect(r.out, name).not.toContain('hostile')
    })
  }, 180_000)

  it('toolwire call: a never-settling thenable ends with --timeout; a throwing abort listener and a stray rejection of the tool are not fatal', async () => {
    const [never, floating, debug] = await Promise.all([
      run([cli, 'call', 'never', '--module', toolModule, '--timeout', '50']),
      run([cli, 'call', 'floating', '--module', toolModule]),
      run([cli, 'call', 'floating', '--module', toolModule], { TOOLWIRE_DEBUG: '1' }),
    ])
    const listener = await run([cli, 'call', 'abort_listener_throws', '--module', toolModule, '--timeout', '50'])
    expect(listener.signal).toBe(null)
    expect(listener.code).toBe(1)
    expect(JSON.parse(listener.out)).toMatchObject({ status: 'error', kind: 'timeout' })
    expect(never.code).toBe(1)
    expect(JSON.parse(never.out)).toMatchObject({ status: 'error', kind: 'timeout' })
    expect(floating.code).toBe(0)
    expect(JSON.parse(floating.out)).toMatchObject({ status: 'ok', data: 'done' })
    expect(floating.err).toContain('ignored a promise rejection')
    expect(floating.err).not.toContain('a rejection the tool never handles')
    expect(debug.err).toContain('a rejection the tool never handles')
  }, 60_000)

  it('toolwire serve answers every hostile tools/call and keeps serving', async () => {
    const child = spawn(process.execPath, [cli, 'serve', toolModule], { stdio: 'pipe' })
    const frames: { id?: number; result?: { isError?: boolean; structuredContent?: unknown } }[] = []
    createInterface({ input: child.stdout }).on('line', (line) => frames.push(JSON.parse(line)))
    const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
    const send = (msg: unknown): void => void child.stdin.write(JSON.stringify(msg) + '\n')
    send({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } })
    send({ jsonrpc: '2.0', method: 'notifications/initialized' })
    const names = [...modes.flatMap((m) => values.map((v) => `${m}_${v}`)), 'floating']
    names.forEach((name, i) => send({ jsonrpc: '2.0', id: i + 1, method: 'tools/call', params: { name, arguments: {} } }))
    const last = names.length + 1
    send({ jsonrpc: '2.0', id: last, method: 'tools/call', params: { name: 'echo', arguments: { still: 'serving' } } })
    await until(() => frames.some((f) => f.id === last), 30_000)
    child.stdin.end()
    expect(await exit).toBe(0)
    for (let id = 1; id <= names.length; id++) expect(frames.find((f) => f.id === id), names[id - 1]).toHaveProperty('result')
    expect(frames.find((f) => f.id === last)).toMatchObject({ result: { isError: false, structuredContent: { still: 'serving' } } })
  }, 60_000)
})
