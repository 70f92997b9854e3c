// JSON-RPC ids and progress tokens that are integers beyond 2^53 (`1e21`, valid per the MCP
// schema, which the SDK's own schema refuses): accepted over stdio and HTTP, and echoed as
// sent (review #21 item 12).
import { PassThrough } from 'node:stream'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ToolManager } from '../src/runtime/manager.js'
import type { ToolContext } from '../src/runtime/manager.js'
import { serveStdio } from '../src/mcp/stdio.js'
import { serveHttp, type HttpMcpServer } from '../src/mcp/http.js'

const INIT_PARAMS = { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } }
const ACCEPT = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }

function manager(): ToolManager {
  const tm = new ToolManager()
  tm.register({ name: 'echo', inputSchema: { type: 'object' }, run: (input) => input })
  tm.register({
    name: 'steps',
    inputSchema: { type: 'object' },
    run: (_input: unknown, ctx: ToolContext) => {
      ctx.reportProgress(1, 2)
      return 'done'
    },
  })
  return tm
}

/** Serves over in-memory stdio; the raw output lines once `count` were written. */
async function stdioLines(lines: readonly string[], count: number): Promise<string[]> {
  const stdin = new PassThrough()
  const stdout = new PassThrough()
  const server = await serveStdio(manager(), { stdin, stdout })
  const out: string[] = []
  const done = new Promise<void>((resolve) => {
    let buffered = ''
    stdout.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('utf8')
      let nl: number
      while ((nl = buffered.indexOf('\n')) !== -1) {
        out.push(buffered.slice(0, nl))
        buffered = buffered.slice(nl + 1)
      }
      if (out.length >= count) resolve()
    })
  })
  for (const line of lines) stdin.write(`${line}\n`)
  await done
  await server.close()
  return out
}

const initLine = (id: string): string => `{"jsonrpc":"2.0","id":${id},"method":"initialize","params":${JSON.stringify(INIT_PARAMS)}}`
const callLine = (id: string, name = 'echo', meta = ''): string => `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"${name}","arguments":{"a":1}${meta}}}`

describe('stdio: integer ids beyond 2^53', () => {
  it('1e21, 12345678901234567890 and -1E+300 are accepted and echoed exactly as sent; 1.5 is still -32600', async () => {
    const lines = await stdioLines([initLine('1e21'), callLine('12345678901234567890'), callLine('-1E+300'), callLine('1.5')], 4)
    const byStart = (id: string): string | undefined => lines.find((l) => l.includes(`"id":${id},`) || l.includes(`"id":${id}}`))
    expect(byStart('1e21')).toContain('"result"')
    expect(byStart('12345678901234567890')).toContain('"result"')
    expect(byStart('-1E+300')).toContain('"result"')
    expect(JSON.parse(lines.find((l) => l.includes('-32600'))!)).toMatchObject({ error: { code: -32600 } })
    expect(lines.join('\n')).not.toContain('toolwire-id')
  })

  it('a number not integer-valued as written (1e-400, which parses to 0; 25e-1) is -32600; 1e400 (parses to Infinity) is served and echoed as sent', async () => {
    const lines = await stdioLines([initLine('1'), callLine('1e-400'), callLine('25e-1'), callLine('1e400'), callLine('2.50e1')], 5)
    expect(lines.filter((l) => l.includes('-32600'))).toHaveLength(2)
    expect(lines.some((l) => l.includes('"id":0'))).toBe(false)
    expect(lines.find((l) => l.includes('"id":1e400'))).toContain('"result"')
    expect(lines.find((l) => l.includes('"id":25'))).toContain('"result"')
  })

  it('a progress token of 1e21 is accepted, and the progress notifications carry it as sent', async () => {
    const lines = await stdioLines([initLine('1'), callLine('2', 'steps', ',"_meta":{"progressToken":1e21}')], 3)
    expect(lines.find((l) => l.includes('notifications/progress'))).toContain('"progressToken":1e21')
    expect(JSON.parse(lines.find((l) => l.includes('"id":2'))!)).toMatchObject({ result: { isError: false } })
  })
})

/** The JSON-RPC answer of a POST: the last `data:` line of an SSE answer, or the JSON body; raw text. */
async function postRaw(url: string, body: string, headers: Record<string, string> = {}): Promise<{ status: number; text: string; headers: Headers }> {
  const res = await fetch(url, { method: 'POST', headers: { ...ACCEPT, ...headers }, body })
  const text = await res.text()
  const data = res.headers.get('content-type')?.startsWith('text/event-stream') === true ? text.split('\n').filter((l) => l.startsWith('data: ') && l.length > 8).map((l) => l.slice(6)) : [text]
  return { status: res.status, text: data.join('\n'), headers: res.headers }
}

describe('HTTP: integer ids beyond 2^53', () => {
  let served: HttpMcpServer
  let stateless: HttpMcpServer
  beforeAll(async () => {
    served = await serveHttp(manager())
    stateless = await serveHttp(manager(), { stateless: true })
  })
  afterAll(async () => {
    await served.close()
    await stateless.close()
  })

  it('with sessions: initialize and tools/call with id 1e21 are answered with id 1e21', async () => {
    const init = await postRaw(served.url, initLine('1e21'))
    expect(init.status).toBe(200)
    expect(init.text).toContain('"id":1e21')
    const headers = { 'mcp-session-id': init.headers.get('mcp-session-id')!, 'mcp-protocol-version': '2025-11-25' }
    const called = await postRaw(served.url, callLine('12345678901234567890'), headers)
    expect(called.text).toContain('"id":12345678901234567890')
    expect(called.text).toContain('"result"')
    const unknown = await postRaw(served.url, '{"jsonrpc":"2.0","id":1e21,"method":"resources/list"}', headers)
    expect(unknown.status).toBe(404)
    expect(unknown.text).toContain('"id":1e21')
  })

  it('stateless: id 1e-400 (parses to 0) is 400 -32600, not answered as id 0; id 1e400 is served and echoed as sent', async () => {
    const tiny = await postRaw(stateless.url, callLine('1e-400'))
    expect(tiny.status).toBe(400)
    expect(JSON.parse(tiny.text)).toEqual({ jsonrpc: '2.0', error: { code: -32600, message: 'Invalid Request: not a JSON-RPC 2.0 message' } })
    const huge = await postRaw(stateless.url, callLine('1e400'))
    expect(huge.status).toBe(200)
    expect(huge.text).toContain('"id":1e400')
    expect(huge.text).toContain('"result"')
  })

  it('stateless: a call with id 1e21 (answered without a progress token) echoes it', async () => {
    const called = await postRaw(stateless.url, callLine('1e21'))
    expect(called.status).toBe(200)
    expect(called.text).toContain('"id":1e21')
    expect(called.text).toContain('"result"')
  })
})
