// Who approved: the confirmation page with `auth.signIn` sends a person to a real OpenID
// Connect issuer (oidc-provider on 127.0.0.1, its login and consent forms driven by fetch
// with a cookie jar), finishes authorization code + PKCE at /confirm/callback, and lets only
// a signed-in approver holding the approver scope answer; the decision names the approver.
import { createServer, type Server } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ToolManager } from '../src/runtime/manager.js'
import type { ConfirmDecision } from '../src/runtime/manager.js'
import type { ToolEvents } from '../src/runtime/types.js'
import { MemoryStore } from '../src/runtime/store/index.js'
import type { EvidenceRecord, EvidenceStore } from '../src/observe/evidence.js'
import { ConfirmationPages, SharedConfirmationPages, type ConfirmationLinks } from '../src/mcp/confirm-page.js'
import { ConfirmSignIn, loadOpenIdClient, readSignInOptions } from '../src/mcp/auth/signin.js'
import { startInteractiveIssuer, type InteractiveIssuer } from './fixtures/auth/interactive-issuer.js'

const SECRET = 'an-approval-secret-of-32-bytes!!'
const CLIENT_SECRET = 'page-client-secret-value'

interface Served {
  readonly origin: string
  readonly http: Server
  /** Set once the pages exist (they need the origin, which needs the server listening). */
  pages?: ConfirmationLinks
}

async function listen(): Promise<Served> {
  const served: { origin: string; http: Server; pages?: ConfirmationLinks } = { origin: '', http: undefined as unknown as Server }
  served.http = createServer((req, res) => {
    const { pathname } = new URL(req.url ?? '/', 'http://x')
    void served.pages!.handle(req, res, pathname)
  })
  await new Promise<void>((r) => served.http.listen(0, '127.0.0.1', r))
  served.origin = `http://127.0.0.1:${(served.http.address() as { port: number }).port}`
  return served
}

/** A manager whose `set_password` needs confirmation, and the decisions `tm.confirm` was given. */
function manager(runs: string[], options: ConstructorParameters<typeof ToolManager>[0] = {}): { tm: ToolManager; decisions: ConfirmDecision[] } {
  const tm = new ToolManager(options)
  tm.register({
    name: 'set_password',
    description: 'Changes the account password',
    inputSchema: { type: 'object', properties: { user: { type: 'string' } }, required: ['user'] },
    needsConfirmation: true,
    summarize: ({ user }: { user: string }) => `Change the password of ${user}`,
    run: ({ user }: { user: string }) => {
      runs.push(user)
      return { changed: user }
    },
  })
  const decisions: ConfirmDecision[] = []
  const confirm = tm.confirm.bind(tm)
  tm.confirm = (id, decision) => {
    decisions.push(decision)
    return confirm(id, decision)
  }
  return { tm, decisions }
}

/** A browser: one cookie jar for the page's origin. */
class Browser {
  private readonly cookies = new Map<string, string>()
  readonly setCookies: string[] = []
  constructor(readonly origin: string) {}
  set(name: string, value: string): void {
    this.cookies.set(name, value)
  }
  get(name: string): string | undefined {
    return this.cookies.get(name)
  }
  async fetch(url: string, init: RequestInit = {}): Promise<Response> {
    const cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ')
    const res = await fetch(new URL(url, this.origin), { ...init, redirect: 'manual', headers: { ...(init.headers as Record<string, string>), ...(cookie ? { cookie } : {}) } })
    for (const line of res.headers.getSetCookie()) {
      this.setCookies.push(line)
      const [pair] = line.split(';')
      const at = pair!.indexOf('=')
      const value = pair!.slice(at + 1)
      if (value === '' || /Max-Age=0\b/.test(line)) this.cookies.delete(pair!.slice(0, at))
      else this.cookies.set(pair!.slice(0, at), value)
    }
    return res
  }
  post(path: string, fields: Record<string, string>): Promise<Response> {
    return this.fetch(path, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields).toString() })
  }
}

const csrfOf = (html: string): string => /name="csrf" value="([^"]+)"/.exec(html)![1]!

