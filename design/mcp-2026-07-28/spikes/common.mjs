// shared helpers for the spikes: a low-level Server factory serving one tool, and a logging fetch
import { Server } from '@modelcontextprotocol/server'

export function makeServer(ctx, log = () => {}) {
  const server = new Server(
    { name: 'spike-server', version: '0.0.1' },
    {
      capabilities: { tools: { listChanged: false } },
      cacheHints: { 'tools/list': { ttlMs: 60000, cacheScope: 'public' }, 'server/discover': { ttlMs: 3600000, cacheScope: 'public' } },
    },
  )
  log(`factory era=${ctx?.era}`)
  server.setRequestHandler('tools/list', async (req, c) => ({
    tools: [
      { name: 'echo', description: 'echoes', inputSchema: { type: 'object', properties: { text: { type: 'string' } } } },
      { name: 'fail', inputSchema: { type: 'object' } },
    ],
  }))
  server.setRequestHandler('tools/call', async (req, c) => {
    log(`tools/call name=${req.params.name} envelope=${JSON.stringify(c.mcpReq.envelope)} _meta=${JSON.stringify(c.mcpReq._meta)}`)
    if (req.params.name === 'fail') return { content: [{ type: 'text', text: 'it failed' }], isError: true }
    return { content: [{ type: 'text', text: String(req.params.arguments?.text ?? '') }] }
  })
  return server
}

export function loggingFetch(tag, sink = console.log) {
  return async (url, init) => {
    const hdrs = Object.fromEntries(new Headers(init?.headers ?? {}).entries())
    delete hdrs['accept-encoding']
    sink(`>>> [${tag}] ${init?.method ?? 'GET'} ${url} headers=${JSON.stringify(hdrs)}\n    body=${init?.body ?? ''}`)
    const res = await fetch(url, init)
    const clone = res.clone()
    const text = await clone.text().catch((e) => `<${e}>`)
    const rh = Object.fromEntries(res.headers.entries())
    delete rh.date; delete rh.connection; delete rh['keep-alive']
    sink(`<<< [${tag}] ${res.status} headers=${JSON.stringify(rh)}\n    body=${text.replace(/\n/g, '\\n')}`)
    return res
  }
}
