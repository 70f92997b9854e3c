/**
 * The confirmation page: a call that needs confirmation, served to a client that cannot
 * ask the user itself, gets a single-use approval URL (`/confirm/<secret>`) where a
 * person sees the tool, its summary and its redacted changes, and approves or denies it.
 *
 * State is in this process (a `Map`): the link works on the instance that made it, until
 * it is used, the confirmation is answered another way, or it expires. No MCP SDK import.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { CallResult } from '../core/view.js'
import type { FieldChange } from '../core/types.js'
import type { ServableManager } from './meta.js'

/** What the page shows of a call waiting for confirmation. */
export interface ConfirmationLinkInput {
  readonly tool: string
  readonly view: Extract<CallResult, { status: 'needs_confirmation' }>
}

interface Entry {
  readonly confirmId: string
  readonly tool: string
  readonly summary: string
  readonly changes: readonly FieldChange[] | undefined
  readonly csrf: string
  readonly expiresAt: number
}

/** The path prefix of approval links. */
export const CONFIRM_PATH = '/confirm/'
const SECRET_SHAPE = /^[A-Za-z0-9_-]{43}$/
/** The largest form body the page accepts. */
const FORM_MAX_BYTES = 4096

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!)
}

function shown(value: unknown): string {
  if (value === undefined) return '—'
  const text = typeof value === 'string' ? value : JSON.stringify(value)
  return text.length > 2000 ? `${text.slice(0, 2000)}…` : text
}

const HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  // same-origin, not no-referrer: with no-referrer the browser sends `Origin: null` on the form's POST
  'referrer-policy': 'same-origin',
}

function page(res: ServerResponse, status: number, title: string, body: string): void {
  const html =
    '<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">' +
    `<title>${escapeHtml(title)}</title><style>body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem;color:#222}` +
    'table{border-collapse:collapse;width:100%;margin:1rem 0}td,th{border:1px solid #ccc;padding:.3rem .5rem;text-align:left;vertical-align:top;word-break:break-all}' +
    'button{font-size:1rem;padding:.5rem 1.5rem;margin-right:1rem;border-radius:4px;border:1px solid #888;cursor:pointer}#approve{background:#1a7f37;color:#fff}#deny{background:#fff}' +
    `code{background:#f3f3f3;padding:0 .2rem}</style></head><body><h1>${escapeHtml(title)}</h1>${body}</body></html>`
  res.writeHead(status, { ...HEADERS, 'content-length': Buffer.byteLength(html) })
  res.end(html)
}

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a)
  const y = Buffer.from(b)
  return x.length === y.length && timingSafeEqual(x, y)
}

function readForm(req: IncomingMessage): Promise<URLSearchParams | undefined> {
  return new Promise((resolve, reject) => {
    let size = 0
    const chunks: Buffer[] = []
    let over = false
    req.on('data', (chunk: Buffer) => {
      size += chunk.length
      if (size > FORM_MAX_BYTES) over = true
      else chunks.push(chunk)
    })
    req.on('end', () => resolve(over ? undefined : new URLSearchParams(Buffer.concat(chunks).toString('utf8'))))
    req.on('error', reject)
  })
}

/** Options of `ConfirmationPages`. */
export interface ConfirmationPagesOptions {
  /** How long a link stays valid, in ms (default 10 minutes, the manager's default `confirmTtlMs`). */
  readonly ttlMs?: number
  /** The most links open at once (default 10 000); the oldest is dropped beyond. */
  readonly max?: number
}

/** Single-use approval links for calls waiting for confirmation, and the page behind them. */
export class ConfirmationPages {
  private readonly entries = new Map<string, Entry>()
  private readonly byConfirmId = new Map<string, string>()
  private readonly waiters = new Map<string, Set<(view: CallResult | undefined) => void>>()
  private readonly ttlMs: number
  private readonly max: number
  private listening = false

  constructor(
    private readonly tm: ServableManager,
    options: ConfirmationPagesOptions = {},
  ) {
    this.ttlMs = options.ttlMs ?? 10 * 60_000
    this.max = options.max ?? 10_000
  }

  /** A confirmation answered any other way (elicitation, `tm.confirm`) closes its link. */
  private readonly onConfirmation = (event: { confirmId: string; result?: CallResult }): void => {
    const secret = this.byConfirmId.get(event.confirmId)
    if (secret !== undefined) this.drop(secret, event.result)
  }

  /** Closes a link; whoever waits for its decision gets `decided` (undefined: none was made). */
  private drop(secret: string, decided?: CallResult): void {
    const entry = this.entries.get(secret)
    if (entry !== undefined) {
      this.entries.delete(secret)
      this.byConfirmId.delete(entry.confirmId)
    }
    const waiting = this.waiters.get(secret)
    this.waiters.delete(secret)
    for (const resolve of waiting ?? []) resolve(decided)
  }

  /**
   * Resolves with the call's result once a decision is made on the page or any other
   * way, or undefined when the link expires, is dropped, or `signal` aborts.
   */
  decided(path: string, signal: AbortSignal): Promise<CallResult | undefined> {
    const secret = path.slice(CONFIRM_PATH.length)
    const entry = this.entries.get(secret)
    if (entry === undefined || signal.aborted) return Promise.resolve(undefined)
    return new Promise((resolve) => {
      const done = (view: CallResult | undefined): void => {
        clearTimeout(timer)
        signal.removeEventListener('abort', onAbort)
        this.waiters.get(secret)?.delete(done)
        resolve(view)
      }
      const onAbort = (): void => done(undefined)
      const timer = setTimeout(() => this.drop(secret), Math.max(0, entry.expiresAt - Date.now()) + 1)
      timer.unref()
      signal.addEventListener('abort', onAbort, { once: true })
      let set = this.waiters.get(secret)
      if (set === undefined) this.waiters.set(secret, (set = new Set()))
      set.add(done)
    })
  }