/** Opens `path` in `browser`, signs in at the issuer as `account`, and comes back: the page's response. */
async function signInAndOpen(browser: Browser, issuer: InteractiveIssuer, path: string, account: string): Promise<Response> {
  const first = await browser.fetch(path)
  expect(first.status).toBe(302)
  const callback = await issuer.signIn(first.headers.get('location')!, account)
  expect(callback.startsWith(`${browser.origin}/confirm/callback?`)).toBe(true)
  const back = await browser.fetch(callback)
  expect(back.status).toBe(302)
  expect(back.headers.get('location')).toBe(path)
  return browser.fetch(path)
}

async function park(tm: ToolManager, pages: ConfirmationLinks, user: string): Promise<string> {
  const view = await tm.call('set_password', { user })
  if (view.status !== 'needs_confirmation') throw new Error(`expected needs_confirmation, got ${view.status}`)
  return pages.open({ tool: 'set_password', view })
}

describe('the confirmation page with sign-in (oidc-provider, authorization code + PKCE)', () => {
  let served: Served
  let issuer: InteractiveIssuer
  let resource: string
  const runs: string[] = []
  let tm: ToolManager
  let decisions: ConfirmDecision[]
  let signIn: ConfirmSignIn
  const signInErrors: Error[] = []

  beforeAll(async () => {
    served = await listen()
    resource = `${served.origin}/mcp`
    issuer = await startInteractiveIssuer({ redirectUri: `${served.origin}/confirm/callback`, resource })
    ;({ tm, decisions } = manager(runs))
    signIn = new ConfirmSignIn({
      issuer: issuer.issuer,
      // as serveHttp knows them: once listening
      audience: () => resource,
      publicUrl: () => resource,
      signIn: { clientId: issuer.clientId, clientSecret: issuer.clientSecret, approverScope: 'approve:{tool}' },
      onError: (error) => signInErrors.push(error),
    })
    await signIn.load()
    served.pages = new ConfirmationPages(tm, { signIn })
  })
  /** Parks a call for `user`, opens its link in a new browser and signs in as `account`: the page's response. */
  async function openSignedIn(user: string, account: string): Promise<{ path: string; browser: Browser; res: Response }> {
    const path = await park(tm, served.pages!, user)
    const browser = new Browser(served.origin)
    return { path, browser, res: await signInAndOpen(browser, issuer, path, account) }
  }
  afterAll(async () => {
    served.pages?.close()
    await new Promise<void>((r) => served.http.close(() => r()))
    await issuer.close()
  })

  it('a GET without an approver is sent to the issuer: code + PKCE S256, state, nonce, resource = audience, openid + the approver scope', async () => {
    const path = await park(tm, served.pages!, 'gil')
    const browser = new Browser(served.origin)
    const res = await browser.fetch(path)
    expect(res.status).toBe(302)
    // neither the call nor the form (its CSRF token) is shown before signing in
    expect(await res.text()).toBe('')
    const to = new URL(res.headers.get('location')!)
    expect(`${to.origin}${to.pathname}`).toBe(`${issuer.issuer}/auth`)
    const q = to.searchParams
    expect(q.get('response_type')).toBe('code')
    expect(q.get('client_id')).toBe(issuer.clientId)
    expect(q.get('redirect_uri')).toBe(`${served.origin}/confirm/callback`)
    expect(q.get('code_challenge_method')).toBe('S256')
    expect(q.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(q.get('state')).toMatch(/^[A-Za-z0-9_-]{20,}$/)
    expect(q.get('nonce')).toMatch(/^[A-Za-z0-9_-]{20,}$/)
    expect(q.get('resource')).toBe(resource)
    expect(q.get('scope')).toBe('openid approve:set_password')
    // the sign-in in flight is sealed: HttpOnly, Lax, scoped to /confirm/; neither state nor verifier in clear
    const flow = browser.setCookies.find((c) => c.startsWith('toolwire_signin='))!
    expect(flow).toMatch(/; Path=\/confirm\/; Max-Age=300; HttpOnly; SameSite=Lax$/)
    expect(flow).not.toContain(q.get('state')!)
    expect(flow).not.toContain('Secure')
  })

  it('behind an https public URL the cookies are Secure and the callback is on that origin', async () => {
    const previous = served.pages!
    const https = new ConfirmSignIn({ issuer: issuer.issuer, audience: resource, publicUrl: 'https://approve.example.com/mcp', signIn: { clientId: issuer.clientId } })
    served.pages = new ConfirmationPages(tm, { signIn: https })
    try {
      const browser = new Browser(served.origin)
      const res = await browser.fetch(await park(tm, served.pages, 'tls'))
      expect(res.status).toBe(302)
      expect(new URL(res.headers.get('location')!).searchParams.get('redirect_uri')).toBe('https://approve.example.com/confirm/callback')
      expect(browser.setCookies.find((c) => c.startsWith('toolwire_signin='))).toMatch(/; HttpOnly; SameSite=Lax; Secure$/)
    } finally {
      served.pages.close()
      served.pages = previous
    }
  })

  it('an anonymous POST is refused 403 and nothing runs', async () => {
    const path = await park(tm, served.pages!, 'anon')
    const before = decisions.length
    const res = await new Browser(served.origin).post(path, { csrf: 'x', decision: 'approve' })
    expect(res.status).toBe(403)
    expect(await res.text()).toMatch(/Sign in first.*Nothing was run/s)
    expect(runs).not.toContain('anon')
    expect(decisions.length).toBe(before)
  })

  it('a signed-in approver with the scope approves once: the call runs once and tm.confirm gets approvedBy', async () => {
    const { path, browser, res: pageRes } = await openSignedIn('ada-user', 'ada@example.com')
    expect(pageRes.status).toBe(200)
    const html = await pageRes.text()
    expect(html).toContain('Signed in as <strong id="approver">ada@example.com</strong>')
    // the approver cookie: sealed (no subject in clear), HttpOnly, Lax, /confirm/, 10 minutes; the flow cookie cleared
    const approver = browser.setCookies.find((c) => c.startsWith('toolwire_approver='))!
    expect(approver).toMatch(/; Path=\/confirm\/; Max-Age=600; HttpOnly; SameSite=Lax$/)
    expect(approver).not.toContain('ada')
    expect(browser.get('toolwire_signin')).toBeUndefined()
    const done = await browser.post(path, { csrf: csrfOf(html), decision: 'approve' })
    expect(done.status).toBe(200)
    expect(await done.text()).toContain('<code id="outcome">ok</code>')
    expect(runs.filter((u) => u === 'ada-user')).toEqual(['ada-user'])
    expect(decisions.at(-1)).toEqual({ approve: true, approvedBy: { subject: 'ada@example.com', issuer: issuer.issuer } })
    // single use: the same approver cannot answer it again
    const again = await browser.post(path, { csrf: csrfOf(html), decision: 'approve' })
    expect(again.status).toBe(410)
    expect(runs.filter((u) => u === 'ada-user')).toHaveLength(1)
  })

  it('the evidence and the confirmation event of a call approved on the page name the signed-in approver; without sign-in, nobody', async () => {
    const records: EvidenceRecord[] = []
    const evidence: EvidenceStore = { append: (r) => void records.push(r), readAll: async () => records }
    const recorded = manager([], { evidence })
    const events: ToolEvents['confirmation'][] = []
    recorded.tm.on('confirmation', (e) => void events.push(e))
    const previous = served.pages!
    try {
      for (const signedIn of [true, false]) {
        served.pages = new ConfirmationPages(recorded.tm, signedIn ? { signIn } : {})
        const path = await park(recorded.tm, served.pages, `evidence-${signedIn}`)
        const browser = new Browser(served.origin)
        const res = signedIn ? await signInAndOpen(browser, issuer, path, 'ada@example.com') : await browser.fetch(path)
        expect((await browser.post(path, { csrf: csrfOf(await res.text()), decision: 'approve' })).status).toBe(200)
        const record = records.find((r) => r.status === 'succeeded' && JSON.stringify(r.input) === JSON.stringify({ user: `evidence-${signedIn}` }))!
        const event = events.find((e) => e.callId === record.callId)!
        // without sign-in the link is the credential, as before: the decision names nobody
        const approver = signedIn ? { subject: 'ada@example.com', issuer: issuer.issuer } : undefined
        expect(record.approvedBy).toEqual(approver)
        expect(event.approvedBy).toEqual(approver)
        served.pages.close()
      }
    } finally {
      served.pages = previous
    }
  })

  it('a denial is made by a signed-in approver too, and says who', async () => {
    const { path, browser, res: pageRes } = await openSignedIn('deny-me', 'ada@example.com')
    const html = await pageRes.text()
    const res = await browser.post(path, { csrf: csrfOf(html), decision: 'deny' })
    expect(res.status).toBe(200)
    expect(runs).not.toContain('deny-me')
    expect(decisions.at(-1)).toEqual({ approve: false, approvedBy: { subject: 'ada@example.com', issuer: issuer.issuer } })
  })

  it('an approver without the approver scope is refused 403, on the page and on POST, and nothing runs', async () => {
    const { path, browser, res } = await openSignedIn('bob-user', 'bob@example.com')
    expect(res.status).toBe(403)
    const html = await res.text()
    expect(html).toContain('Signed in as <strong id="approver">bob@example.com</strong>')
    expect(html).toContain('<code id="scope">approve:set_password</code>')
    const before = decisions.length
    const posted = await browser.post(path, { csrf: 'whatever', decision: 'approve' })
    expect(posted.status).toBe(403)
    expect(await posted.text()).toMatch(/Not allowed to approve.*Nothing was run/s)
    expect(runs).not.toContain('bob-user')
    expect(decisions.length).toBe(before)
    // "sign in as someone else" starts a new sign-in (prompt=login), even with a cookie
    const again = await browser.fetch(`${path}?signin`)
    expect(again.status).toBe(302)
    expect(new URL(again.headers.get('location')!).searchParams.get('prompt')).toBe('login')
  })

  it('a tampered approver cookie, and one sealed by another server, are refused', async () => {
    const { path, browser, res: pageRes } = await openSignedIn('forged', 'ada@example.com')
    const html = await pageRes.text()
    const good = browser.get('toolwire_approver')!
    // one character changed: the GCM tag no longer checks out
    const flipped = good.slice(0, 20) + (good[20] === 'A' ? 'B' : 'A') + good.slice(21)
    browser.set('toolwire_approver', flipped)
    expect((await browser.post(path, { csrf: csrfOf(html), decision: 'approve' })).status).toBe(403)
    // a genuine approver cookie sealed by another server (its own key) for the same person
    const previous = served.pages!
    const otherSignIn = new ConfirmSignIn({ issuer: issuer.issuer, audience: resource, publicUrl: served.origin, signIn: { clientId: issuer.clientId, clientSecret: CLIENT_SECRET } })
    served.pages = new ConfirmationPages(tm, { signIn: otherSignIn })
    const foreign = new Browser(served.origin)
    try {
      expect((await signInAndOpen(foreign, issuer, await park(tm, served.pages, 'elsewhere'), 'ada@example.com')).status).toBe(200)
    } finally {
      served.pages.close()
      served.pages = previous
    }
    browser.set('toolwire_approver', foreign.get('toolwire_approver')!)
    expect((await browser.post(path, { csrf: csrfOf(html), decision: 'approve' })).status).toBe(403)
    expect(runs).not.toContain('forged')
  })

  it('a callback whose state or iss does not match the sign-in in flight is refused, and signs nobody in', async () => {
    const path = await park(tm, served.pages!, 'state')
    const browser = new Browser(served.origin)
    const first = await browser.fetch(path)
    const callback = new URL(await issuer.signIn(first.headers.get('location')!, 'ada@example.com'))
    callback.searchParams.set('state', 'not-the-state-that-was-sent')
    signInErrors.length = 0
    const res = await browser.fetch(callback.href)
    expect(res.status).toBe(403)
    expect(await res.text()).toContain('Sign-in failed')
    expect(browser.get('toolwire_approver')).toBeUndefined()
    // the operator is told which step failed, with no code, state or secret in it
    expect(signInErrors.map((e) => e.message)).toEqual([expect.stringMatching(/^toolwire: confirmation sign-in: the callback failed( \([A-Za-z0-9_.-]+\))?$/)])
    expect(signInErrors[0]!.message).not.toContain(callback.searchParams.get('code')!)
    // the issuer's `iss` (RFC 9207) must be this issuer's
    const other = await browser.fetch(path)
    const fromElsewhere = new URL(await issuer.signIn(other.headers.get('location')!, 'ada@example.com'))
    expect(fromElsewhere.searchParams.get('iss')).toBe(issuer.issuer)
    fromElsewhere.searchParams.set('iss', 'http://127.0.0.1:9')
    expect((await browser.fetch(fromElsewhere.href)).status).toBe(403)
    expect(browser.get('toolwire_approver')).toBeUndefined()
    // and a callback with no sign-in in flight at all (another browser)
    const stranger = new Browser(served.origin)
    expect((await stranger.fetch(`/confirm/callback?code=x&state=y&iss=${encodeURIComponent(issuer.issuer)}`)).status).toBe(403)
    expect(stranger.get('toolwire_approver')).toBeUndefined()
  })

  it('nothing secret reaches the pages or the cookies: no client secret, no token', async () => {
    const { browser, res } = await openSignedIn('secrets', 'ada@example.com')
    const html = await res.text()
    expect(html).not.toContain(CLIENT_SECRET)
    for (const c of browser.setCookies) {
      expect(c).not.toContain(CLIENT_SECRET)
      expect(c).not.toMatch(/eyJ/)
    }
  })

  it('approverNotCaller: the caller may not answer its own call, someone else may (links in memory and shared)', async () => {
    const store = new MemoryStore()
    const notCallerRuns: string[] = []
    const mine = manager(notCallerRuns, { store, approvalSecret: SECRET })
    const notCaller = new ConfirmSignIn({ issuer: issuer.issuer, audience: resource, publicUrl: served.origin, signIn: { clientId: issuer.clientId, clientSecret: CLIENT_SECRET, approverNotCaller: true }, secret: SECRET })
    const previous = served.pages!
    const caller = { subject: 'ada@example.com', issuer: issuer.issuer }
    try {
      for (const pages of [new ConfirmationPages(mine.tm, { signIn: notCaller }), new SharedConfirmationPages(mine.tm, { store, secret: SECRET, signIn: notCaller })]) {
        served.pages = pages
        // the call is made by ada's principal; the page answers as the operator, naming its approver
        const view = await mine.tm.call('set_password', { user: `own-${pages.constructor.name}` }, { principal: { ...caller, scopes: [] } })
        if (view.status !== 'needs_confirmation') throw new Error(view.status)
        const path = pages.open({ tool: 'set_password', view, caller })
        const ada = new Browser(served.origin)
        const refused = await signInAndOpen(ada, issuer, path, 'ada@example.com')
        expect(refused.status).toBe(403)
        expect(await refused.text()).toContain('who made this call: someone else must answer it')
        expect((await ada.post(path, { csrf: 'x', decision: 'approve' })).status).toBe(403)
        expect(notCallerRuns).toEqual([])
        const bob = new Browser(served.origin)
        const html = await (await signInAndOpen(bob, issuer, path, 'bob@example.com')).text()
        expect((await bob.post(path, { csrf: csrfOf(html), decision: 'approve' })).status).toBe(200)
        expect(notCallerRuns).toEqual([`own-${pages.constructor.name}`])
        expect(mine.decisions.at(-1)).toEqual({ approve: true, approvedBy: { subject: 'bob@example.com', issuer: issuer.issuer } })
        notCallerRuns.length = 0
        pages.close()
      }
    } finally {
      served.pages = previous
      await store.close()
    }
  })

  it('shared links (a store and an approval secret) need the same sign-in, and pass the approver', async () => {
    const store = new MemoryStore()
    const sharedRuns: string[] = []
    const shared = manager(sharedRuns, { store, approvalSecret: SECRET })
    const sharedSignIn = new ConfirmSignIn({
      issuer: issuer.issuer,
      audience: resource,
      publicUrl: served.origin,
      signIn: { clientId: issuer.clientId, clientSecret: CLIENT_SECRET, approverScope: (tool) => `approve:${tool}` },
      secret: SECRET,
    })
    const previous = served.pages!
    served.pages = new SharedConfirmationPages(shared.tm, { store, secret: SECRET, signIn: sharedSignIn })
    try {
      const path = await park(shared.tm, served.pages, 'shared-user')
      expect((await new Browser(served.origin).post(path, { csrf: 'x', decision: 'approve' })).status).toBe(403)
      expect(sharedRuns).toEqual([])
      const browser = new Browser(served.origin)
      const html = await (await signInAndOpen(browser, issuer, path, 'ada@example.com')).text()
      const res = await browser.post(path, { csrf: csrfOf(html), decision: 'approve' })
      expect(res.status).toBe(200)
      expect(sharedRuns).toEqual(['shared-user'])
      expect(shared.decisions.at(-1)).toEqual({ approve: true, approvedBy: { subject: 'ada@example.com', issuer: issuer.issuer } })
    } finally {
      served.pages.close()
      served.pages = previous
      await store.close()
    }
  })
})

describe('the sign-in options', () => {
  it('auth.signIn is checked: unknown and malformed keys are TypeErrors naming the key, never the secret', () => {
    expect(readSignInOptions({ clientId: 'page', clientSecret: 's', approverScope: 'approve:{tool}', approverNotCaller: true })).toEqual({
      clientId: 'page',
      clientSecret: 's',
      approverScope: 'approve:{tool}',
      approverNotCaller: true,
    })
    expect(() => readSignInOptions({ clientId: 'page', approverNotCaller: 'yes' })).toThrow(/auth\.signIn\.approverNotCaller/)
    expect(() => readSignInOptions({ clientId: 'page', clientSecrt: 's' })).toThrow(/has no option auth\.signIn\.clientSecrt \(its options: clientId, clientSecret, approverScope, approverNotCaller\)/)
    expect(() => readSignInOptions({})).toThrow(/option auth\.signIn\.clientId is required/)
    expect(() => readSignInOptions({ clientId: 'page', clientSecret: 42 })).toThrow(/option auth\.signIn\.clientSecret must be a non-empty string$/)
    expect(() => readSignInOptions({ clientId: 'page', approverScope: 'two words' })).toThrow(/auth\.signIn\.approverScope/)
    expect(() => readSignInOptions('page')).toThrow(TypeError)
    // the secret's value is never in a message
    for (const bad of [{ clientId: 'page', clientSecret: 'sekrit-value', other: 1 }, { clientId: 7, clientSecret: 'sekrit-value' }]) {
      expect(() => readSignInOptions(bad)).toThrow(expect.objectContaining({ message: expect.not.stringContaining('sekrit') }))
    }
  })

  it('a missing openid-client is a TypeError saying which package to install', async () => {
    const missing = Object.assign(new Error("Cannot find package 'openid-client' imported from /app/dist/mcp.js"), { code: 'ERR_MODULE_NOT_FOUND' })
    await expect(loadOpenIdClient(() => Promise.reject(missing))).rejects.toThrow(new TypeError("toolwire: confirmation sign-in needs the 'openid-client' package, which is not installed: npm install openid-client"))
    // any other failure is rethrown as it is
    const other = new Error('boom')
    await expect(loadOpenIdClient(() => Promise.reject(other))).rejects.toBe(other)
  })

  it('an unreachable issuer answers 503, an approverScope giving no scope token 500, and nothing runs', async () => {
    const cases = [
      { signIn: { clientId: 'page' }, status: 503, text: /Sign-in unavailable.*Nothing was run/s, told: ['toolwire: confirmation sign-in: discovering the issuer failed'] },
      { signIn: { clientId: 'page', approverScope: () => 'two words' }, status: 500, text: /approver scope of this call could not be worked out.*Nothing was run/s, told: [] },
    ]
    for (const { signIn, status, text, told } of cases) {
      const errors: Error[] = []
      const runs: string[] = []
      const { tm } = manager(runs)
      const served = await listen()
      served.pages = new ConfirmationPages(tm, { signIn: new ConfirmSignIn({ issuer: 'http://127.0.0.1:9', audience: `${served.origin}/mcp`, publicUrl: served.origin, signIn, onError: (e) => errors.push(e) }) })
      try {
        const path = await park(tm, served.pages, 'nobody')
        const browser = new Browser(served.origin)
        const res = await browser.fetch(path)
        expect(res.status).toBe(status)
        expect(await res.text()).toMatch(text)
        if (status === 500) expect((await browser.post(path, { csrf: 'x', decision: 'approve' })).status).toBe(500)
        expect(runs).toEqual([])
        expect(errors.map((e) => e.message.replace(/ \(.*\)$/, ''))).toEqual(told)
      } finally {
        served.pages.close()
        await new Promise<void>((r) => served.http.close(() => r()))
      }
    }
  })
})
