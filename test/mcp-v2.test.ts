// Both MCP eras at one endpoint, through the SDK v2 client: pinned to 2026-07-28, `auto` and
// legacy (2025-11-25), over HTTP (serveHttp) and over stdio (`toolwire serve`, and an
// in-process stdio pair for raw frames). Every answer frame a test sees is checked against the
// official schema of its era (test/fixtures/mcp/frames.ts; skipped with the reason printed
// when the reference folder is absent, failing under CI=true).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PassThrough } from 'node:stream'
import { pathToFileURL } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio'
import { ToolManager } from '../src/runtime/manager.js'
import type { ToolContext } from '../src/runtime/manager.js'
import { serveHttp, type HttpMcpServer } from '../src/mcp/http.js'
import { serveStdio } from '../src/mcp/stdio.js'
import { MCP_PROTOCOL_VERSION } from '../src/mcp/protocol.js'
import { cli, distIndex, ensureBuilt } from './fixtures/mcp/helpers.js'
import { frameSchemas, framesOf, type Era } from './fixtures/mcp/frames.js'

const schemas = frameSchemas()
const SERVER_INFO = 'io.modelcontextprotocol/serverInfo'
const RESULT_DEF: Record<string, string> = {
  'server/discover': 'DiscoverResult',
  initialize: 'InitializeResult',
  'tools/list': 'ListToolsResult',
  'tools/call': 'CallToolResult',
}

/** The envelope a 2026-07-28 request carries in `params._meta`. */
function envelope(version = MCP_PROTOCOL_VERSION, capabilities: Record<string, unknown> | null = {}): Record<string, unknown> {
  const meta: Record<string, unknown> = {
    'io.modelcontextprotocol/protocolVersion': version,
    'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
  }
  if (capabilities !== null) meta['io.modelcontextprotocol/clientCapabilities'] = capabilities
  return meta
}

/** Asserts each frame is valid against its era's schema; a result also against its method's result definition. */
function expectValid(era: Era, frames: readonly unknown[], method?: string): void {
  if (schemas === undefined) return
  for (const frame of frames) {
    const resultDef = method === undefined ? undefined : RESULT_DEF[method]
    expect(schemas.frameErrors(era, frame, resultDef), JSON.stringify(frame).slice(0, 400)).toEqual([])
  }
}

function manager(): { tm: ToolManager; runs: { remove: number } } {
  const runs = { remove: 0 }
  const tm = new ToolManager()
  tm.register({ name: 'steps', inputSchema: { type: 'object' }, run: (_i: unknown, ctx: ToolContext) => (ctx.reportProgress(1, 2), 'stepped') })
  tm.register({ name: 'echo', inputSchema: { type: 'object', properties: { text: { type: 'string' } } }, run: (input: { text?: string }) => ({ text: input.text ?? '' }) })
  tm.register({ name: 'fails', inputSchema: { type: 'object' }, run: () => { throw new Error('boom') } })
  tm.register({ name: 'remove', inputSchema: { type: 'object' }, needsConfirmation: true, run: () => (runs.remove++, 'removed') })
  return { tm, runs }
}

interface Seen {
  readonly era: Era
  readonly method: string
  readonly status: number
  readonly frames: unknown[]
}

/** A fetch that records each POST's answer frames, with the era its request was sent in. */
function recordingFetch(seen: Promise<Seen>[]): typeof fetch {
  return async (input, init) => {
    const response = await fetch(input, init)
    if (init?.method === 'POST' && typeof init.body === 'string') {
      const body = JSON.parse(init.body) as { method?: string; params?: { _meta?: Record<string, unknown> } }
      const era: Era = body.params?._meta?.['io.modelcontextprotocol/protocolVersion'] === undefined ? 'legacy' : 'modern'
      const copy = response.clone()
      seen.push(copy.text().then((text) => ({ era, method: body.method ?? '', status: copy.status, frames: framesOf(text, copy.headers.get('content-type')) })))
    }
    return response
  }
}

