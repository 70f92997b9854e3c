/**
 * Who approved: the confirmation page's sign-in (`auth.signIn`). Without it the link is the
 * credential. With it, a person opening a link signs in with the same issuer first (OpenID
 * Connect authorization code with PKCE S256, `state` and `nonce`, through `openid-client`,
 * loaded only when sign-in is on), and only a signed-in approver holding the approver scope
 * may approve or deny; the decision carries `approvedBy` (the approver's subject and issuer).
 *
 * Two cookies, both sealed (AES-256-GCM, seal.ts) under a key derived from the approval
 * secret (or, without one, a key of this process), `HttpOnly`, `SameSite=Lax`, `Path=/confirm/`,
 * `Secure` on https: the sign-in in flight (state, PKCE verifier, nonce and the link to return
 * to, 5 minutes) and the approver (subject, issuer, granted scopes, 10 minutes). No token is
 * kept: the access and ID tokens are read once at the callback and dropped. No MCP SDK import.
 */
import { createHmac, randomBytes } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { approvalSecretList, type ApprovalSecrets } from '../../runtime/store/approval.js'
import { isScopeToken, principalKey, principalRef, type PrincipalRef } from '../../core/principal.js'
import { escapeHtml, page } from '../confirm-html.js'
import { isBoolean, isNonEmptyString, type OptionRules } from '../options.js'
import { openBytes, sealBytes, SEALED_MIN_BYTES } from '../seal.js'

/** `auth.signIn`: the confirmation page's sign-in with the issuer. */
export interface ConfirmSignInOptions {
  /** The page's OAuth client at the issuer; its redirect URI is `<public origin>/confirm/callback`. */
  readonly clientId: string
  /** The client's secret (sent with HTTP Basic); without one the client is public (PKCE only). */
  readonly clientSecret?: string
  /**
   * The scope an approver must hold, asked for at sign-in: a name (`{tool}` in it is replaced
   * with the tool's name: `approve:{tool}`), or a function of the tool. Without it, anyone
   * who signs in with the issuer may approve.
   */
  readonly approverScope?: string | ((tool: string) => string)
  /** `true`: whoever made the call (same subject and issuer) may not answer it; someone else must. */
  readonly approverNotCaller?: boolean
}

/** What the page's sign-in needs (the lead's `serveHttp` wiring passes these). */
export interface ConfirmSignInConfig {
  /** The issuer, exactly as its metadata and ID tokens name it. */
  readonly issuer: string
  /** The MCP server's audience, sent as `resource` (RFC 8707); or a function giving it once the server listens. */
  readonly audience: string | (() => string)
  /** The server's public URL, or a function giving it once the server listens: its origin makes the callback URL. */
  readonly publicUrl: string | (() => string)
  readonly signIn: ConfirmSignInOptions
  /** The approval secret(s), newest first: the cookies are sealed under a key derived from the first; without, a key of this process. */
  readonly secret?: ApprovalSecrets
  /**
   * Told why a sign-in failed (the issuer unreachable, a refused callback): an Error naming the
   * step and the OAuth error code, never a code, token, state or secret.
   */
  readonly onError?: (error: Error) => void
}

/** The path the issuer redirects back to. */
export const SIGN_IN_CALLBACK = '/confirm/callback'
const FLOW_COOKIE = 'toolwire_signin'
const APPROVER_COOKIE = 'toolwire_approver'
const FLOW_MS = 5 * 60_000
const APPROVER_MS = 10 * 60_000
const FLOW_AAD = Buffer.from('toolwire/confirm-sign-in/flow/v1')
const APPROVER_AAD = Buffer.from('toolwire/confirm-sign-in/approver/v1')
/** A link the callback may return to: a confirmation link's path, nothing else (no open redirect). */
const RETURN_PATH = /^\/confirm\/[A-Za-z0-9._-]{1,12000}$/
const COOKIE_MAX = 8192
/** The most granted scopes the approver cookie keeps (a cookie must stay under 4 KB). */
const MAX_COOKIE_SCOPES = 32
/** What each `auth.signIn` option must be (any other key is refused). */
export const SIGN_IN_OPTION_RULES: OptionRules = Object.freeze({
  clientId: { must: 'a string of 1 to 1024 characters', ok: (v: unknown) => typeof v === 'string' && v.length > 0 && v.length <= 1024 },
  clientSecret: isNonEmptyString,
  approverScope: {
    must: 'a scope token (`{tool}` stands for the tool) or a function of the tool',
    ok: (v: unknown) => typeof v === 'function' || (typeof v === 'string' && isScopeToken(v.replaceAll('{tool}', 'x'))),
  },
  approverNotCaller: isBoolean,
})

/**
 * A frozen copy of `auth.signIn`.
 * @throws TypeError naming `auth.signIn.<key>` for an unknown, missing or malformed key (never its value: one is a secret).
 */
