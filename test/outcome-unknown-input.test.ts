/**
 * A run reported as `outcome_unknown` says WHICH action to verify: the idempotency ledger keeps
 * the call's input (its sensitive fields redacted, as evidence records are), and the sweep and a
 * retry that finds the lease run out write it into the evidence record. On every store (memory,
 * SQLite, PostgreSQL with TOOLWIRE_PG_URL); a store of schema 2 is migrated on
 * open and its old rows sweep with input null; a release that comes after the lease ran out is
 * reported as an `error` event.
 */
import { afterAll, describe, expect, it } from 'vitest'
import { ToolManager, type ToolEvents } from '../src/runtime/manager.js'
import { SCHEMA_VERSION, migrations, type Dialect } from '../src/runtime/store/sql.js'
import type { ToolStore } from '../src/runtime/store/index.js'
import { PG_URL, storeKinds, type Clock, type StoreKind } from './stores.js'

const kinds = await storeKinds('unknown_input')
const stores: ToolStore[] = []
afterAll(async () => {
  for (const s of stores) await s.close().catch(() => undefined)
})

const anyObject = { type: 'object' } as const
const SECRET = 'tok_live_SECRET_4242'
const LEASE = 60_000

async function open(kind: StoreKind, place: string, clock: Clock): Promise<ToolStore> {
  const s = await kind.open(place, clock)
  stores.push(s)
  return s
}

/** Every event a manager emits, as JSON text (what a log of them would show). */
function recordEvents(tm: ToolManager, into: string[]): void {
  const names: (keyof ToolEvents)[] = ['call_start', 'call_end', 'error', 'output_invalid', 'confirmation', 'progress', 'evidence_error', 'late_report']
  for (const name of names) {
    tm.on(name, (e: ToolEvents[typeof name]) => {
      const { result, error, ...rest } = e as { result?: unknown; error?: unknown }
      into.push(JSON.stringify({ name, ...rest, result: JSON.stringify(result ?? null), error: String(error) }))
    })
  }
}

/** The ledger rows' input column, read by hand (durable kinds). */
async function ledgerInputs(kind: StoreKind, place: string): Promise<unknown[]> {
  if (kind.name === 'sqlite') {
    const { default: Database } = await import('better-sqlite3')
    const db = new Database(place, { readonly: true })
    try {
      return (db.prepare('SELECT input FROM toolwire_ledger').all() as { input: unknown }[]).map((r) => r.input)
    } finally {
      db.close()
    }
  }
  const { default: pg } = await import('pg')
  const client = new pg.Client({ connectionString: PG_URL, options: `-c search_path=${place}` })
  await client.connect()
  try {
    return (await client.query('SELECT input FROM toolwire_ledger')).rows.map((r: { input: unknown }) => r.input)
  } finally {
    await client.end()
  }
}

/** A `charge` tool whose body never returns: its process "died" mid-run. `started` resolves as each body enters. */
function dying(tm: ToolManager): { entered(): Promise<void> } {
  let waiting: (() => void) | undefined
  tm.register({
    name: 'charge',
    inputSchema: anyObject,
    sensitive: ['cardToken'],
    run: () => {
      waiting?.()
      return new Promise(() => {})
    },
  })
  return {
    entered: () => new Promise<void>((resolve) => (waiting = resolve)),
  }
}