type Mode = 'legacy' | 'auto' | { pin: string }
const MODES: readonly [string, Mode, Era][] = [
  ['pinned to 2026-07-28', { pin: MCP_PROTOCOL_VERSION }, 'modern'],
  ['auto', 'auto', 'modern'],
  ['legacy', 'legacy', 'legacy'],
]

describe('serveHttp: the SDK v2 client in each mode', () => {
  let served: HttpMcpServer
  beforeAll(async () => {
    served = await serveHttp(manager().tm)
  })
  afterAll(() => served.close())

  for (const [label, mode, era] of MODES) {
    it(`${label}: connects in the ${era} era, lists sorted, calls, a failing tool is isError, every frame valid`, async () => {
      const seen: Promise<Seen>[] = []
      const client = new Client({ name: 'v2-test', version: '1.0.0' }, { versionNegotiation: { mode } })
      await client.connect(new StreamableHTTPClientTransport(new URL(served.url), { fetch: recordingFetch(seen) }))
      try {
        expect(client.getProtocolEra()).toBe(era)
        expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['echo', 'fails', 'remove', 'steps'])
        const progress: number[] = []
        const echo = await client.callTool({ name: 'echo', arguments: { text: 'hi' } }, { onprogress: (p) => progress.push(p.progress) })
        expect(echo).toMatchObject({ isError: false, structuredContent: { text: 'hi' } })
        const steps = await client.callTool({ name: 'steps', arguments: {} }, { onprogress: (p) => progress.push(p.progress) })
        expect(steps.isError).toBe(false)
        expect(progress).toEqual([1])
        const failed = await client.callTool({ name: 'fails', arguments: {} })
        expect(failed).toMatchObject({ isError: true, content: [{ type: 'text', text: 'The tool failed.' }] })
        // no elicitation declared: today's isError answer naming what to confirm
        const waiting = await client.callTool({ name: 'remove', arguments: {} })
        expect(waiting.isError).toBe(true)
        expect(waiting._meta?.['toolwire/confirmation']).toMatchObject({ summary: 'Run remove with {}' })
      } finally {
        // every POST answer is read before close() aborts what is still open
        await Promise.allSettled(seen)
        await client.close()
      }
      const answers = await Promise.all(seen)
      expect(answers.every((a) => a.era === era || a.method === 'server/discover')).toBe(true)
      for (const answer of answers) {
        expectValid(answer.era, answer.frames, answer.method)
        for (const frame of answer.frames as { result?: Record<string, unknown> }[]) {
          if (frame.result === undefined) continue
          if (answer.era === 'modern') {
            expect(frame.result.resultType).toBe('complete')
            expect(frame.result._meta).toMatchObject({ [SERVER_INFO]: { name: 'toolwire' } })
          } else {
            expect(frame.result.resultType).toBeUndefined()
          }
        }
      }
      const list = answers.find((a) => a.method === 'tools/list')!.frames[0] as { result: Record<string, unknown> }
      if (era === 'modern') expect(list.result).toMatchObject({ ttlMs: 0, cacheScope: 'private' })
      else expect(list.result.ttlMs).toBeUndefined()
      // the modern era never opens a session
      expect(served.sessions()).toBe(era === 'modern' ? 0 : served.sessions())
    })
  }
})

/** Posts a raw body; the answer's status, headers and frames. */
async function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; contentType: string | null; frames: unknown[] }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  })
  const text = await response.text()
  return { status: response.status, contentType: response.headers.get('content-type'), frames: framesOf(text, response.headers.get('content-type')) }
}

/** The headers a 2026-07-28 request carries. */
function modernHeaders(method: string, name?: string): Record<string, string> {
  return { 'mcp-protocol-version': MCP_PROTOCOL_VERSION, 'mcp-method': method, ...(name === undefined ? {} : { 'mcp-name': name }) }
}