export function readSignInOptions(value: unknown): ConfirmSignInOptions {
  const fn = 'toolwire: serveHttp()'
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new TypeError(`${fn} option auth.signIn must be an object { clientId, clientSecret?, approverScope?, approverNotCaller? }`)
  const o = value as Record<string, unknown>
  for (const key of Object.keys(o)) {
    if (!Object.hasOwn(SIGN_IN_OPTION_RULES, key)) throw new TypeError(`${fn} has no option auth.signIn.${key.slice(0, 40)} (its options: ${Object.keys(SIGN_IN_OPTION_RULES).join(', ')})`)
  }
  if (o.clientId === undefined) throw new TypeError(`${fn} option auth.signIn.clientId is required`)
  for (const [key, { ok, must }] of Object.entries(SIGN_IN_OPTION_RULES)) {
    if (o[key] !== undefined && !ok(o[key])) throw new TypeError(`${fn} option auth.signIn.${key} must be ${must}`)
  }
  const out: { -readonly [K in keyof ConfirmSignInOptions]: ConfirmSignInOptions[K] } = { clientId: o.clientId as string }
  if (o.clientSecret !== undefined) out.clientSecret = o.clientSecret as string
  if (o.approverScope !== undefined) out.approverScope = o.approverScope as string | ((tool: string) => string)
  if (o.approverNotCaller !== undefined) out.approverNotCaller = o.approverNotCaller as boolean
  return Object.freeze(out)
}

/** `openid-client`'s module (types only: it is imported when sign-in is on). */
type OpenIdClient = typeof import('openid-client')
type Configuration = import('openid-client').Configuration

