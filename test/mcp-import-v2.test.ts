// importMcpTools on the SDK v2 client (`@modelcontextprotocol/client`, versionNegotiation auto):
// against toolwire's own serveHttp (2026-07-28 over loopback HTTP, every tools/call answer frame
// checked against the 2026-07-28 schema), against a plain SDK v2 McpServer (modern, through its
// createMcpHandler, no socket), and against a 2025-only 1.x SDK server (the client falls back to
// legacy). A remote input_required becomes a local needs_confirmation or pending: tm.confirm /
// tm.resume retries the original call, which runs the remote tool once; a decline never runs it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Client, InMemoryTransport, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { createMcpHandler, fromJsonSchema, McpServer, Server, type ServerContext } from '@modelcontextprotocol/server'
import { McpServer as McpServerV1 } from '@modelcontextprotocol/sdk/server/mcp.js'
import { ToolManager, type ToolContext } from '../src/runtime/manager.js'
import { serveHttp, type HttpMcpServer } from '../src/mcp/http.js'
import { pending } from '../src/core/helpers.js'
import { importMcpTools, taskAwareTransport, TASKS_EXTENSION } from '../src/mcp/client.js'
import { remoteAsk } from '../src/mcp/import/remote-input.js'
import { MemoryStore, openPostgresStore, type ToolStore } from '../src/runtime/store/index.js'
import { postgresUrl } from './fixtures/mcp/instances.js'
import { frameSchemas, validatingFetch } from './fixtures/mcp/frames.js'

const schemas = frameSchemas()
if (schemas === undefined) console.warn('mcp-import-v2: the MCP schemas are absent (TOOLWIRE_REFERENCE_DIR): frames are not validated')

const PG_URL = postgresUrl('mcp-import-v2')

const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'

/** A v2 client in auto negotiation that declares form and URL elicitation (so a server asks by input_required). */
function v2Client(): Client {
  return new Client({ name: 'importer', version: '1.0.0' }, { capabilities: { elicitation: { form: {}, url: {} } }, versionNegotiation: { mode: 'auto' } })
}

function confirmIdOf(view: { status: string; confirmId?: string }): string {
  if (view.status !== 'needs_confirmation' || view.confirmId === undefined) throw new Error(`expected needs_confirmation, got ${JSON.stringify(view)}`)
  return view.confirmId
}