describe('serveHttp: the 2026-07-28 validation ladder, raw frames', () => {
  let served: HttpMcpServer
  beforeAll(async () => {
    served = await serveHttp(manager().tm)
  })
  afterAll(() => served.close())

  const call = (params: Record<string, unknown>, id: number | string = 1) => ({ jsonrpc: '2.0', id, method: 'tools/call', params })

  it('a well-formed call is answered with resultType and serverInfo, no session id', async () => {
    const r = await post(served.url, call({ name: 'echo', arguments: { text: 'x' }, _meta: envelope() }), modernHeaders('tools/call', 'echo'))
    expect(r.status).toBe(200)
    expect(r.frames).toHaveLength(1)
    expect(r.frames[0]).toMatchObject({ id: 1, result: { resultType: 'complete', structuredContent: { text: 'x' }, _meta: { [SERVER_INFO]: { name: 'toolwire' } } } })
    expectValid('modern', r.frames, 'tools/call')
    expect(served.sessions()).toBe(0)
  })

  it('server/discover names 2026-07-28, the tools and logging capabilities, and no tasks extension', async () => {
    const r = await post(served.url, { jsonrpc: '2.0', id: 'd', method: 'server/discover', params: { _meta: envelope() } }, modernHeaders('server/discover'))
    expect(r.status).toBe(200)
    const result = (r.frames[0] as { result: { supportedVersions: string[]; capabilities: Record<string, unknown> } }).result
    expect(result.supportedVersions).toEqual([MCP_PROTOCOL_VERSION])
    expect(result.capabilities).toEqual({ tools: { listChanged: false }, logging: {} })
    expectValid('modern', r.frames, 'server/discover')
  })

  it('toolListTtlMs sets the ttlMs of tools/list', async () => {
    const cached = await serveHttp(manager().tm, { toolListTtlMs: 60_000 })
    try {
      const list = await post(cached.url, { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: envelope() } }, modernHeaders('tools/list'))
      expect(list.frames[0]).toMatchObject({ result: { ttlMs: 60_000, cacheScope: 'private' } })
      expectValid('modern', list.frames, 'tools/list')
    } finally {
      await cached.close()
    }
  })

  it('header mismatches are 400 -32020: Mcp-Name, Mcp-Method, MCP-Protocol-Version against the body', async () => {
    const body = call({ name: 'echo', arguments: {}, _meta: envelope() })
    const cases: Record<string, string>[] = [
      modernHeaders('tools/call', 'other'),
      modernHeaders('tools/list', 'echo'),
      { ...modernHeaders('tools/call', 'echo'), 'mcp-protocol-version': '2025-11-25' },
      { 'mcp-protocol-version': MCP_PROTOCOL_VERSION, 'mcp-name': 'echo' },
    ]
    for (const headers of cases) {
      const r = await post(served.url, body, headers)
      expect(r.status, JSON.stringify(headers)).toBe(400)
      expect(r.frames[0], JSON.stringify(headers)).toMatchObject({ id: 1, error: { code: -32020 } })
      expectValid('modern', r.frames)
    }
  })

  it('an unknown version in the envelope is 400 -32022 naming the supported one', async () => {
    const r = await post(served.url, call({ name: 'echo', arguments: {}, _meta: envelope('1900-01-01') }), { ...modernHeaders('tools/call', 'echo'), 'mcp-protocol-version': '1900-01-01' })
    expect(r.status).toBe(400)
    expect(r.frames[0]).toMatchObject({ id: 1, error: { code: -32022, data: { supported: [MCP_PROTOCOL_VERSION], requested: '1900-01-01' } } })
    expectValid('modern', r.frames)
  })

  it('an envelope without client capabilities is 400 -32602', async () => {
    const r = await post(served.url, call({ name: 'echo', arguments: {}, _meta: envelope(MCP_PROTOCOL_VERSION, null) }), modernHeaders('tools/call', 'echo'))
    expect(r.status).toBe(400)
    expect(r.frames[0]).toMatchObject({ id: 1, error: { code: -32602 } })
    expectValid('modern', r.frames)
  })

  it('an unknown method (ping included: gone in 2026-07-28) is 404 -32601 with the id', async () => {
    for (const method of ['resources/list', 'ping', 'initialize']) {
      const r = await post(served.url, { jsonrpc: '2.0', id: 7, method, params: { _meta: envelope() } }, modernHeaders(method))
      if (method === 'initialize') continue // initialize with an envelope is the SDK's (a 2025 handshake is refused on the modern leg)
      expect(r.status, method).toBe(404)
      expect(r.frames[0]).toEqual({ jsonrpc: '2.0', id: 7, error: { code: -32601, message: 'Method not found' } })
      expectValid('modern', r.frames)
    }
  })

  it('a batch is 400 -32600 and a parse error 400 -32700, both without an id (never "id": null)', async () => {
    const batch = await post(served.url, [call({ name: 'echo', _meta: envelope() })], modernHeaders('tools/call', 'echo'))
    expect(batch.status).toBe(400)
    expect(batch.frames[0]).toEqual({ jsonrpc: '2.0', error: { code: -32600, message: 'Invalid Request: JSON-RPC batches are not part of MCP' } })
    const parse = await post(served.url, '{"jsonrpc":"2.0","id":1,', modernHeaders('tools/call', 'echo'))
    expect(parse.status).toBe(400)
    expect(parse.frames[0]).toEqual({ jsonrpc: '2.0', error: { code: -32700, message: 'Parse error: invalid JSON' } })
    expectValid('modern', [...batch.frames, ...parse.frames])
    expectValid('legacy', [...batch.frames, ...parse.frames])
  })

  it('a notification is 202 with no body', async () => {
    const r = await post(served.url, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 99, _meta: envelope() } }, modernHeaders('notifications/cancelled'))
    expect(r.status).toBe(202)
    expect(r.frames).toEqual([])
  })

  it('GET and DELETE with the 2026-07-28 header are 405 without an id (no sessions in this era)', async () => {
    for (const method of ['GET', 'DELETE']) {
      const response = await fetch(served.url, { method, headers: { accept: 'text/event-stream', 'mcp-protocol-version': MCP_PROTOCOL_VERSION } })
      expect(response.status).toBe(405)
      const frames = framesOf(await response.text(), response.headers.get('content-type'))
      expect(frames[0]).toMatchObject({ jsonrpc: '2.0', error: { code: -32000 } })
      expect(frames[0]).not.toHaveProperty('id')
      expectValid('modern', frames)
    }
  })

  it('malformed tools/call params get the short -32602, not a validation dump', async () => {
    const r = await post(served.url, call({ arguments: [], _meta: envelope() }), modernHeaders('tools/call', 'x'))
    expect(r.frames[0]).toEqual({ jsonrpc: '2.0', id: 1, error: { code: -32602, message: 'Invalid params: "name" is required' } })
    expectValid('modern', r.frames)
  })

  it('an unknown tool is -32602 "Unknown tool"', async () => {
    const r = await post(served.url, call({ name: 'nope', arguments: {}, _meta: envelope() }), modernHeaders('tools/call', 'nope'))
    expect(r.frames[0]).toMatchObject({ id: 1, error: { code: -32602, message: 'Unknown tool: nope' } })
    expectValid('modern', r.frames)
  })

  it('tasks/* without the tasks extension is 400 -32021; with it, the task is not found (none is ever made)', async () => {
    const get = (capabilities: Record<string, unknown>) =>
      post(served.url, { jsonrpc: '2.0', id: 3, method: 'tasks/get', params: { taskId: 't1', _meta: envelope(MCP_PROTOCOL_VERSION, capabilities) } }, modernHeaders('tasks/get', 't1'))
    const without = await get({})
    expect(without.status).toBe(400)
    expect(without.frames[0]).toMatchObject({ id: 3, error: { code: -32021, data: { requiredCapabilities: { extensions: { 'io.modelcontextprotocol/tasks': {} } } } } })
    const declared = await get({ extensions: { 'io.modelcontextprotocol/tasks': {} } })
    expect(declared.frames[0]).toMatchObject({ id: 3, error: { code: -32602, message: 'Failed to retrieve task: Task not found' } })
    expectValid('modern', [...without.frames, ...declared.frames])
  })

  it('a wide integer id (1e21) is echoed as sent on the modern leg too', async () => {
    const response = await fetch(served.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...modernHeaders('tools/call', 'echo') },
      body: `{"jsonrpc":"2.0","id":1e21,"method":"tools/call","params":{"name":"echo","arguments":{},"_meta":${JSON.stringify(envelope())}}}`,
    })
    const text = await response.text()
    expect(text).toContain('"id":1e21')
    expect(text).toContain('"resultType":"complete"')
  })

  it('a 2025 client at the same endpoint sees no resultType, no serverInfo in _meta and no logging capability', async () => {
    const init = await post(served.url, { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'old', version: '1' } } })
    expect(init.status).toBe(200)
    const result = (init.frames[0] as { result: { protocolVersion: string; capabilities: Record<string, unknown> } }).result
    expect(result.protocolVersion).toBe('2025-11-25')
    expect(result.capabilities).toEqual({ tools: { listChanged: false } })
    expectValid('legacy', init.frames, 'initialize')
  })
})

