// The cost of OAuth on a call: `toolwire serve --http` with a static `--token` against the same
// server verifying JWT access tokens (`--auth-issuer`), same run. Part of `npm run bench`.
//
//   npm run build:ts && node bench/auth.mjs [--rounds 5] [--calls 200] [--inflight 16] [--out <file>]
//
// This process runs a loopback issuer (OpenID discovery + a JWKS holding an ES256 and an RS256
// key, minted with jose) and drives four server processes serving the same echo tool with raw
// 2026-07-28 `tools/call` requests (fetch, keep-alive), one process per leg, warmed up alike:
// - static token: `--token`, every request carries the shared token;
// - JWT (`--auth-issuer`), each request carrying an access token for the server's audience: one
//   ES256 token reused (the usual case: the verified-token cache answers), one RS256 token
//   reused, and a fresh ES256 token per call (the worst case: every call verifies a signature). A round runs each leg, in a fresh random order, with --calls
// sequential calls and --calls calls kept --inflight at a time; a row is the median over rounds
// of calls per second and of the server's CPU per call (/proc), and the ratio is the median
// over rounds of the leg's figure over the static token's in the same round. Every answer is
// checked. Nothing asserts: it prints what this machine measured and writes
// bench/results/auth.json.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import { cpus, loadavg } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { performance } from 'node:perf_hooks'
import { SignJWT, exportJWK, generateKeyPair } from 'jose'
import { cpuOf, echoModule, freePort, median, option, serveToolwireHttp } from './mcp-lib.mjs'

const HERE = import.meta.dirname
const ROUNDS = Number(option('rounds', 5))
const CALLS = Number(option('calls', 200))
const INFLIGHT = Number(option('inflight', 16))
const OUT = resolve(option('out', join(HERE, 'results', 'auth.json')))
const cli = join(HERE, '..', 'dist', 'cli.js')
const STATIC_TOKEN = 'bench-static-token-0123456789abcdef'

/** A loopback issuer: discovery documents and a JWKS with one ES256 and one RS256 key; signs tokens for `audience`. */
async function startIssuer() {
  const es = await generateKeyPair('ES256')
  const rs = await generateKeyPair('RS256')
  const keys = [
    { ...(await exportJWK(es.publicKey)), kid: 'es', alg: 'ES256', use: 'sig' },
    { ...(await exportJWK(rs.publicKey)), kid: 'rs', alg: 'RS256', use: 'sig' },
  ]
  const port = await freePort()
  const issuer = `http://127.0.0.1:${port}`
  const documents = {
    '/.well-known/oauth-authorization-server': { issuer, jwks_uri: `${issuer}/jwks`, token_endpoint: `${issuer}/token`, response_types_supported: ['code'] },
    '/.well-known/openid-configuration': { issuer, jwks_uri: `${issuer}/jwks`, token_endpoint: `${issuer}/token`, response_types_supported: ['code'] },
    '/jwks': { keys },
  }
  const server = createServer((req, res) => {
    const doc = documents[new URL(req.url, issuer).pathname]
    res.writeHead(doc === undefined ? 404 : 200, { 'content-type': 'application/json', 'cache-control': 'max-age=60' })
    res.end(doc === undefined ? '{}' : JSON.stringify(doc))
  })
  await new Promise((r) => server.listen(port, '127.0.0.1', r))
  let n = 0
  const sign = (alg, audience) =>
    new SignJWT({ scope: 'echo', client_id: 'bench' })
      .setProtectedHeader({ alg, kid: alg === 'ES256' ? 'es' : 'rs', typ: 'at+jwt' })
      .setIssuer(issuer)
      .setAudience(audience)
      .setSubject(`bench-user-${++n % 3}`)
      .setIssuedAt()
      .setJti(`t${n}`)
      .setExpirationTime('10m')
      .sign(alg === 'ES256' ? es.privateKey : rs.privateKey)
  return { issuer, sign, close: () => new Promise((r) => server.close(r)) }
}

const envelope = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'bench', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
}
const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'echo' }
let nextId = 0
const body = () => JSON.stringify({ jsonrpc: '2.0', id: ++nextId, method: 'tools/call', params: { name: 'echo', arguments: { text: 'hello' }, _meta: envelope } })

/** One checked call to `url` with `token`. */
async function call(url, token) {
  const response = await fetch(url, { method: 'POST', headers: { ...HEADERS, authorization: `Bearer ${token}` }, body: body() })
  const text = await response.text()
  if (response.status !== 200 || !text.includes('\\"text\\":\\"hello\\"') || text.includes('"isError":true')) {
    throw new Error(`call to ${url} failed (${response.status}): ${text.slice(0, 300)}`)
  }
}

