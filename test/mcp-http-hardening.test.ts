// serveHttp under hostile clients (review #21): a flood of `initialize` requests, endless
// chunked bodies, integer ids beyond 2^53, replay buffers bounded by bytes, and a parked
// confirmation whose stored state this version does not know.
import { request } from 'node:http'
import { connect } from 'node:net'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ToolManager } from '../src/runtime/manager.js'
import { serveHttp, type HttpMcpServer } from '../src/mcp/http.js'
import { MemoryEventStore } from '../src/mcp/event-store.js'
import { SessionTable } from '../src/mcp/sessions.js'
import { SharedConfirmationPages } from '../src/mcp/confirm-page.js'
import { MemoryStore } from '../src/runtime/store/index.js'

const INIT = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }
const ACCEPT = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }

const removed: string[] = []

function manager(): ToolManager {
  const tm = new ToolManager()
  tm.register({
    name: 'echo',
    inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    run: ({ text }: { text: string }) => ({ text }),
  })
  tm.register({
    name: 'big',
    inputSchema: { type: 'object', properties: { kb: { type: 'integer' } }, required: ['kb'] },
    run: ({ kb }: { kb: number }) => ({ text: 'x'.repeat(kb * 1024) }),
  })
  tm.register({
    name: 'remove',
    inputSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
    needsConfirmation: true,
    run: ({ path }: { path: string }) => {
      removed.push(path)
      return { removed: path }
    },
  })
  return tm
}

/**
 * A chunked POST that never ends: chunks of 16 KiB are written, whatever the answer, until
 * the server closes the connection or `giveUpBytes` were sent. Resolves the answer's status
 * (`undefined` when none came) and whether the server closed the connection first.
 */
function endlessPost(url: string, headers: Record<string, string>, giveUpBytes: number): Promise<{ status: number | undefined; closed: boolean }> {
  return new Promise((resolve) => {
    const chunk = Buffer.alloc(16 * 1024, 0x20)
    let sent = 0
    let status: number | undefined
    let settled = false
    const finish = (closed: boolean): void => {
      if (settled) return
      settled = true
      resolve({ status, closed })
      req.destroy()
    }
    const req = request(url, { method: 'POST', headers: { ...headers, 'transfer-encoding': 'chunked' } }, (res) => {
      status = res.statusCode
      res.resume()
    })
    req.on('error', () => finish(true))
    req.on('socket', (socket) => socket.once('close', () => finish(true)))
    const pump = (): void => {
      while (!settled) {
        if (sent >= giveUpBytes) {
          finish(false)
          return
        }
        sent += chunk.length
        if (!req.write(chunk)) {
          req.once('drain', pump)
          return
        }
      }
    }
    req.write('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"')
    pump()
  })
}

describe('an endless chunked body (item 2)', () => {
  let served: HttpMcpServer
  const LIMIT = 64 * 1024
  beforeAll(async () => {
    served = await serveHttp(manager(), { maxBodyBytes: LIMIT })
  })
  afterAll(() => served.close())

  it('an MCP POST gets 413 at the limit and its connection is closed, long before 64 MiB', async () => {
    const r = await endlessPost(served.url, ACCEPT, 64 * 1024 * 1024)
    expect(r.status).toBe(413)
    expect(r.closed).toBe(true)
  }, 60_000)

  it("the confirmation page's form POST too (its limit is 4 KiB): 413 at the limit, the connection closed, nothing run", async () => {
    const client = new Client({ name: 'no-elicitation', version: '1.0.0' })
    await client.connect(new StreamableHTTPClientTransport(new URL(served.url)))
    try {
      const held = (await client.callTool({ name: 'remove', arguments: { path: 'a.txt' } })) as CallToolResult
      const link = (held._meta?.['toolwire/confirmation'] as { url: string }).url
      expect((await fetch(link)).status).toBe(200)
      const r = await endlessPost(link, { 'content-type': 'application/x-www-form-urlencoded' }, 64 * 1024 * 1024)
      expect(r.status).toBe(413)
      expect(r.closed).toBe(true)
      expect(removed).toEqual([])
    } finally {
      await client.close()
    }
  }, 60_000)
})

