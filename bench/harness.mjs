// Timing, interleaving, statistics, sanity checks, pollution detection, memory
// measurement, plug-in loading, tables and JSON for `npm run bench`.
//
// Timed groups (1-3):
//   1. build candidates (peers + plug-in) and run setup()
//   2. one-time sanity check per candidate: run() executes the tool body the
//      expected number of times (and, in group 3, returns the ≥ 1 MiB model-ready
//      string); check(argsText) succeeds and check('{"text":1}') throws WITHOUT
//      running the body. A candidate that fails becomes an error row, untimed.
//   3. warm up each candidate (≥ warmupMs) and calibrate K = ops per sample so a
//      sample takes ~targetSampleMs
//   4. one discarded round, then `rounds` rounds; every round visits all
//      candidates in a fresh shuffled order and takes one sample of K sequential
//      `await run()` each. Sample value = elapsed / (K × calls per op).
//   Each candidate is timed by its own copy of the loop (compiled separately, so
//   call-site feedback is not shared/megamorphic across candidates).
//   Reported: median, p25-p75 over rounds, ratios median/median to the table's
//   baselines (the per-round paired ratio median is in the JSON too).
//
// Pollution: before/after each family import and each candidate's setup,
// sanity and warm-up, the harness checks whether an async_hooks init hook got
// enabled (an AsyncLocalStorage .run/.enterWith on Node 20 does this and slows
// every promise in the process ~2-3×) and whether Promise/timers/Error hooks
// were replaced. Needs --expose-internals (the runner passes it to its children).

