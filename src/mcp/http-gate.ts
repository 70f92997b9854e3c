/**
 * The checks every `serveHttp` request passes before anything else: its `Host` (DNS
 * rebinding), its `Origin` (CSRF from a browser) and, with a static token, its bearer token
 * (compared by digest, in constant time).
 */
import { createHash, timingSafeEqual } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import { hostNameOf, LOOPBACK_NAMES, originHostName } from './http-checks.js'

/** What the gate needs; the sets are read on each request (`serveHttp` adds its public URL's once known). */
export interface HttpGateConfig {
  /** Whether `Host` is checked at all (bound to loopback, or `allowedHosts` given). */
  readonly checkHost: boolean
  /** Host names allowed besides the loopback names. */
  readonly allowedHosts: ReadonlySet<string>
  /** Origins allowed besides loopback ones (lower case, no trailing slash). */
  readonly allowedOrigins: ReadonlySet<string>
  /** The static bearer token, if one is set. */
  readonly token?: string
}

/** The gate of one `serveHttp`. */
export interface HttpGate {
  hostAllowed(req: IncomingMessage): boolean
  originAllowed(req: IncomingMessage): boolean
  /** `'ok'` without a static token or with the right one; else whether the token is missing or wrong. */
  authorized(req: IncomingMessage): 'ok' | 'missing' | 'invalid'
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest()
}

/**
 * The gate for `config`.
 *
 * @example
 * const gate = httpGate({ checkHost: true, allowedHosts: new Set(), allowedOrigins: new Set() })
 * gate.hostAllowed(req) // true for localhost, 127.0.0.1, [::1]
 */
export function httpGate(config: HttpGateConfig): HttpGate {
  const { checkHost, allowedHosts, allowedOrigins } = config
  const tokenDigest = config.token === undefined ? undefined : digest(config.token)
  return {
    hostAllowed(req) {
      if (!checkHost) return true
      const value = req.headers.host
      if (value === undefined) return false
      const name = hostNameOf(value)
      return LOOPBACK_NAMES.has(name) || allowedHosts.has(name)
    },
    originAllowed(req) {
      const origin = req.headers.origin
      if (origin === undefined) return true
      if (allowedOrigins.has(origin.replace(/\/+$/, '').toLowerCase())) return true
      const name = originHostName(origin)
      return name !== undefined && (LOOPBACK_NAMES.has(name) || LOOPBACK_NAMES.has(`[${name}]`))
    },
    authorized(req) {
      if (tokenDigest === undefined) return 'ok'
      const header = req.headers.authorization
      if (header === undefined) return 'missing'
      const match = /^Bearer[ ]+([^\s]+)\s*$/i.exec(header)
      if (match === null) return 'invalid'
      return timingSafeEqual(digest(match[1]!), tokenDigest) ? 'ok' : 'invalid'
    },
  }
}
