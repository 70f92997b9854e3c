// A 2026-07-28 `tools/call` that asks the client nothing is answered over stdio without the
// SDK's dispatch (src/mcp/direct-call.ts). The same request answers the same bytes either way
// (its call id aside), which requests go direct and which go the SDK's way, cancellation of a
// direct call (no answer, the tool's signal aborted, the call cancelled by signal), and a
// closed connection aborting the calls in flight.
import { PassThrough } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { ToolManager } from '../src/runtime/manager.js'
import { serveStdio, StdioLineTransport } from '../src/mcp/stdio.js'
import { serveHttp } from '../src/mcp/http.js'
import { directRequestOf, encodedResult, errorAnswerOf, type DirectCalls } from '../src/mcp/direct-call.js'
import { pending } from '../src/core/helpers.js'
import type { ToolEvents } from '../src/runtime/manager.js'

type CallEndEvent = ToolEvents['call_end']

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=='
const envelope = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'direct-test', version: '1' },
  ...extra,
})
const request = (id: number | string, name: string, args?: unknown, meta: Record<string, unknown> = envelope()): Record<string, unknown> => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: args === undefined ? { name, _meta: meta } : { name, arguments: args, _meta: meta },
})

function manager(): { tm: ToolManager; ends: CallEndEvent[]; aborted: unknown[] } {
  const tm = new ToolManager()
  const ends: CallEndEvent[] = []
  const aborted: unknown[] = []
  tm.on('call_end', (e) => ends.push(e))
  const text = { type: 'object', properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false }
  tm.register({ name: 'echo', inputSchema: text, run: (input: { text: string }) => ({ text: input.text }) })
  tm.register({ name: 'boom', inputSchema: { type: 'object' }, run: () => { throw new Error('boom: the secret is hunter2') } })
  tm.register({ name: 'plain', inputSchema: { type: 'object' }, run: () => 'just text' })
  tm.register({ name: 'secret', inputSchema: { type: 'object' }, sensitive: ['apiKey'], run: () => ({ apiKey: 'sk-live-1', user: 'ada' }) })
  tm.register({ name: 'web', inputSchema: { type: 'object' }, hints: { untrustedContent: true }, run: () => 'fetched <b>page</b>' })
  tm.register({ name: 'picture', inputSchema: { type: 'object' }, run: () => ({ output: 'a picture', isError: false, parts: [{ type: 'image', mimeType: 'image/png', data: PNG }] }) })
  tm.register({ name: 'ask', inputSchema: { type: 'object' }, run: () => pending({ kind: 'input', prompt: 'Which environment?' }) })
  tm.register({ name: 'delete', inputSchema: { type: 'object' }, needsConfirmation: true, run: () => 'deleted' })
  tm.register({
    name: 'slow',
    inputSchema: { type: 'object' },
    run: (_input: unknown, ctx) =>
      new Promise((resolve) => {
        ctx.signal.addEventListener('abort', () => {
          aborted.push(ctx.signal.reason)
          resolve('stopped')
        })
      }),
  })
  return { tm, ends, aborted }
}

/** One stdio connection to `tm`: send frames, await the answer to an id. */
async function connect(tm: ToolManager): Promise<{ send: (frame: unknown) => void; answer: (id: number | string) => Promise<string>; lines: string[]; end: () => void; close: () => Promise<void> }> {
  const stdin = new PassThrough()
  const stdout = new PassThrough()
  const lines: string[] = []
  const waiters = new Map<number | string, (line: string) => void>()
  let buffered = ''
  stdout.on('data', (chunk: Buffer) => {
    buffered += chunk.toString('utf8')
    let nl: number
    while ((nl = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, nl)
      buffered = buffered.slice(nl + 1)
      lines.push(line)
      const id = (JSON.parse(line) as { id?: number | string }).id
      if (id !== undefined) waiters.get(id)?.(line)
    }
  })
  const server = await serveStdio(tm, { stdin, stdout })
  return {
    send: (frame) => stdin.write(`${JSON.stringify(frame)}\n`),
    answer: (id) => {
      const seen = lines.find((l) => (JSON.parse(l) as { id?: unknown }).id === id)
      return seen !== undefined ? Promise.resolve(seen) : new Promise((resolve) => waiters.set(id, resolve))
    },
    lines,
    end: () => stdin.end(),
    close: () => server.close(),
  }
}

