// MCP over HTTP and stdio: toolwire's `serve` against a plain SDK v2 server, both eras, same run.
// Part of `npm run bench` (with its small defaults).
//
//   npm run build:ts && node bench/mcp-modern.mjs [--rounds 7] [--calls 300] [--inflight 16]
//                                                 [--era modern|legacy|both] [--transport http,stdio] [--out <file>]
//                                                 [--cli <dist/cli.js of another build>]
//
// Server processes serve the same echo tool: `toolwire serve echo.mjs --http --stateless`
// (dist/cli.js) and bench/mcp-v2-peer.mjs (`createMcpHandler`, a fresh low-level `Server` per
// request with a shared validator, node:http and a thin adapter). One driver, this process,
// posts raw `tools/call` requests with fetch (keep-alive) to both:
// - modern: revision 2026-07-28, the `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name`
//   headers and the `_meta` envelope (protocol version, client info, capabilities); no
//   initialize, no session;
// - legacy: revision 2025-11-25 without a session (`MCP-Protocol-Version: 2025-11-25`, no
//   envelope), the stateless path of each server.
// Over stdio (`toolwire serve echo.mjs` against the peer's `serveStdio`), one process per
// server and era writes one JSON-RPC message a line: modern calls carry the envelope, a legacy
// connection opens with initialize and notifications/initialized.
// A round runs, for each server and era in a fresh random order, --calls sequential calls then
// --calls calls kept --inflight at a time; a row is the median over rounds of calls per second,
// and the ratio is the median over rounds of toolwire's calls per second over the peer's in the
// same round (above 1.0x: toolwire answers more calls per second). Every answer is checked (status 200, the echoed text). On Linux the server
// processes' CPU time per call (/proc) is also shown, with toolwire's over the peer's (below
// 1.0x: toolwire spends less). Nothing asserts: it prints what this
// machine measured, with its load average, and writes bench/results/mcp-modern.json.
// TOOLWIRE_BENCH_PROF=<dir> has the toolwire servers write V8 CPU profiles there.
import { spawn } from 'node:child_process'
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { loadavg, cpus } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { performance } from 'node:perf_hooks'
import { cpuOf, echoModule, median, option, serveToolwireHttp } from './mcp-lib.mjs'

const HERE = import.meta.dirname
const ROUNDS = Number(option('rounds', 7))
const CALLS = Number(option('calls', 300))
const INFLIGHT = Number(option('inflight', 16))
const ERAS = { modern: ['modern'], legacy: ['legacy'], both: ['modern', 'legacy'] }[option('era', 'both')]
const TRANSPORTS = option('transport', 'http,stdio').split(',')
const OUT = resolve(option('out', join(HERE, 'results', 'mcp-modern.json')))
// --cli <another build's dist/cli.js>: measure that build instead (a before/after on one machine)
const cli = resolve(option('cli', join(HERE, '..', 'dist', 'cli.js')))
if (ERAS === undefined) throw new Error('--era takes modern, legacy or both')