describe('importMcpTools (SDK v2 client, auto) against toolwire serveHttp, 2026-07-28', () => {
  const runs = { remove: 0, deploy: 0 }
  const traces: (string | undefined)[] = []
  const checked: Promise<void>[] = []
  const seen: unknown[] = []
  let served: HttpMcpServer
  let client: Client

  beforeAll(async () => {
    const remote = new ToolManager()
    remote.register({ name: 'echo', inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] }, run: ({ text }: { text: string }) => text })
    remote.register({ name: 'fail', inputSchema: { type: 'object' }, run: () => { throw new Error('it broke') } })
    remote.register({
      name: 'remove',
      inputSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
      needsConfirmation: true,
      summarize: ({ path }: { path: string }) => `Remove ${path}`,
      run: ({ path }: { path: string }) => (runs.remove++, `removed ${path}`),
    })
    remote.register({
      name: 'deploy',
      inputSchema: { type: 'object' },
      run: () => pending({ kind: 'input', prompt: 'Which environment?', schema: { type: 'object', properties: { env: { type: 'string', enum: ['staging', 'prod'] } }, required: ['env'] } }),
      resume: (answer: unknown) => (runs.deploy++, `deployed to ${(answer as { env: string }).env}`),
    })
    remote.register({ name: 'trace', inputSchema: { type: 'object' }, run: (_input: unknown, ctx: ToolContext) => (traces.push(ctx.traceContext?.traceparent), 'traced') })
    served = await serveHttp(remote, { confirmPage: false })
    client = v2Client()
    await client.connect(new StreamableHTTPClientTransport(new URL(served.url), { fetch: validatingFetch(schemas, checked, seen) }))
  })
  afterAll(async () => {
    await client?.close()
    await served?.close()
  })

  it('connects modern, lists and calls; isError stays an error', async () => {
    expect(client.getProtocolEra()).toBe('modern')
    const tm = new ToolManager()
    await importMcpTools(client, tm)
    expect(tm.manifest().map((t) => t.name)).toEqual(['deploy', 'echo', 'fail', 'remove', 'trace'])
    expect(await tm.call('echo', { text: 'hi' })).toMatchObject({ status: 'ok', data: 'hi' })
    expect(await tm.call('fail', {})).toMatchObject({ status: 'error' })
    await Promise.all(checked.splice(0))
  })

  it('a remote confirmation is a local needs_confirmation; tm.confirm approve runs the remote tool once, the retry answers its result', async () => {
    const tm = new ToolManager()
    const events: unknown[] = []
    for (const name of ['call_start', 'call_end', 'confirmation'] as const) tm.on(name, (e) => events.push(e))
    await importMcpTools(client, tm)
    const before = runs.remove
    const view = await tm.call('remove', { path: 'a.txt' })
    expect(view).toMatchObject({ status: 'needs_confirmation' })
    expect((view as { summary: string }).summary).toContain('Remove a.txt')
    expect(JSON.stringify(view)).not.toContain('twrs1.')
    expect(runs.remove).toBe(before)
    const id = confirmIdOf(view)
    expect(await tm.confirm(id, { approve: true })).toMatchObject({ status: 'ok', data: 'removed a.txt' })
    expect(runs.remove).toBe(before + 1)
    // answered once: a second approval is refused locally, nothing is sent
    expect(await tm.confirm(id, { approve: true })).toMatchObject({ status: 'refused', code: 'request_used' })
    expect(runs.remove).toBe(before + 1)
    // the remote's requestState stays in the parked call: never in an event
    expect(events.length).toBeGreaterThan(2)
    expect(JSON.stringify(events)).not.toContain('twrs1.')
    await Promise.all(checked.splice(0))
    // the input_required frame and the retry's result frame were both seen and valid
    expect(seen.some((f) => (f as { result?: { resultType?: string } }).result?.resultType === 'input_required')).toBe(schemas !== undefined)
  })

  it('a decline is sent to the remote (it never runs) and the local call ends refused confirmation_denied', async () => {
    const tm = new ToolManager()
    await importMcpTools(client, tm)
    const before = runs.remove
    const id = confirmIdOf(await tm.call('remove', { path: 'b.txt' }))
    const denied = await tm.confirm(id, { approve: false })
    expect(denied).toMatchObject({ status: 'refused', code: 'confirmation_denied' })
    expect((denied as { message: string }).message).toContain('Remove b.txt')
    expect(runs.remove).toBe(before)
    await Promise.all(checked.splice(0))
  })

  it('a remote pending input is a local pending with its schema; tm.resume answers it and the remote resumes once', async () => {
    const tm = new ToolManager()
    await importMcpTools(client, tm)
    const view = await tm.call('deploy', {})
    expect(view).toMatchObject({ status: 'pending', request: { kind: 'input', schema: { properties: { env: { enum: ['staging', 'prod'] } } } } })
    if (view.status !== 'pending') throw new Error('unreachable')
    expect(await tm.resume(view.request.id, { env: 'staging' })).toMatchObject({ status: 'ok', data: 'deployed to staging' })
    expect(runs.deploy).toBe(1)
    await Promise.all(checked.splice(0))
  })

  it('tm.resume(id, { approve: true }) answers a remote confirmation too', async () => {
    const tm = new ToolManager()
    await importMcpTools(client, tm)
    const before = runs.remove
    const id = confirmIdOf(await tm.call('remove', { path: 'c.txt' }))
    expect(await tm.resume(id, { approve: true })).toMatchObject({ status: 'ok', data: 'removed c.txt' })
    expect(runs.remove).toBe(before + 1)
  })

  const stores: [string, () => Promise<[ToolStore, ToolStore]>][] = [['MemoryStore', async () => { const m = new MemoryStore(); return [m, m] }]]
  if (PG_URL !== undefined) {
    stores.push(['PostgreSQL', async () => {
      const schema = `tw_import_${process.pid}_${Math.floor(Math.random() * 1e9).toString(36)}`
      return [await openPostgresStore({ connectionString: PG_URL, schema }), await openPostgresStore({ connectionString: PG_URL, schema })]
    }])
  }
  it.each(stores)('with a store (%s), another manager on it confirms the call: the remote state travels in the parked row, the tool runs once', async (_kind, open) => {
    const [storeA, storeB] = await open()
    const secrets = { approvalSecret: 'an approval secret of enough bytes', storeKey: 'b'.repeat(64) }
    const tmA = new ToolManager({ store: storeA, ...secrets })
    const tmB = new ToolManager({ store: storeB, ...secrets })
    await importMcpTools(client, tmA)
    await importMcpTools(client, tmB)
    const before = runs.remove
    const id = confirmIdOf(await tmA.call('remove', { path: 'd.txt' }))
    expect(await tmB.confirm(id, { approve: true })).toMatchObject({ status: 'ok', data: 'removed d.txt' })
    expect(await tmA.confirm(id, { approve: true })).toMatchObject({ status: 'refused' })
    expect(runs.remove).toBe(before + 1)
    if (storeA !== storeB) await Promise.all([storeA.close?.(), storeB.close?.()])
  })

  it('the call sends its trace context in _meta', async () => {
    const tm = new ToolManager()
    await importMcpTools(client, tm)
    expect(await tm.call('trace', {}, { traceContext: { traceparent: TRACEPARENT } })).toMatchObject({ status: 'ok' })
    expect(traces.at(-1)?.split('-')[1]).toBe(TRACEPARENT.split('-')[1])
  })
})

