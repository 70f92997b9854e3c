// Group 5 of `npm run bench`: the cost of importing each public entry of toolwire, and each
// peer's, in cold processes. Every sample is a fresh `node` that times only its `import()`
// (Node's own start-up is not counted); the candidates are interleaved in a fresh random order
// each round, and the median of the rounds is reported, with the ratio to `import('ai')` (T6).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

/** toolwire's entries come from package.json "exports", so a new subpath is measured without edits here. */
function toolwireEntries() {
  const { exports } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
  return Object.keys(exports)
    .filter((k) => k !== './package.json')
    .map((k) => (k === '.' ? 'toolwire' : `toolwire/${k.slice(2)}`));
}

const PEERS = ['ai', '@modelcontextprotocol/sdk/server/mcp.js', '@openai/agents', '@langchain/core/tools'];

function sampleMs(specifier) {
  const script = `const t = performance.now(); await import(${JSON.stringify(specifier)}); process.stdout.write(String(performance.now() - t))`;
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  return Number(out);
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

/** Runs `rounds` cold imports of every entry and peer; returns rows with medians and ratios to `ai`. */
export function measureImports({ rounds = 7, seed = 1 } = {}) {
  const names = [...toolwireEntries(), ...PEERS];
  const samples = new Map(names.map((n) => [n, []]));
  let state = seed >>> 0 || 1;
  const random = () => ((state = (Math.imul(state, 1103515245) + 12345) >>> 0) / 2 ** 32);
  const t0 = performance.now();
  for (let r = 0; r < rounds + 1; r++) {
    const order = [...names].sort(() => random() - 0.5);
    for (const name of order) {
      let ms;
      try {
        ms = sampleMs(name);
      } catch {
        ms = Number.NaN; // a peer that is not installed
      }
      if (r > 0) samples.get(name).push(ms); // the first round warms the file cache
    }
  }
  const ai = median(samples.get('ai'));
  const rows = names.map((name) => {
    const xs = samples.get(name).filter(Number.isFinite);
    const med = xs.length ? median(xs) : Number.NaN;
    return { name, toolwire: name.startsWith('toolwire'), medianMs: med, min: Math.min(...xs), max: Math.max(...xs), vsAi: med / ai, runs: xs.length };
  });
  return { rounds, rows, wallSeconds: (performance.now() - t0) / 1000 };
}

export function formatImports({ rounds, rows, wallSeconds }) {
  const lines = [`\n=== Group 5: import() in a cold process, median of ${rounds} (${wallSeconds.toFixed(1)} s)`];
  lines.push('| entry | median ms | min–max | × import(\'ai\') |', '|---|---:|---:|---:|');
  for (const r of rows) {
    const name = r.toolwire ? `**${r.name}**` : r.name;
    lines.push(`| ${name} | ${r.medianMs.toFixed(1)} | ${r.min.toFixed(0)}–${r.max.toFixed(0)} | ${r.vsAi.toFixed(2)} |`);
  }
  lines.push('  note: T6 is the toolwire row: import(\'toolwire\') ≤ 0.5× import(\'ai\')');
  return lines.join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const rounds = Number(process.argv[2] ?? 7);
  console.log(formatImports(measureImports({ rounds })));
}
