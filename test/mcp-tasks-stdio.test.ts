// The tasks extension over stdio (MCP 2026-07-28): serveStdio with the manager's store serves it
// as serveHttp does. The SDK v2 client pinned to 2026-07-28, declaring the extension, over an
// in-process stdio pair: server/discover advertises it; a call that needs confirmation answers a
// task; tasks/get shows input_required; tasks/update approves; the task completes and the tool
// ran once; also across two instances on one PostgreSQL store (skipped with the reason printed
// without TOOLWIRE_PG_URL; failing under CI=true). Every frame the server sends is checked
// against the 2026-07-28 schema and the SEP-2663 fixture (test/fixtures/mcp/frames.ts).
import { PassThrough } from 'node:stream'
import { afterAll, describe, expect, it } from 'vitest'
import { Client } from '@modelcontextprotocol/client'
import type { StandardSchemaV1 } from '@modelcontextprotocol/client'
import { serveStdio, type StdioMcpServer } from '../src/mcp/stdio.js'
import { MCP_PROTOCOL_VERSION } from '../src/mcp/protocol.js'
import { MemoryStore, openPostgresStore, type ToolStore } from '../src/runtime/store/index.js'
import { payManager, postgresUrl } from './fixtures/mcp/instances.js'
import { frameSchemas } from './fixtures/mcp/frames.js'
import { pipeTransport, taskHandleAsResult } from './fixtures/mcp/pipe.js'

const schemas = frameSchemas()
const PG_URL = postgresUrl('mcp-tasks-stdio')
const SECRET = 'tasks-stdio-approval-secret-0123456789'
const STORE_KEY = 'd'.repeat(64)
const TASKS = { 'io.modelcontextprotocol/tasks': {} }

/** Passes any result through (the SDK client has no schema for the tasks methods' results). */
const anyResult: StandardSchemaV1<unknown, Record<string, any>> = {
  '~standard': { version: 1, vendor: 'toolwire-test', validate: (value) => ({ value: value as Record<string, any> }) },
}

const servers: StdioMcpServer[] = []
const clients: Client[] = []
afterAll(async () => {
  for (const c of clients) await c.close()
  for (const s of servers) await s.close()
})

/** serveStdio on `store` and a pinned SDK v2 client declaring `capabilities`; the server's frames (with the method they answer) land in `frames`. */
async function connect(store: ToolStore, runs: string[], capabilities: Record<string, unknown>, onError?: (e: Error) => void, name = 'stdio') {
  const toServer = new PassThrough()
  const toClient = new PassThrough()
  const tm = payManager(store, runs, name, SECRET, STORE_KEY)
  servers.push(await serveStdio(tm, { stdin: toServer, stdout: toClient, store, ...(onError === undefined ? {} : { onError }) }))
  const frames: { frame: Record<string, unknown>; method: string | undefined }[] = []
  const c = new Client({ name: 'tasks-stdio', version: '1' }, { capabilities, versionNegotiation: { mode: { pin: MCP_PROTOCOL_VERSION } } })
  await c.connect(pipeTransport(toServer, toClient, (frame, method) => frames.push({ frame, method }), taskHandleAsResult))
  clients.push(c)
  return { c, frames }
}

function expectValid(frames: { frame: Record<string, unknown>; method: string | undefined }[]): void {
  if (schemas === undefined) return
  // the check can fail: a tasks/get answer without its status is refused
  expect(schemas.taskFrameErrors('tasks/get', { jsonrpc: '2.0', id: 1, result: { resultType: 'complete', taskId: 't' } })).not.toEqual([])
  expect(frames.length).toBeGreaterThan(0)
  for (const { frame, method } of frames) expect(schemas.taskFrameErrors(method ?? '', frame), `${method}: ${JSON.stringify(frame).slice(0, 400)}`).toEqual([])
}