  /** Opens a link for a call waiting for confirmation; returns its path (`/confirm/<secret>`). */
  open({ tool, view }: ConfirmationLinkInput): string {
    if (!this.listening) {
      this.tm.on('confirmation', this.onConfirmation as never)
      this.listening = true
    }
    const now = Date.now()
    for (const [secret, entry] of this.entries) if (entry.expiresAt < now) this.drop(secret)
    while (this.entries.size >= this.max) this.drop(this.entries.keys().next().value as string)
    const secret = randomBytes(32).toString('base64url')
    this.entries.set(secret, {
      confirmId: view.confirmId,
      tool,
      summary: view.summary,
      changes: view.changes,
      csrf: randomBytes(32).toString('base64url'),
      expiresAt: now + this.ttlMs,
    })
    this.byConfirmId.set(view.confirmId, secret)
    return `${CONFIRM_PATH}${secret}`
  }

  /** How many links are open. */
  size(): number {
    return this.entries.size
  }

  /** Stops listening to the manager. */
  close(): void {
    if (this.listening) this.tm.off('confirmation', this.onConfirmation as never)
    this.listening = false
    for (const secret of [...this.entries.keys()]) this.drop(secret)
  }

  /** Serves `GET` (the page) and `POST` (the decision) of `/confirm/<secret>`. */
  async handle(req: IncomingMessage, res: ServerResponse, pathname: string): Promise<void> {
    const secret = pathname.slice(CONFIRM_PATH.length)
    const entry = SECRET_SHAPE.test(secret) ? this.entries.get(secret) : undefined
    if (entry === undefined || entry.expiresAt < Date.now()) {
      if (entry !== undefined) this.drop(secret)
      if (req.method === 'POST') req.resume()
      page(res, 410, 'This link is no longer valid', '<p>It was already used, the call was answered another way, or it expired. Nothing was run from this page.</p>')
      return
    }
    if (req.method === 'GET' || req.method === 'HEAD') {
      const changes =
        entry.changes === undefined || entry.changes.length === 0
          ? ''
          : '<h2>Changes</h2><table><thead><tr><th>field</th><th>before</th><th>after</th></tr></thead><tbody>' +
            entry.changes.map((c) => `<tr><td><code>${escapeHtml(c.path)}</code></td><td>${escapeHtml(shown(c.before))}</td><td>${escapeHtml(shown(c.after))}</td></tr>`).join('') +
            '</tbody></table>'
      page(
        res,
        200,
        'Confirm a tool call',
        `<p>An assistant wants to run <strong id="tool">${escapeHtml(entry.tool)}</strong>:</p>` +
          `<p id="summary" style="font-size:1.2rem">${escapeHtml(entry.summary)}</p>${changes}` +
          `<form method="post"><input type="hidden" name="csrf" value="${entry.csrf}">` +
          '<button id="approve" type="submit" name="decision" value="approve">Approve</button>' +
          '<button id="deny" type="submit" name="decision" value="deny">Deny</button></form>' +
          `<p><small>This link works once and expires at ${new Date(entry.expiresAt).toISOString()}.</small></p>`,
      )
      return
    }
    if (req.method !== 'POST') {
      res.writeHead(405, { allow: 'GET, POST', 'content-type': 'text/plain; charset=utf-8' })
      res.end('method not allowed\n')
      return
    }
    const type = req.headers['content-type'] ?? ''
    const form = type.startsWith('application/x-www-form-urlencoded') ? await readForm(req) : (req.resume(), undefined)
    const csrf = form?.get('csrf') ?? ''
    const decision = form?.get('decision')
    if (form === undefined || !sameSecret(csrf, entry.csrf) || (decision !== 'approve' && decision !== 'deny')) {
      page(res, 403, 'Not accepted', '<p>The form was not sent from this page. Open the link again.</p>')
      return
    }
    // single use: gone before anything runs, whatever happens next (its waiters stay until the result)
    const waiting = this.waiters.get(secret)
    this.waiters.delete(secret)
    this.drop(secret)
    const approve = decision === 'approve'
    let view: CallResult
    try {
      view = await this.tm.confirm(entry.confirmId, { approve })
    } catch {
      for (const resolve of waiting ?? []) resolve(undefined)
      page(res, 500, 'Something went wrong', '<p>The decision could not be recorded.</p>')
      return
    }
    for (const resolve of waiting ?? []) resolve(view)
    const outcome =
      view.status === 'refused'
        ? `<p>Not run: <code id="outcome">${escapeHtml(view.code)}</code> (${escapeHtml(view.message)}).</p>`
        : `<p>The call ran: <code id="outcome">${escapeHtml(view.status)}</code>.</p>`
    page(res, 200, approve ? 'Approved' : 'Denied', `<p id="summary">${escapeHtml(entry.summary)}</p>${outcome}<p>You can close this page.</p>`)
  }
}
