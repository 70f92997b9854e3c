// importMcpTools against a hostile 2026-07-28 server (a raw HTTP server answering what it likes):
// a malformed task handle, a task completed without a result, a schema over pending()'s limits
// and a task that asks to be polled without pause each end in a typed result; tm.call never
// throws, and the client never polls faster than MIN_TASK_POLL_MS.
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { ToolManager } from '../src/runtime/manager.js'
import { importMcpTools, taskAwareTransport, TASKS_EXTENSION } from '../src/mcp/index.js'
import { MIN_TASK_POLL_MS } from '../src/mcp/import/remote-task.js'

type Answer = Record<string, unknown> | { error: { code: number; message: string } }

let server: Server | undefined
let client: Client | undefined
afterEach(async () => {
  await client?.close()
  server?.closeAllConnections()
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined))
  server = client = undefined
})

const SERVER_INFO = { 'io.modelcontextprotocol/serverInfo': { name: 'hostile', version: '1' } }

/** A 2026-07-28 server whose `tools/call` and `tasks/*` answers come from `answer`; it counts the methods it was sent. */
async function hostile(answer: (method: string) => Answer): Promise<{ url: string; seen: Map<string, number> }> {
  const seen = new Map<string, number>()
  server = createServer((req, res) => {
    let body = ''
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')))
    req.on('end', () => {
      const message = JSON.parse(body) as { id?: number; method: string }
      seen.set(message.method, (seen.get(message.method) ?? 0) + 1)
      if (message.id === undefined) return void res.writeHead(202).end()
      let result: Answer
      if (message.method === 'server/discover') {
        result = { resultType: 'complete', supportedVersions: ['2026-07-28'], capabilities: { tools: {}, extensions: { [TASKS_EXTENSION]: {} } }, serverInfo: { name: 'hostile', version: '1' } }
      } else if (message.method === 'tools/list') {
        result = { resultType: 'complete', ttlMs: 0, cacheScope: 'private', tools: [{ name: 't', inputSchema: { type: 'object' } }] }
      } else {
        result = answer(message.method)
      }
      res.writeHead(200, { 'content-type': 'application/json' })
      const frame = 'error' in result ? { jsonrpc: '2.0', id: message.id, error: result.error } : { jsonrpc: '2.0', id: message.id, result: { ...result, _meta: { ...SERVER_INFO, ...((result._meta as object) ?? {}) } } }
      res.end(JSON.stringify(frame))
    })
  })
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve))
  return { url: `http://127.0.0.1:${(server!.address() as AddressInfo).port}/mcp`, seen }
}

async function imported(url: string, taskPoll?: { maxWaitMs: number }): Promise<ToolManager> {
  client = new Client({ name: 'victim', version: '1' }, { versionNegotiation: { mode: 'auto' }, capabilities: { elicitation: { form: {}, url: {} }, extensions: { [TASKS_EXTENSION]: {} } } as never })
  await client.connect(taskAwareTransport(new StreamableHTTPClientTransport(new URL(url))))
  const tm = new ToolManager()
  await importMcpTools(client, tm, taskPoll === undefined ? {} : { taskPoll })
  return tm
}

const now = new Date().toISOString()
const task = (over: Record<string, unknown> = {}): Record<string, unknown> => ({ resultType: 'task', taskId: 'tk1', status: 'working', ttlMs: 60_000, pollIntervalMs: 10, createdAt: now, lastUpdatedAt: now, ...over })

describe('importMcpTools against a hostile 2026-07-28 server', () => {
  it.each([
    ['no task id', { resultType: 'task', status: 'working' }],
    ['an unknown status', task({ status: 'bogus' })],
  ])('a task handle with %s is an error, never a success', async (_label, handle) => {
    const { url } = await hostile(() => handle)
    const view = await (await imported(url)).call('t', {})
    expect(view).toMatchObject({ status: 'error', message: expect.stringContaining('malformed task handle') })
  })

  it('a task completed without a result is an error saying so', async () => {
    const { url } = await hostile((method) => (method === 'tools/call' ? task() : task({ resultType: 'complete', status: 'completed' })))
    const view = await (await imported(url, { maxWaitMs: 2_000 })).call('t', {})
    expect(view).toMatchObject({ status: 'error', message: 'The remote task completed without a result.' })
  })

  it('a form schema over the pending limits is an error naming why, not "The tool failed."', async () => {
    const properties = Object.fromEntries(Array.from({ length: 3_000 }, (_, i) => [`field_${i}`, { type: 'string', description: 'x'.repeat(20) }]))
    const ask = {
      resultType: 'input_required',
      inputRequests: { q: { method: 'elicitation/create', params: { mode: 'form', message: 'fill it', requestedSchema: { type: 'object', properties } } } },
      requestState: 'opaque',
    }
    const { url } = await hostile(() => ask)
    const view = await (await imported(url)).call('t', {})
    expect(view).toMatchObject({ status: 'error', message: expect.stringContaining('asked for input importMcpTools cannot carry') })
    expect((view as { message: string }).message).toContain('65536')
  })

  it(`a task that asks to be polled without pause is polled at most every ${MIN_TASK_POLL_MS} ms`, async () => {
    const { url, seen } = await hostile((method) => (method === 'tools/call' ? task({ pollIntervalMs: 0 }) : task({ resultType: 'complete', pollIntervalMs: 0 })))
    const view = await (await imported(url, { maxWaitMs: 1_000 })).call('t', {})
    expect(view.status).toBe('pending')
    // 1,000 ms of waiting at one tasks/get per 100 ms at most (plus the first): never hundreds
    expect(seen.get('tasks/get') ?? 0).toBeLessThanOrEqual(1_000 / MIN_TASK_POLL_MS + 2)
  })
})
