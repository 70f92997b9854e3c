#!/usr/bin/env node
// `npm run bench:wasm`: the WebAssembly fallback next to the native addon, on this machine.
//
//   node bench/wasm.mjs [--runs N]    → a table, and bench/results/wasm.json
//
// Each measurement runs in a fresh child process, native and wasm alternating, so both see the
// same machine load; the figures are medians over the runs.
//   load    time to require('binding.cjs') in a new process (the addon, or the .wasm module and
//           its worker threads through @napi-rs/wasm-runtime)
//   callJson  tm.callJson('echo', '{"text":"hello","n":3}'): validate in the core, run, settle
//   wire    ToolResult.fromJSON(text).toJSONText(): one result parsed and written by the core
// Needs dist/ (npm run build:ts), the native addon (npm run build:native) and the wasm build
// (npm run build:all -- --only=wasm32-wasi).
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import { cpus, loadavg } from 'node:os'
import { join, resolve } from 'node:path'

const ROOT = resolve(import.meta.dirname, '..')
const MODES = { native: {}, wasm: { NAPI_RS_FORCE_WASI: 'error' } }

if (process.argv[2] === '--child') {
  const what = process.argv[3]
  const t0 = process.hrtime.bigint()
  const { createRequire } = await import('node:module')
  const binding = createRequire(import.meta.url)('../binding.cjs')
  const loadNs = Number(process.hrtime.bigint() - t0)
  if (what === 'load') {
    process.stdout.write(JSON.stringify({ target: binding.__napiBindingTarget, loadNs }))
    process.exit(0)
  }
  const { ToolManager, ToolResult } = await import('../dist/index.js')
  const tm = new ToolManager()
  tm.register({
    name: 'echo',
    inputSchema: { type: 'object', properties: { text: { type: 'string' }, n: { type: 'integer', minimum: 1 } }, required: ['text', 'n'], additionalProperties: false },
    run: ({ text, n }) => ({ echoed: text.repeat(n) }),
  })
  const wire = '{"v":1,"status":"success","output":{"text":"{\\"echoed\\":\\"hellohellohello\\"}","structured":{"echoed":"hellohellohello"}}}'
  const ops = {
    callJson: async () => {
      const r = await tm.callJson('echo', '{"text":"hello","n":3}')
      if (r.status !== 'ok') throw new Error(JSON.stringify(r))
    },
    wire: async () => {
      if (ToolResult.fromJSON(wire).toJSONText() !== wire) throw new Error('wire round trip changed the text')
    },
  }
  const op = ops[what]
  for (let i = 0; i < 2000; i++) await op()
  const samples = []
  for (let round = 0; round < 7; round++) {
    const n = 3000
    const s = process.hrtime.bigint()
    for (let i = 0; i < n; i++) await op()
    samples.push(Number(process.hrtime.bigint() - s) / n)
  }
  samples.sort((a, b) => a - b)
  process.stdout.write(JSON.stringify({ target: binding.__napiBindingTarget, ns: samples[3] }))
  process.exit(0)
}

const runs = Number(process.argv[process.argv.indexOf('--runs') + 1] || 0) || 5
for (const need of ['dist/index.js', 'toolwire.wasm32-wasi.wasm', 'toolwire.wasi.cjs']) {
  if (!existsSync(join(ROOT, need))) throw new Error(`bench:wasm needs ${need}: see the header of bench/wasm.mjs`)
}
const child = (mode, what) => {
  const out = execFileSync(process.execPath, [import.meta.filename, '--child', what], { cwd: ROOT, env: { ...process.env, ...MODES[mode] }, encoding: 'utf8' })
  const r = JSON.parse(out)
  const want = mode === 'wasm' ? 'wasm32-wasi' : 'native'
  if (r.target !== want) throw new Error(`${mode} run loaded ${r.target}`)
  return r
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const results = {}
for (const what of ['load', 'callJson', 'wire']) {
  const got = { native: [], wasm: [] }
  for (let i = 0; i < (what === 'load' ? runs * 2 : runs); i++) {
    for (const mode of Object.keys(MODES)) {
      const r = child(mode, what)
      got[mode].push(what === 'load' ? r.loadNs : r.ns)
    }
  }
  results[what] = { native: median(got.native), wasm: median(got.wasm) }
}

const fmt = (what, ns) => (what === 'load' ? `${(ns / 1e6).toFixed(1)} ms` : `${Math.round(ns).toLocaleString('en-US')} ns`)
console.log(`toolwire native vs wasm32-wasip1-threads: Node ${process.version}, ${process.platform}-${process.arch}, ${cpus().length} CPUs, load average ${loadavg()[0].toFixed(1)}`)
console.log('| measure | native | wasm | wasm ÷ native |')
console.log('|---|---|---|---|')
for (const [what, r] of Object.entries(results)) console.log(`| ${what} | ${fmt(what, r.native)} | ${fmt(what, r.wasm)} | ${(r.wasm / r.native).toFixed(2)} |`)
mkdirSync(join(ROOT, 'bench', 'results'), { recursive: true })
writeFileSync(
  join(ROOT, 'bench', 'results', 'wasm.json'),
  JSON.stringify({ date: new Date().toISOString(), node: process.version, platform: `${process.platform}-${process.arch}`, cpus: cpus().length, loadavg: loadavg()[0], runs, results }, null, 2) + '\n',
)