/** Runs `load` (the import of `openid-client`); a missing package is a TypeError saying so, anything else is rethrown. */
export async function loadOpenIdClient<T>(load: () => Promise<T>): Promise<T> {
  try {
    return await load()
  } catch (err) {
    const e = err as { code?: unknown; message?: unknown } | null
    const missing = (e?.code === 'ERR_MODULE_NOT_FOUND' || e?.code === 'MODULE_NOT_FOUND') && typeof e.message === 'string' && /['"]openid-client['"/]/.test(e.message)
    if (missing) throw new TypeError("toolwire: confirmation sign-in needs the 'openid-client' package, which is not installed: npm install openid-client", { cause: err })
    throw err
  }
}

/** An approver signed in on this browser. */
interface Approver {
  readonly subject: string
  readonly issuer: string
  readonly scopes: readonly string[]
}

/** The cookies of a request, by name (the first of each). */
function cookiesOf(req: IncomingMessage): Map<string, string> {
  const out = new Map<string, string>()
  const header = req.headers.cookie
  if (header === undefined || header.length > COOKIE_MAX * 4) return out
  for (const part of header.split(';')) {
    const at = part.indexOf('=')
    if (at <= 0) continue
    const name = part.slice(0, at).trim()
    if (!out.has(name)) out.set(name, part.slice(at + 1).trim())
  }
  return out
}

/** A value given now, or by a function once the server listens. */
function known(value: string | (() => string)): string {
  return typeof value === 'function' ? value() : value
}

/** An Error for `onError`: the step that failed and, when the issuer said, its OAuth error code (nothing else of it). */
function signInError(step: string, err: unknown): Error {
  const e = err as { error?: unknown; code?: unknown } | null
  const code = typeof e?.error === 'string' ? e.error : typeof e?.code === 'string' ? e.code : undefined
  const shown = code !== undefined && /^[A-Za-z0-9_.-]{1,64}$/.test(code) ? ` (${code})` : ''
  return new Error(`toolwire: confirmation sign-in: ${step} failed${shown}`)
}

function sendRefused(res: ServerResponse, status: number, title: string, body: string, headers: Record<string, string | string[]> = {}): void {
  page(res, status, title, `${body}<p>Nothing was run.</p>`, headers)
}

/**
 * The page's sign-in: sends a person without an approver cookie to the issuer, finishes the
 * sign-in at `/confirm/callback`, and tells the page who approves, or answers for it.
 */
export class ConfirmSignIn {
  private readonly keys: readonly Buffer[]
  private readonly options: ConfirmSignInOptions
  private client: OpenIdClient | undefined
  private discovered: Promise<Configuration> | undefined

  constructor(private readonly config: ConfirmSignInConfig) {
    this.options = readSignInOptions(config.signIn)
    const secrets = config.secret === undefined ? [randomBytes(32)] : approvalSecretList(config.secret)
    this.keys = secrets.map((secret) => createHmac('sha256', secret).update('toolwire/confirm-sign-in/v1').digest())
  }

  /** Loads `openid-client` (call it at start-up, so a missing package is told then). @throws TypeError when it is not installed. */
  async load(): Promise<void> {
    this.client ??= await loadOpenIdClient(() => import('openid-client'))
  }

  /**
   * The scope an approver of `tool` must hold, or undefined when any signed-in person may approve.
   * @throws TypeError when `approverScope` (a function, or a name with `{tool}`) does not give a scope token.
   */
  requiredScope(tool: string): string | undefined {
    const option = this.options.approverScope
    if (option === undefined) return undefined
    const scope: unknown = typeof option === 'function' ? option(tool) : option.replaceAll('{tool}', tool)
    if (!isScopeToken(scope)) throw new TypeError(`toolwire: auth.signIn.approverScope gave no scope token for the tool ${JSON.stringify(tool.slice(0, 64))}`)
    return scope
  }

  private origin(): string {
    return new URL(known(this.config.publicUrl)).origin
  }

  /** The issuer's metadata, discovered once (a failure is retried on the next request). */
  private async configuration(): Promise<{ client: OpenIdClient; config: Configuration }> {
    await this.load()
    const client = this.client!
    const issuer = new URL(this.config.issuer)
    this.discovered ??= client
      .discovery(
        issuer,
        this.options.clientId,
        undefined,
        this.options.clientSecret === undefined ? client.None() : client.ClientSecretBasic(this.options.clientSecret),
        // an http issuer is only ever a loopback one (the `auth` options refuse others)
        issuer.protocol === 'http:' ? { execute: [client.allowInsecureRequests] } : undefined,
      )
      .catch((err: unknown) => {
        this.discovered = undefined
        throw err
      })
    return { client, config: await this.discovered }
  }

  private cookie(name: string, value: string, maxAgeMs: number): string {
    const secure = this.origin().startsWith('https:') ? '; Secure' : ''
    return `${name}=${value}; Path=/confirm/; Max-Age=${Math.floor(maxAgeMs / 1000)}; HttpOnly; SameSite=Lax${secure}`
  }

  private seal(aad: Buffer, value: unknown): string {
    return sealBytes(this.keys[0]!, aad, Buffer.from(JSON.stringify(value), 'utf8')).toString('base64url')
  }

  private open(aad: Buffer, sealed: string | undefined): unknown {
    if (sealed === undefined || sealed.length > COOKIE_MAX || !/^[A-Za-z0-9_-]+$/.test(sealed)) return undefined
    const raw = Buffer.from(sealed, 'base64url')
    if (raw.length < SEALED_MIN_BYTES) return undefined
    for (const key of this.keys) {
      const plain = openBytes(key, aad, raw)
      if (plain === undefined) continue
      try {
        return JSON.parse(plain.toString('utf8')) as unknown
      } catch {
        return undefined
      }
    }
    return undefined
  }

  /** The approver this request's cookie names, when sealed here, unexpired and of this issuer. */
  private approverOf(req: IncomingMessage): Approver | undefined {
    const value = this.open(APPROVER_AAD, cookiesOf(req).get(APPROVER_COOKIE))
    if (!Array.isArray(value)) return undefined
    const [subject, issuer, scopes, expiresAt] = value as [unknown, unknown, unknown, unknown]
    if (typeof subject !== 'string' || issuer !== this.config.issuer || typeof expiresAt !== 'number' || expiresAt < Date.now()) return undefined
    if (!Array.isArray(scopes) || !scopes.every((s) => typeof s === 'string')) return undefined
    return { subject, issuer, scopes }
  }

  /**
   * Who approves on this request to the link at `path` (for `tool`, made by the principal
   * whose {@link principalKey} is `callerKey`): the approver's `PrincipalRef`, or undefined
   * once this has answered. A GET without an approver is sent to the issuer (302); a POST
   * without one is 403; an approver without the approver scope, or the caller itself with
   * `approverNotCaller`, is 403. Nothing runs when it answers.
   */
  async approver(req: IncomingMessage, res: ServerResponse, path: string, tool: string, callerKey?: string): Promise<PrincipalRef | undefined> {
    const approver = this.approverOf(req)
    let required: string | undefined
    try {
      required = this.requiredScope(tool)
    } catch {
      // the configuration is wrong: nobody may answer until it is fixed
      if (req.method === 'POST') req.resume()
      sendRefused(res, 500, 'Something went wrong', '<p>The approver scope of this call could not be worked out.</p>')
      return undefined
    }
    const isGet = req.method === 'GET' || req.method === 'HEAD'
    const again = new URL(req.url ?? path, 'http://x').searchParams.has('signin')
    if (isGet && (approver === undefined || again)) {
      await this.redirect(res, path, required, again)
      return undefined
    }
    if (approver === undefined) {
      if (!isGet) req.resume()
      sendRefused(res, 403, 'Sign in first', '<p>Only a signed-in approver can answer this call. Open the link again to sign in.</p>')
      return undefined
    }
    const why =
      required !== undefined && !approver.scopes.includes(required)
        ? `does not hold the scope <code id="scope">${escapeHtml(required)}</code> needed to answer this call`
        : this.options.approverNotCaller === true && callerKey !== undefined && principalKey(approver) === callerKey
          ? 'made this call: someone else must answer it'
          : undefined
    if (why !== undefined) {
      if (!isGet) req.resume()
      sendRefused(
        res,
        403,
        'Not allowed to approve',
        `<p>Signed in as <strong id="approver">${escapeHtml(approver.subject)}</strong>, who ${why}.</p><p><a href="${escapeHtml(path)}?signin">Sign in as someone else</a></p>`,
      )
      return undefined
    }
    return principalRef({ subject: approver.subject, issuer: approver.issuer })
  }

  /** 302 to the issuer's authorization endpoint, with the sign-in in flight sealed in a cookie. */
  private async redirect(res: ServerResponse, path: string, required: string | undefined, again: boolean): Promise<void> {
    let found: { client: OpenIdClient; config: Configuration }
    try {
      found = await this.configuration()
    } catch (err) {
      this.config.onError?.(signInError('discovering the issuer', err))
      sendRefused(res, 503, 'Sign-in unavailable', '<p>The sign-in service could not be reached just now. Reload the page in a moment.</p>')
      return
    }
    const { client, config } = found
    const verifier = client.randomPKCECodeVerifier()
    const state = client.randomState()
    const nonce = client.randomNonce()
    const params: Record<string, string> = {
      redirect_uri: `${this.origin()}${SIGN_IN_CALLBACK}`,
      response_type: 'code',
      scope: required === undefined ? 'openid' : `openid ${required}`,
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      nonce,
      resource: known(this.config.audience),
    }
    if (again) params.prompt = 'login'
    const location = client.buildAuthorizationUrl(config, params).href
    const flow = this.seal(FLOW_AAD, [state, verifier, nonce, path, Date.now() + FLOW_MS])
    res.writeHead(302, { location, 'cache-control': 'no-store', 'set-cookie': this.cookie(FLOW_COOKIE, flow, FLOW_MS) })
    res.end()
  }

  /**
   * `GET /confirm/callback`: finishes the sign-in (`authorizationCodeGrant` checks `iss`
   * (RFC 9207), `state`, `nonce` and PKCE), sets the approver cookie, and returns to the link.
   */
  async callback(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const clearFlow = this.cookie(FLOW_COOKIE, '', 0)
    if (req.method !== 'GET') {
      req.resume()
      res.writeHead(405, { allow: 'GET', 'content-type': 'text/plain; charset=utf-8' })
      res.end('method not allowed\n')
      return
    }
    const failed = (why?: Error): void => {
      if (why !== undefined) this.config.onError?.(why)
      sendRefused(res, 403, 'Sign-in failed', '<p>The sign-in could not be completed. Open the confirmation link again.</p>', { 'set-cookie': clearFlow })
    }
    const flow = this.open(FLOW_AAD, cookiesOf(req).get(FLOW_COOKIE))
    if (!Array.isArray(flow)) return failed()
    const [state, verifier, nonce, path, expiresAt] = flow as [unknown, unknown, unknown, unknown, unknown]
    if (typeof state !== 'string' || typeof verifier !== 'string' || typeof nonce !== 'string' || typeof path !== 'string' || !RETURN_PATH.test(path)) return failed()
    if (typeof expiresAt !== 'number' || expiresAt < Date.now()) return failed()
    let approver: Approver
    try {
      const { client, config } = await this.configuration()
      const tokens = await client.authorizationCodeGrant(
        config,
        new URL(req.url ?? SIGN_IN_CALLBACK, this.origin()),
        { pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce, idTokenExpected: true },
        { resource: known(this.config.audience) },
      )
      const subject = tokens.claims()?.sub
      if (typeof subject !== 'string' || subject.length === 0) return failed()
      // scopes the issuer granted (RFC 6749 §5.1); none when it does not say
      const scopes = typeof tokens.scope === 'string' ? tokens.scope.split(' ').filter(isScopeToken).slice(0, MAX_COOKIE_SCOPES) : []
      approver = { subject, issuer: this.config.issuer, scopes }
    } catch (err) {
      // the reason (which may quote the issuer's answer) is not shown, and only its code is told
      return failed(signInError('the callback', err))
    }
    const sealed = this.seal(APPROVER_AAD, [approver.subject, approver.issuer, approver.scopes, Date.now() + APPROVER_MS])
    res.writeHead(302, { location: path, 'cache-control': 'no-store', 'set-cookie': [clearFlow, this.cookie(APPROVER_COOKIE, sealed, APPROVER_MS)] })
    res.end()
  }
}
