// Several instances on one durable store.
//
// 1. The confirmation page with a shared store: a link made by instance A works on
//    instance B (two serveHttp instances, each with its own manager and its own connection
//    to one SQLite file, and to PostgreSQL when TOOLWIRE_PG_URL is set): single use and
//    expiry come from the store's claim, the CSRF token from the shared secret.
// 2. Two `toolwire serve --http --stateless` processes on one store (PostgreSQL when
//    TOOLWIRE_PG_URL is set, else one SQLite file) behind a round-robin proxy written here:
//    TOOLWIRE_LOAD_CALLS tools/call (default 2000) at concurrency 64 through the SDK's
//    Client, confirmations opened on one instance and approved on the other, and one
//    instance restarted in the middle. Every run appends a line to a file: nothing lost,
//    nothing twice. p50, p99 and throughput are printed, with the same load on one stdio server.
//
// Without TOOLWIRE_PG_URL the PostgreSQL cases are skipped with the reason printed (under CI=true they fail).
import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { getEventListeners } from 'node:events'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, request, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { ElicitRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ToolManager } from '../src/runtime/manager.js'
import { toMcp } from '../src/render/mcp.js'
import type { CallResult } from '../src/core/view.js'
import { serveHttp, type HttpMcpServer } from '../src/mcp/http.js'
import { openPostgresStore, openSqliteStore, type ToolStore } from '../src/runtime/store/index.js'
import { cli, ensureBuilt } from './fixtures/mcp/helpers.js'
import { sqliteUnusable } from './support.js'

const CI = process.env.CI === 'true'
const PG_URL = process.env.TOOLWIRE_PG_URL
const SECRET = 'instances-test-approval-secret-0123456789'
const STORE_KEY = 'a'.repeat(64)

if (PG_URL === undefined) {
  const reason = 'TOOLWIRE_PG_URL is not set (start one with: eval "$(bash scripts/postgres.sh start)")'
  if (CI) throw new Error(`mcp-instances: PostgreSQL is required under CI=true: ${reason}`)
  console.log(`mcp-instances: the PostgreSQL cases are skipped: ${reason}`)
}

/** A schema of its own in the test database, so runs do not see each other's rows. */
const pgSchema = (): string => `tw_inst_${process.pid}_${Math.floor(Math.random() * 1e9).toString(36)}`

const SQLITE_UNUSABLE = await sqliteUnusable()
if (SQLITE_UNUSABLE !== undefined) console.log(`mcp-instances: ${SQLITE_UNUSABLE}`)

type Opener = (dir: string) => Promise<{ open: (now?: () => number) => Promise<ToolStore>; spec: string }>
const stores: [string, Opener | undefined][] = [
  [
    'sqlite',
    SQLITE_UNUSABLE !== undefined ? undefined : async (dir) => {
      const path = join(dir, 'store.db')
      return { open: (now) => openSqliteStore({ path, ...(now === undefined ? {} : { now }) }), spec: `sqlite:${path}` }
    },
  ],
  [
    'postgres',
    PG_URL === undefined
      ? undefined
      : async () => {
          const schema = pgSchema()
          return { open: (now) => openPostgresStore({ connectionString: PG_URL, schema, ...(now === undefined ? {} : { now }) }), spec: `${PG_URL}${PG_URL.includes('?') ? '&' : '?'}options=-c%20search_path%3D${schema}` }
        },
  ],
]

function manager(store: ToolStore, runs: string[], name: string): ToolManager {
  const tm = new ToolManager({ store, approvalSecret: SECRET, storeKey: STORE_KEY })
  tm.register({
    name: 'pay',
    description: 'Pays an invoice',
    inputSchema: { type: 'object', properties: { invoice: { type: 'string' }, amount: { type: 'number' } }, required: ['invoice', 'amount'] },
    needsConfirmation: true,
    summarize: ({ invoice, amount }: { invoice: string; amount: number }) => `Pay ${amount} EUR for invoice ${invoice}`,
    previewChanges: ({ amount }: { invoice: string; amount: number }) => [{ path: 'balance', before: 1000, after: 1000 - amount }],
    run: ({ invoice }: { invoice: string; amount: number }) => {
      runs.push(`${invoice}@${name}`)
      return { paid: invoice }
    },
  })
  return tm
}

async function held(url: string, invoice: string): Promise<{ link: string; confirmId: string }> {
  const client = new Client({ name: 'no-elicitation', version: '1.0.0' })
  await client.connect(new StreamableHTTPClientTransport(new URL(url)))
  try {
    const result = (await client.callTool({ name: 'pay', arguments: { invoice, amount: 120 } })) as CallToolResult
    const meta = result._meta?.['toolwire/confirmation'] as { url: string; confirmId: string }
    return { link: meta.url, confirmId: meta.confirmId }
  } finally {
    await client.close()
  }
}

/** The same link, on another instance. */
const on = (link: string, server: HttpMcpServer): string => new URL(new URL(link).pathname, server.url).href

async function form(link: string, fields: Record<string, string>): Promise<{ status: number; text: string }> {
  const res = await fetch(link, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields).toString() })
  return { status: res.status, text: await res.text() }
}

const csrfOf = (html: string): string => /name="csrf" value="([^"]+)"/.exec(html)![1]!

