// MCP over Streamable HTTP: `serveHttp` under the SDK's own client
// (StreamableHTTPClientTransport) and under raw fetch requests, for the security gate
// (Host, Origin, MCP-Protocol-Version, body limit, bearer token), the JSON-RPC error to
// HTTP status mapping, sessions and stateless mode, /healthz and /metrics; and
// `toolwire serve --http` as a process.
import { spawn } from 'node:child_process'
import { createInterface } from 'node:readline'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { ElicitRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { ToolManager } from '../src/runtime/manager.js'
import type { ToolContext } from '../src/runtime/manager.js'
import { createMcpServer, MCP_SERVED_METHODS } from '../src/mcp/server.js'
import { serveHttp, type HttpMcpServer, type ServeHttpOptions } from '../src/mcp/http.js'
import { cli, ensureBuilt } from './fixtures/mcp/helpers.js'

const INIT = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }
const ACCEPT = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }

function manager(runs: string[] = []): ToolManager {
  const tm = new ToolManager()
  tm.register({
    name: 'echo',
    description: 'Echoes its text',
    inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    run: ({ text }: { text: string }) => ({ text }),
  })
  tm.register({
    name: 'steps',
    inputSchema: { type: 'object', properties: {} },
    async run(_input: Record<string, never>, ctx: ToolContext) {
      for (let i = 1; i <= 3; i++) ctx.reportProgress(i, 3, `step ${i}`)
      return 'done'
    },
  })
  tm.register({
    name: 'fails',
    inputSchema: { type: 'object', properties: {} },
    run: () => {
      throw new Error('boom with a secret stack')
    },
  })
  tm.register({
    name: 'remove',
    inputSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
    needsConfirmation: true,
    summarize: ({ path }: { path: string }) => `Remove ${path}`,
    run: ({ path }: { path: string }) => {
      runs.push(path)
      return { removed: path }
    },
  })
  return tm
}

async function connect(url: string, options: { token?: string; elicit?: (message: string) => boolean } = {}): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const transport = new StreamableHTTPClientTransport(new URL(url), options.token === undefined ? {} : { requestInit: { headers: { authorization: `Bearer ${options.token}` } } })
  const client = new Client({ name: 'toolwire-http-test', version: '1.0.0' }, options.elicit === undefined ? {} : { capabilities: { elicitation: { form: {} } } })
  if (options.elicit !== undefined) {
    const elicit = options.elicit
    client.setRequestHandler(ElicitRequestSchema, (req) => (elicit(req.params.message) ? { action: 'accept', content: { approve: true } } : { action: 'decline' }))
  }
  await client.connect(transport)
  return { client, transport }
}

/** A raw POST to the endpoint; the body text of an SSE answer is its `data:` lines joined. */
async function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; headers: Headers; text: string; json: () => Record<string, unknown> }> {
  const res = await fetch(url, { method: 'POST', headers: { ...ACCEPT, ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body) })
  const text = await res.text()
  const dataText = (): string =>
    res.headers.get('content-type')?.startsWith('text/event-stream') === true
      ? text
          .split('\n')
          .filter((l) => l.startsWith('data: ') && l.length > 6)
          .map((l) => l.slice(6))
          .at(-1)!
      : text
  return { status: res.status, headers: res.headers, text, json: () => JSON.parse(dataText()) as Record<string, unknown> }
}

/** A `tools/call` body for `echo` whose arguments hold `keys` members, one of them a secret. */
function wideCall(keys: number): string {
  const members = new Array<string>(keys)
  members[0] = '"text":"hunter2-do-not-echo"'
  for (let i = 1; i < keys; i++) members[i] = `"k${i.toString(36)}":0`
  return `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"echo","arguments":{${members.join(',')}}}}`
}

