/**
 * Finding the issuer's endpoints: RFC 8414 authorization server metadata, else OpenID Connect
 * discovery, in the order the MCP client uses. The first 200 JSON document whose `issuer` equals
 * the configured issuer exactly wins. Discovery is lazy (the first request runs it), a failure
 * backs off (1 s, doubling to 60 s) and meanwhile requests get 503; the document is fetched
 * again every 24 hours, or when the key set cannot be fetched 3 times in a row. No MCP SDK import.
 */
import { AuthUnavailable } from './challenge.js'

/** The `fetch` the resource server uses (injectable for tests). */
export type AuthFetch = (url: string, init: RequestInit) => Promise<Response>

/** The largest metadata, key set or introspection answer read, in bytes. */
const MAX_BODY_BYTES = 256 * 1024
/** How long one fetch to the issuer may take. */
export const FETCH_TIMEOUT_MS = 5000

/** Whether `url` is https, or http on a loopback host (tests, a local issuer), with no user name or password in it. */
export function isSecureOrLoopbackUrl(url: string): boolean {
  let u: URL
  try {
    u = new URL(url)
  } catch {
    return false
  }
  // credentials in a URL would be sent (and logged) wherever it is fetched
  if (u.username !== '' || u.password !== '') return false
  if (u.protocol === 'https:') return true
  return u.protocol === 'http:' && isLoopbackHostName(u.hostname)
}

/** Whether a URL's host name is a loopback one. */
export function isLoopbackHostName(hostname: string): boolean {
  const h = hostname.toLowerCase()
  return h === 'localhost' || h === '[::1]' || h === '::1' || /^127\.\d+\.\d+\.\d+$/.test(h)
}

/**
 * A JSON object from `url`: 200 only, no redirect followed, at most 256 KiB, within 5 s.
 * @throws Error saying what went wrong (never a body or a header value).
 */
export async function fetchJson(fetchFn: AuthFetch, url: string, init: RequestInit = {}): Promise<Record<string, unknown>> {
  const aborter = new AbortController()
  const timer = setTimeout(() => aborter.abort(), FETCH_TIMEOUT_MS)
  timer.unref?.()
  try {
    const res = await fetchFn(url, { ...init, redirect: 'manual', signal: aborter.signal, headers: { accept: 'application/json', ...(init.headers as Record<string, string> | undefined) } })
    if (res.status !== 200) {
      await res.body?.cancel().catch(() => undefined)
      throw new Error(`answered HTTP ${res.status}`)
    }
    const length = Number(res.headers.get('content-length') ?? '0')
    if (length > MAX_BODY_BYTES) {
      await res.body?.cancel().catch(() => undefined)
      throw new Error('answered more than 256 KiB')
    }
    const text = await res.text()
    if (Buffer.byteLength(text) > MAX_BODY_BYTES) throw new Error('answered more than 256 KiB')
    const value: unknown = JSON.parse(text)
    if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error('answered no JSON object')
    return value as Record<string, unknown>
  } finally {
    clearTimeout(timer)
  }
}

/** The metadata URLs of `issuer`, in the order tried. */
export function discoveryUrls(issuer: string): string[] {
  const u = new URL(issuer)
  const path = u.pathname.replace(/\/+$/, '')
  if (path === '') return [`${u.origin}/.well-known/oauth-authorization-server`, `${u.origin}/.well-known/openid-configuration`]
  return [`${u.origin}/.well-known/oauth-authorization-server${path}`, `${u.origin}/.well-known/openid-configuration${path}`, `${u.origin}${path}/.well-known/openid-configuration`]
}

/** What toolwire needs of the issuer's metadata. */
export interface IssuerEndpoints {
  readonly jwksUri: string
  readonly introspectionEndpoint?: string
}

const REDISCOVER_MS = 24 * 60 * 60_000
const FIRST_BACKOFF_MS = 1000
const MAX_BACKOFF_MS = 60_000

/** The issuer's endpoints, discovered once and kept (see the module comment). */
export class IssuerDiscovery {
  private found: { endpoints: IssuerEndpoints; at: number } | undefined
  private pending: Promise<IssuerEndpoints> | undefined
  private backoffMs = 0
  private retryAt = 0

  constructor(
    private readonly issuer: string,
    private readonly fetchFn: AuthFetch,
    private readonly now: () => number,
  ) {}

  /** The endpoints, discovering them when not known (or known for 24 hours). @throws AuthUnavailable */
  endpoints(): Promise<IssuerEndpoints> {
    const now = this.now()
    if (this.found !== undefined && now - this.found.at < REDISCOVER_MS) return Promise.resolve(this.found.endpoints)
    if (this.pending !== undefined) return this.pending
    // keep what was found while backing off from a failed rediscovery
    if (now < this.retryAt) {
      if (this.found !== undefined) return Promise.resolve(this.found.endpoints)
      return Promise.reject(new AuthUnavailable('the issuer metadata cannot be fetched', Math.ceil((this.retryAt - now) / 1000)))
    }
    this.pending = this.discover().finally(() => (this.pending = undefined))
    return this.pending
  }

  /** Forget the endpoints: the next request discovers them again (the key set failed 3 times). */
  invalidate(): void {
    if (this.found !== undefined) this.found = { ...this.found, at: -Infinity }
  }

  private async discover(): Promise<IssuerEndpoints> {
    for (const url of discoveryUrls(this.issuer)) {
      let doc: Record<string, unknown>
      try {
        doc = await fetchJson(this.fetchFn, url)
      } catch {
        continue
      }
      // RFC 8414 §3.3 / OIDC Discovery §4.3: the document must name exactly this issuer
      if (doc.issuer !== this.issuer) continue
      const jwksUri = doc.jwks_uri
      if (typeof jwksUri !== 'string' || !isSecureOrLoopbackUrl(jwksUri)) continue
      const introspection = doc.introspection_endpoint
      const endpoints: IssuerEndpoints =
        typeof introspection === 'string' && isSecureOrLoopbackUrl(introspection) ? { jwksUri, introspectionEndpoint: introspection } : { jwksUri }
      this.found = { endpoints, at: this.now() }
      this.backoffMs = 0
      return endpoints
    }
    this.backoffMs = Math.min(MAX_BACKOFF_MS, this.backoffMs === 0 ? FIRST_BACKOFF_MS : this.backoffMs * 2)
    this.retryAt = this.now() + this.backoffMs
    if (this.found !== undefined) return this.found.endpoints
    throw new AuthUnavailable('the issuer metadata cannot be fetched', Math.ceil(this.backoffMs / 1000))
  }
}