for (const [kind, opener] of stores) {
  describe.skipIf(opener === undefined)(`the confirmation page on two instances sharing one ${kind} store`, () => {
    let dir: string
    let a: HttpMcpServer
    let b: HttpMcpServer
    let tmA: ToolManager
    let tmB: ToolManager
    let open: (now?: () => number) => Promise<ToolStore>
    const opened: ToolStore[] = []
    const runs: string[] = []
    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), 'toolwire-instances-'))
      ;({ open } = await opener!(dir))
      const storeA = await open()
      const storeB = await open()
      opened.push(storeA, storeB)
      tmA = manager(storeA, runs, 'A')
      tmB = manager(storeB, runs, 'B')
      a = await serveHttp(tmA, { store: storeA, approvalSecret: SECRET })
      b = await serveHttp(tmB, { store: storeB, approvalSecret: SECRET })
    })
    afterAll(async () => {
      await a?.close()
      await b?.close()
      for (const s of opened) await s.close()
      rmSync(dir, { recursive: true, force: true })
    })

    it('a link made on A opens and approves on B, once; A then refuses it too', async () => {
      const { link } = await held(a.url, 'INV-1')
      expect(new URL(link).origin).toBe(new URL(a.url).origin)
      const page = await fetch(on(link, b))
      expect(page.status).toBe(200)
      const html = await page.text()
      expect(html).toContain('Pay 120 EUR for invoice INV-1')
      expect(html).toContain('<td>880</td>')
      // the CSRF token is the same on both instances (derived from the shared secret), and required
      expect(csrfOf(await (await fetch(link)).text())).toBe(csrfOf(html))
      expect((await form(on(link, b), { decision: 'approve' })).status).toBe(403)
      expect((await form(on(link, b), { decision: 'approve', csrf: csrfOf(html).replace(/^./, (c) => (c === 'A' ? 'B' : 'A')) })).status).toBe(403)
      expect(runs).toEqual([])
      const approved = await form(on(link, b), { decision: 'approve', csrf: csrfOf(html) })
      expect(approved.status).toBe(200)
      expect(approved.text).toContain('<code id="outcome">ok</code>')
      expect(runs).toEqual(['INV-1@B'])
      // single use across instances: the store's claim is spent
      expect((await fetch(link)).status).toBe(410)
      expect((await form(link, { decision: 'approve', csrf: csrfOf(html) })).status).toBe(410)
      expect((await form(on(link, b), { decision: 'approve', csrf: csrfOf(html) })).status).toBe(410)
      expect(runs).toEqual(['INV-1@B'])
    })

    it('two instances racing to approve one link: exactly one runs it', async () => {
      const { link } = await held(b.url, 'INV-2')
      const csrf = csrfOf(await (await fetch(link)).text())
      const answers = await Promise.all([a, b, a, b].map((s) => form(on(link, s), { decision: 'approve', csrf })))
      expect(answers.map((x) => x.status).sort()).toEqual([200, 410, 410, 410])
      expect(runs.filter((r) => r.startsWith('INV-2@'))).toHaveLength(1)
    })

    it('denied on A, a link made on B: confirmation_denied, nothing runs, and the confirmId is spent', async () => {
      const { link, confirmId } = await held(b.url, 'INV-3')
      const csrf = csrfOf(await (await fetch(on(link, a))).text())
      const denied = await form(on(link, a), { decision: 'deny', csrf })
      expect(denied.status).toBe(200)
      expect(denied.text).toContain('<code id="outcome">confirmation_denied</code>')
      expect(runs.some((r) => r.startsWith('INV-3@'))).toBe(false)
      expect(await tmB.confirm(confirmId, { approve: true })).toMatchObject({ status: 'refused', code: 'confirmation_used' })
      expect((await fetch(link)).status).toBe(410)
    })

    it('answered through tm.confirm on one instance, the link is dead on both', async () => {
      const { link, confirmId } = await held(a.url, 'INV-4')
      expect((await fetch(on(link, b))).status).toBe(200)
      expect(await tmB.confirm(confirmId, { approve: true })).toMatchObject({ status: 'ok' })
      expect((await fetch(link)).status).toBe(410)
      expect((await fetch(on(link, b))).status).toBe(410)
      expect(runs.filter((r) => r.startsWith('INV-4@'))).toEqual(['INV-4@B'])
    })

    it("expiry is read on the store's clock: an instance whose store clock is past the expiry refuses the link (page and form); nothing runs", async () => {
      const later = await open(() => Date.now() + 24 * 3600_000)
      opened.push(later)
      const tmLate = manager(later, runs, 'late')
      const late = await serveHttp(tmLate, { store: later, approvalSecret: SECRET })
      try {
        const { link } = await held(a.url, 'INV-5')
        const csrf = csrfOf(await (await fetch(link)).text())
        expect((await fetch(on(link, late))).status).toBe(410)
        const answer = await form(on(link, late), { decision: 'approve', csrf })
        expect(answer.status).toBe(410)
        expect(runs.some((r) => r.startsWith('INV-5@'))).toBe(false)
        // the store's claim on that clock refuses it too, and marks it expired for every instance
        const other = await held(a.url, 'INV-5b')
        expect(await tmLate.confirm(other.confirmId, { approve: true })).toMatchObject({ status: 'refused', code: 'confirmation_expired' })
        expect((await fetch(other.link)).status).toBe(410)
        expect(runs.some((r) => r.startsWith('INV-5'))).toBe(false)
      } finally {
        await late.close()
      }
    })

    it('URL elicitation on A, the link approved on B: B runs the call once; A answers its client the result B recorded', async () => {
      const client = new Client({ name: 'url-elicitation', version: '1.0.0' }, { capabilities: { elicitation: { url: {} } } })
      let approval: Promise<{ status: number; text: string }> | undefined
      client.setRequestHandler(ElicitRequestSchema, async (req) => {
        const { url } = req.params as { url: string }
        approval = (async () => form(on(url, b), { decision: 'approve', csrf: csrfOf(await (await fetch(on(url, b))).text()) }))()
        return { action: 'accept' }
      })
      await client.connect(new StreamableHTTPClientTransport(new URL(a.url)))
      try {
        const result = (await client.callTool({ name: 'pay', arguments: { invoice: 'INV-8', amount: 5 } })) as CallToolResult
        expect((await approval!).text).toContain('<code id="outcome">ok</code>')
        expect(runs.filter((r) => r.startsWith('INV-8@'))).toEqual(['INV-8@B'])
        // the call's own result, as B's run gave it: not "already answered"
        expect(result).toMatchObject({ isError: false, structuredContent: { paid: 'INV-8' } })
        expect(JSON.stringify(result.content)).not.toContain('already answered')
      } finally {
        await client.close()
      }
    })

    it.each([
      ['50 KB', 50_000],
      ['1 MB', 1_000_000],
    ])('a %s input: the link stays short, opens and approves on the other instance once, and the call runs with the whole input', async (_, size) => {
      // random text: a sealed copy of it would not compress into a URL
      const invoice = `INV-BIG-${randomBytes(size).toString('base64url').slice(0, size)}`
      const { link } = await held(a.url, invoice)
      expect(link.length).toBeLessThan(4096)
      const page = await fetch(on(link, b))
      expect(page.status).toBe(200)
      const html = await page.text()
      expect(html).toContain(`Pay 120 EUR for invoice ${invoice.slice(0, 200)}`)
      expect(html).toContain('id="shortened"')
      expect(html.length).toBeLessThan(20_000)
      const csrf = csrfOf(html)
      const approved = await form(on(link, b), { decision: 'approve', csrf })
      expect(approved.status).toBe(200)
      expect(approved.text).toContain('<code id="outcome">ok</code>')
      expect(runs.filter((r) => r === `${invoice}@B`)).toHaveLength(1)
      expect((await form(link, { decision: 'approve', csrf })).status).toBe(410)
      expect((await fetch(on(link, b))).status).toBe(410)
      expect(runs.filter((r) => r.startsWith(invoice))).toHaveLength(1)
    })

    it('a link past its own time, altered, or sealed with another secret is 410 on every instance', async () => {
      const { link } = await held(a.url, 'INV-6')
      const path = new URL(link).pathname
      const flipped = path.slice(0, -3) + (path.at(-3) === 'A' ? 'B' : 'A') + path.slice(-2)
      expect((await fetch(new URL(flipped, b.url))).status).toBe(410)
      const otherStore = opened[0]!
      const other = await serveHttp(manager(otherStore, runs, 'other'), { store: otherStore, approvalSecret: 'another-secret-of-sixteen-bytes-or-more' })
      const short = await serveHttp(tmA, { store: otherStore, approvalSecret: SECRET, confirmPageTtlMs: 0 })
      try {
        expect((await fetch(on(link, other))).status).toBe(410)
        const { link: expired } = await held(short.url, 'INV-7')
        expect((await fetch(expired)).status).toBe(410)
        expect((await fetch(on(expired, b))).status).toBe(410)
      } finally {
        await other.close()
        await short.close()
      }
      expect((await fetch(link)).status).toBe(200)
      expect(runs.some((r) => r.startsWith('INV-6@') || r.startsWith('INV-7@'))).toBe(false)
    })
  })
}

