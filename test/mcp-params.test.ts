// MCP `tools/call` with malformed params: a JSON-RPC -32602 with a short message, never
// -32603 with the SDK's raw validation dump (issue 11, class 8); and on the client side,
// a server's raw dump never becomes the model's message.
import { PassThrough, type Readable } from 'node:stream'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { CallToolRequestSchema, CallToolResultSchema, ErrorCode, ListToolsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js'
import { isCallToolResult } from '@modelcontextprotocol/server'
import { describe, expect, it, vi } from 'vitest'
import { ToolManager } from '../src/runtime/manager.js'
import { importMcpTools } from '../src/mcp/client.js'
import { createMcpServer } from '../src/mcp/server.js'
import { serveStdio, StdioLineTransport } from '../src/mcp/stdio.js'

/**
 * The newline-delimited JSON-RPC frames `stream` writes, keyed by id (one without an id under
 * `undefined`), once `count` distinct ids have arrived, and the text read until then. Call it
 * before writing the requests.
 */
function framesOf(stream: Readable, count: number): Promise<{ frames: Map<unknown, Record<string, unknown>>; text: string }> {
  const frames = new Map<unknown, Record<string, unknown>>()
  let text = ''
  let buffered = ''
  return new Promise((resolve) => {
    stream.on('data', (chunk: Buffer) => {
      const part = chunk.toString('utf8')
      text += part
      buffered += part
      let nl: number
      while ((nl = buffered.indexOf('\n')) >= 0) {
        const frame = JSON.parse(buffered.slice(0, nl)) as Record<string, unknown>
        buffered = buffered.slice(nl + 1)
        frames.set(frame.id, frame)
        if (frames.size === count) resolve({ frames, text })
      }
    })
  })
}

async function session(requests: readonly unknown[], rawLines: readonly string[] = []): Promise<Map<unknown, Record<string, unknown>>> {
  const tm = new ToolManager()
  tm.register({ name: 'echo', inputSchema: { type: 'object' }, run: (input) => input })
  tm.register({
    name: 'bad_image',
    inputSchema: { type: 'object' },
    run: () => ({ output: 'a picture', isError: false, parts: [{ type: 'image', mimeType: 'image/png', data: '%%not base64%%' }] }),
  })
  tm.register({ name: 'words', inputSchema: { type: 'object' }, run: () => 'plain words' })
  tm.register({ name: 'list', inputSchema: { type: 'object' }, run: () => [1, 'two', { three: null }] })
  tm.register({
    name: 'fails',
    inputSchema: { type: 'object' },
    run: () => {
      throw new Error('nope')
    },
  })
  const input = new PassThrough()
  const output = new PassThrough()
  const server = createMcpServer(tm)
  await server.connect(new StdioLineTransport(input, output))
  const all = framesOf(output, requests.length + (rawLines.length > 0 ? 1 : 0))
  for (const line of rawLines) input.write(`${line}\n`)
  for (const r of requests) input.write(`${JSON.stringify(r)}\n`)
  const { frames } = await all
  await server.close()
  return frames
}

const call = (id: number, params?: unknown): unknown =>
  params === undefined ? { jsonrpc: '2.0', id, method: 'tools/call' } : { jsonrpc: '2.0', id, method: 'tools/call', params }

describe('MCP tools/call params', () => {
  it('missing name, a name that is not a string, or arguments that are not an object get -32602 with a short message', async () => {
    const frames = await session([
      call(1, { arguments: {} }),
      call(2, { name: 42, arguments: {} }),
      call(3, { name: 'echo', arguments: [1, 2] }),
      call(4, { name: 'echo', arguments: 'text' }),
      call(5, { name: 'echo', arguments: null }),
      call(6),
      call(7, { name: { toString: 'x' } }),
      call(8, { name: 'echo', arguments: { a: 1 } }),
    ])
    expect(frames.get(1)).toEqual({ jsonrpc: '2.0', id: 1, error: { code: -32602, message: 'Invalid params: "name" is required' } })
    expect(frames.get(2)).toEqual({ jsonrpc: '2.0', id: 2, error: { code: -32602, message: 'Invalid params: "name" must be a string' } })
    for (const id of [3, 4, 5]) {
      expect(frames.get(id)).toEqual({ jsonrpc: '2.0', id, error: { code: -32602, message: 'Invalid params: "arguments" must be an object' } })
    }
    expect(frames.get(6)).toEqual({ jsonrpc: '2.0', id: 6, error: { code: -32602, message: 'Invalid params: tools/call needs a params object' } })
    expect(frames.get(7)).toMatchObject({ error: { code: -32602, message: 'Invalid params: "name" must be a string' } })
    // a well-formed call still runs
    expect(frames.get(8)).toMatchObject({ result: { isError: false, structuredContent: { a: 1 } } })
  })

  it('an unknown tool keeps its -32602 answer', async () => {
    const frames = await session([call(1, { name: 'nope', arguments: {} })])
    expect(frames.get(1)).toEqual({ jsonrpc: '2.0', id: 1, error: { code: -32602, message: 'Unknown tool: nope' } })
  })

  it('an integer id beyond 2^53 is served (test/mcp-ids.test.ts checks it is echoed as sent); a fractional one is not a valid id', async () => {
    const frames = await session([call(1, { name: 'echo', arguments: {} })], ['{"jsonrpc":"2.0","id":-33959150112988556,"method":"ping"}'])
    expect(frames.get(-33959150112988556)).toEqual({ jsonrpc: '2.0', id: -33959150112988556, result: {} })
    expect(frames.get(1)).toMatchObject({ result: { isError: false } })
    const fractional = await session([call(1, { name: 'echo', arguments: {} })], ['{"jsonrpc":"2.0","id":2.5,"method":"ping"}'])
    expect(fractional.get(undefined)).toEqual({ jsonrpc: '2.0', error: { code: -32600, message: 'Invalid Request: not a JSON-RPC 2.0 message' } })
  })

  it('a line nested deeper than 1000 levels is a parse error, answered before JSON.parse could block on it', async () => {
    const deep = `{"jsonrpc":"2.0","id":9,"method":"ping","params":{"x":${'['.repeat(100_000)}${']'.repeat(100_000)}}}`
    const frames = await session([call(1, { name: 'echo', arguments: {} })], [deep])
    expect(frames.get(undefined)).toEqual({ jsonrpc: '2.0', error: { code: -32700, message: 'Parse error: nested deeper than 1000 levels' } })
    expect(frames.get(1)).toMatchObject({ result: { isError: false } })
  })

  it('a result that is not a valid CallToolResult is never sent: the answer is valid, or -32603 with a short message', async () => {
    const frames = await session([call(1, { name: 'bad_image', arguments: {} })])
    const frame = frames.get(1) as { result?: unknown; error?: { code: number; message: string } }
    if (frame.error !== undefined) {
      expect(frame.error).toEqual({ code: -32603, message: 'Internal error: the tool result is not a valid CallToolResult' })
    } else {
      expect(CallToolResultSchema.safeParse(frame.result).success).toBe(true)
    }
  })

  it('a result of one text item (structured or not, success or error) is a valid CallToolResult as built: it is not parsed again per call', async () => {
    const frames = await session([
      call(1, { name: 'echo', arguments: { text: 'hello', n: 1 } }),
      call(2, { name: 'words', arguments: {} }),
      call(3, { name: 'list', arguments: {} }),
      call(4, { name: 'fails', arguments: {} }),
    ])
    for (const id of [1, 2, 3, 4]) {
      const result = frames.get(id)?.result as { content: unknown[] } | undefined
      expect(result?.content).toHaveLength(1)
      expect(isCallToolResult(result)).toBe(true)
      expect(CallToolResultSchema.safeParse(result).success).toBe(true)
    }
  })

  it('importMcpTools: a server error carrying a raw validation dump reaches the model as one short line', async () => {
    const dump = JSON.stringify([{ code: 'invalid_type', expected: 'string', received: 'undefined', path: ['params', 'name'], message: 'Invalid input' }], null, 2)
    const remote = new Server({ name: 'remote', version: '1' }, { capabilities: { tools: {} } })
    remote.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [{ name: 'strict', inputSchema: { type: 'object' } }] }))
    remote.setRequestHandler(CallToolRequestSchema, () => {
      throw new McpError(ErrorCode.InvalidParams, `Invalid tools/call request: ${dump}${'x'.repeat(500)}`)
    })
    const [a, b] = InMemoryTransport.createLinkedPair()
    await remote.connect(a)
    const client = new Client({ name: 'local', version: '1' })
    await client.connect(b)
    const tm = new ToolManager()
    await importMcpTools(client, tm)
    const view = await tm.call('strict', {})
    expect(view.status).toBe('error')
    const message = (view as { message: string }).message
    expect(message).toBe('The MCP server answered with an error (-32602): Invalid tools/call request: [')
    await client.close()
  })

  it('importMcpTools: a long one-line server message is cut to 200 characters', async () => {
    const remote = new Server({ name: 'remote', version: '1' }, { capabilities: { tools: {} } })
    remote.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [{ name: 'strict', inputSchema: { type: 'object' } }] }))
    remote.setRequestHandler(CallToolRequestSchema, () => {
      throw new McpError(ErrorCode.InternalError, 'y'.repeat(5000))
    })
    const [a, b] = InMemoryTransport.createLinkedPair()
    await remote.connect(a)
    const client = new Client({ name: 'local', version: '1' })
    await client.connect(b)
    const tm = new ToolManager()
    await importMcpTools(client, tm)
    const view = await tm.call('strict', {})
    expect(view).toMatchObject({ status: 'error', message: `The MCP server answered with an error (-32603): ${'y'.repeat(200)}…` })
    await client.close()
  })
})

