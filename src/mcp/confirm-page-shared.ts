/**
 * Approval links any instance on a shared store serves (`SharedConfirmationPages`): the link
 * carries the parked row's id, the `confirmId` and a short page, sealed under a key derived
 * from the approval secret the instances share; whether it is still good is the parked call's
 * state in the store, whose claim makes it single-use across instances.
 */
import { createHmac } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { deflateRawSync, inflateRawSync } from 'node:zlib'
import { viewOf, type CallResult } from '../core/view.js'
import type { FieldChange } from '../core/types.js'
import type { ToolStore } from '../runtime/store/types.js'
import { approvalSecretList, verifyApproval, type ApprovalSecrets } from '../runtime/store/approval.js'
import { confirmationOutcome, confirmedElsewhereRunning, type ConfirmationOutcome } from '../runtime/durable/parking.js'
import { refused, STORE_UNAVAILABLE } from '../runtime/durable/shared.js'
import { STORE_TEXTS } from '../core/texts.js'
import type { ServableManager } from './meta.js'
import { openBytes, sealBytes, SEALED_MIN_BYTES } from './seal.js'
import { confirmPage, gonePage, outcomePage, page, PAGE_SUMMARY_CHARS, type PageEntry } from './confirm-html.js'
import { SIGN_IN_CALLBACK, type ConfirmSignIn } from './auth/signin.js'
import { approverOf, callerKeyOf, CONFIRM_PATH, readDecision, type ConfirmationLinkInput, type ConfirmationLinks, type ConfirmationPagesOptions } from './confirm-links.js'

/** Options of `SharedConfirmationPages`. */
export interface SharedConfirmationPagesOptions extends ConfirmationPagesOptions {
  /** The manager's durable store: the parked confirmation's state there decides whether a link is still good. */
  readonly store: ToolStore
  /**
   * The secret every instance shares (the manager's `approvalSecret`, at least 16 bytes): it
   * seals the links and makes their CSRF tokens. Or several, newest first (rotation): the
   * first seals new links, any opens one (its CSRF token is made with the secret that opens it).
   */
  readonly secret: ApprovalSecrets
  /** How often a page decision made on another instance is looked for in the store, in ms (default 1000). */
  readonly pollMs?: number
  /**
   * How long a client waiting for a decision (URL elicitation) waits for the run of a call
   * approved on another instance, in ms (default 30 000): then it is answered refused
   * `confirmation_running` (the call runs there, once), never left hanging.
   */
  readonly outcomeWaitMs?: number
}

/** A sealed link's content: what the page shows and what `tm.confirm` takes. */
interface SealedEntry extends PageEntry {
  /** The `confirmId` the manager handed out (a signed token with an approval secret). */
  readonly handle: string
  /** The parked confirmation's id in the store. */
  readonly id: string
  /** {@link principalKey} of the caller, when the call had a principal. */
  readonly callerKey?: string
}

const SEAL_VERSION = 'p1'
/** A link's associated data: its format's version, so no other sealed token opens as a link. */
const SEAL_AAD = Buffer.from(SEAL_VERSION)
/**
 * The largest sealed page (compressed) a link carries: the summary is clipped to
 * `PAGE_SUMMARY_CHARS`, then the changes are left out, then the summary is clipped to
 * `SEAL_MIN_SUMMARY_CHARS`, so a link stays near 2 KB whatever the input's size (a default
 * summary holds the whole input; the input itself is read from the store on approval).
 */
const SEAL_MAX_BYTES = 1500
const SEAL_MIN_SUMMARY_CHARS = 200
const SHARED_SHAPE = /^p1\.[A-Za-z0-9_-]{40,12000}$/
/** Refusal codes `tm.confirm` answers for a link that was already used, or expired, on any instance. */
const GONE_CODES = new Set(['confirmation_used', 'confirmation_expired', 'confirmation_unknown'])

/** The keys a link is sealed and its CSRF token made with, derived from one approval secret. */
interface LinkKeys {
  readonly seal: Buffer
  readonly csrf: Buffer
}

