/**
 * The issuer's JSON Web Key Set, cached by rules of toolwire's own (jose's remote key set cannot
 * honour `Cache-Control`, and its refetch cooldown counts from the last success):
 *
 * - fresh for 60 s, or the response's `Cache-Control` `max-age` / `s-maxage` when shorter
 *   (`no-store`, `no-cache` or 0: 1 s);
 * - once stale, one refresh at a time (requests wait on it);
 * - a failed refresh keeps the old keys up to 30 s past their expiry, then drops them (503
 *   until a fetch succeeds): a removed key stops working within 60 + 30 = 90 s;
 * - a token whose `kid` is unknown refetches only when the last fetch attempt (success or
 *   failure) is 30 s old or more: a new key works within 30 s plus the 5 s fetch timeout, under 45 s;
 * - symmetric (`oct`) keys and keys with private members are dropped.
 *
 * The clock and `fetch` are injectable, so the bounds are tested without waiting.
 */
import type { JSONWebKeySet, JWK, JWTVerifyGetKey } from 'jose' with { 'resolution-mode': 'import' }
import { AuthUnavailable } from './challenge.js'
import { fetchJson, type AuthFetch } from './discovery.js'

/** Durations of a {@link JwksCache}, in ms (internal: tests shorten them). */
export interface JwksTimings {
  readonly maxAgeMs: number
  readonly minAgeMs: number
  readonly unknownKidCooldownMs: number
  readonly staleIfErrorMs: number
}

export const JWKS_TIMINGS: JwksTimings = Object.freeze({ maxAgeMs: 60_000, minAgeMs: 1000, unknownKidCooldownMs: 30_000, staleIfErrorMs: 30_000 })

/** One fetched key set. */
export interface KeySet {
  readonly resolve: JWTVerifyGetKey
  /** Changes whenever the set of keys changes. */
  readonly version: number
}

/** How fresh a response says it may be kept, in ms, or undefined when it does not say. */
export function cacheControlMs(header: string | null): number | undefined {
  if (header === null) return undefined
  const value = header.toLowerCase()
  if (/(^|,)\s*(no-store|no-cache)\s*(,|$)/.test(value)) return 0
  const m = /(?:^|,)\s*s-maxage\s*=\s*"?(\d+)"?/.exec(value) ?? /(?:^|,)\s*max-age\s*=\s*"?(\d+)"?/.exec(value)
  return m === null ? undefined : Number(m[1]) * 1000
}

const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'k', 'oth'] as const

/** The public signing keys of a fetched set: no `oct`, nothing private, no `use` other than `sig`. */
export function publicKeysOf(doc: Record<string, unknown>): JWK[] {
  const keys = doc.keys
  if (!Array.isArray(keys)) throw new Error('answered no key set')
  return keys.filter(
    (k): k is JWK =>
      typeof k === 'object' &&
      k !== null &&
      typeof (k as JWK).kty === 'string' &&
      (k as JWK).kty !== 'oct' &&
      ((k as JWK).use === undefined || (k as JWK).use === 'sig') &&
      PRIVATE_MEMBERS.every((m) => !(m in k)),
  )
}

type Jose = typeof import('jose', { with: { 'resolution-mode': 'import' } })

/** The key set cache (see the module comment). */
export class JwksCache {
  private keys: { set: KeySet; fingerprint: string; expiresAt: number } | undefined
  private pending: Promise<KeySet> | undefined
  private lastAttempt = -Infinity
  private version = 0
  private failures = 0

  constructor(
    private readonly jose: Jose,
    /** The key set's URL (discovered, or configured). */
    private readonly uri: () => Promise<string>,
    private readonly fetchFn: AuthFetch,
    private readonly now: () => number,
    private readonly timings: JwksTimings = JWKS_TIMINGS,
    /** Called after 3 failed fetches in a row (to discover the issuer again). */
    private readonly onFailures: () => void = () => undefined,
  ) {}

  /** The keys to verify with: the cached ones while fresh, else refreshed. @throws AuthUnavailable */
  current(): Promise<KeySet> {
    const keys = this.keys
    const now = this.now()
    if (keys !== undefined && now < keys.expiresAt) return Promise.resolve(keys.set)
    return this.refresh()
  }

  /**
   * After a token named a `kid` the set lacks: a newer set when a refetch was allowed (the last
   * attempt is at least 30 s old) and the keys changed, else undefined (the token is refused).
   */
  async afterUnknownKid(seen: KeySet): Promise<KeySet | undefined> {
    if (this.keys !== undefined && this.keys.set.version !== seen.version) return this.keys.set
    if (this.pending === undefined && this.now() - this.lastAttempt < this.timings.unknownKidCooldownMs) return undefined
    try {
      const set = await this.refresh(true)
      return set.version === seen.version ? undefined : set
    } catch {
      return undefined
    }
  }

  /** One refresh at a time; a failure keeps the old keys up to `staleIfErrorMs` past expiry. */
  private refresh(force = false): Promise<KeySet> {
    if (this.pending !== undefined) return this.pending
    const attempt = this.fetchKeys(force)
    this.pending = attempt.finally(() => (this.pending = undefined))
    return this.pending
  }

  private async fetchKeys(force: boolean): Promise<KeySet> {
    const started = this.now()
    const keys = this.keys
    // a failed refresh is not retried by every request: at most once a second while stale keys serve
    if (!force && started - this.lastAttempt < this.timings.minAgeMs) {
      if (keys === undefined) throw new AuthUnavailable('the issuer key set cannot be fetched', Math.max(1, Math.ceil(this.timings.minAgeMs / 1000)))
      if (started < keys.expiresAt + this.timings.staleIfErrorMs) return keys.set
    }
    this.lastAttempt = started
    try {
      const res = await this.fetchWithHeaders(await this.uri())
      const publicKeys = publicKeysOf(res.doc)
      const fingerprint = JSON.stringify(publicKeys.map((k) => JSON.stringify(k)).sort())
      const now = this.now()
      const ttl = Math.max(this.timings.minAgeMs, Math.min(this.timings.maxAgeMs, res.maxAgeMs ?? this.timings.maxAgeMs))
      this.failures = 0
      if (keys !== undefined && keys.fingerprint === fingerprint) {
        this.keys = { ...keys, expiresAt: now + ttl }
        return keys.set
      }
      const set: KeySet = { resolve: this.jose.createLocalJWKSet({ keys: publicKeys } as JSONWebKeySet), version: ++this.version }
      this.keys = { set, fingerprint, expiresAt: now + ttl }
      return set
    } catch (error) {
      if (error instanceof AuthUnavailable && keys === undefined) throw error
      if (++this.failures >= 3) {
        this.failures = 0
        this.onFailures()
      }
      const now = this.now()
      if (keys !== undefined && now < keys.expiresAt + this.timings.staleIfErrorMs) return keys.set
      this.keys = undefined
      throw error instanceof AuthUnavailable ? error : new AuthUnavailable('the issuer key set cannot be fetched', Math.max(1, Math.ceil(this.timings.minAgeMs / 1000)))
    }
  }

  private async fetchWithHeaders(url: string): Promise<{ doc: Record<string, unknown>; maxAgeMs: number | undefined }> {
    let maxAgeMs: number | undefined
    const doc = await fetchJson(
      async (u, init) => {
        const res = await this.fetchFn(u, init)
        maxAgeMs = cacheControlMs(res.headers.get('cache-control'))
        return res
      },
      url,
    )
    return { doc, maxAgeMs }
  }
}
