/**
 * `tm.undoable(callId)`: whether `tm.undo(callId)` would run something, asked of the store, so
 * the answer holds on every manager on it and after a restart (docs/lifecycle.md, "Undo").
 * The synchronous `tm.canUndo` answers what this process knows.
 */
import { afterAll, describe, expect, it } from 'vitest'
import { ToolManager, type ToolContext } from '../src/runtime/manager.js'
import type { ToolStore } from '../src/runtime/store/index.js'
import { storeKinds, storePair, type Clock } from './stores.js'

const kinds = await storeKinds('undoable')
const opened: ToolStore[] = []
afterAll(async () => {
  for (const s of opened) await s.close().catch(() => undefined)
})

function tools(tm: ToolManager, runs: string[], failing = { on: false }): ToolManager {
  tm.register({
    name: 'rename',
    inputSchema: { type: 'object' },
    run: (input: { from: string; to: string }, ctx: ToolContext) => {
      ctx.registerUndo({ from: input.to, to: input.from })
      return { renamed: input.to }
    },
    undo: (payload) => {
      if (failing.on) throw new Error('disk full')
      runs.push(`undo:${JSON.stringify(payload)}`)
      return { restored: true }
    },
  })
  return tm
}

describe('without a store', () => {
  it('undoable answers as canUndo does: true for a registered undo, false once it ran', async () => {
    const runs: string[] = []
    const tm = tools(new ToolManager(), runs)
    const callId = (await tm.call('rename', { from: 'a', to: 'b' })).callId!
    expect(tm.canUndo(callId)).toBe(true)
    expect(await tm.undoable(callId)).toBe(true)
    expect((await tm.undo(callId)).status).toBe('ok')
    expect(await tm.undoable(callId)).toBe(false)
    expect(await tm.undoable('no-such-call')).toBe(false)
  })
})

for (const kind of kinds) {
  describe.skipIf(kind.skip)(`${kind.name} store`, () => {
    it('another manager, and a new one after a restart, answer undoable true; false once one of them ran it', async () => {
      const { a, b, place, clock } = await storePair(kind, opened)
      const runs: string[] = []
      const tmA = tools(new ToolManager({ store: a }), runs)
      const tmB = tools(new ToolManager({ store: b }), runs)
      const callId = (await tmA.call('rename', { from: 'a', to: 'b' })).callId!
      expect(await tmA.undoable(callId)).toBe(true)
      expect(await tmB.undoable(callId)).toBe(true)
      // a restart: a new manager on the same store
      const c = await kind.open(place, clock as Clock)
      if (c !== a) opened.push(c)
      const tmC = tools(new ToolManager({ store: c }), runs)
      expect(await tmC.undoable(callId)).toBe(true)
      expect((await tmC.undo(callId)).status).toBe('ok')
      expect(runs).toHaveLength(1)
      expect(await tmA.undoable(callId)).toBe(false)
      expect(await tmB.undoable(callId)).toBe(false)
      expect(await tmC.undoable(callId)).toBe(false)
    })

    it('stays true after a failed undo (it is kept for another try), on every manager', async () => {
      const { a, b } = await storePair(kind, opened)
      const runs: string[] = []
      const failing = { on: true }
      const tmA = tools(new ToolManager({ store: a }), runs, failing)
      const tmB = tools(new ToolManager({ store: b }), runs, failing)
      const callId = (await tmA.call('rename', { from: 'a', to: 'b' })).callId!
      expect((await tmB.undo(callId)).status).toBe('error')
      expect(await tmA.undoable(callId)).toBe(true)
      expect(await tmB.undoable(callId)).toBe(true)
    })

    it('is false on a manager that cannot run it (its tool has no undo there), true where it can', async () => {
      const { a, b } = await storePair(kind, opened)
      const runs: string[] = []
      const tmA = tools(new ToolManager({ store: a }), runs)
      const bare = new ToolManager({ store: b })
      const callId = (await tmA.call('rename', { from: 'a', to: 'b' })).callId!
      expect(await bare.undoable(callId)).toBe(false)
      expect(await tmA.undoable(callId)).toBe(true)
    })
  })
}