function linkKeys(secret: Buffer): LinkKeys {
  return {
    seal: createHmac('sha256', secret).update('toolwire/confirm-page/seal/v1').digest(),
    csrf: createHmac('sha256', secret).update('toolwire/confirm-page/csrf/v1').digest(),
  }
}

/** The entry of an opened link's page; `undefined` when it does not unpack. */
function unpack(plain: Buffer): SealedEntry | undefined {
  try {
    const [handle, id, tool, summary, expiresAt, changes, summaryLength, callerKey] = JSON.parse(inflateRawSync(plain, { maxOutputLength: 1 << 20 }).toString('utf8')) as [
      string,
      string,
      string,
      string,
      number,
      FieldChange[] | null,
      number | null | undefined,
      string | undefined,
    ]
    const entry = { handle, id, tool, summary, expiresAt, changes: changes ?? undefined, ...(typeof summaryLength === 'number' ? { summaryLength } : {}) }
    return typeof callerKey === 'string' ? { ...entry, callerKey } : entry
  } catch {
    return undefined
  }
}

/**
 * Approval links any instance on a shared store can serve: nothing a link needs is held in
 * memory. The link is `/confirm/p1.<sealed>`: the parked row's id, the `confirmId`, the tool,
 * the expiry and a short page (the summary clipped to `PAGE_SUMMARY_CHARS`, the redacted
 * changes when they fit), compressed and sealed with AES-256-GCM under a key derived from
 * the shared secret. Its CSRF token is an HMAC of the link under another derived key. With
 * several secrets (newest first) a link is sealed under the first and opened by whichever
 * one sealed it, whose key then makes its CSRF token, so every instance listing that secret
 * serves the same page and accepts the same form; a link under no listed secret is refused
 * as a forged one. A link
 * is good while its confirmation is parked in the store; the decision goes through
 * `tm.confirm`, whose claim in the store lets exactly one decision apply across instances.
 */
export class SharedConfirmationPages implements ConfirmationLinks {
  /** Newest first: the first seals, any opens. */
  private readonly keys: readonly LinkKeys[]
  private readonly store: ToolStore
  private readonly secrets: readonly Buffer[]
  private readonly ttlMs: number
  private readonly pollMs: number
  private readonly outcomeWaitMs: number
  private readonly signIn: ConfirmSignIn | undefined
  /** The store's clock (its `now` option), the one its expiries are dated with; `Date.now` for a store without one. */
  private readonly now: () => number
  /** Waiters for a decision, by `confirmId`: resolved by a decision made in this process. */
  private readonly waiters = new Map<string, Set<(view: CallResult | undefined) => void>>()
  /** The `confirmId`s being decided through this process's page (their run is not another instance's). */
  private readonly deciding = new Map<string, number>()
  private listening = false

  constructor(
    private readonly tm: ServableManager,
    options: SharedConfirmationPagesOptions,
  ) {
    this.secrets = approvalSecretList(options.secret)
    this.keys = this.secrets.map(linkKeys)
    this.store = options.store
    this.ttlMs = options.ttlMs ?? 10 * 60_000
    this.pollMs = options.pollMs ?? 1000
    this.outcomeWaitMs = options.outcomeWaitMs ?? 30_000
    this.signIn = options.signIn
    const store = options.store
    const clock = store.now
    this.now = typeof clock === 'function' ? () => clock.call(store) : Date.now
  }

  private readonly onConfirmation = (event: { confirmId: string; result?: CallResult }): void => this.settle(event.confirmId, event.result)

  private settle(handle: string, view: CallResult | undefined): void {
    const waiting = this.waiters.get(handle)
    this.waiters.delete(handle)
    for (const resolve of waiting ?? []) resolve(view)
  }

