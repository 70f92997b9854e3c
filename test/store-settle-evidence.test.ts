/**
 * `settleWithEvidence`: the ledger's settle and an evidence row in one transaction, on each store
 * (memory, SQLite, PostgreSQL; test/stores.ts). It leaves what `settle` then `appendEvidence`
 * leave (the same evidence rows, the same ledger state), and a failure leaves neither.
 */
import { describe, expect, it } from 'vitest'
import { StoreUnavailableError, type ToolStore } from '../src/runtime/store/index.js'
import type { EvidenceRecord } from '../src/observe/evidence.js'
import { PG_URL, storeKinds, withStores, type StoreKind } from './stores.js'

const impls = await storeKinds('settle')

const record = (callId: string, principal = false): EvidenceRecord => ({
  callId,
  tool: 'pay',
  input: { amount: 5 },
  result: { content: [{ type: 'text', text: 'paid' }] },
  status: 'ok',
  startedAt: '2026-01-01T00:00:00.000Z',
  endedAt: '2026-01-01T00:00:01.000Z',
  ...(principal ? { principal: { subject: 'ada', issuer: 'https://id.example' } } : {}),
})

/** A store's rows of a table, in a stable order, by hand (durable kinds); `[]` for memory. */
async function rows(impl: StoreKind, place: string, sql: string): Promise<unknown[]> {
  if (impl.name === 'sqlite') {
    const { default: Database } = await import('better-sqlite3')
    const db = new Database(place, { readonly: true })
    try {
      return db.prepare(sql).all()
    } finally {
      db.close()
    }
  }
  if (impl.name === 'postgres') {
    const { default: pg } = await import('pg')
    const client = new pg.Client({ connectionString: PG_URL, options: `-c search_path=${place}` })
    await client.connect()
    try {
      return (await client.query(sql)).rows.map((r: Record<string, unknown>) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, typeof v === 'string' && /^\d+$/.test(v) && k !== 'token' ? Number(v) : v])))
    } finally {
      await client.end()
    }
  }
  return []
}

const EVIDENCE_ROWS = 'SELECT call_id, tool, record, created_at, subject FROM toolwire_evidence ORDER BY seq'
const LEDGER_ROWS = 'SELECT key, input_hash, call_id, state, lease_until, started_at, result, input, principal FROM toolwire_ledger ORDER BY key'

/** Begins `key` and returns its token. */
async function begun(s: ToolStore, key: string, callId: string): Promise<string> {
  const b = await s.begin(key, 'h', { callId, leaseMs: 60_000, input: { amount: 5 } })
  if (b.state !== 'new') throw new Error(`expected a new key, got ${b.state}`)
  return b.token
}

/** The same steps, settled with the two calls or with the one: what the store then holds. */
async function scenario(impl: StoreKind, combined: boolean): Promise<{ answers: unknown[]; evidence: unknown; ledger: unknown; rows: unknown[] }> {
  return withStores(impl, async (open, clock, place) => {
    const s = await open()
    const settle = async (key: string, token: string, result: { ok: boolean }, r: EvidenceRecord): Promise<boolean> => {
      if (combined) return s.settleWithEvidence!(key, token, result, r)
      const settled = await s.settle(key, token, result)
      await s.appendEvidence(r)
      return settled
    }
    const answers: unknown[] = []
    const t1 = await begun(s, 'k1', 'c1')
    const t2 = await begun(s, 'k2', 'c2')
    clock.t += 10
    answers.push(await settle('k1', t1, { ok: true }, record('c1', true)))
    // not the holder: nothing settles, the record is still written
    answers.push(await settle('k2', 'not-the-token', { ok: false }, record('c2')))
    // settled already: the same
    answers.push(await settle('k1', t1, { ok: false }, record('c1b')))
    // its lease ran out and a sweep made it unknown: the record is written, the key stays unknown
    clock.t += 120_000
    await s.sweep()
    answers.push(await settle('k2', t2, { ok: true }, record('c2b')))
    answers.push(await s.begin('k1', 'h', { callId: 'x' }))
    answers.push(await s.begin('k2', 'h', { callId: 'x' }))
    return {
      answers,
      evidence: await s.readEvidence(),
      ledger: await rows(impl, place, LEDGER_ROWS),
      rows: await rows(impl, place, EVIDENCE_ROWS),
    }
  })
}

