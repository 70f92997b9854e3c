// `toolwire call` exit codes, `toolwire tools`, usage errors, and `serve` shutting down
// cleanly, run as the built dist/cli.js.
import { execFile, spawn } from 'node:child_process'
import { existsSync, rmSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cli, makeToolBox, until, type ToolBox } from './fixtures/mcp/helpers.js'
import { givenSecrets, redactSecrets } from '../src/cli-redact.js'

let box: ToolBox['box']
let toolModule: string
let markers: string

beforeAll(() => {
  ;({ box, markers, toolModule } = makeToolBox())
})
afterAll(() => box?.cleanup())

interface Run {
  code: number | null
  out: string
  err: string
  json: () => Record<string, unknown>
}

/** Runs the CLI (asynchronously, so independent runs overlap). */
function run(args: string[], cwd = box.root): Promise<Run> {
  return new Promise((resolve) => {
    // the kill is a last resort under the test's 60 s: nine of these at once take ~6 s on two busy cores
    const child = execFile(process.execPath, [cli, ...args], { cwd, encoding: 'utf8', timeout: 45_000 }, (_err, stdout, stderr) =>
      resolve({ code: child.exitCode, out: stdout, err: stderr, json: () => JSON.parse(stdout) }),
    )
  })
}

describe('toolwire call', () => {
  it('is an executable with a shebang', () => {
    expect(statSync(cli).mode & 0o111).not.toBe(0)
  })

  it('exits 0 ok, 2 invalid, 3 refused, 1 error, 5 pending, and prints the application view', async () => {
    const [ok, root, invalid, unparsable, escape, unknown, missing, fails, waits] = await Promise.all([
      run(['call', 'list_dir', '{"path":"sub"}']),
      run(['call', 'list_dir', '--root', join(box.root, 'sub')], box.dir),
      run(['call', 'read_file', '{"path":1}']),
      run(['call', 'read_file', '{nope']),
      run(['call', 'read_file', '{"path":"../outside/secret.txt"}']),
      run(['call', 'no_such_tool']),
      run(['call', 'read_file', '{"path":"missing.txt"}']),
      run(['call', 'fails', '--module', toolModule]),
      run(['call', 'waits', '--module', toolModule]),
    ])
    expect(ok.code).toBe(0)
    expect(ok.json()).toMatchObject({ status: 'ok', data: { path: 'sub', entries: [{ name: 'a.txt' }, { name: 'deeper' }] }, callId: expect.any(String) })
    // --root is the sandbox; the JSON defaults to {}
    expect(root.code).toBe(0)
    expect(root.json()).toMatchObject({ data: { path: '.' } })
    expect(invalid.code).toBe(2)
    expect(unparsable.code).toBe(2)
    expect(unparsable.json()).toMatchObject({ status: 'invalid' })
    expect(escape.code).toBe(3)
    expect(escape.json()).toMatchObject({ status: 'refused', code: 'not_allowed' })
    expect(unknown.code).toBe(3)
    expect(missing.code).toBe(1)
    expect(missing.json()).toMatchObject({ status: 'error', kind: 'not_found' })
    expect(fails.code).toBe(1)
    expect(fails.out).not.toContain('secret internal detail')
    expect(waits.code).toBe(5)
    expect(waits.json()).toMatchObject({ status: 'pending', request: { kind: 'input', prompt: 'Which file?' } })
  })

  it('exits 4 for needs_confirmation; --yes approves', async () => {
    const asked = await run(['call', 'delete_file', '{"path":"notes.txt"}'])
    expect(asked.code).toBe(4)
    expect(asked.json()).toMatchObject({ status: 'needs_confirmation', summary: 'Delete notes.txt' })
    expect(existsSync(join(box.root, 'notes.txt'))).toBe(true)
    const done = await run(['call', 'delete_file', '{"path":"notes.txt"}', '--yes'])
    expect(done.code).toBe(0)
    expect(existsSync(join(box.root, 'notes.txt'))).toBe(false)
  })

  it('exits 6 when cancelled (SIGINT), 1 on --timeout', async () => {
    for (const f of ['started', 'aborted']) rmSync(join(markers, f), { force: true })
    const child = spawn(process.execPath, [cli, 'call', 'slow', '--module', toolModule], { cwd: box.dir })
    let out = ''
    child.stdout.on('data', (d) => (out += d))
    const exit = new Promise<number | null>((resolve) => child.on('exit', resolve))
    await until(() => existsSync(join(markers, 'started')))
    child.kill('SIGINT')
    expect(await exit).toBe(6)
    expect(JSON.parse(out)).toMatchObject({ status: 'cancelled', by: 'signal' })
    expect(existsSync(join(markers, 'aborted'))).toBe(true)
    const timed = await run(['call', 'slow', '--module', toolModule, '--timeout', '50'])
    expect(timed.code).toBe(1)
    expect(timed.json()).toMatchObject({ status: 'error', kind: 'timeout' })
  })
})

