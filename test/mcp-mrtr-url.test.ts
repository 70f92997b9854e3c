// URL-mode confirmations as multi-round-trip requests (MCP 2026-07-28, issue #22 Deliver 2): a
// client that declared only URL elicitation, or a tool with `confirmVia: 'url'`, gets
// `input_required` with the approval page's link (no elicitationId in this revision); the retry
// with `accept` waits, bounded, for the decision made on the page and delivers the call's result;
// not decided within the limit: asked again, the same link, under the next round's key; a decline
// denies and nothing runs. Every frame is checked against the 2026-07-28 schema. Over stdio there
// is no page: mcp-mrtr-wire.test.ts shows the isError answer a URL-only client gets there.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import type { CallToolResult } from '@modelcontextprotocol/client'
import { ToolManager } from '../src/runtime/manager.js'
import { serveHttp, type HttpMcpServer } from '../src/mcp/http.js'
import { MCP_PROTOCOL_VERSION } from '../src/mcp/protocol.js'
import { frameSchemas, validatingFetch } from './fixtures/mcp/frames.js'

const schemas = frameSchemas()
const checked: Promise<void>[] = []
const seen: unknown[] = []

function manager(runs: string[]): ToolManager {
  const tm = new ToolManager()
  const inputSchema = { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] } as const
  tm.register({ name: 'remove', description: 'Remove a record', inputSchema, needsConfirmation: true, run: ({ id }: { id: string }) => (runs.push(id), { removed: id }) })
  tm.register({ name: 'wire', inputSchema, needsConfirmation: true, confirmVia: 'url', run: ({ id }: { id: string }) => (runs.push(`wire:${id}`), { wired: id }) })
  return tm
}

type InputRequired = { resultType: 'input_required'; inputRequests: Record<string, { method: string; params: { mode: string; url: string; message: string; elicitationId?: string } }>; requestState: string }

const csrfOf = (html: string): string => /name="csrf" value="([^"]+)"/.exec(html)![1]!

/** Decides on the approval page, as a person would: opens it, then posts the decision with the page's CSRF token. */
async function decide(link: string, decision: 'approve' | 'deny'): Promise<number> {
  const csrf = csrfOf(await (await fetch(link)).text())
  const res = await fetch(link, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ decision, csrf }).toString() })
  await res.text()
  return res.status
}

async function client(url: string, capabilities: Record<string, unknown>, manual = true): Promise<Client> {
  const c = new Client(
    { name: 'mrtr-url', version: '1' },
    { capabilities, versionNegotiation: { mode: { pin: MCP_PROTOCOL_VERSION } }, ...(manual ? { inputRequired: { autoFulfill: false } } : {}) },
  )
  await c.connect(new StreamableHTTPClientTransport(new URL(url), { fetch: validatingFetch(schemas, checked, seen) }))
  return c
}

const call = (c: Client, name: string, id: string): Promise<InputRequired> => c.callTool({ name, arguments: { id } }, { allowInputRequired: true }) as unknown as Promise<InputRequired>
const retry = (c: Client, name: string, id: string, state: string, key: string, action: string): Promise<unknown> =>
  c.callTool({ name, arguments: { id }, requestState: state, inputResponses: { [key]: { action } } } as never, { allowInputRequired: true })

