// Telemetry overhead per call (`npm run bench:telemetry`): the same `tm.callJson` echo call
// through three managers in one process, interleaved over rounds:
//   none          metrics recording stubbed out, no spans (the reference)
//   metrics only  the default: metrics aggregated in the core, tracing off
//   spans on      metrics plus one OpenTelemetry span per call (BasicTracerProvider with a
//                 SimpleSpanProcessor and an exporter that drops spans)
// Prints medians and the overhead over `none`; writes bench/results/telemetry.json.
import { writeFileSync } from 'node:fs'
import os from 'node:os'
import { trace } from '@opentelemetry/api'
import { BasicTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base'
import { ToolManager } from '../dist/index.js'
import { argsText, echoSchema, makeEcho, TOOL_NAME } from './workload.mjs'

const quick = process.argv.includes('--quick')
const ROUNDS = quick ? 5 : 25
const CALLS = quick ? 5_000 : 40_000

const dropping = { export: (_spans, done) => done({ code: 0 }), shutdown: async () => {}, forceFlush: async () => {} }
trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(dropping)] }))

function manager(tag, telemetry) {
  const tm = new ToolManager({ development: false, telemetry })
  tm.register({ name: TOOL_NAME, inputSchema: echoSchema, run: makeEcho(tag) })
  return tm
}

const none = manager('none', { tracing: false })
// the reference: the recorder's per-call methods do nothing
for (const method of ['started', 'settled', 'succeeded']) none.metricsBuffer[method] = () => {}
const candidates = [
  { name: 'none (reference)', tm: none },
  { name: 'metrics only (default)', tm: manager('metrics', { tracing: false }) },
  { name: 'spans on + metrics', tm: manager('spans', undefined) },
]
for (const c of candidates) {
  const r = await c.tm.callJson(TOOL_NAME, argsText)
  if (r.status !== 'ok') throw new Error(`${c.name}: ${JSON.stringify(r)}`)
  c.samples = []
}
// each candidate gets its own copy of the timing loop, so call sites stay monomorphic
const loop = (tm) =>
  new Function('tm', 'name', 'args', 'n', 'return async () => { const t0 = performance.now(); for (let i = 0; i < n; i++) await tm.callJson(name, args); return ((performance.now() - t0) * 1e6) / n }')(
    tm,
    TOOL_NAME,
    argsText,
    CALLS,
  )
for (const c of candidates) c.run = loop(c.tm)
for (const c of candidates) await c.run() // warm-up
for (let round = 0; round < ROUNDS; round++) {
  for (const c of candidates) c.samples.push(await c.run())
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[s.length >> 1]
}
const q = (xs, p) => [...xs].sort((a, b) => a - b)[Math.floor(p * (xs.length - 1))]
const base = median(candidates[0].samples)
const rows = candidates.map((c) => ({
  name: c.name,
  medianNs: Math.round(median(c.samples)),
  p25Ns: Math.round(q(c.samples, 0.25)),
  p75Ns: Math.round(q(c.samples, 0.75)),
  overheadNs: Math.round(median(c.samples) - base),
  ratio: Number((median(c.samples) / base).toFixed(2)),
}))
console.log(`Telemetry overhead per tm.callJson (${ROUNDS} rounds × ${CALLS} calls, ${os.cpus()[0]?.model}, Node ${process.version})`)
console.log('| configuration | median ns/call | p25–p75 | overhead vs none | × none |')
console.log('|---|---:|---:|---:|---:|')
for (const r of rows) console.log(`| ${r.name} | ${r.medianNs} | ${r.p25Ns}–${r.p75Ns} | ${r.overheadNs >= 0 ? '+' : ''}${r.overheadNs} | ${r.ratio.toFixed(2)}× |`)
const out = { date: new Date().toISOString(), node: process.version, cpu: os.cpus()[0]?.model, cpus: os.cpus().length, rounds: ROUNDS, calls: CALLS, rows }
writeFileSync(new URL(`./results/telemetry${quick ? '-quick' : ''}.json`, import.meta.url), `${JSON.stringify(out, null, 2)}\n`)