describe('serveHttp with sessions', () => {
  let served: HttpMcpServer
  const runs: string[] = []
  beforeAll(async () => {
    served = await serveHttp(manager(runs))
  })
  afterAll(() => served.close())

  it('binds 127.0.0.1 by default and serves the SDK client: list, call, progress over SSE', async () => {
    expect(served.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/)
    const { client, transport } = await connect(served.url)
    try {
      expect(transport.sessionId).toMatch(/^[0-9a-f-]{36}$/)
      expect(served.sessions()).toBeGreaterThanOrEqual(1)
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['echo', 'fails', 'remove', 'steps'])
      const r = (await client.callTool({ name: 'echo', arguments: { text: 'hi' } })) as CallToolResult
      expect(r).toMatchObject({ isError: false, structuredContent: { text: 'hi' } })
      const progress: number[] = []
      const s = (await client.callTool({ name: 'steps', arguments: {} }, undefined, { onprogress: (p) => progress.push(p.progress) })) as CallToolResult
      expect(s.isError).toBe(false)
      expect(progress).toEqual([1, 2, 3])
      const f = (await client.callTool({ name: 'fails', arguments: {} })) as CallToolResult
      expect(f.isError).toBe(true)
      expect(JSON.stringify(f)).not.toContain('secret stack')
      expect(JSON.stringify(f)).not.toMatch(/\n\s+at /)
    } finally {
      await client.close()
    }
  })

  it('asks the user through elicitation (a server-to-client request over SSE): decline keeps it unrun, accept runs it once', async () => {
    let approve = false
    const asked: string[] = []
    const { client } = await connect(served.url, {
      elicit: (message) => {
        asked.push(message)
        return approve
      },
    })
    try {
      const declined = (await client.callTool({ name: 'remove', arguments: { path: 'a.txt' } })) as CallToolResult
      expect(declined.isError).toBe(true)
      expect(runs).toEqual([])
      approve = true
      const done = (await client.callTool({ name: 'remove', arguments: { path: 'a.txt' } })) as CallToolResult
      expect(done).toMatchObject({ isError: false, structuredContent: { removed: 'a.txt' } })
      expect(runs).toEqual(['a.txt'])
      expect(asked).toEqual(['Confirm: Remove a.txt', 'Confirm: Remove a.txt'])
    } finally {
      await client.close()
    }
  })

  it('DELETE ends the session: the next request with its id is 404', async () => {
    const { client, transport } = await connect(served.url)
    const id = transport.sessionId!
    await transport.terminateSession()
    await client.close()
    const after = await post(served.url, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, { 'mcp-session-id': id, 'mcp-protocol-version': '2025-11-25' })
    expect(after.status).toBe(404)
    expect(after.json()).toMatchObject({ error: { code: -32001 } })
  })

  it('a request without a session id (other than initialize) is 400; an unknown session id is 404', async () => {
    expect((await post(served.url, { jsonrpc: '2.0', id: 2, method: 'tools/list' })).status).toBe(400)
    expect((await post(served.url, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, { 'mcp-session-id': 'nope' })).status).toBe(404)
    const get = await fetch(served.url, { headers: { accept: 'text/event-stream', 'mcp-session-id': 'nope' } })
    expect(get.status).toBe(404)
  })

  it('maps JSON-RPC errors to HTTP statuses: parse 400, invalid request 400, method not found 404, handler errors in-band 200', async () => {
    const init = await post(served.url, INIT)
    expect(init.status).toBe(200)
    const session = { 'mcp-session-id': init.headers.get('mcp-session-id')!, 'mcp-protocol-version': '2025-11-25' }

    const parse = await post(served.url, '{"jsonrpc": "2.0", "id": 3, "method": ', session)
    expect(parse.status).toBe(400)
    expect(parse.json()).toEqual({ jsonrpc: '2.0', error: { code: -32700, message: 'Parse error: invalid JSON' } })

    const invalid = await post(served.url, { jsonrpc: '1.0', id: 4, method: 'tools/list' }, session)
    expect(invalid.status).toBe(400)
    expect(invalid.json()).toMatchObject({ id: 4, error: { code: -32600 } })

    const batch = await post(served.url, [{ jsonrpc: '2.0', id: 5, method: 'tools/list' }], session)
    expect(batch.status).toBe(400)
    expect(batch.json()).toMatchObject({ error: { code: -32600 } })

    const unknown = await post(served.url, { jsonrpc: '2.0', id: 6, method: 'resources/list' }, session)
    expect(unknown.status).toBe(404)
    expect(unknown.json()).toEqual({ jsonrpc: '2.0', id: 6, error: { code: -32601, message: 'Method not found' } })

    const unknownTool = await post(served.url, { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'ghost', arguments: {} } }, session)
    expect(unknownTool.status).toBe(200)
    expect(unknownTool.json()).toMatchObject({ id: 7, error: { code: -32602, message: 'Unknown tool: ghost' } })

    const badParams = await post(served.url, { jsonrpc: '2.0', id: 8, method: 'tools/call', params: { arguments: {} } }, session)
    expect(badParams.status).toBe(200)
    expect(badParams.json()).toMatchObject({ id: 8, error: { code: -32602 } })

    const notification = await post(served.url, { jsonrpc: '2.0', method: 'notifications/initialized' }, session)
    expect(notification.status).toBe(202)
  })

  it('rejects a foreign Host or Origin with 403 (DNS rebinding), accepts the loopback ones', async () => {
    const port = new URL(served.url).port
    const evilOrigin = await post(served.url, INIT, { origin: 'http://evil.example.com' })
    expect(evilOrigin.status).toBe(403)
    const nullOrigin = await post(served.url, INIT, { origin: 'null' })
    expect(nullOrigin.status).toBe(403)
    // fetch will not send a Host of our choosing: a raw request does
    const { request } = await import('node:http')
    const status = (host: string): Promise<number> =>
      new Promise((resolve, reject) => {
        const req = request(served.url, { method: 'POST', headers: { ...ACCEPT, host } }, (res) => {
          res.resume()
          resolve(res.statusCode!)
        })
        req.on('error', reject)
        req.end(JSON.stringify(INIT))
      })
    expect(await status('evil.example.com')).toBe(403)
    expect(await status(`evil.example.com:${port}`)).toBe(403)
    expect(await status(`localhost:${port}`)).toBe(200)
    expect(await status(`[::1]:${port}`)).toBe(200)
    const goodOrigin = await post(served.url, INIT, { origin: `http://localhost:${port}` })
    expect(goodOrigin.status).toBe(200)
  })

  it('checks MCP-Protocol-Version: malformed or unsupported is 400, a supported one passes', async () => {
    for (const version of ['banana', '2025-11-25; drop', '2099-01-01', '']) {
      const r = await post(served.url, INIT, { 'mcp-protocol-version': version })
      expect([version, r.status]).toEqual([version, 400])
      expect(r.json()).toMatchObject({ error: { code: -32000 } })
    }
    expect((await post(served.url, INIT, { 'mcp-protocol-version': '2025-11-25' })).status).toBe(200)
    expect((await post(served.url, INIT, { 'mcp-protocol-version': '2025-06-18' })).status).toBe(200)
  })

  it('answers 405 for other HTTP methods and 404 for other paths', async () => {
    const put = await fetch(served.url, { method: 'PUT', body: '{}' })
    expect(put.status).toBe(405)
    expect(put.headers.get('allow')).toBe('GET, POST, DELETE')
    expect((await fetch(new URL('/other', served.url))).status).toBe(404)
  })

  it('serves /healthz and Prometheus /metrics (no token configured here)', async () => {
    const health = await fetch(new URL('/healthz', served.url))
    expect(health.status).toBe(200)
    expect(await health.json()).toMatchObject({ status: 'ok' })
    const metrics = await fetch(new URL('/metrics', served.url))
    expect(metrics.status).toBe(200)
    expect(metrics.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/)
    expect(await metrics.text()).toMatch(/toolwire_tool_calls_total\{tool="echo",status="success"\} [1-9]/)
  })
})

