#!/usr/bin/env node
// The cost of a call with a durable store (toolwire/store) against one without. Part of `npm run bench`.
//
//   node bench/store.mjs            → bench/results/store.json
//   node bench/store.mjs --quick    (a smoke test: fewer rounds)
//
// Every row is `tm.callJson('echo', argsText, opts)` of the bench's echo tool (bench/workload.mjs:
// the same schema, argument text and body), one awaited call at a time, on a manager with:
// - no store;
// - a MemoryStore;
// - SQLite (a file in a temporary folder, WAL; better-sqlite3);
// - PostgreSQL on loopback (pg), when TOOLWIRE_PG_URL (or DATABASE_URL) is set; else skipped
//   (start one with `eval "$(bash scripts/postgres.sh start)"`, stop it with `bash scripts/postgres.sh stop`).
// and three kinds of call:
// - idempotent: a tool marked `hints: { idempotent: true }`, no key: no ledger (with a store, the
//   evidence record is written to it and the view waits for it);
// - non-idempotent: a tool without the hint: the ledger records the call in flight before the body
//   runs and settles it after (plus the evidence);
// - idempotencyKey: the idempotent tool with a fresh key per call (a new key each time: the body
//   runs; not a replay). Without a store a key is refused, so that row has no figure.
// Every candidate runs in every round, the order rotating from round to round; a figure is the
// median µs per call over the rounds. The ratio is to the same kind of call without a store
// (for idempotencyKey: to the idempotent call without a store).
//
// Floors (issue #24, target T8): for SQLite (synchronous = FULL, the store's default) and
// PostgreSQL, hand-written code that does what a non-idempotent call must (parse and validate the
// arguments, run the body, write the same rows to the store's own tables with the same statements)
// and nothing else:
// - floor, same writes: the ledger INSERT before the body, then the ledger UPDATE and the evidence
//   INSERT, each its own commit (what toolwire writes per call);
// - floor, batched: the ledger INSERT, then UPDATE + evidence INSERT in one commit (SQLite: one
//   transaction; PostgreSQL: one statement of two CTEs): the least writes the guarantees need (the
//   in-flight row must be durable before the body runs).
// T8 = toolwire's non-idempotent call ÷ the batched floor, the median of the per-round ratios.
// scripts/postgres.sh starts the server with fsync=off (commits then cost no disk flush); start it
// with TOOLWIRE_PG_FSYNC=on to measure the flushes. The bench prints which it measured.
// Uses the built package (dist/), as an installed user would: run `npm run build:ts` first.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { performance } from 'node:perf_hooks'
import { ToolManager } from '../dist/index.js'
import { MemoryStore, openPostgresStore, openSqliteStore, randomId } from '../dist/store.js'
import { argsText, echoSchema, makeEcho, TOOL_DESCRIPTION, TOOL_NAME } from './workload.mjs'
import { pgFloor, sqliteFloor } from './store-floors.mjs'

const HERE = dirname(fileURLToPath(import.meta.url))
const quick = process.argv.includes('--quick')
const ROUNDS = quick ? 3 : 15
const SAMPLE_MS = quick ? 20 : 60
const WARMUP_MS = quick ? 150 : 800
const PG_URL = process.env.TOOLWIRE_PG_URL ?? process.env.DATABASE_URL

function expect(ok, what) {
  if (!ok) throw new Error(`bench check failed: ${what}`)
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2
}

/** µs per call of `fn` over one sample of `n` calls. */
async function sample(fn, n) {
  const t0 = performance.now()
  for (let i = 0; i < n; i++) await fn()
  return ((performance.now() - t0) * 1e3) / n
}

/** Warms `fn` up (about WARMUP_MS), then returns how many calls make one sample of about SAMPLE_MS. */
async function calibrate(fn) {
  const until = performance.now() + WARMUP_MS
  while (performance.now() < until) for (let i = 0; i < 10; i++) await fn()
  let n = 5
  for (;;) {
    const t0 = performance.now()
    for (let i = 0; i < n; i++) await fn()
    const ms = performance.now() - t0
    if (ms > SAMPLE_MS / 4) return Math.max(5, Math.round((n * SAMPLE_MS) / ms))
    n *= 4
  }
}