for (const impl of impls) {
  describe.skipIf(impl.skip)(`${impl.name} store: settleWithEvidence`, () => {
    it('leaves what settle then appendEvidence leave: the answers, the evidence rows, the ledger', async () => {
      const two = await scenario(impl, false)
      const one = await scenario(impl, true)
      expect(one.answers.slice(0, 4)).toEqual([true, false, false, false])
      expect(one.evidence).toEqual([record('c1', true), record('c2'), record('c1b'), record('c2b')])
      // the tokens and the sweep's swept flag aside, the same state
      expect(one).toEqual(two)
      if (impl.durable) {
        expect(one.rows).toHaveLength(4)
        expect((one.rows[0] as { subject: unknown }).subject).toBe('ada')
        expect((one.ledger as { state: unknown }[]).map((r) => r.state)).toEqual(['settled', 'unknown'])
      }
    })

    it('a failure leaves neither the settlement nor the record', async () => {
      await withStores(impl, async (open, clock, place) => {
        const s = await open()
        const token = await begun(s, 'k', 'c')
        if (impl.durable) {
          // the evidence insert fails (after the ledger's UPDATE ran, in the same transaction)
          await impl.exec(
            place,
            impl.name === 'sqlite'
              ? [`CREATE TRIGGER no_evidence BEFORE INSERT ON toolwire_evidence BEGIN SELECT RAISE(ABORT, 'no evidence'); END`]
              : [
                  `CREATE FUNCTION no_evidence() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'no evidence'; END $$`,
                  `CREATE TRIGGER no_evidence BEFORE INSERT ON toolwire_evidence FOR EACH ROW EXECUTE FUNCTION no_evidence()`,
                ],
          )
          await expect(s.settleWithEvidence!('k', token, { ok: true }, record('c'))).rejects.toBeInstanceOf(StoreUnavailableError)
          await impl.exec(place, ['DROP TRIGGER no_evidence' + (impl.name === 'postgres' ? ' ON toolwire_evidence' : '')])
        } else {
          // the memory store: a clock that throws
          const t = clock.t
          Object.defineProperty(clock, 't', { configurable: true, get: () => { throw new Error('no clock') } })
          await expect(s.settleWithEvidence!('k', token, { ok: true }, record('c'))).rejects.toThrow('no clock')
          Object.defineProperty(clock, 't', { configurable: true, writable: true, value: t })
        }
        expect(await s.readEvidence()).toEqual([])
        // still in flight, for its holder
        expect(await s.begin('k', 'h', { callId: 'x' })).toMatchObject({ state: 'in_flight', callId: 'c' })
        expect(await s.settleWithEvidence!('k', token, { ok: true }, record('c'))).toBe(true)
        expect(await s.readEvidence()).toEqual([record('c')])
        if (impl.durable) {
          // a record that does not serialize writes nothing either (the memory store keeps the object)
          const t2 = await begun(s, 'k2', 'c2')
          const circular = { ...record('c2'), input: {} as Record<string, unknown> }
          circular.input.self = circular.input
          await expect(s.settleWithEvidence!('k2', t2, { ok: true }, circular as unknown as EvidenceRecord)).rejects.toThrow()
          expect(await s.begin('k2', 'h', { callId: 'x' })).toMatchObject({ state: 'in_flight' })
        }
        expect(await s.readEvidence()).toEqual([record('c')])
      })
    })

    it("begin holds a new key with the caller's token when it gives one, else with one the store draws", async () => {
      await withStores(impl, async (open) => {
        const s = await open()
        expect(await s.begin('k1', 'h', { callId: 'c1', token: 'drawn-by-the-caller' })).toEqual({ state: 'new', token: 'drawn-by-the-caller' })
        expect(await s.settle('k1', 'drawn-by-the-caller', { ok: true })).toBe(true)
        const drawn = await s.begin('k2', 'h', { callId: 'c2' })
        expect(drawn.state === 'new' && drawn.token.length).toBe(22)
        // a key already taken answers as before, whatever token is given
        expect(await s.begin('k1', 'h', { callId: 'c3', token: 'another' })).toEqual({ state: 'settled', callId: 'c1', result: { ok: true } })
      })
    })

    it('a closed store rejects with store_unavailable and writes nothing', async () => {
      await withStores(impl, async (open) => {
        const s = await open()
        const token = await begun(s, 'k', 'c')
        const other = await open()
        await s.close()
        await expect(s.settleWithEvidence!('k', token, { ok: true }, record('c'))).rejects.toBeInstanceOf(StoreUnavailableError)
        if (impl.durable) {
          expect(await other.readEvidence()).toEqual([])
          expect(await other.begin('k', 'h', { callId: 'x' })).toMatchObject({ state: 'in_flight' })
        }
      })
    })
  })
}

const sqlite = impls.find((i) => i.name === 'sqlite')!

