// The confirmation page of `serveHttp`: a client without form elicitation gets a
// single-use approval URL; the page shows the tool, its summary and its redacted
// changes; its form is CSRF-protected; the link works once and expires with the
// confirmation. Driven by fetch, and by a real headless Chromium (Debian's, through
// playwright-core) that clicks Approve and Deny and takes screenshots. Without a system
// Chromium the browser test is skipped with the reason printed (under CI=true it fails).
import { existsSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { ElicitationCompleteNotificationSchema, ElicitRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { ToolManager } from '../src/runtime/manager.js'
import { serveHttp, type HttpMcpServer } from '../src/mcp/http.js'
import { MemoryStore } from '../src/runtime/store/index.js'
import { repo } from './fixtures/mcp/helpers.js'

const CI = process.env.CI === 'true'

function manager(runs: string[]): ToolManager {
  const tm = new ToolManager()
  tm.register({
    name: 'set_password',
    description: 'Changes the account password',
    inputSchema: { type: 'object', properties: { user: { type: 'string' }, password: { type: 'string' } }, required: ['user', 'password'] },
    needsConfirmation: true,
    summarize: ({ user }: { user: string; password: string }) => `Change the password of <b>${user}</b>`,
    previewChanges: ({ password }: { user: string; password: string }) => [{ path: 'password', before: 'old-secret-value', after: password }],
    run: ({ user }: { user: string; password: string }) => {
      runs.push(user)
      return { changed: user }
    },
  })
  return tm
}

async function held(url: string, user: string): Promise<{ link: string; confirmId: string; result: CallToolResult }> {
  const client = new Client({ name: 'no-elicitation', version: '1.0.0' })
  await client.connect(new StreamableHTTPClientTransport(new URL(url)))
  try {
    const result = (await client.callTool({ name: 'set_password', arguments: { user, password: 'n3w-s3cret-value' } })) as CallToolResult
    const meta = result._meta?.['toolwire/confirmation'] as { url: string; confirmId: string }
    return { link: meta.url, confirmId: meta.confirmId, result }
  } finally {
    await client.close()
  }
}

async function form(link: string, fields: Record<string, string>): Promise<{ status: number; text: string }> {
  const res = await fetch(link, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields).toString() })
  return { status: res.status, text: await res.text() }
}

const csrfOf = (html: string): string => /name="csrf" value="([^"]+)"/.exec(html)![1]!

