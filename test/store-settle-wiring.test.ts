/**
 * The combined settlement stage (pipeline.ts: `ledgerEndWithEvidence`): a non-idempotent call on a
 * store that is also the evidence store settles its ledger key and writes its evidence in one
 * commit (settleWithEvidence), with what the two stages left; a store of the app's own without it
 * gets the two calls.
 */
import { describe, expect, it } from 'vitest'
import { ToolManager, type ToolEvents } from '../src/runtime/manager.js'
import { MemoryStore, type ToolStore } from '../src/runtime/store/index.js'
import { storeKinds, withStores } from './stores.js'

const impls = await storeKinds('wiring')

/** A manager on `store` with a tool not marked idempotent, and the errors it reported. */
function manager(store: ToolStore) {
  const tm = new ToolManager({ development: false, store })
  tm.register({ name: 'pay', inputSchema: { type: 'object' }, run: async () => ({ paid: true }) })
  const errors: ToolEvents['error'][] = []
  const evidenceErrors: ToolEvents['evidence_error'][] = []
  tm.on('error', (e) => errors.push(e))
  tm.on('evidence_error', (e) => evidenceErrors.push(e))
  return { tm, errors, evidenceErrors }
}

for (const impl of impls) {
  describe.skipIf(impl.skip)(`${impl.name} store: a non-idempotent call settles in one commit`, () => {
    it('writes its settlement and its record through settleWithEvidence, and nothing else', async () => {
      await withStores(impl, async (open) => {
        const store = await open()
        const used: string[] = []
        for (const m of ['settle', 'appendEvidence', 'settleWithEvidence'] as const) {
          const f = (store as unknown as Record<string, (...a: unknown[]) => unknown>)[m]!.bind(store)
          ;(store as unknown as Record<string, unknown>)[m] = (...a: unknown[]) => (used.push(m), f(...a))
        }
        const { tm, errors } = manager(store)
        const view = await tm.call('pay', {})
        expect(view).toMatchObject({ status: 'ok', data: { paid: true } })
        expect(used).toEqual(['settleWithEvidence'])
        expect(await store.readEvidence()).toMatchObject([{ callId: view.callId, tool: 'pay' }])
        expect(errors).toEqual([])
      })
    })

    if (impl.durable) {
      it('a failed write leaves neither, and is reported as both (error and evidence_error)', async () => {
        await withStores(impl, async (open, _clock, place) => {
          const store = await open()
          await impl.exec(
            place,
            impl.name === 'sqlite'
              ? [`CREATE TRIGGER no_evidence BEFORE INSERT ON toolwire_evidence BEGIN SELECT RAISE(ABORT, 'no evidence'); END`]
              : [
                  `CREATE FUNCTION no_evidence() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'no evidence'; END $$`,
                  `CREATE TRIGGER no_evidence BEFORE INSERT ON toolwire_evidence FOR EACH ROW EXECUTE FUNCTION no_evidence()`,
                ],
          )
          const { tm, errors, evidenceErrors } = manager(store)
          const view = await tm.call('pay', {})
          expect(view).toMatchObject({ status: 'ok' })
          expect(errors).toHaveLength(1)
          expect(evidenceErrors).toHaveLength(1)
          expect(await store.readEvidence()).toEqual([])
          const left = await store.sweep()
          expect(left.keys).toEqual([]) // in flight still, its lease not run out (nothing settled it)
        })
      })
    }
  })
}

describe('a store of the app’s own without settleWithEvidence', () => {
  it('gets the two calls, as before', async () => {
    const inner = new MemoryStore()
    const used: string[] = []
    const own = new Proxy(inner, {
      get(target, name, receiver) {
        if (name === 'settleWithEvidence') return undefined
        const v = Reflect.get(target, name, receiver) as unknown
        if (typeof v !== 'function') return v
        return (...a: unknown[]) => {
          if (name === 'settle' || name === 'appendEvidence') used.push(name)
          return (v as (...x: unknown[]) => unknown).apply(target, a)
        }
      },
    }) as ToolStore
    const { tm, errors } = manager(own)
    expect(await tm.call('pay', {})).toMatchObject({ status: 'ok' })
    expect(used).toEqual(['settle', 'appendEvidence'])
    expect(await inner.readEvidence()).toHaveLength(1)
    expect(errors).toEqual([])
  })
})
