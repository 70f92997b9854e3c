// Spike 5 (server side): serveStdio(factory) from @modelcontextprotocol/server/stdio with a logging
// transport wrapper; every frame in and out is appended to $SPIKE_LOG (stdout carries only frames)
import { appendFileSync } from 'node:fs'
import { serveStdio, StdioServerTransport } from '@modelcontextprotocol/server/stdio'
import { Server, inputRequired, inputResponse } from '@modelcontextprotocol/server'

const LOG = process.env.SPIKE_LOG
const note = (s) => appendFileSync(LOG, `[pid ${process.pid}] ${s}\n`)
const inner = new StdioServerTransport()
const transport = {
  async start() { inner.onmessage = (m, x) => { note(`IN  ${JSON.stringify(m)}`); transport.onmessage?.(m, x) }; inner.onclose = () => transport.onclose?.(); inner.onerror = (e) => transport.onerror?.(e); return inner.start() },
  async send(m, o) { note(`OUT ${JSON.stringify(m)}`); return inner.send(m, o) },
  async close() { return inner.close() },
}
let runs = 0
serveStdio((ctx) => {
  note(`factory era=${ctx.era}`)
  const s = new Server({ name: 'stdio-spike', version: '0' }, { capabilities: { tools: {} } })
  s.setRequestHandler('tools/list', async () => ({ tools: [{ name: 'echo', inputSchema: { type: 'object' } }, { name: 'delete', inputSchema: { type: 'object' } }] }))
  s.setRequestHandler('tools/call', async (req, c) => {
    if (req.params.name === 'echo') return { content: [{ type: 'text', text: 'echo' }] }
    if (c.mcpReq.requestState() === undefined) return inputRequired({ inputRequests: { confirm: inputRequired.elicit({ message: 'Confirm?', requestedSchema: { type: 'object', properties: { approve: { type: 'boolean' } } } }) }, requestState: 'st' })
    const a = inputResponse(c.mcpReq.inputResponses, 'confirm')
    return a.kind === 'elicit' && a.action === 'accept' ? { content: [{ type: 'text', text: `ran ${++runs}` }] } : { content: [{ type: 'text', text: 'declined' }], isError: true }
  })
  return s
}, { transport, onerror: (e) => note('onerror ' + e.message) })