describe('importMcpTools against a plain SDK v2 McpServer (2026-07-28)', () => {
  const runs = { send: 0, deploy: 0, link: 0, nag: 0 }
  const states: unknown[] = []
  let client: Client

  function server(): McpServer {
    const s = new McpServer({ name: 'peer', version: '1.0.0' })
    s.registerTool('echo', { inputSchema: fromJsonSchema({ type: 'object', properties: { text: { type: 'string' } }, required: ['text'] }) }, (args) => ({
      content: [{ type: 'text', text: String((args as { text: string }).text) }],
    }))
    s.registerTool('boom', { inputSchema: fromJsonSchema({ type: 'object' }) }, () => ({ content: [{ type: 'text', text: 'it broke' }], isError: true }))
    s.registerTool('send', { inputSchema: fromJsonSchema({ type: 'object', properties: { to: { type: 'string' } } }) }, (_args, ctx: ServerContext) => {
      const responses = ctx.mcpReq.inputResponses as Record<string, { action: string; content?: { ok?: boolean } }> | undefined
      const answer = responses?.['sure']
      if (answer === undefined) {
        return {
          resultType: 'input_required',
          inputRequests: { sure: { method: 'elicitation/create', params: { mode: 'form', message: 'Send the mail?', requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] } } } },
          requestState: 'opaque-state-1',
        } as never
      }
      states.push(ctx.mcpReq.requestState())
      if (answer.action === 'accept' && answer.content?.ok === true) {
        runs.send++
        return { content: [{ type: 'text', text: 'sent' }] }
      }
      return { content: [{ type: 'text', text: 'not sent' }], isError: true }
    })
    s.registerTool('deploy', { inputSchema: fromJsonSchema({ type: 'object' }) }, (_args, ctx: ServerContext) => {
      const answer = (ctx.mcpReq.inputResponses as Record<string, { action: string; content?: { env?: string } }> | undefined)?.['where']
      if (answer === undefined) {
        return {
          resultType: 'input_required',
          inputRequests: {
            where: {
              method: 'elicitation/create',
              params: { mode: 'form', message: 'Which environment?', requestedSchema: { type: 'object', properties: { env: { type: 'string', enum: ['staging', 'prod'] } }, required: ['env'] } },
            },
          },
        } as never
      }
      runs.deploy++
      return { content: [{ type: 'text', text: `deployed to ${answer.content?.env}` }] }
    })
    s.registerTool('open_link', { inputSchema: fromJsonSchema({ type: 'object' }) }, (_args, ctx: ServerContext) => {
      const answer = (ctx.mcpReq.inputResponses as Record<string, { action: string }> | undefined)?.['page']
      if (answer === undefined) {
        return {
          resultType: 'input_required',
          inputRequests: { page: { method: 'elicitation/create', params: { mode: 'url', message: 'Approve at the page', url: 'https://peer.test/approve/1' } } },
          requestState: 'url-state',
        } as never
      }
      runs.link++
      return { content: [{ type: 'text', text: `page ${answer.action}` }] }
    })
    s.registerTool('nag', { inputSchema: fromJsonSchema({ type: 'object' }) }, (_args, ctx: ServerContext) => {
      runs.nag++
      const round = Object.keys((ctx.mcpReq.inputResponses as object | undefined) ?? {}).length
      return {
        resultType: 'input_required',
        inputRequests: { [`again-${round}`]: { method: 'elicitation/create', params: { mode: 'form', message: 'Sure?', requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } } } } } },
      } as never
    })
    // the SDK server itself refuses an input request of a capability the client did not declare
    s.registerTool('sample', { inputSchema: fromJsonSchema({ type: 'object' }) }, () => ({
      resultType: 'input_required',
      inputRequests: { llm: { method: 'sampling/createMessage', params: { messages: [], maxTokens: 1 } } },
    }) as never)
    return s
  }

  beforeAll(async () => {
    const handler = createMcpHandler(() => server())
    client = v2Client()
    await client.connect(new StreamableHTTPClientTransport(new URL('http://peer.test/mcp'), { fetch: (input, init) => handler.fetch(new Request(input, init)) }))
  })
  afterAll(() => client?.close())

  it('lists, calls, isError → error; a form confirmation runs the tool once on approval, never on a decline, with requestState echoed', async () => {
    expect(client.getProtocolEra()).toBe('modern')
    const tm = new ToolManager()
    await importMcpTools(client, tm, { prefix: 'peer__' })
    expect(await tm.call('peer__echo', { text: 'hi' })).toMatchObject({ status: 'ok', data: 'hi' })
    expect(await tm.call('peer__boom', {})).toMatchObject({ status: 'error', message: 'it broke' })
    const first = await tm.call('peer__send', { to: 'bob' })
    expect(first).toMatchObject({ status: 'needs_confirmation', summary: 'Send the mail?' })
    expect(runs.send).toBe(0)
    expect(await tm.confirm(confirmIdOf(first), { approve: true })).toMatchObject({ status: 'ok', data: 'sent' })
    expect(runs.send).toBe(1)
    expect(states).toEqual(['opaque-state-1'])
    const second = await tm.call('peer__send', { to: 'eve' })
    expect(await tm.confirm(confirmIdOf(second), { approve: false })).toMatchObject({ status: 'refused', code: 'confirmation_denied' })
    expect(runs.send).toBe(1)
    // the decline reached the remote (it answered its own "not sent")
    expect(states).toEqual(['opaque-state-1', 'opaque-state-1'])
  })

  it('a form asking for other input is a local pending with the requested schema; tm.resume sends the answer, the retry answers the result', async () => {
    const tm = new ToolManager()
    await importMcpTools(client, tm)
    const view = await tm.call('deploy', {})
    expect(view).toMatchObject({ status: 'pending', request: { kind: 'input', prompt: 'Which environment?', schema: { properties: { env: { enum: ['staging', 'prod'] } }, required: ['env'] } } })
    if (view.status !== 'pending') throw new Error('unreachable')
    // an answer outside the schema is refused locally and does not use the request up
    expect(await tm.resume(view.request.id, { env: 'moon' })).toMatchObject({ status: 'invalid' })
    expect(runs.deploy).toBe(0)
    expect(await tm.resume(view.request.id, { env: 'prod' })).toMatchObject({ status: 'ok', data: 'deployed to prod' })
    expect(runs.deploy).toBe(1)
  })

  it('a URL elicitation is a local needs_confirmation carrying the URL; approving sends accept and answers the result', async () => {
    const tm = new ToolManager()
    await importMcpTools(client, tm)
    const view = await tm.call('open_link', {})
    expect(view).toMatchObject({ status: 'needs_confirmation', summary: 'Approve at the page', metadata: { pending: { url: 'https://peer.test/approve/1' } } })
    expect(await tm.confirm(confirmIdOf(view), { approve: true })).toMatchObject({ status: 'ok', data: 'page accept' })
    expect(runs.link).toBe(1)
  })

  it('a server that keeps asking is answered at most 10 rounds, then the call is an error', async () => {
    const tm = new ToolManager()
    await importMcpTools(client, tm)
    let view = await tm.call('nag', {})
    for (let i = 0; i < 10; i++) {
      expect(view.status).toBe('needs_confirmation')
      view = await tm.confirm(confirmIdOf(view), { approve: true })
    }
    expect(view).toMatchObject({ status: 'error', message: 'The MCP server asked for input more than 10 times in one call.' })
    expect(runs.nag).toBe(11)
  })

  it('an input request importMcpTools cannot give is named: the SDK server refuses sampling to a client that did not declare it; remoteAsk maps the rest', async () => {
    const tm = new ToolManager()
    await importMcpTools(client, tm)
    expect(await tm.call('sample', {})).toMatchObject({ status: 'error', message: expect.stringContaining('(-32021)') })
    expect(remoteAsk({ inputRequests: { llm: { method: 'sampling/createMessage', params: {} } } }, 1)).toEqual({ kind: 'unsupported', what: 'sampling/createMessage' })
    expect(remoteAsk({ inputRequests: { a: {}, b: {} } }, 1)).toEqual({ kind: 'unsupported', what: '2 input requests at once' })
    expect(remoteAsk({ inputRequests: { u: { method: 'elicitation/create', params: { mode: 'url', message: 'Go', url: 'javascript:alert(1)' } } } }, 1)).toMatchObject({ kind: 'confirmation', summary: 'Go' })
    expect(JSON.stringify(remoteAsk({ inputRequests: { u: { method: 'elicitation/create', params: { mode: 'url', message: 'Go', url: 'javascript:alert(1)' } } } }, 1))).not.toContain('javascript')
  })
})

