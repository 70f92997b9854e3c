/**
 * Spike for issue #24 (design/dispatch/README.md §4): a call with the SQLite store against a
 * hand-written floor doing the same writes with the same durability settings (WAL,
 * `synchronous = FULL`, the store's own tables and indexes), and against the batched floor.
 *
 * Rows (one awaited call at a time, the bench's echo tool):
 * - tm non-idempotent: tm.callJson of a tool without hints.idempotent: ledger INSERT before the
 *   body, ledger UPDATE and evidence INSERT after (three commits today);
 * - floor 3 commits: the same three statements, each its own commit, through better-sqlite3;
 * - floor 2 commits: the ledger INSERT, then UPDATE + evidence INSERT in one transaction;
 * - tm idempotent / floor 1 commit: the evidence INSERT only.
 * Run: node design/dispatch/spikes/run.mjs sqlite-floor [rounds]   (SYNC=normal for synchronous = NORMAL)
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { Ajv } from 'ajv'
import { ToolManager } from '../../../src/index.js'
import { openSqliteStore } from '../../../src/runtime/store/index.js'
import { randomId } from '../../../src/core/ids.js'

const schema = { type: 'object', properties: { text: { type: 'string' }, n: { type: 'integer' } }, required: ['text', 'n'], additionalProperties: false }
const argsText = '{"text":"hello","n":3}'
const echo = (): ((a: { text: string; n: number }) => Promise<unknown>) => new Function('return async function echo({ text, n }) { return { echoed: text.repeat(n) } }')()

const dir = mkdtempSync(join(tmpdir(), 'tw-d24-'))
const sync = process.env.SYNC === 'normal' ? 'normal' : 'full'
const store = await openSqliteStore({ path: join(dir, 'tm.db'), synchronous: sync })
const tm = new ToolManager({ development: false, store })
tm.register({ name: 'echo', inputSchema: schema, hints: { idempotent: true }, run: echo() as never })
tm.register({ name: 'echo_write', inputSchema: schema, run: echo() as never })
await tm.recover()

// the floor's file: made by the store (same tables, indexes, pragmas), then written by hand
const floorPath = join(dir, 'floor.db')
await (await openSqliteStore({ path: floorPath })).close()
const db = new Database(floorPath)
db.pragma('journal_mode = WAL')
db.pragma(`synchronous = ${sync.toUpperCase()}`)
const insLedger = db.prepare(
  `INSERT INTO toolwire_ledger (key, input_hash, call_id, state, token, lease_until, started_at, input, principal) VALUES (?, ?, ?, 'in_flight', ?, ?, ?, ?, ?) ON CONFLICT (key) DO NOTHING RETURNING token`,
)
const setLedger = db.prepare(`UPDATE toolwire_ledger SET state = 'settled', result = ?, lease_until = NULL WHERE key = ? AND token = ? AND state = 'in_flight'`)
const insEvidence = db.prepare(`INSERT INTO toolwire_evidence (call_id, tool, record, created_at, subject) VALUES (?, ?, ?, ?, ?)`)
const ajv = new Ajv()
const validate = ajv.compile(schema)
const body = echo()
let seq = 0
function evidence(callId: string, input: unknown, result: unknown, t0: number): void {
  const now = Date.now()
  const record = { callId, tool: 'echo', input, result, status: 'ok', startedAt: new Date(t0).toISOString(), endedAt: new Date(now).toISOString() }
  insEvidence.run(callId, 'echo', JSON.stringify(record), now, null)
}
async function floor(commits: 1 | 2 | 3): Promise<unknown> {
  const input = JSON.parse(argsText)
  if (!validate(input)) throw new TypeError('invalid')
  const callId = `call_${++seq}`
  const t0 = Date.now()
  const key = `c:echo:${callId}:${randomId()}`
  const token = randomId()
  if (commits > 1) insLedger.all(key, '', callId, token, t0 + 60_000, t0, JSON.stringify(input), null)
  const data = await body(input as { text: string; n: number })
  if (commits === 3) {
    setLedger.run('{"status":"ok"}', key, token)
    evidence(callId, input, data, t0)
  } else if (commits === 2) {
    db.exec('BEGIN')
    setLedger.run('{"status":"ok"}', key, token)
    evidence(callId, input, data, t0)
    db.exec('COMMIT')
  } else evidence(callId, input, data, t0)
  return Object.freeze({ status: 'ok', data, callId })
}

const rows: { name: string; run: () => Promise<unknown> }[] = [
  { name: 'tm non-idempotent', run: () => tm.callJson('echo_write', argsText) },
  { name: 'floor 3 commits', run: () => floor(3) },
  { name: 'floor 2 commits', run: () => floor(2) },
  { name: 'tm idempotent', run: () => tm.callJson('echo', argsText) },
  { name: 'floor 1 commit', run: () => floor(1) },
]
const only = process.argv.find((a) => a.startsWith('--only='))?.slice(7)
if (only !== undefined) rows.splice(0, rows.length, ...rows.filter((r) => r.name.startsWith(only)))
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
console.log(`synchronous = ${sync.toUpperCase()}, node ${process.version}, ${rounds} rounds × ${CALLS} calls, ${tmpdir()}, loadavg ${readFileSync('/proc/loadavg', 'utf8').trim()}`)
const m = times.map(median)
console.log('row                  median µs   × floor of the same writes')
const base = only === undefined ? [m[1]!, m[1]!, m[1]!, m[4]!, m[4]!] : m
for (let j = 0; j < rows.length; j++) console.log(`${rows[j]!.name.padEnd(20)} ${m[j]!.toFixed(1).padStart(9)}   ${(m[j]! / base[j]!).toFixed(2)}`)
db.close()
await store.close()
rmSync(dir, { recursive: true, force: true })
