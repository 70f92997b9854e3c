/**
 * Spike for issue #24 (design/dispatch/README.md §4): a call with the PostgreSQL store against
 * hand-written floors on the same server, tables and pool size (`pg`, `max: 4`):
 * - tm non-idempotent: ledger INSERT before the body, ledger UPDATE and evidence INSERT after
 *   (three statements, three autocommits);
 * - floor 3 statements: the same three, autocommit;
 * - floor batched: the INSERT, then UPDATE + evidence INSERT as one statement (a CTE: one round
 *   trip, one commit);
 * - tm idempotent / floor 1 statement: the evidence INSERT only.
 * Needs TOOLWIRE_PG_URL (`eval "$(bash scripts/postgres.sh start)"`; that server runs with
 * fsync=off, so these rows measure round trips and the server's work, not the disk).
 * Run: node design/dispatch/spikes/run.mjs pg-floor [rounds]
 */
import { readFileSync } from 'node:fs'
import pg from 'pg'
import { Ajv } from 'ajv'
import { ToolManager } from '../../../src/index.js'
import { openPostgresStore } from '../../../src/runtime/store/index.js'
import { randomId } from '../../../src/core/ids.js'

const url = process.env.TOOLWIRE_PG_URL
if (url === undefined) throw new Error('TOOLWIRE_PG_URL is not set')
const schema = { type: 'object', properties: { text: { type: 'string' }, n: { type: 'integer' } }, required: ['text', 'n'], additionalProperties: false }
const argsText = '{"text":"hello","n":3}'
const echo = (): ((a: { text: string; n: number }) => Promise<unknown>) => new Function('return async function echo({ text, n }) { return { echoed: text.repeat(n) } }')()
const tag = randomId().replace(/[^A-Za-z0-9]/g, '').slice(0, 10).toLowerCase()

const store = await openPostgresStore({ connectionString: url, schema: `tw_d24_tm_${tag}`, max: 4 })
const tm = new ToolManager({ development: false, store })
tm.register({ name: 'echo', inputSchema: schema, hints: { idempotent: true }, run: echo() as never })
tm.register({ name: 'echo_write', inputSchema: schema, run: echo() as never })
await tm.recover()

const floorSchema = `tw_d24_floor_${tag}`
await (await openPostgresStore({ connectionString: url, schema: floorSchema, max: 1 })).close()
const pool = new pg.Pool({ connectionString: url, max: 4, options: `-c search_path=${floorSchema}` })
const INS_LEDGER = `INSERT INTO toolwire_ledger (key, input_hash, call_id, state, token, lease_until, started_at, input, principal) VALUES ($1, $2, $3, 'in_flight', $4, $5, $6, $7, $8) ON CONFLICT (key) DO NOTHING RETURNING token`
const SET_LEDGER = `UPDATE toolwire_ledger SET state = 'settled', result = $1, lease_until = NULL WHERE key = $2 AND token = $3 AND state = 'in_flight'`
const INS_EVIDENCE = `INSERT INTO toolwire_evidence (call_id, tool, record, created_at, subject) VALUES ($1, $2, $3, $4, $5)`
const BATCHED = `WITH s AS (UPDATE toolwire_ledger SET state = 'settled', result = $1, lease_until = NULL WHERE key = $2 AND token = $3 AND state = 'in_flight' RETURNING 1),
  e AS (INSERT INTO toolwire_evidence (call_id, tool, record, created_at, subject) VALUES ($4, $5, $6, $7, $8))
  SELECT count(*) AS n FROM s`
const ajv = new Ajv()
const validate = ajv.compile(schema)
const body = echo()
let seq = 0
function record(callId: string, input: unknown, result: unknown, t0: number): [string, string, string, number, null] {
  const now = Date.now()
  const r = { callId, tool: 'echo', input, result, status: 'ok', startedAt: new Date(t0).toISOString(), endedAt: new Date(now).toISOString() }
  return [callId, 'echo', JSON.stringify(r), now, null]
}
async function floor(kind: 1 | 2 | 3): Promise<unknown> {
  const input = JSON.parse(argsText)
  if (!validate(input)) throw new TypeError('invalid')
  const callId = `call_${++seq}`
  const t0 = Date.now()
  const key = `c:echo:${callId}:${randomId()}`
  const token = randomId()
  if (kind > 1) await pool.query(INS_LEDGER, [key, '', callId, token, t0 + 60_000, t0, JSON.stringify(input), null])
  const data = await body(input as { text: string; n: number })
  if (kind === 3) {
    await pool.query(SET_LEDGER, ['{"status":"ok"}', key, token])
    await pool.query(INS_EVIDENCE, record(callId, input, data, t0))
  } else if (kind === 2) {
    await pool.query(BATCHED, ['{"status":"ok"}', key, token, ...record(callId, input, data, t0)])
  } else await pool.query(INS_EVIDENCE, record(callId, input, data, t0))
  return Object.freeze({ status: 'ok', data, callId })
}

const rows: { name: string; run: () => Promise<unknown> }[] = [
  { name: 'tm non-idempotent', run: () => tm.callJson('echo_write', argsText) },
  { name: 'floor 3 statements', run: () => floor(3) },
  { name: 'floor batched (CTE)', run: () => floor(2) },
  { name: 'tm idempotent', run: () => tm.callJson('echo', argsText) },
  { name: 'floor 1 statement', run: () => floor(1) },
]
const rounds = Number(process.argv.find((a) => /^\d+$/.test(a)) ?? 7)
const CALLS = 200
const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2
}
async function sample(run: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now()
  for (let i = 0; i < CALLS; i++) await run()
  return ((performance.now() - t0) * 1e3) / CALLS
}
for (const r of rows) {
  const v = (await r.run()) as { status?: string }
  if (v.status !== 'ok') throw new Error(`${r.name}: ${JSON.stringify(v)}`)
  await sample(r.run)
}
const times = rows.map(() => [] as number[])
for (let round = 0; round < rounds; round++) {
  for (let k = 0; k < rows.length; k++) {
    const j = (k + round) % rows.length
    times[j]!.push(await sample(rows[j]!.run))
  }
}
const fsync = (await pool.query('SHOW fsync')).rows[0].fsync
console.log(`PostgreSQL fsync=${fsync}, node ${process.version}, ${rounds} rounds × ${CALLS} calls, loadavg ${readFileSync('/proc/loadavg', 'utf8').trim()}`)
const m = times.map(median)
console.log('row                  median µs   × floor of the same writes')
const base = [m[1]!, m[1]!, m[1]!, m[4]!, m[4]!]
for (let j = 0; j < rows.length; j++) console.log(`${rows[j]!.name.padEnd(20)} ${m[j]!.toFixed(1).padStart(9)}   ${(m[j]! / base[j]!).toFixed(2)}`)
await store.close()
for (const s of [floorSchema, `tw_d24_tm_${tag}`]) await pool.query(`DROP SCHEMA IF EXISTS "${s}" CASCADE`)
await pool.end()
