// The MCP handlers act for the principal of each request (issue #23, design/identity §4.6-4.7, S6):
// the HTTP gate puts it in the request's AuthInfo (`authInfoOf`), so no HTTP here: the SDK's
// createMcpHandler(...).fetch(request, { authInfo, parsedBody }) for 2026-07-28 and an
// InMemoryTransport pair whose client side sends `{ authInfo }` with each message for a 2025
// session. tools/list is filtered by the caller's scopes; the tool sees the caller; an MRTR retry
// with a newer token of the same subject opens and another subject's is refused (nothing runs);
// another subject's tasks/get, tasks/update and tasks/cancel answer exactly as an unknown task.
// Risk 6 (a path that forgets the principal acts as the operator): a manager wrapper records the
// principal of every tm.* call the MCP layer makes, one test per path. Without AuthInfo every path
// acts as before (no principal).
import { describe, expect, it, vi } from 'vitest'
import { Client, InMemoryTransport } from '@modelcontextprotocol/client'
import { createMcpHandler, type AuthInfo, type Server } from '@modelcontextprotocol/server'
import { ToolManager } from '../src/runtime/manager.js'
import { pending } from '../src/core/helpers.js'
import { MemoryStore } from '../src/runtime/store/index.js'
import type { ImpliedScopes, Principal } from '../src/core/principal.js'
import { principalKey } from '../src/core/principal.js'
import { authInfoOf } from '../src/mcp/auth/auth-info.js'
import { wiredServer, type ServerWiring } from '../src/mcp/server.js'
import { McpTasks, TASK_NOT_FOUND_MESSAGE, type TaskManager } from '../src/mcp/tasks.js'
import type { ServableManager } from '../src/mcp/meta.js'
import { RequestStateCodec, principalOf } from '../src/mcp/request-state.js'
import { identityOf, NO_PRINCIPAL_MESSAGE, taskOwnerOf } from '../src/mcp/principal-of.js'
import { MCP_PROTOCOL_VERSION } from '../src/mcp/protocol.js'
import { taskOwner } from '../src/runtime/store/tasks.js'
import { framesOf } from './fixtures/mcp/frames.js'
import { taskMeta } from './fixtures/mcp/task-rpc.js'

const ISSUER = 'https://id.example.test'
const SECRET = 'principals-approval-secret-0123456789'
const STORE_KEY = 'd'.repeat(64)

const alice: Principal = { subject: 'alice', issuer: ISSUER, clientId: 'app-1', scopes: ['files:write'] }
/** A newer token of alice: other scopes, another client; the same principal key. */
const aliceRefreshed: Principal = { subject: 'alice', issuer: ISSUER, clientId: 'app-2', scopes: ['files:write', 'files:read'] }
const bob: Principal = { subject: 'bob', issuer: ISSUER, scopes: ['files:read'] }
const admin: Principal = { subject: 'root', issuer: ISSUER, scopes: ['files:admin'] }
const IMPLIED: ImpliedScopes = { 'files:admin': ['files:write', 'files:read', 'admin'] }

/** One `tm.*` call the MCP layer made: the method and the subject it passed (`undefined`: none, the operator). */
interface Seen {
  readonly method: 'call' | 'confirm' | 'resume' | 'cancel'
  readonly subject: string | undefined
}

interface Rig {
  readonly tm: ToolManager
  /** What the MCP layer passed to the manager, in order. */
  readonly seen: Seen[]
  /** Each tool run: `<tool>:<ctx.principal.subject ?? 'operator'>`. */
  readonly runs: string[]
  readonly tasks: McpTasks
  readonly handler: ReturnType<typeof createMcpHandler>
  readonly factory: ReturnType<typeof wiredServer>['factory']
}

