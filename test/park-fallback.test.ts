// docs/store.md: "If the store fails when parking, the failure is reported (`error` event) and the
// call stays confirmable (or resumable) on the instance that parked it only."
import { describe, expect, it } from 'vitest'
import { ToolManager } from '../src/runtime/manager.js'
import { pending } from '../src/core/helpers.js'
import { MemoryStore, StoreUnavailableError, type ParkInput } from '../src/runtime/store/index.js'

/** A memory store whose `park` fails while `down` is set; with `lostAck`, it keeps the row and fails anyway (its answer was lost). */
class FlakyParkStore extends MemoryStore {
  down = true
  lostAck = false
  parkDelayMs = 0
  override async park(call: ParkInput): Promise<void> {
    if (this.parkDelayMs > 0) await new Promise((r) => setTimeout(r, this.parkDelayMs))
    if (this.lostAck) await super.park(call)
    if (this.down) throw new StoreUnavailableError('toolwire: the park failed (test)')
    return super.park(call)
  }
}

function managers(options: { approvalSecret?: string } = {}) {
  const store = new FlakyParkStore()
  const make = () => {
    const tm = new ToolManager({ store, ...options })
    const errors: string[] = []
    tm.on('error', (e) => errors.push(String((e.error as Error).message)))
    const runs = { pay: 0, ask: 0, resumed: [] as unknown[] }
    tm.register({ name: 'pay', inputSchema: { type: 'object' }, needsConfirmation: true, run: () => ++runs.pay })
    tm.register({
      name: 'ask',
      inputSchema: { type: 'object' },
      run: () => {
        runs.ask++
        return pending({ kind: 'input', id: 'req-1', prompt: 'Which size?' })
      },
      resume: (answer: unknown) => {
        runs.resumed.push(answer)
        return 'resumed'
      },
    })
    return { tm, errors, runs }
  }
  return { store, a: make(), b: make() }
}

describe('a call the store failed to park', () => {
  it('is confirmable on the manager that parked it, once; another manager does not find it', async () => {
    const { store, a, b } = managers()
    const view = await a.tm.call('pay', {})
    expect(view.status).toBe('needs_confirmation')
    expect(a.errors).toEqual(['toolwire: the park failed (test)'])
    store.down = false
    const confirmId = view.status === 'needs_confirmation' ? view.confirmId : ''
    expect(await b.tm.confirm(confirmId, { approve: true })).toMatchObject({ status: 'refused', code: 'confirmation_unknown' })
    expect(await a.tm.confirm(confirmId, { approve: true })).toMatchObject({ status: 'ok', data: 1 })
    expect(await a.tm.confirm(confirmId, { approve: true })).toMatchObject({ status: 'refused', code: 'confirmation_used' })
    expect(a.runs.pay + b.runs.pay).toBe(1)
  })

  it('can be denied there too', async () => {
    const { a } = managers()
    const view = await a.tm.call('pay', {})
    const confirmId = view.status === 'needs_confirmation' ? view.confirmId : ''
    expect(await a.tm.confirm(confirmId, { approve: false })).toMatchObject({ status: 'refused', code: 'confirmation_denied' })
    expect(a.runs.pay).toBe(0)
  })

  it('a suspension is resumable on the manager that parked it', async () => {
    const { store, a, b } = managers()
    expect(await a.tm.call('ask', {})).toMatchObject({ status: 'pending', request: { id: 'req-1' } })
    store.down = false
    expect(await b.tm.resume('req-1', { size: 'L' })).toMatchObject({ status: 'refused', code: 'unknown_request' })
    expect(await a.tm.resume('req-1', { size: 'L' })).toMatchObject({ status: 'ok', data: 'resumed' })
    expect(a.runs.resumed).toEqual([{ size: 'L' }])
  })

  it('a call the store did park is still answered through the store, by any manager', async () => {
    const { store, a, b } = managers()
    store.down = false
    const view = await a.tm.call('pay', {})
    const confirmId = view.status === 'needs_confirmation' ? view.confirmId : ''
    expect(await b.tm.confirm(confirmId, { approve: true })).toMatchObject({ status: 'ok', data: 1 })
    expect(await a.tm.confirm(confirmId, { approve: true })).toMatchObject({ status: 'refused', code: 'confirmation_used' })
  })

  it('with an approvalSecret (its confirmId a signed token) too', async () => {
    const { a } = managers({ approvalSecret: 'an approval secret of enough bytes, 32+' })
    const view = await a.tm.call('pay', {})
    const confirmId = view.status === 'needs_confirmation' ? view.confirmId : ''
    expect(confirmId.startsWith('tw1.')).toBe(true)
    expect(await a.tm.confirm(confirmId, { approve: true })).toMatchObject({ status: 'ok', data: 1 })
  })

  it('whose row the store kept after all (its answer was lost) runs once, whichever manager answers first', async () => {
    for (const first of ['a', 'b'] as const) {
      const { store, a, b } = managers()
      store.lostAck = true
      const view = await a.tm.call('pay', {})
      expect(a.errors).toEqual(['toolwire: the park failed (test)'])
      store.down = false
      const confirmId = view.status === 'needs_confirmation' ? view.confirmId : ''
      const [one, two] = first === 'a' ? [a, b] : [b, a]
      expect(await one.tm.confirm(confirmId, { approve: true })).toMatchObject({ status: 'ok', data: 1 })
      expect(await two.tm.confirm(confirmId, { approve: true })).toMatchObject({ status: 'refused' })
      expect(a.runs.pay + b.runs.pay).toBe(1)
    }
  })

  it('a call whose timeout ends while the store parks it is withdrawn: no manager can confirm it', async () => {
    const { store, a, b } = managers()
    store.down = false
    store.parkDelayMs = 150
    const view = await a.tm.call('pay', {}, { timeoutMs: 50 })
    expect(view).toMatchObject({ status: 'error', kind: 'timeout' })
    await new Promise((r) => setTimeout(r, 250))
    expect(await store.listParked()).toEqual([])
    const rows = await store.listParked('denied')
    expect(rows).toHaveLength(1)
    expect(await b.tm.confirm(rows[0]!.id, { approve: true })).toMatchObject({ status: 'refused' })
    expect(a.runs.pay + b.runs.pay).toBe(0)
  })
})