describe('the confirmation page over fetch', () => {
  let served: HttpMcpServer
  let tm: ToolManager
  const runs: string[] = []
  beforeAll(async () => {
    tm = manager(runs)
    served = await serveHttp(tm, { token: 'tok' })
  })
  afterAll(() => served.close())
  afterEach(() => {
    vi.useRealTimers()
  })

  it('a client without form elicitation gets a single-use URL in the text and _meta; the page shows tool, summary and redacted changes', async () => {
    const client = new Client({ name: 'no-elicitation', version: '1.0.0' })
    await client.connect(new StreamableHTTPClientTransport(new URL(served.url), { requestInit: { headers: { authorization: 'Bearer tok' } } }))
    let result: CallToolResult
    try {
      result = (await client.callTool({ name: 'set_password', arguments: { user: 'ada', password: 'n3w-s3cret-value' } })) as CallToolResult
    } finally {
      await client.close()
    }
    const meta = result._meta?.['toolwire/confirmation'] as { url: string; confirmId: string; summary: string }
    expect(meta.url).toMatch(new RegExp(`^${new URL(served.url).origin}/confirm/[A-Za-z0-9_-]{43}$`))
    expect(JSON.stringify(result.content)).toContain(meta.url)
    expect(runs).toEqual([])

    // no bearer token: the link is the credential
    const res = await fetch(meta.url)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-security-policy')).toContain("frame-ancestors 'none'")
    expect(res.headers.get('cache-control')).toBe('no-store')
    const html = await res.text()
    expect(html).toContain('set_password')
    expect(html).toContain('Change the password of &lt;b&gt;ada&lt;/b&gt;')
    expect(html).not.toContain('<b>ada</b>')
    expect(html).toContain('<code>password</code>')
    expect(html).not.toContain('n3w-s3cret-value')
    expect(html).not.toContain('old-secret-value')
    expect(html).toContain('[redacted]')
  })

  it('the form needs its CSRF token; approving runs the call once; the link then answers 410', async () => {
    // the token-protected server: a client with the token
    const client = new Client({ name: 'no-elicitation', version: '1.0.0' })
    await client.connect(new StreamableHTTPClientTransport(new URL(served.url), { requestInit: { headers: { authorization: 'Bearer tok' } } }))
    const result = (await client.callTool({ name: 'set_password', arguments: { user: 'bob', password: 'x' } })) as CallToolResult
    await client.close()
    const link = (result._meta?.['toolwire/confirmation'] as { url: string }).url
    const csrf = csrfOf(await (await fetch(link)).text())

    expect((await form(link, { decision: 'approve' })).status).toBe(403)
    expect((await form(link, { decision: 'approve', csrf: 'A'.repeat(csrf.length) })).status).toBe(403)
    const crossSite = await fetch(link, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'https://evil.example' }, body: `csrf=${csrf}&decision=approve` })
    expect(crossSite.status).toBe(403)
    expect(runs).toEqual([])

    const approved = await form(link, { decision: 'approve', csrf })
    expect(approved.status).toBe(200)
    expect(approved.text).toContain('<code id="outcome">ok</code>')
    expect(runs).toEqual(['bob'])
    const again = await form(link, { decision: 'approve', csrf })
    expect(again.status).toBe(410)
    expect((await fetch(link)).status).toBe(410)
    expect(runs).toEqual(['bob'])
  })

  it('expires with the confirmation: a link past its time answers 410 and nothing runs', async () => {
    const short = await serveHttp(manager(runs), { confirmPageTtlMs: 60_000 })
    try {
      const { link } = await held(short.url, 'carol')
      vi.useFakeTimers({ toFake: ['Date'] })
      vi.setSystemTime(Date.now() + 61_000)
      expect((await fetch(link)).status).toBe(410)
      expect(runs).not.toContain('carol')
    } finally {
      vi.useRealTimers()
      await short.close()
    }
  })

  it('a confirmation answered another way closes its link', async () => {
    const other = manager(runs)
    const s = await serveHttp(other)
    try {
      const { link, confirmId } = await held(s.url, 'dave')
      expect(await other.confirm(confirmId, { approve: false })).toMatchObject({ status: 'refused', code: 'confirmation_denied' })
      expect((await fetch(link)).status).toBe(410)
      expect(runs).not.toContain('dave')
    } finally {
      await s.close()
    }
  })

  it('unknown or malformed links are 410; confirmPage: false gives no link', async () => {
    expect((await fetch(new URL('/confirm/nope', served.url))).status).toBe(410)
    expect((await fetch(new URL(`/confirm/${'a'.repeat(43)}`, served.url))).status).toBe(410)
    const off = await serveHttp(manager(runs), { confirmPage: false })
    try {
      const client = new Client({ name: 'no-elicitation', version: '1.0.0' })
      await client.connect(new StreamableHTTPClientTransport(new URL(off.url)))
      const result = (await client.callTool({ name: 'set_password', arguments: { user: 'erin', password: 'x' } })) as CallToolResult
      await client.close()
      expect(result._meta?.['toolwire/confirmation']).not.toHaveProperty('url')
      expect((await fetch(new URL(`/confirm/${'a'.repeat(43)}`, off.url))).status).toBe(404)
    } finally {
      await off.close()
    }
  })

  it('a summary of 1 MB: the page shows its first 1,000 characters and says it was shortened', async () => {
    const user = `u${'x'.repeat(1_000_000)}`
    const open = await serveHttp(manager(runs))
    try {
      const { link } = await held(open.url, user)
      const html = await (await fetch(link)).text()
      expect(html).toContain(`Change the password of &lt;b&gt;${user.slice(0, 500)}`)
      expect(html).toContain('id="shortened"')
      expect(html).toContain('the whole summary is 1,000,031 characters')
      expect(html.length).toBeLessThan(20_000)
    } finally {
      await open.close()
    }
  })

  it('confirmationLinkInText: false keeps the link out of the text the model reads; the application gets it in _meta, and it works', async () => {
    const quiet = await serveHttp(manager(runs), { confirmationLinkInText: false })
    try {
      const { link, result } = await held(quiet.url, 'frank')
      expect(link).toMatch(/\/confirm\/[A-Za-z0-9_-]{43}$/)
      const text = JSON.stringify(result.content)
      expect(text).not.toContain(link)
      expect(text).not.toContain('/confirm/')
      expect(text).toContain('The application has a link where the user can approve or deny it')
      expect(result.isError).toBe(true)
      const html = await (await fetch(link)).text()
      const approved = await form(link, { decision: 'approve', csrf: csrfOf(html) })
      expect(approved.status).toBe(200)
      expect(runs.filter((r) => r.startsWith('frank'))).toHaveLength(1)
    } finally {
      await quiet.close()
    }
  })
})

