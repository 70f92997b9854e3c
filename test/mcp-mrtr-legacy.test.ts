// Confirmations in the 2025 era through the same input requests (issue #22 Deliver 6): with a
// session, the SDK's legacy shim sends the form as a real `elicitation/create` on the request's
// stream and re-enters the tools/call handler with the answer; the params (the summary, the
// redacted changes, `approve` defaulting to false) are valid against the 2025-11-25 schema. A
// request cancelled while the client is being asked denies the call. Without a session
// (`stateless`) no server-to-client request is possible: the call answers the isError result
// naming the confirmation, with the approval link.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { ElicitationCompleteNotificationSchema, ElicitRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { ToolManager } from '../src/runtime/manager.js'
import { serveHttp, type HttpMcpServer } from '../src/mcp/http.js'
import { frameSchemas } from './fixtures/mcp/frames.js'

const schemas = frameSchemas()

function manager(runs: string[], decisions: { confirmId: string; approved: boolean }[]): ToolManager {
  const tm = new ToolManager()
  tm.register({
    name: 'rename',
    inputSchema: { type: 'object', properties: { to: { type: 'string' }, password: { type: 'string' } }, required: ['to'] },
    needsConfirmation: true,
    summarize: ({ to }: { to: string }) => `Rename the project to ${to}`,
    previewChanges: ({ to, password }: { to: string; password?: string }) => [
      { path: '/name', before: 'old', after: to },
      { path: '/password', before: 'x', after: password ?? '' },
    ],
    run: ({ to }: { to: string }) => (runs.push(to), { renamed: to }),
  })
  tm.on('confirmation', (e) => decisions.push({ confirmId: e.confirmId, approved: e.approved }))
  return tm
}

async function connect(url: string, answer?: (params: Record<string, unknown>) => Promise<Record<string, unknown>>): Promise<Client> {
  const client = new Client({ name: 'legacy-confirm', version: '1' }, answer === undefined ? {} : { capabilities: { elicitation: {} } })
  if (answer !== undefined) client.setRequestHandler(ElicitRequestSchema, (req) => answer(req.params as Record<string, unknown>) as never)
  await client.connect(new StreamableHTTPClientTransport(new URL(url)))
  return client
}

describe('confirmations of a 2025 client', () => {
  const runs: string[] = []
  const decisions: { confirmId: string; approved: boolean }[] = []
  let sessions: HttpMcpServer
  let stateless: HttpMcpServer
  beforeAll(async () => {
    const tm = manager(runs, decisions)
    sessions = await serveHttp(tm)
    stateless = await serveHttp(tm, { stateless: true })
  })
  afterAll(async () => {
    await sessions?.close()
    await stateless?.close()
  })

  it('with a session: elicitation/create carries the summary and the redacted changes (valid 2025-11-25 params); accept runs it once', async () => {
    const asked: Record<string, unknown>[] = []
    const client = await connect(sessions.url, async (params) => (asked.push(params), { action: 'accept', content: { approve: true } }))
    try {
      const result = (await client.callTool({ name: 'rename', arguments: { to: 'atlas', password: 'hunter2-secret' } })) as CallToolResult
      expect(result).toMatchObject({ isError: false, structuredContent: { renamed: 'atlas' } })
      expect(runs).toEqual(['atlas'])
      expect(asked).toHaveLength(1)
      const params = asked[0]!
      expect(params.mode).toBe('form')
      expect(params.message).toMatch(/^Confirm: Rename the project to atlas\n/)
      expect(params.message).toContain('/name')
      expect(JSON.stringify(params)).not.toContain('hunter2')
      expect(params.requestedSchema).toEqual({
        type: 'object',
        properties: { approve: { type: 'boolean', title: 'Approve', description: 'Rename the project to atlas', default: false } },
        required: ['approve'],
      })
      if (schemas !== undefined) expect(schemas.errors('legacy', 'ElicitRequestFormParams', params)).toEqual([])
    } finally {
      await client.close()
    }
  })

  it('with a session: a request cancelled while the client is being asked denies the call; nothing runs', async () => {
    const stop = new AbortController()
    let asked!: () => void
    const askedNow = new Promise<void>((resolve) => (asked = resolve))
    const client = await connect(sessions.url, () => (asked(), new Promise(() => undefined)))
    try {
      const before = decisions.length
      const call = client.callTool({ name: 'rename', arguments: { to: 'never' } }, undefined, { signal: stop.signal })
      await askedNow
      stop.abort()
      await expect(call).rejects.toThrow()
      await expect.poll(() => decisions.slice(before)).toEqual([{ confirmId: expect.any(String), approved: false }])
      expect(runs).not.toContain('never')
    } finally {
      await client.close()
    }
  })

  it('with a session: a client that answers the elicitation with an error gets an isError result; the call is not denied and does not run', async () => {
    const client = await connect(sessions.url, async () => {
      throw new Error('no dialog available')
    })
    try {
      const before = decisions.length
      const result = (await client.callTool({ name: 'rename', arguments: { to: 'broken' } })) as CallToolResult
      expect(result.isError).toBe(true)
      expect(JSON.stringify(result.content)).toContain('failed')
      expect(decisions.slice(before)).toEqual([])
      expect(runs).not.toContain('broken')
    } finally {
      await client.close()
    }
  })

  it('with a session, URL only: decided on the page before the client answers accept, the call answers its result (not marked replayed) and the completion notice follows', async () => {
    const client = new Client({ name: 'legacy-url', version: '1' }, { capabilities: { elicitation: { url: {} } } })
    const asked: { url: string; elicitationId: string }[] = []
    const completed: string[] = []
    client.setRequestHandler(ElicitRequestSchema, async (req) => {
      const params = req.params as { url: string; elicitationId: string }
      asked.push(params)
      const csrf = /name="csrf" value="([^"]+)"/.exec(await (await fetch(params.url)).text())![1]!
      const posted = await fetch(params.url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ decision: 'approve', csrf }).toString() })
      await posted.text()
      return { action: 'accept' }
    })
    client.setNotificationHandler(ElicitationCompleteNotificationSchema, (n) => void completed.push(n.params.elicitationId))
    await client.connect(new StreamableHTTPClientTransport(new URL(sessions.url)))
    try {
      const result = (await client.callTool({ name: 'rename', arguments: { to: 'early' } })) as CallToolResult
      expect(result).toMatchObject({ isError: false, structuredContent: { renamed: 'early' } })
      expect(result._meta?.['toolwire/replayed']).toBeUndefined()
      expect(runs.filter((r) => r === 'early')).toEqual(['early'])
      if (schemas !== undefined) expect(schemas.errors('legacy', 'ElicitRequestURLParams', asked[0])).toEqual([])
      await expect.poll(() => completed).toEqual([asked[0]!.elicitationId])
    } finally {
      await client.close()
    }
  })

  it('stateless: no elicitation (no server-to-client request); the isError result names the confirmation and carries the link', async () => {
    const asked: unknown[] = []
    const client = await connect(stateless.url, async (params) => (asked.push(params), { action: 'accept', content: { approve: true } }))
    try {
      const result = (await client.callTool({ name: 'rename', arguments: { to: 'nosession' } })) as CallToolResult
      expect(result.isError).toBe(true)
      expect(result._meta?.['toolwire/confirmation']).toMatchObject({ confirmId: expect.any(String), summary: 'Rename the project to nosession', url: expect.stringContaining('/confirm/') })
      expect(asked).toEqual([])
      expect(runs).not.toContain('nosession')
    } finally {
      await client.close()
    }
  })
})