describe('importMcpTools (SDK v2 client, legacy mode) against toolwire serveHttp, 2025-11-25', () => {
  it('lists and calls; a confirmation without declared elicitation is decided on the server: a local tm.confirm is refused', async () => {
    const runs = { remove: 0 }
    const remote = new ToolManager()
    remote.register({ name: 'echo', inputSchema: { type: 'object' }, run: () => 'legacy echo' })
    remote.register({ name: 'remove', inputSchema: { type: 'object' }, needsConfirmation: true, summarize: () => 'Remove it', run: () => (runs.remove++, 'removed') })
    const served = await serveHttp(remote, { confirmPage: false })
    const client = new Client({ name: 'importer', version: '1.0.0' }, { versionNegotiation: { mode: 'legacy' } })
    await client.connect(new StreamableHTTPClientTransport(new URL(served.url)))
    try {
      expect(client.getProtocolEra()).toBe('legacy')
      const tm = new ToolManager()
      await importMcpTools(client, tm)
      expect(await tm.call('echo', {})).toMatchObject({ status: 'ok', data: 'legacy echo' })
      const view = await tm.call('remove', {})
      expect(view).toMatchObject({ status: 'needs_confirmation', summary: 'Remove it' })
      expect(await tm.confirm(confirmIdOf(view), { approve: true })).toMatchObject({ status: 'refused', code: 'confirmation_remote' })
      expect(runs.remove).toBe(0)
      // approved where it is held, it runs once there
      expect(await remote.confirm(confirmIdOf(view), { approve: true })).toMatchObject({ status: 'ok', data: 'removed' })
      expect(runs.remove).toBe(1)
    } finally {
      await client.close()
      await served.close()
    }
  })
})

