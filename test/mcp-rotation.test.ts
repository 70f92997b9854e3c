// Rotating the approval secret (and the store key) of `serveHttp` and `toolwire serve`:
// the confirmation page's links and CSRF tokens take the same one-or-list shape as the
// manager's `approvalSecret`, newest first (the first seals, any opens).
//
// 1. In process, three servers on one store (SQLite; PostgreSQL too when TOOLWIRE_PG_URL is
//    set): "old" configured [A], "rotated" [B, A], "dropped" [B]. A link made by old opens and
//    approves on rotated; dropped refuses it exactly as it refuses a forged link.
// 2. `toolwire serve` (the built dist/cli.js): TOOLWIRE_APPROVAL_SECRET and TOOLWIRE_STORE_KEY
//    as comma-separated lists; a bad list is a usage error whose text never shows a secret; two
//    processes on one SQLite file, [A] and [B, A], share a link one way and refuse it the other.
import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ToolManager } from '../src/runtime/manager.js'
import type { ApprovalSecrets } from '../src/runtime/store/approval.js'
import type { StoreKeys } from '../src/runtime/store/codec.js'
import { MemoryStore, type ToolStore } from '../src/runtime/store/index.js'
import { serveHttp, type HttpMcpServer } from '../src/mcp/http.js'
import { cli, ensureBuilt } from './fixtures/mcp/helpers.js'
import { storeKinds, tempDir, type Clock } from './stores.js'

const A = 'rotation-secret-A-hunter2-0123456789'
const B = 'rotation-secret-B-swordfish-0123456789'
const KEY_A = 'a1'.repeat(32)
const KEY_B = 'b2'.repeat(32)
const CARD = '4111111111111111'

/** The store's clock is the wall clock: link expiries and parked expiries are real ones (10 minutes). */
const clock: Clock = {
  get t() {
    return Date.now()
  },
}

const kinds = (await storeKinds('mcp_rotation')).filter((k) => k.durable)

function manager(store: ToolStore, approvalSecret: ApprovalSecrets, storeKey: StoreKeys, runs: string[], name: string): ToolManager {
  const tm = new ToolManager({ store, approvalSecret, storeKey })
  tm.register({
    name: 'pay',
    description: 'Pays an invoice with a card',
    inputSchema: { type: 'object', properties: { invoice: { type: 'string' }, card: { type: 'string' } }, required: ['invoice', 'card'] },
    sensitive: ['card'],
    needsConfirmation: true,
    summarize: ({ invoice }: { invoice: string; card: string }) => `Pay invoice ${invoice}`,
    run: ({ invoice, card }: { invoice: string; card: string }) => {
      // the whole card: on another instance the sealed input had to open with a listed store key
      runs.push(`${invoice}@${name}:${card}`)
      return { paid: invoice }
    },
  })
  return tm
}

/** A call that needs confirmation, asked by a client that cannot ask its user: its approval link. */
async function linkFor(url: string, invoice: string): Promise<string> {
  const client = new Client({ name: 'no-elicitation', version: '1.0.0' })
  await client.connect(new StreamableHTTPClientTransport(new URL(url)))
  try {
    const result = (await client.callTool({ name: 'pay', arguments: { invoice, card: CARD } })) as CallToolResult
    return (result._meta?.['toolwire/confirmation'] as { url: string }).url
  } finally {
    await client.close()
  }
}

/** The same link, on another server. */
const on = (link: string, server: { url: string }): string => new URL(new URL(link).pathname, server.url).href

async function form(link: string, fields: Record<string, string>): Promise<{ status: number; text: string }> {
  const res = await fetch(link, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields).toString() })
  return { status: res.status, text: await res.text() }
}

async function get(link: string): Promise<{ status: number; text: string }> {
  const res = await fetch(link)
  return { status: res.status, text: await res.text() }
}

const csrfOf = (html: string): string => /name="csrf" value="([^"]+)"/.exec(html)![1]!

/** The link with one character of its sealed part changed: a forgery. */
function forged(link: string): string {
  const u = new URL(link)
  const i = u.pathname.length - 5
  const c = u.pathname[i] === 'A' ? 'B' : 'A'
  u.pathname = u.pathname.slice(0, i) + c + u.pathname.slice(i + 1)
  return u.href
}