/** The answer with its generated ids replaced: the call id, the confirmation id and the approval link's token. */
function normalized(line: string): string {
  let out = line.replace(/mcp_[0-9a-z]+_[0-9a-z]+/g, 'CALL_ID').replace(/\/confirm\/[A-Za-z0-9_-]+/g, '/confirm/LINK')
  const confirmId = /"confirmId":"([^"]+)"/.exec(out)?.[1]
  if (confirmId !== undefined) out = out.split(confirmId).join('CONFIRM_ID')
  const requestId = /"id":"(req_[^"\\]+)"/.exec(out.replace(/\\"/g, '"'))?.[1]
  if (requestId !== undefined) out = out.split(requestId).join('REQUEST_ID')
  return out
}

/** A connection opened in 2026-07-28 by a first request (the SDK's dispatch): later calls that qualify go direct. */
async function opened(tm: ToolManager): ReturnType<typeof connect> {
  const c = await connect(tm)
  c.send({ jsonrpc: '2.0', id: 'open', method: 'tools/list', params: { _meta: envelope() } })
  await c.answer('open')
  return c
}

/** The answer to `frame` as the first request of a connection (the SDK's dispatch) and as a later one (direct when it qualifies). */
async function bothWays(frame: Record<string, unknown>): Promise<{ sdk: string; direct: string }> {
  const first = await connect(manager().tm)
  first.send(frame)
  const sdk = await first.answer(frame.id as number)
  await first.close()
  const later = await opened(manager().tm)
  later.send(frame)
  const direct = await later.answer(frame.id as number)
  await later.close()
  return { sdk: normalized(sdk), direct: normalized(direct) }
}

describe('direct tools/call over stdio answers what the SDK answers', () => {
  const cases: [string, Record<string, unknown>][] = [
    ['a success', request(1, 'echo', { text: 'hello' })],
    ['invalid arguments', request(2, 'echo', { text: 5 })],
    ['no arguments', request(3, 'echo')],
    ['a tool that throws (its message is not shown)', request(4, 'boom', {})],
    ['a text result', request(5, 'plain', {})],
    ['a sensitive field, redacted', request(6, 'secret', {})],
    ['untrusted content', request(7, 'web', {})],
    ['an image part', request(8, 'picture', {})],
    ['a pending input the client cannot be asked about', request(9, 'ask', {})],
    ['a confirmation the client cannot be asked about', request(10, 'delete', {})],
    ['a string id', request('s-1', 'echo', { text: 'x' })],
    ['a client without clientInfo', request(11, 'echo', { text: 'x' }, { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} })],
    ['an unknown tool (the SDK way both times)', request(12, 'nope', {})],
    ['an own __proto__ member in the arguments (the SDK way both times)', JSON.parse(`{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x","__proto__":{"text":1}},"_meta":${JSON.stringify(envelope())}}}`) as Record<string, unknown>],
  ]
  for (const [what, frame] of cases) {
    it(what, async () => {
      const { sdk, direct } = await bothWays(frame)
      expect(direct).toBe(sdk)
      if (what === 'a tool that throws (its message is not shown)') expect(direct).not.toContain('hunter2')
      if (what === 'a sensitive field, redacted') expect(direct).not.toContain('sk-live-1')
    })
  }
})