describe('ctx.log: notifications/message for a 2026-07-28 request that set a logLevel, nothing otherwise', () => {
  let served: HttpMcpServer
  const events: unknown[] = []
  beforeAll(async () => {
    const tm = new ToolManager()
    tm.register({
      name: 'chatty',
      inputSchema: { type: 'object' },
      run: (_input: unknown, ctx: ToolContext) => {
        ctx.log('debug', 'fine detail')
        ctx.log('info', { step: 1, password: 'hunter2' })
        ctx.log('error', 'it went wrong')
        ctx.log('loud' as never, 'an unknown level logs nothing')
        return 'talked'
      },
    })
    tm.on('log', (event) => events.push(event))
    served = await serveHttp(tm)
  })
  afterAll(() => served.close())

  const chatty = (meta: Record<string, unknown>) =>
    post(served.url, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'chatty', arguments: {}, _meta: meta } }, modernHeaders('tools/call', 'chatty'))

  it('logLevel "info": info and error are sent before the result on the same stream, data redacted; debug is dropped', async () => {
    events.length = 0
    const r = await chatty({ ...envelope(), 'io.modelcontextprotocol/logLevel': 'info' })
    expect(r.contentType).toMatch(/^text\/event-stream/)
    const messages = r.frames.filter((f) => (f as { method?: string }).method === 'notifications/message')
    expect(messages.map((m) => (m as { params: unknown }).params)).toEqual([
      { level: 'info', data: { step: 1, password: '[redacted]' } },
      { level: 'error', data: 'it went wrong' },
    ])
    expect(r.frames.at(-1)).toMatchObject({ id: 1, result: { isError: false, resultType: 'complete' } })
    expectValid('modern', r.frames, 'tools/call')
    expect(JSON.stringify(r.frames)).not.toContain('hunter2')
    // the manager's log event has every level the tool used, redacted too
    expect(events).toMatchObject([{ level: 'debug', data: 'fine detail' }, { level: 'info', data: { password: '[redacted]' } }, { level: 'error' }])
  })

  it('a call already settled logs nothing (no log event)', async () => {
    const tm = new ToolManager()
    let kept: ToolContext | undefined
    tm.register({ name: 'late', inputSchema: { type: 'object' }, run: (_i: unknown, ctx: ToolContext) => ((kept = ctx), 'done') })
    const seen: unknown[] = []
    tm.on('log', (event) => seen.push(event))
    await tm.call('late', {})
    kept!.log('error', 'after the end')
    expect(seen).toEqual([])
  })

  it('without a logLevel: a plain JSON answer, no notifications/message', async () => {
    const r = await chatty(envelope())
    expect(r.contentType).toMatch(/^application\/json/)
    expect(r.frames).toHaveLength(1)
    expect(r.frames[0]).toMatchObject({ id: 1, result: { isError: false } })
  })

  it('a 2025 client (stateless here) sees no logging capability and no notifications/message', async () => {
    const stateless = await serveHttp(new ToolManager().register({ name: 'chatty', inputSchema: { type: 'object' }, run: (_i: unknown, ctx: ToolContext) => (ctx.log('error', 'x'), 'ok') }), { stateless: true })
    try {
      const init = await post(stateless.url, { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'old', version: '1' } } })
      expect((init.frames[0] as { result: { capabilities: Record<string, unknown> } }).result.capabilities).toEqual({ tools: { listChanged: false } })
      const call = await post(stateless.url, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'chatty', arguments: {}, _meta: { progressToken: 't' } } }, { 'mcp-protocol-version': '2025-11-25' })
      expect(call.frames.some((f) => (f as { method?: string }).method === 'notifications/message')).toBe(false)
      expectValid('legacy', call.frames, 'tools/call')
    } finally {
      await stateless.close()
    }
  })
})