const MODERN = '2026-07-28'
const LEGACY = '2025-11-25'
const envelope = {
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientInfo': { name: 'bench', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
}
const base = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }
const HEADERS = {
  modern: { ...base, 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/call', 'mcp-name': 'echo' },
  legacy: { ...base, 'mcp-protocol-version': LEGACY },
}
let nextId = 0
const bodyOf = (era) =>
  JSON.stringify({ jsonrpc: '2.0', id: ++nextId, method: 'tools/call', params: { name: 'echo', arguments: { text: 'hello' }, ...(era === 'modern' ? { _meta: envelope } : {}) } })

/** Throws unless `text` is a successful echo of 'hello'. */
function check(ok, text, what) {
  if (!ok || !text.includes('\\"text\\":\\"hello\\"') || text.includes('"isError":true') || text.includes('"error"')) {
    throw new Error(`${what} failed: ${text.slice(0, 300)}`)
  }
}

/** A checked HTTP call function for `url`; each call resolves the answer's content type. */
const httpCaller = (url) => async (era) => {
  const response = await fetch(url, { method: 'POST', headers: HEADERS[era], body: bodyOf(era) })
  const text = await response.text()
  check(response.status === 200, text, `${era} call to ${url} (${response.status})`)
  return response.headers.get('content-type')
}

/** Sends one line to `child` and resolves the answer line with the same id. */
function stdioLine(child) {
  const waiting = new Map()
  let buffer = ''
  child.stdout.setEncoding('utf8')
  child.stdout.on('data', (chunk) => {
    buffer += chunk
    for (let nl = buffer.indexOf('\n'); nl !== -1; nl = buffer.indexOf('\n')) {
      const line = buffer.slice(0, nl)
      buffer = buffer.slice(nl + 1)
      const id = JSON.parse(line).id
      waiting.get(id)?.(line)
      waiting.delete(id)
    }
  })
  return (id, body) =>
    new Promise((ok) => {
      if (id !== undefined) waiting.set(id, ok)
      child.stdin.write(`${body}\n`)
      if (id === undefined) ok('')
    })
}

/**
 * A checked call function over `child`'s stdin/stdout for `era`, one JSON-RPC message a line,
 * matched by id. A 2025-11-25 connection opens with initialize and notifications/initialized
 * (the era of a stdio connection is fixed by its first message).
 */
async function stdioCaller(child, era) {
  const send = stdioLine(child)
  if (era === 'legacy') {
    const id = ++nextId
    const init = { jsonrpc: '2.0', id, method: 'initialize', params: { protocolVersion: LEGACY, capabilities: {}, clientInfo: { name: 'bench', version: '1' } } }
    const answer = await send(id, JSON.stringify(init))
    if (!answer.includes('"result"')) throw new Error(`initialize over stdio failed: ${answer.slice(0, 300)}`)
    await send(undefined, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }))
  }
  return async (callEra) => {
    const body = bodyOf(callEra)
    check(true, await send(nextId, body), `${callEra} call over stdio`)
    return 'stdio'
  }
}

/** Calls per second for `calls` calls, `inflight` at a time (1: sequential). */
async function measure(call, era, calls, inflight) {
  let left = calls
  const worker = async () => {
    while (left > 0) {
      left--
      await call(era)
    }
  }
  const t0 = performance.now()
  await Promise.all(Array.from({ length: inflight }, worker))
  return calls / ((performance.now() - t0) / 1000)
}

