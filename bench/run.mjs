#!/usr/bin/env node
// `npm run bench` entry point.
//
//   node bench/run.mjs                 all groups (1-4), full rounds → bench/results/latest.json
//   node bench/run.mjs --quick         3 rounds, small memory counts (smoke test) → bench/results/quick.json
//   node bench/run.mjs --group 1       only group 1 (repeatable, or --group 1,3)
//   options: --rounds N  --plugin <path> (default bench/toolwire.mjs)  --no-plugin
//            --out <file>  --clean (always re-run non-polluting rows in a separate process)
//            --seed N
//   node bench/run.mjs --node 20,22,24 the same on each Node.js major (what `npm run bench` runs):
//                                     one run per version (this machine's node, or the pinned
//                                     build in .cache/), then the rows side by side; see versions.mjs
//            --saved                  with --node: only compare the result files of earlier runs
//
// The parent process runs nothing itself: each group runs in its own child
// process (`--child`, started with --expose-gc --expose-internals), where all of
// the group's candidates are interleaved round by round. If a candidate pollutes
// its process (see harness.mjs), the group is re-run in a second child without
// the polluters and both results are shown. Group 1 is always re-run with only
// the baselines (+ toolwire rows) as a check on cross-candidate effects.
// See bench/README.md for the plug-in interface.

import { fork } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, totalmem, platform, arch, loadavg } from 'node:os';
import { dirname, join, resolve, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, '..');

// ------------------------------------------------------------------ options
function parseArgs(argv) {
  const o = { groups: [], quick: false, child: false, exclude: [], plugin: join(HERE, 'toolwire.mjs'), clean: false, seed: 42 };
  for (let i = 0; i < argv.length; i++) {
    let a = argv[i];
    let v;
    const eq = a.indexOf('=');
    if (a.startsWith('--') && eq > 0) {
      v = a.slice(eq + 1);
      a = a.slice(0, eq);
    }
    const val = () => v ?? argv[++i];
    switch (a) {
      case '--quick': o.quick = true; break;
      case '--group': case '-g': o.groups.push(...String(val()).split(',').map(Number)); break;
      case '--rounds': o.rounds = Number(val()); break;
      case '--plugin': o.plugin = resolve(val()); break;
      case '--no-plugin': o.plugin = null; break;
      case '--out': o.out = resolve(val()); break;
      case '--clean': o.clean = true; break;
      case '--seed': o.seed = Number(val()); break;
      case '--child': o.child = true; break;
      case '--node': o.nodes = String(val()).split(',').map(Number); break;
      case '--saved': o.saved = true; break;
      case '--exclude': o.exclude.push(...String(val()).split(',').filter(Boolean)); break;
      case '--help': case '-h':
        console.log('usage: node bench/run.mjs [--node 20,22,24] [--quick] [--group N[,M]] [--rounds N] [--plugin path|--no-plugin] [--out file] [--clean]');
        process.exit(0);
        break;
      default:
        console.error(`unknown option ${a}`);
        process.exit(2);
    }
  }
  if (!o.groups.length) o.groups = [1, 2, 3, 4, 5];
  for (const g of o.groups) if (![1, 2, 3, 4, 5].includes(g)) { console.error(`no group ${g}`); process.exit(2); }
  // targetSampleMs: K (ops per sample) is calibrated so one sample takes about this long.
  // Group 3 ops take milliseconds, so its samples are longer (largeSampleMs).
  o.timing = o.quick
    ? { rounds: o.rounds ?? 3, warmupMs: 40, targetSampleMs: 3, largeSampleMs: 10, seed: o.seed }
    : { rounds: o.rounds ?? 40, warmupMs: 250, targetSampleMs: 20, largeSampleMs: 50, seed: o.seed };
  o.memory = o.quick
    ? { retainN: 10_000, retainReps: 1, retainRepBudgetMs: 1_000, flatCalls: 50_000, flatMinCalls: 2_000, flatBudgetMs: 400, batch: 100, warmupCalls: 500, allocationReps: 1 }
    : { retainN: 100_000, retainReps: 2, retainRepBudgetMs: 2_500, flatCalls: 1_000_000, flatMinCalls: 100_000, flatBudgetMs: 4_000, batch: 100, warmupCalls: 2_000, allocationReps: 5 };
  o.out ??= join(HERE, 'results', o.quick ? 'quick.json' : 'latest.json');
  return o;
}

