// `node bench/run.mjs --node 20,22,24` (what `npm run bench` does): the whole benchmark
// once per Node.js major, each run a separate `bench/run.mjs` started with that version's
// node (the machine's own, or the pinned build scripts/node-matrix.mjs installs into
// .cache/), then one table of the rows side by side.
//
// A row's ratio to its baseline (the median of its per-round ratios: `pairedRatios`) comes
// from interleaved rounds inside one run, so it is comparable across versions; absolute
// medians come from runs minutes apart on a shared machine and are only a rough second
// opinion. `--saved` prints the comparison of the result files already there, running nothing.
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { nodeFor } from '../scripts/node-matrix.mjs';
import { formatTargets, targetsOf } from './targets.mjs';

const HERE = fileURLToPath(new URL('.', import.meta.url));
const ROOT = join(HERE, '..');

/** The result file of one version's run: latest.json for this machine's node, latest-node<major>.json for others. */
export function resultFile(prefix, node) {
  return join(HERE, 'results', node.own ? `${prefix}.json` : `${prefix}-node${node.major}.json`);
}

/** Rows of one run, keyed by group table and row name: ratio to the table's first baseline, and the absolute figure. */
export function rowsOf(run) {
  const rows = new Map();
  for (const g of run.groups) {
    for (const t of g.tables ?? []) {
      const base = t.baselines[0];
      for (const r of t.rows) {
        if (r.status !== 'ok' || r.role === base.role) continue;
        rows.set(`${t.key}\t${r.name}`, { table: t.key, name: r.name, value: r.median, unit: 'ns', ratio: r.pairedRatios?.[base.role] ?? r.ratios?.[base.role], base: base.label });
      }
    }
    for (const r of g.memory ?? []) {
      if (r.status !== 'ok' || r.role === 'plain' || !r.retained) continue;
      rows.set(`memory\t${r.name}`, { table: 'memory', name: r.name, value: r.retained.heapBytesPerResult + r.retained.externalBytesPerResult, unit: 'B', ratio: r.retained.ratioToPlain, base: 'plain' });
    }
  }
  return rows;
}

const fmtValue = (v, unit) => (v === undefined ? '' : unit === 'B' ? `${Math.round(v)} B` : v >= 1e6 ? `${(v / 1e6).toFixed(2)} ms` : `${Math.round(v).toLocaleString('en-US')} ns`);
const fmtRatio = (r) => (r === undefined ? '' : r >= 10 ? `${r.toFixed(1)}×` : `${r.toFixed(2)}×`);

/** The side-by-side table (Markdown, so it can go into docs as printed). */
export function compare(runs) {
  const perRun = runs.map((r) => rowsOf(r.result));
  const keys = [...new Set(perRun.flatMap((m) => [...m.keys()]))];
  const head = ['table', 'row', ...runs.map((r) => `Node ${r.node.major} × base`), ...runs.slice(1).map((r) => `${r.node.major} vs ${runs[0].node.major} (× base)`), ...runs.map((r) => `Node ${r.node.major} median`)];
  const lines = [`| ${head.join(' | ')} |`, `|${head.map((_, i) => (i < 2 ? '---' : '---:')).join('|')}|`];
  const table = [];
  for (const key of keys) {
    const cells = perRun.map((m) => m.get(key));
    const first = cells.find(Boolean);
    const ratios = cells.map((c) => c?.ratio);
    const rel = ratios.slice(1).map((r) => (r !== undefined && ratios[0] !== undefined ? r / ratios[0] : undefined));
    table.push({ table: first.table, row: first.name, base: first.base, unit: first.unit, ratios, medians: cells.map((c) => c?.value), vsFirst: rel });
    lines.push(`| ${first.table} | ${first.name} | ${ratios.map(fmtRatio).join(' | ')} | ${rel.map(fmtRatio).join(' | ')} | ${cells.map((c) => fmtValue(c?.value, first.unit)).join(' | ')} |`);
  }
  return { markdown: lines.join('\n'), table };
}

/** Runs the benchmark on each major and prints the comparison. `passArgs` go to each run unchanged. */
export function runOnVersions(majors, passArgs, { quick, saved = false }) {
  const prefix = quick ? 'quick' : 'latest';
  const runs = [];
  const t0 = performance.now();
  for (const major of majors) {
    const node = nodeFor(major);
    const out = resultFile(prefix, node);
    if (saved) {
      const result = JSON.parse(readFileSync(out, 'utf8'));
      runs.push({ node, out, seconds: result.totalSeconds, result });
      continue;
    }
    console.log(`\n##### Node.js ${node.version} (V8 ${node.v8}) → ${relative(ROOT, out)}`);
    const started = performance.now();
    const run = spawnSync(node.bin, [join(HERE, 'run.mjs'), ...passArgs, '--out', out], { stdio: 'inherit', cwd: ROOT });
    if (run.status !== 0) throw new Error(`the benchmark on Node.js ${node.version} exited with ${run.status ?? run.signal}`);
    runs.push({ node, out, seconds: (performance.now() - started) / 1000, result: JSON.parse(readFileSync(out, 'utf8')) });
  }
  const { markdown, table } = compare(runs);
  console.log(`\n##### Node.js versions side by side: each row's ratio to its table's baseline (hand-written JSON.parse + ajv; the floor for 1 MiB; plain objects for memory), the median of its per-round ratios in each version's run`);
  for (const r of runs) console.log(`Node.js ${r.node.version}: V8 ${r.node.v8}, ${r.seconds.toFixed(0)} s, load average ${r.result.loadavgAtStart[0].toFixed(1)} at start`);
  console.log(markdown);
  for (const r of runs) console.log(formatTargets(targetsOf(r.result), `Targets (issue #24) on Node.js ${r.node.version}`));
  const summary = {
    date: new Date().toISOString(),
    versions: runs.map((r) => ({ node: r.node.version, v8: r.node.v8, file: relative(ROOT, r.out), seconds: r.seconds, loadavgAtStart: r.result.loadavgAtStart })),
    rows: table,
    targets: runs.map((r) => ({ node: r.node.version, targets: targetsOf(r.result) })),
    totalSeconds: saved ? runs.reduce((n, r) => n + r.seconds, 0) : (performance.now() - t0) / 1000,
  };
  const out = join(HERE, 'results', `${prefix}-versions.json`);
  writeFileSync(out, `${JSON.stringify(summary, null, 2)}\n`);
  console.log(`\nwrote ${relative(ROOT, out)}; total ${summary.totalSeconds.toFixed(0)} s`);
}
