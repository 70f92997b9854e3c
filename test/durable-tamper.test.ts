/**
 * A stored row's content is not trusted: the input a confirmed or resumed call runs with must
 * hash to what its signed token and its row's keyed hash name (docs/store.md, "Approval
 * tokens"). Someone with write access to the database who rewrites a parked row's input
 * (`sealed` cleared, `redacted` 0, so the plain column would be used) gets a refusal, and the
 * body never runs.
 */
import { afterAll, describe, expect, it } from 'vitest'
import { ToolManager, type ToolEvents } from '../src/runtime/manager.js'
import { pending } from '../src/core/helpers.js'
import type { CallResult } from '../src/core/view.js'
import type { ToolStore } from '../src/runtime/store/index.js'
import { inputHashKey, keyedInputHash } from '../src/runtime/store/codec.js'
import { storeKinds, storePair } from './stores.js'

const kinds = (await storeKinds('tamper')).filter((k) => k.durable)
const opened: ToolStore[] = []
afterAll(async () => {
  for (const s of opened) await s.close().catch(() => undefined)
})

const SECRET = 'an approval secret of enough bytes'
const KEY = 'b'.repeat(64)

function tools(tm: ToolManager, runs: string[]): ToolManager {
  tm.register({
    name: 'pay',
    inputSchema: { type: 'object' },
    needsConfirmation: true,
    run: (input: { to: string; amount: number }) => {
      runs.push(`pay:${input.to}:${input.amount}`)
      return { paid: input.to }
    },
  })
  tm.register({
    name: 'lookup',
    inputSchema: { type: 'object' },
    needsConfirmation: true,
    run: (input: { to: string; amount: number }) => {
      runs.push(`lookup:${input.to}:${input.amount}`)
      return { found: input.to }
    },
  })
  tm.register({
    name: 'ask',
    inputSchema: { type: 'object' },
    run: (input: { to: string }) => pending({ id: `req-${input.to}`, kind: 'input', prompt: 'How much?' }),
    resume: (answer: unknown, input: { to: string }) => {
      runs.push(`ask:${input.to}:${String(answer)}`)
      return { ok: true }
    },
  })
  return tm
}

const confirmIdOf = (v: CallResult): string => {
  if (v.status !== 'needs_confirmation') throw new Error(`expected needs_confirmation, got ${v.status}`)
  return v.confirmId
}

const MALLORY = `UPDATE toolwire_parked SET input = '{"to":"mallory","amount":5000}', sealed = NULL, redacted = 0`