describe('direct tools/call over stdio, 2025-11-25, answers what the SDK answers', () => {
  const initialize = (capabilities: Record<string, unknown>, protocolVersion = '2025-11-25'): Record<string, unknown> => ({
    jsonrpc: '2.0',
    id: 'init',
    method: 'initialize',
    params: { protocolVersion, capabilities, clientInfo: { name: 'legacy-test', version: '1' } },
  })
  const legacy = (id: number | string, name: string, args?: unknown, meta?: Record<string, unknown>): Record<string, unknown> => ({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name, ...(args === undefined ? {} : { arguments: args }), ...(meta === undefined ? {} : { _meta: meta }) },
  })
  /** The answer to `frame` as is (direct) and with an empty `_meta` (the SDK's way), both after an initialize without elicitation. */
  async function bothWays(frame: Record<string, unknown>): Promise<{ sdk: string; direct: string }> {
    const c = await connect(manager().tm)
    c.send(initialize({ roots: {} }))
    await c.answer('init')
    c.send({ jsonrpc: '2.0', method: 'notifications/initialized' })
    c.send(frame)
    const direct = await c.answer(frame.id as number)
    const viaSdk = { ...frame, id: `sdk-${String(frame.id)}`, params: { ...(frame.params as object), _meta: {} } }
    c.send(viaSdk)
    const sdk = await c.answer(viaSdk.id)
    await c.close()
    return { sdk: normalized(sdk).replace(`"id":"sdk-${String(frame.id)}"`, `"id":${JSON.stringify(frame.id)}`), direct: normalized(direct) }
  }
  const cases: [string, Record<string, unknown>][] = [
    ['a success', legacy(1, 'echo', { text: 'hello' })],
    ['invalid arguments', legacy(2, 'echo', { text: 5 })],
    ['no arguments', legacy(3, 'echo')],
    ['a tool that throws', legacy(4, 'boom', {})],
    ['a sensitive field, redacted', legacy(5, 'secret', {})],
    ['untrusted content', legacy(6, 'web', {})],
    ['an image part', legacy(7, 'picture', {})],
    ['a pending input the client cannot be asked about', legacy(8, 'ask', {})],
    ['a confirmation the client cannot be asked about', legacy(9, 'delete', {})],
    ['a string id', legacy('s-2', 'plain', {})],
  ]
  for (const [what, frame] of cases) {
    it(what, async () => {
      const { sdk, direct } = await bothWays(frame)
      expect(direct).toBe(sdk)
    })
  }

  it('the direct answer is the one a connection without direct calls gives (a client that declares elicitation, a tool that asks nothing)', async () => {
    const answers: string[] = []
    for (const capabilities of [{}, { elicitation: {} }]) {
      const c = await connect(manager().tm)
      c.send(initialize(capabilities))
      await c.answer('init')
      c.send(legacy(1, 'echo', { text: 'same' }))
      answers.push(normalized(await c.answer(1)))
      await c.close()
    }
    expect(answers[0]).toBe(answers[1])
  })

  it('goes direct only after an answered 2025-11-25 initialize of a client without elicitation', async () => {
    /** A transport whose stand-in for the SDK's entry answers initialize with the revision asked for; `seen`: the direct calls. */
    async function transportOf(): Promise<{ write: (frame: unknown) => void; seen: unknown[]; close: () => Promise<void> }> {
      const stdin = new PassThrough()
      const transport = new StdioLineTransport(stdin, new PassThrough())
      const seen: unknown[] = []
      transport.serveDirect({ serves: () => true, call: async (name) => (seen.push(name), { content: [] }) })
      transport.onmessage = (m) => {
        const r = m as { id?: string | number; method?: string; params?: { protocolVersion?: string } }
        if (r.method === 'initialize') void transport.send({ jsonrpc: '2.0', id: r.id!, result: { protocolVersion: r.params!.protocolVersion, capabilities: {}, serverInfo: { name: 's', version: '1' } } } as never)
      }
      await transport.start()
      return { write: (frame) => void stdin.write(`${JSON.stringify(frame)}\n`), seen, close: () => transport.close() }
    }
    const tick = (): Promise<unknown> => new Promise((resolve) => setTimeout(resolve, 20))
    const a = await transportOf()
    a.write(legacy(1, 'before-initialize', {}))
    a.write(initialize({ elicitation: {} }))
    await tick()
    a.write(legacy(2, 'elicitation-declared', {}))
    await tick()
    expect(a.seen).toEqual([])
    await a.close()

    const b = await transportOf()
    b.write(initialize({}, '2025-06-18'))
    await tick()
    b.write(legacy(3, 'older-revision', {}))
    b.write(initialize({}))
    await tick()
    b.write(legacy(4, 'agreed', {}))
    b.write(legacy(5, 'with-meta', {}, { progressToken: 1 }))
    await tick()
    expect(b.seen).toEqual(['agreed'])
    await b.close()
  })
})