for (const kind of kinds) {
  describe.skipIf(kind.skip)(`${kind.name} store`, () => {
    it('a run that died mid-run is reported with its redacted input: by a retry with its key and by recover() on a second manager', async () => {
      const clock: Clock = { t: Date.now() }
      const place = kind.place()
      const a = await open(kind, place, clock)
      const b = await open(kind, place, clock)
      const tmA = new ToolManager({ store: a, leaseMs: LEASE })
      const tmB = new ToolManager({ store: b, leaseMs: LEASE })
      const events: string[] = []
      recordEvents(tmA, events)
      recordEvents(tmB, events)
      const bodies = dying(tmA)
      tmB.register({ name: 'charge', inputSchema: anyObject, sensitive: ['cardToken'], run: () => ({ charged: true }) })
      expect(await Promise.all([tmA.recover(), tmB.recover()])).toEqual([[], []])

      let entered = bodies.entered()
      void tmA.call('charge', { order: 'o-1', amount: 5, cardToken: SECRET }, { idempotencyKey: 'pay-1' })
      await entered
      entered = bodies.entered()
      void tmA.call('charge', { order: 'o-2', amount: 7, cardToken: SECRET }) // no key: recorded all the same (not idempotent)
      await entered
      clock.t += LEASE + 1 // the lease ran out: tmA's process is as good as dead

      const retry = await tmB.call('charge', { order: 'o-1', amount: 5, cardToken: SECRET }, { idempotencyKey: 'pay-1' })
      expect(retry).toMatchObject({ status: 'error' })
      const swept = await tmB.recover()
      expect(swept.map((s) => s.tool)).toEqual(['charge'])

      const evidence = (await b.readEvidence()).filter((r) => r.tool === 'charge' && r.status === 'failed')
      expect(evidence.map((r) => r.input)).toEqual(
        expect.arrayContaining([
          { order: 'o-1', amount: 5, cardToken: '[redacted]' },
          { order: 'o-2', amount: 7, cardToken: '[redacted]' },
        ]),
      )
      expect(evidence).toHaveLength(2)
      expect(evidence.find((r) => r.callId === swept[0]!.callId)?.input).toEqual({ order: 'o-2', amount: 7, cardToken: '[redacted]' })
      expect(evidence.every((r) => (r.result as { error?: { code?: string } }).error?.code === 'outcome_unknown')).toBe(true)

      // the secret is in no row, no evidence record, no event
      expect(JSON.stringify(await b.readEvidence())).not.toContain(SECRET)
      expect(events.length).toBeGreaterThan(0)
      expect(events.join('\n')).not.toContain(SECRET)
      if (kind.durable) {
        const rows = await ledgerInputs(kind, place)
        expect(rows).toHaveLength(2)
        expect(rows.map((r) => JSON.parse(String(r)))).toEqual(
          expect.arrayContaining([
            { order: 'o-1', amount: 5, cardToken: '[redacted]' },
            { order: 'o-2', amount: 7, cardToken: '[redacted]' },
          ]),
        )
        expect(JSON.stringify(rows)).not.toContain(SECRET)
      }
    })

    it('a release that comes after the lease ran out (the run was already reported unknown) is an error event, not silence', async () => {
      const clock: Clock = { t: Date.now() }
      const place = kind.place()
      const a = await open(kind, place, clock)
      const b = await open(kind, place, clock)
      const tmA = new ToolManager({ store: a, leaseMs: LEASE })
      const tmB = new ToolManager({ store: b, leaseMs: LEASE })
      expect(await Promise.all([tmA.recover(), tmB.recover()])).toEqual([[], []])
      let entered!: () => void
      const inBody = new Promise<void>((resolve) => (entered = resolve))
      let fail!: () => void
      const gate = new Promise<void>((resolve) => (fail = resolve))
      tmA.register({
        name: 'charge',
        inputSchema: anyObject,
        // only an idempotent tool's retryable failure frees its key
        hints: { idempotent: true },
        run: async () => {
          entered()
          await gate
          // a retryable failure frees the key (a retry runs again), unless the key is already unknown
          throw Object.assign(new Error('connection reset'), { kind: 'network', retryable: true })
        },
      })
      // the body's own exception is an error event too; the release is reported after it
      const errors: ToolEvents['error'][] = []
      const ledgerError = /ledger key was settled as outcome unknown before this call released it \(its lease ran out\)/
      tmA.on('error', (e) => {
        if (ledgerError.test(e.message)) errors.push(e)
      })
      const call = tmA.call('charge', { order: 'o-3' }, { idempotencyKey: 'pay-3' })
      await inBody
      clock.t += LEASE + 1
      expect(await tmB.recover()).toHaveLength(1) // reported as outcome unknown
      fail()
      // the view is handed out once the call's ledger write (here the release) is done
      expect(await call).toMatchObject({ status: 'error' })
      expect(errors).toHaveLength(1)
      expect(errors[0]!.tool).toBe('charge')
    })

    it.runIf(kind.durable)(`a store of schema 2 (before the ledger kept inputs) is migrated to ${SCHEMA_VERSION} on open; its old rows sweep with input null`, async () => {
      const clock: Clock = { t: Date.now() }
      const place = kind.place()
      // the database as toolwire's schema 2 made it: its migrations, no input column in the ledger
      const dialect: Dialect =
        kind.name === 'sqlite'
          ? { int: 'INTEGER', serial: 'INTEGER', order: 'rowid', nowMs: `CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)` }
          : { int: 'BIGINT', serial: 'BIGSERIAL', order: 'seq', nowMs: 'CAST(EXTRACT(EPOCH FROM now()) * 1000 AS BIGINT)' }
      const previous = migrations(dialect).filter((m) => m.version <= 2)
      expect(previous.map((m) => m.version)).toEqual([1, 2])
      await kind.exec(place, [
        ...(kind.name === 'postgres' ? [`CREATE SCHEMA "${place}"`] : []),
        `CREATE TABLE toolwire_meta (name TEXT PRIMARY KEY, version ${dialect.int} NOT NULL)`,
        ...previous.flatMap((m) => m.statements),
        `INSERT INTO toolwire_meta (name, version) VALUES ('schema', 2)`,
        // a run in flight when the old process died, its lease run out
        `INSERT INTO toolwire_ledger (key, input_hash, call_id, state, token, lease_until, started_at)
         VALUES ('["c","charge","old-call\\u0000x"]', '', 'old-call', 'in_flight', 't', ${clock.t - 1}, ${clock.t - LEASE})`,
      ])
      const s = await open(kind, place, clock)
      const tm = new ToolManager({ store: s, leaseMs: LEASE })
      tm.register({ name: 'charge', inputSchema: anyObject, sensitive: ['cardToken'], run: () => ({ charged: true }) })
      const ends: ToolEvents['call_end'][] = []
      tm.on('call_end', (e) => ends.push(e))
      // the manager's own first sweep or this one reports it, once
      const swept = await tm.recover()
      const evidence = await s.readEvidence()
      expect(evidence).toMatchObject([{ callId: 'old-call', tool: 'charge', input: null, result: { error: { code: 'outcome_unknown' } } }])
      expect(swept.length === 0 || swept[0]!.callId === 'old-call').toBe(true)
      expect(ends.map((e) => e.callId)).toContain('old-call')
      // the migrated store keeps the input of new runs
      await s.close()
      const again = await open(kind, place, clock)
      expect(await again.begin('k', 'h', { callId: 'c9', leaseMs: 1, input: { order: 'o-9' } })).toMatchObject({ state: 'new' })
      clock.t += 1
      expect((await again.sweep()).keys).toEqual([{ key: 'k', callId: 'c9', startedAt: clock.t - 1, input: { order: 'o-9' } }])
    })
  })
}