/**
 * A raw chunked request whose body never ends, on its own socket: 64 KiB chunks are written,
 * whatever the answer, until the server closes the connection or `giveUpBytes` were sent.
 * Resolves the answer's status line and `Connection` header, and whether the server closed first.
 */
function endlessRaw(url: string, method: string, path: string, extraHeaders: string, giveUpBytes: number): Promise<{ status: number | undefined; connection: string | undefined; closed: boolean }> {
  const { hostname, port } = new URL(url)
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname)
    const chunk = Buffer.concat([Buffer.from('10000\r\n'), Buffer.alloc(0x10000, 0x20), Buffer.from('\r\n')])
    let sent = 0
    let answer = ''
    let settled = false
    const finish = (closed: boolean): void => {
      if (settled) return
      settled = true
      const status = /^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1]
      const connection = /\r\nconnection: *([^\r]*)\r\n/i.exec(answer)?.[1]
      resolve({ status: status === undefined ? undefined : Number(status), connection: connection?.toLowerCase(), closed })
      socket.destroy()
    }
    socket.on('data', (d: Buffer) => {
      if (answer.length < 4096) answer += d.toString('latin1')
    })
    socket.on('error', () => finish(true))
    socket.on('close', () => finish(true))
    const pump = (): void => {
      while (!settled) {
        if (sent >= giveUpBytes) {
          finish(false)
          return
        }
        sent += chunk.length
        if (!socket.write(chunk)) {
          socket.once('drain', pump)
          return
        }
      }
    }
    socket.write(
      `${method} ${path} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n` +
        `Transfer-Encoding: chunked\r\n${extraHeaders}\r\n1\r\n[\r\n`,
    )
    pump()
  })
}

describe('a request answered before its body ended: Connection: close, the rest not read (verifier item 1)', () => {
  let served: HttpMcpServer
  const LIMIT = 64 * 1024
  const TOKEN = 'secrettoken123'
  const OK = `Authorization: Bearer ${TOKEN}\r\nMCP-Protocol-Version: 2025-11-25\r\n`
  beforeAll(async () => {
    served = await serveHttp(manager(), { maxBodyBytes: LIMIT, token: TOKEN })
  })
  afterAll(() => served.close())

  const cases: [string, string, string, string, number][] = [
    ['no token', 'POST', '/mcp', '', 401],
    ['a bad token', 'POST', '/mcp', 'Authorization: Bearer wrongtoken\r\n', 401],
    ['a bad Origin', 'POST', '/mcp', `Origin: http://evil.example\r\n${OK}`, 403],
    ['an unknown path', 'POST', '/nope', OK, 404],
    ['a malformed MCP-Protocol-Version', 'POST', '/mcp', `Authorization: Bearer ${TOKEN}\r\nMCP-Protocol-Version: 1999-xx\r\n`, 400],
    ['a method not allowed', 'PUT', '/mcp', OK, 405],
    ['a GET without a session', 'GET', '/mcp', OK, 400],
    ['a GET of an unknown session', 'GET', '/mcp', `${OK}Mcp-Session-Id: nope\r\n`, 404],
    ['/healthz (answered 200 before the body ended)', 'GET', '/healthz', OK, 200],
    ['/healthz by POST', 'POST', '/healthz', OK, 405],
  ]
  for (const [name, method, path, headers, status] of cases) {
    it(`${name}: ${status} with Connection: close, and the connection is closed long before 64 MiB`, async () => {
      const r = await endlessRaw(served.url, method, path, headers, 64 * 1024 * 1024)
      expect(r.status).toBe(status)
      expect(r.connection).toBe('close')
      expect(r.closed).toBe(true)
    }, 60_000)
  }

  it('the control: a body over the limit gets 413 with Connection: close', async () => {
    const r = await endlessRaw(served.url, 'POST', '/mcp', OK, 64 * 1024 * 1024)
    expect(r).toEqual({ status: 413, connection: 'close', closed: true })
  }, 60_000)

  it('a request without a body, or with a declared one within the limit, keeps its connection (keep-alive)', async () => {
    const auth = { authorization: `Bearer ${TOKEN}` }
    for (const [path, init, status] of [
      ['/healthz', { headers: auth }, 200],
      ['/nope', { headers: auth }, 404],
      ['/nope', { method: 'POST', headers: auth, body: '{}' }, 404],
      ['/mcp', { method: 'POST', body: '{}' }, 401],
    ] as const) {
      const r = await fetch(new URL(path, served.url), init)
      expect([path, r.status, r.headers.get('connection')]).toEqual([path, status, 'keep-alive'])
      await r.text()
    }
  })

  it('a declared body over the limit, answered unread: Connection: close', async () => {
    const r = await new Promise<{ status: number | undefined; connection: string | undefined }>((resolve, reject) => {
      const req = request(new URL('/nope', served.url), { method: 'POST', headers: { 'content-length': String(LIMIT + 1) } }, (res) => {
        resolve({ status: res.statusCode, connection: res.headers.connection })
        res.resume()
        req.destroy()
      })
      req.on('error', reject)
      req.write('{')
    })
    expect(r).toEqual({ status: 401, connection: 'close' })
  })
})

