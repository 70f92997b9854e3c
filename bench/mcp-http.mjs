// tools/call latency over MCP: stdio vs Streamable HTTP with sessions vs stateless HTTP.
//
//   npm run build:ts && node bench/mcp-http.mjs [--rounds 15] [--calls 200] [--baseline <another build's dist/cli.js>]
//
// Each transport serves the same one-tool module from its own `toolwire serve` process
// (dist/cli.js); this process is the client (the MCP SDK's Client). A round makes --calls
// sequential `tools/call` on each transport, in a fresh random order of the transports; the
// figure is the median over rounds of the mean time per call, and the ratio to stdio.
// --baseline adds the same three rows served by another build (say, an earlier commit's
// dist/cli.js), measured in the same rounds, for a before/after on one machine.
// On Linux it also reads each server process's CPU time (/proc/<pid>/stat) over the rounds:
// the server's own cost per call, which depends less than wall time on what else the
// machine runs. Nothing here asserts: it prints what this machine measured.
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { cpuOf, echoModule, median, serveToolwireHttp } from './mcp-lib.mjs'

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`)
  return i === -1 ? fallback : Number(process.argv[i + 1])
}
const ROUNDS = arg('rounds', 15)
const CALLS = arg('calls', 200)
const cli = join(import.meta.dirname, '..', 'dist', 'cli.js')
const baselineAt = process.argv.indexOf('--baseline')
const baseline = baselineAt === -1 ? undefined : process.argv[baselineAt + 1]

const { dir, module } = echoModule()

const children = []
const pidOf = new Map()
async function httpServer(cli, stateless) {
  const { child, url } = await serveToolwireHttp(cli, module, stateless ? ['--stateless'] : [])
  children.push(child)
  pidOf.set(url, child.pid)
  return url
}

async function connect(transport, url) {
  const client = new Client({ name: 'bench', version: '1.0.0' })
  await client.connect(transport)
  client.serverPid = url === undefined ? transport.pid : pidOf.get(url)
  return client
}
const http = async (path, stateless) => {
  const url = await httpServer(path, stateless)
  return connect(new StreamableHTTPClientTransport(new URL(url)), url)
}

const builds = baseline === undefined ? [['', cli]] : [['', cli], [' (baseline)', baseline]]
const modes = []
for (const [label, path] of builds) {
  modes.push(
    [`stdio${label}`, await connect(new StdioClientTransport({ command: process.execPath, args: [path, 'serve', module], stderr: 'ignore' }))],
    [`http sessions${label}`, await http(path, false)],
    [`http stateless${label}`, await http(path, true)],
  )
}

const args = { text: 'hello' }
async function round(client, calls) {
  const t0 = performance.now()
  for (let i = 0; i < calls; i++) {
    const result = await client.callTool({ name: 'echo', arguments: args })
    if (result.isError) throw new Error(`echo failed: ${JSON.stringify(result.content)}`)
  }
  return (performance.now() - t0) / calls
}

// warm up (JIT, connections), then interleaved rounds
for (const [, client] of modes) await round(client, Math.max(20, CALLS / 4))
const samples = new Map(modes.map(([name]) => [name, []]))
const serverCpu = new Map(modes.map(([name]) => [name, 0]))
for (let r = 0; r < ROUNDS; r++) {
  const order = [...modes].sort(() => Math.random() - 0.5)
  for (const [name, client] of order) {
    const before = cpuOf(client.serverPid)
    samples.get(name).push(await round(client, CALLS))
    serverCpu.set(name, serverCpu.get(name) + cpuOf(client.serverPid) - before)
  }
}

const base = median(samples.get('stdio'))
console.log(`tools/call, ${ROUNDS} rounds x ${CALLS} sequential calls, Node ${process.version}`)
console.log('| transport | median per call | p25 to p75 | vs stdio | server CPU per call | vs stdio |')
console.log('|---|---|---|---|---|---|')
const cpuBase = serverCpu.get('stdio') / (ROUNDS * CALLS)
for (const [name] of modes) {
  const xs = [...samples.get(name)].sort((a, b) => a - b)
  const q = (p) => xs[Math.min(xs.length - 1, Math.floor(p * xs.length))]
  const m = median(xs)
  const cpu = serverCpu.get(name) / (ROUNDS * CALLS)
  console.log(
    `| ${name} | ${(m * 1000).toFixed(0)} µs | ${(q(0.25) * 1000).toFixed(0)} to ${(q(0.75) * 1000).toFixed(0)} µs | ${(m / base).toFixed(2)}x | ${cpu.toFixed(0)} µs | ${(cpu / cpuBase).toFixed(2)}x |`,
  )
}

for (const [, client] of modes) await client.close()
for (const child of children) child.kill('SIGTERM')
rmSync(dir, { recursive: true, force: true })