// ---------------------------------------------------------------- several processes, under load

const LOAD_CALLS = Number(process.env.TOOLWIRE_LOAD_CALLS ?? 2000)
const CONCURRENCY = 64
const CONFIRMATIONS = 10

function writeLoadModule(dir: string, log: string): string {
  const path = join(dir, 'load-tools.mjs')
  writeFileSync(
    path,
    `import { appendFileSync } from 'node:fs'
const log = ${JSON.stringify(log)}
export default [
  {
    name: 'bump',
    description: 'Counts one run of n',
    inputSchema: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'], additionalProperties: false },
    run({ n }) {
      appendFileSync(log, 'b ' + n + ' ' + process.pid + '\\n')
      return { n }
    },
  },
  {
    name: 'pay',
    description: 'Pays invoice n (needs confirmation)',
    inputSchema: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'], additionalProperties: false },
    needsConfirmation: true,
    summarize: ({ n }) => 'Pay invoice ' + n,
    run({ n }) {
      appendFileSync(log, 'c ' + n + ' ' + process.pid + '\\n')
      return { paid: n }
    },
  },
]
`,
  )
  return path
}

interface Instance {
  /** The port the current process listens on. */
  port: number
  /** Every port the instance listened on (a restart listens on a new one). */
  ports: number[]
  child: ChildProcess
  pids: number[]
  /** Resolves when the current process listens (and `port` is its port); replaced on a restart. */
  ready: Promise<void>
}

/**
 * Starts `toolwire serve --http` on a port the kernel picks (`:0`), read back from the URL it
 * prints: a port found free beforehand and handed to the child could be taken by another test
 * file's server (vitest runs files in parallel) in the seconds the child takes to start.
 */