describe('cancellation on the request\'s own stream (2026-07-28)', () => {
  it('closing the response stream aborts the call\'s signal, before and after its first progress', async () => {
    const aborted: string[] = []
    const started: (() => void)[] = []
    const tm = new ToolManager()
    tm.register({
      name: 'wait',
      inputSchema: { type: 'object', properties: { progress: { type: 'boolean' } } },
      run: (input: { progress?: boolean }, ctx: ToolContext) =>
        new Promise((resolve) => {
          if (input.progress === true) ctx.reportProgress(1)
          ctx.signal.addEventListener('abort', () => {
            aborted.push(input.progress === true ? 'streamed' : 'json')
            resolve('stopped')
          })
          started.shift()?.()
        }),
    })
    const served = await serveHttp(tm)
    try {
      for (const progress of [false, true]) {
        const client = new AbortController()
        const running = new Promise<void>((resolve) => started.push(resolve))
        const meta = progress ? { ...envelope(), progressToken: 'p' } : envelope()
        const answer = fetch(served.url, {
          method: 'POST',
          signal: client.signal,
          headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...modernHeaders('tools/call', 'wait') },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'wait', arguments: { progress }, _meta: meta } }),
        }).then((r) => r.text())
        await running
        client.abort()
        await answer.catch(() => undefined)
        for (let i = 0; i < 200 && aborted.length < (progress ? 2 : 1); i++) await new Promise((resolve) => setTimeout(resolve, 10))
      }
      expect(aborted).toEqual(['json', 'streamed'])
    } finally {
      await served.close()
    }
  })
})