import { createRequire } from 'node:module';
import { existsSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { performance } from 'node:perf_hooks';

const now = process.hrtime.bigint;
const AsyncFunction = (async () => {}).constructor;

// ------------------------------------------------------------------ utilities

export function log(msg) {
  process.stderr.write(`${msg}\n`);
}

export function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function shuffle(arr, rnd) {
  for (let i = arr.length - 1; i > 0; i--) {
    const j = Math.floor(rnd() * (i + 1));
    [arr[i], arr[j]] = [arr[j], arr[i]];
  }
  return arr;
}

export function quantile(sorted, q) {
  if (sorted.length === 0) return NaN;
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
}

export function summarize(samples) {
  const s = [...samples].sort((a, b) => a - b);
  return {
    n: s.length,
    median: quantile(s, 0.5),
    p25: quantile(s, 0.25),
    p75: quantile(s, 0.75),
    min: s[0],
    max: s[s.length - 1],
  };
}

const errMsg = (e) => (e instanceof Error ? `${e.constructor.name}: ${e.message}` : String(e)).split('\n')[0].slice(0, 200);

let loopSeq = 0;
/** A fresh copy of the timing loop (unique source → own SharedFunctionInfo and feedback). */
function makeLoop(tag) {
  const id = ++loopSeq;
  return new AsyncFunction(
    'run',
    'K',
    'now',
    `// bench loop #${id}: ${String(tag).replace(/[\r\n*/]/g, ' ')}\n` +
      'const t0 = now();\nfor (let i = 0; i < K; i++) await run();\nreturn Number(now() - t0);',
  );
}

// ------------------------------------------------------------------ pollution

let asyncHooksInternals = null;
try {
  asyncHooksInternals = createRequire(import.meta.url)('internal/async_hooks');
} catch {
  /* not started with --expose-internals: async-hook detection unavailable */
}
export const pollutionDetection = asyncHooksInternals ? 'async_hooks init hooks + global identity checks' : 'global identity checks only (run with --expose-internals for async_hooks)';

export function envSnapshot() {
  return {
    asyncHooksInit: asyncHooksInternals ? asyncHooksInternals.initHooksExist() : null,
    Promise: globalThis.Promise,
    promiseThen: Promise.prototype.then,
    queueMicrotask: globalThis.queueMicrotask,
    setTimeout: globalThis.setTimeout,
    setImmediate: globalThis.setImmediate,
    nextTick: process.nextTick,
    stackTraceLimit: Error.stackTraceLimit,
    prepareStackTrace: Error.prepareStackTrace,
  };
}

export function envDiff(a, b) {
  const out = [];
  if (a.asyncHooksInit === false && b.asyncHooksInit === true) out.push('enabled an async_hooks init hook (AsyncLocalStorage) - every promise in the process is now slower');
  for (const k of ['Promise', 'promiseThen', 'queueMicrotask', 'setTimeout', 'setImmediate', 'nextTick', 'prepareStackTrace']) {
    if (a[k] !== b[k]) out.push(`replaced ${k}`);
  }
  if (a.stackTraceLimit !== b.stackTraceLimit) out.push(`changed Error.stackTraceLimit ${a.stackTraceLimit} → ${b.stackTraceLimit}`);
  return out;
}

/** Tracks which family / candidate changed the process environment. */
export class PollutionTracker {
  constructor() {
    this.polluters = []; // { who, family, what[] }
    this.snap = envSnapshot();
    this.initial = this.snap;
  }
  mark(who, family) {
    const next = envSnapshot();
    const what = envDiff(this.snap, next);
    if (what.length) this.polluters.push({ who, family, what });
    this.snap = next;
    return what;
  }
}

// ------------------------------------------------------------------ plug-in

/**
 * Load the toolwire plug-in. Never throws: returns { candidates?, note }.
 * The plug-in module must export `async function candidates(ctx)` returning an
 * array of candidates (see README.md).
 */
export async function loadPlugin(path) {
  if (!path) return { note: 'plug-in disabled' };
  if (!existsSync(path)) return { note: `no plug-in at ${path}: toolwire rows skipped (peers only)` };
  try {
    const mod = await import(pathToFileURL(path).href);
    const fn = mod.candidates ?? mod.default?.candidates;
    if (typeof fn !== 'function') return { note: `plug-in ${path} does not export candidates(ctx): toolwire rows skipped` };
    return { candidates: fn, note: `plug-in loaded from ${path}` };
  } catch (err) {
    return { note: `plug-in ${path} failed to import (${errMsg(err)}): toolwire rows skipped` };
  }
}

/** Call the plug-in for one group context; never throws. */
export async function pluginCandidates(plugin, ctx, notes) {
  if (!plugin?.candidates) return [];
  try {
    const list = await plugin.candidates(ctx);
    if (list == null) return [];
    if (!Array.isArray(list)) throw new TypeError('candidates(ctx) must return an array');
    for (const c of list) c.family ??= 'toolwire';
    return list;
  } catch (err) {
    notes.push(`plug-in candidates({group: ${ctx.group}${ctx.group === 2 ? `, batchSize: ${ctx.batchSize}` : ''}}) threw: ${errMsg(err)}`);
    return [];
  }
}

// ------------------------------------------------------------------ sanity

async function sanityCheck(c, ctx, opts) {
  const expectCalls = ctx.batchSize ?? 1;
  let before = ctx.bodyCalls();
  const r = await c.run();
  const d = ctx.bodyCalls() - before;
  if (d !== expectCalls) return { ok: false, error: `run() executed the tool body (ctx.body / ctx.makeBody()) ${d}× (expected ${expectCalls}×)` };
  if (ctx.group === 3 && !(typeof r === 'string' && r.length >= ctx.bigText.length)) {
    return { ok: false, error: `run() must return the model-ready serialized message (a string ≥ ${ctx.bigText.length} chars), got ${typeof r}${typeof r === 'string' ? ` of ${r.length}` : ''}` };
  }
  if (!c.check) {
    const neutral = ['bare', 'floor', 'plain'].includes(c.role);
    return { ok: true, validation: neutral ? 'n/a (floor)' : 'not verified (no check())' };
  }
  before = ctx.bodyCalls();
  try {
    await c.check(ctx.argsText);
  } catch (err) {
    return { ok: false, error: `check(valid args) threw: ${errMsg(err)}` };
  }
  if (ctx.bodyCalls() - before !== 1) return { ok: false, error: 'check(valid args) did not execute the tool body once' };
  before = ctx.bodyCalls();
  let threw = false;
  let why = '';
  try {
    await c.check(ctx.badArgsText);
  } catch (err) {
    threw = true;
    why = errMsg(err);
  }
  const bodyRan = ctx.bodyCalls() - before > 0;
  if (!threw || bodyRan) {
    const what = bodyRan
      ? `DOES NOT VALIDATE: the tool body ran with ${ctx.badArgsText}${threw ? ' (the error came from the body)' : ''}`
      : `DOES NOT VALIDATE: ${ctx.badArgsText} was accepted`;
    return { ok: false, notValidating: true, error: c.expectNoValidation ? `${what} (expected; not timed)` : what };
  }
  return { ok: true, validation: `ok (rejects ${ctx.badArgsText})`, rejection: why };
}

// ------------------------------------------------------------------ timed groups

async function calibrate(c, opts) {
  const warmNs = opts.warmupMs * 1e6;
  const targetNs = opts.targetSampleMs * 1e6;
  let total = 0;
  let ops = 0;
  let k = 1;
  let perOp = Infinity;
  while (total < warmNs || ops < 32) {
    const t = await c.loop(c.run, k, now);
    total += t;
    ops += k;
    if (t >= 1e6 || k === 1) perOp = t / k;
    if (t < 2e6) k *= 2;
  }
  // final estimate on a chunk of ~2 ms
  const t = await c.loop(c.run, k, now);
  perOp = t / k;
  c.K = Math.max(1, Math.min(1e7, Math.round(targetNs / perOp)));
}

/**
 * Run one timed group in this process.
 * @param {object} spec { group, title, tables: [{ key, title, ctx, baselines: [{role,label}], candidates }], notes, tracker }
 * @param {object} opts { rounds, warmupMs, targetSampleMs, seed }
 */
export async function runTimedGroup(spec, opts) {
  const t0 = performance.now();
  const { tracker } = spec;
  const all = [];
  for (const table of spec.tables) {
    for (const c of table.candidates) {
      c.table = table;
      c.perOp = table.ctx.batchSize ?? 1;
      c.row = { name: c.name, family: c.family, role: c.role ?? null, notes: c.notes ?? '', status: 'ok' };
      all.push(c);
    }
  }
  log(`[g${spec.group}] ${all.length} candidates: setup + sanity`);
  for (const c of all) {
    const where = `${c.row.name}${c.perOp > 1 ? ` [N=${c.perOp}]` : ''}`;
    if (c.buildError) {
      c.row.status = 'error';
      c.row.error = `build failed: ${errMsg(c.buildError)}`;
      continue;
    }
    if (typeof c.run !== 'function') {
      c.row.status = 'error';
      c.row.error = 'candidate has no run() function';
      continue;
    }
    try {
      await c.setup?.();
      tracker.mark(`${where} setup`, c.family);
      const s = await sanityCheck(c, c.table.ctx, opts);
      tracker.mark(`${where} sanity`, c.family);
      if (!s.ok) {
        c.row.status = s.notValidating ? 'not-validating' : 'error';
        c.row.error = s.error;
      } else {
        c.row.validation = s.validation;
      }
    } catch (err) {
      c.row.status = 'error';
      c.row.error = `setup/sanity threw: ${errMsg(err)}`;
    }
  }
  const live = all.filter((c) => c.row.status === 'ok');
  const rnd = mulberry32(opts.seed ?? 42);

  log(`[g${spec.group}] warm-up + calibration (${live.length} timed)`);
  for (const c of shuffle([...live], rnd)) {
    c.loop = makeLoop(c.name);
    c.samples = [];
    try {
      await calibrate(c, opts);
      tracker.mark(`${c.row.name} warm-up`, c.family);
    } catch (err) {
      c.row.status = 'error';
      c.row.error = `run() threw during warm-up: ${errMsg(err)}`;
    }
  }
  const timed = live.filter((c) => c.row.status === 'ok');
  const order = [...timed];
  const totalRounds = opts.rounds + 1; // round 0 is discarded
  let lastLog = performance.now();
  for (let r = 0; r < totalRounds; r++) {
    shuffle(order, rnd);
    for (const c of order) {
      if (c.row.status !== 'ok') continue;
      try {
        const t = await c.loop(c.run, c.K, now);
        if (r > 0) c.samples.push(t / (c.K * c.perOp));
      } catch (err) {
        c.row.status = 'error';
        c.row.error = `run() threw in round ${r}: ${errMsg(err)}`;
      }
    }
    if (performance.now() - lastLog > 5000 || r === totalRounds - 1) {
      log(`[g${spec.group}] round ${r}/${opts.rounds}`);
      lastLog = performance.now();
    }
  }
  for (const c of all) {
    try {
      await c.teardown?.();
    } catch {
      /* ignore */
    }
  }

  // statistics
  const tables = spec.tables.map((table) => {
    const cands = table.candidates;
    for (const c of cands) {
      if (c.row.status !== 'ok') continue;
      Object.assign(c.row, summarize(c.samples), { K: c.K, perOp: c.perOp, samples: c.samples.map((x) => Math.round(x * 10) / 10) });
    }
    const byRole = Object.fromEntries(cands.filter((c) => c.role && c.row.status === 'ok').map((c) => [c.role, c]));
    for (const c of cands) {
      if (c.row.status !== 'ok') continue;
      c.row.ratios = {};
      c.row.pairedRatios = {};
      for (const b of table.baselines) {
        const base = byRole[b.role];
        if (!base) continue;
        c.row.ratios[b.role] = c.row.median / base.row.median;
        const paired = c.samples.map((x, i) => x / base.samples[i]).filter(Number.isFinite);
        c.row.pairedRatios[b.role] = summarize(paired).median;
      }
    }
    return { key: table.key, title: table.title, unit: 'ns/call', baselines: table.baselines, rows: cands.map((c) => c.row) };
  });
  return { tables, wallSeconds: (performance.now() - t0) / 1000 };
}

// ------------------------------------------------------------------ memory group

function gcFull() {
  if (typeof globalThis.gc !== 'function') throw new Error('memory group needs --expose-gc');
  globalThis.gc();
  globalThis.gc();
}
function mem() {
  const m = process.memoryUsage();
  return { heap: m.heapUsed, external: m.external, rss: m.rss };
}
async function runBatches(run, calls, batch, sink) {
  let i = 0;
  const ps = new Array(batch);
  while (i < calls) {
    const n = Math.min(batch, calls - i);
    ps.length = n;
    for (let j = 0; j < n; j++) ps[j] = run();
    const rs = await Promise.all(ps);
    if (sink) for (let j = 0; j < n; j++) sink[i + j] = rs[j];
    i += n;
  }
}

/**
 * Bytes allocated per call, exactly: the growth of V8's new space over `calls` calls awaited one
 * after another, with no garbage collection inside the window (a window a collection fell in is
 * measured again). It needs a new space larger than the window (run.mjs starts the memory group's
 * process with 64 MiB semi-spaces). Unlike time it does not move with the machine's load; it moves a
 * few percent between processes (V8 decides per process where to track allocation sites).
 * Returns the median of `reps` windows, or undefined when every window saw a collection.
 */
async function allocatedPerCall(run, reps) {
  const { getHeapSpaceStatistics } = await import('node:v8');
  const { PerformanceObserver } = await import('node:perf_hooks');
  const newSpace = () => getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_used_size;
  const capacity = getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size;
  const collections = [];
  const observer = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) collections.push([e.startTime, e.startTime + e.duration]);
  });
  observer.observe({ entryTypes: ['gc'] });
  const window = async (calls) => {
    globalThis.gc();
    await new Promise((res) => setImmediate(res));
    const t0 = performance.now();
    const before = newSpace();
    for (let i = 0; i < calls; i++) await run();
    const after = newSpace();
    const t1 = performance.now();
    await new Promise((res) => setTimeout(res, 1)); // gc entries arrive asynchronously
    const collected = collections.some(([a, b]) => b >= t0 && a <= t1);
    return collected ? undefined : (after - before) / calls;
  };
  try {
    // a pilot window sizes the others to fill an eighth of the new space
    const pilot = (await window(100)) ?? (await window(100));
    if (pilot === undefined) return undefined;
    const calls = Math.max(100, Math.min(20_000, Math.floor(capacity / 8 / Math.max(1, pilot))));
    const samples = [];
    for (let r = 0; r < reps + 2 && samples.length < reps; r++) {
      const b = await window(calls);
      if (b !== undefined) samples.push(b);
    }
    return samples.length === 0 ? undefined : { bytesPerCall: summarize(samples).median, calls, samples };
  } finally {
    observer.disconnect();
  }
}

