/**
 * Access token verification for toolwire's resource server. A JWT is verified with `jose`
 * against the issuer's keys ({@link JwksCache}): `iss` exact, `aud` holding the audience, `exp`
 * required and `nbf` (with at most a minute of skew), an asymmetric algorithm allow-list (never
 * `none`, never HMAC), `typ` `at+jwt` or `JWT` (only `at+jwt` with `requireAtJwt`), and `sub`.
 * An opaque token goes to RFC 7662 introspection when it is configured; a token that looks
 * like a JWT never does, and one whose `alg` is not allowed is refused before any key is fetched. A verified token is remembered until `min(exp, 30 s)` (keyed by its
 * SHA-256, at most 10,000), forgotten when the key set changes. `jose` is loaded on first use.
 */
import { createHash } from 'node:crypto'
import type { JWTPayload } from 'jose' with { 'resolution-mode': 'import' }
import { readPrincipal, type Principal } from '../../core/principal.js'
import { AuthUnavailable, TokenRefused, type TokenRefusalReason } from './challenge.js'
import type { JwksCache, KeySet } from './jwks.js'

/** The asymmetric algorithms accepted by default (HMAC and `none` never are). */
export const DEFAULT_ALGORITHMS: readonly string[] = Object.freeze(['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'])

/** A verified token: who it names, and when it expires (Unix seconds). */
export interface VerifiedToken {
  readonly principal: Principal
  readonly expiresAt: number
}

/** What a verifier checks. */
export interface VerifyRules {
  readonly issuer: string
  readonly audience: string
  readonly requireAtJwt: boolean
  readonly algorithms: readonly string[]
  readonly clockToleranceSec: number
}

/** Verifies one opaque token (RFC 7662). */
export interface OpaqueTokenCheck {
  introspect(token: string): Promise<VerifiedToken>
}

const TOKEN_CACHE_MS = 30_000
const TOKEN_CACHE_ENTRIES = 10_000

/** The protected header of a token shaped as a JWS (three base64url parts, the first a JSON object naming an `alg`), else undefined. */
export function jwsHeaderOf(token: string): { readonly alg: unknown } | undefined {
  const parts = token.split('.')
  if (parts.length !== 3 || !parts.every((p) => /^[A-Za-z0-9_-]*$/.test(p))) return undefined
  try {
    const header: unknown = JSON.parse(Buffer.from(parts[0]!, 'base64url').toString('utf8'))
    return typeof header === 'object' && header !== null && !Array.isArray(header) && 'alg' in header ? (header as { alg: unknown }) : undefined
  } catch {
    return undefined
  }
}

/** The scopes of a token's claims: `scope` (space-separated) or `scp` (a list, or space-separated). */
export function scopesOf(claims: Record<string, unknown>): unknown[] | undefined {
  const raw = claims.scope ?? claims.scp
  if (raw === undefined) return []
  if (typeof raw === 'string') return raw.split(' ').filter((s) => s !== '')
  return Array.isArray(raw) ? raw : undefined
}

/** The principal a token's claims name, or `claims` refused. */
export function principalOfClaims(claims: Record<string, unknown>): Principal {
  const scopes = scopesOf(claims)
  const clientId = typeof claims.client_id === 'string' ? claims.client_id : typeof claims.azp === 'string' ? claims.azp : undefined
  const principal = readPrincipal({ subject: claims.sub, issuer: claims.iss, scopes, ...(clientId === undefined || clientId === '' ? {} : { clientId }) })
  if (typeof principal === 'string') throw new TokenRefused('claims')
  return principal
}

/** The refusal a jose error stands for. */
function reasonOf(error: unknown): TokenRefusalReason {
  const { code, claim, reason } = error as { code?: string; claim?: string; reason?: string }
  switch (code) {
    case 'ERR_JWT_EXPIRED':
      return 'expired'
    case 'ERR_JWT_CLAIM_VALIDATION_FAILED':
      if (reason === 'missing') return 'claims'
      if (claim === 'nbf') return 'not_yet_valid'
      if (claim === 'aud') return 'audience'
      if (claim === 'iss') return 'issuer'
      if (claim === 'typ') return 'type'
      return 'claims'
    case 'ERR_JOSE_ALG_NOT_ALLOWED':
    case 'ERR_JOSE_NOT_SUPPORTED':
      return 'algorithm'
    case 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED':
      return 'signature'
    case 'ERR_JWKS_NO_MATCHING_KEY':
      return 'unknown_key'
    default:
      return 'malformed'
  }
}