/** Serves over an in-process stdio pair; `send` writes a line and resolves the answer to `id`. */
async function stdioPair(): Promise<{ send: (frame: unknown, id?: unknown) => Promise<Record<string, unknown>>; close: () => Promise<void> }> {
  const stdin = new PassThrough()
  const stdout = new PassThrough()
  const served = await serveStdio(manager().tm, { stdin, stdout })
  let buffered = ''
  const waiting = new Map<string, (frame: Record<string, unknown>) => void>()
  stdout.on('data', (chunk: Buffer) => {
    buffered += chunk.toString('utf8')
    let nl: number
    while ((nl = buffered.indexOf('\n')) !== -1) {
      const frame = JSON.parse(buffered.slice(0, nl)) as Record<string, unknown>
      buffered = buffered.slice(nl + 1)
      if (frame.method !== undefined) continue
      const key = JSON.stringify(frame.id)
      waiting.get(key)?.(frame)
      waiting.delete(key)
    }
  })
  return {
    send: (frame, id = (frame as { id?: unknown }).id) =>
      new Promise((resolve) => {
        waiting.set(JSON.stringify(id), resolve)
        stdin.write(`${JSON.stringify(frame)}\n`)
      }),
    close: () => served.close(),
  }
}

describe('serveStdio: the era is chosen by the first message', () => {
  it('server/discover, then tools/list and tools/call with the envelope: modern frames, valid', async () => {
    const pair = await stdioPair()
    try {
      const discover = await pair.send({ jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: envelope() } })
      expect(discover).toMatchObject({ result: { supportedVersions: [MCP_PROTOCOL_VERSION], resultType: 'complete' } })
      expectValid('modern', [discover], 'server/discover')
      const list = await pair.send({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: { _meta: envelope() } })
      expect((list.result as { tools: { name: string }[] }).tools.map((t) => t.name)).toEqual(['echo', 'fails', 'remove', 'steps'])
      expectValid('modern', [list], 'tools/list')
      const failed = await pair.send({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'fails', arguments: {}, _meta: envelope() } })
      expect(failed).toMatchObject({ result: { isError: true, resultType: 'complete', _meta: { [SERVER_INFO]: { name: 'toolwire' } } } })
      expectValid('modern', [failed], 'tools/call')
      const badParams = await pair.send({ jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 5, _meta: envelope() } })
      expect(badParams).toEqual({ jsonrpc: '2.0', id: 4, error: { code: -32602, message: 'Invalid params: "name" must be a string' } })
      expectValid('modern', [badParams])
    } finally {
      await pair.close()
    }
  })

  it('an unknown version in the first envelope is -32022', async () => {
    const pair = await stdioPair()
    try {
      const answer = await pair.send({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: envelope('1900-01-01') } })
      expect(answer).toMatchObject({ id: 1, error: { code: -32022, data: { supported: [MCP_PROTOCOL_VERSION] } } })
      expectValid('modern', [answer])
    } finally {
      await pair.close()
    }
  })

  it('initialize serves 2025-11-25: no resultType, valid against the 2025 schema', async () => {
    const pair = await stdioPair()
    try {
      const init = await pair.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'old', version: '1' } } })
      expect(init).toMatchObject({ result: { protocolVersion: '2025-11-25', capabilities: { tools: { listChanged: false } } } })
      expectValid('legacy', [init], 'initialize')
      const call = await pair.send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo', arguments: { text: 'a' } } })
      expect(call).toMatchObject({ result: { isError: false, structuredContent: { text: 'a' } } })
      expect((call.result as Record<string, unknown>).resultType).toBeUndefined()
      expectValid('legacy', [call], 'tools/call')
    } finally {
      await pair.close()
    }
  })
})

