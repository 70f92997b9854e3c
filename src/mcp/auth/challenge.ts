/**
 * The `WWW-Authenticate` challenges of toolwire's resource server (RFC 6750 §3, RFC 9728 §5.1,
 * MCP basic/authorization): a bare one for a request without a token, `invalid_token` for a
 * refused token, `insufficient_scope` for a call needing more scopes. Every description is a
 * fixed text without `=`, `"` or `\` (the SDK client reads the first `name="…"` anywhere in
 * the header), and never holds a token or a claim value. No MCP SDK import.
 */

/** Why a token was refused; each has one fixed description. */
export type TokenRefusalReason =
  | 'malformed'
  | 'expired'
  | 'not_yet_valid'
  | 'audience'
  | 'issuer'
  | 'signature'
  | 'algorithm'
  | 'unknown_key'
  | 'claims'
  | 'type'
  | 'inactive'
  | 'opaque'

/** The `error_description` of each refusal. */
export const TOKEN_REFUSAL_TEXT: Readonly<Record<TokenRefusalReason, string>> = Object.freeze({
  malformed: 'The access token is malformed',
  expired: 'The access token has expired',
  not_yet_valid: 'The access token is not yet valid',
  audience: 'The access token was issued for another resource',
  issuer: 'The access token was issued by another issuer',
  signature: 'The access token signature is invalid',
  algorithm: 'The access token algorithm is not accepted',
  unknown_key: 'The access token was signed with an unknown key',
  claims: 'The access token lacks a required claim or has an invalid one',
  type: 'The access token type is not accepted',
  inactive: 'The access token is not active',
  opaque: 'Opaque access tokens are not accepted by this server',
})

/** A token refused: a 401 `invalid_token` whose description is {@link TOKEN_REFUSAL_TEXT}. */
export class TokenRefused extends Error {
  constructor(readonly reason: TokenRefusalReason) {
    super(TOKEN_REFUSAL_TEXT[reason])
    this.name = 'TokenRefused'
  }
}

/** The issuer's metadata, keys or introspection endpoint cannot be reached now: a 503 with `Retry-After`, not the token's fault. */
export class AuthUnavailable extends Error {
  constructor(
    message: string,
    /** Seconds after which a retry may succeed (at least 1). */
    readonly retryAfterSec: number,
  ) {
    super(message)
    this.name = 'AuthUnavailable'
  }
}

/**
 * The RFC 9728 metadata URL for `audience` under `publicOrigin`:
 * `<origin>/.well-known/oauth-protected-resource<path>`, the path being the audience's own
 * (without a trailing `/`) when the audience is an http(s) URL, else `fallbackPath`.
 */
export function metadataPathOf(audience: string, fallbackPath: string): string {
  let path = fallbackPath
  if (/^https?:\/\//i.test(audience)) path = new URL(audience).pathname
  path = path.replace(/\/+$/, '')
  return `/.well-known/oauth-protected-resource${path}`
}

/** `Bearer resource_metadata="…"`: no token was sent (no `error`, as RFC 6750 §3.1 asks). */
export function bareChallenge(metadataUrl: string): string {
  return `Bearer resource_metadata="${metadataUrl}"`
}

/** `Bearer error="invalid_token", …`: the token was refused. */
export function invalidTokenChallenge(metadataUrl: string, reason: TokenRefusalReason): string {
  return `Bearer error="invalid_token", error_description="${TOKEN_REFUSAL_TEXT[reason]}", resource_metadata="${metadataUrl}"`
}

/** The description of a 403: it names no scope (the `scope` parameter does). */
export const INSUFFICIENT_SCOPE_TEXT = 'The access token lacks a scope this tool needs'

/** `Bearer error="insufficient_scope", scope="…", …`: every scope the operation needs, in one challenge. */
export function insufficientScopeChallenge(metadataUrl: string, scopes: readonly string[]): string {
  return `Bearer error="insufficient_scope", scope="${scopes.join(' ')}", resource_metadata="${metadataUrl}", error_description="${INSUFFICIENT_SCOPE_TEXT}"`
}
