/**
 * `serveHttp({ auth })`: toolwire as an OAuth 2.1 resource server (MCP basic/authorization).
 * The gate asks {@link ResourceServer.authenticate} for each request's principal (a verified
 * access token, see verify.ts), serves the RFC 9728 metadata (metadata.ts), answers the
 * challenges (challenge.ts), and refuses a `tools/call` whose scopes the principal lacks
 * ({@link ResourceServer.scopeRefusal}). `jose` is loaded on the first request that needs it.
 * No MCP SDK import at run time.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { AuthInfo } from '@modelcontextprotocol/server'
import { missingScopes, type Principal } from '../../core/principal.js'
import type { ServableManager } from '../meta.js'
import { checkOptions, isBoolean, isListOf, isNonEmptyString, isPlainObject, isString, type OptionRules } from '../options.js'
import { authInfoOf } from './auth-info.js'
import { AuthUnavailable, bareChallenge, insufficientScopeChallenge, invalidTokenChallenge, metadataPathOf, TokenRefused } from './challenge.js'
import { isSecureOrLoopbackUrl, IssuerDiscovery, type AuthFetch } from './discovery.js'
import { Introspector } from './introspect.js'
import { JWKS_TIMINGS, JwksCache, type JwksTimings } from './jwks.js'
import { scopeTableOf, sendMetadata, type ProtectedResourceMetadata, type ScopeTable } from './metadata.js'
import { AccessTokenVerifier, DEFAULT_ALGORITHMS } from './verify.js'
import { readSignInOptions, type ConfirmSignInOptions } from './signin.js'
import { checkQuotaOptions, PrincipalQuotas, quotaRefusal, type QuotaOptions } from '../quotas.js'

/** `serveHttp`'s `auth` option: verify OAuth access tokens issued by `issuer` for this server. See docs/auth.md. */
export interface ServeHttpAuthOptions {
  /** The confirmation page's sign-in with this issuer: only a signed-in approver answers (docs/mcp.md, "Who approved"). */
  readonly signIn?: ConfirmSignInOptions
  /** The authorization server's issuer identifier, compared exactly; `http:` only on a loopback host. */
  readonly issuer: string
  /** The resource URI tokens must name in `aud` (default: `publicUrl`'s origin plus `path`, else the bound URL). */
  readonly audience?: string
  /** Accept only `typ: at+jwt` (RFC 9068); by default `at+jwt` or `JWT`. */
  readonly requireAtJwt?: boolean
  /** The JWS algorithms accepted (default: the RSA, RSA-PSS, ECDSA and EdDSA ones; never `none` or HMAC). */
  readonly algorithms?: readonly string[]
  /** The clock skew allowed on `exp` and `nbf`, in seconds (default and most: 60). */
  readonly clockToleranceSec?: number
  /** The issuer's key set URL, for an issuer without RFC 8414 or OpenID Connect metadata. */
  readonly jwksUri?: string
  /** RFC 7662 introspection of opaque tokens, as this client of the issuer. */
  readonly introspection?: {
    readonly clientId: string
    readonly clientSecret: string
    /** Default: the issuer metadata's `introspection_endpoint`. */
    readonly endpoint?: string
  }
  /** Limits per principal on `tools/call`: calls in flight and a rate (a token bucket). See docs/auth.md, "Quotas". */
  readonly quotas?: QuotaOptions
}

/** Test hooks of the resource server, under a symbol key of `auth` (not part of the API). */
export const AUTH_INTERNALS: unique symbol = Symbol('toolwire auth internals')

/** What tests may replace. */
export interface AuthInternals {
  readonly fetch?: AuthFetch
  readonly now?: () => number
  readonly timings?: Partial<JwksTimings>
}

const httpsOrLoopback = (what: string) => ({ must: `an https URL of ${what} (http only on a loopback host)`, ok: (v: unknown) => typeof v === 'string' && isSecureOrLoopbackUrl(v) })

const INTROSPECTION_RULES: OptionRules = Object.freeze({
  clientId: isNonEmptyString,
  clientSecret: isNonEmptyString,
  endpoint: httpsOrLoopback('the introspection endpoint'),
})