describe('URL-mode confirmations as MRTR (2026-07-28, serveHttp with its approval page)', () => {
  const runs: string[] = []
  let served: HttpMcpServer
  let impatient: HttpMcpServer
  let shortLinks: HttpMcpServer
  const clients: Client[] = []
  beforeAll(async () => {
    const tm = manager(runs)
    served = await serveHttp(tm)
    // waits for the page's decision only 1 ms before asking again
    impatient = await serveHttp(tm, { urlConfirmationWaitMs: 1 })
    // approval links that expire 1 ms after they are made
    shortLinks = await serveHttp(tm, { confirmPageTtlMs: 1 })
  })
  afterAll(async () => {
    for (const c of clients) await c.close()
    await Promise.all(checked)
    await served?.close()
    await impatient?.close()
    await shortLinks?.close()
  })
  const open = async (url: string, capabilities: Record<string, unknown>, manual = true): Promise<Client> => {
    const c = await client(url, capabilities, manual)
    clients.push(c)
    return c
  }

  it('a URL-only client gets the page link; the retry after accept waits for the decision on the page and delivers the result, once', async () => {
    const c = await open(served.url, { elicitation: { url: {} } })
    const first = await call(c, 'remove', 'r1')
    expect(first.resultType).toBe('input_required')
    expect(Object.keys(first.inputRequests)).toEqual(['toolwire.confirm'])
    const { params } = first.inputRequests['toolwire.confirm']!
    expect(params).toEqual({ mode: 'url', message: expect.stringMatching(/^Approve or deny: /), url: expect.stringContaining('/confirm/') })
    expect(runs).toEqual([])
    const waiting = retry(c, 'remove', 'r1', first.requestState, 'toolwire.confirm', 'accept')
    expect(await decide(params.url, 'approve')).toBe(200)
    const done = (await waiting) as CallToolResult
    expect(done).toMatchObject({ isError: false, structuredContent: { removed: 'r1' } })
    expect(runs).toEqual(['r1'])
    // the same retry again: the recorded result, not a second run
    const replay = (await retry(c, 'remove', 'r1', first.requestState, 'toolwire.confirm', 'accept')) as CallToolResult
    expect(replay).toMatchObject({ isError: false, structuredContent: { removed: 'r1' }, _meta: { 'toolwire/replayed': true } })
    expect(runs).toEqual(['r1'])
  })

  it('decided on the page before the retry comes: the retry delivers the result at once', async () => {
    const c = await open(served.url, { elicitation: { url: {} } })
    const first = await call(c, 'remove', 'r2')
    expect(await decide(first.inputRequests['toolwire.confirm']!.params.url, 'approve')).toBe(200)
    const done = (await retry(c, 'remove', 'r2', first.requestState, 'toolwire.confirm', 'accept')) as CallToolResult
    expect(done).toMatchObject({ isError: false, structuredContent: { removed: 'r2' }, _meta: { 'toolwire/replayed': true } })
    expect(runs.filter((r) => r === 'r2')).toEqual(['r2'])
  })

  it('not decided within the limit: asked again with the same link under toolwire.confirm.2; then decided, that retry delivers the result', async () => {
    const c = await open(impatient.url, { elicitation: { url: {} } })
    const first = await call(c, 'remove', 'r3')
    const link = first.inputRequests['toolwire.confirm']!.params.url
    const again = (await retry(c, 'remove', 'r3', first.requestState, 'toolwire.confirm', 'accept')) as InputRequired
    expect(again.resultType).toBe('input_required')
    expect(Object.keys(again.inputRequests)).toEqual(['toolwire.confirm.2'])
    expect(again.inputRequests['toolwire.confirm.2']!.params.url).toBe(link)
    expect(runs.filter((r) => r === 'r3')).toEqual([])
    // an answer under the first round's key is not one to the second round: asked again
    const stale = (await retry(c, 'remove', 'r3', again.requestState, 'toolwire.confirm', 'accept')) as InputRequired
    expect(Object.keys(stale.inputRequests)).toEqual(['toolwire.confirm.2'])
    expect(await decide(link, 'approve')).toBe(200)
    const done = (await retry(c, 'remove', 'r3', again.requestState, 'toolwire.confirm.2', 'accept')) as CallToolResult
    expect(done).toMatchObject({ isError: false, structuredContent: { removed: 'r3' } })
    expect(runs.filter((r) => r === 'r3')).toEqual(['r3'])
  })

  it('a link that expires undecided denies the call: the retry answers confirmation_denied, nothing runs', async () => {
    const c = await open(shortLinks.url, { elicitation: { url: {} } })
    const first = await call(c, 'remove', 'r6')
    const denied = (await retry(c, 'remove', 'r6', first.requestState, 'toolwire.confirm', 'accept')) as CallToolResult
    expect(denied.isError).toBe(true)
    expect(JSON.stringify(denied.content)).toContain('denied')
    expect(runs.filter((r) => r === 'r6')).toEqual([])
  })

  it('decline (or cancel) denies the call: isError, nothing runs, and the link no longer approves it', async () => {
    for (const action of ['decline', 'cancel']) {
      const c = await open(served.url, { elicitation: { url: {} } })
      const id = `r4-${action}`
      const first = await call(c, 'remove', id)
      const denied = (await retry(c, 'remove', id, first.requestState, 'toolwire.confirm', action)) as CallToolResult
      expect(denied.isError).toBe(true)
      expect(JSON.stringify(denied.content)).toContain('denied')
      expect(await decide(first.inputRequests['toolwire.confirm']!.params.url, 'approve').catch(() => 410)).not.toBe(200)
      expect(runs.filter((r) => r === id)).toEqual([])
    }
  })

  it("confirmVia: 'url' asks a client that declared both modes by URL; a form-only client gets the isError answer with the link", async () => {
    const both = await open(served.url, { elicitation: { form: {}, url: {} } })
    const first = await call(both, 'wire', 'w1')
    expect(first.inputRequests['toolwire.confirm']!.params.mode).toBe('url')
    // the same tool without confirmVia would be a form for this client
    const formFirst = await call(both, 'remove', 'w0')
    expect(formFirst.inputRequests['toolwire.confirm']!.params.mode).toBe('form')
    const formOnly = await open(served.url, { elicitation: { form: {} } })
    const result = (await formOnly.callTool({ name: 'wire', arguments: { id: 'w2' } })) as CallToolResult
    expect(result.isError).toBe(true)
    expect(result._meta?.['toolwire/confirmation']).toMatchObject({ url: expect.stringContaining('/confirm/') })
    expect(runs.filter((r) => r.startsWith('wire:'))).toEqual([])
  })

  it('an SDK client that fulfils input requests itself: its URL handler approves on the page, and callTool resolves with the result', async () => {
    const c = await open(served.url, { elicitation: { url: {} } }, false)
    c.setRequestHandler('elicitation/create', async (req) => {
      const { url } = req.params as { url: string }
      await decide(url, 'approve')
      return { action: 'accept' }
    })
    const result = (await c.callTool({ name: 'remove', arguments: { id: 'r5' } })) as CallToolResult
    expect(result).toMatchObject({ isError: false, structuredContent: { removed: 'r5' } })
    expect(runs.filter((r) => r === 'r5')).toEqual(['r5'])
  })

  it('the frames seen were checked against the 2026-07-28 schema', async () => {
    await Promise.all(checked)
    if (schemas === undefined) return
    const kinds = new Set(seen.map((f) => (f as { error?: { code: number } }).error?.code ?? (f as { result: { resultType: string } }).result.resultType))
    expect([...kinds].sort()).toEqual(['complete', 'input_required'].sort())
  })
})