describe('usage', () => {
  it('usage errors exit 64 with the usage text; --help and --version exit 0', async () => {
    const cases = [[], ['bogus'], ['call'], ['call', 'read_file', '{}', 'extra'], ['tools', '--nope'], ['tools', '--root', '/does/not/exist'], ['serve', '/does/not/exist.mjs'], ['call', 'x', '--timeout', 'soon']]
    const results = await Promise.all(cases.map((args) => run(args)))
    results.forEach((r, i) => {
      expect(r.code, JSON.stringify(cases[i])).toBe(64)
      expect(r.err).toContain('Usage:')
    })
    const [help, version] = await Promise.all([run(['--help']), run(['--version'])])
    expect(help).toMatchObject({ code: 0, out: expect.stringContaining('toolwire serve') })
    expect(version.out.trim()).toMatch(/^\d+\.\d+\.\d+/)
  })
})

describe('secrets in CLI errors (review #21 item 26)', () => {
  it('a --store of an unknown scheme, a malformed --http or a bad TOOLWIRE_STORE never print a password, token or secret', async () => {
    const PW = 'PW-n0t-for-stderr'
    const cases: { args: string[]; env?: Record<string, string> }[] = [
      { args: ['serve', '--store', `postgresql+asyncpg://u:${PW}@db.example:5432/app`] },
      { args: ['serve', '--http', `http://u:${PW}@h:80`] },
      { args: ['serve'], env: { TOOLWIRE_STORE: `mysql://root:${PW}@db/x` } },
      { args: ['serve', '--http', '0', '--store', `redis://:${PW}@cache:6379`], env: { TOOLWIRE_APPROVAL_SECRET: `${PW}-approval-secret` } },
    ]
    const results = await Promise.all(
      cases.map(
        ({ args, env }) =>
          new Promise<{ code: number | null; err: string }>((resolve) => {
            const child = execFile(process.execPath, [cli, ...args], { cwd: box.root, encoding: 'utf8', timeout: 45_000, env: { ...process.env, ...env } }, (_e, _out, stderr) =>
              resolve({ code: child.exitCode, err: stderr }),
            )
          }),
      ),
    )
    results.forEach((r, i) => {
      expect(r.code, JSON.stringify(cases[i])).toBe(64)
      expect(r.err, JSON.stringify(cases[i])).not.toContain(PW)
    })
    expect(results[0]!.err).toContain('--store takes sqlite:<file>')
  }, 60_000)

  it('a usage error about --http, --store or --public-url never quotes the value (not its user, not its password): it says the form expected', async () => {
    const USER = 'ALICEUSER'
    const PW = 's3cr3tPW'
    const cases: { args: string[]; says: string }[] = [
      { args: ['serve', '--http', `${USER}:${PW}@127.0.0.1:0`], says: '--http takes [host:]port' },
      { args: ['serve', '--http', `//${USER}:${PW}@127.0.0.1:0`], says: '--http takes [host:]port' },
      { args: ['serve', '--http', `${USER}@127.0.0.1:0`], says: '--http takes [host:]port' },
      { args: ['serve', '--http', `${PW}`], says: '--http takes [host:]port' },
      { args: ['serve', '--store', `${USER}:${PW}@db/x`], says: '--store takes sqlite:<file>' },
      { args: ['serve', '--store', `${PW}://x`], says: '--store takes sqlite:<file>' },
      { args: ['serve', '--store', `${USER}+${PW}://x`], says: '--store takes sqlite:<file>' },
      { args: ['serve', '--http', '0', '--public-url', `${USER}:${PW}@tools.example`], says: '--public-url takes an http(s) URL' },
      { args: ['serve', '--http', '0', '--public-url', `ftp://${USER}:${PW}@tools.example/`], says: '--public-url takes an http(s) URL' },
    ]
    const results = await Promise.all(
      cases.map(
        ({ args }) =>
          new Promise<{ code: number | null; err: string }>((resolve) => {
            const child = execFile(process.execPath, [cli, ...args], { cwd: box.root, encoding: 'utf8', timeout: 45_000, env: { ...process.env, TOOLWIRE_TOKEN: undefined } }, (_e, _out, stderr) =>
              resolve({ code: child.exitCode, err: stderr }),
            )
          }),
      ),
    )
    results.forEach((r, i) => {
      const label = JSON.stringify(cases[i]!.args)
      expect(r.code, label).toBe(64)
      expect(r.err, label).toContain(`toolwire: ${cases[i]!.says}`)
      expect(r.err, label).not.toContain(USER)
      expect(r.err, label).not.toContain(PW)
    })
  }, 60_000)

  it('a --token or TOOLWIRE_TOKEN serveHttp refuses (empty, with a space), a bad --allow-origin or --public-url: usage errors naming the flag, never the token', async () => {
    const TOKEN = 'tok en-n0t-for-stderr'
    const cases: { args: string[]; env?: Record<string, string>; says: string }[] = [
      { args: ['serve', '--http', '0', '--token', ''], says: '--token must be a non-empty string of visible ASCII characters without spaces' },
      { args: ['serve', '--http', '0', '--token', TOKEN], says: '--token must be a non-empty string' },
      { args: ['serve', '--http', '0'], env: { TOOLWIRE_TOKEN: TOKEN }, says: 'TOOLWIRE_TOKEN must be a non-empty string' },
      // set but empty: refused, never taken as "no token" (it served without authentication)
      { args: ['serve', '--http', '0'], env: { TOOLWIRE_TOKEN: '' }, says: 'TOOLWIRE_TOKEN must be a non-empty string of visible ASCII characters without spaces' },
      { args: ['serve', '--http', '0', '--allow-origin', 'app.example'], says: '--allow-origin takes an origin' },
      { args: ['serve', '--http', '0', '--public-url', 'http://a b/'], says: '--public-url must be an absolute http(s) URL' },
    ]
    const results = await Promise.all(
      cases.map(
        ({ args, env }) =>
          new Promise<{ code: number | null; err: string }>((resolve) => {
            const child = execFile(process.execPath, [cli, ...args], { cwd: box.root, encoding: 'utf8', timeout: 45_000, env: { ...process.env, TOOLWIRE_TOKEN: undefined, ...env } }, (_e, _out, stderr) =>
              resolve({ code: child.exitCode, err: stderr }),
            )
          }),
      ),
    )
    results.forEach((r, i) => {
      expect(r.code, JSON.stringify(cases[i]!.args)).toBe(64)
      expect(r.err).toContain(`toolwire: ${cases[i]!.says}`)
      expect(r.err).not.toContain('n0t-for-stderr')
      expect(r.err).not.toContain('cannot listen')
    })
  }, 60_000)

  it('redactSecrets: the token, each listed secret, an address password (URL or password=), any URL user part', () => {
    const secrets = givenSecrets(['serve', '--token=tok-123456', '--store', 'host=db password=kw-secret'], {
      TOOLWIRE_APPROVAL_SECRET: 'new-approval-secret, old-approval-secret',
      TOOLWIRE_STORE_KEY: 'k'.repeat(64),
    })
    const text = `tok-123456 kw-secret old-approval-secret ${'k'.repeat(64)} postgres://ann:p%40ss@db/x https://bob@h/`
    expect(redactSecrets(text, secrets)).toBe('*** *** *** *** postgres://***@db/x https://***@h/')
  })
})