describe('toolwire serve (stdio): the SDK v2 client in each mode', () => {
  let dir: string
  let module: string
  beforeAll(() => {
    ensureBuilt()
    dir = mkdtempSync(join(tmpdir(), 'toolwire-v2-'))
    module = join(dir, 'tools.mjs')
    writeFileSync(
      module,
      `import { ToolManager } from ${JSON.stringify(pathToFileURL(distIndex).href)}
const tm = new ToolManager()
tm.register({ name: 'echo', inputSchema: { type: 'object', properties: { text: { type: 'string' } } }, run: ({ text }) => ({ text }) })
tm.register({ name: 'fails', inputSchema: { type: 'object' }, run: () => { throw new Error('boom') } })
export default tm
`,
    )
  })
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  for (const [label, mode, era] of MODES) {
    it(`${label}: connects in the ${era} era, lists, calls, a failing tool is isError`, async () => {
      const client = new Client({ name: 'v2-stdio', version: '1.0.0' }, { versionNegotiation: { mode } })
      await client.connect(new StdioClientTransport({ command: process.execPath, args: [cli, 'serve', module], stderr: 'ignore' }))
      try {
        expect(client.getProtocolEra()).toBe(era)
        expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['echo', 'fails'])
        expect(await client.callTool({ name: 'echo', arguments: { text: 'hi' } })).toMatchObject({ isError: false, structuredContent: { text: 'hi' } })
        const failed = await client.callTool({ name: 'fails', arguments: {} })
        expect(failed.isError).toBe(true)
        if (era === 'modern') expect(failed._meta).toMatchObject({ [SERVER_INFO]: { name: 'toolwire' } })
      } finally {
        await client.close()
      }
    }, 60_000)
  }
})
