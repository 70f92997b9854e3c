// The JWKS cache's bounds (src/mcp/auth/jwks.ts), on a fake clock and an injected fetch, so no
// test waits: fresh for 60 s or a shorter Cache-Control, one refetch per 30 s for unknown kids
// counted from the last attempt, a new key working within 45 s, a removed key stopping within
// 90 s, stale-if-error for 30 s, one fetch at a time.
import * as jose from 'jose'
import { beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { AccessTokenVerifier, DEFAULT_ALGORITHMS } from '../src/mcp/auth/verify.js'
import { cacheControlMs, JwksCache, publicKeysOf } from '../src/mcp/auth/jwks.js'
import { AuthUnavailable, TokenRefused } from '../src/mcp/auth/challenge.js'
import { signingKey, type SigningKey } from './fixtures/auth/issuer.js'
import { claimsOf, FakeClock, FakeIssuer, sign } from './fixtures/auth/mint.js'

const audience = 'https://mcp.example.test/mcp'
let k1: SigningKey
let k2: SigningKey
let fake: FakeIssuer
let clock: FakeClock
let v: AccessTokenVerifier

beforeAll(async () => {
  k1 = await signingKey('k1')
  k2 = await signingKey('k2')
})

beforeEach(() => {
  clock = new FakeClock()
  fake = new FakeIssuer()
  fake.keys = [k1.publicJwk]
  const keys = new JwksCache(jose, async () => fake.jwksUri, fake.fetch, clock.now)
  v = new AccessTokenVerifier(jose, { issuer: fake.issuer, audience, requireAtJwt: false, algorithms: DEFAULT_ALGORITHMS, clockToleranceSec: 60 }, keys, clock.now)
})

/** A fresh token (never remembered yet) signed with `key` at the clock's time. */
const tokenOf = (key: SigningKey, sub = `s${Math.random()}`) => sign(key, claimsOf(fake.issuer, audience, clock.ms, { sub }))

async function outcome(token: string): Promise<string> {
  try {
    await v.verify(token)
    return 'ok'
  } catch (error) {
    if (error instanceof TokenRefused) return error.reason
    if (error instanceof AuthUnavailable) return 'unavailable'
    throw error
  }
}

describe('freshness', () => {
  it('keeps the key set 60 s, then fetches it again', async () => {
    expect(await outcome(await tokenOf(k1))).toBe('ok')
    clock.advance(59)
    expect(await outcome(await tokenOf(k1))).toBe('ok')
    expect(fake.jwksFetches).toBe(1)
    clock.advance(2)
    expect(await outcome(await tokenOf(k1))).toBe('ok')
    expect(fake.jwksFetches).toBe(2)
  })

  it('keeps it for a shorter Cache-Control max-age, and at least 1 s for no-store', async () => {
    fake.cacheControl = 'public, max-age=10'
    await outcome(await tokenOf(k1))
    clock.advance(11)
    await outcome(await tokenOf(k1))
    expect(fake.jwksFetches).toBe(2)
    fake.cacheControl = 'no-store'
    clock.advance(11)
    await outcome(await tokenOf(k1))
    await outcome(await tokenOf(k1))
    expect(fake.jwksFetches).toBe(3)
    clock.advance(1.5)
    await outcome(await tokenOf(k1))
    expect(fake.jwksFetches).toBe(4)
  })

  it('reads Cache-Control', () => {
    expect(cacheControlMs(null)).toBeUndefined()
    expect(cacheControlMs('max-age=30')).toBe(30_000)
    expect(cacheControlMs('max-age=600, s-maxage=20')).toBe(20_000)
    expect(cacheControlMs('private, no-cache')).toBe(0)
    expect(cacheControlMs('public')).toBeUndefined()
  })

  it('makes one fetch for requests arriving together', async () => {
    const tokens = await Promise.all(Array.from({ length: 10 }, () => tokenOf(k1)))
    expect(await Promise.all(tokens.map(outcome))).toEqual(Array(10).fill('ok'))
    expect(fake.jwksFetches).toBe(1)
  })

  it('drops symmetric keys and keys with private members', () => {
    const kept = publicKeysOf({ keys: [{ kty: 'oct', k: 'AAAA' }, k1.privateJwk, k1.publicJwk, { ...k2.publicJwk, use: 'enc' }] })
    expect(kept).toEqual([k1.publicJwk])
  })
})

describe('unknown kid', () => {
  it('refetches at most once per 30 s, counted from the last attempt, whatever the flood', async () => {
    await outcome(await tokenOf(k1))
    clock.advance(30)
    const junk = await Promise.all(Array.from({ length: 20 }, () => tokenOf(k2)))
    expect(await Promise.all(junk.map(outcome))).toEqual(Array(20).fill('unknown_key'))
    expect(fake.jwksFetches).toBe(2)
    // while the endpoint fails, attempts still count: no fetch per token
    fake.failing = true
    clock.advance(10)
    for (const t of junk.slice(0, 5)) expect(await outcome(t)).toBe('unknown_key')
    expect(fake.jwksFetches).toBe(2)
    clock.advance(21)
    for (const t of junk.slice(0, 5)) await outcome(t)
    expect(fake.jwksFetches).toBe(3)
  })

  it('makes a new key work within 45 s, even right after a refetch', async () => {
    await outcome(await tokenOf(k1))
    clock.advance(20)
    // a junk kid has just spent the refetch: the worst case for a new key
    await outcome(await tokenOf(k2))
    const published = clock.ms
    fake.keys = [k1.publicJwk, k2.publicJwk]
    let acceptedAfter: number | undefined
    for (let s = 0; s <= 45; s++) {
      if ((await outcome(await tokenOf(k2))) === 'ok') {
        acceptedAfter = (clock.ms - published) / 1000
        break
      }
      clock.advance(1)
    }
    expect(acceptedAfter).toBeDefined()
    expect(acceptedAfter!).toBeLessThanOrEqual(45)
  })
})

describe('removed keys and an unreachable issuer', () => {
  it('stops a removed key within 90 s, even while the issuer fails', async () => {
    const token = await tokenOf(k1, 'alice')
    expect(await outcome(token)).toBe('ok')
    const removed = clock.ms
    fake.keys = [k2.publicJwk]
    fake.failing = true
    let refusedAfter: number | undefined
    for (let s = 0; s <= 90; s++) {
      if ((await outcome(token)) !== 'ok') {
        refusedAfter = (clock.ms - removed) / 1000
        break
      }
      clock.advance(1)
    }
    expect(refusedAfter).toBeDefined()
    expect(refusedAfter!).toBeLessThanOrEqual(90)
  })

  it('serves stale keys for 30 s past expiry when a refresh fails, then answers unavailable', async () => {
    expect(await outcome(await tokenOf(k1))).toBe('ok')
    fake.failing = true
    clock.advance(61)
    expect(await outcome(await tokenOf(k1))).toBe('ok')
    clock.advance(25)
    expect(await outcome(await tokenOf(k1))).toBe('ok')
    clock.advance(5)
    expect(await outcome(await tokenOf(k1))).toBe('unavailable')
    // and back once the issuer answers
    fake.failing = false
    clock.advance(2)
    expect(await outcome(await tokenOf(k1))).toBe('ok')
  })

  it('removes a key at once from a rotation that is fetched', async () => {
    const token = await tokenOf(k1, 'alice')
    expect(await outcome(token)).toBe('ok')
    fake.keys = [k2.publicJwk]
    clock.advance(61)
    expect(await outcome(token)).toBe('unknown_key')
    expect(await outcome(await tokenOf(k2))).toBe('ok')
  })
})