/** Runs `calls` calls (`tokenOf(i)` gives each its token), `inflight` at a time; returns elapsed ms. */
async function drive(url, tokenOf, calls, inflight) {
  let next = 0
  const start = performance.now()
  const worker = async () => {
    while (next < calls) {
      const i = next++
      await call(url, tokenOf(i))
    }
  }
  await Promise.all(Array.from({ length: inflight }, worker))
  return performance.now() - start
}

const module = echoModule()
const issuer = await startIssuer()
// one server process per leg, each warmed up and driven alike, so that no leg runs on a process the others warmed
const servers = []
const serve = async (args) => {
  const server = await serveToolwireHttp(cli, module.module, ['--stateless', ...args])
  servers.push(server)
  return server
}
try {
  const staticServer = await serve(['--token', STATIC_TOKEN])
  const esServer = await serve(['--auth-issuer', issuer.issuer])
  const rsServer = await serve(['--auth-issuer', issuer.issuer])
  const freshServer = await serve(['--auth-issuer', issuer.issuer])
  const es = await issuer.sign('ES256', esServer.url)
  const rs = await issuer.sign('RS256', rsServer.url)
  const fresh = []
  for (let i = 0; i < 2 * CALLS * (ROUNDS + 2); i++) fresh.push(await issuer.sign('ES256', freshServer.url))
  let freshAt = 0
  const legs = {
    'static token': { server: staticServer, tokenOf: () => STATIC_TOKEN },
    'JWT ES256, reused': { server: esServer, tokenOf: () => es },
    'JWT RS256, reused': { server: rsServer, tokenOf: () => rs },
    'JWT ES256, new per call': { server: freshServer, tokenOf: () => fresh[freshAt++] },
  }
  // warm-up, the same for every process: discovery, the JWKS, the JIT
  for (const leg of Object.values(legs)) {
    await drive(leg.server.url, leg.tokenOf, CALLS, 1)
    await drive(leg.server.url, leg.tokenOf, CALLS, INFLIGHT)
  }
  const samples = Object.fromEntries(Object.keys(legs).map((name) => [name, { seq: [], par: [], cpu: [] }]))
  for (let round = 0; round < ROUNDS; round++) {
    const order = Object.keys(legs).sort(() => Math.random() - 0.5)
    for (const name of order) {
      const { server, tokenOf } = legs[name]
      const cpu0 = cpuOf(server.child.pid)
      const seqMs = await drive(server.url, tokenOf, CALLS, 1)
      const parMs = await drive(server.url, tokenOf, CALLS, INFLIGHT)
      const cpu = (cpuOf(server.child.pid) - cpu0) / (2 * CALLS)
      samples[name].seq.push((CALLS * 1000) / seqMs)
      samples[name].par.push((CALLS * 1000) / parMs)
      samples[name].cpu.push(cpu)
    }
  }
  const base = samples['static token']
  const ratio = (xs, ys) => median(xs.map((x, i) => x / ys[i]))
  const rows = Object.entries(samples).map(([name, s]) => ({
    leg: name,
    sequentialCallsPerSec: Math.round(median(s.seq)),
    inflightCallsPerSec: Math.round(median(s.par)),
    cpuMicrosPerCall: Math.round(median(s.cpu)),
    sequentialVsStatic: Number(ratio(s.seq, base.seq).toFixed(2)),
    inflightVsStatic: Number(ratio(s.par, base.par).toFixed(2)),
    cpuVsStatic: Number(ratio(s.cpu, base.cpu).toFixed(2)),
  }))
  console.log(`\nMCP over HTTP (2026-07-28, stateless): static token vs JWT verification, ${ROUNDS} rounds x ${CALLS} calls, ${INFLIGHT} in flight`)
  console.log(`node ${process.version}, ${cpus().length} cores, load ${loadavg().map((l) => l.toFixed(2)).join(' ')}`)
  console.log('leg                        seq calls/s  x static   16-in-flight calls/s  x static   server CPU us/call  x static')
  for (const r of rows) {
    console.log(
      `${r.leg.padEnd(26)} ${String(r.sequentialCallsPerSec).padStart(11)}  ${r.sequentialVsStatic.toFixed(2).padStart(8)}x  ${String(r.inflightCallsPerSec).padStart(20)}  ${r.inflightVsStatic.toFixed(2).padStart(8)}x  ${String(r.cpuMicrosPerCall).padStart(18)}  ${r.cpuVsStatic.toFixed(2).padStart(7)}x`,
    )
  }
  mkdirSync(dirname(OUT), { recursive: true })
  writeFileSync(OUT, `${JSON.stringify({ date: new Date().toISOString(), node: process.version, load: loadavg(), rounds: ROUNDS, calls: CALLS, inflight: INFLIGHT, rows }, null, 2)}\n`)
  console.log(`written ${OUT}`)
} finally {
  for (const server of servers) server.child.kill()
  await issuer.close()
  rmSync(module.dir, { recursive: true, force: true })
}
