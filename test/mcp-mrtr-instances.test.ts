// Confirmations as MRTR (MCP 2026-07-28) across two serveHttp instances on one PostgreSQL
// store sharing an approval secret: the input_required answer of instance A, retried on
// instance B with the approval, runs the tool once; the same retry sent to A then answers the
// recorded result (`toolwire/replayed`) and runs nothing. Frames checked against the schema.
// Without TOOLWIRE_PG_URL the case is skipped with the reason printed (under CI=true it fails).
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import type { ToolManager } from '../src/runtime/manager.js'
import { serveHttp, type HttpMcpServer } from '../src/mcp/http.js'
import type { ToolStore } from '../src/runtime/store/index.js'
import { MCP_PROTOCOL_VERSION } from '../src/mcp/protocol.js'
import { payManager, postgresPair, postgresUrl } from './fixtures/mcp/instances.js'
import { frameSchemas, validatingFetch } from './fixtures/mcp/frames.js'

const PG_URL = postgresUrl('mcp-mrtr-instances')
const SECRET = 'mrtr-instances-approval-secret-0123456789'
const STORE_KEY = 'b'.repeat(64)
const schemas = frameSchemas()

function manager(store: ToolStore, runs: string[], name: string): ToolManager {
  return payManager(store, runs, name, SECRET, STORE_KEY)
}

const checked: Promise<void>[] = []

describe.skipIf(PG_URL === undefined)('MRTR confirmations across two instances on PostgreSQL', () => {
  const runs: string[] = []
  let storeA: ToolStore
  let storeB: ToolStore
  let a: HttpMcpServer
  let b: HttpMcpServer
  beforeAll(async () => {
    ;[storeA, storeB] = await postgresPair(PG_URL!, 'tw_mrtr')
    a = await serveHttp(manager(storeA, runs, 'A'), { store: storeA, approvalSecret: SECRET })
    b = await serveHttp(manager(storeB, runs, 'B'), { store: storeB, approvalSecret: SECRET })
  })
  afterAll(async () => {
    await Promise.all(checked)
    await a?.close()
    await b?.close()
    await storeA?.close()
    await storeB?.close()
  })

  const client = async (url: string, capabilities: Record<string, unknown> = { elicitation: { form: {} } }): Promise<Client> => {
    const c = new Client({ name: 'mrtr', version: '1' }, { capabilities, versionNegotiation: { mode: { pin: MCP_PROTOCOL_VERSION } }, inputRequired: { autoFulfill: false } })
    await c.connect(new StreamableHTTPClientTransport(new URL(url), { fetch: validatingFetch(schemas, checked) }))
    return c
  }

  it('asked on A, approved on B: runs once; the same retry on A answers the recorded result', async () => {
    const ca = await client(a.url)
    const cb = await client(b.url)
    try {
      const args = { invoice: 'INV-7' }
      const first = (await ca.callTool({ name: 'pay', arguments: args }, { allowInputRequired: true })) as unknown as { resultType: string; requestState: string }
      expect(first.resultType).toBe('input_required')
      const retry = { name: 'pay', arguments: args, inputResponses: { 'toolwire.confirm': { action: 'accept', content: { approve: true } } }, requestState: first.requestState }
      const onB = await cb.callTool(retry as never)
      expect(onB).toMatchObject({ isError: false, structuredContent: { paid: 'INV-7' } })
      expect(runs).toEqual(['INV-7@B'])
      const onA = await ca.callTool(retry as never)
      expect(onA).toMatchObject({ isError: false, structuredContent: { paid: 'INV-7' } })
      expect(onA._meta?.['toolwire/replayed']).toBe(true)
      expect(runs).toEqual(['INV-7@B'])
    } finally {
      await ca.close()
      await cb.close()
    }
  })

  it('URL mode: asked on A, the retry sent to B waits there while the link is approved on A; B delivers the result, the tool ran once', async () => {
    const ca = await client(a.url, { elicitation: { url: {} } })
    const cb = await client(b.url, { elicitation: { url: {} } })
    try {
      const args = { invoice: 'INV-URL' }
      const first = (await ca.callTool({ name: 'pay', arguments: args }, { allowInputRequired: true })) as unknown as {
        inputRequests: Record<string, { params: { mode: string; url: string } }>
        requestState: string
      }
      const { url } = first.inputRequests['toolwire.confirm']!.params
      expect(url.startsWith(a.url.replace(/\/mcp$/, ''))).toBe(true)
      const retry = { name: 'pay', arguments: args, inputResponses: { 'toolwire.confirm': { action: 'accept' } }, requestState: first.requestState }
      const waiting = cb.callTool(retry as never)
      const csrf = /name="csrf" value="([^"]+)"/.exec(await (await fetch(url)).text())![1]!
      const posted = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ decision: 'approve', csrf }).toString() })
      expect(posted.status).toBe(200)
      const onB = await waiting
      expect(onB).toMatchObject({ isError: false, structuredContent: { paid: 'INV-URL' } })
      expect(runs.filter((r) => r.startsWith('INV-URL'))).toEqual(['INV-URL@A'])
    } finally {
      await ca.close()
      await cb.close()
    }
  })
})
