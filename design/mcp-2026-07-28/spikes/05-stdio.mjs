// Spike 5 (client side): SDK v2 clients pinned / auto / legacy over stdio against 05-stdio-server.mjs
import { readFileSync, writeFileSync } from 'node:fs'
import { Client } from '@modelcontextprotocol/client'
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio'
const LOG = '/tmp/sdkv2/spikes/05-stdio-frames.log'
writeFileSync(LOG, '')
for (const mode of [{ pin: '2026-07-28' }, 'auto', 'legacy']) {
  writeFileSync(LOG, readFileSync(LOG, 'utf8') + `\n===== client mode ${JSON.stringify(mode)}\n`)
  const c = new Client({ name: 'stdio-client', version: '1' }, { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode } })
  c.setRequestHandler('elicitation/create', async () => ({ action: 'accept', content: { approve: true } }))
  await c.connect(new StdioClientTransport({ command: process.execPath, args: ['/tmp/sdkv2/spikes/05-stdio-server.mjs'], env: { SPIKE_LOG: LOG, PATH: process.env.PATH } }))
  console.log(JSON.stringify(mode), 'era', c.getProtocolEra(), 'tools', (await c.listTools()).tools.map((t) => t.name).join(','),
    'echo', JSON.stringify((await c.callTool({ name: 'echo', arguments: {} })).content), 'delete', JSON.stringify((await c.callTool({ name: 'delete', arguments: {} })).content))
  await c.close()
}
console.log(readFileSync(LOG, 'utf8'))