/** A `tools/call` line for `count` whose arguments hold `keys` members, one of them a secret. */
function wideCall(id: number, keys: number): string {
  const members = new Array<string>(keys)
  members[0] = '"password":"hunter2-do-not-echo"'
  for (let i = 1; i < keys; i++) members[i] = `"k${i.toString(36)}":0`
  return `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"count","arguments":{${members.join(',')}}}}`
}

function counting(options?: ConstructorParameters<typeof ToolManager>[0]): ToolManager {
  const tm = new ToolManager(options)
  tm.register({ name: 'count', inputSchema: { type: 'object' }, run: (input: Record<string, unknown>) => ({ keys: Object.keys(input).length }) })
  return tm
}

/** Serves `tm` with `serveStdio` over in-memory streams; one answer per line, keyed by id. */
async function stdioAnswers(tm: ToolManager, lines: readonly string[]): Promise<{ frames: Map<unknown, Record<string, unknown>>; text: string }> {
  const stdin = new PassThrough()
  const stdout = new PassThrough()
  const server = await serveStdio(tm, { stdin, stdout })
  const all = framesOf(stdout, lines.length)
  for (const line of lines) stdin.write(`${line}\n`)
  const answers = await all
  await server.close()
  return answers
}

describe('serveStdio: a line over the manager\'s input limit', () => {
  it('a tools/call line with 200,000 argument keys is a parse error answered before JSON.parse; the next call still runs', async () => {
    const wide = wideCall(1, 200_000)
    const parse = vi.spyOn(JSON, 'parse')
    try {
      const { frames, text } = await stdioAnswers(counting(), [wide, JSON.stringify(call(2, { name: 'count', arguments: { a: 1 } }))])
      expect(parse.mock.calls.some(([t]) => t === wide)).toBe(false)
      expect(frames.get(undefined)).toEqual({ jsonrpc: '2.0', error: { code: -32700, message: 'Parse error: holds more than 100064 values' } })
      expect(frames.get(2)).toMatchObject({ result: { isError: false, structuredContent: { keys: 1 } } })
      expect(text).not.toContain('hunter2')
    } finally {
      parse.mockRestore()
    }
  })

  it('a raised maxInputValues raises the line limit with it: the same line the default refuses reaches the tool', async () => {
    const wide = wideCall(1, 120_000)
    const refused = await stdioAnswers(counting(), [wide])
    expect(refused.frames.get(undefined)).toMatchObject({ error: { code: -32700, message: 'Parse error: holds more than 100064 values' } })
    const raised = await stdioAnswers(counting({ maxInputValues: 150_000 }), [wide])
    expect(raised.frames.get(1)).toMatchObject({ result: { isError: false, structuredContent: { keys: 120_000 } } })
  })

  it('a StdioLineTransport of its own takes maxLineValues', async () => {
    const input = new PassThrough()
    const output = new PassThrough()
    const server = createMcpServer(new ToolManager())
    await server.connect(new StdioLineTransport(input, output, { maxLineValues: 50 }))
    const answer = new Promise<string>((resolve) => output.once('data', (chunk: Buffer) => resolve(chunk.toString('utf8'))))
    input.write(`${JSON.stringify(call(3, { name: 'echo', arguments: { a: new Array(60).fill(0) } }))}\n`)
    expect(JSON.parse(await answer)).toEqual({ jsonrpc: '2.0', error: { code: -32700, message: 'Parse error: holds more than 50 values' } })
    await server.close()
  })
})