function start(inst: Pick<Instance, 'pids'>, args: string[], env: NodeJS.ProcessEnv): { child: ChildProcess; ready: Promise<number> } {
  const child = spawn(process.execPath, [cli, 'serve', ...args, '--http', '127.0.0.1:0', '--stateless'], { env, stdio: ['ignore', 'ignore', 'pipe'] })
  inst.pids.push(child.pid!)
  let err = ''
  const ready = new Promise<number>((resolve, reject) => {
    child.stderr!.on('data', (chunk: Buffer) => {
      err += chunk.toString()
      const listening = / at http:\/\/127\.0\.0\.1:(\d+)\//.exec(err)
      if (listening !== null) resolve(Number(listening[1]))
    })
    child.once('exit', (code) => reject(new Error(`serve exited (${code}) before listening: ${err}`)))
  })
  return { child, ready }
}

const exited = (child: ChildProcess): Promise<void> =>
  child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise((r) => child.once('exit', () => r()))

/** Counts of what the round-robin proxy retried on the other instance (each: the request never reached a handler). */
interface ProxyStats {
  refused: number
  shuttingDown: number
  staleSocket: number
  /** A new connection reset before any answer: it waited in the listen queue of an instance that stopped listening. */
  queuedReset: number
  failed: number
}

/**
 * A round-robin HTTP proxy over `ports`. A request goes to the next instance; it is sent to
 * the other one only when it ran nowhere: the connection was refused, the instance answered 503
 * while shutting down, a reused keep-alive socket was closed before any answer, or a new
 * connection was reset before any answer. The last happens to connections still waiting in the
 * listen queue when a stopping instance closes its listener (the kernel resets them; Node never
 * accepted them): the instances stop gracefully, answering every request they read, so a
 * request reset without an answer never ran, and the double-run count checks exactly that.
 */
async function roundRobin(ports: readonly number[]): Promise<{ server: Server; url: string; stats: ProxyStats }> {
  const stats: ProxyStats = { refused: 0, shuttingDown: 0, staleSocket: 0, queuedReset: 0, failed: 0 }
  const { Agent } = await import('node:http')
  const agent = new Agent({ keepAlive: true, maxSockets: 128 })
  let next = 0
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const body = Buffer.concat(chunks)
      const attempt = (tries: number): void => {
        const port = ports[next++ % ports.length]!
        const headers = { ...req.headers, host: `127.0.0.1:${port}` }
        const up = request({ host: '127.0.0.1', port, method: req.method, path: req.url, headers, agent }, (answer) => {
          if (answer.statusCode === 503 && answer.headers.connection === 'close' && tries < 50) {
            stats.shuttingDown++
            answer.resume()
            attempt(tries + 1)
            return
          }
          res.writeHead(answer.statusCode ?? 502, answer.headers)
          answer.pipe(res)
        })
        up.on('error', (error: NodeJS.ErrnoException) => {
          // a reset or a broken pipe before any answer: the instance closed the socket without reading the request
          const reset = error.code === 'ECONNRESET' || error.code === 'EPIPE'
          const retry = error.code === 'ECONNREFUSED' ? 'refused' : reset ? (up.reusedSocket ? 'staleSocket' : 'queuedReset') : undefined
          if (retry !== undefined && tries < 50 && !res.headersSent) {
            stats[retry]++
            // both may be down for a moment during a restart: the next try goes to the other one
            setTimeout(() => attempt(tries + 1), tries < ports.length ? 0 : 20)
            return
          }
          stats.failed++
          if (!res.headersSent) res.writeHead(502).end()
          else res.destroy()
        })
        up.end(body)
      }
      attempt(0)
    })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  server.on('close', () => agent.destroy())
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, stats }
}

interface LoadFigures {
  calls: number
  ok: number
  failed: number
  p50: number
  p99: number
  seconds: number
}

/** `calls` bump calls at `CONCURRENCY` through `client`; `onDone(count)` after each. */
async function load(client: Client, calls: number, onDone: (done: number) => void = () => undefined): Promise<LoadFigures & { errors: string[] }> {
  const latencies: number[] = []
  const errors: string[] = []
  let issued = 0
  let done = 0
  const began = performance.now()
  const worker = async (): Promise<void> => {
    while (issued < calls) {
      const n = issued++
      const t0 = performance.now()
      try {
        const result = (await client.callTool({ name: 'bump', arguments: { n } })) as CallToolResult
        if (result.isError === true) errors.push(`${n}: ${JSON.stringify(result.content)}`)
        else latencies.push(performance.now() - t0)
      } catch (error) {
        errors.push(`${n}: ${(error as Error).message}`)
      }
      onDone(++done)
    }
  }
  await Promise.all(Array.from({ length: CONCURRENCY }, worker))
  const seconds = (performance.now() - began) / 1000
  latencies.sort((x, y) => x - y)
  const pct = (p: number): number => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))] ?? NaN
  return { calls, ok: latencies.length, failed: errors.length, p50: pct(50), p99: pct(99), seconds, errors }
}

/** Runs per `n` of one kind of line (`b` or `c`) in the side-effect log. */
function runsIn(log: string, kind: 'b' | 'c'): Map<number, number[]> {
  const runs = new Map<number, number[]>()
  let text = ''
  try {
    text = readFileSync(log, 'utf8')
  } catch {
    return runs
  }
  for (const line of text.split('\n')) {
    const [k, n, pid] = line.split(' ')
    if (k !== kind) continue
    const list = runs.get(Number(n)) ?? []
    list.push(Number(pid))
    runs.set(Number(n), list)
  }
  return runs
}

/** One HTTP request on a new connection (`agent: false`: `Connection: close`), as a fetch `Response`. */
function freshRequest(port: number, path: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<Response> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method: init.method ?? 'GET', headers: init.headers, agent: false }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => resolve(new Response(res.statusCode === 204 ? null : Buffer.concat(chunks), { status: res.statusCode ?? 0 })))
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end(init.body)
  })
}

