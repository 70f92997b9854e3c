// Spike 4: one endpoint, both eras, with 2025 SESSIONS kept: isLegacyRequest() routes 2025 traffic
// to a sessionful NodeStreamableHTTPServerTransport (toolwire's own session table), everything else to
// createMcpHandler(factory, { legacy: 'reject' }). The same MRTR-style tool handler serves a legacy
// client through the SDK's legacy shim (real elicitation/create on the session's SSE stream).
import { createServer } from 'node:http'
import { randomUUID } from 'node:crypto'
import { Server, createMcpHandler, inputRequired, inputResponse, isLegacyRequest } from '@modelcontextprotocol/server'
import { toNodeHandler, toWebRequest, NodeStreamableHTTPServerTransport } from '@modelcontextprotocol/node'
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { check } from './validate.mjs'

let runs = 0
function factory(ctx) {
  const s = new Server({ name: 'dual', version: '0' }, { capabilities: { tools: {} } })
  s.setRequestHandler('tools/list', async () => ({ tools: [{ name: 'delete', inputSchema: { type: 'object' } }] }))
  s.setRequestHandler('tools/call', async (req, c) => {
    console.log(`   [server era=${ctx?.era ?? 'legacy-session'}] tools/call inputResponses=${JSON.stringify(c.mcpReq.inputResponses)} state=${c.mcpReq.requestState()}`)
    if (c.mcpReq.requestState() === undefined)
      return inputRequired({ inputRequests: { confirm: inputRequired.elicit({ message: 'Confirm: delete', requestedSchema: { type: 'object', properties: { approve: { type: 'boolean' } }, required: ['approve'] } }) }, requestState: 'opaque-1' })
    const a = inputResponse(c.mcpReq.inputResponses, 'confirm')
    if (a.kind === 'elicit' && a.action === 'accept' && a.content?.approve === true) return { content: [{ type: 'text', text: `ran ${++runs}` }] }
    return { content: [{ type: 'text', text: 'declined' }], isError: true }
  })
  return s
}
const modern = toNodeHandler(createMcpHandler(factory, { legacy: 'reject' }))
const sessions = new Map()
const http = createServer(async (req, res) => {
  const web = await toWebRequest(req)
  if (await isLegacyRequest(web)) {
    const body = req.method === 'POST' ? await web.json() : undefined
    const sid = req.headers['mcp-session-id']
    let t = sid ? sessions.get(sid) : undefined
    if (!t) {
      t = new NodeStreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID(), onsessioninitialized: (id) => sessions.set(id, t) })
      await factory(undefined).connect(t)
    }
    // the Node stream was consumed by toWebRequest: hand the parsed body over
    return t.handleRequest(req, res, body)
  }
  return modern(req, res, await web.json())
})
await new Promise((r) => http.listen(0, '127.0.0.1', r))
const url = new URL(`http://127.0.0.1:${http.address().port}/mcp`)

const log = (tag) => async (u, init) => {
  const res = await fetch(u, init)
  console.log(`>>> [${tag}] ${init.method} ${init.body ?? ''}\n<<< ${res.status} sid=${res.headers.get('mcp-session-id')} ${res.headers.get('content-type')}`)
  // stream the body to the log as it arrives (awaiting it would deadlock SSE)
  if (res.body) {
    const [a, b] = res.body.tee()
    ;(async () => { const d = new TextDecoder(); for await (const ch of b) console.log(`    <<< [${tag}] chunk ${d.decode(ch).replace(/\n/g, ' ').slice(0, 400)}`) })().catch(() => {})
    return new Response(a, { status: res.status, headers: res.headers })
  }
  return res
}
for (const mode of ['legacy', { pin: '2026-07-28' }]) {
  console.log(`\n===== ${JSON.stringify(mode)} client with an elicitation handler`)
  const c = new Client({ name: 'c', version: '1' }, { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode } })
  c.setRequestHandler('elicitation/create', async (r) => { console.log('   [client] elicitation/create ' + JSON.stringify(r.params)); return { action: 'accept', content: { approve: true } } })
  await c.connect(new StreamableHTTPClientTransport(url, { fetch: log(JSON.stringify(mode)) }))
  console.log('era', c.getProtocolEra(), '->', JSON.stringify(await c.callTool({ name: 'delete', arguments: {} })))
  await c.close()
}
console.log('sessions open:', sessions.size, 'runs:', runs)
http.closeAllConnections(); http.close()
process.exit(0)
