/**
 * The confirmation page: a call that needs confirmation, served to a client that cannot
 * ask the user itself, gets a single-use approval URL (`/confirm/<secret>`) where a
 * person sees the tool, its summary and its redacted changes, and approves or denies it.
 *
 * `ConfirmationPages` keeps its links in this process (a `Map`): a link works on the
 * instance that made it, until it is used, the confirmation is answered another way, or it
 * expires. `SharedConfirmationPages` (a manager with a durable store, and the approval
 * secret its instances share) keeps nothing in memory that a link needs: the link carries
 * the parked row's id, the `confirmId` and a short page (the summary clipped, the changes
 * only when they fit), sealed (AES-256-GCM under a key derived from the secret), so it stays
 * a couple of kilobytes whatever the input's size; the input itself is read from the store
 * when the call is approved. The CSRF token is an HMAC of the link under the secret, and
 * whether the link is still good is the parked call's state in the store, whose claim makes
 * it single-use across instances. With several secrets (rotation, newest first) the first
 * seals new links and any opens one. With `signIn` (auth/signin.ts) only a signed-in approver
 * answers, and the decision names them. No MCP SDK import.
 *
 * This module is `ConfirmationPages`; `SharedConfirmationPages` is in confirm-page-shared.ts,
 * what both share (the link types, the form, the sign-in check) in confirm-links.ts.
 */
import { randomBytes } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { CallResult } from '../core/view.js'
import type { FieldChange } from '../core/types.js'
import type { ServableManager } from './meta.js'
import { confirmPage, gonePage, outcomePage, page } from './confirm-html.js'
import { SIGN_IN_CALLBACK, type ConfirmSignIn } from './auth/signin.js'
import { approverOf, callerKeyOf, CONFIRM_PATH, readDecision, type ConfirmationLinkInput, type ConfirmationPagesOptions } from './confirm-links.js'

export { CONFIRM_PATH }
export type { ConfirmationLink, ConfirmationLinkInput, ConfirmationLinks, ConfirmationPagesOptions } from './confirm-links.js'
export { SharedConfirmationPages, type SharedConfirmationPagesOptions } from './confirm-page-shared.js'

interface Entry {
  readonly confirmId: string
  readonly tool: string
  readonly summary: string
  readonly changes: readonly FieldChange[] | undefined
  readonly csrf: string
  readonly expiresAt: number
  /** {@link principalKey} of the caller, when the call had a principal. */
  readonly callerKey?: string
}

const SECRET_SHAPE = /^[A-Za-z0-9_-]{43}$/

/** Single-use approval links for calls waiting for confirmation, and the page behind them. */
export class ConfirmationPages {
  private readonly entries = new Map<string, Entry>()
  private readonly byConfirmId = new Map<string, string>()
  private readonly waiters = new Map<string, Set<(view: CallResult | undefined) => void>>()
  private readonly ttlMs: number
  private readonly max: number
  private readonly signIn: ConfirmSignIn | undefined
  private listening = false

  constructor(
    private readonly tm: ServableManager,
    options: ConfirmationPagesOptions = {},
  ) {
    this.ttlMs = options.ttlMs ?? 10 * 60_000
    this.max = options.max ?? 10_000
    this.signIn = options.signIn
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
  open({ tool, view, caller }: ConfirmationLinkInput): string {
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
      ...callerKeyOf(caller),
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
    if (this.signIn !== undefined && pathname === SIGN_IN_CALLBACK) return this.signIn.callback(req, res)
    const secret = pathname.slice(CONFIRM_PATH.length)
    const entry = SECRET_SHAPE.test(secret) ? this.entries.get(secret) : undefined
    if (entry === undefined || entry.expiresAt < Date.now()) {
      if (entry !== undefined) this.drop(secret)
      if (req.method === 'POST') req.resume()
      gonePage(res)
      return
    }
    const approvedBy = await approverOf(this.signIn, req, res, pathname, entry)
    if (approvedBy === null) return
    if (req.method === 'GET' || req.method === 'HEAD') {
      confirmPage(res, entry, entry.csrf, approvedBy)
      return
    }
    const decision = await readDecision(req, res, entry.csrf)
    if (decision === undefined) return
    // single use: gone before anything runs, whatever happens next (its waiters stay until the result)
    const waiting = this.waiters.get(secret)
    this.waiters.delete(secret)
    this.drop(secret)
    const approve = decision === 'approve'
    let view: CallResult
    try {
      view = await this.tm.confirm(entry.confirmId, approvedBy === undefined ? { approve } : { approve, approvedBy })
    } catch {
      for (const resolve of waiting ?? []) resolve(undefined)
      page(res, 500, 'Something went wrong', '<p>The decision could not be recorded.</p>')
      return
    }
    for (const resolve of waiting ?? []) resolve(view)
    outcomePage(res, approve, entry, view)
  }
}
