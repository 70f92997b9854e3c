// Found by review: an idempotency key was dropped when a call parked for confirmation (so one key
// could run the tool twice), and the input hashes handed out in approval tokens and kept in the
// store were plain SHA-256 of the whole input (a PIN could be recovered by trying values).
import { describe, expect, it } from 'vitest'
import { ToolManager } from '../src/index.js'
import { parkedHash } from '../src/runtime/store/codec.js'
import { inputHash, MemoryStore, openPostgresStore, verifyApproval } from '../src/runtime/store/index.js'

const SECRET = 'a-test-approval-secret-of-32-bytes!!'
const schema = { type: 'object', properties: { user: { type: 'string' }, pin: { type: 'string' } } } as const

describe('a durable manager', () => {
  it('keeps an idempotency key through a confirmation: the key runs the tool once', async () => {
    const store = new MemoryStore()
    const tm = new ToolManager({ store })
    let runs = 0
    tm.register({ name: 'pay', inputSchema: schema, needsConfirmation: true, run: () => ({ paid: ++runs }) })
    for (let i = 0; i < 2; i++) {
      const parked = await tm.call('pay', { user: 'ann' }, { idempotencyKey: 'order-7' })
      expect(parked.status).toBe('needs_confirmation')
      if (parked.status !== 'needs_confirmation') return
      const view = await tm.confirm(parked.confirmId, { approve: true })
      expect(view).toMatchObject({ status: 'ok', data: { paid: 1 } })
      if (i === 1) expect(view).toMatchObject({ replayed: true })
    }
    expect(runs).toBe(1)
    // another manager on the same store (a restart) confirms a keyed call parked by the first
    const other = new ToolManager({ store })
    other.register({ name: 'pay', inputSchema: schema, needsConfirmation: true, run: () => ({ paid: ++runs }) })
    const parked = await tm.call('pay', { user: 'ann' }, { idempotencyKey: 'order-8' })
    if (parked.status !== 'needs_confirmation') throw new Error(parked.status)
    expect(await other.confirm(parked.confirmId, { approve: true })).toMatchObject({ status: 'ok', data: { paid: 2 } })
    const again = await other.call('pay', { user: 'ann' }, { idempotencyKey: 'order-8' })
    if (again.status !== 'needs_confirmation') throw new Error(again.status)
    expect(await tm.confirm(again.confirmId, { approve: true })).toMatchObject({ status: 'ok', data: { paid: 2 }, replayed: true })
    expect(runs).toBe(2)
  })

  it('hands out and stores only keyed input hashes: a sensitive PIN cannot be recovered by trying values', async () => {
    const store = new MemoryStore()
    const tm = new ToolManager({ store, approvalSecret: SECRET })
    tm.register({ name: 'unlock', inputSchema: schema, sensitive: ['pin'], needsConfirmation: true, run: () => 'open' })
    const parked = await tm.call('unlock', { user: 'ann', pin: '4821' })
    if (parked.status !== 'needs_confirmation') throw new Error(parked.status)
    const claims = verifyApproval(SECRET, parked.confirmId)
    const [row] = await store.listParked()
    const tried = Array.from({ length: 10_000 }, (_, n) => String(n).padStart(4, '0'))
    const found = tried.filter((pin) => {
      const h = inputHash({ user: 'ann', pin })
      return h === claims?.inputHash || h === row?.inputHash
    })
    expect(claims?.inputHash).toMatch(/^p2\.[0-9a-f]{64}$/)
    expect(row?.inputHash).toBe(claims?.inputHash)
    expect(found).toEqual([])
    expect(await tm.confirm(parked.confirmId, { approve: true })).toMatchObject({ status: 'ok', data: 'open' })
  })

  it('without a key or a secret, stores the hash of the parked id, tool, call id and the input with its sensitive fields redacted', async () => {
    const store = new MemoryStore()
    const tm = new ToolManager({ store })
    tm.register({ name: 'unlock', inputSchema: schema, sensitive: ['pin'], needsConfirmation: true, run: () => 'open' })
    await tm.call('unlock', { user: 'ann', pin: '4821' }, { callId: 'u1' })
    const [row] = await store.listParked()
    expect(row?.inputHash).toBe(parkedHash(undefined, row!.id, { tool: 'unlock', callId: 'u1' }, { user: 'ann', pin: '[redacted]' }))
  })

  it('frees a key whose call timed out before its body ran: the retry runs instead of replaying the timeout', async () => {
    let gate: Promise<void> | undefined
    let answered!: () => void
    const ledgerAnswered = new Promise<void>((resolve) => (answered = resolve))
    class SlowStore extends MemoryStore {
      override async begin(...args: Parameters<MemoryStore['begin']>): ReturnType<MemoryStore['begin']> {
        await gate
        return super.begin(...args)
      }
      // the first call's key is either given back or settled: the test waits for whichever comes
      override async release(key: string, token: string): Promise<boolean> {
        const freed = await super.release(key, token)
        answered()
        return freed
      }
      override async settle(...args: Parameters<MemoryStore['settle']>): Promise<boolean> {
        const done = await super.settle(...args)
        answered()
        return done
      }
    }
    const store = new SlowStore()
    const tm = new ToolManager({ store })
    let runs = 0
    tm.register({ name: 'send', inputSchema: schema, run: () => ({ sent: ++runs }) })
    let open!: () => void
    gate = new Promise((resolve) => (open = resolve))
    const first = tm.call('send', { user: 'ann' }, { idempotencyKey: 'mail-1', timeoutMs: 5 })
    expect(await first).toMatchObject({ status: 'error', kind: 'timeout' })
    open()
    await ledgerAnswered
    gate = undefined
    const retry = await tm.call('send', { user: 'ann' }, { idempotencyKey: 'mail-1' })
    expect(retry).toMatchObject({ status: 'ok', data: { sent: 1 } })
    expect(retry).not.toHaveProperty('replayed')
    expect(runs).toBe(1)
  })

  it('refuses a PostgreSQL schema name that search_path would fold to another (upper case) before connecting', async () => {
    await expect(openPostgresStore({ connectionString: 'postgres://nobody@127.0.0.1:1/none', schema: 'TenantB' })).rejects.toThrow(/lower-case SQL identifier/)
  })
})
