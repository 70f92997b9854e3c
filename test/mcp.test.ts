// `toolwire serve` under a real MCP client (the official SDK over stdio), its raw
// frames checked against the official 2025-11-25 schema, and importMcpTools against
// the SDK's own McpServer.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { ElicitRequestSchema, ErrorCode, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { Ajv2020 } from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { importMcpTools, fromMcp } from '../src/mcp/client.js'
import { createMcpServer, mcpToolOf } from '../src/mcp/server.js'
import { ToolManager } from '../src/runtime/manager.js'
import { toModel } from '../src/render/model.js'
import { toMcp } from '../src/render/mcp.js'
import { ToolResult } from '../src/core/result.js'
import { canonicalOf } from '../src/core/view.js'
import { cli, makeToolBox, until, writeManagerModule, type ToolBox } from './fixtures/mcp/helpers.js'
import { referencePath } from './support.js'

const schemaPath = referencePath('mcp', 'schema-2025-11-25.json')
const ajv = new Ajv2020({ strict: false, allErrors: true })
;(addFormats as unknown as (a: unknown) => void)(ajv)
if (schemaPath !== undefined) ajv.addSchema(JSON.parse(readFileSync(schemaPath, 'utf8')), 'mcp')
const validator = (def: string) => {
  if (schemaPath === undefined) return (): void => {}
  const v = ajv.getSchema(`mcp#/$defs/${def}`)
  if (v === undefined) throw new Error(`no definition ${def} in the MCP schema`)
  return (value: unknown): void => {
    if (!v(value)) throw new Error(`${def}: ${ajv.errorsText(v.errors)}\n${JSON.stringify(value).slice(0, 800)}`)
  }
}
const validMessage = validator('JSONRPCMessage')
const resultValidators: Record<string, (v: unknown) => void> = {
  initialize: validator('InitializeResult'),
  'tools/list': validator('ListToolsResult'),
  'tools/call': validator('CallToolResult'),
  ping: validator('EmptyResult'),
}

let box: ToolBox['box']
let markers: string
let toolModule: string
let managerModule: string

beforeAll(() => {
  ;({ box, markers, toolModule } = makeToolBox())
  managerModule = writeManagerModule(box.dir)
})
afterAll(() => box?.cleanup())

/** A raw session: JSON-RPC lines in, every stdout line collected as a parsed frame. */
function rawServer(args: string[]): { child: ChildProcessWithoutNullStreams; frames: Record<string, unknown>[]; send: (line: string) => void; exit: Promise<number | null> } {
  const child = spawn(process.execPath, [cli, 'serve', ...args], { stdio: 'pipe' })
  const frames: Record<string, unknown>[] = []
  createInterface({ input: child.stdout }).on('line', (line) => frames.push(JSON.parse(line)))
  const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
  return { child, frames, send: (line) => child.stdin.write(line + '\n'), exit }
}

const INIT = JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } })

