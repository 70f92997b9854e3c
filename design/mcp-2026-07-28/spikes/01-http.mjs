// Spike 1 (HTTP): SDK v2 createMcpHandler + toNodeHandler serving one tool; SDK v2 clients pinned / auto / legacy; wire log
import { createServer } from 'node:http'
import { createMcpHandler } from '@modelcontextprotocol/server'
import { toNodeHandler } from '@modelcontextprotocol/node'
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { makeServer, loggingFetch } from './common.mjs'

const handler = createMcpHandler((ctx) => makeServer(ctx, (m) => console.log('   [server] ' + m)), { onerror: (e) => console.log('   [server onerror] ' + e.message) })
const http = createServer(toNodeHandler(handler))
await new Promise((r) => http.listen(0, '127.0.0.1', r))
const url = new URL(`http://127.0.0.1:${http.address().port}/mcp`)

for (const mode of [{ pin: '2026-07-28' }, 'auto', 'legacy']) {
  const tag = typeof mode === 'string' ? mode : 'pin'
  console.log(`\n===== client mode ${JSON.stringify(mode)}`)
  const client = new Client({ name: 'spike-client', version: '1.0.0' }, { versionNegotiation: { mode } })
  await client.connect(new StreamableHTTPClientTransport(url, { fetch: loggingFetch(tag) }))
  console.log(`era=${client.getProtocolEra()} version=${client.getNegotiatedProtocolVersion()}`)
  const list = await client.listTools()
  console.log('listTools ->', JSON.stringify(list))
  const r1 = await client.callTool({ name: 'echo', arguments: { text: 'hi' }, _meta: { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' } })
  console.log('callTool echo ->', JSON.stringify(r1))
  const r2 = await client.callTool({ name: 'fail', arguments: {} })
  console.log('callTool fail ->', JSON.stringify(r2))
  await client.close()
}
await handler.close()
http.close()
