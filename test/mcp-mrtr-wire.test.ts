// Confirmations as multi-round-trip requests (MCP 2026-07-28) through the v2 server's tools/call
// handler: the SDK v2 client pinned to 2026-07-28, over HTTP and over an in-process stdio pair.
// Accept runs once, decline never runs, a replayed retry does not run again, a tampered
// requestState is refused and nothing runs, a client without elicitation gets the isError answer,
// and so does a URL-only client where there is no approval page (stdio; URL mode: mcp-mrtr-url.test.ts).
// Every HTTP answer frame is checked against the 2026-07-28 schema (test/fixtures/mcp/frames.ts).
import { PassThrough } from 'node:stream'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { ToolManager } from '../src/runtime/manager.js'
import { serveHttp, type HttpMcpServer } from '../src/mcp/http.js'
import { serveStdio } from '../src/mcp/stdio.js'
import { MCP_PROTOCOL_VERSION } from '../src/mcp/protocol.js'
import { frameSchemas, validatingFetch } from './fixtures/mcp/frames.js'
import { pipeTransport } from './fixtures/mcp/pipe.js'

const schemas = frameSchemas()

function manager(): { tm: ToolManager; runs: { remove: number } } {
  const runs = { remove: 0 }
  const tm = new ToolManager()
  tm.register({ name: 'remove', inputSchema: { type: 'object', properties: { path: { type: 'string' } } }, needsConfirmation: true, run: () => (runs.remove++, 'removed') })
  return { tm, runs }
}


type Connect = (client: Client) => Promise<void>