/** These tests exist to check frames against the official schema: without it they skip. */
describe.skipIf(schemaPath === undefined)('raw frames', () => {
  it('every frame validates against the 2025-11-25 schema; malformed input gets JSON-RPC errors; closing stdin exits 0', async () => {
    const s = rawServer(['--root', box.root])
    const methods = new Map<unknown, string>()
    const request = (id: number, method: string, params?: unknown): void => {
      methods.set(id, method)
      s.send(JSON.stringify(params === undefined ? { jsonrpc: '2.0', id, method } : { jsonrpc: '2.0', id, method, params }))
    }
    methods.set(0, 'initialize')
    s.send(INIT)
    s.send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }))
    s.send('{ this is not json')
    s.send('{"jsonrpc":"2.0","id":99,"params":{}}')
    s.send('[]')
    s.send('"just a string"')
    request(1, 'tools/list')
    request(2, 'tools/call', { name: 'list_dir', arguments: { path: 'sub' } })
    request(3, 'tools/call', { name: 'no_such_tool', arguments: {} })
    request(4, 'tools/call', { name: 'read_file', arguments: { path: 42 } })
    request(5, 'tools/call', { name: 'read_file', arguments: { path: 'chart.png' } })
    request(6, 'tools/call', { name: 'read_file', arguments: { path: '../outside/secret.txt' } })
    request(7, 'tools/call', { name: 'delete_file', arguments: { path: 'notes.txt' } })
    request(8, 'ping')
    request(9, 'no/such/method')
    request(10, 'tools/call', { name: 'read_file', arguments: { path: 'report.pdf' } })
    await until(() => s.frames.filter((f) => 'id' in f && f.id !== 99).length >= 11)
    s.child.stdin.end()
    expect(await s.exit).toBe(0)

    for (const frame of s.frames) {
      validMessage(frame)
      if ('result' in frame) resultValidators[methods.get(frame.id)!]?.(frame.result)
    }
    const byId = new Map(s.frames.filter((f) => 'id' in f).map((f) => [f.id, f]))
    const idless = s.frames.filter((f) => !('id' in f))
    expect(idless).toEqual([
      { jsonrpc: '2.0', error: { code: -32700, message: 'Parse error' } },
      { jsonrpc: '2.0', error: { code: -32600, message: expect.any(String) } },
      { jsonrpc: '2.0', error: { code: -32600, message: expect.any(String) } },
    ])
    expect(byId.get(99)).toMatchObject({ error: { code: -32600 } })
    expect(byId.get(0)).toMatchObject({ result: { protocolVersion: '2025-11-25', capabilities: { tools: {} }, serverInfo: { name: 'toolwire' } } })
    const tools = (byId.get(1) as { result: { tools: Record<string, unknown>[] } }).result.tools
    expect(tools.map((t) => t.name)).toEqual(['delete_file', 'edit_settings', 'list_dir', 'read_file', 'search_text'])
    expect(byId.get(2)).toMatchObject({ result: { isError: false, structuredContent: { path: 'sub' } } })
    expect(byId.get(3)).toEqual({ jsonrpc: '2.0', id: 3, error: { code: -32602, message: 'Unknown tool: no_such_tool' } })
    expect(byId.get(4)).toMatchObject({ result: { isError: true, content: [{ type: 'text', text: expect.stringContaining('Invalid arguments') }] } })
    expect(byId.get(5)).toMatchObject({ result: { isError: false, content: [{ type: 'text' }, { type: 'image', mimeType: 'image/png' }] } })
    expect(byId.get(6)).toMatchObject({ result: { isError: true, content: [{ type: 'text', text: expect.stringContaining('not_allowed') }] } })
    expect(byId.get(7)).toMatchObject({ result: { isError: true, content: [{ type: 'text', text: expect.stringContaining('Delete notes.txt') }] } })
    expect(existsSync(join(box.root, 'notes.txt'))).toBe(true)
    expect(byId.get(8)).toMatchObject({ result: {} })
    expect(byId.get(9)).toMatchObject({ error: { code: -32601 } })
    expect(byId.get(10)).toMatchObject({ result: { content: [{ type: 'text' }, { type: 'resource', resource: { mimeType: 'application/pdf' } }] } })
  })

  it('elicitation frames validate too: the server asks with elicitation/create and the call continues on the answer', async () => {
    const { writeFileSync } = await import('node:fs')
    writeFileSync(join(box.root, 'raw-temp.txt'), 'x')
    const s = rawServer(['--root', box.root])
    s.send(JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: { elicitation: { form: {} } }, clientInfo: { name: 'raw', version: '1' } } }))
    s.send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }))
    s.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'delete_file', arguments: { path: 'raw-temp.txt' } } }))
    await until(() => s.frames.some((f) => f.method === 'elicitation/create'))
    const ask = s.frames.find((f) => f.method === 'elicitation/create') as { id: number | string; params: { message: string } }
    validator('ElicitRequest')(ask)
    expect(ask.params.message).toBe('Confirm: Delete raw-temp.txt')
    const answer = { jsonrpc: '2.0', id: ask.id, result: { action: 'accept', content: { approve: true } } }
    validMessage(answer)
    s.send(JSON.stringify(answer))
    await until(() => s.frames.some((f) => f.id === 1))
    s.child.stdin.end()
    expect(await s.exit).toBe(0)
    for (const frame of s.frames) validMessage(frame)
    const done = s.frames.find((f) => f.id === 1) as { result: CallToolResult }
    resultValidators['tools/call']!(done.result)
    expect(done.result).toMatchObject({ isError: false, structuredContent: { deleted: 'raw-temp.txt' } })
    expect(existsSync(join(box.root, 'raw-temp.txt'))).toBe(false)
  })

  it('progress and cancellation frames validate too', async () => {
    const s = rawServer([toolModule])
    s.send(INIT)
    s.send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }))
    s.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'progress', arguments: {}, _meta: { progressToken: 'tok' } } }))
    await until(() => s.frames.some((f) => f.id === 1))
    s.send(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'slow', arguments: {} } }))
    await until(() => existsSync(join(markers, 'started')))
    s.send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 2, reason: 'user stop' } }))
    await until(() => existsSync(join(markers, 'aborted')))
    s.send(JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'fails', arguments: {} } }))
    await until(() => s.frames.some((f) => f.id === 3))
    s.child.stdin.end()
    expect(await s.exit).toBe(0)
    for (const frame of s.frames) validMessage(frame)
    const progress = s.frames.filter((f) => f.method === 'notifications/progress')
    expect(progress.map((f) => f.params)).toEqual([1, 2, 3].map((i) => ({ progressToken: 'tok', progress: i, total: 3, message: `step ${i}` })))
    for (const f of progress) validator('ProgressNotification')(f)
    expect(s.frames.some((f) => f.id === 2)).toBe(false) // a cancelled request gets no response
    const failed = s.frames.find((f) => f.id === 3) as { result: CallToolResult }
    resultValidators['tools/call']!(failed.result)
    expect(failed.result.isError).toBe(true)
    expect(JSON.stringify(failed.result)).not.toContain('secret internal detail')
  })
})

