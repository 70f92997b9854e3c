// serveHttp under hostile clients (review #21): a flood of `initialize` requests, endless
// chunked bodies, integer ids beyond 2^53, replay buffers bounded by bytes, and a parked
// confirmation whose stored state this version does not know.
import { request } from 'node:http'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ToolManager } from '../src/runtime/manager.js'
import { serveHttp, type HttpMcpServer } from '../src/mcp/http.js'

const INIT = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }
const ACCEPT = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }

const removed: string[] = []

function manager(): ToolManager {
  const tm = new ToolManager()
  tm.register({
    name: 'echo',
    inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    run: ({ text }: { text: string }) => ({ text }),
  })
  tm.register({
    name: 'remove',
    inputSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
    needsConfirmation: true,
    run: ({ path }: { path: string }) => {
      removed.push(path)
      return { removed: path }
    },
  })
  return tm
}

/**
 * A chunked POST that never ends: chunks of 16 KiB are written, whatever the answer, until
 * the server closes the connection or `giveUpBytes` were sent. Resolves the answer's status
 * (`undefined` when none came) and whether the server closed the connection first.
 */
function endlessPost(url: string, headers: Record<string, string>, giveUpBytes: number): Promise<{ status: number | undefined; closed: boolean }> {
  return new Promise((resolve) => {
    const chunk = Buffer.alloc(16 * 1024, 0x20)
    let sent = 0
    let status: number | undefined
    let settled = false
    const finish = (closed: boolean): void => {
      if (settled) return
      settled = true
      resolve({ status, closed })
      req.destroy()
    }
    const req = request(url, { method: 'POST', headers: { ...headers, 'transfer-encoding': 'chunked' } }, (res) => {
      status = res.statusCode
      res.resume()
    })
    req.on('error', () => finish(true))
    req.on('socket', (socket) => socket.once('close', () => finish(true)))
    const pump = (): void => {
      while (!settled) {
        if (sent >= giveUpBytes) {
          finish(false)
          return
        }
        sent += chunk.length
        if (!req.write(chunk)) {
          req.once('drain', pump)
          return
        }
      }
    }
    req.write('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"')
    pump()
  })
}

describe('an endless chunked body (item 2)', () => {
  let served: HttpMcpServer
  const LIMIT = 64 * 1024
  beforeAll(async () => {
    served = await serveHttp(manager(), { maxBodyBytes: LIMIT })
  })
  afterAll(() => served.close())

  it('an MCP POST gets 413 at the limit and its connection is closed, long before 64 MiB', async () => {
    const r = await endlessPost(served.url, ACCEPT, 64 * 1024 * 1024)
    expect(r.status).toBe(413)
    expect(r.closed).toBe(true)
  }, 60_000)

  it("the confirmation page's form POST too (its limit is 4 KiB): 413 at the limit, the connection closed, nothing run", async () => {
    const client = new Client({ name: 'no-elicitation', version: '1.0.0' })
    await client.connect(new StreamableHTTPClientTransport(new URL(served.url)))
    try {
      const held = (await client.callTool({ name: 'remove', arguments: { path: 'a.txt' } })) as CallToolResult
      const link = (held._meta?.['toolwire/confirmation'] as { url: string }).url
      expect((await fetch(link)).status).toBe(200)
      const r = await endlessPost(link, { 'content-type': 'application/x-www-form-urlencoded' }, 64 * 1024 * 1024)
      expect(r.status).toBe(413)
      expect(r.closed).toBe(true)
      expect(removed).toEqual([])
    } finally {
      await client.close()
    }
  }, 60_000)
})
