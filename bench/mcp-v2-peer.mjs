// The peer `bench/mcp-modern.mjs` measures toolwire against: a plain SDK v2 server
// (@modelcontextprotocol/server) serving the same echo tool, as its documentation builds one.
//
//   node bench/mcp-v2-peer.mjs http     prints its port on stdout, then serves POST /mcp
//   node bench/mcp-v2-peer.mjs stdio    serves stdin/stdout with the SDK's `serveStdio`
//
// `createMcpHandler` with a fresh low-level `Server` per request (as the handler requires),
// all of them sharing one JSON Schema validator (the default builds an ajv instance per
// server), behind node:http and a thin adapter: the body read into a web `Request`, the
// `Response` piped back. The handler's own legacy path answers 2025-11-25 requests.
import { createServer } from 'node:http'
import { Readable } from 'node:stream'
import { Server, createMcpHandler } from '@modelcontextprotocol/server'
import { serveStdio } from '@modelcontextprotocol/server/stdio'

const inputSchema = { type: 'object', properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false }
const tools = [{ name: 'echo', description: 'Echoes its text', inputSchema }]
/** One validator for every per-request server (no elicitation here: it is never called). */
const sharedValidator = { getValidator: () => (input) => ({ valid: true, data: input, errorMessage: undefined }) }

function echoServer() {
  const server = new Server({ name: 'sdk-v2-peer', version: '0' }, { capabilities: { tools: {} }, jsonSchemaValidator: sharedValidator })
  server.setRequestHandler('tools/list', async () => ({ tools }))
  server.setRequestHandler('tools/call', async (request) => {
    const text = request.params.arguments?.text
    // the same answer as toolwire's: the input checked, the object as text and as structuredContent
    if (request.params.name !== 'echo' || typeof text !== 'string') return { isError: true, content: [{ type: 'text', text: 'bad input' }] }
    const out = { text }
    return { content: [{ type: 'text', text: JSON.stringify(out) }], structuredContent: out }
  })
  return server
}
/** node:http → web Request → handler → node response. */
async function adapt(handler, req, res) {
  const chunks = []
  for await (const chunk of req) chunks.push(chunk)
  const headers = new Headers()
  for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string') headers.set(name, value)
  const request = new Request(`http://${req.headers.host}${req.url}`, { method: req.method, headers, body: req.method === 'POST' ? Buffer.concat(chunks) : undefined })
  const response = await handler.fetch(request)
  const out = {}
  response.headers.forEach((value, name) => (out[name] = value))
  res.writeHead(response.status, out)
  if (response.body === null) res.end()
  else Readable.fromWeb(response.body).pipe(res)
}

if (process.argv[2] === 'stdio') {
  serveStdio(echoServer)
} else {
  const handler = createMcpHandler(echoServer)
  const http = createServer((req, res) => {
    adapt(handler, req, res).catch((error) => {
      if (!res.headersSent) res.writeHead(500)
      res.end(String(error))
    })
  })
  http.keepAliveTimeout = 60_000
  http.listen(0, '127.0.0.1', () => console.log(http.address().port))
}
process.on('SIGTERM', () => process.exit(0))