describe('serveHttp limits and token', () => {
  let served: HttpMcpServer
  const token = 's3cret-token-value'
  beforeAll(async () => {
    served = await serveHttp(manager(), { token, maxBodyBytes: 2048 })
  })
  afterAll(() => served.close())

  it('requires the bearer token: 401 with WWW-Authenticate without it or with a wrong one', async () => {
    const none = await post(served.url, INIT)
    expect(none.status).toBe(401)
    expect(none.headers.get('www-authenticate')).toBe('Bearer realm="toolwire"')
    const wrong = await post(served.url, INIT, { authorization: 'Bearer nope' })
    expect(wrong.status).toBe(401)
    expect(wrong.headers.get('www-authenticate')).toBe('Bearer realm="toolwire", error="invalid_token"')
    expect(wrong.text).not.toContain(token)
    const basic = await post(served.url, INIT, { authorization: `Basic ${Buffer.from(`u:${token}`).toString('base64')}` })
    expect(basic.status).toBe(401)
    expect((await post(served.url, INIT, { authorization: `Bearer ${token}` })).status).toBe(200)
  })

  it('the SDK client with the token works end to end', async () => {
    const { client } = await connect(served.url, { token })
    try {
      const r = (await client.callTool({ name: 'echo', arguments: { text: 'with token' } })) as CallToolResult
      expect(r).toMatchObject({ isError: false, structuredContent: { text: 'with token' } })
    } finally {
      await client.close()
    }
  })

  it('a body over the limit is 413, whether declared or streamed', async () => {
    const big = { ...INIT, params: { ...INIT.params, clientInfo: { name: 'x'.repeat(4096), version: '1' } } }
    const declared = await post(served.url, big, { authorization: `Bearer ${token}` })
    expect(declared.status).toBe(413)
    const { request } = await import('node:http')
    const streamed = await new Promise<number>((resolve, reject) => {
      const req = request(served.url, { method: 'POST', headers: { ...ACCEPT, authorization: `Bearer ${token}`, 'transfer-encoding': 'chunked' } }, (res) => {
        res.resume()
        resolve(res.statusCode!)
      })
      req.on('error', reject)
      for (let i = 0; i < 8; i++) req.write('x'.repeat(1024))
      req.end()
    })
    expect(streamed).toBe(413)
  })

  it('/healthz and /metrics are behind the token too', async () => {
    expect((await fetch(new URL('/healthz', served.url))).status).toBe(401)
    expect((await fetch(new URL('/metrics', served.url))).status).toBe(401)
    expect((await fetch(new URL('/metrics', served.url), { headers: { authorization: `Bearer ${token}` } })).status).toBe(200)
  })

  it('with metricsPublic, /healthz and /metrics need no token but /mcp still does', async () => {
    const open = await serveHttp(manager(), { token, metricsPublic: true })
    try {
      expect((await fetch(new URL('/healthz', open.url))).status).toBe(200)
      expect((await fetch(new URL('/metrics', open.url))).status).toBe(200)
      expect((await post(open.url, INIT)).status).toBe(401)
    } finally {
      await open.close()
    }
  })

  it('an internal failure is a bare 500 without a stack trace or the error text', async () => {
    const broken = await serveHttp(manager(), {
      metrics: () => {
        throw new Error('metrics exploded at /secret/path')
      },
    } satisfies ServeHttpOptions)
    try {
      const res = await fetch(new URL('/metrics', broken.url))
      expect(res.status).toBe(500)
      const text = await res.text()
      expect(JSON.parse(text)).toEqual({ jsonrpc: '2.0', error: { code: -32603, message: 'Internal error' } })
      expect(text).not.toContain('exploded')
    } finally {
      await broken.close()
    }
  })
})