function lostAndTwice(runs: Map<number, number[]>, count: number): { lost: number; twice: number } {
  let lost = 0
  let twice = 0
  for (let n = 0; n < count; n++) {
    const r = runs.get(n)?.length ?? 0
    if (r === 0) lost++
    if (r > 1) twice++
  }
  return { lost, twice }
}

const ms = (x: number): string => `${x.toFixed(1)} ms`

/**
 * `fetch` for an SDK client making thousands of requests. The transport passes one AbortSignal
 * to every request, and Node's fetch (undici) adds an abort listener to it per request that it
 * removes only when the request is garbage-collected; past 1,500 at once every request printed a
 * MaxListenersExceededWarning (5,585 lines in one CI log). Lifting the signal's limit held only
 * on Node 20: on 22 and 24 undici sets the limit back to 1,500 once 10 listeners are on the
 * signal. So each request gets a signal of its own that follows the shared one
 * (`AbortSignal.any` keeps its followers by weak reference, not as listeners): undici's
 * listener goes on that signal and goes with the request. Not toolwire's (the server is another
 * process): the SDK's client and Node's fetch.
 */
const ownAbortSignal: typeof fetch = (input, init) => fetch(input, init?.signal ? { ...init, signal: AbortSignal.any([init.signal]) } : init)