const { dir, module } = echoModule()
const children = []
// a failed check throws out of the run: the servers go with this process
process.on('exit', () => {
  for (const child of children) child.kill('SIGTERM')
  rmSync(dir, { recursive: true, force: true })
})
async function peerServer() {
  const child = spawn(process.execPath, [join(HERE, 'mcp-v2-peer.mjs'), 'http'], { stdio: ['ignore', 'pipe', 'inherit'] })
  children.push(child)
  const port = await new Promise((ok, fail) => {
    child.stdout.once('data', (d) => ok(String(d).trim()))
    child.once('exit', (code) => fail(new Error(`the SDK v2 peer exited (${code})`)))
  })
  return { pid: child.pid, call: httpCaller(`http://127.0.0.1:${port}/mcp`) }
}
const stdioServer = async (args, era) => {
  const child = spawn(process.execPath, args, { stdio: ['pipe', 'pipe', 'ignore'] })
  children.push(child)
  return { pid: child.pid, era, call: await stdioCaller(child, era) }
}
// TOOLWIRE_BENCH_PROF=<dir>: the toolwire servers (HTTP and stdio) write a V8 CPU profile there
// when the run ends (design/dispatch/spikes/profile-summary.mjs summarises one)
const profile = process.env.TOOLWIRE_BENCH_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.TOOLWIRE_BENCH_PROF}`] : []
const toolwire = await serveToolwireHttp(cli, module, ['--stateless'], profile)
children.push(toolwire.child)
const servers = [
  ['http', 'toolwire', { pid: toolwire.child.pid, call: httpCaller(toolwire.url) }],
  ['http', 'SDK v2', await peerServer()],
]
if (TRANSPORTS.includes('stdio')) {
  // one stdio connection (one process) per server and era
  for (const era of ERAS) {
    servers.push(
      ['stdio', 'toolwire', await stdioServer([...profile, cli, 'serve', module], era)],
      ['stdio', 'SDK v2', await stdioServer([join(HERE, 'mcp-v2-peer.mjs'), 'stdio'], era)],
    )
  }
}

const legs = []
for (const era of ERAS) {
  for (const [transport, server, { pid, call, era: only }] of servers) {
    if (only !== undefined && only !== era) continue
    const contentType = await call(era)
    legs.push({ transport, server, era, call, pid, contentType, seq: [], par: [], cpu: 0 })
  }
}
// warm up (JIT, keep-alive sockets), then interleaved rounds
for (const leg of legs) await measure(leg.call, leg.era, Math.max(50, CALLS / 2), INFLIGHT)
const load = [loadavg()[0]]
for (let r = 0; r < ROUNDS; r++) {
  for (const leg of [...legs].sort(() => Math.random() - 0.5)) {
    const before = cpuOf(leg.pid)
    leg.seq.push(await measure(leg.call, leg.era, CALLS, 1))
    leg.par.push(await measure(leg.call, leg.era, CALLS, INFLIGHT))
    leg.cpu += cpuOf(leg.pid) - before
  }
}
load.push(loadavg()[0])

const eraName = (transport, era) => (era === 'modern' ? `${MODERN} (modern)` : transport === 'stdio' ? `${LEGACY}, initialize` : `${LEGACY}, no session`)
console.log(`\n=== MCP: toolwire serve vs a plain SDK v2 server (createMcpHandler over HTTP, serveStdio), tools/call (echo)`)
console.log(`Node ${process.version}, ${cpus().length} cores, load average ${load.map((l) => l.toFixed(1)).join(' → ')}; ${ROUNDS} rounds × ${CALLS} calls sequential and ${INFLIGHT} in flight; medians of calls/s`)
console.log(`| transport | era | server | sequential | vs SDK v2 | ${INFLIGHT} in flight | vs SDK v2 | server CPU per call | vs SDK v2 | answers |`)
console.log('|---|---|---|---|---|---|---|---|---|---|')
const rows = []
for (const leg of legs) {
  const peer = legs.find((l) => l.transport === leg.transport && l.era === leg.era && l.server === 'SDK v2')
  const row = {
    transport: leg.transport,
    era: leg.era,
    server: leg.server,
    sequentialPerSecond: median(leg.seq),
    inflightPerSecond: median(leg.par),
    sequentialRatio: median(leg.seq.map((x, r) => x / peer.seq[r])),
    inflightRatio: median(leg.par.map((x, r) => x / peer.par[r])),
    serverCpuMicrosPerCall: leg.cpu / (ROUNDS * CALLS * 2),
    serverCpuRatio: leg.cpu / peer.cpu,
    contentType: leg.contentType,
  }
  rows.push(row)
  console.log(
    `| ${leg.transport} | ${eraName(leg.transport, leg.era)} | ${leg.server} | ${row.sequentialPerSecond.toFixed(0)} | ${row.sequentialRatio.toFixed(2)}x | ${row.inflightPerSecond.toFixed(0)} | ${row.inflightRatio.toFixed(2)}x | ${row.serverCpuMicrosPerCall.toFixed(0)} µs | ${row.serverCpuRatio.toFixed(2)}x | ${leg.contentType} |`,
  )
}
mkdirSync(dirname(OUT), { recursive: true })
writeFileSync(OUT, `${JSON.stringify({ date: new Date().toISOString(), node: process.version, cpus: cpus().length, loadavg: load, rounds: ROUNDS, calls: CALLS, inflight: INFLIGHT, rows }, null, 2)}\n`)

if (profile.length > 0) {
  // a profile is written when the process exits by itself: stdio servers at the end of their
  // input, the HTTP server on SIGTERM
  const exits = children.map((child) => new Promise((ok) => (child.exitCode === null ? child.once('exit', ok) : ok())))
  for (const child of children) {
    if (child.stdin !== null) child.stdin.end()
    else child.kill('SIGTERM')
  }
  await Promise.race([Promise.all(exits), new Promise((ok) => setTimeout(ok, 5000))])
  console.log(`CPU profiles of the toolwire servers in ${process.env.TOOLWIRE_BENCH_PROF}`)
}
process.exit(0)
