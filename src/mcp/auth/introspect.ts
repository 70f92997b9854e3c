/**
 * RFC 7662 token introspection, for opaque access tokens when `auth.introspection` is set: a
 * POST of the token to the issuer's `introspection_endpoint` with HTTP Basic client
 * authentication. The answer must say `active: true`, name the issuer (when it names one), hold
 * the audience in `aud` (required: MCP binds tokens to their audience), and carry `exp` (at most
 * a minute of skew), `nbf` when present, and `sub` (else `client_id`: a client-credentials token's subject). Active answers are kept until
 * `min(exp, 60 s)`, inactive ones 10 s (by the token's SHA-256, at most 10,000). No token is
 * ever logged or shown.
 */
import { createHash } from 'node:crypto'
import { AuthUnavailable, TokenRefused } from './challenge.js'
import { fetchJson, type AuthFetch } from './discovery.js'
import { principalOfClaims, type OpaqueTokenCheck, type VerifiedToken } from './verify.js'

/** How an introspector reaches its endpoint, and what it checks. */
export interface IntrospectionConfig {
  readonly endpoint: () => Promise<string>
  readonly clientId: string
  readonly clientSecret: string
  readonly issuer: string
  readonly audience: string
  readonly clockToleranceSec: number
}

const ACTIVE_MS = 60_000
const INACTIVE_MS = 10_000
const ENTRIES = 10_000

/** `application/x-www-form-urlencoded` encoding of a client id or secret for Basic auth (RFC 6749 §2.3.1). */
function formEncode(value: string): string {
  return encodeURIComponent(value).replace(/%20/g, '+')
}

/** An RFC 7662 introspector (see the module comment). */
export class Introspector implements OpaqueTokenCheck {
  private readonly remembered = new Map<string, { verified: VerifiedToken | undefined; until: number }>()

  constructor(
    private readonly config: IntrospectionConfig,
    private readonly fetchFn: AuthFetch,
    private readonly now: () => number,
  ) {}

  /** @throws TokenRefused (`inactive`, or a claim wrong), AuthUnavailable (the endpoint cannot answer now). */
  async introspect(token: string): Promise<VerifiedToken> {
    const id = createHash('sha256').update(token, 'utf8').digest('base64url')
    const hit = this.remembered.get(id)
    if (hit !== undefined && this.now() < hit.until) {
      if (hit.verified === undefined) throw new TokenRefused('inactive')
      return hit.verified
    }
    this.remembered.delete(id)
    let answer: Record<string, unknown>
    try {
      const endpoint = await this.config.endpoint()
      const basic = Buffer.from(`${formEncode(this.config.clientId)}:${formEncode(this.config.clientSecret)}`).toString('base64')
      answer = await fetchJson(this.fetchFn, endpoint, {
        method: 'POST',
        headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token, token_type_hint: 'access_token' }).toString(),
      })
    } catch (error) {
      if (error instanceof AuthUnavailable) throw error
      throw new AuthUnavailable('the introspection endpoint cannot answer', 5)
    }
    let verified: VerifiedToken | undefined
    try {
      verified = this.check(answer)
    } catch (error) {
      this.keep(id, undefined, this.now() + INACTIVE_MS)
      throw error
    }
    this.keep(id, verified, Math.min(verified.expiresAt * 1000, this.now() + ACTIVE_MS))
    return verified
  }

  private check(answer: Record<string, unknown>): VerifiedToken {
    if (answer.active !== true) throw new TokenRefused('inactive')
    const { issuer, audience, clockToleranceSec } = this.config
    if (answer.iss !== undefined && answer.iss !== issuer) throw new TokenRefused('issuer')
    const aud = answer.aud
    if (!(aud === audience || (Array.isArray(aud) && aud.includes(audience)))) throw new TokenRefused('audience')
    const now = this.now() / 1000
    if (typeof answer.exp !== 'number') throw new TokenRefused('claims')
    if (answer.exp <= now - clockToleranceSec) throw new TokenRefused('expired')
    if (answer.nbf !== undefined && (typeof answer.nbf !== 'number' || answer.nbf > now + clockToleranceSec)) throw new TokenRefused('not_yet_valid')
    // RFC 7662 makes `sub` optional: a client-credentials token's subject is its client
    const sub = answer.sub ?? answer.client_id
    return { principal: principalOfClaims({ ...answer, sub, iss: issuer }), expiresAt: answer.exp }
  }

  private keep(id: string, verified: VerifiedToken | undefined, until: number): void {
    if (until <= this.now()) return
    if (this.remembered.size >= ENTRIES) this.remembered.delete(this.remembered.keys().next().value!)
    this.remembered.set(id, { verified, until })
  }
}
