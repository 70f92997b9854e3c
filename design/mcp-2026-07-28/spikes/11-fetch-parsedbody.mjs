// Spike 11: handler.fetch(request, { parsedBody }) with a body-less web Request: the gate that already
// parsed (and bounded) the body hands the value over, so nothing is read or parsed twice
import { Server, createMcpHandler } from '@modelcontextprotocol/server'
const handler = createMcpHandler(() => { const s = new Server({ name: 'pb', version: '0' }, { capabilities: { tools: {} } }); s.setRequestHandler('tools/list', async () => ({ tools: [] })); s.setRequestHandler('tools/call', async () => ({ content: [{ type: 'text', text: 'ok' }] })); return s })
const body = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'x', _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} } } }
const req = new Request('http://127.0.0.1/mcp', { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'x' } })
const res = await handler.fetch(req, { parsedBody: body })
console.log('fetch face with parsedBody and no body ->', res.status, res.headers.get('content-type'), await res.text())
const legacy = await handler.fetch(new Request('http://127.0.0.1/mcp', { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' } }), { parsedBody: { jsonrpc: '2.0', id: 2, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } } } })
console.log('legacy initialize via parsedBody ->', legacy.status, (await legacy.text()).replace(/\n/g, ' '))
await handler.close()