describe('a real MCP client over stdio', () => {
  let client: Client
  let transport: StdioClientTransport
  let negotiated: string | undefined

  beforeAll(async () => {
    transport = new StdioClientTransport({ command: process.execPath, args: [cli, 'serve', '--root', box.root], stderr: 'pipe' })
    // the SDK tells the transport which revision the server answered
    ;(transport as { setProtocolVersion?: (v: string) => void }).setProtocolVersion = (v) => {
      negotiated = v
    }
    client = new Client({ name: 'toolwire-test', version: '1.0.0' })
    await client.connect(transport)
  })
  afterAll(async () => {
    await client?.close()
  })

  it('negotiates 2025-11-25 and lists the tools with schemas verbatim, annotations and _meta', async () => {
    expect(negotiated).toBe('2025-11-25')
    const { tools } = await client.listTools()
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]))
    const tm = new ToolManager()
    const { createDemoTools } = await import('../src/demo/index.js')
    for (const tool of await createDemoTools({ root: box.root })) tm.register(tool)
    for (const entry of tm.manifest()) {
      expect(byName[entry.name]!.inputSchema).toEqual(entry.inputSchema)
      if (entry.outputSchema !== undefined) expect(byName[entry.name]!.outputSchema).toEqual(entry.outputSchema)
    }
    expect(byName.list_dir!.outputSchema).toMatchObject({ $schema: 'https://json-schema.org/draft/2020-12/schema', $defs: { entry: {} }, additionalProperties: false })
    expect(byName.read_file!.inputSchema).toMatchObject({ $schema: expect.any(String), additionalProperties: false })
    expect(byName.read_file!.annotations).toEqual({ readOnlyHint: true, idempotentHint: true })
    expect(byName.read_file!._meta).toEqual({ 'toolwire/untrustedContent': true })
    expect(byName.delete_file!.annotations).toEqual({ destructiveHint: true })
    expect(byName.delete_file!._meta).toEqual({ 'toolwire/needsConfirmation': true })
    expect(byName.list_dir!._meta).toBeUndefined()
  })

  it('a call that succeeds', async () => {
    const r = (await client.callTool({ name: 'search_text', arguments: { query: 'needle', path: 'sub' } })) as CallToolResult
    expect(r.isError).toBe(false)
    expect(r.structuredContent).toMatchObject({ matches: [{ path: 'sub/a.txt', line: 1 }, { path: 'sub/a.txt', line: 3 }, { path: 'sub/deeper/b.md', line: 1 }], truncated: false })
    expect(r._meta?.['toolwire/untrusted']).toBe(true)
  })

  it('invalid arguments are an isError result', async () => {
    const r = (await client.callTool({ name: 'list_dir', arguments: { path: 7, extra: true } })) as CallToolResult
    expect(r.isError).toBe(true)
    expect(r.content[0]).toMatchObject({ type: 'text', text: expect.stringMatching(/^Invalid arguments: /) })
  })

  it('an unknown tool is a JSON-RPC error -32602', async () => {
    const err = await client.callTool({ name: 'does_not_exist', arguments: {} }).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(McpError)
    expect((err as McpError).code).toBe(ErrorCode.InvalidParams)
    expect((err as McpError).message).toContain('Unknown tool: does_not_exist')
  })

  it('a tool error is an isError result', async () => {
    const r = (await client.callTool({ name: 'read_file', arguments: { path: 'missing.txt' } })) as CallToolResult
    expect(r.isError).toBe(true)
    expect(JSON.stringify(r.content)).toContain('missing.txt does not exist')
  })

  it('an image result is MCP image content', async () => {
    const r = (await client.callTool({ name: 'read_file', arguments: { path: 'chart.png' } })) as CallToolResult
    const bytes = readFileSync(join(box.root, 'chart.png'))
    expect(r.isError).toBe(false)
    expect(r.content[0]).toMatchObject({ type: 'text', text: expect.stringContaining(`chart.png (image/png, ${bytes.length} bytes)`) })
    expect(r.content[1]).toMatchObject({ type: 'image', mimeType: 'image/png', data: bytes.toString('base64') })
  })

  it('a path escape, through .. or a symlink, is an isError result naming not_allowed', async () => {
    for (const path of ['../x', '../outside/secret.txt', 'escape-link', 'escape-dir/secret.txt']) {
      const r = (await client.callTool({ name: 'read_file', arguments: { path } })) as CallToolResult
      expect(r.isError, path).toBe(true)
      expect(JSON.stringify(r.content), path).toContain('not_allowed')
      expect(JSON.stringify(r.content), path).not.toContain('top secret')
    }
  })

  it('a call that needs confirmation answers isError naming what to confirm when the client cannot elicit', async () => {
    const r = (await client.callTool({ name: 'delete_file', arguments: { path: 'notes.txt' } })) as CallToolResult
    expect(r.isError).toBe(true)
    expect(r.content[0]).toMatchObject({ type: 'text', text: expect.stringContaining('Delete notes.txt') })
    expect(r._meta?.['toolwire/confirmation']).toMatchObject({ summary: 'Delete notes.txt' })
    expect(existsSync(join(box.root, 'notes.txt'))).toBe(true)
  })
})

