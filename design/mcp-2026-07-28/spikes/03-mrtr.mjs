// Spike 3: MRTR. A tool answers InputRequiredResult (form or URL elicitation) with a sealed
// requestState (toolwire-style HMAC via ServerOptions.requestState.verify); clients: auto-fulfil via
// an elicitation/create handler, manual mode (allowInputRequired), URL-only, no elicitation;
// tampered/replayed state. Frames logged and validated against schema-2026-07-28.json.
import { createServer } from 'node:http'
import { createHmac, timingSafeEqual } from 'node:crypto'
import { Server, createMcpHandler, inputRequired, inputResponse } from '@modelcontextprotocol/server'
import { toNodeHandler } from '@modelcontextprotocol/node'
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { check } from './validate.mjs'

const SECRET = 'x'.repeat(32)
const seal = (p) => { const b = Buffer.from(JSON.stringify(p)).toString('base64url'); return `s1.${b}.${createHmac('sha256', SECRET).update(b).digest('base64url')}` }
const open = (s) => {
  const [v, b, mac] = s.split('.')
  const want = createHmac('sha256', SECRET).update(b ?? '').digest()
  const got = Buffer.from(mac ?? '', 'base64url')
  if (v !== 's1' || got.length !== want.length || !timingSafeEqual(got, want)) throw new Error('mac')
  const p = JSON.parse(Buffer.from(b, 'base64url').toString())
  if (p.exp < Date.now()) throw new Error('expired')
  return p
}
let runs = 0
function factory() {
  const s = new Server({ name: 'mrtr', version: '0' }, {
    capabilities: { tools: {} },
    requestState: { verify: (state, ctx) => { const p = open(state); if (p.tool !== ctx.mcpReq.method) {} return p } },
  })
  s.onerror = (e) => console.log('   [server onerror] ' + e.message)
  s.setRequestHandler('tools/list', async () => ({ tools: [{ name: 'delete', inputSchema: { type: 'object' } }] }))
  s.setRequestHandler('tools/call', async (req, c) => {
    const state = c.mcpReq.requestState()
    console.log(`   [server] tools/call inputResponses=${JSON.stringify(c.mcpReq.inputResponses)} state=${JSON.stringify(state)}`)
    if (state === undefined) {
      const caps = c.mcpReq.envelope?.['io.modelcontextprotocol/clientCapabilities']?.elicitation ?? (c.mcpReq.envelope ? undefined : s.getClientCapabilities()?.elicitation)
      const urlOnly = caps && caps.url && !caps.form
      const requestState = seal({ tool: 'tools/call', name: req.params.name, callId: 'c-1', exp: Date.now() + 60000 })
      return inputRequired({
        inputRequests: {
          confirm: urlOnly
            ? inputRequired.elicitUrl({ message: 'Approve: delete notes.txt', url: 'https://example.test/confirm/p1.abc' })
            : inputRequired.elicit({ message: 'Confirm: delete notes.txt', requestedSchema: { type: 'object', properties: { approve: { type: 'boolean', title: 'Approve' } }, required: ['approve'] } }),
        },
        requestState,
      })
    }
    const answer = inputResponse(c.mcpReq.inputResponses, 'confirm')
    if (answer.kind === 'elicit' && answer.action === 'accept' && (answer.content?.approve === true || answer.content === undefined)) { runs++; return { content: [{ type: 'text', text: `deleted (runs=${runs})` }] } }
    return { content: [{ type: 'text', text: 'declined' }], isError: true }
  })
  return s
}
const handler = createMcpHandler(factory, { onerror: (e) => console.log('   [handler onerror] ' + e.message) })
const http = createServer(toNodeHandler(handler))
await new Promise((r) => http.listen(0, '127.0.0.1', r))
const url = new URL(`http://127.0.0.1:${http.address().port}/mcp`)