for (const kind of kinds) {
  describe.skipIf(kind.skip)(`serveHttp approval secret rotation, three servers on one ${kind.name} store`, () => {
    const runs: string[] = []
    const opened: ToolStore[] = []
    const servers: HttpMcpServer[] = []
    let old: HttpMcpServer
    let rotated: HttpMcpServer
    let dropped: HttpMcpServer

    beforeAll(async () => {
      const place = kind.place()
      const serve = async (secret: ApprovalSecrets, key: StoreKeys, name: string): Promise<HttpMcpServer> => {
        const store = await kind.open(place, clock)
        opened.push(store)
        const tm = manager(store, secret, key, runs, name)
        const served = await serveHttp(tm, { store, approvalSecret: secret })
        servers.push(served)
        return served
      }
      // before the rotation: one secret, given as a single value
      old = await serve(A, KEY_A, 'old')
      rotated = await serve([B, A], [KEY_B, KEY_A], 'rotated')
      dropped = await serve([B], [KEY_B], 'dropped')
    })
    afterAll(async () => {
      for (const s of servers) await s.close()
      for (const s of opened) await s.close()
    })

    it('a link made under [A] opens and approves on a server configured [B, A], once; the CSRF token is the same on both', async () => {
      const link = await linkFor(old.url, 'INV-1')
      const page = await get(on(link, rotated))
      expect(page.status).toBe(200)
      expect(page.text).toContain('Pay invoice INV-1')
      // made with the key of the secret that sealed the link, whichever server lists it
      const csrf = csrfOf(page.text)
      expect(csrfOf((await get(link)).text)).toBe(csrf)
      expect((await form(on(link, rotated), { decision: 'approve', csrf: csrf.replace(/^./, (c) => (c === 'A' ? 'B' : 'A')) })).status).toBe(403)
      expect(runs).toEqual([])
      const approved = await form(on(link, rotated), { decision: 'approve', csrf })
      expect(approved.status).toBe(200)
      expect(approved.text).toContain('<code id="outcome">ok</code>')
      // the confirmId signed with A verified, the input sealed with KEY_A opened: the whole card
      expect(runs).toEqual([`INV-1@rotated:${CARD}`])
      expect((await get(link)).status).toBe(410)
      expect((await form(on(link, rotated), { decision: 'approve', csrf })).status).toBe(410)
      expect(runs).toEqual([`INV-1@rotated:${CARD}`])
    })

    it('a server configured [B] refuses a link made under [A] exactly as a forged one (page and form); nothing runs, the call stays answerable', async () => {
      const link = await linkFor(old.url, 'INV-2')
      const csrf = csrfOf((await get(link)).text)
      const fake = forged(link)
      const [page, forgedPage] = await Promise.all([get(on(link, dropped)), get(on(fake, dropped))])
      expect(forgedPage.status).toBe(410)
      expect(page).toEqual(forgedPage)
      const [post, forgedPost] = await Promise.all([
        form(on(link, dropped), { decision: 'approve', csrf }),
        form(on(fake, dropped), { decision: 'approve', csrf }),
      ])
      expect(forgedPost.status).toBe(410)
      expect(post).toEqual(forgedPost)
      // the forgery is refused by the servers that list A too
      expect((await get(on(fake, rotated))).status).toBe(410)
      expect(runs.some((r) => r.startsWith('INV-2@'))).toBe(false)
      // still parked: the servers that list A serve it
      expect((await get(on(link, rotated))).status).toBe(200)
      const approved = await form(link, { decision: 'approve', csrf })
      expect(approved.text).toContain('<code id="outcome">ok</code>')
      expect(runs.filter((r) => r.startsWith('INV-2@'))).toEqual([`INV-2@old:${CARD}`])
    })

    it('a server configured [B, A] seals under B: [B] approves its link, [A] refuses it', async () => {
      const link = await linkFor(rotated.url, 'INV-3')
      const onOld = await get(on(link, old))
      expect(onOld.status).toBe(410)
      const page = await get(on(link, dropped))
      expect(page.status).toBe(200)
      expect(csrfOf((await get(link)).text)).toBe(csrfOf(page.text))
      expect((await form(on(link, old), { decision: 'approve', csrf: csrfOf(page.text) })).status).toBe(410)
      const approved = await form(on(link, dropped), { decision: 'approve', csrf: csrfOf(page.text) })
      expect(approved.text).toContain('<code id="outcome">ok</code>')
      expect(runs.filter((r) => r.startsWith('INV-3@'))).toEqual([`INV-3@dropped:${CARD}`])
    })
  })
}