describe('toolwire tools', () => {
  it('prints a table, or the manifest with --json (also for a module)', async () => {
    const [r, json, mod] = await Promise.all([run(['tools']), run(['tools', '--json']), run(['tools', toolModule, '--json'])])
    expect(r.code).toBe(0)
    const lines = r.out.trim().split('\n')
    expect(lines[0]).toMatch(/^NAME\s+HINTS\s+DESCRIPTION$/)
    expect(lines.map((l) => l.split(/\s+/)[0])).toEqual(['NAME', 'read_file', 'list_dir', 'search_text', 'edit_settings', 'delete_file'])
    expect(lines.find((l) => l.startsWith('delete_file'))).toContain('destructive,confirm')
    const manifest = json.json() as unknown as { name: string; hints: object; needsConfirmation?: true }[]
    expect(manifest.find((t) => t.name === 'read_file')).toMatchObject({ hints: { readOnly: true, untrustedContent: true } })
    expect(manifest.find((t) => t.name === 'delete_file')).toMatchObject({ needsConfirmation: true })
    expect((mod.json() as unknown as { name: string }[]).map((t) => t.name)).toEqual(['slow', 'progress', 'fails', 'waits', 'echo'])
  })
})

describe('toolwire serve', () => {
  it('exits 0 when stdin closes, after answering what it received', async () => {
    const child = spawn(process.execPath, [cli, 'serve', toolModule], { cwd: box.dir })
    let out = ''
    child.stdout.on('data', (d) => (out += d))
    const exit = new Promise<number | null>((resolve) => child.on('exit', resolve))
    child.stdin.write(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } }) + '\n')
    child.stdin.write(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'progress', arguments: {} } }) + '\n')
    child.stdin.end()
    expect(await exit).toBe(0)
    expect(out.trim().split('\n').map((l) => JSON.parse(l).id)).toEqual([1, 2])
  })

  it('--no-link-in-text: the approval link is only in _meta, not in the text the model reads; without --http it is a usage error', async () => {
    const child = spawn(process.execPath, [cli, 'serve', '--http', '127.0.0.1:0', '--no-link-in-text'], { cwd: box.root, stdio: ['ignore', 'ignore', 'pipe'] })
    try {
      const url = await new Promise<string>((resolve, reject) => {
        createInterface({ input: child.stderr! }).on('line', (line) => {
          const m = /at (http:\/\/\S+)$/.exec(line)
          if (m !== null) resolve(m[1]!)
        })
        child.once('exit', (code) => reject(new Error(`exited ${code}`)))
      })
      const ask = async (): Promise<CallToolResult> => {
        const client = new Client({ name: 'no-elicitation', version: '1.0.0' })
        await client.connect(new StreamableHTTPClientTransport(new URL(url)))
        try {
          return (await client.callTool({ name: 'delete_file', arguments: { path: 'report.pdf' } })) as CallToolResult
        } finally {
          await client.close()
        }
      }
      const result = await ask()
      const link = (result._meta?.['toolwire/confirmation'] as { url?: string } | undefined)?.url
      expect(link).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/confirm\//)
      const text = JSON.stringify(result.content)
      expect(text).not.toContain(link!)
      expect(text).not.toContain('/confirm/')
      expect(text).toContain('The application has a link')
      expect(existsSync(join(box.root, 'report.pdf'))).toBe(true)
    } finally {
      child.kill('SIGTERM')
    }
    const usage = await run(['serve', '--no-link-in-text'])
    expect(usage.code).toBe(64)
    expect(usage.err).toContain('--no-link-in-text go with --http')
    expect((await run(['--help'])).out).toContain('--no-link-in-text')
  })
})