/** A session opened by raw requests: its id, and `call` giving each answer's SSE event ids and data. */
async function rawSession(url: string): Promise<{ id: string; headers: Record<string, string> }> {
  const init = await fetch(url, { method: 'POST', headers: ACCEPT, body: JSON.stringify(INIT) })
  await init.text()
  const id = init.headers.get('mcp-session-id')!
  const headers = { ...ACCEPT, 'mcp-session-id': id, 'mcp-protocol-version': '2025-11-25' }
  const ack = await fetch(url, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) })
  await ack.text()
  return { id, headers }
}

/** The SSE events of a text: `[id, data]` pairs. */
function sseEvents(text: string): [string, string][] {
  return text
    .split('\n\n')
    .map((block) => {
      const id = /^id: (.*)$/m.exec(block)?.[1] ?? ''
      const data = /^data: (.*)$/m.exec(block)?.[1] ?? ''
      return [id, data] as [string, string]
    })
    .filter(([id]) => id !== '')
}

/** A GET resuming after `lastEventId`: its status, and the first replayed data (the stream stays open: it is read until then). */
async function resume(url: string, headers: Record<string, string>, lastEventId: string): Promise<{ status: number; data?: string }> {
  const controller = new AbortController()
  const res = await fetch(url, { method: 'GET', headers: { ...headers, accept: 'text/event-stream', 'last-event-id': lastEventId }, signal: controller.signal })
  if (res.status !== 200) {
    await res.text()
    return { status: res.status }
  }
  const reader = res.body!.getReader()
  let text = ''
  for (;;) {
    const { value, done } = await reader.read()
    if (done) break
    text += Buffer.from(value).toString('utf8')
    const data = sseEvents(text).find(([, d]) => d.length > 2)
    if (data !== undefined) {
      controller.abort()
      return { status: 200, data: data[1] }
    }
  }
  return { status: 200 }
}

