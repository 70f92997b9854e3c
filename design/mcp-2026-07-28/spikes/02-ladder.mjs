// Spike 2: raw HTTP probes of createMcpHandler's validation ladder, low-level handlers for
// tools/call (returning resultType "task"), server/discover override, tasks/get|update|cancel as
// custom methods, and schema validation of every answer
import { createServer } from 'node:http'
import { Server, createMcpHandler } from '@modelcontextprotocol/server'
import { toNodeHandler } from '@modelcontextprotocol/node'
import { check } from './validate.mjs'

// a Standard Schema v1 that accepts anything (no zod needed)
const anyParams = { '~standard': { version: 1, vendor: 'toolwire', validate: (value) => ({ value }) } }
const task = { taskId: 'tsk_abc', status: 'working', createdAt: '2026-07-28T10:00:00Z', lastUpdatedAt: '2026-07-28T10:00:00Z', ttlMs: 3600000, pollIntervalMs: 1000 }

function factory(ctx) {
  const s = new Server({ name: 'spike', version: '0.0.1' }, { capabilities: { tools: {}, extensions: { 'io.modelcontextprotocol/tasks': {} } } })
  s.setRequestHandler('tools/list', async () => ({ tools: [{ name: 'b', inputSchema: { type: 'object' } }, { name: 'a', inputSchema: { type: 'object' } }] }))
  s.setRequestHandler('tools/call', async (req, c) => {
    if (req.params.name === 'task') return { resultType: 'task', ...task }
    if (req.params.name === 'throw') throw Object.assign(new Error('boom'), { code: -32602 })
    if (req.params.name === 'log') {
      await c.mcpReq.log('info', 'a log line').catch((e) => console.log('   log threw: ' + e.message))
      await c.mcpReq.notify({ method: 'notifications/progress', params: { progressToken: c.mcpReq._meta?.progressToken ?? 'x', progress: 1 } }).catch((e) => console.log('   notify threw: ' + e.message))
    }
    return { content: [{ type: 'text', text: 'ok' }], _meta: { 'toolwire/callId': 'c1' } }
  })
  for (const m of ['tasks/get', 'tasks/update', 'tasks/cancel']) {
    s.setRequestHandler(m, { params: anyParams }, async (params, c) => {
      console.log(`   [server] ${m} params=${JSON.stringify(params)} caps=${JSON.stringify(c.mcpReq.envelope?.['io.modelcontextprotocol/clientCapabilities'])}`)
      return m === 'tasks/get' ? { ...task } : {}
    })
  }
  return s
}

const handler = createMcpHandler(factory, { onerror: (e) => console.log('   [onerror] ' + e.message) })
const http = createServer(toNodeHandler(handler))
await new Promise((r) => http.listen(0, '127.0.0.1', r))
const url = `http://127.0.0.1:${http.address().port}/mcp`
const META = (caps = {}) => ({ 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': caps })
const TASKS = { extensions: { 'io.modelcontextprotocol/tasks': {} } }

async function probe(label, { method = 'tools/call', params, headers = {}, id = 1, ref, raw }) {
  const body = raw ?? JSON.stringify({ jsonrpc: '2.0', id, method, params })
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers }, body })
  const text = await res.text()
  console.log(`\n--- ${label}\n    req headers=${JSON.stringify(headers)} body=${body.slice(0, 300)}\n    ${res.status} ${res.headers.get('content-type')} ${text.slice(0, 600)}`)
  if (ref && res.headers.get('content-type')?.includes('json') && text) check(label, JSON.parse(text), ref)
  return text
}
const H = (m, n, v = '2026-07-28') => ({ 'mcp-protocol-version': v, 'mcp-method': m, ...(n === undefined ? {} : { 'mcp-name': n }) })