describe('serving a module', () => {
  it('cancellation through the client signal aborts the tool; progress reaches the client', async () => {
    const transport = new StdioClientTransport({ command: process.execPath, args: [cli, 'serve', toolModule], stderr: 'pipe' })
    const client = new Client({ name: 'toolwire-test', version: '1.0.0' })
    await client.connect(transport)
    try {
      const seen: number[] = []
      const onprogress = (p: { progress: number }): void => {
        seen.push(p.progress)
        writeFileSync(join(markers, `progress-${p.progress}`), '')
      }
      const r = (await client.callTool({ name: 'progress', arguments: { ack: true } }, undefined, { onprogress })) as CallToolResult
      expect(r.structuredContent).toEqual({ steps: 3 })
      expect(seen).toEqual([1, 2, 3])

      for (const f of ['started', 'aborted']) if (existsSync(join(markers, f))) (await import('node:fs')).rmSync(join(markers, f))
      const controller = new AbortController()
      const pending = client.callTool({ name: 'slow', arguments: {} }, undefined, { signal: controller.signal })
      await until(() => existsSync(join(markers, 'started')))
      controller.abort('stop')
      await expect(pending).rejects.toThrow()
      // the marker exists before its text is written: wait for the text
      await until(() => existsSync(join(markers, 'aborted')) && readFileSync(join(markers, 'aborted'), 'utf8') !== '')
      expect(readFileSync(join(markers, 'aborted'), 'utf8')).toMatch(/abort/i)

      const w = (await client.callTool({ name: 'waits', arguments: {} })) as CallToolResult
      expect(w.isError).toBe(true)
      expect(JSON.stringify(w.content)).toContain('Which file?')
    } finally {
      await client.close()
    }
  })

  it('elicitation confirms (or declines) a call that needs confirmation', async () => {
    const transport = new StdioClientTransport({ command: process.execPath, args: [cli, 'serve', '--root', box.root], stderr: 'pipe' })
    const client = new Client({ name: 'toolwire-test', version: '1.0.0' }, { capabilities: { elicitation: { form: {} } } })
    const asked: string[] = []
    let approve = false
    client.setRequestHandler(ElicitRequestSchema, (req) => {
      asked.push(req.params.message)
      return approve ? { action: 'accept', content: { approve: true } } : { action: 'decline' }
    })
    await client.connect(transport)
    try {
      const { writeFileSync } = await import('node:fs')
      writeFileSync(join(box.root, 'temp.txt'), 'x')
      const declined = (await client.callTool({ name: 'delete_file', arguments: { path: 'temp.txt' } })) as CallToolResult
      expect(declined.isError).toBe(true)
      expect(existsSync(join(box.root, 'temp.txt'))).toBe(true)
      approve = true
      const done = (await client.callTool({ name: 'delete_file', arguments: { path: 'temp.txt' } })) as CallToolResult
      expect(done).toMatchObject({ isError: false, structuredContent: { deleted: 'temp.txt' } })
      expect(existsSync(join(box.root, 'temp.txt'))).toBe(false)
      expect(asked).toEqual(['Confirm: Delete temp.txt', 'Confirm: Delete temp.txt'])
    } finally {
      await client.close()
    }
  })

  it('a module default-exporting a ToolManager', async () => {
    const transport = new StdioClientTransport({ command: process.execPath, args: [cli, 'serve', managerModule], stderr: 'pipe' })
    const client = new Client({ name: 'toolwire-test', version: '1.0.0' })
    await client.connect(transport)
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['shout'])
      const r = (await client.callTool({ name: 'shout', arguments: { text: 'hi' } })) as CallToolResult
      expect(r).toMatchObject({ isError: false, structuredContent: { text: 'HI' } })
    } finally {
      await client.close()
    }
  })
})

