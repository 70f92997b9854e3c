/**
 * How a verified principal travels from the HTTP gate to the MCP handlers: inside the SDK's
 * `AuthInfo` (`ctx.http.authInfo` in a handler), per request. The raw token never travels
 * (`token: ''`): no handler needs it, and a server must not pass tokens on.
 */
import type { AuthInfo } from '@modelcontextprotocol/server'
import { principalKey, type Principal } from '../../core/principal.js'

/** What toolwire keeps in `AuthInfo.extra`. */
interface PrincipalExtra {
  readonly principal: Principal
  /** {@link principalKey} of the principal, computed once per request. */
  readonly key: string
}

/** The `AuthInfo` handed to the SDK for a request made by `principal`, whose token expires at `expiresAt` (Unix seconds). */
export function authInfoOf(principal: Principal, expiresAt: number | undefined, resource?: URL): AuthInfo {
  const extra: PrincipalExtra = { principal, key: principalKey(principal) }
  const info: AuthInfo = { token: '', clientId: principal.clientId ?? '', scopes: [...principal.scopes], extra: extra as unknown as Record<string, unknown> }
  if (expiresAt !== undefined) info.expiresAt = expiresAt
  if (resource !== undefined) info.resource = resource
  return info
}

/** The principal and its key that {@link authInfoOf} put in `authInfo`, or `undefined` (no auth: the static-token or open modes). */
export function principalOfAuthInfo(authInfo: AuthInfo | undefined): PrincipalExtra | undefined {
  const extra = authInfo?.extra as Partial<PrincipalExtra> | undefined
  if (extra === undefined || typeof extra.key !== 'string' || typeof extra.principal !== 'object' || extra.principal === null) return undefined
  return extra as PrincipalExtra
}