describe('URL-mode elicitation', () => {
  let served: HttpMcpServer
  const runs: string[] = []
  beforeAll(async () => {
    served = await serveHttp(manager(runs))
  })
  afterAll(() => served.close())

  async function urlClient(decide: (url: string) => Promise<'accept' | 'decline'>): Promise<{ client: Client; completed: string[]; asked: { url: string; elicitationId: string }[] }> {
    const client = new Client({ name: 'url-elicitation', version: '1.0.0' }, { capabilities: { elicitation: { url: {} } } })
    const completed: string[] = []
    const asked: { url: string; elicitationId: string }[] = []
    client.setRequestHandler(ElicitRequestSchema, async (req) => {
      const params = req.params as { mode: string; url: string; elicitationId: string }
      expect(params.mode).toBe('url')
      asked.push({ url: params.url, elicitationId: params.elicitationId })
      return { action: await decide(params.url) }
    })
    client.setNotificationHandler(ElicitationCompleteNotificationSchema, (n) => {
      completed.push(n.params.elicitationId)
    })
    await client.connect(new StreamableHTTPClientTransport(new URL(served.url)))
    return { client, completed, asked }
  }

  it('a client with only URL elicitation gets the link through elicitation/create; the call runs once when approved on the page', async () => {
    let approval: Promise<unknown> = Promise.resolve()
    const { client, completed, asked } = await urlClient(async (url) => {
      // the person opens the page and approves, after the client accepted to open it
      approval = (async () => {
        const csrf = csrfOf(await (await fetch(url)).text())
        return form(url, { decision: 'approve', csrf })
      })()
      return 'accept'
    })
    try {
      const result = (await client.callTool({ name: 'set_password', arguments: { user: 'ivan', password: 'x' } })) as CallToolResult
      expect(result).toMatchObject({ isError: false, structuredContent: { changed: 'ivan' } })
      expect(await approval).toMatchObject({ status: 200 })
      expect(runs).toEqual(['ivan'])
      expect(asked).toHaveLength(1)
      expect(asked[0]!.url).toMatch(/\/confirm\/[A-Za-z0-9_-]{43}$/)
      await expect.poll(() => completed).toEqual([asked[0]!.elicitationId])
    } finally {
      await client.close()
    }
  })

  it('declining the URL elicitation denies the call', async () => {
    const { client, asked } = await urlClient(async () => 'decline')
    try {
      const result = (await client.callTool({ name: 'set_password', arguments: { user: 'judy', password: 'x' } })) as CallToolResult
      expect(result.isError).toBe(true)
      expect(JSON.stringify(result.content)).toContain('The user denied this call')
      expect(runs).not.toContain('judy')
      expect((await fetch(asked[0]!.url)).status).toBe(410)
    } finally {
      await client.close()
    }
  })
})

const CHROMIUM = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => existsSync(p))