describe('serveHttp stateless', () => {
  let served: HttpMcpServer
  const runs: string[] = []
  beforeAll(async () => {
    served = await serveHttp(manager(runs), { stateless: true })
  })
  afterAll(() => served.close())

  it('serves the SDK client without a session id; GET and DELETE are 405', async () => {
    const { client, transport } = await connect(served.url)
    try {
      expect(transport.sessionId).toBeUndefined()
      expect((await client.listTools()).tools).toHaveLength(4)
      const progress: number[] = []
      const s = (await client.callTool({ name: 'steps', arguments: {} }, undefined, { onprogress: (p) => progress.push(p.progress) })) as CallToolResult
      expect(s.isError).toBe(false)
      expect(progress).toEqual([1, 2, 3])
    } finally {
      await client.close()
    }
    expect(served.sessions()).toBe(0)
    expect((await fetch(served.url, { headers: { accept: 'text/event-stream' } })).status).toBe(405)
    expect((await fetch(served.url, { method: 'DELETE' })).status).toBe(405)
  })

  it('a request without a progress token is answered as plain JSON; with one, as an SSE stream carrying the progress', async () => {
    const call = (meta?: Record<string, unknown>) =>
      post(served.url, { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'steps', arguments: {}, ...(meta === undefined ? {} : { _meta: meta }) } }, { 'mcp-protocol-version': '2025-11-25' })
    const plain = await call()
    expect(plain.status).toBe(200)
    expect(plain.headers.get('content-type')).toMatch(/^application\/json/)
    expect(JSON.parse(plain.text)).toMatchObject({ jsonrpc: '2.0', id: 7, result: { isError: false } })
    const streamed = await call({ progressToken: 'p1' })
    expect(streamed.headers.get('content-type')).toMatch(/^text\/event-stream/)
    expect(streamed.text.match(/notifications\/progress/g)).toHaveLength(3)
    expect(streamed.json()).toMatchObject({ jsonrpc: '2.0', id: 7, result: { isError: false } })
  })

  it('a body whose arguments hold 200,000 keys is 400 -32700 before JSON.parse, echoing nothing; the next call still runs', async () => {
    const wide = wideCall(200_000)
    const parse = vi.spyOn(JSON, 'parse')
    let refused: Awaited<ReturnType<typeof post>>
    try {
      refused = await post(served.url, wide, { 'mcp-protocol-version': '2025-11-25' })
      expect(parse.mock.calls.some(([t]) => typeof t === 'string' && t.length >= wide.length)).toBe(false)
    } finally {
      parse.mockRestore()
    }
    expect(refused.status).toBe(400)
    expect(JSON.parse(refused.text)).toEqual({ jsonrpc: '2.0', error: { code: -32700, message: 'Parse error: holds more than 100064 values' } })
    expect(refused.text).not.toContain('hunter2')
    const next = await post(served.url, { jsonrpc: '2.0', id: 8, method: 'tools/call', params: { name: 'echo', arguments: { text: 'still here' } } }, { 'mcp-protocol-version': '2025-11-25' })
    expect(JSON.parse(next.text)).toMatchObject({ id: 8, result: { isError: false, structuredContent: { text: 'still here' } } })
  })

  it('a raised maxInputValues raises the body limit with it: the body the default refuses reaches the tool', async () => {
    const wide = wideCall(120_000)
    expect((await post(served.url, wide, { 'mcp-protocol-version': '2025-11-25' })).status).toBe(400)
    const tm = new ToolManager({ maxInputValues: 150_000 })
    tm.register({ name: 'echo', inputSchema: { type: 'object' }, run: (input: Record<string, unknown>) => ({ keys: Object.keys(input).length }) })
    const raised = await serveHttp(tm, { stateless: true })
    try {
      const r = await post(raised.url, wide, { 'mcp-protocol-version': '2025-11-25' })
      expect(r.status).toBe(200)
      expect(JSON.parse(r.text)).toMatchObject({ id: 9, result: { isError: false, structuredContent: { keys: 120_000 } } })
    } finally {
      await raised.close()
    }
  })

  it('a call that needs confirmation answers with its confirmId (no elicitation without a session)', async () => {
    const { client } = await connect(served.url, { elicit: () => true })
    try {
      const r = (await client.callTool({ name: 'remove', arguments: { path: 'b.txt' } })) as CallToolResult
      expect(r.isError).toBe(true)
      expect(r._meta?.['toolwire/confirmation']).toMatchObject({ summary: 'Remove b.txt', confirmId: expect.any(String) })
      expect(runs).toEqual([])
    } finally {
      await client.close()
    }
  })
})

