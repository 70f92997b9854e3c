// Spike 7: remaining seams: fallbackRequestHandler for tools/call (no SDK normalisation of a task
// result), notifications/message via ctx.mcpReq.notify without the logging capability, progress on
// the request's own stream, cancellation by closing the response stream, server/discover override
import { createServer } from 'node:http'
import { Server, createMcpHandler } from '@modelcontextprotocol/server'
import { toNodeHandler } from '@modelcontextprotocol/node'

const now = '2026-07-28T00:00:00Z'
let aborted = 'not yet'
function factory() {
  const s = new Server({ name: 'seams', version: '0' }, { capabilities: { tools: {} }, instructions: 'be nice' })
  s.setRequestHandler('tools/list', async () => ({ tools: [] }))
  s.fallbackRequestHandler = async (req, c) => {
    if (req.method !== 'tools/call') throw Object.assign(new Error('Method not found'), { code: -32601 })
    const name = req.params.name
    if (name === 'task') return { resultType: 'task', taskId: 't', status: 'working', createdAt: now, lastUpdatedAt: now, ttlMs: 1000 }
    if (name === 'log') {
      const lvl = c.mcpReq.envelope?.['io.modelcontextprotocol/logLevel']
      if (lvl !== undefined) await c.mcpReq.notify({ method: 'notifications/message', params: { level: 'info', data: 'hello' } }).catch((e) => console.log('   notify(message) threw: ' + e.message))
      const tok = c.mcpReq._meta?.progressToken
      if (tok !== undefined) await c.mcpReq.notify({ method: 'notifications/progress', params: { progressToken: tok, progress: 0.5, total: 1 } })
      return { content: [{ type: 'text', text: 'logged' }] }
    }
    if (name === 'slow') {
      c.mcpReq.signal.addEventListener('abort', () => { aborted = 'aborted via ctx.mcpReq.signal' })
      await c.mcpReq.notify({ method: 'notifications/progress', params: { progressToken: c.mcpReq._meta?.progressToken ?? 0, progress: 0 } })
      await new Promise((r) => setTimeout(r, 400))
      return { content: [{ type: 'text', text: 'slow done' }] }
    }
    return { content: [{ type: 'text', text: 'fallback ok' }] }
  }
  return s
}
const handler = createMcpHandler(factory, { onerror: (e) => console.log('   [onerror] ' + e.message) })
const http = createServer(toNodeHandler(handler))
await new Promise((r) => http.listen(0, '127.0.0.1', r))
const url = `http://127.0.0.1:${http.address().port}/mcp`
const META = (extra = {}) => ({ 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {}, ...extra })
const post = async (name, meta, signal) => {
  const res = await fetch(url, { method: 'POST', signal, headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': name ? 'tools/call' : 'server/discover', ...(name ? { 'mcp-name': name } : {}) },
    body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: name ? 'tools/call' : 'server/discover', params: name ? { name, _meta: meta } : { _meta: meta } }) })
  return `${res.status} ${res.headers.get('content-type')} ${(await res.text()).replace(/\n/g, ' ')}`
}
console.log('discover (instructions) ->', await post(undefined, META()))
console.log('fallback tools/call task ->', await post('task', META()))
console.log('fallback tools/call plain ->', await post('x', META()))
console.log('log, no logLevel ->', await post('log', META()))
console.log('log, logLevel + progressToken ->', await post('log', META({ 'io.modelcontextprotocol/logLevel': 'info', progressToken: 'p' })))
const ac = new AbortController()
const p = post('slow', META({ progressToken: 'q' }), ac.signal).catch((e) => 'client aborted: ' + e.name)
setTimeout(() => ac.abort(), 100)
console.log('slow, stream closed after 100 ms ->', await p)
await new Promise((r) => setTimeout(r, 500))
console.log('server side:', aborted)
await handler.close(); http.close()
