// The JSON-RPC shape check the transports make (src/mcp/jsonrpc.ts): it accepts and refuses
// exactly what the SDK's parseJSONRPCMessage does, and reads the same message.
import { parseJSONRPCMessage } from '@modelcontextprotocol/server'
import { describe, expect, it } from 'vitest'
import { readJsonRpcMessage } from '../src/mcp/jsonrpc.js'

const outcome = (read: (v: unknown) => unknown, value: unknown): { ok: true; message: unknown } | { ok: false } => {
  try {
    return { ok: true, message: read(value) }
  } catch {
    return { ok: false }
  }
}

const values: unknown[] = [
  { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { text: 'hi' } } },
  { jsonrpc: '2.0', id: 'a', method: 'ping' },
  { jsonrpc: '2.0', method: 'notifications/initialized' },
  { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' } } },
  { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { _meta: { progressToken: 7 } } },
  { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { _meta: { progressToken: 1.5 } } },
  { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { _meta: { 'io.modelcontextprotocol/related-task': { taskId: 1 } } } },
  { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { _meta: [] } },
  { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { _meta: null } },
  { jsonrpc: '2.0', id: 1, method: 'tools/call', params: [] },
  { jsonrpc: '2.0', id: 1, method: 'tools/call', params: null },
  { jsonrpc: '2.0', id: 2.5, method: 'ping' },
  { jsonrpc: '2.0', id: null, method: 'ping' },
  { jsonrpc: '2.0', id: 2 ** 60, method: 'ping' },
  { jsonrpc: '2.0', id: 1, method: 3 },
  { jsonrpc: '1.0', id: 1, method: 'ping' },
  { id: 1, method: 'ping' },
  { jsonrpc: '2.0', id: 1, method: 'ping', extra: true },
  { jsonrpc: '2.0', id: 1, result: {} },
  { jsonrpc: '2.0', id: 1, error: { code: -1, message: 'no' } },
  { jsonrpc: '2.0', id: 1, method: 'ping', result: {} },
  { jsonrpc: '2.0' },
  [],
  null,
  'text',
  42,
]

describe('readJsonRpcMessage', () => {
  it('accepts and refuses what parseJSONRPCMessage does, and reads the same message', () => {
    for (const value of values) {
      expect(outcome(readJsonRpcMessage, value), JSON.stringify(value)).toEqual(outcome(parseJSONRPCMessage, value))
    }
  })
})
