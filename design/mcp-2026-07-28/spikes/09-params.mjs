// Spike 9: how SDK v2 answers malformed tools/call params (modern and legacy legs), and whether a
// server/discover handler can be replaced
import { createServer } from 'node:http'
import { Server, createMcpHandler } from '@modelcontextprotocol/server'
import { toNodeHandler } from '@modelcontextprotocol/node'
import { check } from './validate.mjs'
const handler = createMcpHandler(() => {
  const s = new Server({ name: 'p', version: '0' }, { capabilities: { tools: {} } })
  s.setRequestHandler('tools/list', async () => ({ tools: [] }))
  s.setRequestHandler('tools/call', async () => ({ content: [] }))
  try { s.setRequestHandler('server/discover', async () => ({ supportedVersions: ['2026-07-28'], capabilities: { custom: {} } })); console.log('server/discover handler replaced') } catch (e) { console.log('server/discover replace refused: ' + e.message) }
  return s
})
const http = createServer(toNodeHandler(handler)); await new Promise((r) => http.listen(0, '127.0.0.1', r))
const url = `http://127.0.0.1:${http.address().port}/mcp`
const META = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} }
for (const [label, params, modern] of [
  ['modern, name missing', { _meta: META }, true],
  ['modern, name a number', { name: 5, _meta: META }, true],
  ['modern, arguments an array', { name: 'x', arguments: [], _meta: META }, true],
  ['legacy, name missing', {}, false],
  ['legacy, arguments an array', { name: 'x', arguments: [1] }, false],
]) {
  const headers = modern ? { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', ...(typeof params.name === 'string' ? { 'mcp-name': params.name } : {}) } : { 'mcp-protocol-version': '2025-11-25' }
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers }, body: JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/call', params }) })
  let text = await res.text(); if (text.startsWith('event:')) text = text.split('data: ')[1].trim()
  console.log(`${label} -> ${res.status} ${text}`)
  check(label, JSON.parse(text), modern ? 'mcp-2026#/$defs/JSONRPCErrorResponse' : 'mcp-2025#/$defs/JSONRPCErrorResponse')
}
const d = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json', 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'server/discover' }, body: JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'server/discover', params: { _meta: META } }) })
console.log('discover ->', d.status, await d.text())
await handler.close(); http.close()