describe('the replay buffer of a session is bounded by bytes (item 27a)', () => {
  it('MemoryEventStore: 300 results of 256 KB keep at most maxBytes, the newest', async () => {
    const store = new MemoryEventStore({ maxBytes: 4 * 1024 * 1024 })
    const text = 'y'.repeat(256 * 1024)
    let last = ''
    for (let i = 0; i < 300; i++) last = await store.storeEvent('s', { jsonrpc: '2.0', id: i, result: { text } })
    expect(store.bytes()).toBeLessThanOrEqual(4 * 1024 * 1024)
    expect(store.size()).toBe(15)
    expect(await store.getStreamIdForEventId(last)).toBe('s')
    expect(await store.getStreamIdForEventId('s_1')).toBeUndefined()
  })

  it('an event larger than the bound is not kept, nor anything before it (a resume never skips an event)', async () => {
    const store = new MemoryEventStore({ maxBytes: 1024 })
    const small = await store.storeEvent('s', { jsonrpc: '2.0', id: 1, result: {} })
    const huge = await store.storeEvent('s', { jsonrpc: '2.0', id: 2, result: { text: 'z'.repeat(2048) } })
    const after = await store.storeEvent('s', { jsonrpc: '2.0', id: 3, result: {} })
    expect(await store.getStreamIdForEventId(small)).toBeUndefined()
    expect(await store.getStreamIdForEventId(huge)).toBeUndefined()
    expect(await store.getStreamIdForEventId(after)).toBe('s')
    expect(store.size()).toBe(1)
  })

  it('over HTTP: a stream whose events were dropped answers 400 on resume; a recent one replays its result', async () => {
    const served = await serveHttp(manager(), { sessionReplayBytes: 64 * 1024 })
    try {
      const { headers } = await rawSession(served.url)
      const primings: string[] = []
      for (let i = 0; i < 8; i++) {
        const r = await fetch(served.url, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 10 + i, method: 'tools/call', params: { name: 'big', arguments: { kb: 20 } } }) })
        const events = sseEvents(await r.text())
        expect(events.at(-1)![1]).toContain('"id":' + (10 + i))
        primings.push(events[0]![0])
      }
      expect((await resume(served.url, headers, primings[0]!)).status).toBe(400)
      const recent = await resume(served.url, headers, primings.at(-1)!)
      expect(recent.status).toBe(200)
      expect(JSON.parse(recent.data!)).toMatchObject({ id: 17, result: { isError: false } })
    } finally {
      await served.close()
    }
  }, 60_000)
})

/** `n` raw `initialize` requests, `parallel` at a time, none followed by another request. */
async function flood(url: string, n: number, parallel = 16): Promise<number[]> {
  const statuses: number[] = []
  let next = 0
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next < n) {
        next++
        const r = await fetch(url, { method: 'POST', headers: ACCEPT, body: JSON.stringify(INIT) })
        await r.text()
        statuses.push(r.status)
      }
    }),
  )
  return statuses
}

async function sdkClient(url: string): Promise<Client> {
  const client = new Client({ name: 'late-comer', version: '1.0.0' })
  await client.connect(new StreamableHTTPClientTransport(new URL(url)))
  return client
}

