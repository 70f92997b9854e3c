// tools/call with `_meta["toolwire/idempotencyKey"]`: the key reaches tm.call's idempotencyKey,
// so a retried call (the same key and input, on any server on the store) answers the recorded
// result, marked `_meta["toolwire/replayed"]`, and the tool body runs once.
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { describe, expect, it } from 'vitest'
import { serveHttp } from '../src/mcp/http.js'
import { MCP_IDEMPOTENCY_KEY_META_KEY, MCP_REPLAYED_META_KEY } from '../src/mcp/meta.js'
import { createMcpServer } from '../src/mcp/server.js'
import { ToolManager } from '../src/runtime/manager.js'
import { MemoryStore } from '../src/runtime/store/index.js'

function manager(runs: number[], store?: MemoryStore): ToolManager {
  const tm = new ToolManager(store === undefined ? {} : { store })
  tm.register({
    name: 'charge',
    description: 'Charges an amount',
    inputSchema: { type: 'object', properties: { amount: { type: 'number' } }, required: ['amount'] },
    run: ({ amount }: { amount: number }) => {
      runs.push(amount)
      return { charged: amount, run: runs.length }
    },
  })
  return tm
}

async function connected(tm: ToolManager): Promise<Client> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  await createMcpServer(tm).connect(serverSide)
  const client = new Client({ name: 'idempotency-test', version: '1.0.0' })
  await client.connect(clientSide)
  return client
}

const call = (client: Client, args: Record<string, unknown>, key?: unknown): Promise<CallToolResult> =>
  client.callTool({ name: 'charge', arguments: args, ...(key === undefined ? {} : { _meta: { [MCP_IDEMPOTENCY_KEY_META_KEY]: key } }) }) as Promise<CallToolResult>

describe('tools/call with an idempotency key', () => {
  it('with a store: a retry with the same key answers the recorded result (replayed) and the tool runs once', async () => {
    const runs: number[] = []
    const client = await connected(manager(runs, new MemoryStore()))
    try {
      const first = await call(client, { amount: 5 }, 'order-17')
      expect(first.isError).toBeFalsy()
      expect(first.structuredContent).toEqual({ charged: 5, run: 1 })
      expect(first._meta?.[MCP_REPLAYED_META_KEY]).toBeUndefined()
      const retry = await call(client, { amount: 5 }, 'order-17')
      expect(retry.isError).toBeFalsy()
      expect(retry.structuredContent).toEqual({ charged: 5, run: 1 })
      expect(retry._meta?.[MCP_REPLAYED_META_KEY]).toBe(true)
      expect(runs).toEqual([5])
      // the same key with another input is refused; without a key every call runs
      const other = await call(client, { amount: 6 }, 'order-17')
      expect(other.isError).toBe(true)
      expect(JSON.stringify(other.content)).toContain('used before with a different input')
      await call(client, { amount: 5 })
      await call(client, { amount: 5 })
      expect(runs).toEqual([5, 5, 5])
    } finally {
      await client.close()
    }
  })

  it('two stateless HTTP servers on one store: the retry sent to the other server is replayed, the tool runs once', async () => {
    const store = new MemoryStore()
    const runs: number[] = []
    const a = await serveHttp(manager(runs, store), { stateless: true })
    const b = await serveHttp(manager(runs, store), { stateless: true })
    const clients: Client[] = []
    try {
      for (const s of [a, b]) {
        const client = new Client({ name: 'idempotency-http', version: '1.0.0' })
        await client.connect(new StreamableHTTPClientTransport(new URL(s.url)))
        clients.push(client)
      }
      const first = await call(clients[0]!, { amount: 9 }, 'retry-me')
      const retry = await call(clients[1]!, { amount: 9 }, 'retry-me')
      expect(first.structuredContent).toEqual({ charged: 9, run: 1 })
      expect(retry.structuredContent).toEqual({ charged: 9, run: 1 })
      expect(retry._meta?.[MCP_REPLAYED_META_KEY]).toBe(true)
      expect(runs).toEqual([9])
    } finally {
      for (const c of clients) await c.close()
      await a.close()
      await b.close()
    }
  })

  it('without a store: an isError result saying the key needs a store, and nothing runs', async () => {
    const runs: number[] = []
    const client = await connected(manager(runs))
    try {
      const result = await call(client, { amount: 5 }, 'order-18')
      expect(result.isError).toBe(true)
      expect(JSON.stringify(result.content)).toContain('idempotencyKey needs a store')
      expect(runs).toEqual([])
    } finally {
      await client.close()
    }
  })

  it('a key that is not a string of 1 to 1024 characters is refused, and nothing runs', async () => {
    const runs: number[] = []
    const client = await connected(manager(runs, new MemoryStore()))
    try {
      for (const key of [42, '', 'k'.repeat(1025)]) {
        const result = await call(client, { amount: 5 }, key)
        expect(result.isError).toBe(true)
        expect(JSON.stringify(result.content)).toContain('idempotencyKey must be a string of 1 to 1024 characters')
      }
      expect(runs).toEqual([])
    } finally {
      await client.close()
    }
  })
})