describe('serveHttp approvalSecret: a list is checked as the manager checks it', () => {
  it('an empty list, a secret listed twice or a short entry is a TypeError naming the place, never the secret (with the page off too)', async () => {
    const store = new MemoryStore()
    const tm = new ToolManager({ store, approvalSecret: A })
    const refusal = async (approvalSecret: ApprovalSecrets, confirmPage = true): Promise<TypeError> => {
      const err = await serveHttp(tm, { store, approvalSecret, confirmPage }).then(
        async (served) => {
          await served.close()
          throw new Error('served')
        },
        (e: unknown) => e,
      )
      expect(err).toBeInstanceOf(TypeError)
      const message = (err as TypeError).message
      for (const s of [A, B, 'short-secret']) expect(message).not.toContain(s)
      return err as TypeError
    }
    expect((await refusal([])).message).toContain('approvalSecret is an empty list')
    expect((await refusal([A, B, A])).message).toContain('approvalSecret[2] is the same as approvalSecret[0]')
    expect((await refusal([B, 'short-secret'])).message).toContain('approvalSecret[1] must be at least 16 bytes')
    expect((await refusal([B, B], false)).message).toContain('approvalSecret[1] is the same as approvalSecret[0]')
    expect((await refusal('short-secret')).message).toContain('approvalSecret must be at least 16 bytes')
    const served = await serveHttp(tm, { store, approvalSecret: [B, A] })
    await served.close()
  })
})

