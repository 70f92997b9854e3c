/**
 * What an idempotency key answers after a run that did not succeed (issue #15, found by a
 * new-user trial), on every store kind of test/stores.ts (memory, SQLite, PostgreSQL):
 * - a retryable failure of a tool marked `hints.idempotent` frees the key (a retry with it runs
 *   again, and its success is then replayed); with the tool's own `retry`, the ledger sees the
 *   last attempt;
 * - a retryable failure of a tool not marked idempotent, and a non-retryable failure, are
 *   settled and replayed: the tool is not run again (it may have done its effect before failing);
 * - a call that timed out or was cancelled while its body ran is `outcome_unknown` for a retry
 *   with its key, with a text that says so (not the crash text), on this manager and on another
 *   one on the same store; the body is not run again;
 * - a run whose process stopped (its lease ran out) keeps the crash text.
 */
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest'
import { ToolManager, type ToolContext } from '../src/runtime/manager.js'
import { STORE_TEXTS } from '../src/core/texts.js'
import { canonicalOf, type CallResult } from '../src/core/view.js'
import type { ToolStore } from '../src/runtime/store/index.js'
import { storeKinds, storePair, type StoreKind } from './stores.js'

const kinds = await storeKinds('idem_semantics')
const stores: ToolStore[] = []

afterAll(async () => {
  for (const s of stores) await s.close().catch(() => undefined)
})

afterEach(() => {
  vi.useRealTimers()
})

const anyObject = { type: 'object' } as const

/** Two handles on one store's state (two managers, or one app before and after a restart). */
const pair = (kind: StoreKind): ReturnType<typeof storePair> => storePair(kind, stores)

/** What a thrown error of kind `network` carries. */
function networkError(retryable: boolean): Error {
  return Object.assign(new Error('connection reset'), { kind: 'network', retryable })
}

/** The error behind a view made here (its code and retryability are not in the view). */
function errorOf(view: CallResult): { code?: string; retryable?: boolean; message?: string } {
  return canonicalOf(view)?.error() ?? {}
}

/**
 * A tool whose body enters, reports it, and then ignores its signal until `finish()`: the call
 * settles (timed out, cancelled) while the body still runs.
 */
function stubborn() {
  let entered!: () => void
  const inBody = new Promise<void>((resolve) => (entered = resolve))
  let finish!: () => void
  const gate = new Promise<void>((resolve) => (finish = resolve))
  let runs = 0
  const def = {
    name: 'ship',
    inputSchema: anyObject,
    timeoutMs: 200,
    run: async () => {
      runs++
      entered()
      await gate
      return { shipped: true }
    },
  }
  return { def, inBody, finish, runs: () => runs }
}

