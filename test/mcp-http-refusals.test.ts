// The HTTP refusals of both eras, as raw frames: every error answer validates against its era's
// schema (no `"id": null`, which neither allows: the SDK's own answers are rewritten, web.ts
// withoutNullId), and a 2026-07-28 POST whose Accept does not list both answer types gets 406,
// as a 2025-11-25 one does. Schemas from test/fixtures/mcp/frames.ts (skipped with the reason
// printed when the reference folder is absent, failing under CI=true).
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ToolManager } from '../src/runtime/manager.js'
import { serveHttp, type HttpMcpServer } from '../src/mcp/http.js'
import { withoutNullId } from '../src/mcp/web.js'
import { MCP_LEGACY_PROTOCOL_VERSION, MCP_PROTOCOL_VERSION } from '../src/mcp/protocol.js'
import { frameSchemas, type Era } from './fixtures/mcp/frames.js'

const schemas = frameSchemas()
const envelope = {
  'io.modelcontextprotocol/protocolVersion': MCP_PROTOCOL_VERSION,
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
}
const headers = (version: string, extra: Record<string, string> = {}): Record<string, string> => ({
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': version,
  ...extra,
})
const cancelled = { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1, _meta: envelope } }
const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: MCP_LEGACY_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }
const list = { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: envelope } }

let served: HttpMcpServer
let runs = 0
beforeAll(async () => {
  const tm = new ToolManager()
  tm.register({ name: 'echo', inputSchema: { type: 'object' }, run: () => (runs++, 'ok') })
  served = await serveHttp(tm)
})
afterAll(async () => served?.close())

async function post(h: Record<string, string>, body: unknown): Promise<{ status: number; frame: Record<string, unknown> }> {
  const res = await fetch(served.url, { method: 'POST', headers: h, body: JSON.stringify(body) })
  const text = await res.text()
  return { status: res.status, frame: JSON.parse(text) as Record<string, unknown> }
}

function expectErrorFrame(era: Era, frame: Record<string, unknown>): void {
  expect(frame).not.toHaveProperty('id', null)
  expect(frame.error).toBeDefined()
  if (schemas !== undefined) expect(schemas.errors(era, 'JSONRPCErrorResponse', frame), JSON.stringify(frame)).toEqual([])
}

describe('HTTP error answers that name no request carry no id, valid against their era', () => {
  const cases: [string, Era, Record<string, string>, unknown, number][] = [
    ['2026-07-28: a notification whose Mcp-Method disagrees with its body', 'modern', headers(MCP_PROTOCOL_VERSION, { 'mcp-method': 'tools/call' }), cancelled, 400],
    ['2026-07-28: a notification whose MCP-Protocol-Version disagrees with its envelope', 'modern', headers(MCP_LEGACY_PROTOCOL_VERSION, { 'mcp-method': 'notifications/cancelled' }), cancelled, 400],
    ['2026-07-28: a JSON-RPC response posted', 'modern', headers(MCP_PROTOCOL_VERSION), { jsonrpc: '2.0', id: 5, result: { _meta: envelope } }, 400],
    ['2026-07-28: Content-Type text/plain', 'modern', headers(MCP_PROTOCOL_VERSION, { 'content-type': 'text/plain', 'mcp-method': 'tools/list' }), list, 415],
    ['2025-11-25: Accept application/json only', 'legacy', headers(MCP_LEGACY_PROTOCOL_VERSION, { accept: 'application/json' }), initialize, 406],
    ['2025-11-25: Content-Type text/plain', 'legacy', headers(MCP_LEGACY_PROTOCOL_VERSION, { 'content-type': 'text/plain' }), initialize, 415],
  ]
  it.each(cases)('%s', async (_label, era, h, body, status) => {
    const answer = await post(h, body)
    expect(answer.status).toBe(status)
    expectErrorFrame(era, answer.frame)
  })
})

describe('a 2026-07-28 POST must accept application/json and text/event-stream', () => {
  const call = { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'echo', arguments: {}, _meta: envelope } }
  const callHeaders = (accept?: string): Record<string, string> => {
    const h = headers(MCP_PROTOCOL_VERSION, { 'mcp-method': 'tools/call', 'mcp-name': 'echo' })
    if (accept === undefined) delete h.accept
    else h.accept = accept
    return h
  }
  it.each([['application/json'], ['text/event-stream'], [undefined]])('Accept %s: 406, and nothing runs', async (accept) => {
    const before = runs
    const answer = await post(callHeaders(accept), call)
    expect(answer.status).toBe(406)
    expectErrorFrame('modern', answer.frame)
    expect(answer.frame.id).toBe(7)
    expect(runs).toBe(before)
  })
  it('both listed (with parameters, in any order): served', async () => {
    const answer = await post(callHeaders('text/event-stream;q=0.9, application/json'), call)
    expect(answer.status).toBe(200)
    expect((answer.frame.result as { isError?: boolean }).isError).toBe(false)
  })
})

describe('withoutNullId', () => {
  it('drops a top-level null id only', () => {
    expect(JSON.parse(withoutNullId('{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"x"}}'))).toEqual({ jsonrpc: '2.0', error: { code: -32600, message: 'x' } })
    const inner = '{"jsonrpc":"2.0","id":3,"result":{"structuredContent":{"id":null}}}'
    expect(withoutNullId(inner)).toBe(inner)
    expect(withoutNullId('not json "id":null')).toBe('not json "id":null')
  })
})