// ---- the stores
const dir = mkdtempSync(join(tmpdir(), 'toolwire-bench-store-'))
const pgSchema = `tw_bench_${randomId().replace(/[^A-Za-z0-9]/g, '').slice(0, 12).toLowerCase()}`
const STORES = [
  { name: 'none', open: async () => undefined },
  { name: 'memory', open: async () => new MemoryStore() },
  { name: 'sqlite', open: () => openSqliteStore({ path: join(dir, 'store.db') }), where: 'a file in a temporary folder (WAL)' },
]
if (PG_URL !== undefined) {
  STORES.push({ name: 'postgres', open: () => openPostgresStore({ connectionString: PG_URL, schema: pgSchema, max: 4 }), where: 'loopback' })
} else {
  console.log('SKIP postgres: TOOLWIRE_PG_URL (or DATABASE_URL) is not set. Start a throwaway server with\n  eval "$(bash scripts/postgres.sh start)"\nrun this again, then `bash scripts/postgres.sh stop`.')
}

const KINDS = ['idempotent', 'non-idempotent', 'idempotencyKey']
const candidates = []
const opened = []
let keySeq = 0
for (const s of STORES) {
  const store = await s.open()
  if (store !== undefined) opened.push(store)
  const tm = new ToolManager({ development: false, store })
  tm.register({ name: TOOL_NAME, description: TOOL_DESCRIPTION, inputSchema: echoSchema, hints: { idempotent: true }, run: makeEcho(`${s.name} idempotent`) })
  tm.register({ name: `${TOOL_NAME}_write`, description: TOOL_DESCRIPTION, inputSchema: echoSchema, run: makeEcho(`${s.name} non-idempotent`) })
  await tm.recover() // its first sweep is done before timing
  const calls = {
    idempotent: () => tm.callJson(TOOL_NAME, argsText),
    'non-idempotent': () => tm.callJson(`${TOOL_NAME}_write`, argsText),
    idempotencyKey: () => tm.callJson(TOOL_NAME, argsText, { idempotencyKey: `k${++keySeq}` }),
  }
  for (const kind of KINDS) {
    const view = await calls[kind]()
    if (store === undefined && kind === 'idempotencyKey') {
      expect(view.status === 'refused' && view.code === 'invalid_options', 'a key without a store is refused')
      continue
    }
    expect(view.status === 'ok' && view.data?.echoed === 'hellohellohello' && view.replayed !== true, `${s.name} ${kind}: ${JSON.stringify(view)}`)
    candidates.push({ store: s.name, kind, fn: calls[kind], times: [] })
  }
}

// ---- the floors (T8)
const floors = [await sqliteFloor(join(dir, 'floor.db'))]
if (PG_URL !== undefined) floors.push(await pgFloor(PG_URL, `${pgSchema}_floor`))
for (const f of floors) {
  for (const kind of ['same writes', 'batched']) {
    const v = await f.call(kind)
    expect(v.status === 'ok' && v.data?.echoed === 'hellohellohello', `${f.store} floor ${kind}: ${JSON.stringify(v)}`)
    candidates.push({ store: f.store, kind: `floor, ${kind}`, fn: () => f.call(kind), times: [] })
  }
}

for (const c of candidates) c.n = await calibrate(c.fn)
for (let r = 0; r < ROUNDS; r++) {
  // rotate the order each round so that no candidate always runs right after the same one
  for (let i = 0; i < candidates.length; i++) {
    const c = candidates[(i + r) % candidates.length]
    c.times.push(await sample(c.fn, c.n))
  }
}

const figure = (store, kind) => {
  const c = candidates.find((x) => x.store === store && x.kind === kind)
  return c === undefined ? undefined : median(c.times)
}
const rows = []
for (const s of STORES) {
  for (const kind of KINDS) {
    const us = figure(s.name, kind)
    const base = figure('none', kind === 'idempotencyKey' ? 'idempotent' : kind)
    rows.push({ store: s.name, kind, us: us === undefined ? null : Number(us.toFixed(1)), ratio: us === undefined ? null : Number((us / base).toFixed(1)) })
  }
}