describe('importMcpTools with the SDK v2 client (auto) against a 2025-only server falls back to legacy', () => {
  it('connects legacy, lists and calls; isError → error', async () => {
    const server = new McpServerV1({ name: 'old', version: '1.0.0' })
    server.registerTool('echo', { inputSchema: {} }, () => ({ content: [{ type: 'text', text: 'old echo' }] }))
    server.registerTool('boom', { inputSchema: {} }, () => ({ content: [{ type: 'text', text: 'old broke' }], isError: true }))
    const [a, b] = InMemoryTransport.createLinkedPair()
    await server.connect(a as never)
    const client = v2Client()
    await client.connect(b)
    try {
      expect(client.getProtocolEra()).toBe('legacy')
      const tm = new ToolManager()
      await importMcpTools(client, tm)
      expect(await tm.call('echo', {})).toMatchObject({ status: 'ok', data: 'old echo' })
      expect(await tm.call('boom', {})).toMatchObject({ status: 'error', message: 'old broke' })
    } finally {
      await client.close()
    }
  })
})

describe('importMcpTools follows a remote task (toolwire serveHttp on a MemoryStore, the tasks extension declared)', () => {
  const runs = { remove: 0, slow: 0 }
  let release: () => void = () => undefined
  let gate = new Promise<void>((r) => (release = r))
  let served: HttpMcpServer
  let client: Client

  beforeAll(async () => {
    const store = new MemoryStore()
    const remote = new ToolManager({ store, approvalSecret: 'a remote approval secret of enough bytes', storeKey: 'c'.repeat(64) })
    remote.register({ name: 'remove', inputSchema: { type: 'object' }, needsConfirmation: true, summarize: () => 'Remove it', run: () => (runs.remove++, 'removed') })
    remote.register({ name: 'slow', inputSchema: { type: 'object' }, longRunning: true, run: async () => (await gate, runs.slow++, 'slow done') })
    served = await serveHttp(remote, { store, approvalSecret: 'a remote approval secret of enough bytes', confirmPage: false })
    client = new Client(
      { name: 'importer', version: '1.0.0' },
      { capabilities: { elicitation: { form: {} }, extensions: { [TASKS_EXTENSION]: {} } }, versionNegotiation: { mode: 'auto' } },
    )
    await client.connect(taskAwareTransport(new StreamableHTTPClientTransport(new URL(served.url))))
  })
  afterAll(async () => {
    release()
    await client?.close()
    await served?.close()
  })

  it('a confirmation asked by a task is a local needs_confirmation; tm.confirm answers with tasks/update and the bounded poll answers the result; the tool runs once', async () => {
    const tm = new ToolManager()
    await importMcpTools(client, tm, { taskPoll: { intervalMs: 5, maxWaitMs: 30_000 } })
    const view = await tm.call('remove', {})
    expect(view).toMatchObject({ status: 'needs_confirmation' })
    expect((view as { summary: string }).summary).toContain('Remove it')
    expect(runs.remove).toBe(0)
    expect(await tm.confirm(confirmIdOf(view), { approve: true })).toMatchObject({ status: 'ok', data: 'removed' })
    expect(runs.remove).toBe(1)
  })

  it('a declined task confirmation never runs', async () => {
    const tm = new ToolManager()
    await importMcpTools(client, tm, { taskPoll: { intervalMs: 5, maxWaitMs: 30_000 } })
    const before = runs.remove
    const view = await tm.call('remove', {})
    expect(await tm.confirm(confirmIdOf(view), { approve: false })).toMatchObject({ status: 'refused', code: 'confirmation_denied' })
    expect(runs.remove).toBe(before)
  })

  it('a working task is a local pending (no poll by default); tm.resume asks tasks/get until it completes', async () => {
    gate = new Promise<void>((r) => (release = r))
    const tm = new ToolManager()
    await importMcpTools(client, tm)
    let view = await tm.call('slow', {})
    expect(view).toMatchObject({ status: 'pending', request: { kind: 'input' } })
    expect(runs.slow).toBe(0)
    release()
    for (let i = 0; i < 500 && view.status === 'pending'; i++) {
      await new Promise((r) => setTimeout(r, 10))
      view = await tm.resume(view.request.id, {})
    }
    expect(view).toMatchObject({ status: 'ok', data: 'slow done' })
    expect(runs.slow).toBe(1)
  })

  it('with taskPoll, the call itself waits for the working task and answers its result', async () => {
    gate = new Promise<void>((r) => (release = r))
    const tm = new ToolManager()
    await importMcpTools(client, tm, { taskPoll: { intervalMs: 5, maxWaitMs: 30_000 } })
    const before = runs.slow
    const calling = tm.call('slow', {})
    setTimeout(release, 20)
    expect(await calling).toMatchObject({ status: 'ok', data: 'slow done' })
    expect(runs.slow).toBe(before + 1)
  })
})