/** The manager the server gets: `tm`, recording the principal of every call, confirm, resume and cancel. */
function recording(tm: ToolManager, seen: Seen[]): ServableManager & TaskManager {
  const who = (options: { principal?: Principal } | undefined): string | undefined => options?.principal?.subject
  const m = {
    call: (name: string, input: unknown, options?: { principal?: Principal }) => (seen.push({ method: 'call', subject: who(options) }), tm.call(name, input, options as never)),
    confirm: (id: string, decision: { approve: boolean; principal?: Principal }) => (seen.push({ method: 'confirm', subject: who(decision) }), tm.confirm(id, decision)),
    resume: (id: string, answer: unknown, options?: { principal?: Principal }) => (seen.push({ method: 'resume', subject: who(options) }), tm.resume(id, answer, options)),
    cancel: (callId: string, options?: { principal?: Principal }) => (seen.push({ method: 'cancel', subject: who(options) }), tm.cancel(callId, options)),
    recover: () => tm.recover(),
    manifest: () => tm.manifest(),
    list: () => tm.list(),
    on: tm.on.bind(tm),
    off: tm.off.bind(tm),
    scopesMissing: tm.scopesMissing.bind(tm),
  }
  return m as unknown as ServableManager & TaskManager
}

/** `older`: the manager offers no `scopesMissing` (another copy of toolwire). */
function rig(wiring: Partial<ServerWiring> = {}, older = false): Rig {
  const store = new MemoryStore()
  const tm = new ToolManager({ store, approvalSecret: SECRET, storeKey: STORE_KEY, impliedScopes: IMPLIED })
  const runs: string[] = []
  const ran = (tool: string, principal: Principal | undefined): void => void runs.push(`${tool}:${principal?.subject ?? 'operator'}`)
  tm.register({ name: 'whoami', inputSchema: { type: 'object' }, run: (_input: unknown, ctx) => (ran('whoami', ctx.principal), { subject: ctx.principal?.subject ?? null, scopes: ctx.principal?.scopes ?? null }) })
  tm.register({ name: 'write_file', inputSchema: { type: 'object' }, scopes: ['files:write'], run: (_input: unknown, ctx) => (ran('write_file', ctx.principal), 'written') })
  tm.register({ name: 'drop_all', inputSchema: { type: 'object' }, scopes: ['admin'], run: (_input: unknown, ctx) => (ran('drop_all', ctx.principal), 'dropped') })
  tm.register({ name: 'pay', inputSchema: { type: 'object', properties: { invoice: { type: 'string' } } }, needsConfirmation: true, run: (_input: unknown, ctx) => (ran('pay', ctx.principal), 'paid') })
  tm.register({
    name: 'deploy',
    inputSchema: { type: 'object' },
    run: () => pending({ kind: 'input', prompt: 'Which environment?', schema: { type: 'object', properties: { env: { type: 'string' } }, required: ['env'] } }),
    resume: (answer: unknown, _input: unknown, ctx) => (ran('deploy', ctx.principal), { env: (answer as { env: string }).env }),
  })
  // runs until cancelled (or 5 s, so that a cancel that never reaches it cannot hang the suite)
  tm.register({
    name: 'slow',
    inputSchema: { type: 'object' },
    longRunning: true,
    run: async (_input: unknown, ctx) => {
      await new Promise((resolve) => {
        setTimeout(resolve, 5000).unref()
        ctx.signal.addEventListener('abort', resolve)
      })
      if (!ctx.signal.aborted) ran('slow', ctx.principal)
      return 'slow done'
    },
  })
  const seen: Seen[] = []
  const m = recording(tm, seen)
  if (older) delete (m as { scopesMissing?: unknown }).scopesMissing
  const tasks = McpTasks.open(m, store, { confirmationsAtPage: wiring.confirmationsAtPage === true })!
  const { factory } = wiredServer(m, {}, { secret: SECRET, store, tasks, ...wiring })
  return { tm, seen, runs, tasks, handler: createMcpHandler(factory, { legacy: 'reject', responseMode: 'auto' }), factory }
}

let seq = 0

/** One 2026-07-28 request as `who` (its AuthInfo as the gate makes it; none: no AuthInfo); its one answer frame. */
async function rpc(r: Rig, who: Principal | undefined, method: string, params: Record<string, unknown>, tasks = false): Promise<Record<string, any>> {
  const body = { jsonrpc: '2.0', id: ++seq, method, params: { ...params, _meta: taskMeta(tasks) } }
  const name = typeof params.name === 'string' ? params.name : typeof params.taskId === 'string' ? params.taskId : method
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': MCP_PROTOCOL_VERSION, 'mcp-method': method, 'mcp-name': name }
  const request = new Request('http://mcp.test/mcp', { method: 'POST', headers, body: JSON.stringify(body) })
  const authInfo: AuthInfo | undefined = who === undefined ? undefined : authInfoOf(who, Math.floor(Date.now() / 1000) + 300)
  const response = await r.handler.fetch(request, authInfo === undefined ? { parsedBody: body } : { parsedBody: body, authInfo })
  const frames = framesOf(await response.text(), response.headers.get('content-type'))
  expect(frames).toHaveLength(1)
  return frames[0] as Record<string, any>
}

