/**
 * A corrupt row (a JSON column that does not parse: a disk fault, a hand edit) is reported
 * (`onCorruptRow`, a `StoreCorruptRowError` naming the table and the row, never its content)
 * and skipped; the other rows proceed. Above all, the sweep still reports every other crashed
 * run as outcome unknown (docs/store.md, "Corrupt rows").
 */
import { afterAll, describe, expect, it } from 'vitest'
import { ToolManager, type ToolEvents } from '../src/runtime/manager.js'
import { sealInput, StoreCorruptRowError, StoreUnavailableError, type ParkInput, type ToolStore } from '../src/runtime/store/index.js'
import { storeKinds, type Clock } from './stores.js'

const kinds = (await storeKinds('corrupt')).filter((k) => k.durable)
const opened: ToolStore[] = []
afterAll(async () => {
  for (const s of opened) await s.close().catch(() => undefined)
})

const CORRUPT = '{corrupt'

function parkInput(id: string, over: Partial<ParkInput> = {}): ParkInput {
  return { id, kind: 'confirmation', callId: `call-${id}`, tool: 'pay', input: sealInput(id, { id }), inputHash: 'h', expiresAt: null, data: { n: 1 }, ...over }
}

for (const kind of kinds) {
  describe.skipIf(kind.skip)(`${kind.name}: corrupt rows`, () => {
    async function open(): Promise<{ store: ToolStore; reports: StoreCorruptRowError[]; clock: Clock; place: string }> {
      const place = kind.place()
      const clock: Clock = { t: 1_000_000 }
      const reports: StoreCorruptRowError[] = []
      const store = await kind.open(place, clock, { onCorruptRow: (e) => reports.push(e) })
      opened.push(store)
      return { store, reports, clock, place }
    }

    it('listParked skips a row whose input does not parse, reports it by id (never its content), and lists the others', async () => {
      const { store, reports, place } = await open()
      await store.park(parkInput('a'))
      await store.park(parkInput('b'))
      await store.park(parkInput('c'))
      await kind.exec(place, [`UPDATE toolwire_parked SET input = '${CORRUPT}' WHERE id = 'b'`])
      const listed = await store.listParked()
      expect(listed.map((c) => c.id)).toEqual(['a', 'c'])
      expect(reports).toHaveLength(1)
      expect(reports[0]).toBeInstanceOf(StoreCorruptRowError)
      expect(reports[0]!.message).toContain('"b"')
      expect(reports[0]!.message).not.toContain(CORRUPT)
      expect(reports[0]!.rowId).toBe('b')
      expect(reports[0]!.table).toBe('toolwire_parked')
    })

    it('getParked of a corrupt row rejects with a StoreCorruptRowError (a StoreUnavailableError), not the parser’s SyntaxError', async () => {
      const { store, place } = await open()
      await store.park(parkInput('a'))
      await kind.exec(place, [`UPDATE toolwire_parked SET data = '${CORRUPT}' WHERE id = 'a'`])
      const err = await store.getParked('a').catch((e: unknown) => e)
      expect(err).toBeInstanceOf(StoreCorruptRowError)
      expect(err).toBeInstanceOf(StoreUnavailableError)
      expect((err as StoreUnavailableError).code).toBe('store_unavailable')
      expect((err as Error).message).not.toContain(CORRUPT)
    })

    it('readEvidence skips a corrupt record and reports it; the others come back in order', async () => {
      const { store, reports, place } = await open()
      for (const i of [1, 2, 3]) {
        await store.appendEvidence({ callId: `c${i}`, tool: 't', input: { i }, result: null, status: 'success', startedAt: 'x', endedAt: 'y' })
      }
      await kind.exec(place, [`UPDATE toolwire_evidence SET record = '${CORRUPT}' WHERE call_id = 'c2'`])
      expect((await store.readEvidence()).map((r) => r.callId)).toEqual(['c1', 'c3'])
      expect(reports.map((r) => r.table)).toEqual(['toolwire_evidence'])
      expect(reports[0]!.message).not.toContain(CORRUPT)
    })

    it('a settled key whose recorded result does not parse answers as settled with a null result, reported', async () => {
      const { store, reports, place } = await open()
      const begun = await store.begin('k', 'h', { callId: 'c1' })
      await store.settle('k', (begun as { token: string }).token, { wire: 1 })
      await kind.exec(place, [`UPDATE toolwire_ledger SET result = '${CORRUPT}' WHERE key = 'k'`])
      expect(await store.begin('k', 'h', { callId: 'c2' })).toEqual({ state: 'settled', callId: 'c1', result: null })
      expect(reports.map((r) => [r.table, r.rowId])).toEqual([['toolwire_ledger', 'k']])
    })

    it('an undo payload that does not parse rejects takeUndo with a StoreCorruptRowError naming the call', async () => {
      const { store, place } = await open()
      await store.putUndo({ callId: 'u1', tool: 't', payload: { a: 1 } })
      await kind.exec(place, [`UPDATE toolwire_undo SET payload = '${CORRUPT}' WHERE call_id = 'u1'`])
      const err = await store.takeUndo('u1').catch((e: unknown) => e)
      expect(err).toBeInstanceOf(StoreCorruptRowError)
      expect((err as StoreCorruptRowError).rowId).toBe('u1')
    })

    it('recover() reports every crashed run although one running row is corrupt', async () => {
      const { store, place, clock } = await open()
      await store.park(parkInput('good'))
      await store.park(parkInput('bad'))
      await store.claim('good', { leaseMs: 1000 })
      await store.claim('bad', { leaseMs: 1000 })
      await kind.exec(place, [`UPDATE toolwire_parked SET input = '${CORRUPT}', data = '${CORRUPT}' WHERE id = 'bad'`])
      clock.t += 5000
      const tm = new ToolManager({ store })
      const ends: ToolEvents['call_end'][] = []
      tm.on('call_end', (e) => ends.push(e))
      // the manager's own first sweep and recover() share the work: together they report each run once
      await new Promise((r) => setImmediate(r))
      const found = [...(await tm.recover())]
      await new Promise((r) => setImmediate(r))
      const reported = new Set([...found.map((f) => f.callId), ...ends.map((e) => e.callId)])
      expect([...reported].sort()).toEqual(['call-bad', 'call-good'])
      expect(ends.every((e) => e.view.status === 'error')).toBe(true)
    })
  })
}