function suite(label: string, setup: () => Promise<{ connect: Connect; runs: { remove: number }; close(): Promise<void> }>): void {
  describe(`MRTR confirmations over ${label} (2026-07-28)`, () => {
    let connect: Connect
    let runs: { remove: number }
    let close: () => Promise<void>
    const clients: Client[] = []
    beforeAll(async () => {
      ;({ connect, runs, close } = await setup())
    })
    afterEach(async () => {
      for (const c of clients.splice(0)) await c.close()
    })
    afterAll(() => close())

    const client = async (capabilities: Record<string, unknown>, manual = false): Promise<Client> => {
      const c = new Client(
        { name: 'mrtr', version: '1' },
        { capabilities, versionNegotiation: { mode: { pin: MCP_PROTOCOL_VERSION } }, ...(manual ? { inputRequired: { autoFulfill: false } } : {}) },
      )
      await connect(c)
      clients.push(c)
      return c
    }

    it('accept through the client elicitation handler runs the tool once', async () => {
      const before = runs.remove
      const c = await client({ elicitation: { form: {} } })
      const asked: unknown[] = []
      c.setRequestHandler('elicitation/create', async (req) => (asked.push(req.params), { action: 'accept', content: { approve: true } }))
      const result = await c.callTool({ name: 'remove', arguments: { path: 'a' } })
      expect(result.isError).toBe(false)
      expect(result.content).toEqual([{ type: 'text', text: 'removed' }])
      expect(runs.remove).toBe(before + 1)
      expect(asked).toEqual([expect.objectContaining({ mode: 'form', requestedSchema: expect.objectContaining({ required: ['approve'] }) })])
    })

    it('decline never runs the tool and answers isError', async () => {
      const before = runs.remove
      const c = await client({ elicitation: { form: {} } })
      c.setRequestHandler('elicitation/create', async () => ({ action: 'decline' }))
      const result = await c.callTool({ name: 'remove', arguments: { path: 'b' } })
      expect(result.isError).toBe(true)
      expect(JSON.stringify(result.content)).toContain('denied')
      expect(runs.remove).toBe(before)
    })

    it('a replayed retry answers the recorded result and does not run again; a tampered state is refused', async () => {
      const before = runs.remove
      const c = await client({ elicitation: { form: {} } }, true)
      const first = (await c.callTool({ name: 'remove', arguments: { path: 'c' } }, { allowInputRequired: true })) as unknown as {
        resultType: string
        inputRequests: Record<string, unknown>
        requestState: string
      }
      expect(first.resultType).toBe('input_required')
      expect(Object.keys(first.inputRequests)).toEqual(['toolwire.confirm'])
      expect(runs.remove).toBe(before)
      const inputResponses = { 'toolwire.confirm': { action: 'accept', content: { approve: true } } }
      const tampered = first.requestState.slice(0, -4) + (first.requestState.endsWith('AAAA') ? 'BBBB' : 'AAAA')
      await expect(c.callTool({ name: 'remove', arguments: { path: 'c' }, inputResponses, requestState: tampered } as never)).rejects.toMatchObject({ code: -32602 })
      // a state of another call's arguments is refused too
      await expect(c.callTool({ name: 'remove', arguments: { path: 'other' }, inputResponses, requestState: first.requestState } as never)).rejects.toMatchObject({ code: -32602 })
      expect(runs.remove).toBe(before)
      // a retry without the answer asks the same again
      const again = (await c.callTool({ name: 'remove', arguments: { path: 'c' }, requestState: first.requestState } as never, { allowInputRequired: true })) as unknown as { resultType: string; inputRequests: Record<string, unknown> }
      expect(again.resultType).toBe('input_required')
      expect(Object.keys(again.inputRequests)).toEqual(['toolwire.confirm'])
      const retry = await c.callTool({ name: 'remove', arguments: { path: 'c' }, inputResponses, requestState: first.requestState } as never)
      expect(retry).toMatchObject({ isError: false, content: [{ type: 'text', text: 'removed' }] })
      expect(retry._meta?.['toolwire/replayed']).toBeUndefined()
      const replay = await c.callTool({ name: 'remove', arguments: { path: 'c' }, inputResponses, requestState: first.requestState } as never)
      expect(replay).toMatchObject({ isError: false, content: [{ type: 'text', text: 'removed' }] })
      expect(replay._meta?.['toolwire/replayed']).toBe(true)
      expect(runs.remove).toBe(before + 1)
    })

    it('a client without elicitation, or with URL elicitation only where there is no approval page (confirmPage: false; stdio has none), gets the isError answer naming the confirmation', async () => {
      const before = runs.remove
      for (const capabilities of [{}, { elicitation: { url: {} } }]) {
        const c = await client(capabilities)
        const result = await c.callTool({ name: 'remove', arguments: { path: 'd' } })
        expect(result.isError).toBe(true)
        expect(result._meta?.['toolwire/confirmation']).toMatchObject({ summary: expect.stringContaining('remove') })
      }
      expect(runs.remove).toBe(before)
    })
  })
}

const checked: Promise<void>[] = []
const seenFrames: unknown[] = []
suite('HTTP', async () => {
  const { tm, runs } = manager()
  const served: HttpMcpServer = await serveHttp(tm, { confirmPage: false })
  return {
    runs,
    connect: (c) => c.connect(new StreamableHTTPClientTransport(new URL(served.url), { fetch: validatingFetch(schemas, checked, seenFrames) })),
    close: async () => {
      await Promise.all(checked)
      // the input_required, the refused-state error and the results were all seen and checked
      if (schemas !== undefined) {
        const kinds = new Set(seenFrames.map((f) => ((f as { error?: { code: number } }).error?.code ?? (f as { result: { resultType: string } }).result.resultType)))
        expect([...kinds].sort()).toEqual([-32602, 'complete', 'input_required'].sort())
      }
      await served.close()
    },
  }
})

suite('stdio', async () => {
  const { tm, runs } = manager()
  const servers: { close(): Promise<void> }[] = []
  return {
    runs,
    connect: async (c) => {
      const toServer = new PassThrough()
      const toClient = new PassThrough()
      servers.push(await serveStdio(tm, { stdin: toServer, stdout: toClient }))
      await c.connect(pipeTransport(toServer, toClient))
    },
    close: async () => {
      for (const s of servers) await s.close()
    },
  }
})