describe('createMcpServer', () => {
  it('servers share one elicitation validator (the SDK would build an ajv instance per server: stateless HTTP builds a server per request)', () => {
    const tm = manager()
    const validatorOf = (server: unknown): unknown => (server as { _jsonSchemaValidator: unknown })._jsonSchemaValidator
    expect(validatorOf(createMcpServer(tm))).toBe(validatorOf(createMcpServer(tm)))
  })

  it('the shared validator checks an elicitation answer against its schema', () => {
    const validator = (createMcpServer(manager()) as unknown as { _jsonSchemaValidator: { getValidator(s: object): (v: unknown) => { valid: boolean } } })._jsonSchemaValidator
    const schema = { type: 'object', properties: { approve: { type: 'boolean' } }, required: ['approve'] }
    const check = validator.getValidator(schema)
    expect(check({ approve: true }).valid).toBe(true)
    expect(check({ approve: 'yes' }).valid).toBe(false)
    expect(check({}).valid).toBe(false)
  })
})

describe('MCP_SERVED_METHODS', () => {
  it('is exactly the requests createMcpServer registers', () => {
    const server = createMcpServer(manager())
    const handlers = (server as unknown as { _requestHandlers: Map<string, unknown> })._requestHandlers
    expect([...handlers.keys()].sort()).toEqual([...MCP_SERVED_METHODS].sort())
  })
})

