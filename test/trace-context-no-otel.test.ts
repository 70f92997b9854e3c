// Trace context without the optional `@opentelemetry/api` peer (issue #22 Deliver 4): the built
// `toolwire` and `toolwire/mcp` load in a process where it cannot be resolved, and the trace
// context still travels, unchanged, from a tools/call `_meta` to the body's `ctx.traceContext`
// and on through importMcpTools to a second server. Uses dist/ (built by `ensureBuilt`).
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { ensureBuilt, repo } from './fixtures/mcp/helpers.js'

const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'

let dir: string
beforeAll(() => {
  ensureBuilt()
  dir = mkdtempSync(join(tmpdir(), 'toolwire-no-otel-'))
}, 180_000)
afterAll(() => rmSync(dir, { recursive: true, force: true }))

it('toolwire loads without @opentelemetry/api, and a call forwards the trace context it was sent', () => {
  const resolve = createRequire(join(repo, 'package.json')).resolve
  const url = (p: string): string => pathToFileURL(p).href
  // blocks @opentelemetry/* for require (what telemetry.ts uses) and for import
  writeFileSync(
    join(dir, 'block.cjs'),
    `const Module = require('node:module')
const original = Module._resolveFilename
Module._resolveFilename = function (request, ...rest) {
  if (request.startsWith('@opentelemetry/')) throw Object.assign(new Error('blocked: ' + request), { code: 'MODULE_NOT_FOUND' })
  return original.call(this, request, ...rest)
}
Module.register('data:text/javascript,' + encodeURIComponent('export async function resolve(s, c, next) { if (s.startsWith("@opentelemetry/")) throw Object.assign(new Error("blocked: " + s), { code: "ERR_MODULE_NOT_FOUND" }); return next(s, c) }'))
`,
  )
  writeFileSync(
    join(dir, 'run.mjs'),
    `import { createRequire } from 'node:module'
import { ToolManager } from ${JSON.stringify(url(join(repo, 'dist', 'index.js')))}
import { createMcpServer, importMcpTools } from ${JSON.stringify(url(join(repo, 'dist', 'mcp.js')))}
import { Client } from ${JSON.stringify(url(resolve('@modelcontextprotocol/sdk/client/index.js')))}
import { InMemoryTransport } from ${JSON.stringify(url(resolve('@modelcontextprotocol/sdk/inMemory.js')))}
let otel = 'loaded'
try { createRequire(import.meta.url)('@opentelemetry/api') } catch { otel = 'absent' }
try { await import('@opentelemetry/api'); otel += ',imported' } catch { otel += ',not imported' }
const remote = new ToolManager()
remote.register({ name: 'seen', inputSchema: { type: 'object' }, run: (_i, ctx) => ({ traceContext: ctx.traceContext ?? null }) })
const [a, b] = InMemoryTransport.createLinkedPair()
await createMcpServer(remote).connect(b)
const client = new Client({ name: 'no-otel', version: '1.0.0' })
await client.connect(a)
const direct = await client.callTool({ name: 'seen', arguments: {}, _meta: { traceparent: ${JSON.stringify(TRACEPARENT)}, tracestate: 'rojo=1', baggage: 'k=v' } })
const invalid = await client.callTool({ name: 'seen', arguments: {}, _meta: { traceparent: 'ff-' + ${JSON.stringify(TRACEPARENT)}.slice(3) } })
const local = new ToolManager()
await importMcpTools(client, local, { prefix: 'remote__' })
const forwarded = await local.call('remote__seen', {}, { traceContext: { traceparent: ${JSON.stringify(TRACEPARENT)} } })
await client.close()
console.log(JSON.stringify({ otel, direct: direct.structuredContent, invalid: invalid.structuredContent, forwarded: forwarded.data }))
`,
  )
  const out = execFileSync(process.execPath, ['--require', join(dir, 'block.cjs'), join(dir, 'run.mjs')], { encoding: 'utf8', cwd: dir })
  expect(JSON.parse(out)).toEqual({
    otel: 'absent,not imported',
    direct: { traceContext: { traceparent: TRACEPARENT, tracestate: 'rojo=1', baggage: 'k=v' } },
    invalid: { traceContext: null },
    forwarded: { traceContext: { traceparent: TRACEPARENT } },
  })
})