const listed = async (r: Rig, who: Principal | undefined): Promise<string[]> => ((await rpc(r, who, 'tools/list', {})).result.tools as { name: string }[]).map((t) => t.name)

const CONFIRM = { 'toolwire.confirm': { action: 'accept', content: { approve: true } } }

describe('tools/list per principal', () => {
  it("shows each caller the tools its scopes allow (impliedScopes count); no principal: every tool; one caller's list never reaches another", async () => {
    const r = rig()
    const every = ['deploy', 'drop_all', 'pay', 'slow', 'whoami', 'write_file']
    expect(await listed(r, undefined)).toEqual(every)
    expect(await listed(r, alice)).toEqual(['deploy', 'pay', 'slow', 'whoami', 'write_file'])
    expect(await listed(r, bob)).toEqual(['deploy', 'pay', 'slow', 'whoami'])
    // files:admin implies files:write and admin
    expect(await listed(r, admin)).toEqual(every)
    // interleaved: nothing kept from one caller's filtered list answers another
    expect(await listed(r, bob)).toEqual(['deploy', 'pay', 'slow', 'whoami'])
    expect(await listed(r, alice)).toEqual(['deploy', 'pay', 'slow', 'whoami', 'write_file'])
    expect(await listed(r, undefined)).toEqual(every)
    const answer = await rpc(r, bob, 'tools/list', {})
    expect(answer.result).toMatchObject({ cacheScope: 'private' })
  })

  it('a manager without scopesMissing (another copy of toolwire): the manifest scopes compared exactly, implied scopes not followed', async () => {
    const r = rig({}, true)
    expect(await listed(r, alice)).toEqual(['deploy', 'pay', 'slow', 'whoami', 'write_file'])
    expect(await listed(r, admin)).toEqual(['deploy', 'pay', 'slow', 'whoami'])
    expect(await listed(r, { ...admin, scopes: ['files:write', 'admin'] })).toEqual(['deploy', 'drop_all', 'pay', 'slow', 'whoami', 'write_file'])
  })
})

describe('tools/call per principal', () => {
  it('the tool sees the caller (subject and scopes of this token); the manager got the principal', async () => {
    const r = rig()
    const called = await rpc(r, alice, 'tools/call', { name: 'whoami', arguments: {} })
    expect(called.result.structuredContent).toEqual({ subject: 'alice', scopes: ['files:write'] })
    const refreshed = await rpc(r, aliceRefreshed, 'tools/call', { name: 'whoami', arguments: {} })
    expect(refreshed.result.structuredContent).toEqual({ subject: 'alice', scopes: ['files:write', 'files:read'] })
    expect(r.seen).toEqual([
      { method: 'call', subject: 'alice' },
      { method: 'call', subject: 'alice' },
    ])
  })

  it('a call of a tool whose scopes the caller lacks is refused insufficient_scope and nothing runs', async () => {
    const r = rig()
    const refused = await rpc(r, bob, 'tools/call', { name: 'write_file', arguments: {} })
    expect(refused.result.isError).toBe(true)
    expect(refused.result.content).toEqual([{ type: 'text', text: 'This call needs the scope: files:write' }])
    expect(r.runs).toEqual([])
    expect(r.seen).toEqual([{ method: 'call', subject: 'bob' }])
  })

  it('without AuthInfo every path acts as before: no principal reaches the manager, every tool is listed and runs', async () => {
    const r = rig()
    expect((await rpc(r, undefined, 'tools/call', { name: 'write_file', arguments: {} })).result.isError).toBe(false)
    const asked = await rpc(r, undefined, 'tools/call', { name: 'pay', arguments: { invoice: 'I-0' } })
    expect(asked.result.resultType).toBe('input_required')
    const paid = await rpc(r, undefined, 'tools/call', { name: 'pay', arguments: { invoice: 'I-0' }, inputResponses: CONFIRM, requestState: asked.result.requestState })
    expect(paid.result.isError).toBe(false)
    expect(r.runs).toEqual(['write_file:operator', 'pay:operator'])
    expect(r.seen.every((s) => s.subject === undefined)).toBe(true)
    expect(r.seen.map((s) => s.method)).toEqual(['call', 'call', 'confirm'])
  })

  it('with principalRequired, a request without a principal is refused -32603 and reaches nothing (never the operator)', async () => {
    const r = rig({ principalRequired: true })
    for (const [method, params] of [
      ['tools/call', { name: 'whoami', arguments: {} }],
      ['tools/list', {}],
    ] as const) {
      const answer = await rpc(r, undefined, method, params)
      expect(answer.error).toEqual({ code: -32603, message: NO_PRINCIPAL_MESSAGE })
    }
    const got = await rpc(r, undefined, 'tasks/get', { taskId: 'twt_' + 'a'.repeat(43) }, true)
    expect(got.error).toEqual({ code: -32603, message: NO_PRINCIPAL_MESSAGE })
    expect(r.seen).toEqual([])
    expect((await rpc(r, alice, 'tools/call', { name: 'whoami', arguments: {} })).result.structuredContent).toMatchObject({ subject: 'alice' })
  })
})