describe('the confirmation page in a real headless Chromium', () => {
  let served: HttpMcpServer
  const runs: string[] = []
  const shots = join(repo, '.cache', 'test-output', 'confirm-page')
  let browser: import('playwright-core').Browser | undefined
  let reason: string | undefined

  beforeAll(async () => {
    served = await serveHttp(manager(runs))
    if (CHROMIUM === undefined) {
      reason = 'no system Chromium (apt-get install chromium)'
      console.log(`mcp-confirm-page: browser test skipped: ${reason}`)
      return
    }
    const { chromium } = await import('playwright-core')
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox'] })
    mkdirSync(shots, { recursive: true })
  }, 60_000)
  afterAll(async () => {
    await browser?.close()
    await served.close()
  })

  it('Approve runs the call exactly once; Deny gives confirmation_denied; a used URL is refused', async (ctx) => {
    if (browser === undefined) {
      if (CI) throw new Error(`the browser test must run in CI: ${reason}`)
      ctx.skip()
      return
    }
    const page = await browser.newPage()
    try {
      const first = await held(served.url, 'grace')
      await page.goto(first.link)
      expect(await page.textContent('#tool')).toBe('set_password')
      expect(await page.textContent('#summary')).toBe('Change the password of <b>grace</b>')
      expect(await page.content()).not.toContain('n3w-s3cret-value')
      await page.screenshot({ path: join(shots, 'confirm.png'), fullPage: true })
      await Promise.all([page.waitForURL(first.link), page.click('#approve')])
      expect(await page.textContent('h1')).toBe('Approved')
      expect(await page.textContent('#outcome')).toBe('ok')
      await page.screenshot({ path: join(shots, 'approved.png'), fullPage: true })
      expect(runs).toEqual(['grace'])

      // the same URL again: refused, and nothing runs twice
      const reused = await page.goto(first.link)
      expect(reused?.status()).toBe(410)
      expect(await page.textContent('h1')).toBe('This link is no longer valid')
      await page.screenshot({ path: join(shots, 'reused.png'), fullPage: true })

      const second = await held(served.url, 'heidi')
      await page.goto(second.link)
      await Promise.all([page.waitForURL(second.link), page.click('#deny')])
      expect(await page.textContent('h1')).toBe('Denied')
      expect(await page.textContent('#outcome')).toBe('confirmation_denied')
      await page.screenshot({ path: join(shots, 'denied.png'), fullPage: true })
      expect(runs).toEqual(['grace'])
      console.log(`mcp-confirm-page: screenshots in ${shots}`)
    } finally {
      await page.close()
    }
  }, 60_000)
})

describe('the confirmation page with a store: expiry on the store clock', () => {
  it("a link is good until the store's clock passes the confirmation's expiry, whatever this process's clock says", async () => {
    const SECRET = 'store-clock-approval-secret-0123456789'
    let clock = Date.now()
    const store = new MemoryStore({ now: () => clock })
    const runs: string[] = []
    const tm = new ToolManager({ store, approvalSecret: SECRET, confirmTtlMs: 60_000 })
    tm.register({
      name: 'set_password',
      inputSchema: { type: 'object', properties: { user: { type: 'string' }, password: { type: 'string' } }, required: ['user', 'password'] },
      needsConfirmation: true,
      run: ({ user }: { user: string; password: string }) => {
        runs.push(user)
        return { changed: user }
      },
    })
    const served = await serveHttp(tm, { store, approvalSecret: SECRET, confirmPageTtlMs: 60_000 })
    try {
      const { link } = await held(served.url, 'kim')
      const page = await fetch(link)
      expect(page.status).toBe(200)
      const csrf = csrfOf(await page.text())
      // the store's clock moves past the expiry; Date.now does not
      clock += 61_000
      expect((await fetch(link)).status).toBe(410)
      expect((await form(link, { decision: 'approve', csrf })).status).toBe(410)
      expect(runs).toEqual([])
    } finally {
      await served.close()
      await store.close()
    }
  })

  it("the link's own expiry is dated on the store's clock", async () => {
    const SECRET = 'store-clock-approval-secret-0123456789'
    // the store's clock is a day behind this process's: the confirmation (and its link) are good for a minute of it
    let clock = Date.now() - 24 * 3600_000
    const store = new MemoryStore({ now: () => clock })
    const tm = new ToolManager({ store, approvalSecret: SECRET, confirmTtlMs: 10 * 24 * 3600_000 })
    tm.register({
      name: 'set_password',
      inputSchema: { type: 'object', properties: { user: { type: 'string' }, password: { type: 'string' } }, required: ['user', 'password'] },
      needsConfirmation: true,
      run: () => ({ changed: true }),
    })
    const served = await serveHttp(tm, { store, approvalSecret: SECRET, confirmPageTtlMs: 60_000 })
    try {
      const { link } = await held(served.url, 'lee')
      expect((await fetch(link)).status).toBe(200)
      clock += 61_000
      expect((await fetch(link)).status).toBe(410)
    } finally {
      await served.close()
      await store.close()
    }
  })
})