/**
 * Memory group: retained bytes per settled result (N kept alive) and a flat-heap
 * check over M dropped calls. Candidates run one after another (no timing).
 * @param {object} spec { candidates, ctx, tracker, notes }
 * @param {object} opts { retainN, retainReps, flatCalls, flatBudgetMs, batch }
 */
export async function runMemoryGroup(spec, opts) {
  const t0 = performance.now();
  const { ctx, tracker } = spec;
  const rows = [];
  for (const c of spec.candidates) {
    const row = { name: c.name, family: c.family, role: c.role ?? null, notes: c.notes ?? '', status: 'ok' };
    rows.push(row);
    if (c.buildError || typeof c.run !== 'function') {
      row.status = 'error';
      row.error = c.buildError ? `build failed: ${errMsg(c.buildError)}` : 'candidate has no run() function';
      continue;
    }
    try {
      log(`[g4] ${c.name}`);
      await c.setup?.();
      const before = ctx.bodyCalls();
      await c.run();
      if (ctx.bodyCalls() - before !== 1) throw new Error('run() did not execute the tool body (ctx.body / ctx.makeBody()) exactly once');
      tracker.mark(`${c.name} setup`, c.family);
      const tw = performance.now();
      await runBatches(c.run, opts.warmupCalls, opts.batch); // warm-up + lazy module state
      const secPerCall = (performance.now() - tw) / 1000 / opts.warmupCalls;
      row.allocated = await allocatedPerCall(c.run, opts.allocationReps);

      // retained bytes per kept-alive result (a 2nd repetition only if the 1st was quick)
      const tStart = performance.now();
      const reps = [];
      for (let r = 0; r < opts.retainReps; r++) {
        const tr = performance.now();
        let keep = new Array(opts.retainN).fill(0); // slots allocated before the baseline
        gcFull();
        const m0 = mem();
        await runBatches(c.run, opts.retainN, opts.batch, keep);
        gcFull();
        const m1 = mem();
        if (keep[opts.retainN - 1] === 0) throw new Error('results were not collected');
        reps.push({
          heap: (m1.heap - m0.heap) / opts.retainN,
          external: (m1.external - m0.external) / opts.retainN,
          rss: (m1.rss - m0.rss) / opts.retainN,
        });
        keep = null;
        if (performance.now() - tr > opts.retainRepBudgetMs) break;
      }
      const med = (k) => summarize(reps.map((x) => x[k])).median;
      row.retained = {
        n: opts.retainN,
        reps: reps.length,
        seconds: (performance.now() - tStart) / 1000,
        heapBytesPerResult: med('heap'),
        externalBytesPerResult: med('external'),
        rssBytesPerResult: med('rss'),
        samples: reps,
      };

      // flat over M dropped calls. Baseline and toolwire rows always run opts.flatCalls;
      // a peer runs as many as fit in opts.flatBudgetMs (estimated from the warm-up
      // rate), but at least opts.flatMinCalls.
      if (c.flatCheck !== false && opts.flatCalls > 0) {
        const checkpoints = 5;
        const full = c.role === 'plain' || c.family === 'toolwire' || c.flatFull === true;
        let calls = opts.flatCalls;
        if (!full) calls = Math.min(calls, Math.max(opts.flatMinCalls, Math.round(opts.flatBudgetMs / 1000 / secPerCall)));
        const unit = checkpoints * opts.batch;
        calls = Math.max(unit, Math.round(calls / unit) * unit);
        const per = calls / checkpoints;
        gcFull();
        const m0 = mem();
        const trace = [0];
        const start = performance.now();
        for (let k = 0; k < checkpoints; k++) {
          await runBatches(c.run, per, opts.batch);
          globalThis.gc();
          trace.push(mem().heap - m0.heap);
        }
        gcFull();
        const m1 = mem();
        const dHeap = m1.heap - m0.heap;
        const dExt = m1.external - m0.external;
        row.flat = {
          calls,
          truncated: calls < opts.flatCalls,
          seconds: (performance.now() - start) / 1000,
          heapDelta: dHeap,
          externalDelta: dExt,
          rssDelta: m1.rss - m0.rss,
          heapTrace: trace,
          bytesPerCall: (dHeap + dExt) / calls,
          // flat = heap+external grew by < 1 byte per call (noise floor 256 KiB)
          flat: Math.abs(dHeap + dExt) < Math.max(256 * 1024, calls),
        };
      }
      tracker.mark(`${c.name} measured`, c.family);
      await c.teardown?.();
    } catch (err) {
      row.status = 'error';
      row.error = errMsg(err);
    }
  }
  const floor = rows.find((r) => r.role === 'guarantees' && r.allocated);
  if (floor) for (const r of rows) if (r.allocated) r.allocated.ratioToFloor = r.allocated.bytesPerCall / floor.allocated.bytesPerCall;
  const plain = rows.find((r) => r.role === 'plain' && r.retained);
  if (plain) {
    const base = plain.retained.heapBytesPerResult + plain.retained.externalBytesPerResult;
    for (const r of rows) if (r.retained) r.retained.ratioToPlain = (r.retained.heapBytesPerResult + r.retained.externalBytesPerResult) / base;
  }
  return { rows, wallSeconds: (performance.now() - t0) / 1000 };
}