describe.skipIf(kinds.find((k) => k.name === 'sqlite')?.skip !== false)('toolwire serve: TOOLWIRE_APPROVAL_SECRET and TOOLWIRE_STORE_KEY as lists', () => {
  let dir: string
  let module: string
  let log: string
  const children: ChildProcess[] = []

  beforeAll(() => {
    ensureBuilt()
    dir = tempDir('toolwire-rotation-cli-')
    log = join(dir, 'runs.log')
    module = join(dir, 'pay-tools.mjs')
    writeFileSync(
      module,
      `import { appendFileSync } from 'node:fs'
export default [
  {
    name: 'pay',
    description: 'Pays an invoice with a card (needs confirmation)',
    inputSchema: { type: 'object', properties: { invoice: { type: 'string' }, card: { type: 'string' } }, required: ['invoice', 'card'] },
    sensitive: ['card'],
    needsConfirmation: true,
    summarize: ({ invoice }) => 'Pay invoice ' + invoice,
    run({ invoice, card }) {
      appendFileSync(${JSON.stringify(log)}, invoice + ' ' + card + ' ' + process.pid + '\\n')
      return { paid: invoice }
    },
  },
]
`,
    )
  })
  afterAll(async () => {
    for (const child of children) {
      if (child.exitCode === null && child.signalCode === null) {
        const exit = new Promise((r) => child.once('exit', r))
        child.kill('SIGTERM')
        await exit
      }
    }
  })

  const baseEnv = (extra: NodeJS.ProcessEnv): NodeJS.ProcessEnv => ({
    ...process.env,
    TOOLWIRE_STORE: '',
    TOOLWIRE_APPROVAL_SECRET: '',
    TOOLWIRE_STORE_KEY: '',
    TOOLWIRE_TOKEN: undefined,
    TOOLWIRE_DEBUG: '',
    ...extra,
  })

  /** `toolwire serve --http` on one SQLite file: its MCP URL once it listens. */
  function serve(secrets: string, keys: string): { child: ChildProcess; url: Promise<string> } {
    const env = baseEnv({ TOOLWIRE_STORE: `sqlite:${join(dir, 'store.db')}`, TOOLWIRE_APPROVAL_SECRET: secrets, TOOLWIRE_STORE_KEY: keys })
    const child = spawn(process.execPath, [cli, 'serve', module, '--http', '127.0.0.1:0'], { env, stdio: ['ignore', 'ignore', 'pipe'] })
    children.push(child)
    let err = ''
    const url = new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stderr! }).on('line', (line) => {
        err += line + '\n'
        const m = / at (http:\/\/\S+)$/.exec(line)
        if (m !== null) resolve(m[1]!)
      })
      child.once('exit', (code) => reject(new Error(`serve exited (${code}) before listening: ${err}`)))
    })
    return { child, url }
  }

  it('a bad list is a usage error (64) naming the variable and the place, never a secret', async () => {
    const run = (extra: NodeJS.ProcessEnv): Promise<{ status: number | null; stderr: string }> =>
      new Promise((resolve) => {
        const child = execFile(
          process.execPath,
          [cli, 'serve', module, '--http', '127.0.0.1:0'],
          { env: baseEnv({ TOOLWIRE_STORE: `sqlite:${join(dir, 'never.db')}`, ...extra }), encoding: 'utf8', timeout: 60_000 },
          (_err, _stdout, stderr) => resolve({ status: child.exitCode, stderr }),
        )
      })
    const cases: [NodeJS.ProcessEnv, string][] = [
      [{ TOOLWIRE_APPROVAL_SECRET: `${B},,${A}` }, 'TOOLWIRE_APPROVAL_SECRET[1] is empty (entry 2 of 3)'],
      [{ TOOLWIRE_APPROVAL_SECRET: `${B}, ${A},` }, 'TOOLWIRE_APPROVAL_SECRET[2] is empty (entry 3 of 3)'],
      [{ TOOLWIRE_APPROVAL_SECRET: ' , ' }, 'TOOLWIRE_APPROVAL_SECRET[0] is empty'],
      [{ TOOLWIRE_APPROVAL_SECRET: '   ' }, 'TOOLWIRE_APPROVAL_SECRET is blank'],
      [{ TOOLWIRE_APPROVAL_SECRET: `${A} , ${B},${A}` }, 'TOOLWIRE_APPROVAL_SECRET[2] is the same as TOOLWIRE_APPROVAL_SECRET[0]'],
      [{ TOOLWIRE_APPROVAL_SECRET: `${B},short-secret` }, 'TOOLWIRE_APPROVAL_SECRET[1] must be at least 16 bytes'],
      [{ TOOLWIRE_APPROVAL_SECRET: 'short-secret' }, 'TOOLWIRE_APPROVAL_SECRET must be at least 16 bytes'],
      [{ TOOLWIRE_APPROVAL_SECRET: A, TOOLWIRE_STORE_KEY: `${KEY_B},,${KEY_A}` }, 'TOOLWIRE_STORE_KEY[1] is empty'],
      [{ TOOLWIRE_APPROVAL_SECRET: A, TOOLWIRE_STORE_KEY: `${KEY_B},${KEY_A.slice(2)}` }, 'TOOLWIRE_STORE_KEY[1] is not 32 bytes'],
      // one key as hex and as base64 is the same key
      [{ TOOLWIRE_APPROVAL_SECRET: A, TOOLWIRE_STORE_KEY: `${KEY_A}, ${Buffer.from(KEY_A, 'hex').toString('base64')}` }, 'TOOLWIRE_STORE_KEY[1] is the same as TOOLWIRE_STORE_KEY[0]'],
      [{ TOOLWIRE_APPROVAL_SECRET: A, TOOLWIRE_STORE_KEY: 'swordfish' }, 'TOOLWIRE_STORE_KEY: a store key is 32 bytes'],
    ]
    const answers = await Promise.all(cases.map(([env]) => run(env)))
    answers.forEach((r, i) => {
      const message = cases[i]![1]
      expect(r.status, message).toBe(64)
      expect(r.stderr).toContain(`toolwire: ${message}`)
      for (const s of [A, B, KEY_A, KEY_B, Buffer.from(KEY_A, 'hex').toString('base64'), 'hunter2', 'swordfish', 'short-secret']) expect(r.stderr).not.toContain(s)
    })
    // nothing was opened: the secrets are checked before the store
    expect(existsSync(join(dir, 'never.db'))).toBe(false)
  }, 120_000)

  it('[A] and " B , A " on one SQLite file: a link made under A opens and approves on the rotated instance (the input sealed with the old key opens there); the rotated one seals under B, which [A] refuses', async () => {
    const before = serve(A, KEY_A)
    const after = serve(` ${B} , ${A} `, `${KEY_B}, ${KEY_A}`)
    const [oldUrl, newUrl] = await Promise.all([before.url, after.url])

    const link = await linkFor(oldUrl, 'CLI-1')
    const page = await get(on(link, { url: newUrl }))
    expect(page.status).toBe(200)
    expect(page.text).toContain('Pay invoice CLI-1')
    const approved = await form(on(link, { url: newUrl }), { decision: 'approve', csrf: csrfOf(page.text) })
    expect(approved.text).toContain('<code id="outcome">ok</code>')
    expect(readFileSync(log, 'utf8')).toBe(`CLI-1 ${CARD} ${after.child.pid}\n`)
    expect((await get(link)).status).toBe(410)

    const newer = await linkFor(newUrl, 'CLI-2')
    expect((await get(newer)).status).toBe(200)
    const refused = await get(on(newer, { url: oldUrl }))
    expect(refused.status).toBe(410)
    expect(refused).toEqual(await get(on(forged(newer), { url: oldUrl })))
    expect(readFileSync(log, 'utf8')).toBe(`CLI-1 ${CARD} ${after.child.pid}\n`)
  }, 120_000)
})