  private seal(entry: SealedEntry): string {
    const length = entry.summary.length
    const packed = (summaryChars: number, changes: boolean): Buffer =>
      deflateRawSync(
        Buffer.from(
          JSON.stringify([
            entry.handle,
            entry.id,
            entry.tool,
            entry.summary.slice(0, summaryChars),
            entry.expiresAt,
            changes ? (entry.changes ?? null) : null,
            length > summaryChars ? length : null,
            ...(entry.callerKey === undefined ? [] : [entry.callerKey]),
          ]),
          'utf8',
        ),
      )
    // a link must stay a short URL: what does not fit is left to the client's own view of the call
    let plain = packed(PAGE_SUMMARY_CHARS, true)
    if (plain.length > SEAL_MAX_BYTES) plain = packed(PAGE_SUMMARY_CHARS, false)
    if (plain.length > SEAL_MAX_BYTES) plain = packed(SEAL_MIN_SUMMARY_CHARS, false)
    const sealed = sealBytes(this.keys[0]!.seal, SEAL_AAD, plain)
    return `${SEAL_VERSION}.${sealed.toString('base64url')}`
  }

  /**
   * The entry a link seals, with the CSRF token its form needs (made with the key of the
   * secret that sealed it); `undefined` for anything not sealed under a listed secret.
   */
  private unseal(link: string): (SealedEntry & { readonly csrf: string }) | undefined {
    if (!SHARED_SHAPE.test(link)) return undefined
    const raw = Buffer.from(link.slice(SEAL_VERSION.length + 1), 'base64url')
    if (raw.length < SEALED_MIN_BYTES) return undefined
    // the link does not say which secret sealed it: each is tried, told apart by the GCM tag
    for (const keys of this.keys) {
      const plain = openBytes(keys.seal, SEAL_AAD, raw)
      if (plain === undefined) continue
      const entry = unpack(plain)
      return entry === undefined ? undefined : { ...entry, csrf: createHmac('sha256', keys.csrf).update(link).digest('base64url') }
    }
    return undefined
  }

  open({ tool, view, caller }: ConfirmationLinkInput): string {
    if (!this.listening) {
      this.tm.on('confirmation', this.onConfirmation as never)
      this.listening = true
    }
    // with an approval secret the confirmId is a signed token naming the parked id; without, it is the id
    const id = verifyApproval(this.secrets, view.confirmId)?.confirmationId ?? view.confirmId
    const link = this.seal({ handle: view.confirmId, id, tool, summary: view.summary, changes: view.changes, expiresAt: this.now() + this.ttlMs, ...callerKeyOf(caller) })
    return `${CONFIRM_PATH}${link}`
  }

  /**
   * Resolves with the call's result once it is decided, in this process or on another
   * instance (the store is looked at every `pollMs`: the outcome the instance that ran it
   * recorded, a denial, or an unknown outcome); a call approved elsewhere whose run there
   * takes longer than `outcomeWaitMs` resolves refused `confirmation_running`. Resolves
   * undefined when the link expires undecided, the confirmation is gone from the store, or
   * `signal` aborts.
   */
  decided(path: string, signal: AbortSignal): Promise<CallResult | undefined> {
    const entry = this.unseal(path.slice(CONFIRM_PATH.length))
    if (entry === undefined || signal.aborted) return Promise.resolve(undefined)
    return new Promise((resolve) => {
      let polling = false
      let expired = false
      let running: ReturnType<typeof setTimeout> | undefined
      const done = (view: CallResult | undefined): void => {
        clearTimeout(timer)
        clearTimeout(running)
        clearInterval(poll)
        signal.removeEventListener('abort', onAbort)
        this.waiters.get(entry.handle)?.delete(done)
        resolve(view)
      }
      const onAbort = (): void => done(undefined)
      const look = (): void => {
        if (polling) return
        polling = true
        const onOutcome = (outcome: ConfirmationOutcome | undefined): void => {
          polling = false
          switch (outcome?.state) {
            case 'gone':
              return done(undefined)
            case 'parked':
              if (expired) done(undefined)
              return
            case 'running':
              // a run through this process's page resolves through the `confirmation` event
              if (running === undefined && !this.deciding.has(entry.handle)) {
                running = setTimeout(() => done(viewOf(confirmedElsewhereRunning(), outcome.callId)), this.outcomeWaitMs)
                running.unref()
              }
              return
            case 'settled':
              // decided on another instance: the outcome it recorded, the view its run gave there
              return done(viewOf(outcome.result, outcome.callId))
            default:
              // a stored state this version does not know: the client is answered, never left waiting
              return unknownState()
          }
        }
        const unknownState = (): void => {
          polling = false
          done(viewOf(refused(STORE_UNAVAILABLE, STORE_TEXTS.confirmationStateUnknown), undefined))
        }
        confirmationOutcome(this.store, entry.id).then(
          (outcome) => {
            try {
              onOutcome(outcome)
            } catch {
              unknownState()
            }
          },
          () => {
            polling = false
            if (expired && running === undefined) done(undefined)
          },
        )
      }
      // past the link's expiry an undecided confirmation ends; a run already claimed is still waited for
      const timer = setTimeout(
        () => {
          expired = true
          look()
        },
        Math.max(0, entry.expiresAt - this.now()) + 1,
      )
      timer.unref()
      const poll = setInterval(look, this.pollMs)
      poll.unref()
      signal.addEventListener('abort', onAbort, { once: true })
      let set = this.waiters.get(entry.handle)
      if (set === undefined) this.waiters.set(entry.handle, (set = new Set()))
      set.add(done)
    })
  }