// ------------------------------------------------------------------ output

const fmtInt = (x) => (Number.isFinite(x) ? Math.round(x).toLocaleString('en-US') : '-');
function fmtNs(x) {
  if (!Number.isFinite(x)) return '-';
  if (x < 100) return x.toFixed(1);
  return fmtInt(x);
}
const fmtRatio = (x) => (Number.isFinite(x) ? `${x < 10 ? x.toFixed(2) : x.toFixed(1)}×` : '-');
function fmtBytes(x) {
  if (!Number.isFinite(x)) return '-';
  const a = Math.abs(x);
  if (a >= 1 << 20) return `${(x / (1 << 20)).toFixed(2)} MiB`;
  if (a >= 1 << 10) return `${(x / (1 << 10)).toFixed(1)} KiB`;
  return `${Math.round(x)} B`;
}

function renderTable(headers, rows, align) {
  const w = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells) => cells.map((c, i) => (align[i] === 'r' ? (c ?? '').padStart(w[i]) : (c ?? '').padEnd(w[i]))).join('  ').trimEnd();
  return [line(headers), w.map((n) => '-'.repeat(n)).join('  '), ...rows.map(line)].join('\n');
}

/** Text for one timed table; `clean` (optional) = matching table from the clean re-run. */
export function formatTimedTable(table, clean, cleanLabel = 'alone') {
  const headers = ['candidate', 'median ns/call', 'p25–p75 ns', ...table.baselines.map((b) => `× ${b.label}`)];
  const align = ['l', 'r', 'r', ...table.baselines.map(() => 'r')];
  const cleanRows = clean ? Object.fromEntries(clean.rows.map((r) => [r.name, r])) : null;
  if (cleanRows) {
    headers.push(`${cleanLabel}: median`, `${cleanLabel} × ${table.baselines[0].label}`);
    align.push('r', 'r');
  }
  const errors = [];
  const rows = table.rows.map((r) => {
    if (r.status !== 'ok') {
      errors.push(r);
      return [r.name, r.status === 'not-validating' ? 'NOT VALIDATING' : 'ERROR', '', ...table.baselines.map(() => ''), ...(cleanRows ? ['', ''] : [])];
    }
    const cells = [r.name, fmtNs(r.median), `${fmtNs(r.p25)}–${fmtNs(r.p75)}`, ...table.baselines.map((b) => fmtRatio(r.ratios?.[b.role]))];
    if (cleanRows) {
      const c = cleanRows[r.name];
      cells.push(c?.status === 'ok' ? fmtNs(c.median) : '', c?.status === 'ok' ? fmtRatio(c.ratios?.[table.baselines[0].role]) : '');
    }
    return cells;
  });
  let out = `${table.title}\n${renderTable(headers, rows, align)}`;
  for (const e of errors) out += `\n  ! ${e.name}: ${e.error}`;
  return out;
}

