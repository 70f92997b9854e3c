// Spike 7b: with a fallbackRequestHandler installed, is an unknown method still 404 before dispatch?
import { createServer } from 'node:http'
import { Server, createMcpHandler } from '@modelcontextprotocol/server'
import { toNodeHandler } from '@modelcontextprotocol/node'
const handler = createMcpHandler(() => { const s = new Server({ name: 'f', version: '0' }, { capabilities: { tools: {} } }); s.fallbackRequestHandler = async (req) => { throw Object.assign(new Error('Method not found'), { code: -32601 }) }; return s })
const http = createServer(toNodeHandler(handler)); await new Promise((r) => http.listen(0, '127.0.0.1', r))
const res = await fetch(`http://127.0.0.1:${http.address().port}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'foo/bar' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'foo/bar', params: { _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} } } }) })
console.log('unknown method with fallback installed ->', res.status, await res.text())
await handler.close(); http.close()
