// Spike 8 (server): SDK v2 createMcpHandler + toNodeHandler, a fresh low-level Server per request
// (as createMcpHandler requires), serving one trivial tool. Prints its port on stdout.
import { createServer } from 'node:http'
import { Server, McpServer, createMcpHandler, fromJsonSchema } from '@modelcontextprotocol/server'
import { toNodeHandler } from '@modelcontextprotocol/node'
const kind = process.argv[2] ?? 'server'
// a validator shared by every per-request Server (toolwire 1.x does the same: the default builds ajv per instance)
const shared = { getValidator: () => (input) => ({ valid: true, data: input, errorMessage: undefined }) }
const tools = [{ name: 'echo', description: 'Echoes its text', inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false } }]
const factory = kind === 'mcpserver'
  ? () => { const s = new McpServer({ name: 'bench', version: '0' }); s.registerTool('echo', { description: 'Echoes its text', inputSchema: fromJsonSchema({ type: 'object', properties: { text: { type: 'string' } }, required: ['text'] }) }, async (a) => ({ content: [{ type: 'text', text: a.text }] })); return s }
  : () => {
      const s = new Server({ name: 'bench', version: '0' }, { capabilities: { tools: {} }, ...(kind === 'server-sharedvalidator' ? { jsonSchemaValidator: shared } : {}) })
      s.setRequestHandler('tools/list', async () => ({ tools }))
      s.setRequestHandler('tools/call', async (req) => ({ content: [{ type: 'text', text: String(req.params.arguments?.text) }] }))
      return s
    }
const handler = createMcpHandler(factory)

const http = createServer(toNodeHandler(handler))
http.keepAliveTimeout = 60000
http.listen(0, '127.0.0.1', () => console.log(http.address().port))
process.on('SIGTERM', () => process.exit(0)); process.on('SIGINT', () => process.exit(0))