describe('toolwire serve --http', () => {
  beforeAll(() => ensureBuilt(), 180_000)

  it('prints the URL, serves the SDK client with the token from TOOLWIRE_TOKEN, and stops on SIGTERM', async () => {
    const child = spawn(process.execPath, [cli, 'serve', '--http', '127.0.0.1:0'], { env: { ...process.env, TOOLWIRE_TOKEN: 'env-token' }, stdio: ['ignore', 'pipe', 'pipe'] })
    try {
      const lines = createInterface({ input: child.stderr })
      const url = await new Promise<string>((resolve, reject) => {
        lines.on('line', (line) => {
          const m = /at (http:\/\/\S+)$/.exec(line)
          if (m !== null) resolve(m[1]!)
        })
        child.once('exit', (code) => reject(new Error(`exited ${code}`)))
      })
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/)
      expect((await post(url, INIT)).status).toBe(401)
      const { client } = await connect(url, { token: 'env-token' })
      expect((await client.listTools()).tools.map((t) => t.name)).toContain('read_file')
      await client.close()
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
      child.kill('SIGTERM')
      expect(await exited).toBe(0)
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL')
    }
  })

  it('a malformed --http, or --stateless without --http, is a usage error (64)', async () => {
    const run = (args: string[]): Promise<{ code: number | null; err: string }> =>
      new Promise((resolve) => {
        const child = spawn(process.execPath, [cli, ...args], { stdio: ['ignore', 'ignore', 'pipe'] })
        let err = ''
        child.stderr.on('data', (d: Buffer) => (err += d.toString()))
        child.on('exit', (code) => resolve({ code, err }))
      })
    const bad = await run(['serve', '--http', 'host:port'])
    expect(bad.code).toBe(64)
    expect(bad.err).toContain('--http takes [host:]port')
    expect((await run(['serve', '--stateless'])).code).toBe(64)
  })
})
