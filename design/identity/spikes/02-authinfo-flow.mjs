// Spike 02: how AuthInfo given by a gate reaches a low-level Server of the SDK v2
// (@modelcontextprotocol/server 2.4.0): createMcpHandler's factory context and ctx.http.authInfo
// (2026-07-28), a 2025 session transport's handleRequest({ authInfo }), and whether
// createMcpHandler applies scope challenges to a low-level Server (it does so only for McpServer).
// Run from the repository root: node design/identity/spikes/02-authinfo-flow.mjs
import { createMcpHandler, Server, WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/server'

const seen = []
const factory = (ctx) => {
  seen.push(`factory era=${ctx.era} authInfo.extra=${JSON.stringify(ctx.authInfo?.extra)}`)
  const s = new Server({ name: 'spike', version: '0' }, { capabilities: { tools: {} } })
  s.setRequestHandler('tools/list', async (_r, c) => {
    seen.push(`tools/list ctx.http=${JSON.stringify(c.http ? { authInfo: { ...c.http.authInfo, token: '<hidden>' } } : c.http)}`)
    return { tools: [] }
  })
  s.setRequestHandler('tools/call', async (_r, c) => ({ content: [{ type: 'text', text: `subject=${c.http?.authInfo?.extra?.principal?.subject}` }] }))
  return s
}
const authInfo = { token: '', clientId: 'c1', scopes: ['tools:read'], expiresAt: Math.floor(Date.now() / 1000) + 60, extra: { principal: { subject: 'alice', issuer: 'http://127.0.0.1:9999', clientId: 'c1', scopes: ['tools:read'] } } }
const modernHeaders = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28' }
const env = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} }
const handler = createMcpHandler(factory, { legacy: 'reject' })
for (const [id, method, params] of [[1, 'tools/list', { _meta: env }], [2, 'tools/call', { name: 'x', arguments: {}, _meta: env }]]) {
  const res = await handler.fetch(new Request('http://127.0.0.1/mcp', { method: 'POST', headers: { ...modernHeaders, 'mcp-method': method, ...(method === 'tools/call' ? { 'mcp-name': 'x' } : {}) } }), { parsedBody: { jsonrpc: '2.0', id, method, params }, authInfo })
  seen.push(`modern ${method} -> ${res.status} ${(await res.text()).replace(/\s+/g, ' ').slice(0, 200)}`)
}
await handler.close()

// 2025 session: one Server per session, authInfo per request
const server = factory({ era: 'legacy' })
const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: () => 'sess-1', enableJsonResponse: true })
await server.connect(transport)
const legacyHeaders = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }
const init = await transport.handleRequest(new Request('http://127.0.0.1/mcp', { method: 'POST', headers: legacyHeaders }), { parsedBody: { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'c', version: '1' } } }, authInfo })
seen.push(`legacy initialize -> ${init.status}`)
const h2 = { ...legacyHeaders, 'mcp-session-id': 'sess-1', 'mcp-protocol-version': '2025-11-25' }
await transport.handleRequest(new Request('http://127.0.0.1/mcp', { method: 'POST', headers: h2 }), { parsedBody: { jsonrpc: '2.0', method: 'notifications/initialized' } })
const bob = { ...authInfo, extra: { principal: { ...authInfo.extra.principal, subject: 'bob' } } }
const call = await transport.handleRequest(new Request('http://127.0.0.1/mcp', { method: 'POST', headers: h2 }), { parsedBody: { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'x', arguments: {} } }, authInfo: bob })
seen.push(`legacy tools/call on the same session with another AuthInfo -> ${call.status} ${(await call.text()).replace(/\s+/g, ' ').slice(0, 200)}`)
await server.close()
console.log(seen.join('\n'))
