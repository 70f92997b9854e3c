// An approved MRTR retry sent again while the approved call still runs (MCP 2026-07-28): it waits
// for that run and answers its result, marked replayed, and the tool runs once; a run that
// outlasts `urlConfirmationWaitMs` answers refused `confirmation_running`, saying so (never "already answered").
// Without a store, and with a SQLite store (the wait then reads the store). Frames are checked
// against the 2026-07-28 schema (test/fixtures/mcp/frames.ts).
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { ToolManager } from '../src/runtime/manager.js'
import { openSqliteStore } from '../src/runtime/store/sqlite.js'
import type { ToolStore } from '../src/runtime/store/types.js'
import { serveHttp, type HttpMcpServer } from '../src/mcp/http.js'
import { MCP_PROTOCOL_VERSION } from '../src/mcp/protocol.js'
import { STORE_TEXTS } from '../src/core/texts.js'
import { frameSchemas, validatingFetch } from './fixtures/mcp/frames.js'

const schemas = frameSchemas()
const SECRET = 'running-retry-secret-0123456789abcdef'
const checked: Promise<void>[] = []
const dir = mkdtempSync(join(tmpdir(), 'tw-mrtr-running-'))
const closers: (() => Promise<unknown>)[] = []
afterAll(async () => {
  for (const close of closers.reverse()) await close()
  await Promise.all(checked)
  rmSync(dir, { recursive: true, force: true })
})

type Answer = { resultType?: string; requestState?: string; isError?: boolean; content?: { text: string }[]; _meta?: Record<string, unknown> }

/** A served manager whose `transfer` needs confirmation and runs until `release()`. */
async function serve(store: ToolStore | undefined, options: { urlConfirmationWaitMs?: number } = {}): Promise<{ client: Client; runs: () => number; release: () => void }> {
  let runs = 0
  let release!: () => void
  const gate = new Promise<void>((resolve) => (release = resolve))
  const tm = new ToolManager(store === undefined ? {} : { store, approvalSecret: SECRET })
  tm.register({
    name: 'transfer',
    inputSchema: { type: 'object', properties: { amount: { type: 'number' } }, required: ['amount'] },
    needsConfirmation: true,
    run: async ({ amount }: { amount: number }) => {
      runs++
      await gate
      return { sent: amount }
    },
  })
  const served: HttpMcpServer = await serveHttp(tm, { ...(store === undefined ? {} : { store, approvalSecret: SECRET }), ...options })
  const client = new Client({ name: 'running', version: '1' }, { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: { pin: MCP_PROTOCOL_VERSION } }, inputRequired: { autoFulfill: false } })
  await client.connect(new StreamableHTTPClientTransport(new URL(served.url), { fetch: validatingFetch(schemas, checked) }))
  closers.push(() => served.close(), () => client.close(), () => (release(), Promise.resolve()))
  return { client, runs: () => runs, release }
}

const ask = (c: Client): Promise<Answer> => c.callTool({ name: 'transfer', arguments: { amount: 5 } }, { allowInputRequired: true }) as Promise<Answer>
const approve = (c: Client, state: string): Promise<Answer> =>
  c.callTool({ name: 'transfer', arguments: { amount: 5 }, requestState: state, inputResponses: { 'toolwire.confirm': { action: 'accept', content: { approve: true } } } } as never, { allowInputRequired: true }) as Promise<Answer>

const stores: [string, () => Promise<ToolStore | undefined>][] = [
  ['no store', async () => undefined],
  ['a SQLite store', () => openSqliteStore({ path: join(dir, `s-${Math.random().toString(36).slice(2)}.db`) })],
]

describe.each(stores)('an approved retry sent again while the call runs (%s)', (_label, open) => {
  it('waits for the run and answers its result, marked replayed; the tool runs once', async () => {
    const { client, runs, release } = await serve(await open())
    const asked = await ask(client)
    expect(asked.resultType).toBe('input_required')
    const first = approve(client, asked.requestState!)
    await expect.poll(runs).toBe(1)
    const again = approve(client, asked.requestState!)
    // the second retry is still waiting while the run goes on
    await new Promise((resolve) => setTimeout(resolve, 50))
    release()
    const [a, b] = await Promise.all([first, again])
    expect(a.isError, JSON.stringify(a)).toBe(false)
    expect(a.content?.[0]?.text).toContain('"sent":5')
    expect(b.isError).toBe(false)
    expect(b.content?.[0]?.text).toContain('"sent":5')
    expect(b._meta?.['toolwire/replayed']).toBe(true)
    expect(runs()).toBe(1)
  })

  it('a run that outlasts urlConfirmationWaitMs answers confirmation_running', async () => {
    const { client, runs, release } = await serve(await open(), { urlConfirmationWaitMs: 30 })
    const asked = await ask(client)
    const first = approve(client, asked.requestState!)
    await expect.poll(runs).toBe(1)
    const again = await approve(client, asked.requestState!)
    expect(again.isError).toBe(true)
    expect(again.content?.[0]?.text).toBe(STORE_TEXTS.confirmationStillRunning)
    release()
    expect((await first).isError).toBe(false)
    expect(runs()).toBe(1)
  })
})