/** The token type a header names, lower-cased, without `application/`. */
function typeOf(typ: unknown): string | undefined {
  return typeof typ === 'string' ? typ.toLowerCase().replace(/^application\//, '') : undefined
}

/** Verifies access tokens (see the module comment). */
export class AccessTokenVerifier {
  private readonly remembered = new Map<string, { verified: VerifiedToken; until: number }>()
  private keysVersion = 0

  constructor(
    private readonly jose: typeof import('jose', { with: { 'resolution-mode': 'import' } }),
    private readonly rules: VerifyRules,
    private readonly keys: JwksCache,
    private readonly now: () => number,
    private readonly opaque?: OpaqueTokenCheck,
  ) {}

  /**
   * The principal of `token`.
   * @throws TokenRefused (a 401 `invalid_token`), or AuthUnavailable (the keys cannot be had now: 503).
   */
  async verify(token: string): Promise<VerifiedToken> {
    const header = jwsHeaderOf(token)
    if (header === undefined) {
      if (this.opaque === undefined) throw new TokenRefused(token.split('.').length === 3 ? 'malformed' : 'opaque')
      return this.opaque.introspect(token)
    }
    // `none`, HMAC and any other algorithm not allowed: refused before any key is fetched
    if (typeof header.alg !== 'string' || !this.rules.algorithms.includes(header.alg)) throw new TokenRefused('algorithm')
    const id = createHash('sha256').update(token, 'utf8').digest('base64url')
    const hit = this.remembered.get(id)
    if (hit !== undefined) {
      this.remembered.delete(id)
      if (this.now() < hit.until) {
        // the key set may have changed since (a removed key): its refresh comes first
        const set = await this.keys.current()
        if (set.version === this.keysVersion) {
          this.remembered.set(id, hit)
          return hit.verified
        }
      }
    }
    let set = await this.keys.current()
    this.sync(set)
    let payload: JWTPayload
    try {
      payload = await this.check(token, set)
    } catch (error) {
      if (error instanceof TokenRefused || error instanceof AuthUnavailable) throw error
      const reason = reasonOf(error)
      if (reason !== 'unknown_key') throw new TokenRefused(reason)
      const newer = await this.keys.afterUnknownKid(set)
      if (newer === undefined) throw new TokenRefused('unknown_key')
      set = newer
      this.sync(set)
      try {
        payload = await this.check(token, set)
      } catch (again) {
        throw again instanceof TokenRefused ? again : new TokenRefused(reasonOf(again))
      }
    }
    const verified: VerifiedToken = { principal: principalOfClaims(payload as Record<string, unknown>), expiresAt: payload.exp! }
    this.remember(id, verified)
    return verified
  }

  private async check(token: string, set: KeySet): Promise<JWTPayload> {
    const { payload, protectedHeader } = await this.jose.jwtVerify(token, set.resolve, {
      issuer: this.rules.issuer,
      audience: this.rules.audience,
      algorithms: [...this.rules.algorithms],
      clockTolerance: this.rules.clockToleranceSec,
      requiredClaims: ['exp', 'sub'],
      currentDate: new Date(this.now()),
      ...(this.rules.requireAtJwt ? { typ: 'at+jwt' } : {}),
    })
    const typ = typeOf(protectedHeader.typ)
    if (typ !== 'at+jwt' && (this.rules.requireAtJwt || typ !== 'jwt')) throw new TokenRefused('type')
    return payload
  }

  /** Forgets every verified token when the key set changed (a removed key stops at once for them too). */
  private sync(set: KeySet): void {
    if (set.version === this.keysVersion) return
    this.keysVersion = set.version
    this.remembered.clear()
  }

  private remember(id: string, verified: VerifiedToken): void {
    const until = Math.min(verified.expiresAt * 1000, this.now() + TOKEN_CACHE_MS)
    if (until <= this.now()) return
    if (this.remembered.size >= TOKEN_CACHE_ENTRIES) this.remembered.delete(this.remembered.keys().next().value!)
    this.remembered.set(id, { verified, until })
  }
}