describe('MRTR retries per principal (2026-07-28)', () => {
  it('a retry with a newer token of the same subject opens and runs once as the caller; the state binds principalKey', async () => {
    const r = rig()
    const approvals: unknown[] = []
    r.tm.on('confirmation', (e) => void approvals.push({ principal: e.principal?.subject, approvedBy: e.approvedBy }))
    const asked = await rpc(r, alice, 'tools/call', { name: 'pay', arguments: { invoice: 'I-1' } })
    expect(asked.result.resultType).toBe('input_required')
    const state = asked.result.requestState as string
    // what the state binds: alice's principal key (not a token digest), so bob's is wrong_principal
    const codec = new RequestStateCodec({ secret: SECRET })
    const call = { tool: 'pay', arguments: { invoice: 'I-1' } }
    expect(codec.open(state, { ...call, principal: principalKey(aliceRefreshed) }).ok).toBe(true)
    expect(codec.open(state, { ...call, principal: principalKey(bob) })).toEqual({ ok: false, reason: 'wrong_principal' })
    expect(codec.open(state, { ...call, principal: principalOf(undefined) })).toEqual({ ok: false, reason: 'wrong_principal' })
    const paid = await rpc(r, aliceRefreshed, 'tools/call', { name: 'pay', arguments: { invoice: 'I-1' }, inputResponses: CONFIRM, requestState: state })
    expect(paid.result).toMatchObject({ isError: false, content: [{ type: 'text', text: 'paid' }] })
    // the continued run is the caller's
    expect(r.seen).toEqual([
      { method: 'call', subject: 'alice' },
      { method: 'confirm', subject: 'alice' },
    ])
    expect(r.runs).toEqual(['pay:alice'])
    // who approved is recorded: the principal that answered
    expect(approvals).toEqual([{ principal: 'alice', approvedBy: { subject: 'alice', issuer: alice.issuer } }])
  })

  it('with confirmations only at the approval page (serveHttp with auth.signIn), a token never answers one: no form, no task, nothing runs', async () => {
    const r = rig({ confirmationsAtPage: true })
    const asked = await rpc(r, alice, 'tools/call', { name: 'pay', arguments: { invoice: 'P-1' } })
    // no link to offer here (no page in this rig): the call answers that it waits for confirmation, as for a client that cannot be asked
    expect(asked.result.resultType).not.toBe('input_required')
    expect(asked.result).toMatchObject({ isError: true })
    const confirmId = (asked.result._meta as Record<string, { confirmId: string }>)['toolwire/confirmation']!.confirmId
    // a retry forging a form answer has no state to open
    expect((await rpc(r, alice, 'tools/call', { name: 'pay', arguments: { invoice: 'P-1' }, inputResponses: CONFIRM, requestState: 'x' })).error).toBeDefined()
    // a client of the tasks extension gets no task to answer with tasks/update
    const viaTask = await rpc(r, alice, 'tools/call', { name: 'pay', arguments: { invoice: 'P-2' } }, true)
    expect(viaTask.result.resultType).not.toBe('task')
    expect(r.runs).toEqual([])
    // the page (the operator, after its sign-in) still answers
    expect((await r.tm.confirm(confirmId, { approve: true, approvedBy: { subject: 'ada', issuer: alice.issuer } })).status).toBe('ok')
    expect(r.runs).toEqual(['pay:alice'])
  })

  it("another subject's retry of alice's state is refused (Invalid or expired requestState): nothing runs, nothing is answered", async () => {
    const r = rig()
    const asked = await rpc(r, alice, 'tools/call', { name: 'pay', arguments: { invoice: 'I-2' } })
    const state = asked.result.requestState as string
    for (const who of [bob, undefined]) {
      const refused = await rpc(r, who, 'tools/call', { name: 'pay', arguments: { invoice: 'I-2' }, inputResponses: CONFIRM, requestState: state })
      expect(refused.error).toMatchObject({ code: -32602, message: 'Invalid or expired requestState' })
    }
    expect(r.runs).toEqual([])
    expect(r.seen).toEqual([{ method: 'call', subject: 'alice' }])
    // alice can still answer it
    const paid = await rpc(r, alice, 'tools/call', { name: 'pay', arguments: { invoice: 'I-2' }, inputResponses: CONFIRM, requestState: state })
    expect(paid.result.isError).toBe(false)
    expect(r.runs).toEqual(['pay:alice'])
  })

  it("bob's approval of alice's confirmation through an MRTR round of his own is refused by the manager: nothing runs", async () => {
    const r = rig()
    const asked = await rpc(r, alice, 'tools/call', { name: 'pay', arguments: { invoice: 'I-3' } })
    // a state sealed for bob (as if he held the secret) naming alice's parked call: the manager, asked as bob, refuses it
    const codec = new RequestStateCodec({ secret: SECRET })
    const opened = codec.open(asked.result.requestState)
    expect(opened.ok).toBe(true)
    const id = opened.ok ? opened.state.id : ''
    const forged = codec.seal({ kind: 'confirm', tool: 'pay', arguments: { invoice: 'I-3' }, callId: 'mcp_forged', id, principal: principalKey(bob) })
    const answer = await rpc(r, bob, 'tools/call', { name: 'pay', arguments: { invoice: 'I-3' }, inputResponses: CONFIRM, requestState: forged })
    expect(answer.result?.isError ?? true).toBe(true)
    // the manager was asked as bob, never as the operator
    expect(r.seen).toEqual([
      { method: 'call', subject: 'alice' },
      { method: 'confirm', subject: 'bob' },
    ])
    expect(r.runs).toEqual([])
  })

  it('a decline and a pending input answered through MRTR reach the manager as the caller', async () => {
    const r = rig()
    const asked = await rpc(r, alice, 'tools/call', { name: 'pay', arguments: { invoice: 'I-4' } })
    const declined = await rpc(r, alice, 'tools/call', { name: 'pay', arguments: { invoice: 'I-4' }, inputResponses: { 'toolwire.confirm': { action: 'decline' } }, requestState: asked.result.requestState })
    expect(declined.result.isError).toBe(true)
    const input = await rpc(r, alice, 'tools/call', { name: 'deploy', arguments: {} })
    expect(input.result.resultType).toBe('input_required')
    const [key] = Object.keys(input.result.inputRequests)
    const deployed = await rpc(r, aliceRefreshed, 'tools/call', { name: 'deploy', arguments: {}, inputResponses: { [key!]: { action: 'accept', content: { env: 'prod' } } }, requestState: input.result.requestState })
    expect(deployed.result.structuredContent).toEqual({ env: 'prod' })
    expect(r.seen).toEqual([
      { method: 'call', subject: 'alice' },
      { method: 'confirm', subject: 'alice' },
      { method: 'call', subject: 'alice' },
      { method: 'resume', subject: 'alice' },
    ])
    expect(r.runs).toEqual(['deploy:alice'])
  })
})

