/**
 * A store that stops answering never hangs a manager (docs/store.md, "A store that stops
 * answering"): a call's wait for its store writes is bounded by its own timeout when it has one
 * (else STORE_WAIT_MS), and `tm.confirm`, `tm.resume`, `tm.undo`, `tm.undoable` and
 * `tm.recover` answer a typed `store_unavailable` after STORE_WAIT_MS. Fake timers: no sleeping.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { ToolManager, type ToolContext, type ToolEvents } from '../src/runtime/manager.js'
import { STORE_WAIT_MS } from '../src/runtime/call.js'
import { pending } from '../src/core/helpers.js'
import type { CallResult } from '../src/core/view.js'
import { MemoryStore, StoreUnavailableError, type ToolStore } from '../src/runtime/store/index.js'

/** A memory store whose methods named in `hung` never answer (a dead connection). */
function hangingStore(): { store: ToolStore; hung: Set<string> } {
  const inner = new MemoryStore()
  const hung = new Set<string>()
  const store = new Proxy(inner, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown
      if (typeof value !== 'function') return value
      return (...args: unknown[]) => (hung.has(String(prop)) || hung.has('*') ? new Promise(() => {}) : (value as (...a: unknown[]) => unknown).apply(target, args))
    },
  }) as ToolStore
  return { store, hung }
}

function tools(tm: ToolManager): ToolManager {
  tm.register({ name: 'send', inputSchema: { type: 'object' }, run: () => ({ sent: true }) })
  tm.register({ name: 'pay', inputSchema: { type: 'object' }, needsConfirmation: true, run: () => ({ paid: true }) })
  tm.register({ name: 'ask', inputSchema: { type: 'object' }, run: () => pending({ id: 'req-1', kind: 'input' }), resume: () => ({ ok: true }) })
  tm.register({
    name: 'rename',
    inputSchema: { type: 'object' },
    run: (_i: unknown, ctx: ToolContext) => {
      ctx.registerUndo({ back: true })
      return { renamed: true }
    },
    undo: () => ({ restored: true }),
  })
  return tm
}

/** Whether `p` settled after the fake clock moved `ms`. */
async function settledWithin<T>(p: Promise<T>, ms: number): Promise<{ done: boolean; value?: T; error?: unknown }> {
  const state: { done: boolean; value?: T; error?: unknown } = { done: false }
  p.then(
    (value) => Object.assign(state, { done: true, value }),
    (error: unknown) => Object.assign(state, { done: true, error }),
  )
  await vi.advanceTimersByTimeAsync(ms)
  return state
}

describe('a store that stops answering', () => {
  beforeEach(() => {
    vi.useFakeTimers()
  })
  afterEach(() => {
    vi.useRealTimers()
  })

  it('a call with a 300 ms timeout whose ledger write hangs is answered within its timeout, not after STORE_WAIT_MS', async () => {
    const { store, hung } = hangingStore()
    const tm = tools(new ToolManager({ store, evidence: { append: () => {}, readAll: async () => [] } }))
    const errors: ToolEvents['error'][] = []
    tm.on('error', (e) => errors.push(e))
    hung.add('settle')
    const call = tm.call('send', {}, { timeoutMs: 300 })
    const before = await settledWithin(call, 299)
    expect(before.done).toBe(false)
    const after = await settledWithin(call, 2)
    expect(after.done).toBe(true)
    expect((after.value as CallResult).status).toBe('ok')
    expect(errors.some((e) => /did not answer within 300 ms/.test(e.message))).toBe(true)
  })

  it('a call without a timeout waits STORE_WAIT_MS at most', async () => {
    const { store, hung } = hangingStore()
    const tm = tools(new ToolManager({ store, evidence: { append: () => {}, readAll: async () => [] } }))
    tm.on('error', () => {})
    hung.add('settle')
    const call = tm.call('send', {})
    expect((await settledWithin(call, STORE_WAIT_MS - 1)).done).toBe(false)
    expect((await settledWithin(call, 2)).done).toBe(true)
  })

  for (const [what, act] of [
    ['tm.confirm', async (tm: ToolManager, other: ToolManager, hung: Set<string>) => {
      const v = await tm.call('pay', {})
      hung.add('*')
      return other.confirm(v.status === 'needs_confirmation' ? v.confirmId : '', { approve: true })
    }],
    ['tm.confirm (a denial)', async (tm: ToolManager, other: ToolManager, hung: Set<string>) => {
      const v = await tm.call('pay', {})
      hung.add('*')
      return other.confirm(v.status === 'needs_confirmation' ? v.confirmId : '', { approve: false })
    }],
    ['tm.resume', async (tm: ToolManager, other: ToolManager, hung: Set<string>) => {
      await tm.call('ask', {})
      hung.add('*')
      return other.resume('req-1', 'yes')
    }],
    ['tm.undo', async (tm: ToolManager, other: ToolManager, hung: Set<string>) => {
      const v = await tm.call('rename', {})
      hung.add('*')
      return other.undo(v.callId!)
    }],
  ] as const) {
    it(`${what} answers refused store_unavailable after STORE_WAIT_MS, never hangs`, async () => {
      const { store, hung } = hangingStore()
      // another instance answers: the answering manager has no local copy of the parked call
      const parker = tools(new ToolManager({ store }))
      const answerer = tools(new ToolManager({ store }))
      answerer.on('error', () => {})
      parker.on('error', () => {})
      const p = act(parker, answerer, hung)
      const before = await settledWithin(p, STORE_WAIT_MS - 1)
      expect(before.done).toBe(false)
      const after = await settledWithin(p, 2)
      expect(after.done).toBe(true)
      expect(after.value).toMatchObject({ status: 'refused', code: 'store_unavailable' })
    })
  }

  it('tm.recover and tm.undoable reject with a StoreUnavailableError after STORE_WAIT_MS', async () => {
    const { store, hung } = hangingStore()
    const tm = tools(new ToolManager({ store }))
    tm.on('error', () => {})
    hung.add('*')
    const recovered = await settledWithin(tm.recover(), 2 * STORE_WAIT_MS + 1)
    expect(recovered.error).toBeInstanceOf(StoreUnavailableError)
    const undoable = await settledWithin(tm.undoable('c1'), STORE_WAIT_MS + 1)
    expect(undoable.error).toBeInstanceOf(StoreUnavailableError)
  })
})
