/**
 * Ids that do not survive UTF-8: a store keeps text as UTF-8, where a lone surrogate becomes
 * U+FFFD, so a call id with one would be another id on every other instance (a signed token
 * then names a call the store does not have). With a store, such a `callId` is refused at
 * entry, `invalid_options`, and nothing runs (docs/store.md, "Ids").
 */
import { afterAll, describe, expect, it } from 'vitest'
import { ToolManager } from '../src/runtime/manager.js'
import type { ToolStore } from '../src/runtime/store/index.js'
import { storeKinds, storePair } from './stores.js'

const kinds = await storeKinds('ids')
const opened: ToolStore[] = []
afterAll(async () => {
  for (const s of opened) await s.close().catch(() => undefined)
})

const LONE = 'call-\ud800-1'

for (const kind of kinds) {
  describe.skipIf(kind.skip)(`${kind.name} store`, () => {
    it('a call id with a lone surrogate is refused invalid_options before anything runs or is parked', async () => {
      const { a, b } = await storePair(kind, opened)
      const runs: string[] = []
      const make = (store: ToolStore): ToolManager => {
        const tm = new ToolManager({ store, approvalSecret: 'an approval secret of enough bytes' })
        tm.register({ name: 'pay', inputSchema: { type: 'object' }, needsConfirmation: true, run: () => (runs.push('pay'), 'paid') })
        tm.register({ name: 'echo', inputSchema: { type: 'object' }, run: () => (runs.push('echo'), 'ok') })
        return tm
      }
      const tmA = make(a)
      const tmB = make(b)
      const view = await tmA.call('pay', {}, { callId: LONE })
      expect(view).toMatchObject({ status: 'refused', code: 'invalid_options' })
      expect(view.status === 'refused' && view.message).toMatch(/callId/)
      expect(await tmA.call('echo', {}, { callId: LONE })).toMatchObject({ status: 'refused', code: 'invalid_options' })
      expect(runs).toEqual([])
      expect(await a.listParked()).toEqual([])
      // a well-formed id (any script, astral characters too) is confirmed on the other instance
      const ok = await tmA.call('pay', {}, { callId: 'call-\u00e9-\u{1F600}' })
      expect(ok.status).toBe('needs_confirmation')
      const confirmed = await tmB.confirm(ok.status === 'needs_confirmation' ? ok.confirmId : '', { approve: true })
      expect(confirmed).toMatchObject({ status: 'ok', callId: 'call-\u00e9-\u{1F600}' })
    })
  })
}

describe('without a store', () => {
  it('a call id with a lone surrogate is kept as given (nothing stores it)', async () => {
    const tm = new ToolManager()
    tm.register({ name: 'echo', inputSchema: { type: 'object' }, run: () => 'ok' })
    expect(await tm.call('echo', {}, { callId: LONE })).toMatchObject({ status: 'ok', callId: LONE })
  })
})