describe('which requests go direct', () => {
  const cases: [string, unknown, boolean][] = [
    ['the usual call', request(1, 'echo', { text: 'a' }), true],
    ['tools/list', { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: envelope() } }, false],
    ['a progress token', request(1, 'echo', {}, envelope({ progressToken: 7 })), false],
    ['a log level', request(1, 'echo', {}, envelope({ 'io.modelcontextprotocol/logLevel': 'info' })), false],
    ['an idempotency key', request(1, 'echo', {}, envelope({ 'toolwire/idempotencyKey': 'k' })), false],
    ['a trace context', request(1, 'echo', {}, envelope({ traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' })), false],
    ['a client that declares elicitation', request(1, 'echo', {}, envelope({ 'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } } })), false],
    ['a client that declares the tasks extension', request(1, 'echo', {}, envelope({ 'io.modelcontextprotocol/clientCapabilities': { extensions: { 'io.modelcontextprotocol/tasks': {} } } })), false],
    ['the 2025 revision', request(1, 'echo', {}, envelope({ 'io.modelcontextprotocol/protocolVersion': '2025-11-25' })), false],
    ['no envelope', { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: {} } }, false],
    ['request state (a retry answering input requests)', { ...request(1, 'echo', {}), params: { name: 'echo', arguments: {}, requestState: 'x', _meta: envelope() } }, false],
    ['input responses', { ...request(1, 'echo', {}), params: { name: 'echo', arguments: {}, inputResponses: {}, _meta: envelope() } }, false],
    ['a task request', { ...request(1, 'echo', {}), params: { name: 'echo', arguments: {}, task: {}, _meta: envelope() } }, false],
    ['an unexpected clientInfo member', request(1, 'echo', {}, envelope({ 'io.modelcontextprotocol/clientInfo': { name: 'a', version: '1', title: 'A' } })), false],
    ['a fractional id', { ...request(1, 'echo', {}), id: 1.5 }, false],
    ['arguments that are an array', request(1, 'echo', []), false],
    ['a name that is not a string', request(1, 7 as unknown as string, {}), false],
    ['an own __proto__ member in the arguments (the SDK drops it)', JSON.parse(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x","__proto__":{"text":1}},"_meta":${JSON.stringify(envelope())}}}`), false],
    ['a __proto__ member in params', JSON.parse(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","__proto__":{},"_meta":${JSON.stringify(envelope())}}}`), false],
  ]
  for (const [what, message, direct] of cases) {
    it(`${what}: ${direct ? 'direct' : "the SDK's way"}`, () => {
      expect(directRequestOf(message) !== undefined).toBe(direct)
    })
  }

  it('after a server/discover probe, the first 2026-07-28 call goes direct', async () => {
    const stdin = new PassThrough()
    const transport = new StdioLineTransport(stdin, new PassThrough())
    const seen: string[] = []
    transport.serveDirect({ serves: () => true, call: async (name) => (seen.push(name), { content: [] }) })
    transport.onmessage = () => undefined
    await transport.start()
    stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 'probe', method: 'server/discover', params: { _meta: envelope() } })}\n`)
    stdin.write(`${JSON.stringify(request(1, 'first-call', {}))}\n`)
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(seen).toEqual(['first-call'])
    await transport.close()
  })

  it('the transport hands a later 2026-07-28 call of a served tool to the direct calls, anything else to the SDK', async () => {
    const stdin = new PassThrough()
    const stdout = new PassThrough()
    const transport = new StdioLineTransport(stdin, stdout)
    const seen: string[] = []
    const viaSdk: unknown[] = []
    const direct: DirectCalls = {
      serves: (name) => name !== 'unserved',
      call: async (name) => {
        seen.push(name)
        if (name === 'fails') throw Object.assign(new Error('no such thing'), { code: -32602, data: { why: 'test' } })
        return { content: [{ type: 'text', text: name }] }
      },
    }
    transport.serveDirect(direct)
    transport.onmessage = (m) => viaSdk.push((m as { id: unknown }).id)
    await transport.start()
    const out: string[] = []
    stdout.on('data', (c: Buffer) => out.push(...c.toString('utf8').split('\n').filter((l) => l !== '')))
    const write = (frame: unknown): boolean => stdin.write(`${JSON.stringify(frame)}\n`)
    write(request(1, 'first', {})) // opens the connection: the SDK's entry pins its instance
    write(request(2, 'second', {}))
    write(request(3, 'unserved', {}))
    write(request(4, 'fails', {}))
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(viaSdk).toEqual([1, 3])
    expect(seen).toEqual(['second', 'fails'])
    expect(out.map((l) => JSON.parse(l) as unknown)).toEqual([
      { result: { content: [{ type: 'text', text: 'second' }] }, jsonrpc: '2.0', id: 2 },
      { jsonrpc: '2.0', id: 4, error: { code: -32602, message: 'no such thing', data: { why: 'test' } } },
    ])
    await transport.close()
  })
})

describe('a direct call in flight', () => {
  it('notifications/cancelled aborts its signal and no answer is sent', async () => {
    const { tm, ends, aborted } = manager()
    const c = await opened(tm)
    c.send(request(5, 'slow', {}))
    await new Promise((resolve) => setTimeout(resolve, 20))
    c.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 5, reason: 'user stopped it', _meta: envelope() } })
    c.send(request(6, 'echo', { text: 'after' }))
    expect(JSON.parse(await c.answer(6))).toMatchObject({ id: 6, result: { isError: false } })
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(c.lines.some((l) => (JSON.parse(l) as { id?: unknown }).id === 5)).toBe(false)
    expect(aborted).toHaveLength(1)
    const end = ends.find((e) => e.tool === 'slow')
    expect(end?.view).toMatchObject({ status: 'cancelled', by: 'signal' })
    await c.close()
  })

  it('closing the connection aborts it', async () => {
    const { tm, ends, aborted } = manager()
    const c = await opened(tm)
    c.send(request(7, 'slow', {}))
    await new Promise((resolve) => setTimeout(resolve, 20))
    await c.close()
    expect(aborted).toHaveLength(1)
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(ends.find((e) => e.tool === 'slow')?.view).toMatchObject({ status: 'cancelled', by: 'signal' })
  })
})

describe('the encoding helpers', () => {
  it('encodedResult stamps resultType and the server identity, keeping a handler-set one', () => {
    const info = { name: 's', version: '1' }
    expect(JSON.stringify(encodedResult({ content: [] }, info))).toBe('{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}},"content":[],"resultType":"complete"}')
    const own = { _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'mine', version: '2' } }, content: [], resultType: 'complete' }
    expect(encodedResult(own, info)).toEqual(own)
  })

  it('errorAnswerOf maps a throw as the SDK does', () => {
    expect(errorAnswerOf(new Error('x'))).toEqual({ code: -32603, message: 'x' })
    expect(errorAnswerOf({ code: -32002, message: 'gone' })).toEqual({ code: -32602, message: 'gone' })
    expect(errorAnswerOf('text')).toEqual({ code: -32603, message: 'Internal error' })
  })
})

describe('direct tools/call over HTTP answers what the SDK answers', () => {
  const HEADERS = { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call' }
  /** POSTs `frame` with the exact content type (direct) or one with a charset the SDK accepts too (the SDK's way). */
  async function post(url: string, frame: Record<string, unknown>, contentType: string, extra: Record<string, string> = {}): Promise<{ status: number; type: string | null; body: string }> {
    const name = (frame.params as { name: string }).name
    const r = await fetch(url, { method: 'POST', headers: { ...HEADERS, 'content-type': contentType, 'mcp-name': name, ...extra }, body: JSON.stringify(frame) })
    return { status: r.status, type: r.headers.get('content-type'), body: normalized(await r.text()) }
  }
  const cases: [string, Record<string, unknown>][] = [
    ['a success', request(1, 'echo', { text: 'hello' })],
    ['invalid arguments', request(2, 'echo', { text: 5 })],
    ['a tool that throws', request(3, 'boom', {})],
    ['a sensitive field, redacted', request(4, 'secret', {})],
    ['an image part', request(5, 'picture', {})],
    ['a confirmation the client cannot be asked about', request(6, 'delete', {})],
    ['a string id', request('h-1', 'plain', {})],
  ]
  for (const [what, frame] of cases) {
    it(what, async () => {
      const server = await serveHttp(manager().tm, { port: 0, stateless: true })
      try {
        const direct = await post(server.url, frame, 'application/json')
        const sdk = await post(server.url, frame, 'application/json; charset=utf-8')
        expect(direct).toEqual(sdk)
        expect(direct.status).toBe(200)
      } finally {
        await server.close()
      }
    })
  }

  /** POSTs a 2025-11-25 `frame` (no session) with the exact content type (direct on a stateless server) or one with a charset (the SDK's way). */
  async function postLegacy(url: string, frame: Record<string, unknown>, contentType: string): Promise<{ status: number; type: string | null; body: string }> {
    const r = await fetch(url, { method: 'POST', headers: { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25', 'content-type': contentType }, body: JSON.stringify(frame) })
    return { status: r.status, type: r.headers.get('content-type'), body: normalized(await r.text()) }
  }
  const legacyCall = (id: number | string, name: string, args?: unknown): Record<string, unknown> => ({ jsonrpc: '2.0', id, method: 'tools/call', params: args === undefined ? { name } : { name, arguments: args } })
  const legacyCases: [string, Record<string, unknown>][] = [
    ['a success', legacyCall(1, 'echo', { text: 'hello' })],
    ['invalid arguments', legacyCall(2, 'echo', { text: 5 })],
    ['no arguments', legacyCall(3, 'echo')],
    ['a tool that throws', legacyCall(4, 'boom', {})],
    ['a sensitive field, redacted', legacyCall(5, 'secret', {})],
    ['untrusted content', legacyCall(6, 'web', {})],
    ['an image part', legacyCall(7, 'picture', {})],
    ['a pending input', legacyCall(8, 'ask', {})],
    ['a confirmation', legacyCall(9, 'delete', {})],
    ['a string id', legacyCall('l-1', 'plain', {})],
  ]
  for (const [what, frame] of legacyCases) {
    it(`2025-11-25 without a session (stateless): ${what}`, async () => {
      const server = await serveHttp(manager().tm, { port: 0, stateless: true })
      try {
        const direct = await postLegacy(server.url, frame, 'application/json')
        const sdk = await postLegacy(server.url, frame, 'application/json; charset=utf-8')
        expect(direct).toEqual(sdk)
        expect(direct.status).toBe(200)
      } finally {
        await server.close()
      }
    })
  }

  it("2025-11-25 without a session: an Accept in capitals goes the SDK's way and is refused 406, nothing runs", async () => {
    const { tm, ends } = manager()
    const server = await serveHttp(tm, { port: 0, stateless: true })
    try {
      const r = await fetch(server.url, { method: 'POST', headers: { accept: 'APPLICATION/JSON, TEXT/EVENT-STREAM', 'mcp-protocol-version': '2025-11-25', 'content-type': 'application/json' }, body: JSON.stringify(legacyCall(1, 'echo', { text: 'a' })) })
      expect(r.status).toBe(406)
      expect(ends).toHaveLength(0)
    } finally {
      await server.close()
    }
  })

  it("an Mcp-Name that does not match the body goes the SDK's way and is refused", async () => {
    const server = await serveHttp(manager().tm, { port: 0, stateless: true })
    try {
      const answer = await post(server.url, request(1, 'echo', { text: 'a' }), 'application/json', { 'mcp-name': 'plain' })
      expect(answer.status).toBe(400)
      expect(answer.body).toContain('Mcp-Name')
    } finally {
      await server.close()
    }
  })

  it('a client that goes away aborts the call (cancelled by signal)', async () => {
    const { tm, ends, aborted } = manager()
    const server = await serveHttp(tm, { port: 0, stateless: true })
    try {
      const gone = new AbortController()
      const sent = fetch(server.url, { method: 'POST', signal: gone.signal, headers: { ...HEADERS, 'content-type': 'application/json', 'mcp-name': 'slow' }, body: JSON.stringify(request(1, 'slow', {})) })
      await new Promise((resolve) => setTimeout(resolve, 100))
      gone.abort()
      await sent.catch(() => undefined)
      await new Promise((resolve) => setTimeout(resolve, 100))
      expect(aborted).toHaveLength(1)
      expect(ends.find((e) => e.tool === 'slow')?.view).toMatchObject({ status: 'cancelled', by: 'signal' })
    } finally {
      await server.close()
    }
  })
})