  close(): void {
    if (this.listening) this.tm.off('confirmation', this.onConfirmation as never)
    this.listening = false
    for (const handle of [...this.waiters.keys()]) this.settle(handle, undefined)
  }

  /** Whether the link's confirmation is still parked in the store; `undefined` when the store cannot say. */
  private async good(entry: SealedEntry): Promise<boolean | undefined> {
    // the store's clock: the one it dated the parked call's expiry with, and its claim compares with
    if (entry.expiresAt < this.now()) return false
    try {
      const call = await this.store.getParked(entry.id)
      return call !== undefined && call.kind === 'confirmation' && call.state === 'parked' && (call.expiresAt === null || call.expiresAt >= this.now())
    } catch {
      return undefined
    }
  }

  async handle(req: IncomingMessage, res: ServerResponse, pathname: string): Promise<void> {
    if (this.signIn !== undefined && pathname === SIGN_IN_CALLBACK) return this.signIn.callback(req, res)
    const link = pathname.slice(CONFIRM_PATH.length)
    const entry = this.unseal(link)
    const good = entry === undefined ? false : await this.good(entry)
    if (good !== true) {
      if (req.method === 'POST') req.resume()
      if (good === undefined) page(res, 503, 'Try again', '<p>The confirmation could not be read just now. Nothing was run. Reload the page in a moment.</p>')
      else gonePage(res)
      return
    }
    const approvedBy = await approverOf(this.signIn, req, res, pathname, entry!)
    if (approvedBy === null) return
    if (req.method === 'GET' || req.method === 'HEAD') {
      confirmPage(res, entry!, entry!.csrf, approvedBy)
      return
    }
    const decision = await readDecision(req, res, entry!.csrf)
    if (decision === undefined) return
    const approve = decision === 'approve'
    let view: CallResult
    const handle = entry!.handle
    this.deciding.set(handle, (this.deciding.get(handle) ?? 0) + 1)
    try {
      // single use across instances: the store's claim lets one decision apply; the others are refused
      view = await this.tm.confirm(handle, approvedBy === undefined ? { approve } : { approve, approvedBy })
    } catch {
      page(res, 500, 'Something went wrong', '<p>The decision could not be recorded.</p>')
      return
    } finally {
      const n = this.deciding.get(handle)! - 1
      if (n === 0) this.deciding.delete(handle)
      else this.deciding.set(handle, n)
    }
    if (view.status === 'refused' && GONE_CODES.has(view.code)) {
      gonePage(res)
      return
    }
    this.settle(entry!.handle, view)
    outcomePage(res, approve, entry!, view)
  }
}