describe('URL mode: a retry after accept while the call approved on the page still runs', () => {
  const csrfOf = (html: string): string => /name="csrf" value="([^"]+)"/.exec(html)![1]!
  it.each(stores)('%s: refused confirmation_running while it runs, its result marked replayed after; the tool runs once', async (_label, open) => {
    const store = await open()
    let runs = 0
    let release!: () => void
    const gate = new Promise<void>((resolve) => (release = resolve))
    const tm = new ToolManager(store === undefined ? {} : { store, approvalSecret: SECRET })
    tm.register({
      name: 'wire',
      inputSchema: { type: 'object', properties: { amount: { type: 'number' } }, required: ['amount'] },
      needsConfirmation: true,
      confirmVia: 'url',
      run: async ({ amount }: { amount: number }) => (runs++, await gate, { wired: amount }),
    })
    const served = await serveHttp(tm, { ...(store === undefined ? {} : { store, approvalSecret: SECRET }), urlConfirmationWaitMs: 50 })
    const client = new Client({ name: 'running-url', version: '1' }, { capabilities: { elicitation: { url: {} } }, versionNegotiation: { mode: { pin: MCP_PROTOCOL_VERSION } }, inputRequired: { autoFulfill: false } })
    await client.connect(new StreamableHTTPClientTransport(new URL(served.url), { fetch: validatingFetch(schemas, checked) }))
    closers.push(() => served.close(), () => client.close(), () => (release(), Promise.resolve()))
    const args = { amount: 9 }
    const asked = (await client.callTool({ name: 'wire', arguments: args }, { allowInputRequired: true })) as unknown as { requestState: string; inputRequests: Record<string, { params: { url: string } }> }
    const [key, request] = Object.entries(asked.inputRequests)[0]!
    const link = request.params.url
    // approved on the page: the run starts and holds
    const csrf = csrfOf(await (await fetch(link)).text())
    const posted = fetch(link, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ decision: 'approve', csrf }).toString() })
    await expect.poll(() => runs).toBe(1)
    const retry = (): Promise<Answer> => client.callTool({ name: 'wire', arguments: args, requestState: asked.requestState, inputResponses: { [key]: { action: 'accept' } } } as never, { allowInputRequired: true }) as Promise<Answer>
    const during = await retry()
    expect(during.isError).toBe(true)
    expect(during.content?.[0]?.text).toBe(STORE_TEXTS.confirmationStillRunning)
    release()
    await (await posted).text()
    const after = await retry()
    expect(after.isError).toBe(false)
    expect(after.content?.[0]?.text).toContain('"wired":9')
    expect(after._meta?.['toolwire/replayed']).toBe(true)
    expect(runs).toBe(1)
  })
})

describe('a confirmation that expired while its requestState is still valid', () => {
  it('answers refused confirmation_expired (an isError result), and nothing runs', async () => {
    let runs = 0
    const tm = new ToolManager({ confirmTtlMs: 1 })
    tm.register({ name: 'transfer', inputSchema: { type: 'object' }, needsConfirmation: true, run: () => (runs++, 'sent') })
    const served = await serveHttp(tm)
    const client = new Client({ name: 'expired', version: '1' }, { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: { pin: MCP_PROTOCOL_VERSION } }, inputRequired: { autoFulfill: false } })
    await client.connect(new StreamableHTTPClientTransport(new URL(served.url), { fetch: validatingFetch(schemas, checked) }))
    closers.push(() => served.close(), () => client.close())
    const asked = (await client.callTool({ name: 'transfer', arguments: {} }, { allowInputRequired: true })) as Answer
    await new Promise((resolve) => setTimeout(resolve, 20))
    const retry = (await client.callTool({ name: 'transfer', arguments: {}, requestState: asked.requestState, inputResponses: { 'toolwire.confirm': { action: 'accept', content: { approve: true } } } } as never, { allowInputRequired: true })) as Answer
    expect(retry.isError).toBe(true)
    expect(retry.content?.[0]?.text).toMatch(/expired/)
    expect(runs).toBe(0)
  })
})
