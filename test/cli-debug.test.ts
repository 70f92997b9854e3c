// TOOLWIRE_DEBUG=1: `toolwire call` and `toolwire serve` print each tool exception (the
// manager's `error` event: tool, call id, the exception's name, message and stack) to stderr,
// for the operator. Without it they print none of it. Never on stdout, which carries the
// result of `call` and the protocol frames of stdio MCP. Run as the built dist/cli.js.
import { execFile, spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cli, ensureBuilt } from './fixtures/mcp/helpers.js'

const DETAIL = 'db password rejected for tenant 42'
let dir: string
let toolModule: string

beforeAll(() => {
  ensureBuilt()
  dir = mkdtempSync(join(tmpdir(), 'toolwire-cli-debug-'))
  toolModule = join(dir, 'tools.mjs')
  // a plain list of tools: the CLI gives them a manager of its own
  writeFileSync(
    toolModule,
    `class QuotaError extends Error {
  constructor(message) { super(message); this.name = 'QuotaError' }
}
function chargeCard() { throw new QuotaError(${JSON.stringify(DETAIL)}) }
export default [
  { name: 'charge', inputSchema: { type: 'object' }, run: () => chargeCard() },
  { name: 'throws_string', inputSchema: { type: 'object' }, run: () => { throw 'a bare string' } },
]
`,
  )
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

interface Run {
  code: number | null
  out: string
  err: string
}

function run(args: string[], env: Record<string, string | undefined>): Promise<Run> {
  return new Promise((resolve) => {
    const child = execFile(process.execPath, [cli, ...args], { cwd: dir, encoding: 'utf8', timeout: 45_000, env: { ...process.env, ...env } }, (_err, stdout, stderr) =>
      resolve({ code: child.exitCode, out: stdout, err: stderr }),
    )
  })
}

/** Serves the module over stdio, calls `tool` once, and returns what came out once stdin ended. */
function serveOnce(tool: string, env: Record<string, string | undefined>): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [cli, 'serve', toolModule], { cwd: dir, env: { ...process.env, ...env } })
    let out = ''
    let err = ''
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d))
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d))
    child.on('exit', (code) => resolve({ code, out, err }))
    child.stdin.write(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } }) + '\n')
    child.stdin.write(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: tool, arguments: {} } }) + '\n')
    child.stdin.end()
  })
}

describe('TOOLWIRE_DEBUG shows a tool exception to the operator, on stderr only', () => {
  it('toolwire call: tool, call id, name, message and stack on stderr; stdout is the view alone', async () => {
    const [debug, quiet] = await Promise.all([run(['call', 'charge', '--module', toolModule], { TOOLWIRE_DEBUG: '1' }), run(['call', 'charge', '--module', toolModule], { TOOLWIRE_DEBUG: undefined })])
    expect(debug.code).toBe(1)
    const view = JSON.parse(debug.out) as { status: string; callId: string; message: string }
    expect(view).toMatchObject({ status: 'error', message: 'The tool failed.' })
    expect(debug.out).not.toContain(DETAIL)
    expect(debug.err).toContain(`tool "charge" threw (call ${view.callId}): QuotaError: ${DETAIL}`)
    // the stack, with the tool's own frame
    expect(debug.err).toMatch(/\n\s+at chargeCard \(.*tools\.mjs:\d+:\d+\)/)

    expect(quiet.code).toBe(1)
    expect(quiet.out).not.toContain(DETAIL)
    expect(quiet.err).not.toContain(DETAIL)
    expect(quiet.err).not.toContain('QuotaError')
  })

  it('toolwire call: a thrown non-Error is shown by its type and text', async () => {
    const debug = await run(['call', 'throws_string', '--module', toolModule], { TOOLWIRE_DEBUG: '1' })
    expect(debug.code).toBe(1)
    const view = JSON.parse(debug.out) as { callId: string }
    expect(debug.err).toContain(`tool "throws_string" threw (call ${view.callId}): (a string): a bare string`)
  })

  it('toolwire serve (stdio): the exception on stderr, stdout only protocol frames without it', async () => {
    const [debug, quiet] = await Promise.all([serveOnce('charge', { TOOLWIRE_DEBUG: '1' }), serveOnce('charge', { TOOLWIRE_DEBUG: undefined })])
    expect(debug.code).toBe(0)
    const frames = debug.out.trim().split('\n').map((l) => JSON.parse(l) as { id: number; result?: { isError?: boolean; _meta?: Record<string, unknown> } })
    expect(frames.map((f) => f.id)).toEqual([1, 2])
    expect(frames[1]!.result?.isError).toBe(true)
    expect(debug.out).not.toContain(DETAIL)
    const callId = frames[1]!.result?._meta?.['toolwire/callId'] as string
    expect(debug.err).toContain(`tool "charge" threw (call ${callId}): QuotaError: ${DETAIL}`)
    expect(debug.err).toMatch(/\n\s+at chargeCard \(/)

    expect(quiet.code).toBe(0)
    expect(quiet.out).not.toContain(DETAIL)
    expect(quiet.err).not.toContain(DETAIL)
  })

  it('--help names TOOLWIRE_DEBUG', async () => {
    expect((await run(['--help'], {})).out).toContain('TOOLWIRE_DEBUG=1 prints each tool exception')
  })
})