describe('mcpToolOf', () => {
  it('wraps non-object schemas the way MCP requires', () => {
    expect(mcpToolOf({ name: 'a', inputSchema: true, hints: {} })).toEqual({ name: 'a', inputSchema: { type: 'object' } })
    expect(mcpToolOf({ name: 'b', inputSchema: { properties: {} }, outputSchema: { type: 'string' }, hints: { readOnly: false } })).toEqual({
      name: 'b',
      inputSchema: { properties: {}, type: 'object' },
      outputSchema: { type: 'object', properties: { result: { type: 'string' } }, required: ['result'] },
      annotations: { readOnlyHint: false },
    })
  })
})

describe('importMcpTools against the SDK McpServer', () => {
  let client: Client
  let serverAborted = false
  let serverStarted = false

  beforeAll(async () => {
    const server = new McpServer({ name: 'peer', version: '1.0.0' })
    server.registerTool('echo', { description: 'Echo', inputSchema: { text: z.string() }, annotations: { readOnlyHint: true } }, ({ text }) => ({
      content: [{ type: 'text', text }],
    }))
    server.registerTool('boom', { inputSchema: {} }, () => ({ content: [{ type: 'text', text: 'it broke' }], isError: true }))
    server.registerTool('picture', { inputSchema: {} }, () => ({
      content: [
        { type: 'text', text: 'a pixel' },
        { type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' },
      ],
    }))
    server.registerTool('measure', { inputSchema: {}, outputSchema: { size: z.number() } }, () => ({
      content: [{ type: 'text', text: '{"size":3}' }],
      structuredContent: { size: 3 },
    }))
    server.registerTool('hang', { inputSchema: {} }, (_args, extra) => new Promise((resolve) => {
      serverStarted = true
      extra.signal.addEventListener('abort', () => {
        serverAborted = true
        resolve({ content: [] })
      })
    }))
    const [a, b] = InMemoryTransport.createLinkedPair()
    await server.connect(a)
    client = new Client({ name: 'importer', version: '1.0.0' })
    await client.connect(b)
  })

  it('returns definitions and registers them into a manager', async () => {
    const defs = await importMcpTools(client)
    expect(defs.map((d) => d.name)).toEqual(['echo', 'boom', 'picture', 'measure', 'hang'])
    expect(defs[0]).toMatchObject({ description: 'Echo', hints: { readOnly: true }, inputSchema: { type: 'object', properties: { text: { type: 'string' } } } })
    const tm = new ToolManager()
    await importMcpTools(client, tm, { prefix: 'peer__' })
    expect(tm.manifest().map((t) => t.name)).toEqual(['peer__echo', 'peer__boom', 'peer__picture', 'peer__measure', 'peer__hang'])
  })

  it('maps results back: text, isError, images, structuredContent; validates input; cancels', async () => {
    const tm = new ToolManager()
    await importMcpTools(client, tm)
    expect(await tm.call('echo', { text: 'hi' })).toMatchObject({ status: 'ok', data: 'hi' })
    expect(await tm.call('echo', { text: 1 })).toMatchObject({ status: 'invalid' })
    expect(await tm.call('boom', {})).toMatchObject({ status: 'error', message: 'it broke' })
    const pic = await tm.call('picture', {})
    expect(pic).toMatchObject({ status: 'ok', data: 'a pixel' })
    expect(canonicalOf(pic)!.parts()).toEqual([{ type: 'image', mimeType: 'image/png', data: 'iVBORw0KGgo=' }])
    expect(toModel(pic).parts).toHaveLength(1)
    expect(await tm.call('measure', {})).toMatchObject({ status: 'ok', data: { size: 3 } })
    const running = tm.call('hang', {}, { callId: 'hang-1' })
    await until(() => serverStarted)
    expect(tm.cancel('hang-1')).toBe(true)
    expect(await running).toMatchObject({ status: 'cancelled', by: 'operator' })
    await until(() => serverAborted)
  })

  it('fromMcp keeps the untrusted mark of a toolwire server without doubling the delimiter', () => {
    const rendered = toMcp(ToolResult.success('data <b>').withUntrusted(true)) as unknown as CallToolResult
    const back = fromMcp(rendered)
    expect(back.isUntrusted()).toBe(true)
    expect(back.text()).toBe('data <b>')
    expect(toModel(back).output.split('<untrusted-content>').length).toBe(2)
    expect(fromMcp({ content: [{ type: 'text', text: 'no' }], isError: true }).error()).toMatchObject({ kind: 'other', message: 'no' })
  })
})

describe('importMcpTools keeps a remote confirmation a confirmation', () => {
  it('a toolwire server holding a call for confirmation: needs_confirmation here with its confirmId; approved there, it runs once', async () => {
    const runs: string[] = []
    const remote = new ToolManager()
    remote.register({
      name: 'remove',
      inputSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
      needsConfirmation: true,
      summarize: ({ path }: { path: string }) => `Remove ${path}`,
      run: ({ path }: { path: string }) => {
        runs.push(path)
        return { removed: path }
      },
    })
    const [a, b] = InMemoryTransport.createLinkedPair()
    await createMcpServer(remote).connect(a)
    const client = new Client({ name: 'importer', version: '1.0.0' })
    await client.connect(b)
    try {
      const local = new ToolManager()
      await importMcpTools(client, local)
      const view = await local.call('remove', { path: 'x.txt' })
      expect(view).toMatchObject({ status: 'needs_confirmation', summary: 'Remove x.txt' })
      if (view.status !== 'needs_confirmation') throw new Error('unreachable')
      expect(runs).toEqual([])
      const approved = await remote.confirm(view.confirmId, { approve: true })
      expect(approved).toMatchObject({ status: 'ok', data: { removed: 'x.txt' } })
      expect(runs).toEqual(['x.txt'])
    } finally {
      await client.close()
    }
  })

  it('the approval URL a server gives is kept (http and https only); a result without a confirmId stays an error', async () => {
    const server = new McpServer({ name: 'peer', version: '1.0.0' })
    // each remote confirmation has its own id: one id parked twice is refused request_id_in_use
    const held = (url: unknown, confirmId = 'c-1') => ({
      content: [{ type: 'text' as const, text: 'This call needs the user confirmation' }],
      isError: true,
      _meta: { 'toolwire/confirmation': { confirmId, summary: 'Pay 10 EUR', url } },
    })
    server.registerTool('pay', { inputSchema: {} }, () => held('https://tools.example/confirm/c-1?t=abc'))
    server.registerTool('sneaky', { inputSchema: {} }, () => held('javascript:alert(1)', 'c-2'))
    server.registerTool('plain', { inputSchema: {} }, () => ({ content: [{ type: 'text', text: 'no' }], isError: true, _meta: { 'toolwire/confirmation': { summary: 'x' } } }))
    const [a, b] = InMemoryTransport.createLinkedPair()
    await server.connect(a)
    const client = new Client({ name: 'importer', version: '1.0.0' })
    await client.connect(b)
    try {
      const local = new ToolManager()
      await importMcpTools(client, local)
      const pay = await local.call('pay', {})
      expect(pay).toMatchObject({ status: 'needs_confirmation', confirmId: 'c-1', summary: 'Pay 10 EUR', metadata: { pending: { url: 'https://tools.example/confirm/c-1?t=abc' } } })
      const sneaky = await local.call('sneaky', {})
      expect(sneaky.status).toBe('needs_confirmation')
      expect(JSON.stringify(sneaky)).not.toContain('javascript')
      expect((await local.call('plain', {})).status).toBe('error')
    } finally {
      await client.close()
    }
  })
})