// ------------------------------------------------------------------ child: one group
async function childMain(opts) {
  const H = await import('./harness.mjs');
  const tracker = new H.PollutionTracker(); // snapshot before any peer/plug-in import
  const W = await import('./workload.mjs');
  const { peerCandidates } = await import('./peers.mjs');
  const group = opts.groups[0];
  const notes = [];
  const exclude = new Set(opts.exclude);
  const plugin = exclude.has('toolwire') ? { note: 'toolwire excluded in this process' } : await H.loadPlugin(opts.plugin);
  tracker.mark('plug-in import', 'toolwire');
  const build = async (ctx) => {
    const peers = await peerCandidates(ctx, { exclude, onFamily: (fam, phase) => phase === 'after' && tracker.mark(`${fam} import + build`, fam) });
    const plug = exclude.has('toolwire') ? [] : (await H.pluginCandidates(plugin, ctx, notes)).filter((c) => !exclude.has(c.name));
    tracker.mark('toolwire candidates(ctx)', 'toolwire');
    return [...peers, ...plug];
  };

  const meta = W.GROUPS[group];
  const result = { group, name: meta.name, title: meta.title, pid: process.pid, excluded: [...exclude], plugin: plugin.note, notes, pollutionDetection: H.pollutionDetection };
  if (tracker.initial.asyncHooksInit) notes.push('async_hooks init hooks were already enabled at process start');

  if (group === 4) {
    const ctx = W.makeContext(4);
    const candidates = await build(ctx);
    const mem = await H.runMemoryGroup({ candidates, ctx, tracker, notes }, opts.memory);
    result.memory = mem.rows;
    result.wallSeconds = mem.wallSeconds;
  } else {
    const tables = [];
    if (group === 1) {
      const ctx = W.makeContext(1);
      tables.push({ key: 'single', title: meta.title, ctx, baselines: [{ role: 'ajv', label: 'ajv' }, { role: 'bare', label: 'bare' }, { role: 'guarantees', label: 'floor' }], candidates: await build(ctx) });
    } else if (group === 2) {
      for (const n of [10, 100]) {
        const ctx = W.makeContext(2, { batchSize: n });
        tables.push({ key: `batch${n}`, title: `Group 2: batch of ${n} parallel calls (Promise.all), ns per call`, ctx, baselines: [{ role: 'ajv', label: 'ajv' }, { role: 'bare', label: 'bare' }], candidates: await build(ctx) });
      }
    } else if (group === 3) {
      const ctx = W.makeContext(3);
      tables.push({ key: 'large', title: `${meta.title} (${(W.BIG_TEXT_BYTES / 1048576).toFixed(0)} MiB)`, ctx, baselines: [{ role: 'floor', label: 'floor' }, { role: 'ajv', label: 'hand' }], candidates: await build(ctx) });
    }
    const timing = group === 3 ? { ...opts.timing, targetSampleMs: opts.timing.largeSampleMs } : opts.timing;
    const timed = await H.runTimedGroup({ group, tables, tracker, notes }, timing);
    result.tables = timed.tables;
    result.wallSeconds = timed.wallSeconds;
  }
  result.polluters = tracker.polluters;

  if (process.send) {
    await new Promise((res) => process.send({ type: 'result', result }, res));
  } else {
    console.log(formatGroup(H, result));
  }
  process.exit(0); // some SDKs leave timers/handles behind
}