describe('tasks over stdio (serveStdio with a store that has tasks)', () => {
  it('advertised in server/discover; input_required → tasks/update approve → completed; the tool ran once', async () => {
    const runs: string[] = []
    const { c, frames } = await connect(new MemoryStore(), runs, { extensions: TASKS })
    expect(c.getServerCapabilities()?.extensions).toEqual(TASKS)
    const called = await c.callTool({ name: 'pay', arguments: { invoice: 'INV-S1' } })
    const created = called._meta?.['toolwire/task'] as Record<string, unknown>
    expect(created).toMatchObject({ status: 'input_required', taskId: expect.stringMatching(/^twt_/) })
    const taskId = created.taskId as string
    expect(frames.find((f) => f.method === 'tools/call')?.frame).toMatchObject({ result: { resultType: 'task', status: 'input_required' } })
    const waiting = await c.request({ method: 'tasks/get', params: { taskId } }, anyResult)
    expect(waiting.status).toBe('input_required')
    expect(Object.keys(waiting.inputRequests)).toEqual(['confirm-1'])
    expect(runs).toEqual([])
    await c.request({ method: 'tasks/update', params: { taskId, inputResponses: { 'confirm-1': { action: 'accept', content: { approve: true } } } } }, anyResult)
    let done = await c.request({ method: 'tasks/get', params: { taskId } }, anyResult)
    for (let i = 0; i < 200 && done.status === 'working'; i++) {
      await new Promise((r) => setImmediate(r))
      done = await c.request({ method: 'tasks/get', params: { taskId } }, anyResult)
    }
    expect(done).toMatchObject({ status: 'completed', result: { isError: false, structuredContent: { paid: 'INV-S1' } } })
    // the same answer again runs nothing; a second cancel of a finished task is acked and changes nothing
    await c.request({ method: 'tasks/update', params: { taskId, inputResponses: { 'confirm-1': { action: 'accept', content: { approve: true } } } } }, anyResult)
    await c.request({ method: 'tasks/cancel', params: { taskId } }, anyResult)
    expect((await c.request({ method: 'tasks/get', params: { taskId } }, anyResult)).status).toBe('completed')
    expect(runs).toEqual(['INV-S1@stdio'])
    expect(new Set(frames.map((f) => f.method))).toEqual(new Set(['server/discover', 'tools/call', 'tasks/get', 'tasks/update', 'tasks/cancel']))
    expectValid(frames)
  })

  it('a client that does not declare the extension: no task (the confirmation travels as input_required), and tasks/get is -32021', async () => {
    const runs: string[] = []
    const { c, frames } = await connect(new MemoryStore(), runs, { elicitation: { form: {} } })
    c.setRequestHandler('elicitation/create', async () => ({ action: 'accept', content: { approve: true } }))
    const result = await c.callTool({ name: 'pay', arguments: { invoice: 'INV-S2' } })
    expect(result.isError).toBe(false)
    expect(runs).toEqual(['INV-S2@stdio'])
    await expect(c.request({ method: 'tasks/get', params: { taskId: 'twt_x' } }, anyResult)).rejects.toMatchObject({ code: -32021 })
    expectValid(frames)
  })

  it('a store without tasks: said once to onError, not advertised', async () => {
    const store = new MemoryStore()
    const bare = Object.assign(Object.create(store) as ToolStore, { tasks: undefined })
    const errors: string[] = []
    const { c } = await connect(bare, [], { extensions: TASKS }, (e) => errors.push(e.message))
    expect(c.getServerCapabilities()?.extensions).toBeUndefined()
    expect(errors).toEqual(['toolwire: this store has no tasks support: tasks are off'])
  })
})

describe.skipIf(PG_URL === undefined)('tasks over stdio: two instances on one PostgreSQL store', () => {
  it('a task made on A, polled and answered on B alternately: completes, the tool ran once (on B)', async () => {
    const schema = `tw_taskss_${process.pid}_${Math.floor(Math.random() * 1e9).toString(36)}`
    const stores = [await openPostgresStore({ connectionString: PG_URL!, schema }), await openPostgresStore({ connectionString: PG_URL!, schema })]
    try {
      const runs: string[] = []
      const a = await connect(stores[0]!, runs, { extensions: TASKS }, undefined, 'A')
      const b = await connect(stores[1]!, runs, { extensions: TASKS }, undefined, 'B')
      const called = await a.c.callTool({ name: 'pay', arguments: { invoice: 'INV-S3' } })
      const taskId = (called._meta?.['toolwire/task'] as { taskId: string }).taskId
      expect((await b.c.request({ method: 'tasks/get', params: { taskId } }, anyResult)).status).toBe('input_required')
      expect((await a.c.request({ method: 'tasks/get', params: { taskId } }, anyResult)).status).toBe('input_required')
      await b.c.request({ method: 'tasks/update', params: { taskId, inputResponses: { 'confirm-1': { action: 'accept', content: { approve: true } } } } }, anyResult)
      let done: Record<string, any> = { status: 'working' }
      for (let i = 0; i < 400 && done.status === 'working'; i++) {
        if (i > 0) await new Promise((r) => setTimeout(r, 5))
        done = await (i % 2 === 0 ? a : b).c.request({ method: 'tasks/get', params: { taskId } }, anyResult)
      }
      expect(done).toMatchObject({ status: 'completed', result: { structuredContent: { paid: 'INV-S3' } } })
      // the same answer on A: nothing runs again
      await a.c.request({ method: 'tasks/update', params: { taskId, inputResponses: { 'confirm-1': { action: 'accept', content: { approve: true } } } } }, anyResult)
      expect((await a.c.request({ method: 'tasks/get', params: { taskId } }, anyResult)).status).toBe('completed')
      expect(runs).toEqual(['INV-S3@B'])
      expectValid(a.frames)
      expectValid(b.frames)
    } finally {
      for (const c of clients.splice(0)) await c.close()
      for (const s of servers.splice(0)) await s.close()
      for (const s of stores) await s.close()
    }
  })
})
