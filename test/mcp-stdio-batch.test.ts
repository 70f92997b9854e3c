// The stdio transport writes every answer made in one turn of the event loop in one write
// (the same bytes, in order), and reads a safe integer id written plainly without rescanning
// the message text, while one that only parses to a safe integer is still refused.
import { PassThrough, Writable } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { ToolManager } from '../src/runtime/manager.js'
import { serveStdio } from '../src/mcp/stdio.js'

const INIT = '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}'
const call = (id: string, args = '{"text":"hi"}'): string => `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"echo","arguments":${args}}}`

function manager(): ToolManager {
  const tm = new ToolManager()
  tm.register({ name: 'echo', inputSchema: { type: 'object' }, run: (input) => input })
  return tm
}

/** A stdout that records each write, and resolves once `count` lines were written. */
function recordingStdout(count: number): { stdout: Writable; writes: string[]; done: Promise<string[]> } {
  const writes: string[] = []
  let resolve: (lines: string[]) => void = () => undefined
  const done = new Promise<string[]>((ok) => (resolve = ok))
  const stdout = new Writable({
    write(chunk: Buffer, _encoding, next) {
      writes.push(chunk.toString('utf8'))
      const lines = writes.join('').split('\n').filter((l) => l !== '')
      if (lines.length >= count) resolve(lines)
      next()
    },
  })
  return { stdout, writes, done }
}

describe('stdio: answers of one turn in one write', () => {
  it('16 calls read in one chunk are answered in one write, each a line, in order', async () => {
    const stdin = new PassThrough()
    const opened = recordingStdout(1)
    const server = await serveStdio(manager(), { stdin, stdout: opened.stdout })
    stdin.write(`${INIT}\n`)
    await opened.done
    const before = opened.writes.length
    const ids = Array.from({ length: 16 }, (_, i) => i + 1)
    const answered = new Promise<string[]>((ok) => {
      const check = setInterval(() => {
        const lines = opened.writes.slice(before).join('').split('\n').filter((l) => l !== '')
        if (lines.length >= 16) {
          clearInterval(check)
          ok(lines)
        }
      }, 5)
    })
    stdin.write(ids.map((id) => `${call(String(id))}\n`).join(''))
    const lines = await answered
    expect(opened.writes.length - before).toBe(1)
    expect(lines.map((l) => (JSON.parse(l) as { id: number }).id)).toEqual(ids)
    for (const line of lines) expect(line).toContain('"isError":false')
    await server.close()
  })

  it('an answer queued before close() is still written', async () => {
    const stdin = new PassThrough()
    const out = recordingStdout(1)
    const server = await serveStdio(manager(), { stdin, stdout: out.stdout })
    // the parse error is answered in the server's data listener; this one closes in the same turn
    const closed = new Promise((ok) => stdin.once('data', () => ok(server.close())))
    stdin.write('not json\n')
    await closed
    expect(out.writes.join('')).toBe('{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"}}\n')
  })
})

describe('stdio: safe integer ids as written', () => {
  it('a plain id is echoed; 1.0000000000000000001 (parses to 1) is -32600, with or without another "id" in the message', async () => {
    const stdin = new PassThrough()
    const out = recordingStdout(5)
    const server = await serveStdio(manager(), { stdin, stdout: out.stdout })
    const lines = [INIT, call('7'), call('1.0000000000000000001'), call('1.0000000000000000001', '{"id":1}'), call('8', '{"id":8}')]
    stdin.write(lines.map((l) => `${l}\n`).join(''))
    const answers = (await out.done).map((l) => JSON.parse(l) as { id?: number; result?: unknown; error?: { code: number } })
    expect(answers.filter((a) => a.error?.code === -32600)).toHaveLength(2)
    expect(answers.find((a) => a.id === 7)?.result).toBeDefined()
    expect(answers.find((a) => a.id === 8)?.result).toBeDefined()
    await server.close()
  })
})