// ------------------------------------------------------------------ parent
function runChild(group, opts, extraArgs = []) {
  const args = ['--child', '--group', String(group), '--seed', String(opts.seed), ...extraArgs];
  if (opts.quick) args.push('--quick');
  if (opts.rounds) args.push('--rounds', String(opts.rounds));
  args.push(...(opts.plugin ? ['--plugin', opts.plugin] : ['--no-plugin']));
  return new Promise((res, rej) => {
    const child = fork(fileURLToPath(import.meta.url), args, {
      // the memory group counts bytes allocated per call in a new space no window fills (harness.mjs)
      execArgv: ['--expose-gc', '--expose-internals', ...(group === 4 ? ['--max-semi-space-size=64', '--min-semi-space-size=64'] : [])],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    let result;
    child.on('message', (m) => {
      if (m?.type === 'result') result = m.result;
    });
    child.on('error', rej);
    child.on('exit', (code, sig) => (result ? res(result) : rej(new Error(`group ${group} child exited with ${sig ?? code} and no result`))));
  });
}

function formatGroup(H, res, clean) {
  const parts = [`\n=== ${res.title}  (process ${res.pid}, ${res.wallSeconds.toFixed(1)} s)`];
  if (res.tables) {
    const label = res.polluters?.length ? 'clean' : 'alone';
    for (const t of res.tables) parts.push(H.formatTimedTable(t, clean?.tables?.find((c) => c.key === t.key), label));
  } else if (res.memory) {
    parts.push(H.formatMemoryTables({ rows: res.memory }));
  }
  const notes = [...res.notes];
  for (const p of res.polluters ?? []) notes.push(`POLLUTION: ${p.who} ${p.what.join('; ')}`);
  if (clean) {
    notes.push(`"${res.polluters?.length ? 'clean' : 'alone'}" columns: the same rows measured in a separate process running ${clean.contents} (excluded: ${clean.excluded.join(', ')}); ${clean.reason}. Compare the ratios: absolute ns differ between processes by ±20% on a busy machine`);
    for (const p of clean.polluters ?? []) notes.push(`POLLUTION in the separate process too: ${p.who} ${p.what.join('; ')}`);
  }
  for (const n of notes) parts.push(`  note: ${n}`);
  return parts.join('\n');
}

async function parentMain(opts) {
  const H = await import('./harness.mjs');
  const { FAMILIES } = await import('./peers.mjs');
  const { targetsOf, formatTargets } = await import('./targets.mjs');
  const t0 = performance.now();
  const cpu = cpus();
  const out = {
    date: new Date().toISOString(),
    node: process.version,
    v8: process.versions.v8,
    cpu: cpu[0]?.model ?? 'unknown',
    cpus: cpu.length,
    totalMemBytes: totalmem(),
    platform: `${platform()} ${arch()}`,
    loadavgAtStart: loadavg(),
    quick: opts.quick,
    timing: opts.timing,
    memory: opts.memory,
    groups: [],
  };
  console.log(`toolwire bench: node ${process.version}, ${out.cpu} ×${out.cpus}${opts.quick ? ', QUICK (smoke test)' : ''}, ${opts.timing.rounds} rounds, groups ${opts.groups.join(',')}`);
  if (out.loadavgAtStart[0] > out.cpus * 0.5) console.log(`warning: load average ${out.loadavgAtStart[0].toFixed(1)} on ${out.cpus} cores - other processes are competing; expect noisy absolute times (ratios are more robust)`);
  let pluginNote;
  for (const g of opts.groups) {
    if (g === 5) {
      // cold processes of their own: nothing to run in a child
      const { measureImports, formatImports } = await import('./imports.mjs');
      const imports = measureImports({ rounds: opts.quick ? 3 : 7, seed: opts.seed });
      console.log(formatImports(imports));
      out.groups.push({ group: 5, name: 'imports', title: 'Group 5: import() in a cold process', ...imports });
      continue;
    }
    const res = await runChild(g, opts);
    pluginNote ??= res.plugin;
    let clean;
    const polluterFamilies = [...new Set((res.polluters ?? []).map((p) => p.family))];
    if (g !== 4 && (polluterFamilies.length || opts.clean || g === 1)) {
      let exclude;
      let reason;
      if (polluterFamilies.length) {
        exclude = polluterFamilies;
        reason = 'because the shared process was polluted';
      } else {
        exclude = FAMILIES.filter((f) => f !== 'baseline');
        reason = 'no pollution detected; this only shows how much sharing the process with the peers moves these rows';
      }
      const c = await runChild(g, opts, ['--exclude', exclude.join(',')]);
      clean = { ...c, reason, contents: polluterFamilies.length ? `everything except ${exclude.join(', ')}` : 'the baselines and the toolwire rows' };
      res.separateProcess = { excluded: c.excluded, reason, tables: c.tables, polluters: c.polluters, wallSeconds: c.wallSeconds };
    }
    console.log(formatGroup(H, res, clean));
    out.groups.push(res);
  }
  out.plugin = pluginNote;
  out.targets = targetsOf(out);
  if (out.targets.length !== 0) console.log(formatTargets(out.targets));
  out.loadavgAtEnd = loadavg();
  out.totalSeconds = (performance.now() - t0) / 1000;
  mkdirSync(dirname(opts.out), { recursive: true });
  writeFileSync(opts.out, `${JSON.stringify(out, null, 2)}\n`);
  console.log(`\n${pluginNote}`);
  console.log(`wrote ${relative(ROOT, opts.out)}; total ${out.totalSeconds.toFixed(1)} s`);
}

const opts = parseArgs(process.argv.slice(2));
if (opts.nodes) {
  // every other option goes to each version's run as given
  const argv = process.argv.slice(2);
  const passArgs = argv.filter((a, i) => !(a === '--node' || a === '--saved' || a.startsWith('--node=') || (i > 0 && argv[i - 1] === '--node')));
  if (passArgs.some((a) => a === '--out' || a.startsWith('--out='))) {
    console.error('--out names one file; with --node each version writes its own (bench/results/latest[-node<major>].json)');
    process.exit(2);
  }
  import('./versions.mjs')
    .then((v) => v.runOnVersions(opts.nodes, passArgs, { quick: opts.quick, saved: opts.saved }))
    .catch((err) => {
      console.error(err);
      process.exit(1);
    });
} else if (opts.child) {
  childMain(opts).catch((err) => {
    console.error(err);
    process.exit(1);
  });
} else {
  parentMain(opts).catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