const frames = []
const logFetch = (tag) => async (u, init) => {
  const res = await fetch(u, init)
  const text = await res.clone().text()
  console.log(`>>> [${tag}] ${init.headers?.['mcp-method'] ?? new Headers(init.headers).get('mcp-method')} ${init.body}\n<<< ${res.status} ${text.replace(/\n/g, ' ')}`)
  frames.push({ req: JSON.parse(init.body), status: res.status, body: text })
  return res
}
const validateLast = () => {
  for (const f of frames.splice(0)) {
    if (f.req.method === 'tools/call') check(`request id=${f.req.id}`, f.req, 'mcp-2026#/$defs/CallToolRequest')
    const text = f.body.startsWith('event:') ? f.body.split('data: ').pop().trim() : f.body
    if (!text) continue
    const body = JSON.parse(text)
    if (f.req.method === 'tools/call') check(`response id=${f.req.id} (${f.status})`, body, body.error ? 'mcp-2026#/$defs/JSONRPCErrorResponse' : 'mcp-2026#/$defs/CallToolResultResponse')
  }
}

async function client(tag, caps, opts = {}) {
  const c = new Client({ name: tag, version: '1' }, { capabilities: caps, versionNegotiation: { mode: { pin: '2026-07-28' } }, ...opts })
  await c.connect(new StreamableHTTPClientTransport(url, { fetch: logFetch(tag) }))
  frames.length = 0
  return c
}

console.log('\n===== A: auto-fulfil through an elicitation/create handler (form)')
const a = await client('A', { elicitation: { form: {} } })
a.setRequestHandler('elicitation/create', async (req) => { console.log('   [client A] elicitation handler got ' + JSON.stringify(req.params)); return { action: 'accept', content: { approve: true } } })
console.log('A result:', JSON.stringify(await a.callTool({ name: 'delete', arguments: { path: 'notes.txt' } })))
validateLast()

console.log('\n===== B: manual mode (autoFulfill false + allowInputRequired), then retry by hand; replay; tamper; decline')
const b = await client('B', { elicitation: { form: {} } }, { inputRequired: { autoFulfill: false } })
const ir = await b.callTool({ name: 'delete', arguments: {} }, { allowInputRequired: true })
console.log('B interim:', JSON.stringify(ir))
const retry = (extra) => b.callTool({ name: 'delete', arguments: {}, ...extra }).then((r) => JSON.stringify(r), (e) => `ERROR ${e.code} ${e.message}`)
console.log('B retry accept:', await retry({ inputResponses: { confirm: { action: 'accept', content: { approve: true } } }, requestState: ir.requestState }))
console.log('B replay same retry:', await retry({ inputResponses: { confirm: { action: 'accept', content: { approve: true } } }, requestState: ir.requestState }), '(SDK does not stop replay: toolwire must, via the store)')
console.log('B tampered state:', await retry({ inputResponses: { confirm: { action: 'accept', content: { approve: true } } }, requestState: ir.requestState.slice(0, -2) + 'AA' }))
console.log('B decline:', await retry({ inputResponses: { confirm: { action: 'decline' } }, requestState: ir.requestState }))
validateLast()
try { await b.callTool({ name: 'delete', arguments: {} }) } catch (e) { console.log('B without allowInputRequired ->', e.constructor.name, e.code, e.message.slice(0, 200)) }
frames.length = 0

console.log('\n===== C: URL-only client')
const c = await client('C', { elicitation: { url: {} } })
c.setRequestHandler('elicitation/create', async (req) => { console.log('   [client C] got ' + JSON.stringify(req.params)); return { action: 'accept' } })
console.log('C result:', JSON.stringify(await c.callTool({ name: 'delete', arguments: {} })))
validateLast()

console.log('\n===== D: client without elicitation capability (server returns elicitation anyway -> SDK seam)')
const d = await client('D', {})
console.log('D result:', await d.callTool({ name: 'delete', arguments: {} }).then((r) => JSON.stringify(r), (e) => `ERROR ${e.code} ${e.message}`))
validateLast()
console.log('runs =', runs)
await handler.close(); http.close()
