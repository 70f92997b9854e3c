// Spike 8 (load): modern-era tools/call at 16 in flight against 08-bench-server.mjs for a few
// seconds (raw fetch, pre-built bodies, keep-alive), plus the stateless 2025 leg of the same
// endpoint; reports calls/s and the server's CPU per call (/proc). One quick measurement only.
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
const SECONDS = Number(process.argv[2] ?? 3)
const cpuOf = (pid) => { const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' '); return ((Number(f[11]) + Number(f[12])) * 1e6) / 100 }
async function run(kind, era) {
  const child = spawn(process.execPath, ['/tmp/sdkv2/spikes/08-bench-server.mjs', kind], { stdio: ['ignore', 'pipe', 'inherit'] })
  const port = await new Promise((r) => child.stdout.once('data', (d) => r(String(d).trim())))
  const url = `http://127.0.0.1:${port}/mcp`
  const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientInfo': { name: 'bench', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': {} }
  const headers = era === 'modern'
    ? { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'echo' }
    : { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' }
  let id = 0, done = 0, errors = 0, stop = false
  const body = () => JSON.stringify({ jsonrpc: '2.0', id: ++id, method: 'tools/call', params: era === 'modern' ? { name: 'echo', arguments: { text: 'hello' }, _meta: meta } : { name: 'echo', arguments: { text: 'hello' } } })
  const worker = async () => { while (!stop) { const r = await fetch(url, { method: 'POST', headers, body: body() }); const t = await r.text(); if (r.status !== 200 || !t.includes('hello')) errors++; else done++ } }
  // warm-up
  stop = false; const w = Array.from({ length: 16 }, worker); await new Promise((r) => setTimeout(r, 1000)); stop = true; await Promise.all(w)
  done = 0; errors = 0; stop = false
  const cpu0 = cpuOf(child.pid), t0 = performance.now()
  const ws = Array.from({ length: 16 }, worker)
  await new Promise((r) => setTimeout(r, SECONDS * 1000)); stop = true; await Promise.all(ws)
  const secs = (performance.now() - t0) / 1000, cpu = cpuOf(child.pid) - cpu0
  child.kill('SIGTERM')
  console.log(`| ${kind} | ${era} | ${(done / secs).toFixed(0)} calls/s | ${(cpu / done).toFixed(0)} µs server CPU/call | ${errors} errors |`)
}
console.log(`Node ${process.version}, 16 in flight, ${SECONDS} s per row after 1 s warm-up; machine shared (2 cores)`)
console.log('| server | era | throughput | server CPU | errors |\n|---|---|---|---|---|')
await run('server', 'modern')
await run('server', 'legacy-stateless')
await run('server-sharedvalidator', 'modern')
await run('mcpserver', 'modern')