/** What each `auth` option must be. */
export const AUTH_OPTION_RULES: OptionRules = Object.freeze({
  issuer: {
    must: 'an https URL without credentials, query or fragment (http only on a loopback host)',
    ok: (v: unknown) => typeof v === 'string' && isSecureOrLoopbackUrl(v) && !/[?#]/.test(v),
  },
  audience: { must: 'an absolute URI without fragment', ok: (v: unknown) => isString.ok(v) && URL.canParse(v as string) && !(v as string).includes('#') },
  requireAtJwt: isBoolean,
  algorithms: isListOf({ must: '', ok: (v) => typeof v === 'string' && DEFAULT_ALGORITHMS.includes(v) }, `a non-empty list of ${DEFAULT_ALGORITHMS.join(', ')} (never none or HMAC)`),
  clockToleranceSec: { must: 'a number of seconds from 0 to 60', ok: (v: unknown) => typeof v === 'number' && v >= 0 && v <= 60 },
  jwksUri: httpsOrLoopback('the key set'),
  introspection: isPlainObject,
  signIn: isPlainObject,
  quotas: isPlainObject,
})

/**
 * Checks `serveHttp`'s `auth` option (unknown nested keys included) and what it needs of the
 * others, and returns how to make the resource server once the bound origin is known.
 * @throws TypeError naming the option, never a secret.
 */
export function prepareResourceServer(
  auth: ServeHttpAuthOptions,
  served: { readonly publicUrl: string | undefined; readonly path: string; readonly loopbackBound: boolean; readonly token: boolean },
): (tm: ServableManager, boundOrigin: string) => ResourceServer {
  checkOptions('serveHttp', auth, AUTH_OPTION_RULES, 'auth.')
  if (auth.issuer === undefined) throw new TypeError('toolwire: serveHttp() option auth.issuer is required')
  if (auth.algorithms !== undefined && auth.algorithms.length === 0) throw new TypeError('toolwire: serveHttp() option auth.algorithms must not be empty')
  if (auth.introspection !== undefined) {
    checkOptions('serveHttp', auth.introspection, INTROSPECTION_RULES, 'auth.introspection.')
    for (const key of ['clientId', 'clientSecret'] as const) {
      if (auth.introspection[key] === undefined) throw new TypeError(`toolwire: serveHttp() option auth.introspection.${key} is required`)
    }
  }
  checkQuotaOptions(auth.quotas, 'auth.quotas')
  // the confirmation page's sign-in: its keys named auth.signIn.<key>, never a value
  if (auth.signIn !== undefined) readSignInOptions(auth.signIn)
  if (served.token) throw new TypeError('toolwire: serveHttp() takes token or auth, not both (one way to authorize at a time)')
  if (auth.audience === undefined && served.publicUrl === undefined && !served.loopbackBound) {
    throw new TypeError('toolwire: serveHttp() option auth.audience is required when bound to a non-loopback host without publicUrl')
  }
  const internals = (auth as { [AUTH_INTERNALS]?: AuthInternals })[AUTH_INTERNALS] ?? {}
  return (tm, boundOrigin) => {
    const publicOrigin = served.publicUrl === undefined ? boundOrigin : new URL(served.publicUrl).origin
    const audience = auth.audience ?? `${publicOrigin}${served.path}`
    return new ResourceServer(tm, { ...auth, audience }, publicOrigin, served.path, internals)
  }
}

/** A refusal the gate writes: status, headers and a JSON-RPC error message. */
export interface GateRefusal {
  readonly status: number
  readonly message: string
  readonly headers: Readonly<Record<string, string>>
}

/** What the gate learns of a request: its principal and the `AuthInfo` for the SDK, or a refusal. */
export type GateAnswer = { readonly principal: Principal; readonly authInfo: AuthInfo } | { readonly refusal: GateRefusal }

/** The longest `Authorization` value read (a longer one is refused unparsed). */
const MAX_HEADER = 16 * 1024

/** toolwire's resource server (see the module comment). */
export class ResourceServer {
  /** Where the metadata is served: the bare well-known path and its path-aware form. */
  readonly metadataPaths: ReadonlySet<string>
  /** The absolute metadata URL every challenge names. */
  readonly metadataUrl: string
  private readonly scopes: () => ScopeTable
  private readonly resource: URL
  private verifier: Promise<AccessTokenVerifier> | undefined
  private readonly quotas: PrincipalQuotas | undefined

  constructor(
    private readonly tm: ServableManager,
    private readonly auth: ServeHttpAuthOptions & { readonly audience: string },
    publicOrigin: string,
    path: string,
    private readonly internals: AuthInternals,
  ) {
    const metadataPath = metadataPathOf(auth.audience, path)
    this.metadataPaths = new Set(['/.well-known/oauth-protected-resource', metadataPath])
    this.metadataUrl = `${publicOrigin}${metadataPath}`
    this.scopes = scopeTableOf(tm)
    this.resource = new URL(auth.audience)
    this.quotas = auth.quotas === undefined ? undefined : new PrincipalQuotas(auth.quotas)
  }

  /**
   * Admits a `tools/call` of the principal whose key is `key` under its quotas: a `release` to
   * call when its response is over, or the 429 to answer (nothing runs).
   */
  admitCall(key: string): { readonly release: () => void } | { readonly refusal: GateRefusal } | undefined {
    const admission = this.quotas?.tryAcquire(key)
    if (admission === undefined) return undefined
    return admission.ok ? { release: admission.release } : { refusal: quotaRefusal(admission) }
  }

  /** The RFC 9728 document: `resource` is the audience exactly, the issuer is listed verbatim. */
  metadata(): ProtectedResourceMetadata {
    return { resource: this.auth.audience, authorization_servers: [this.auth.issuer], scopes_supported: this.scopes().all }
  }

  serveMetadata(req: IncomingMessage, res: ServerResponse): void {
    sendMetadata(req, res, this.metadata())
  }

  /** The principal of a request's `Authorization` header, or the 401 / 503 to answer. */
  async authenticate(header: string | undefined): Promise<GateAnswer> {
    // no Bearer credential (none, or another scheme such as Basic): the bare challenge, with no error code (RFC 6750 §3.1)
    if (header === undefined || !/^Bearer(?:[ ]|$)/i.test(header)) return this.refuse(401, 'Unauthorized', bareChallenge(this.metadataUrl))
    const match = header.length > MAX_HEADER ? null : /^Bearer[ ]+([^\s]+)\s*$/i.exec(header)
    if (match === null) return this.refuse(401, 'Unauthorized', invalidTokenChallenge(this.metadataUrl, 'malformed'))
    try {
      const verifier = await (this.verifier ??= this.makeVerifier().catch((error: unknown) => {
        this.verifier = undefined
        throw error
      }))
      const { principal, expiresAt } = await verifier.verify(match[1]!)
      return { principal, authInfo: authInfoOf(principal, expiresAt, this.resource) }
    } catch (error) {
      if (error instanceof TokenRefused) return this.refuse(401, 'Unauthorized', invalidTokenChallenge(this.metadataUrl, error.reason))
      if (error instanceof AuthUnavailable) {
        return { refusal: { status: 503, message: 'Service Unavailable: the authorization server cannot be reached', headers: { 'retry-after': String(Math.max(1, error.retryAfterSec)) } } }
      }
      throw error
    }
  }

  /**
   * The 403 `insufficient_scope` for a `tools/call` of `tool` by `principal`, naming every scope
   * the tool needs; undefined when the principal holds them (or the tool is unknown: the call
   * is refused as unknown later).
   */
  scopeRefusal(principal: Principal, tool: string): GateRefusal | undefined {
    const needed = this.scopes().byTool.get(tool)
    if (needed === undefined || needed.length === 0) return undefined
    // the manager's own answer follows its impliedScopes; one from another copy of toolwire may lack it
    const ask = (this.tm as { scopesMissing?: (name: string, scopes: readonly string[]) => readonly string[] | undefined }).scopesMissing
    const missing = typeof ask === 'function' ? ask.call(this.tm, tool, principal.scopes) : missingScopes(principal.scopes, needed)
    if (missing === undefined || missing.length === 0) return undefined
    return { status: 403, message: 'Forbidden: insufficient scope', headers: { 'www-authenticate': insufficientScopeChallenge(this.metadataUrl, needed) } }
  }

  private refuse(status: number, message: string, challenge: string): GateAnswer {
    return { refusal: { status, message, headers: { 'www-authenticate': challenge } } }
  }

  private async makeVerifier(): Promise<AccessTokenVerifier> {
    const jose = await import('jose')
    const fetchFn: AuthFetch = this.internals.fetch ?? ((url, init) => fetch(url, init))
    const now = this.internals.now ?? Date.now
    const auth = this.auth
    const discovery = new IssuerDiscovery(auth.issuer, fetchFn, now)
    const jwksUri = auth.jwksUri
    const keys = new JwksCache(
      jose,
      jwksUri !== undefined ? () => Promise.resolve(jwksUri) : async () => (await discovery.endpoints()).jwksUri,
      fetchFn,
      now,
      { ...JWKS_TIMINGS, ...this.internals.timings },
      () => discovery.invalidate(),
    )
    const intro = auth.introspection
    const introspector =
      intro === undefined
        ? undefined
        : new Introspector(
            {
              endpoint: async () => {
                if (intro.endpoint !== undefined) return intro.endpoint
                const found = (await discovery.endpoints()).introspectionEndpoint
                if (found === undefined) throw new AuthUnavailable('the issuer names no introspection endpoint', 60)
                return found
              },
              clientId: intro.clientId,
              clientSecret: intro.clientSecret,
              issuer: auth.issuer,
              audience: auth.audience,
              clockToleranceSec: auth.clockToleranceSec ?? 60,
            },
            fetchFn,
            now,
          )
    const rules = {
      issuer: auth.issuer,
      audience: auth.audience,
      requireAtJwt: auth.requireAtJwt === true,
      algorithms: auth.algorithms ?? DEFAULT_ALGORITHMS,
      clockToleranceSec: auth.clockToleranceSec ?? 60,
    }
    return new AccessTokenVerifier(jose, rules, keys, now, introspector)
  }
}