describe('tasks per principal (2026-07-28, the tasks extension)', () => {
  const unknownTask = 'twt_' + 'Z'.repeat(43)

  it("bob's tasks/get, tasks/update and tasks/cancel of alice's task answer exactly as an unknown task; alice's newer token answers it", async () => {
    const r = rig()
    const approvals: unknown[] = []
    r.tm.on('confirmation', (e) => void approvals.push(e.approvedBy))
    const called = await rpc(r, alice, 'tools/call', { name: 'pay', arguments: { invoice: 'T-1' } }, true)
    expect(called.result).toMatchObject({ resultType: 'task', status: 'input_required' })
    const taskId = called.result.taskId as string
    const unknown = await rpc(r, bob, 'tasks/get', { taskId: unknownTask }, true)
    expect(unknown.error).toEqual({ code: -32602, message: TASK_NOT_FOUND_MESSAGE })
    for (const method of ['tasks/get', 'tasks/cancel', 'tasks/update']) {
      const params = method === 'tasks/update' ? { taskId, inputResponses: { 'confirm-1': { action: 'accept', content: { approve: true } } } } : { taskId }
      expect((await rpc(r, bob, method, params, true)).error, method).toEqual(unknown.error)
      // nor is it the operator's (no AuthInfo, the static default owner '')
      expect((await rpc(r, undefined, method, params, true)).error, method).toEqual(unknown.error)
    }
    expect((await rpc(r, alice, 'tasks/get', { taskId }, true)).result.status).toBe('input_required')
    const ack = await rpc(r, aliceRefreshed, 'tasks/update', { taskId, inputResponses: { 'confirm-1': { action: 'accept', content: { approve: true } } } }, true)
    expect(ack.result).toMatchObject({ resultType: 'complete' })
    await r.tasks.idle()
    expect((await rpc(r, alice, 'tasks/get', { taskId }, true)).result).toMatchObject({ status: 'completed', result: { isError: false } })
    // the detached continuation was answered as the caller that answered
    expect(r.seen).toEqual([
      { method: 'call', subject: 'alice' },
      { method: 'confirm', subject: 'alice' },
    ])
    expect(r.runs).toEqual(['pay:alice'])
    expect(approvals).toEqual([{ subject: 'alice', issuer: alice.issuer }])
  })

  it("tasks/cancel by alice denies her parked call as alice; a running task's cancel reaches the manager as alice", async () => {
    const r = rig()
    const called = await rpc(r, alice, 'tools/call', { name: 'pay', arguments: { invoice: 'T-2' } }, true)
    const cancelled = await rpc(r, alice, 'tasks/cancel', { taskId: called.result.taskId }, true)
    expect(cancelled.result).toMatchObject({ resultType: 'complete' })
    expect((await rpc(r, alice, 'tasks/get', { taskId: called.result.taskId }, true)).result.status).toBe('cancelled')
    const slow = await rpc(r, alice, 'tools/call', { name: 'slow', arguments: {} }, true)
    expect(slow.result).toMatchObject({ resultType: 'task', status: 'working' })
    expect((await rpc(r, bob, 'tasks/cancel', { taskId: slow.result.taskId }, true)).error).toEqual({ code: -32602, message: TASK_NOT_FOUND_MESSAGE })
    expect((await rpc(r, aliceRefreshed, 'tasks/cancel', { taskId: slow.result.taskId }, true)).result).toMatchObject({ resultType: 'complete' })
    await r.tasks.idle()
    expect((await rpc(r, alice, 'tasks/get', { taskId: slow.result.taskId }, true)).result.status).toBe('cancelled')
    expect(r.seen).toEqual([
      { method: 'call', subject: 'alice' },
      { method: 'confirm', subject: 'alice' },
      { method: 'call', subject: 'alice' },
      { method: 'cancel', subject: 'alice' },
    ])
    expect(r.runs).toEqual([])
  })

  it("identityOf: the gate's principal, else the transport's defaults; an AuthInfo without toolwire's principal (another gate's) carries none", () => {
    const info = authInfoOf(alice, undefined)
    expect(identityOf({ http: { authInfo: info } }, { principal: 'p', owner: 'o' })).toEqual({ principal: alice, stateKey: principalKey(alice), taskOwner: taskOwnerOf(principalKey(alice)) })
    const foreign: AuthInfo = { token: 't', clientId: 'c', scopes: ['files:write'], extra: { sub: 'alice' } }
    for (const ctx of [{}, { http: { authInfo: foreign } }]) {
      expect(identityOf(ctx, { principal: 'p', owner: 'o' })).toEqual({ principal: undefined, stateKey: 'p', taskOwner: 'o' })
      expect(identityOf(ctx, {})).toEqual({ principal: undefined, stateKey: '', taskOwner: '' })
      expect(() => identityOf(ctx, { principalRequired: true })).toThrow(NO_PRINCIPAL_MESSAGE)
    }
  })

  it('task owners: taskOwnerOf(principalKey) for a principal (the same for a newer token), the static owner without one', () => {
    expect(taskOwnerOf(principalKey(alice))).toBe(taskOwnerOf(principalKey(aliceRefreshed)))
    expect(taskOwnerOf(principalKey(alice))).not.toBe(taskOwnerOf(principalKey(bob)))
    expect(taskOwnerOf(principalKey(alice))).toMatch(/^[0-9a-f]{64}$/)
    // domain-separated from a static token's owner, even a token spelled as the key
    expect(taskOwnerOf(principalKey(alice))).not.toBe(taskOwner(principalKey(alice)))
  })
})