for (const kind of kinds) {
  describe.skipIf(kind.skip)(`${kind.name}: a tampered parked row`, () => {
    for (const [label, options] of [
      ['an approval secret', { approvalSecret: SECRET }],
      ['a store key', { storeKey: KEY }],
      ['both', { approvalSecret: SECRET, storeKey: KEY }],
    ] as const) {
      it(`with ${label}: another instance's tm.confirm refuses a row whose input was rewritten, and nothing runs`, async () => {
        const { a, b, place } = await storePair(kind, opened)
        const runs: string[] = []
        const tmA = tools(new ToolManager({ store: a, ...options }), runs)
        const tmB = tools(new ToolManager({ store: b, ...options }), runs)
        const errors: ToolEvents['error'][] = []
        tmB.on('error', (e) => errors.push(e))
        const token = confirmIdOf(await tmA.call('pay', { to: 'bob', amount: 5 }))
        await kind.exec(place, [MALLORY])
        const view = await tmB.confirm(token, { approve: true })
        expect(view.status).toBe('refused')
        expect(runs).toEqual([])
        expect(JSON.stringify(errors)).not.toContain('mallory')
      })
    }

    for (const [label, options] of [
      ['an approval secret', { approvalSecret: SECRET }],
      ['a store key', { storeKey: KEY }],
      ['both', { approvalSecret: SECRET, storeKey: KEY }],
      ['neither key (the unkeyed hash binds the tool and the ids)', {}],
    ] as const) {
      it(`with ${label}: another instance refuses a row whose tool was swapped (SET tool=), and nothing runs`, async () => {
        const { a, b, place } = await storePair(kind, opened)
        const runs: string[] = []
        const tmA = tools(new ToolManager({ store: a, ...options }), runs)
        const tmB = tools(new ToolManager({ store: b, ...options }), runs)
        const token = confirmIdOf(await tmA.call('lookup', { to: 'bob', amount: 5 }, { callId: 'look-1' }))
        await kind.exec(place, [`UPDATE toolwire_parked SET tool = 'pay' WHERE call_id = 'look-1'`])
        const view = await tmB.confirm(token, { approve: true })
        expect(view.status).toBe('refused')
        expect(runs).toEqual([])
        // the instance that parked it refuses too (it holds the real input, the row names another tool)
        expect((await tmA.confirm(token, { approve: true })).status).toBe('refused')
        expect(runs).toEqual([])
      })

      it(`with ${label}: another instance refuses a row given another row's input and hash, and nothing runs`, async () => {
        const { a, b, place } = await storePair(kind, opened)
        const runs: string[] = []
        const tmA = tools(new ToolManager({ store: a, ...options }), runs)
        const tmB = tools(new ToolManager({ store: b, ...options }), runs)
        const token = confirmIdOf(await tmA.call('pay', { to: 'bob', amount: 5 }, { callId: 'pay-bob' }))
        confirmIdOf(await tmA.call('pay', { to: 'mallory', amount: 5000 }, { callId: 'pay-mallory' }))
        const from = (col: string): string => `${col} = (SELECT m.${col} FROM toolwire_parked m WHERE m.call_id = 'pay-mallory')`
        await kind.exec(place, [`UPDATE toolwire_parked SET ${['input', 'sealed', 'redacted', 'input_hash'].map(from).join(', ')} WHERE call_id = 'pay-bob'`])
        const view = await tmB.confirm(token, { approve: true })
        expect(view.status).toBe('refused')
        expect(runs).toEqual([])
      })
    }

    it('with a store key: a new row passed off as one parked before the binding (an input-only keyed hash, the seal dropped) is refused', async () => {
      const { a, b, place } = await storePair(kind, opened)
      const runs: string[] = []
      const tmA = tools(new ToolManager({ store: a, storeKey: KEY }), runs)
      const tmB = tools(new ToolManager({ store: b, storeKey: KEY }), runs)
      const confirmId = confirmIdOf(await tmA.call('lookup', { to: 'bob', amount: 5 }, { callId: 'look-2' }))
      const legacy = keyedInputHash(inputHashKey(Buffer.from(KEY, 'hex')), { to: 'bob', amount: 5 })
      await kind.exec(place, [`UPDATE toolwire_parked SET tool = 'pay', sealed = NULL, redacted = 0, input_hash = '${legacy}' WHERE call_id = 'look-2'`])
      expect(await tmB.confirm(confirmId, { approve: true })).toMatchObject({ status: 'refused', code: 'input_unavailable' })
      expect(runs).toEqual([])
    })

    it('with a store key: another instance refuses to resume a suspension whose input was rewritten', async () => {
      const { a, b, place } = await storePair(kind, opened)
      const runs: string[] = []
      const tmA = tools(new ToolManager({ store: a, storeKey: KEY }), runs)
      const tmB = tools(new ToolManager({ store: b, storeKey: KEY }), runs)
      const parked = await tmA.call('ask', { to: 'bob' })
      expect(parked.status).toBe('pending')
      await kind.exec(place, [MALLORY])
      const view = await tmB.resume('req-bob', 50)
      expect(view.status).toBe('refused')
      expect(view.status === 'refused' && view.code).toBe('input_unavailable')
      expect(runs).toEqual([])
    })

    it('an untampered row still runs on the other instance', async () => {
      const { a, b } = await storePair(kind, opened)
      const runs: string[] = []
      const tmA = tools(new ToolManager({ store: a, approvalSecret: SECRET, storeKey: KEY }), runs)
      const tmB = tools(new ToolManager({ store: b, approvalSecret: SECRET, storeKey: KEY }), runs)
      const token = confirmIdOf(await tmA.call('pay', { to: 'bob', amount: 5 }))
      expect((await tmB.confirm(token, { approve: true })).status).toBe('ok')
      expect(runs).toEqual(['pay:bob:5'])
    })
  })
}

