// A tool's `pending({ kind: 'input', schema })` as a multi-round-trip request (issue #22 Deliver 2):
// a 2026-07-28 client that declared form elicitation gets `input_required` with a form for that
// schema and a sealed requestState; its retry's content goes to `tm.resume` once; an answer the
// schema refuses is asked again (the call stays parked); a decline abandons the call, which never
// runs on; a tampered state is refused. A 2025 client with a session gets the same form as
// `elicitation/create` (the SDK's legacy shim); a stateless 2025 client, and one without
// elicitation, get today's isError answer. Every modern frame is checked against the 2026-07-28
// schema. Across two instances on PostgreSQL (skipped without TOOLWIRE_PG_URL): asked on A,
// answered on B, the tool continues once.
import { PassThrough } from 'node:stream'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport as LegacyTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { ElicitRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { ToolManager } from '../src/runtime/manager.js'
import { pending } from '../src/core/helpers.js'
import { serveHttp, type HttpMcpServer } from '../src/mcp/http.js'
import type { ToolStore } from '../src/runtime/store/index.js'
import { MCP_PROTOCOL_VERSION } from '../src/mcp/protocol.js'
import { serveStdio } from '../src/mcp/stdio.js'
import { McpConfirmations, type AskedCall } from '../src/mcp/input-required.js'
import type { ServableManager } from '../src/mcp/meta.js'
import { pipeTransport } from './fixtures/mcp/pipe.js'
import { frameSchemas, validatingFetch } from './fixtures/mcp/frames.js'
import { postgresPair, postgresUrl } from './fixtures/mcp/instances.js'

const schemas = frameSchemas()
const PG_URL = postgresUrl('mcp-mrtr-input')

const SCHEMA = {
  type: 'object',
  properties: {
    env: { type: 'string', enum: ['staging', 'production'], title: 'Environment' },
    owner: { type: 'string', format: 'email', description: 'Who to tell' },
  },
  required: ['env'],
} as const

/** A manager whose `deploy` asks which environment (a pending input with SCHEMA); each resumed run is pushed to `runs`. */
function manager(runs: string[], options: ConstructorParameters<typeof ToolManager>[0] = {}, name = ''): ToolManager {
  const tm = new ToolManager(options)
  tm.register({
    name: 'deploy',
    inputSchema: { type: 'object', properties: { app: { type: 'string' } }, required: ['app'] },
    run: () => pending({ kind: 'input', prompt: 'Which environment?', schema: SCHEMA }),
    resume: (answer: unknown, input: { app: string }) => {
      const { env } = answer as { env: string }
      runs.push(`${input.app}:${env}${name}`)
      return { deployed: input.app, env }
    },
  })
  // a schema form elicitation cannot carry (a nested object)
  tm.register({
    name: 'configure',
    inputSchema: { type: 'object' },
    run: () => pending({ kind: 'input', prompt: 'Which settings?', schema: { type: 'object', properties: { db: { type: 'object', properties: { host: { type: 'string' } } } } } }),
    resume: () => (runs.push('configured'), 'configured'),
  })
  return tm
}

type InputRequired = { resultType: 'input_required'; inputRequests: Record<string, { method: string; params: Record<string, unknown> }>; requestState: string }

const checked: Promise<void>[] = []
const seen: unknown[] = []

async function modernClient(url: string, capabilities: Record<string, unknown> = { elicitation: { form: {} } }): Promise<Client> {
  const c = new Client({ name: 'mrtr-input', version: '1' }, { capabilities, versionNegotiation: { mode: { pin: MCP_PROTOCOL_VERSION } }, inputRequired: { autoFulfill: false } })
  await c.connect(new StreamableHTTPClientTransport(new URL(url), { fetch: validatingFetch(schemas, checked, seen) }))
  return c
}

const ask = (c: Client, args: Record<string, unknown>): Promise<InputRequired> =>
  c.callTool({ name: 'deploy', arguments: args }, { allowInputRequired: true }) as unknown as Promise<InputRequired>

const retry = (c: Client, args: Record<string, unknown>, state: string, responses?: Record<string, unknown>, allow = false): Promise<unknown> =>
  c.callTool({ name: 'deploy', arguments: args, requestState: state, ...(responses === undefined ? {} : { inputResponses: responses }) } as never, allow ? { allowInputRequired: true } : undefined)

describe('pending input as MRTR (2026-07-28, HTTP)', () => {
  const runs: string[] = []
  let served: HttpMcpServer
  let c: Client
  beforeAll(async () => {
    served = await serveHttp(manager(runs), { confirmPage: false })
    c = await modernClient(served.url)
  })
  afterAll(async () => {
    await c?.close()
    await Promise.all(checked)
    await served?.close()
  })

  it('answers input_required with a form for the pending schema; the retry resumes the call once; a replayed retry answers the recorded result', async () => {
    const first = await ask(c, { app: 'web' })
    expect(first.resultType).toBe('input_required')
    expect(Object.keys(first.inputRequests)).toEqual(['toolwire.input'])
    expect(first.inputRequests['toolwire.input']).toEqual({
      method: 'elicitation/create',
      params: { mode: 'form', message: 'Which environment?', requestedSchema: { type: 'object', properties: SCHEMA.properties, required: ['env'] } },
    })
    expect(runs).toEqual([])
    const answer = { 'toolwire.input': { action: 'accept', content: { env: 'staging' } } }
    const done = (await retry(c, { app: 'web' }, first.requestState, answer)) as CallToolResult
    expect(done).toMatchObject({ isError: false, structuredContent: { deployed: 'web', env: 'staging' } })
    expect(runs).toEqual(['web:staging'])
    const again = (await retry(c, { app: 'web' }, first.requestState, answer)) as CallToolResult
    expect(again).toMatchObject({ isError: false, structuredContent: { deployed: 'web', env: 'staging' } })
    expect(again._meta?.['toolwire/replayed']).toBe(true)
    expect(runs).toEqual(['web:staging'])
  })

  it('an answer the form refuses (not an option, a wrong type, a required field missing), or none: the same form again, and the call stays parked', async () => {
    const first = await ask(c, { app: 'api' })
    for (const responses of [
      { 'toolwire.input': { action: 'accept', content: { env: 'moon' } } },
      { 'toolwire.input': { action: 'accept', content: { env: 'staging', owner: 42 } } },
      { 'toolwire.input': { action: 'accept', content: { owner: 'ops@example.com' } } },
      undefined,
    ]) {
      const asked = (await retry(c, { app: 'api' }, first.requestState, responses, true)) as InputRequired
      expect(asked.resultType).toBe('input_required')
      expect(asked.inputRequests).toEqual(first.inputRequests)
    }
    expect(runs.filter((r) => r.startsWith('api'))).toEqual([])
    const done = (await retry(c, { app: 'api' }, first.requestState, { 'toolwire.input': { action: 'accept', content: { env: 'production', owner: 'ops@example.com' } } })) as CallToolResult
    expect(done).toMatchObject({ isError: false, structuredContent: { env: 'production' } })
    expect(runs.filter((r) => r.startsWith('api'))).toEqual(['api:production'])
  })

  it('decline or cancel: an isError result saying it was declined; the call never runs on, even when accepted later', async () => {
    for (const action of ['decline', 'cancel']) {
      const app = `app-${action}`
      const first = await ask(c, { app })
      const declined = (await retry(c, { app }, first.requestState, { 'toolwire.input': { action } })) as CallToolResult
      expect(declined.isError).toBe(true)
      expect(JSON.stringify(declined.content)).toContain('declined')
      const later = (await retry(c, { app }, first.requestState, { 'toolwire.input': { action: 'accept', content: { env: 'staging' } } })) as CallToolResult
      expect(later.isError).toBe(true)
      expect(runs.filter((r) => r.startsWith(app))).toEqual([])
    }
  })

  it('a tampered state, or one presented with other arguments, is refused (-32602) and nothing runs', async () => {
    const first = await ask(c, { app: 'db' })
    const answer = { 'toolwire.input': { action: 'accept', content: { env: 'staging' } } }
    const tampered = first.requestState.slice(0, -4) + (first.requestState.endsWith('AAAA') ? 'BBBB' : 'AAAA')
    await expect(retry(c, { app: 'db' }, tampered, answer)).rejects.toMatchObject({ code: -32602 })
    await expect(retry(c, { app: 'other' }, first.requestState, answer)).rejects.toMatchObject({ code: -32602 })
    expect(runs.filter((r) => r.startsWith('db') || r.startsWith('other'))).toEqual([])
  })

  it('a schema that does not fit form elicitation (nested): the pending isError result, never a form', async () => {
    const result = (await c.callTool({ name: 'configure', arguments: {} })) as CallToolResult
    expect(result.isError).toBe(true)
    expect(JSON.stringify(result.content)).toContain('Which settings?')
    expect(runs).not.toContain('configured')
  })

  it('a client that declared no elicitation, or URL elicitation only, gets the pending isError result', async () => {
    for (const capabilities of [{}, { elicitation: { url: {} } }]) {
      const plain = await modernClient(served.url, capabilities)
      try {
        const result = (await plain.callTool({ name: 'deploy', arguments: { app: 'x' } })) as CallToolResult
        expect(result.isError).toBe(true)
        expect(JSON.stringify(result.content)).toContain('Which environment?')
      } finally {
        await plain.close()
      }
    }
  })

  it("with confirmations: 'refuse' a pending input is still asked as a form", async () => {
    const refusing = await serveHttp(manager(runs), { confirmPage: false, confirmations: 'refuse' })
    const rc = await modernClient(refusing.url)
    try {
      const first = await ask(rc, { app: 'refuse' })
      expect(Object.keys(first.inputRequests)).toEqual(['toolwire.input'])
    } finally {
      await rc.close()
      await refusing.close()
    }
  })

  it('the frames seen were checked against the 2026-07-28 schema', async () => {
    await Promise.all(checked)
    if (schemas === undefined) return
    const kinds = new Set(seen.map((f) => (f as { error?: { code: number } }).error?.code ?? (f as { result: { resultType: string } }).result.resultType))
    expect([...kinds].sort()).toEqual([-32602, 'complete', 'input_required'].sort())
  })
})

describe('pending input in the 2025 era', () => {
  const runs: string[] = []
  let sessions: HttpMcpServer
  let stateless: HttpMcpServer
  beforeAll(async () => {
    sessions = await serveHttp(manager(runs), { confirmPage: false })
    stateless = await serveHttp(manager(runs), { confirmPage: false, stateless: true })
  })
  afterAll(async () => {
    await sessions?.close()
    await stateless?.close()
  })

  const legacy = async (url: string, answer: (params: Record<string, unknown>) => Record<string, unknown>): Promise<LegacyClient> => {
    const client = new LegacyClient({ name: 'legacy-input', version: '1' }, { capabilities: { elicitation: {} } })
    client.setRequestHandler(ElicitRequestSchema, (req) => answer(req.params as Record<string, unknown>) as never)
    await client.connect(new LegacyTransport(new URL(url)))
    return client
  }

  it('with a session: the form travels as elicitation/create on the request stream, and the answer resumes the call once', async () => {
    const asked: Record<string, unknown>[] = []
    const client = await legacy(sessions.url, (params) => (asked.push(params), { action: 'accept', content: { env: 'production' } }))
    try {
      const result = (await client.callTool({ name: 'deploy', arguments: { app: 'legacy' } })) as CallToolResult
      expect(result).toMatchObject({ isError: false, structuredContent: { deployed: 'legacy', env: 'production' } })
      expect(asked).toEqual([expect.objectContaining({ mode: 'form', message: 'Which environment?', requestedSchema: { type: 'object', properties: SCHEMA.properties, required: ['env'] } })])
      expect(runs.filter((r) => r.startsWith('legacy'))).toEqual(['legacy:production'])
    } finally {
      await client.close()
    }
  })

  it('with a session, declined: isError, and the call never runs on', async () => {
    const client = await legacy(sessions.url, () => ({ action: 'decline' }))
    try {
      const result = (await client.callTool({ name: 'deploy', arguments: { app: 'legacy-no' } })) as CallToolResult
      expect(result.isError).toBe(true)
      expect(JSON.stringify(result.content)).toContain('declined')
      expect(runs.filter((r) => r.startsWith('legacy-no'))).toEqual([])
    } finally {
      await client.close()
    }
  })

  it('stateless: no server-to-client request is possible, so the pending isError result, never an elicitation', async () => {
    const asked: unknown[] = []
    const client = await legacy(stateless.url, (params) => (asked.push(params), { action: 'accept', content: { env: 'staging' } }))
    try {
      const result = (await client.callTool({ name: 'deploy', arguments: { app: 'nosession' } })) as CallToolResult
      expect(result.isError).toBe(true)
      expect(JSON.stringify(result.content)).toContain('Which environment?')
      expect(asked).toEqual([])
    } finally {
      await client.close()
    }
  })
})

describe.skipIf(PG_URL === undefined)('pending input across two instances on PostgreSQL', () => {
  const SECRET = 'mrtr-input-approval-secret-0123456789'
  const STORE_KEY = 'c'.repeat(64)
  const runs: string[] = []
  let storeA: ToolStore
  let storeB: ToolStore
  let a: HttpMcpServer
  let b: HttpMcpServer
  beforeAll(async () => {
    ;[storeA, storeB] = await postgresPair(PG_URL!, 'tw_mrtr_in')
    a = await serveHttp(manager(runs, { store: storeA, approvalSecret: SECRET, storeKey: STORE_KEY }, '@A'), { store: storeA, approvalSecret: SECRET })
    b = await serveHttp(manager(runs, { store: storeB, approvalSecret: SECRET, storeKey: STORE_KEY }, '@B'), { store: storeB, approvalSecret: SECRET })
  })
  afterAll(async () => {
    await Promise.all(checked)
    await a?.close()
    await b?.close()
    await storeA?.close()
    await storeB?.close()
  })

  it('asked on A, answered on B: the call continues once, on B; the same retry on A does not run it again', async () => {
    const ca = await modernClient(a.url)
    const cb = await modernClient(b.url)
    try {
      const first = await ask(ca, { app: 'shared' })
      expect(first.resultType).toBe('input_required')
      const answer = { 'toolwire.input': { action: 'accept', content: { env: 'staging' } } }
      const onB = (await retry(cb, { app: 'shared' }, first.requestState, answer)) as CallToolResult
      expect(onB).toMatchObject({ isError: false, structuredContent: { deployed: 'shared', env: 'staging' } })
      const onA = (await retry(ca, { app: 'shared' }, first.requestState, answer)) as CallToolResult
      expect(onA.isError).toBe(true)
      expect(JSON.stringify(onA.content)).toContain('already answered')
      expect(runs).toEqual(['shared:staging@B'])
    } finally {
      await ca.close()
      await cb.close()
    }
  })

  it('declined on B: the parked call is denied in the store; accepted on A later, it does not run', async () => {
    const ca = await modernClient(a.url)
    const cb = await modernClient(b.url)
    try {
      const first = await ask(ca, { app: 'shared-no' })
      const declined = (await retry(cb, { app: 'shared-no' }, first.requestState, { 'toolwire.input': { action: 'decline' } })) as CallToolResult
      expect(declined.isError).toBe(true)
      const later = (await retry(ca, { app: 'shared-no' }, first.requestState, { 'toolwire.input': { action: 'accept', content: { env: 'staging' } } })) as CallToolResult
      expect(later.isError).toBe(true)
      expect(runs.filter((r) => r.startsWith('shared-no'))).toEqual([])
    } finally {
      await ca.close()
      await cb.close()
    }
  })
})

describe('pending input over stdio', () => {
  const runs: string[] = []
  const tm = manager(runs)
  const servers: { close(): Promise<void> }[] = []
  afterAll(async () => {
    for (const server of servers) await server.close()
  })
  /** The errors of each frame the server sent, against the schema of `era`: results, errors and its elicitation requests. */
  const problems: string[] = []
  const check = (era: 'modern' | 'legacy') => (frame: unknown): void => {
    if (schemas === undefined) return
    const f = frame as { id?: unknown; method?: string; params?: unknown; result?: { resultType?: string; tools?: unknown } }
    if (f.method !== undefined && f.id !== undefined) {
      problems.push(...schemas.errors(era, 'JSONRPCRequest', frame), ...(f.method === 'elicitation/create' ? schemas.errors(era, 'ElicitRequest', era === 'legacy' ? frame : { method: f.method, params: f.params }) : []))
      return
    }
    const def = f.result === undefined ? undefined : f.result.resultType === 'input_required' ? 'InputRequiredResult' : f.result.tools !== undefined ? 'ListToolsResult' : 'content' in f.result ? 'CallToolResult' : undefined
    problems.push(...schemas.frameErrors(era, frame, def))
  }
  const connect = async (c: Client, era: 'modern' | 'legacy'): Promise<Client> => {
    const toServer = new PassThrough()
    const toClient = new PassThrough()
    servers.push(await serveStdio(tm, { stdin: toServer, stdout: toClient }))
    await c.connect(pipeTransport(toServer, toClient, check(era)))
    return c
  }

  for (const [era, schemaEra, negotiation] of [
    ['2026-07-28', 'modern', { versionNegotiation: { mode: { pin: MCP_PROTOCOL_VERSION } } }],
    ['2025-11-25 (initialize)', 'legacy', {}],
  ] as const) {
    it(`${era}: the form reaches the client's elicitation handler, and its answer resumes the call once; every frame is valid in its era`, async () => {
      problems.length = 0
      const c = await connect(new Client({ name: 'stdio-input', version: '1' }, { capabilities: { elicitation: { form: {} } }, ...negotiation }), schemaEra)
      try {
        const asked: unknown[] = []
        c.setRequestHandler('elicitation/create', async (req) => (asked.push(req.params), { action: 'accept', content: { env: 'staging' } }))
        const result = (await c.callTool({ name: 'deploy', arguments: { app: `stdio-${era}` } })) as CallToolResult
        expect(result).toMatchObject({ isError: false, structuredContent: { env: 'staging' } })
        expect(asked).toEqual([expect.objectContaining({ mode: 'form', message: 'Which environment?' })])
        expect(runs.filter((r) => r.startsWith(`stdio-${era}`))).toEqual([`stdio-${era}:staging`])
        expect(problems).toEqual([])
      } finally {
        await c.close()
      }
    })
  }
})

describe('an answer the pending schema refuses (tm.resume answers invalid_answer)', () => {
  it('asks the same form again; the call stays parked', async () => {
    const resumed: unknown[] = []
    const real = manager([])
    // a manager whose resume refuses every answer as not matching the request schema (the form accepted it)
    const tm = {
      manifest: () => real.manifest(),
      resume: async (id: string, answer: unknown) => (resumed.push({ id, answer }), { status: 'invalid', issues: [{ path: '/env', message: 'nope' }] }),
    } as unknown as ServableManager
    const confirmations = new McpConfirmations(tm)
    const view = await real.call('deploy', { app: 'unit' })
    const ctx = (inputResponses?: unknown) => ({ mcpReq: { envelope: { 'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } } }, inputResponses } })
    const call = (inputResponses?: unknown): AskedCall => ({ server: undefined as never, era: 'modern', ctx: ctx(inputResponses) as never, tool: 'deploy', args: { app: 'unit' }, callId: 'c1' })
    const first = confirmations.ask(call(), view)! as unknown as { inputRequests: Record<string, unknown>; requestState: string }
    expect(Object.keys(first.inputRequests)).toEqual(['toolwire.input'])
    const state = confirmations.codec.verify(first.requestState)
    const answered = await confirmations.answer(call({ 'toolwire.input': { action: 'accept', content: { env: 'staging' } } }), state)
    expect(resumed).toEqual([{ id: state.id, answer: { env: 'staging' } }])
    expect(answered.kind).toBe('ask')
    const again = (answered as { result: { inputRequests: Record<string, unknown> } }).result
    expect(again.inputRequests).toEqual(first.inputRequests)
  })
})