describe('the 2025 elicitation path (a session, the SDK legacy shim)', () => {
  /** A 2025 client connected to a legacy server of `r` whose every message carries `who`'s AuthInfo (what `handleRequest(…, { authInfo })` gives a session). */
  async function legacyClient(r: Rig, who: () => Principal | undefined, answer: Record<string, unknown>): Promise<Client> {
    const server = (await r.factory({ era: 'legacy' })) as Server
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
    const send = clientSide.send.bind(clientSide)
    clientSide.send = (message, options) => {
      const p = who()
      return send(message, p === undefined ? options : { ...options, authInfo: authInfoOf(p, undefined) })
    }
    await server.connect(serverSide)
    const client = new Client({ name: 'legacy', version: '1' }, { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: 'legacy' } })
    client.setRequestHandler('elicitation/create', async () => answer as never)
    await client.connect(clientSide)
    return client
  }

  it('a confirmation asked through elicitation/create is answered as the caller; the tool runs as the caller', async () => {
    const r = rig()
    const approvals: unknown[] = []
    r.tm.on('confirmation', (e) => void approvals.push(e.approvedBy))
    const client = await legacyClient(r, () => alice, { action: 'accept', content: { approve: true } })
    try {
      const result = await client.callTool({ name: 'pay', arguments: { invoice: 'L-1' } })
      expect(result).toMatchObject({ isError: false, content: [{ type: 'text', text: 'paid' }] })
      const listedTools = await client.listTools()
      expect(listedTools.tools.map((t) => t.name)).toEqual(['deploy', 'pay', 'slow', 'whoami', 'write_file'])
    } finally {
      await client.close()
    }
    expect(r.seen).toEqual([
      { method: 'call', subject: 'alice' },
      { method: 'confirm', subject: 'alice' },
    ])
    expect(r.runs).toEqual(['pay:alice'])
    expect(approvals).toEqual([{ subject: 'alice', issuer: alice.issuer }])
  })

  it('a request cancelled while its confirmation is asked denies it as the caller', async () => {
    const r = rig()
    const aborter = new AbortController()
    const client = await legacyClient(r, () => alice, { action: 'accept', content: { approve: true } })
    client.setRequestHandler('elicitation/create', async () => {
      aborter.abort()
      return new Promise<never>(() => undefined)
    })
    try {
      await expect(client.callTool({ name: 'pay', arguments: { invoice: 'L-2' } }, { signal: aborter.signal })).rejects.toThrow()
      await vi.waitFor(() => expect(r.seen).toHaveLength(2))
    } finally {
      await client.close()
    }
    expect(r.seen).toEqual([
      { method: 'call', subject: 'alice' },
      { method: 'confirm', subject: 'alice' },
    ])
    expect(r.runs).toEqual([])
  })

  it('the principal is read per message, not per session: a newer token of the same subject takes effect at once, with its scopes', async () => {
    const r = rig()
    let current: Principal = { ...alice, scopes: [] }
    const client = await legacyClient(r, () => current, { action: 'accept', content: { approve: true } })
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).not.toContain('write_file')
      current = aliceRefreshed
      expect((await client.listTools()).tools.map((t) => t.name)).toContain('write_file')
      const result = await client.callTool({ name: 'whoami', arguments: {} })
      expect(r.seen).toEqual([{ method: 'call', subject: 'alice' }])
      expect(result.structuredContent).toEqual({ subject: 'alice', scopes: ['files:write', 'files:read'] })
    } finally {
      await client.close()
    }
  })
})