describe("the load test's fetch", () => {
  it('adds no listener to the shared AbortSignal, however many requests use it: no MaxListenersExceededWarning', async () => {
    const port = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as AddressInfo).port
        s.close(() => resolve(p))
      })
    })
    const warnings: string[] = []
    const onWarning = (w: Error): void => void warnings.push(w.name)
    process.on('warning', onWarning)
    try {
      const shared = new AbortController().signal
      // started in one go, as the load test's 64 workers do over its run: every request holds its listener at once
      const requests = Array.from({ length: 1600 }, () => ownAbortSignal(`http://127.0.0.1:${port}/`, { signal: shared }).catch(() => undefined))
      expect(getEventListeners(shared, 'abort')).toHaveLength(0)
      await Promise.all(requests)
      await new Promise((r) => setImmediate(r))
    } finally {
      process.off('warning', onWarning)
    }
    expect(warnings.filter((w) => w === 'MaxListenersExceededWarning')).toEqual([])
  })

  it('still aborts a request when the shared signal aborts', async () => {
    const server = createServer(() => undefined).listen(0, '127.0.0.1')
    await new Promise((r) => server.once('listening', r))
    try {
      const shared = new AbortController()
      const pending = ownAbortSignal(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`, { signal: shared.signal })
      shared.abort(new Error('client closed'))
      await expect(pending).rejects.toThrow('client closed')
    } finally {
      server.closeAllConnections()
      server.close()
    }
  })
})

describe.skipIf(PG_URL === undefined && SQLITE_UNUSABLE !== undefined)('two `toolwire serve --http --stateless` processes on one store, behind a round-robin proxy', () => {
  const kind = PG_URL === undefined ? 'sqlite' : 'postgres'
  let dir: string
  let log: string
  let module: string
  let spec: string
  let reader: ToolStore
  let env: NodeJS.ProcessEnv
  const instances: Instance[] = []
  let proxyPorts: number[] = []
  let proxy: Awaited<ReturnType<typeof roundRobin>>

  beforeAll(async () => {
    ensureBuilt()
    dir = mkdtempSync(join(tmpdir(), 'toolwire-load-'))
    log = join(dir, 'runs.log')
    module = writeLoadModule(dir, log)
    const opener = stores.find(([k]) => k === kind)![1]!
    const made = await opener(dir)
    spec = made.spec
    // opened here first: the schema and tables exist before the instances start
    reader = await made.open()
    if (kind === 'sqlite') console.log('mcp-instances: the load test shares one SQLite file (TOOLWIRE_PG_URL is not set)')
    env = { ...process.env, TOOLWIRE_APPROVAL_SECRET: SECRET, TOOLWIRE_STORE_KEY: STORE_KEY, TOOLWIRE_STORE: spec, TOOLWIRE_TOKEN: undefined }
    for (let i = 0; i < 2; i++) {
      const inst: Instance = { port: 0, ports: [], pids: [], child: undefined as never, ready: Promise.resolve() }
      const next = start(inst, [module], env)
      inst.child = next.child
      inst.ready = next.ready.then((port) => {
        inst.port = port
        inst.ports.push(port)
      })
      instances.push(inst)
    }
    await Promise.all(instances.map((i) => i.ready))
    // the proxy reads the ports on each attempt: a restarted instance's new port replaces its old one
    proxyPorts = instances.map((i) => i.port)
    proxy = await roundRobin(proxyPorts)
  }, 120_000)

  afterAll(async () => {
    proxy?.server.close()
    proxy?.server.closeAllConnections()
    for (const inst of instances) {
      inst.child.kill('SIGTERM')
      await exited(inst.child)
    }
    await reader?.close()
    rmSync(dir, { recursive: true, force: true })
  })

  it(
    `${LOAD_CALLS} tools/call at concurrency ${CONCURRENCY}, ${CONFIRMATIONS} confirmations made on one instance and approved on the other, one instance restarted midway: nothing lost, nothing twice`,
    async () => {
      const client = new Client({ name: 'load', version: '1.0.0' })
      await client.connect(new StreamableHTTPClientTransport(new URL(proxy.url), { fetch: ownAbortSignal }))
      const restarted = { begun: false, done: Promise.resolve() }
      const restart = async (inst: Instance): Promise<void> => {
        let ready!: () => void
        inst.ready = new Promise((r) => (ready = r))
        inst.child.kill('SIGTERM')
        await exited(inst.child)
        const next = start(inst, [module], env)
        inst.child = next.child
        inst.port = await next.ready
        inst.ports.push(inst.port)
        proxyPorts[instances.indexOf(inst)] = inst.port
        ready()
      }
      // progress thresholds the confirmations wait for (resolved by the load itself)
      const thresholds = new Map<number, () => void>()
      let completed = 0
      const reached = (count: number): Promise<void> => (completed >= count ? Promise.resolve() : new Promise((r) => thresholds.set(count, r)))
      const onDone = (done: number): void => {
        completed = done
        thresholds.get(done)?.()
        if (!restarted.begun && done >= LOAD_CALLS / 2) {
          restarted.begun = true
          restarted.done = restart(instances[1]!)
        }
      }
      /**
       * A request to one instance on a connection of its own (never a kept-alive one, which the
       * instance may close as it stops just as the request goes out); a refused connection, or one
       * reset before any answer (it waited in the listen queue of the stopping instance, which
       * answers every request it read: nothing ran), or a 503 from an instance that is stopping,
       * waits for the restart and tries again.
       */
      const to = async (inst: Instance, path: string, init?: { method?: string; headers?: Record<string, string>; body?: string }): Promise<Response> => {
        for (let tries = 0; ; tries++) {
          await inst.ready
          try {
            const answer = await freshRequest(inst.port, path, init)
            // 503: the instance is stopping and answered before any handler ran (as the proxy retries)
            if (answer.status !== 503 || tries > 100) return answer
            await answer.text()
            await restarted.done
            continue
          } catch (error) {
            const code = (error as NodeJS.ErrnoException).code
            if (tries > 100 || (code !== 'ECONNREFUSED' && code !== 'ECONNRESET' && code !== 'EPIPE')) throw error
            await restarted.done
          }
        }
      }
      const confirmationsDone = (async () => {
        const out: { n: number; maker: number; approver: number; approved: string; reused: number }[] = []
        for (let n = 0; n < CONFIRMATIONS; n++) {
          await reached(Math.floor(((n + 1) * LOAD_CALLS) / (CONFIRMATIONS + 2)))
          const result = (await client.callTool({ name: 'pay', arguments: { n } })) as CallToolResult
          const url = new URL((result._meta?.['toolwire/confirmation'] as { url: string }).url)
          const maker = instances.findIndex((i) => i.ports.includes(Number(url.port)))
          const approver = instances[1 - maker]!
          const page = await to(approver, url.pathname)
          const html = await page.text()
          const body = new URLSearchParams({ decision: 'approve', csrf: csrfOf(html) }).toString()
          const post = { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body }
          const approved = await (await to(approver, url.pathname, post)).text()
          const reused = (await to(instances[maker]!, url.pathname, post)).status
          out.push({ n, maker, approver: 1 - maker, approved: /id="outcome">([^<]+)</.exec(approved)?.[1] ?? approved.slice(0, 200), reused })
        }
        return out
      })()
      const figures = await load(client, LOAD_CALLS, onDone)
      const confirmations = await confirmationsDone
      await restarted.done
      await client.close()

      const bumps = lostAndTwice(runsIn(log, 'b'), LOAD_CALLS)
      const pays = runsIn(log, 'c')
      const confirmed = lostAndTwice(pays, CONFIRMATIONS)
      console.log(
        [
          `mcp-instances load (${kind} store, 2 stateless instances behind a round-robin proxy, instance 2 restarted at ${LOAD_CALLS / 2} calls):`,
          `  calls ${figures.calls}, answered ok ${figures.ok}, failed ${figures.failed}, lost ${bumps.lost}, double runs ${bumps.twice}`,
          `  p50 ${ms(figures.p50)}, p99 ${ms(figures.p99)}, throughput ${(figures.calls / figures.seconds).toFixed(0)} calls/s (${figures.seconds.toFixed(1)} s)`,
          `  confirmations ${CONFIRMATIONS}: approved on the other instance ${confirmations.filter((c) => c.approved === 'ok').length}, reused link refused ${confirmations.filter((c) => c.reused === 410).length}, lost ${confirmed.lost}, double runs ${confirmed.twice}`,
          `  proxy retries (never reached a handler): refused ${proxy.stats.refused}, shutting down ${proxy.stats.shuttingDown}, stale keep-alive ${proxy.stats.staleSocket}, reset in the listen queue ${proxy.stats.queuedReset}; failed ${proxy.stats.failed}`,
          ...figures.errors.slice(0, 5).map((e) => `  error ${e}`),
        ].join('\n'),
      )
      expect(instances[1]!.pids).toHaveLength(2)
      expect(figures.errors).toEqual([])
      expect(bumps).toEqual({ lost: 0, twice: 0 })
      expect(confirmations.map((c) => [c.approved, c.reused])).toEqual(Array.from({ length: CONFIRMATIONS }, () => ['ok', 410]))
      expect(confirmed).toEqual({ lost: 0, twice: 0 })
      // each confirmation ran on the instance that approved it, not the one that parked it
      for (const c of confirmations) expect(instances[c.approver]!.pids).toContain(pays.get(c.n)![0])
      // and the store holds no call left parked, running or unknown
      expect(await reader.listParked('parked')).toEqual([])
      expect(await reader.listParked('running')).toEqual([])
      expect(await reader.listParked('unknown')).toEqual([])
    },
    600_000,
  )

  it(`the same load on one stdio server (${kind} store), for comparison`, async () => {
    const stdioLog = join(dir, 'stdio-runs.log')
    const stdioModule = writeLoadModule(mkdtempSync(join(dir, 'stdio-')), stdioLog)
    const client = new Client({ name: 'load-stdio', version: '1.0.0' })
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [cli, 'serve', stdioModule], env: env as Record<string, string>, stderr: 'ignore' }))
    try {
      const figures = await load(client, LOAD_CALLS)
      const bumps = lostAndTwice(runsIn(stdioLog, 'b'), LOAD_CALLS)
      console.log(
        [
          `mcp-instances load on one stdio server (${kind} store):`,
          `  calls ${figures.calls}, answered ok ${figures.ok}, failed ${figures.failed}, lost ${bumps.lost}, double runs ${bumps.twice}`,
          `  p50 ${ms(figures.p50)}, p99 ${ms(figures.p99)}, throughput ${(figures.calls / figures.seconds).toFixed(0)} calls/s (${figures.seconds.toFixed(1)} s)`,
        ].join('\n'),
      )
      expect(figures.errors).toEqual([])
      expect(bumps).toEqual({ lost: 0, twice: 0 })
    } finally {
      await client.close()
    }
  }, 600_000)
})

describe('toolwire serve --store', () => {
  it('with --http needs TOOLWIRE_APPROVAL_SECRET, and takes only sqlite:<file> or postgres://…: usage errors (64), the connection string never echoed', async () => {
    ensureBuilt()
    const { spawnSync } = await import('node:child_process')
    const run = (args: string[], extra: NodeJS.ProcessEnv = {}): { status: number | null; stderr: string } => {
      const r = spawnSync(process.execPath, [cli, 'serve', ...args], { env: { ...process.env, TOOLWIRE_STORE: '', TOOLWIRE_APPROVAL_SECRET: '', ...extra }, encoding: 'utf8', timeout: 30_000 })
      return { status: r.status, stderr: r.stderr }
    }
    const noSecret = run(['--http', '127.0.0.1:0', '--store', 'sqlite:/nonexistent/x.db'])
    expect(noSecret.status).toBe(64)
    expect(noSecret.stderr).toContain('TOOLWIRE_APPROVAL_SECRET')
    const short = run(['--http', '127.0.0.1:0', '--store', 'sqlite:/nonexistent/x.db'], { TOOLWIRE_APPROVAL_SECRET: 'short' })
    expect(short.status).toBe(64)
    const bad = run(['--http', '127.0.0.1:0', '--store', 'mysql://x'], { TOOLWIRE_APPROVAL_SECRET: SECRET })
    expect(bad.status).toBe(64)
    expect(bad.stderr).toContain('--store takes sqlite:<file> or postgres://')
    const unreachable = run(['--http', '127.0.0.1:0', '--store', 'postgres://user:hunter2-password@127.0.0.1:1/db'], { TOOLWIRE_APPROVAL_SECRET: SECRET })
    expect(unreachable.status).toBe(64)
    expect(unreachable.stderr).toContain('cannot open the store (postgres)')
    expect(unreachable.stderr).not.toContain('hunter2')
  }, 120_000)
})

describe('a restart loses no call: close() drains the requests in flight', () => {
  it('a call running when close() is called still answers; a request arriving meanwhile on an open connection gets 503 (nothing ran), a new connection is refused', async () => {
    let started!: () => void
    const running = new Promise<void>((r) => (started = r))
    let release!: () => void
    const released = new Promise<void>((r) => (release = r))
    const ran: string[] = []
    const tm = new ToolManager()
    tm.register({
      name: 'hold',
      inputSchema: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
      run: async ({ id }: { id: string }) => {
        started()
        await released
        ran.push(id)
        return { id }
      },
    })
    tm.register({ name: 'other', inputSchema: { type: 'object' }, run: () => ran.push('other') })
    const served = await serveHttp(tm, { stateless: true })
    const { Agent } = await import('node:http')
    // one kept-alive connection, opened before close(): a request on it after close() must not run
    const agent = new Agent({ keepAlive: true, maxSockets: 2 })
    const post = (body: object): Promise<{ status: number; text: string }> =>
      new Promise((resolve, reject) => {
        const req = request(served.url, { method: 'POST', agent, headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' } }, (res) => {
          let text = ''
          res.on('data', (c: Buffer) => (text += c.toString()))
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text }))
        })
        req.on('error', reject)
        req.end(JSON.stringify(body))
      })
    const call = (name: string, args: object, id: number): object => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } })
    try {
      expect((await post(call('other', {}, 1))).status).toBe(200) // warms the second socket
      ran.length = 0
      const first = post(call('hold', { id: 'in-flight' }, 2))
      await running
      const closing = served.close()
      const during = await post(call('other', {}, 3)).catch((error: NodeJS.ErrnoException) => ({ status: 0, text: error.code ?? '' }))
      // a kept-alive socket gets 503 (or is closed before any answer); either way nothing ran
      expect([503, 0]).toContain(during.status)
      if (during.status === 503) expect(during.text).toContain('shutting down')
      await expect(fetch(served.url, { method: 'POST', body: '{}' })).rejects.toThrow()
      release()
      const answered = await first
      expect(answered.status).toBe(200)
      expect(answered.text).toContain('in-flight')
      await closing
      expect(ran).toEqual(['in-flight'])
    } finally {
      release()
      agent.destroy()
      await served.close()
    }
  })
})

// ---------------------------------------------------------------- URL elicitation answered on another instance

for (const [kind, opener] of stores) {
  describe.skipIf(opener === undefined)(`URL elicitation on one instance, the link decided on another (one ${kind} store)`, () => {
    let dir: string
    let a: HttpMcpServer
    let aImpatient: HttpMcpServer
    let b: HttpMcpServer
    const opened: ToolStore[] = []
    const runs: string[] = []
    /** The results of decisions made on B (its `confirmation` events), by invoice. */
    const onB = new Map<string, CallResult>()
    let release: () => void = () => undefined
    let gate: Promise<void> = Promise.resolve()

    function withSlowTool(tm: ToolManager, name: string): ToolManager {
      tm.register({
        name: 'slow_pay',
        inputSchema: { type: 'object', properties: { invoice: { type: 'string' } }, required: ['invoice'] },
        needsConfirmation: true,
        run: async ({ invoice }: { invoice: string }) => {
          await gate
          runs.push(`${invoice}@${name}`)
          return { paid: invoice }
        },
      })
      return tm
    }

    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), 'toolwire-url-elsewhere-'))
      const { open } = await opener!(dir)
      const storeA = await open()
      const storeB = await open()
      opened.push(storeA, storeB)
      const tmA = withSlowTool(manager(storeA, runs, 'A'), 'A')
      const tmB = withSlowTool(manager(storeB, runs, 'B'), 'B')
      tmB.on('confirmation', (e) => {
        if (e.result !== undefined) onB.set(e.callId, e.result)
      })
      a = await serveHttp(tmA, { store: storeA, approvalSecret: SECRET })
      // waits for another instance's run hardly at all
      aImpatient = await serveHttp(tmA, { store: storeA, approvalSecret: SECRET, confirmOutcomeWaitMs: 1 })
      b = await serveHttp(tmB, { store: storeB, approvalSecret: SECRET })
    })
    afterAll(async () => {
      release()
      await a?.close()
      await aImpatient?.close()
      await b?.close()
      for (const s of opened) await s.close()
      rmSync(dir, { recursive: true, force: true })
    })

    /** An SDK client on `server` answering URL elicitation by posting `decision` on the link opened on B. */
    async function urlClient(server: HttpMcpServer, decision: 'approve' | 'deny'): Promise<{ client: Client; decided: () => Promise<{ status: number; text: string }> }> {
      const client = new Client({ name: 'url-elicitation', version: '1.0.0' }, { capabilities: { elicitation: { url: {} } } })
      let posted: Promise<{ status: number; text: string }> | undefined
      client.setRequestHandler(ElicitRequestSchema, async (req) => {
        const { url } = req.params as { url: string }
        posted = (async () => form(on(url, b), { decision, csrf: csrfOf(await (await fetch(on(url, b))).text()) }))()
        return { action: 'accept' }
      })
      await client.connect(new StreamableHTTPClientTransport(new URL(server.url)))
      return { client, decided: () => posted! }
    }

    it("approved on B: A answers its client B's result (the same MCP result B's view renders); the tool ran once, on B", async () => {
      const { client, decided } = await urlClient(a, 'approve')
      try {
        const result = (await client.callTool({ name: 'pay', arguments: { invoice: 'URL-1', amount: 7 } })) as CallToolResult
        expect((await decided()).text).toContain('<code id="outcome">ok</code>')
        expect(runs.filter((r) => r.startsWith('URL-1@'))).toEqual(['URL-1@B'])
        expect(result).toMatchObject({ isError: false, structuredContent: { paid: 'URL-1' } })
        // one call: the id A gave it is the one B's run reported
        const viewOnB = onB.get(result._meta?.['toolwire/callId'] as string)!
        expect(viewOnB).toMatchObject({ status: 'ok', data: { paid: 'URL-1' } })
        const rendered = toMcp(viewOnB) as unknown as CallToolResult
        expect(result.content).toEqual(rendered.content)
        expect(result.structuredContent).toEqual(rendered.structuredContent)
      } finally {
        await client.close()
      }
    })

    it('denied on B: A answers confirmation_denied, and nothing runs', async () => {
      const { client, decided } = await urlClient(a, 'deny')
      try {
        const result = (await client.callTool({ name: 'pay', arguments: { invoice: 'URL-2', amount: 7 } })) as CallToolResult
        expect((await decided()).text).toContain('<code id="outcome">confirmation_denied</code>')
        expect(result.isError).toBe(true)
        expect(JSON.stringify(result.content)).toContain('The user denied this call')
        expect(runs.some((r) => r.startsWith('URL-2@'))).toBe(false)
      } finally {
        await client.close()
      }
    })

    it('approved on B, still running there past the wait: A answers confirmation_running (never hangs); the run finishes on B, once', async () => {
      gate = new Promise<void>((resolve) => {
        release = resolve
      })
      const { client, decided } = await urlClient(aImpatient, 'approve')
      try {
        const result = (await client.callTool({ name: 'slow_pay', arguments: { invoice: 'URL-3' } })) as CallToolResult
        // answered while B's run is held: it has not finished
        expect(runs.some((r) => r.startsWith('URL-3@'))).toBe(false)
        expect(result.isError).toBe(true)
        expect(JSON.stringify(result.content)).toContain('approved on another instance and is still running there')
        release()
        expect((await decided()).text).toContain('<code id="outcome">ok</code>')
        expect(runs.filter((r) => r.startsWith('URL-3@'))).toEqual(['URL-3@B'])
      } finally {
        release()
        await client.close()
      }
    })
  })
}