// T8: toolwire's non-idempotent call ÷ the batched floor, per round (the two ran in the same round)
const t8 = []
for (const f of floors) {
  const tm = candidates.find((x) => x.store === f.store && x.kind === 'non-idempotent')
  const same = candidates.find((x) => x.store === f.store && x.kind === 'floor, same writes')
  const batched = candidates.find((x) => x.store === f.store && x.kind === 'floor, batched')
  const perRound = (c) => c.times.map((t, r) => tm.times[r] / t)
  t8.push({
    store: f.store,
    durability: f.durability,
    tm: Number(median(tm.times).toFixed(1)),
    sameWrites: Number(median(same.times).toFixed(1)),
    batched: Number(median(batched.times).toFixed(1)),
    ratioSameWrites: Number(median(perRound(same)).toFixed(2)),
    ratio: Number(median(perRound(batched)).toFixed(2)),
  })
}

const cell = (r) => (r.us === null ? 'refused'.padStart(17) : `${r.us.toFixed(1).padStart(8)} µs ${`${r.ratio.toFixed(1)}×`.padStart(6)}`)
console.log(`\n=== A call with a store against one without: tm.callJson of the echo tool, µs per call (ratio to no store), median of ${ROUNDS} rounds (node ${process.version})`)
console.log(`store     ${KINDS.map((k) => k.padStart(17)).join('  ')}`)
for (const s of STORES) console.log(`${s.name.padEnd(9)} ${KINDS.map((k) => cell(rows.find((r) => r.store === s.name && r.kind === k))).join('  ')}`)
if (PG_URL === undefined) console.log('postgres  skipped (TOOLWIRE_PG_URL is not set)')
console.log(`\n=== T8: a non-idempotent call against hand-written floors, µs per call (median of ${ROUNDS} rounds); ratios are medians of per-round ratios`)
console.log(`store     ${'durability'.padEnd(28)} ${'toolwire'.padStart(9)} ${'floor, same writes'.padStart(19)} ${'floor, batched'.padStart(15)}  ${'÷ same'.padStart(7)}  ${'T8 (÷ batched)'.padStart(14)}`)
for (const t of t8) {
  console.log(
    `${t.store.padEnd(9)} ${t.durability.padEnd(28)} ${t.tm.toFixed(1).padStart(9)} ${t.sameWrites.toFixed(1).padStart(19)} ${t.batched.toFixed(1).padStart(15)}  ${`${t.ratioSameWrites.toFixed(2)}×`.padStart(7)}  ${`${t.ratio.toFixed(2)}×`.padStart(14)}`,
  )
}
const loadavg = (() => {
  try {
    return readFileSync('/proc/loadavg', 'utf8').trim()
  } catch {
    return null
  }
})()
if (loadavg !== null) console.log(`load average ${loadavg}`)

for (const store of opened) await store.close()
for (const f of floors) await f.close()
rmSync(dir, { recursive: true, force: true })
if (PG_URL !== undefined) {
  const { default: pg } = await import('pg')
  const client = new pg.Client({ connectionString: PG_URL })
  await client.connect()
  await client.query(`DROP SCHEMA IF EXISTS "${pgSchema}" CASCADE`)
  await client.query(`DROP SCHEMA IF EXISTS "${pgSchema}_floor" CASCADE`)
  await client.end()
}

const out = join(HERE, 'results', quick ? 'store-quick.json' : 'store.json')
mkdirSync(dirname(out), { recursive: true })
writeFileSync(
  out,
  `${JSON.stringify({ date: new Date().toISOString(), node: process.version, rounds: ROUNDS, postgres: PG_URL !== undefined, loadavg, unit: 'µs per call (median)', rows, t8 }, null, 2)}\n`,
)
console.log(`wrote ${relative(resolve(HERE, '..'), out)}`)
process.exit(0)
