/**
 * A request id names one parked suspension: a second call that suspends under an id a parked
 * call already holds (another tool, or the same one) is refused `request_id_in_use` and parks
 * nothing, so `tm.resume(id)` continues the first call, with its own tool and input
 * (docs/lifecycle.md, "Suspensions"). Without a store, and on every store kind.
 */
import { afterAll, describe, expect, it } from 'vitest'
import { ToolManager } from '../src/runtime/manager.js'
import { pending } from '../src/core/helpers.js'
import type { ToolStore } from '../src/runtime/store/index.js'
import { storeKinds, storePair } from './stores.js'

const kinds = await storeKinds('requestid')
const opened: ToolStore[] = []
afterAll(async () => {
  for (const s of opened) await s.close().catch(() => undefined)
})

function tools(tm: ToolManager, runs: string[]): ToolManager {
  for (const name of ['a', 'b']) {
    tm.register({
      name,
      inputSchema: { type: 'object' },
      run: () => pending({ id: 'ticket-42', kind: 'input' }),
      resume: (answer: unknown, input: { n: number }) => {
        runs.push(`${name}:${input.n}:${String(answer)}`)
        return { ok: true }
      },
    })
  }
  return tm
}

async function scenario(first: ToolManager, second: ToolManager, runs: string[]): Promise<void> {
  expect(await first.call('a', { n: 1 })).toMatchObject({ status: 'pending' })
  expect(await second.call('b', { n: 2 })).toMatchObject({ status: 'refused', code: 'request_id_in_use' })
  expect(await second.resume('ticket-42', 'yes')).toMatchObject({ status: 'ok' })
  expect(runs).toEqual(['a:1:yes'])
}

describe('without a store', () => {
  it("a second tool's suspension under a parked request id is refused; resume runs the first call's tool with its input", async () => {
    const runs: string[] = []
    const tm = tools(new ToolManager(), runs)
    await scenario(tm, tm, runs)
  })
})

for (const kind of kinds) {
  describe.skipIf(kind.skip)(`${kind.name} store`, () => {
    it('on one manager: the second suspension is refused, resume runs the first', async () => {
      const { a } = await storePair(kind, opened)
      const runs: string[] = []
      const tm = tools(new ToolManager({ store: a }), runs)
      await scenario(tm, tm, runs)
    })

    it('across two managers: the second suspension is refused, resume runs the first', async () => {
      const { a, b } = await storePair(kind, opened)
      const runs: string[] = []
      await scenario(tools(new ToolManager({ store: a }), runs), tools(new ToolManager({ store: b }), runs), runs)
    })
  })
}