describe('a flood of initialize requests does not keep a new client out (item 1)', () => {
  it('2,000 initialize requests from one address: a new client still gets in, and a session in use survives', async () => {
    const served = await serveHttp(manager())
    const before = await sdkClient(served.url)
    try {
      expect(await before.callTool({ name: 'echo', arguments: { text: 'a' } })).toMatchObject({ isError: false })
      const statuses = await flood(served.url, 2000)
      expect(statuses.filter((s) => s !== 200)).toEqual([])
      // one address holds at most maxSessionsPerClient (100) sessions
      expect(served.sessions()).toBeLessThanOrEqual(100)
      const late = await sdkClient(served.url)
      try {
        expect(await late.callTool({ name: 'echo', arguments: { text: 'b' } })).toMatchObject({ isError: false, structuredContent: { text: 'b' } })
      } finally {
        await late.close()
      }
      // never-used sessions go first: the one in use was not closed to make room
      expect(await before.callTool({ name: 'echo', arguments: { text: 'c' } })).toMatchObject({ isError: false })
    } finally {
      await before.close()
      await served.close()
    }
  }, 120_000)

  it('the eviction order: never used (oldest first), then least recently used; a session with a request in flight never; 503 when none can go', async () => {
    const served = await serveHttp(manager(), { maxSessions: 3, maxSessionsPerClient: 3 })
    try {
      const a = await rawSession(served.url)
      const b = await rawSession(served.url)
      await flood(served.url, 1, 1) // c: never used after its initialize
      const ping = async (s: { headers: Record<string, string> }, id: number): Promise<number> => {
        const r = await fetch(served.url, { method: 'POST', headers: s.headers, body: JSON.stringify({ jsonrpc: '2.0', id, method: 'ping' }) })
        await r.text()
        return r.status
      }
      expect(await ping(a, 2)).toBe(200) // a is now more recently used than b
      const d = await rawSession(served.url) // closes c (never used)
      expect([await ping(a, 3), await ping(b, 4), await ping(d, 5)]).toEqual([200, 200, 200])
      expect(await ping(a, 6)).toBe(200)
      const e = await rawSession(served.url) // closes b: all used, b least recently
      expect([await ping(b, 7), await ping(a, 8), await ping(e, 9)]).toEqual([404, 200, 200])
      // every session holds an open GET stream: none can make room
      const streams = [a, d, e].map((s) => {
        const controller = new AbortController()
        void fetch(served.url, { method: 'GET', headers: { ...s.headers, accept: 'text/event-stream' }, signal: controller.signal }).catch(() => undefined)
        return controller
      })
      try {
        for (;;) {
          const r = await fetch(served.url, { method: 'POST', headers: ACCEPT, body: JSON.stringify(INIT) })
          await r.text()
          if (r.status === 503) break
          // a GET stream may not have begun yet: the initialize took an idle session; go again
          expect(r.status).toBe(200)
        }
        expect(await ping(a, 10)).toBe(200)
      } finally {
        for (const c of streams) c.abort()
      }
    } finally {
      await served.close()
    }
  }, 60_000)
})

describe('SessionTable.sweep (item 1)', () => {
  it('closes a session unused since its initialize after unusedMs, a used one after idleMs, one in flight never', () => {
    let clock = 0
    const closed: string[] = []
    const table = new SessionTable<string>({ maxSessions: 10, maxPerClient: 10, idleMs: 1000, unusedMs: 100 }, (id) => closed.push(id), () => clock)
    table.add('unused', 'x', 'u')
    table.add('used', 'x', 'v')
    table.add('busy', 'x', 'w')
    table.begin('used')
    table.end('used')
    table.begin('busy')
    clock = 101
    table.sweep()
    expect(closed).toEqual(['unused'])
    clock = 1102
    table.sweep()
    expect(closed).toEqual(['unused', 'used'])
    expect(table.ids()).toEqual(['busy'])
  })
})

describe('a parked confirmation whose stored state is unknown (item 21)', () => {
  it('a URL elicitation waiting on it is answered with a clear refusal; nothing throws', async () => {
    const SECRET = 'unknown-state-approval-secret-0123456789'
    const store = new MemoryStore()
    const tm = new ToolManager({ store, approvalSecret: SECRET })
    tm.register({ name: 'wipe', inputSchema: { type: 'object', properties: {} }, needsConfirmation: true, run: () => 'wiped' })
    const view = await tm.call('wipe', {})
    if (view.status !== 'needs_confirmation') throw new Error(`expected needs_confirmation, got ${view.status}`)
    const pages = new SharedConfirmationPages(tm, { store, secret: SECRET, pollMs: 5 })
    const path = pages.open({ tool: 'wipe', view })
    // a row written by a newer version, or damaged: a state this version does not know
    const getParked = store.getParked.bind(store)
    store.getParked = async (id) => {
      const row = await getParked(id)
      return row === undefined ? undefined : ({ ...row, state: 'quarantined' } as unknown as typeof row)
    }
    try {
      const decided = await pages.decided(path, new AbortController().signal)
      expect(decided).toMatchObject({ status: 'refused', code: 'store_unavailable' })
      expect((decided as { message: string }).message).toMatch(/state .* not known/i)
    } finally {
      pages.close()
      await store.close()
    }
  })
})