await probe('discover', { method: 'server/discover', params: { _meta: META() }, headers: H('server/discover'), ref: 'mcp-2026#/$defs/DiscoverResultResponse' })
await probe('tools/list order as registered (b,a)', { method: 'tools/list', params: { _meta: META() }, headers: H('tools/list'), ref: 'mcp-2026#/$defs/ListToolsResultResponse' })
await probe('tools/call ok', { params: { name: 'x', _meta: META() }, headers: H('tools/call', 'x'), ref: 'mcp-2026#/$defs/CallToolResultResponse' })
await probe('tools/call Mcp-Name mismatch', { params: { name: 'x', _meta: META() }, headers: H('tools/call', 'y'), ref: 'mcp-2026#/$defs/HeaderMismatchError' })
await probe('tools/call Mcp-Name missing', { params: { name: 'x', _meta: META() }, headers: H('tools/call'), ref: 'mcp-2026#/$defs/HeaderMismatchError' })
await probe('Mcp-Method mismatch', { params: { name: 'x', _meta: META() }, headers: H('tools/list', 'x'), ref: 'mcp-2026#/$defs/HeaderMismatchError' })
await probe('Mcp-Method missing', { params: { name: 'x', _meta: META() }, headers: { 'mcp-protocol-version': '2026-07-28', 'mcp-name': 'x' }, ref: 'mcp-2026#/$defs/HeaderMismatchError' })
await probe('MCP-Protocol-Version header != body', { params: { name: 'x', _meta: META() }, headers: H('tools/call', 'x', '2025-11-25'), ref: 'mcp-2026#/$defs/HeaderMismatchError' })
await probe('MCP-Protocol-Version header missing, body modern', { params: { name: 'x', _meta: META() }, headers: { 'mcp-method': 'tools/call', 'mcp-name': 'x' }, ref: 'mcp-2026#/$defs/JSONRPCErrorResponse' })
await probe('unsupported version 1900-01-01', { params: { name: 'x', _meta: { ...META(), 'io.modelcontextprotocol/protocolVersion': '1900-01-01' } }, headers: H('tools/call', 'x', '1900-01-01'), ref: 'mcp-2026#/$defs/UnsupportedProtocolVersionError' })
await probe('base64 Mcp-Name', { params: { name: 'wé', _meta: META() }, headers: H('tools/call', '=?base64?' + Buffer.from('wé').toString('base64') + '?='), ref: 'mcp-2026#/$defs/CallToolResultResponse' })
await probe('missing clientCapabilities', { params: { name: 'x', _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' } }, headers: H('tools/call', 'x'), ref: 'mcp-2026#/$defs/JSONRPCErrorResponse' })
await probe('unknown method', { method: 'foo/bar', params: { _meta: META() }, headers: H('foo/bar'), ref: 'mcp-2026#/$defs/MethodNotFoundError' })
await probe('ping (removed in 2026)', { method: 'ping', params: { _meta: META() }, headers: H('ping'), ref: 'mcp-2026#/$defs/JSONRPCErrorResponse' })
await probe('tools/call returns resultType task', { params: { name: 'task', _meta: META(TASKS) }, headers: H('tools/call', 'task'), ref: 'tasks#/$defs/CreateTaskResultResponse' })
await probe('tools/call handler throws -32602', { params: { name: 'throw', _meta: META() }, headers: H('tools/call', 'throw'), ref: 'mcp-2026#/$defs/JSONRPCErrorResponse' })
await probe('log without logLevel', { params: { name: 'log', _meta: META() }, headers: H('tools/call', 'log') })
await probe('log with logLevel + progressToken', { params: { name: 'log', _meta: { ...META(), 'io.modelcontextprotocol/logLevel': 'debug', progressToken: 'p1' } }, headers: H('tools/call', 'log') })
await probe('tasks/get with ext', { method: 'tasks/get', params: { taskId: 'tsk_abc', _meta: META(TASKS) }, headers: H('tasks/get', 'tsk_abc'), ref: 'tasks#/$defs/GetTaskResultResponse' })
await probe('tasks/get without ext capability', { method: 'tasks/get', params: { taskId: 'tsk_abc', _meta: META() }, headers: H('tasks/get', 'tsk_abc') })
await probe('tasks/get Mcp-Name missing', { method: 'tasks/get', params: { taskId: 'tsk_abc', _meta: META(TASKS) }, headers: H('tasks/get') })
await probe('tasks/update', { method: 'tasks/update', params: { taskId: 'tsk_abc', inputResponses: { k: { action: 'accept', content: { approve: true } } }, _meta: META(TASKS) }, headers: H('tasks/update', 'tsk_abc'), ref: 'tasks#/$defs/AckResultResponse' })
await probe('tasks/cancel', { method: 'tasks/cancel', params: { taskId: 'tsk_abc', _meta: META(TASKS) }, headers: H('tasks/cancel', 'tsk_abc'), ref: 'tasks#/$defs/AckResultResponse' })
await probe('batch (modern)', { raw: JSON.stringify([{ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: META() } }]), headers: H('tools/list') })
await probe('invalid JSON', { raw: '{', headers: H('tools/list') })
await probe('notification modern', { raw: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1, _meta: META() } }), headers: H('notifications/cancelled') })
await probe('legacy initialize, no headers', { method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } }, ref: 'mcp-2025#/$defs/JSONRPCResultResponse' })
await probe('legacy tools/call without initialize (stateless)', { params: { name: 'x' }, headers: { 'mcp-protocol-version': '2025-11-25' }, ref: 'mcp-2025#/$defs/JSONRPCResultResponse' })
const r = await fetch(url, { method: 'GET', headers: { accept: 'text/event-stream' } }); console.log('\n--- GET', r.status, await r.text())
const d = await fetch(url, { method: 'DELETE' }); console.log('--- DELETE', d.status, await d.text())
await handler.close(); http.close()