describe.skipIf(sqlite.skip)('sqlite store: settleWithEvidence and the lock', () => {
  it('waits for another connection to let go of the lock, then writes both', async () => {
    await withStores(sqlite, async (open, _clock, place) => {
      const s = await open()
      const token = await begun(s, 'k', 'c')
      const { default: Database } = await import('better-sqlite3')
      const other = new Database(place)
      other.exec('BEGIN IMMEDIATE')
      let done = false
      const p = s.settleWithEvidence!('k', token, { ok: true }, record('c')).finally(() => (done = true))
      await new Promise((r) => setTimeout(r, 50))
      expect(done).toBe(false)
      other.exec('COMMIT')
      other.close()
      expect(await p).toBe(true)
      expect(await s.readEvidence()).toEqual([record('c')])
      expect(await s.begin('k', 'h', { callId: 'x' })).toEqual({ state: 'settled', callId: 'c', result: { ok: true } })
    })
  })

  it('a lock held past the wait fails it whole: neither is written, and the store goes on', async () => {
    const clock = { t: 1_000_000 }
    const place = sqlite.place()
    const s = await sqlite.open(place, clock, {})
    const quick = await (await import('../src/runtime/store/index.js')).openSqliteStore({ path: place, busyTimeoutMs: 30, now: () => clock.t })
    try {
      const token = await begun(quick, 'k', 'c')
      const { default: Database } = await import('better-sqlite3')
      const other = new Database(place)
      other.exec('BEGIN IMMEDIATE')
      await expect(quick.settleWithEvidence!('k', token, { ok: true }, record('c'))).rejects.toBeInstanceOf(StoreUnavailableError)
      other.exec('ROLLBACK')
      other.close()
      expect(await s.readEvidence()).toEqual([])
      expect(await quick.settleWithEvidence!('k', token, { ok: true }, record('c'))).toBe(true)
      expect(await s.readEvidence()).toEqual([record('c')])
    } finally {
      await quick.close()
      await s.close()
    }
  })
})

describe('the evidence half of a store (evidenceOf) and settleWithEvidence', () => {
  it('offers the one-commit settlement only for a store that has it, tracked by flush as an append is', async () => {
    const { MemoryStore, evidenceOf } = await import('../src/runtime/store/index.js')
    const { settlerOf } = await import('../src/runtime/store/evidence.js')
    const store = new MemoryStore()
    const evidence = evidenceOf(store)
    const settle = settlerOf(evidence)!
    expect(settle).toBeTypeOf('function')
    const b = await store.begin('k', 'h', { callId: 'c' })
    expect(b.state === 'new' && (await settle('k', b.token, { ok: true }, record('c')))).toBe(true)
    expect(await evidence.readAll!()).toEqual([record('c')])
    await evidence.flush!()
    // a failure is the flush's too, once
    await store.close()
    await expect(settle('k', 'x', null, record('d'))).rejects.toBeInstanceOf(StoreUnavailableError)
    await expect(evidence.flush!()).rejects.toBeInstanceOf(StoreUnavailableError)
    await evidence.flush!()
    // a store of the app's own without it: the two calls
    const { settleWithEvidence: _omitted, ...own } = Object.fromEntries(
      Object.getOwnPropertyNames(MemoryStore.prototype).map((name) => [name, (MemoryStore.prototype as unknown as Record<string, unknown>)[name]]),
    )
    void _omitted
    expect(settlerOf(evidenceOf({ ...own, kind: 'own' } as unknown as ToolStore))).toBeUndefined()
    expect(settlerOf(undefined)).toBeUndefined()
  })

  it('reports as Ledger.settle and a failed append report: a key no longer in flight, a store failure', async () => {
    const { MemoryStore, evidenceOf } = await import('../src/runtime/store/index.js')
    const { settlerOf } = await import('../src/runtime/store/evidence.js')
    const { settleWithEvidence } = await import('../src/runtime/durable/ledger.js')
    const { ToolResult } = await import('../src/core/result.js')
    const store = new MemoryStore()
    const settle = settlerOf(evidenceOf(store))!
    const errors: unknown[] = []
    const evidenceErrors: unknown[] = []
    const reports = { reportError: (_c: string, _t: string, err: unknown) => errors.push(err), evidenceFailed: (err: unknown) => evidenceErrors.push(err) }
    const b = await store.begin('k', 'h', { callId: 'c' })
    if (b.state !== 'new') throw new Error('expected new')
    const ticket = { key: 'k', token: b.token, keyed: false }
    await settleWithEvidence(settle, ticket, ToolResult.fromData({ done: true }), record('c'), 'c', 'pay', reports)
    expect(await store.begin('k', 'h', { callId: 'x' })).toMatchObject({ state: 'settled', callId: 'c', result: { status: ToolResult.fromData({ done: true }).statusName() } })
    expect(errors).toEqual([])
    // settled already (its lease ran out meanwhile, say): reported, the record written
    await settleWithEvidence(settle, ticket, ToolResult.fromData({ done: true }), record('c2'), 'c', 'pay', reports)
    expect(errors).toHaveLength(1)
    expect(String(errors[0])).toContain('lease ran out')
    expect(await store.readEvidence()).toEqual([record('c'), record('c2')])
    await store.close()
    await settleWithEvidence(settle, ticket, ToolResult.fromData({ done: true }), record('c3'), 'c', 'pay', reports)
    expect(errors).toHaveLength(2)
    expect(errors[1]).toBeInstanceOf(StoreUnavailableError)
    expect(evidenceErrors).toEqual([errors[1]])
  })
})
