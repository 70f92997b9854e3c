// Hand-written floors of a non-idempotent call with a durable store (issue #24, target T8), for
// bench/store.mjs: what such a call must do and nothing else, on the store's own tables (made by
// the store itself, so the same columns and indexes), with the same statements and parameters and
// an evidence record of the same shape.
//
// A floor's `call(kind)` parses and validates the bench's arguments, records the call in flight
// (the ledger INSERT, its own commit: it must be durable before the body runs), runs the body,
// then settles the key and writes the evidence:
// - 'same writes': the ledger UPDATE and the evidence INSERT, each its own commit (as toolwire
//   writes them without batching);
// - 'batched': both in one commit (SQLite: one transaction; PostgreSQL: one statement of two CTEs).
import Database from 'better-sqlite3'
import { Ajv } from 'ajv'
import { openPostgresStore, openSqliteStore, randomId } from '../dist/store.js'
import { argsText, echoSchema, makeEcho } from './workload.mjs'

const INS_LEDGER = `INSERT INTO toolwire_ledger (key, input_hash, call_id, state, token, lease_until, started_at, input, principal)
  VALUES (?, ?, ?, 'in_flight', ?, ?, ?, ?, ?) ON CONFLICT (key) DO NOTHING RETURNING token`
const SET_LEDGER = `UPDATE toolwire_ledger SET state = 'settled', result = ?, lease_until = NULL WHERE key = ? AND token = ? AND state = 'in_flight'`
const INS_EVIDENCE = `INSERT INTO toolwire_evidence (call_id, tool, record, created_at, subject) VALUES (?, ?, ?, ?, ?)`
const LEASE_MS = 60_000

/** What every floor does around its writes: the arguments parsed and validated, ids, the body, the record. */
function callParts() {
  const validate = new Ajv().compile(echoSchema)
  const body = makeEcho('floor')
  let seq = 0
  return {
    /** The call's input, id, ledger key, token and start. */
    start() {
      const input = JSON.parse(argsText)
      if (!validate(input)) throw new TypeError('invalid arguments')
      const callId = `call_${++seq}`
      return { input, callId, key: JSON.stringify(['c', 'echo_write', `${callId}\u0000${randomId()}`]), token: randomId(), t0: Date.now() }
    },
    body,
    /** The evidence INSERT's parameters. */
    evidence(call, data) {
      const now = Date.now()
      const record = { callId: call.callId, tool: 'echo_write', input: call.input, result: data, status: 'ok', startedAt: new Date(call.t0).toISOString(), endedAt: new Date(now).toISOString() }
      return [call.callId, 'echo_write', JSON.stringify(record), now, null]
    },
  }
}

/** `?` placeholders as `$1`, `$2`, …. */
const numbered = (sql, from = 0) => {
  let n = from
  return sql.replace(/\?/g, () => `$${++n}`)
}

/** The SQLite floor: a file at `path` (WAL, synchronous = FULL, as the store's default), written through better-sqlite3. */
export async function sqliteFloor(path) {
  await (await openSqliteStore({ path })).close()
  const db = new Database(path)
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = FULL')
  const insLedger = db.prepare(INS_LEDGER)
  const setLedger = db.prepare(SET_LEDGER)
  const insEvidence = db.prepare(INS_EVIDENCE)
  const begin = db.prepare('BEGIN IMMEDIATE')
  const commit = db.prepare('COMMIT')
  const parts = callParts()
  const sync = ['OFF', 'NORMAL', 'FULL', 'EXTRA'][db.pragma('synchronous', { simple: true })] ?? '?'
  return {
    store: 'sqlite',
    durability: `WAL, synchronous = ${sync}`,
    async call(kind) {
      const c = parts.start()
      insLedger.all(c.key, '', c.callId, c.token, c.t0 + LEASE_MS, c.t0, JSON.stringify(c.input), null)
      const data = await parts.body(c.input)
      const result = '{"status":"ok"}'
      if (kind === 'batched') {
        begin.run()
        setLedger.run(result, c.key, c.token)
        insEvidence.run(...parts.evidence(c, data))
        commit.run()
      } else {
        setLedger.run(result, c.key, c.token)
        insEvidence.run(...parts.evidence(c, data))
      }
      return Object.freeze({ status: 'ok', data, callId: c.callId })
    },
    async close() {
      db.close()
    },
  }
}

/** The PostgreSQL floor: the store's tables in `schema`, written through a `pg` pool of 4 (as the bench's store). */
export async function pgFloor(url, schema) {
  await (await openPostgresStore({ connectionString: url, schema, max: 1 })).close()
  const { default: pg } = await import('pg')
  const pool = new pg.Pool({ connectionString: url, max: 4, options: `-c search_path=${schema}` })
  const insLedger = numbered(INS_LEDGER)
  const setLedger = numbered(SET_LEDGER)
  const insEvidence = numbered(INS_EVIDENCE)
  const batched = `WITH s AS (${numbered(SET_LEDGER)} RETURNING 1), e AS (${numbered(INS_EVIDENCE, 3)}) SELECT count(*) AS n FROM s`
  const parts = callParts()
  const fsync = (await pool.query('SHOW fsync')).rows[0].fsync
  return {
    store: 'postgres',
    durability: `fsync=${fsync}`,
    async call(kind) {
      const c = parts.start()
      await pool.query(insLedger, [c.key, '', c.callId, c.token, c.t0 + LEASE_MS, c.t0, JSON.stringify(c.input), null])
      const data = await parts.body(c.input)
      const result = '{"status":"ok"}'
      if (kind === 'batched') {
        await pool.query(batched, [result, c.key, c.token, ...parts.evidence(c, data)])
      } else {
        await pool.query(setLedger, [result, c.key, c.token])
        await pool.query(insEvidence, parts.evidence(c, data))
      }
      return Object.freeze({ status: 'ok', data, callId: c.callId })
    },
    async close() {
      await pool.end()
    },
  }
}