describe('importMcpTools maps a failed or cancelled remote task (a plain SDK v2 Server with tasks/get)', () => {
  it('failed → an error result with the task error message; cancelled → refused task_cancelled', async () => {
    const now = new Date().toISOString()
    const anyParams = { '~standard': { version: 1 as const, vendor: 'test', validate: (value: unknown) => ({ value }) } }
    const factory = (): Server => {
      const s = new Server({ name: 'tasks', version: '0' }, { capabilities: { tools: {}, extensions: { [TASKS_EXTENSION]: {} } } })
      s.setRequestHandler('tools/list', async () => ({ tools: [{ name: 'doomed', inputSchema: { type: 'object' } }, { name: 'stopped', inputSchema: { type: 'object' } }] }))
      s.setRequestHandler('tools/call', async (req) => ({ resultType: 'task', taskId: `t-${req.params.name}`, status: 'working', createdAt: now, lastUpdatedAt: now, ttlMs: 60_000 }) as never)
      s.setRequestHandler('tasks/get', { params: anyParams }, async (p) => {
        const taskId = (p as { taskId: string }).taskId
        return taskId === 't-doomed'
          ? { taskId, status: 'failed', createdAt: now, lastUpdatedAt: now, ttlMs: 60_000, error: { code: -32603, message: 'disk full\nstack…' } }
          : { taskId, status: 'cancelled', createdAt: now, lastUpdatedAt: now, ttlMs: 60_000 }
      })
      return s
    }
    const handler = createMcpHandler(factory)
    const client = new Client({ name: 'importer', version: '1.0.0' }, { capabilities: { extensions: { [TASKS_EXTENSION]: {} } }, versionNegotiation: { mode: 'auto' } })
    await client.connect(taskAwareTransport(new StreamableHTTPClientTransport(new URL('http://tasks.test/mcp'), { fetch: (input, init) => handler.fetch(new Request(input, init)) })))
    try {
      const tm = new ToolManager()
      await importMcpTools(client, tm, { taskPoll: { intervalMs: 1, maxWaitMs: 10_000 } })
      expect(await tm.call('doomed', {})).toMatchObject({ status: 'error', message: 'The remote task failed: disk full' })
      expect(await tm.call('stopped', {})).toMatchObject({ status: 'refused', code: 'task_cancelled' })
    } finally {
      await client.close()
    }
  })
})