export function formatMemoryTables(result) {
  const rows = result.rows;
  const r1 = rows.map((r) =>
    r.retained
      ? [r.name, fmtInt(r.retained.heapBytesPerResult), fmtInt(r.retained.externalBytesPerResult), fmtInt(r.retained.rssBytesPerResult), fmtRatio(r.retained.ratioToPlain)]
      : [r.name, 'ERROR', '', '', ''],
  );
  const n = rows.find((r) => r.retained)?.retained.n ?? 0;
  let out = `Retained memory per settled result (${n.toLocaleString('en-US')} results kept alive, after full GC)\n`;
  out += renderTable(['candidate', 'heap B/result', 'external B/result', 'rss B/result', '× plain (heap+ext)'], r1, ['l', 'r', 'r', 'r', 'r']);
  const flatRows = rows.filter((r) => r.flat);
  if (flatRows.length) {
    const r2 = flatRows.map((r) => [
      r.name,
      `${fmtInt(r.flat.calls)}${r.flat.truncated ? '*' : ''}`,
      fmtBytes(r.flat.heapDelta),
      fmtBytes(r.flat.externalDelta),
      fmtBytes(r.flat.rssDelta),
      r.flat.bytesPerCall.toFixed(3),
      r.flat.flat ? 'flat' : 'GROWS',
    ]);
    out += `\n\nHeap over dropped calls (results discarded; full GC before/after)\n`;
    out += renderTable(['candidate', 'calls', 'Δ heap', 'Δ external', 'Δ rss', 'B/call (heap+ext)', 'verdict'], r2, ['l', 'r', 'r', 'r', 'r', 'r', 'l']);
    if (flatRows.some((r) => r.flat.truncated)) out += '\n  * fewer calls than the full count: peers run what fits a time budget; baseline and toolwire rows always run the full count';
  }
  const allocated = rows.filter((r) => r.allocated);
  if (allocated.length) {
    const r3 = allocated.map((r) => [r.name, fmtInt(r.allocated.bytesPerCall), fmtInt(r.allocated.calls), fmtRatio(r.allocated.ratioToFloor)]);
    out += `\n\nBytes allocated per call (new space, calls awaited one at a time, no collection inside; unlike time, it does not move with the load)\n`;
    out += renderTable(['candidate', 'B/call', 'calls per window', '× floor'], r3, ['l', 'r', 'r', 'r']);
  }
  for (const r of rows) if (r.status !== 'ok') out += `\n  ! ${r.name}: ${r.error}`;
  return out;
}