for (const kind of kinds) {
  describe(`idempotency keys after an unsuccessful run (${kind.name} store)`, () => {
    it.skipIf(kind.skip)("an idempotent tool's retryable failure frees the key: the retry runs again, and its success is then replayed", async () => {
      const { a, b } = await pair(kind)
      const tm = new ToolManager({ store: a })
      let runs = 0
      tm.register({
        name: 'sync',
        inputSchema: anyObject,
        hints: { idempotent: true },
        run: () => {
          runs++
          if (runs === 1) throw networkError(true)
          return { synced: runs }
        },
      })
      const first = await tm.call('sync', { id: 1 }, { idempotencyKey: 's-1' })
      expect(first).toMatchObject({ status: 'error', kind: 'network' })
      expect(errorOf(first).retryable).toBe(true)
      expect(first).not.toHaveProperty('replayed')
      const second = await tm.call('sync', { id: 1 }, { idempotencyKey: 's-1' })
      expect(second).toMatchObject({ status: 'ok', data: { synced: 2 } })
      expect(runs).toBe(2)
      // the success is settled: replayed here and on another manager on the same store
      expect(await tm.call('sync', { id: 1 }, { idempotencyKey: 's-1' })).toMatchObject({ status: 'ok', data: { synced: 2 }, replayed: true })
      const other = new ToolManager({ store: b })
      other.register({ name: 'sync', inputSchema: anyObject, run: () => ({ synced: ++runs }) })
      expect(await other.call('sync', { id: 1 }, { idempotencyKey: 's-1' })).toMatchObject({ status: 'ok', data: { synced: 2 }, replayed: true })
      expect(runs).toBe(2)
    })

    it.skipIf(kind.skip)('a retryable failure of a tool not marked idempotent is final for its key: replayed, never run again', async () => {
      const { a, b } = await pair(kind)
      const tm = new ToolManager({ store: a })
      let runs = 0
      // the charge went out, then the connection dropped before the answer: running it again could charge twice
      const charge = (): never => {
        runs++
        throw networkError(true)
      }
      tm.register({ name: 'charge', inputSchema: anyObject, run: charge })
      const first = await tm.call('charge', { cents: 5 }, { idempotencyKey: 'c-1' })
      expect(first).toMatchObject({ status: 'error', kind: 'network' })
      expect(errorOf(first).retryable).toBe(true)
      expect(await tm.call('charge', { cents: 5 }, { idempotencyKey: 'c-1' })).toMatchObject({ status: 'error', kind: 'network', replayed: true })
      const other = new ToolManager({ store: b })
      other.register({ name: 'charge', inputSchema: anyObject, run: charge })
      expect(await other.call('charge', { cents: 5 }, { idempotencyKey: 'c-1' })).toMatchObject({ status: 'error', kind: 'network', replayed: true })
      expect(runs).toBe(1)
    })

    it.skipIf(kind.skip)("with the tool's own retries, the ledger sees only the last attempt", async () => {
      const { a } = await pair(kind)
      const tm = new ToolManager({ store: a })
      let attempts = 0
      const seen: number[] = []
      // fails twice, then succeeds: one call, three attempts, one settled key
      tm.register({
        name: 'flaky',
        inputSchema: anyObject,
        hints: { idempotent: true },
        retry: { attempts: 3, baseMs: 0 },
        run: (_input: unknown, ctx: ToolContext) => {
          attempts++
          seen.push(ctx.attempt)
          if (ctx.attempt < 3) throw networkError(true)
          return { attempts }
        },
      })
      expect(await tm.call('flaky', {}, { idempotencyKey: 'f-1' })).toMatchObject({ status: 'ok', data: { attempts: 3 } })
      expect(await tm.call('flaky', {}, { idempotencyKey: 'f-1' })).toMatchObject({ status: 'ok', data: { attempts: 3 }, replayed: true })
      expect(attempts).toBe(3)
      expect(seen).toEqual([1, 2, 3])

      // every attempt fails retryably: the key is freed, the next call with it tries again
      let down = 0
      tm.register({
        name: 'down',
        inputSchema: anyObject,
        hints: { idempotent: true },
        retry: { attempts: 2, baseMs: 0 },
        run: () => {
          down++
          throw networkError(true)
        },
      })
      const failed = await tm.call('down', {}, { idempotencyKey: 'd-1' })
      expect(failed).toMatchObject({ status: 'error', kind: 'network' })
      expect(errorOf(failed).retryable).toBe(true)
      expect(down).toBe(2)
      const again = await tm.call('down', {}, { idempotencyKey: 'd-1' })
      expect(again).toMatchObject({ status: 'error', kind: 'network' })
      expect(again).not.toHaveProperty('replayed')
      expect(down).toBe(4)
    })

    it.skipIf(kind.skip)('a non-retryable failure is settled: replayed, and the tool is not run again', async () => {
      const { a, b } = await pair(kind)
      const tm = new ToolManager({ store: a })
      let runs = 0
      tm.register({
        name: 'charge',
        inputSchema: anyObject,
        run: (input: { plain?: boolean }) => {
          runs++
          throw input.plain === true ? new Error('declined') : networkError(false)
        },
      })
      const first = await tm.call('charge', {}, { idempotencyKey: 'c-1' })
      expect(first).toMatchObject({ status: 'error', kind: 'network' })
      expect(errorOf(first).retryable).toBe(false)
      expect(await tm.call('charge', {}, { idempotencyKey: 'c-1' })).toMatchObject({ status: 'error', kind: 'network', replayed: true })
      // a plain Error is kind `other`, not retryable
      const plain = await tm.call('charge', { plain: true }, { idempotencyKey: 'c-2' })
      expect(plain).toMatchObject({ status: 'error', kind: 'other' })
      expect(errorOf(plain).retryable).toBe(false)
      const other = new ToolManager({ store: b })
      other.register({ name: 'charge', inputSchema: anyObject, run: () => ++runs })
      expect(await other.call('charge', { plain: true }, { idempotencyKey: 'c-2' })).toMatchObject({ status: 'error', kind: 'other', replayed: true })
      expect(runs).toBe(2)
    })

    it.skipIf(kind.skip)('a call that timed out while its body ran: a retry with its key is outcome_unknown saying so, here and on another manager', async () => {
      const { a, b } = await pair(kind)
      const tool = stubborn()
      const tm = new ToolManager({ store: a })
      tm.register(tool.def)
      // the timeout fires when the test says, once the body has started (not on a loaded machine's schedule)
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
      const first = tm.call('ship', { order: 7 }, { idempotencyKey: 's-1' })
      await tool.inBody
      vi.advanceTimersByTime(200)
      vi.useRealTimers()
      expect(await first).toMatchObject({ status: 'error', kind: 'timeout' })

      const retry = await tm.call('ship', { order: 7 }, { idempotencyKey: 's-1' })
      expect(retry).toMatchObject({ status: 'error', kind: 'other', message: STORE_TEXTS.outcomeUnknownTimedOut })
      expect(errorOf(retry)).toMatchObject({ code: 'outcome_unknown', retryable: false })
      expect(errorOf(retry).message).toMatch(/timed out while the action was still running/)
      expect(errorOf(retry).message).not.toMatch(/process stopped/)
      const other = new ToolManager({ store: b })
      other.register({ ...tool.def, run: async () => ({ shipped: 'again' }) })
      const elsewhere = await other.call('ship', { order: 7 }, { idempotencyKey: 's-1' })
      expect(elsewhere).toMatchObject({ status: 'error', message: STORE_TEXTS.outcomeUnknownTimedOut })
      expect(errorOf(elsewhere).code).toBe('outcome_unknown')
      // the body finishing late changes nothing: the key stays unknown
      tool.finish()
      const late = await tm.call('ship', { order: 7 }, { idempotencyKey: 's-1' })
      expect(late).toMatchObject({ status: 'error', message: STORE_TEXTS.outcomeUnknownTimedOut })
      expect(errorOf(late).code).toBe('outcome_unknown')
      expect(tool.runs()).toBe(1)
    })

    it.skipIf(kind.skip)('a call cancelled by its signal while its body ran: a retry with its key is outcome_unknown saying so, here and on another manager', async () => {
      const { a, b } = await pair(kind)
      const tool = stubborn()
      const tm = new ToolManager({ store: a })
      tm.register({ ...tool.def, timeoutMs: undefined })
      const controller = new AbortController()
      const first = tm.call('ship', { order: 8 }, { idempotencyKey: 'x-1', signal: controller.signal })
      await tool.inBody
      controller.abort()
      expect(await first).toMatchObject({ status: 'cancelled', by: 'signal' })

      const retry = await tm.call('ship', { order: 8 }, { idempotencyKey: 'x-1' })
      expect(retry).toMatchObject({ status: 'error', kind: 'other', message: STORE_TEXTS.outcomeUnknownCancelled })
      expect(errorOf(retry).code).toBe('outcome_unknown')
      expect(errorOf(retry).message).not.toMatch(/process stopped/)
      const other = new ToolManager({ store: b })
      other.register({ ...tool.def, timeoutMs: undefined, run: async () => ({ shipped: 'again' }) })
      const elsewhere = await other.call('ship', { order: 8 }, { idempotencyKey: 'x-1' })
      expect(elsewhere).toMatchObject({ status: 'error', message: STORE_TEXTS.outcomeUnknownCancelled })
      expect(errorOf(elsewhere).code).toBe('outcome_unknown')
      tool.finish()
      expect(tool.runs()).toBe(1)
    })

    it.skipIf(kind.skip)('a run whose process stopped (its lease ran out) keeps the crash text', async () => {
      const { a, b, clock } = await pair(kind)
      const tool = stubborn()
      const tm = new ToolManager({ store: a, leaseMs: 60_000 })
      const other = new ToolManager({ store: b, leaseMs: 60_000 })
      // each manager's own first sweep is done before the clock moves
      await Promise.all([tm.recover(), other.recover()])
      tm.register({ ...tool.def, timeoutMs: undefined })
      other.register({ ...tool.def, timeoutMs: undefined, run: async () => ({ shipped: 'again' }) })
      void tm.call('ship', { order: 9 }, { idempotencyKey: 'k-1' })
      await tool.inBody
      clock.t += 61_000
      const retry = await other.call('ship', { order: 9 }, { idempotencyKey: 'k-1' })
      expect(retry).toMatchObject({ status: 'error', message: STORE_TEXTS.outcomeUnknown })
      expect(errorOf(retry).code).toBe('outcome_unknown')
      expect(errorOf(retry).message).toMatch(/process stopped/)
      tool.finish()
      expect(tool.runs()).toBe(1)
    })
  })
}
