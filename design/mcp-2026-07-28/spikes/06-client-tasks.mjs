// Spike 6: the SDK v2 client and the tasks extension; trace context in _meta; a transport wrapper as
// the seam toolwire's importMcpTools could use to see a CreateTaskResult the Client itself rejects
import { createServer } from 'node:http'
import { Server, createMcpHandler } from '@modelcontextprotocol/server'
import { toNodeHandler } from '@modelcontextprotocol/node'
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'

const anyParams = { '~standard': { version: 1, vendor: 'toolwire', validate: (value) => ({ value }) } }
const now = new Date().toISOString()
let polls = 0
function factory() {
  const s = new Server({ name: 'tasks', version: '0' }, { capabilities: { tools: {}, extensions: { 'io.modelcontextprotocol/tasks': {} } } })
  s.setRequestHandler('tools/list', async () => ({ tools: [{ name: 'slow', inputSchema: { type: 'object' } }] }))
  s.setRequestHandler('tools/call', async (req, c) => {
    console.log(`   [server] tools/call _meta=${JSON.stringify(c.mcpReq._meta)} caps=${JSON.stringify(c.mcpReq.envelope?.['io.modelcontextprotocol/clientCapabilities'])}`)
    return { resultType: 'task', taskId: 'tsk_1', status: 'working', createdAt: now, lastUpdatedAt: now, ttlMs: 60000, pollIntervalMs: 10 }
  })
  s.setRequestHandler('tasks/get', { params: anyParams }, async (p) => (++polls < 2
    ? { taskId: p.taskId, status: 'working', createdAt: now, lastUpdatedAt: now, ttlMs: 60000, pollIntervalMs: 10 }
    : { taskId: p.taskId, status: 'completed', createdAt: now, lastUpdatedAt: now, ttlMs: 60000, result: { content: [{ type: 'text', text: 'done' }], isError: false } }))
  return s
}
const handler = createMcpHandler(factory)
const http = createServer(toNodeHandler(handler))
await new Promise((r) => http.listen(0, '127.0.0.1', r))
const url = new URL(`http://127.0.0.1:${http.address().port}/mcp`)
const fetchLog = async (u, init) => { const r = await fetch(u, init); console.log(`>>> ${new Headers(init.headers).get('mcp-method')} name=${new Headers(init.headers).get('mcp-name')} ${init.body}\n<<< ${r.status} ${await r.clone().text()}`); return r }

const caps = { extensions: { 'io.modelcontextprotocol/tasks': {} } }
console.log('===== 1. plain Client declaring the tasks extension, callTool')
const c1 = new Client({ name: 'c', version: '1' }, { capabilities: caps, versionNegotiation: { mode: { pin: '2026-07-28' } } })
await c1.connect(new StreamableHTTPClientTransport(url, { fetch: fetchLog }))
try { console.log(await c1.callTool({ name: 'slow', arguments: {}, _meta: { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', tracestate: 'k=v', baggage: 'a=b' } })) }
catch (e) { console.log('callTool ->', e.constructor.name, e.code, e.message, JSON.stringify(e.data)) }

console.log('\n===== 2. tasks/get through client.request with an explicit (Standard) schema')
try { console.log('tasks/get ->', JSON.stringify(await c1.request({ method: 'tasks/get', params: { taskId: 'tsk_1' } }, anyParams))) }
catch (e) { console.log('tasks/get ->', e.constructor.name, e.code, e.message) }
try { console.log('tasks/update ->', JSON.stringify(await c1.request({ method: 'tasks/update', params: { taskId: 'tsk_1', inputResponses: {} } }, anyParams))) }
catch (e) { console.log('tasks/update ->', e.constructor.name, e.code, e.message) }
await c1.close()

console.log('\n===== 3. a transport wrapper that turns a CreateTaskResult into a complete result carrying _meta["toolwire/task"]')
function taskAware(inner) {
  const t = {
    get hasPerRequestStream() { return inner.hasPerRequestStream },
    get sessionId() { return inner.sessionId },
    setProtocolVersion: inner.setProtocolVersion?.bind(inner),
    start: () => inner.start(), close: () => inner.close(), send: (m, o) => inner.send(m, o),
  }
  inner.onclose = () => t.onclose?.(); inner.onerror = (e) => t.onerror?.(e)
  inner.onmessage = (m, x) => {
    if (m.result?.resultType === 'task') {
      const { resultType, _meta, ...task } = m.result
      m = { ...m, result: { resultType: 'complete', content: [], _meta: { ..._meta, 'toolwire/task': task } } }
    }
    t.onmessage?.(m, x)
  }
  return t
}
const c2 = new Client({ name: 'c', version: '1' }, { capabilities: caps, versionNegotiation: { mode: { pin: '2026-07-28' } } })
await c2.connect(taskAware(new StreamableHTTPClientTransport(url)))
const r = await c2.callTool({ name: 'slow', arguments: {} })
console.log('callTool ->', JSON.stringify(r))
let got
do { got = await c2.request({ method: 'tasks/get', params: { taskId: r._meta['toolwire/task'].taskId } }, anyParams) } while (got.status !== 'completed')
console.log('polled to ->', JSON.stringify(got))
await c2.close(); await handler.close(); http.close()
