// Access token verification (src/mcp/auth/verify.ts) with keys minted by jose and an issuer
// answering through an injected fetch: every check of issue 23's Deliver 1, each refusal's fixed
// text (no `=`, `"` or `\`, never the token), discovery, and the verified-token cache.
import * as jose from 'jose'
import { beforeEach, describe, expect, it } from 'vitest'
import { AccessTokenVerifier, DEFAULT_ALGORITHMS } from '../src/mcp/auth/verify.js'
import { JwksCache } from '../src/mcp/auth/jwks.js'
import { Introspector } from '../src/mcp/auth/introspect.js'
import { discoveryUrls, IssuerDiscovery } from '../src/mcp/auth/discovery.js'
import { AuthUnavailable, TOKEN_REFUSAL_TEXT, TokenRefused, type TokenRefusalReason } from '../src/mcp/auth/challenge.js'
import { signingKey, type SigningKey } from './fixtures/auth/issuer.js'
import { claimsOf, FakeClock, FakeIssuer, forged, sign } from './fixtures/auth/mint.js'

const audience = 'https://mcp.example.test/mcp'
let key: SigningKey
let other: SigningKey
let fake: FakeIssuer
let clock: FakeClock

function verifier(o: { requireAtJwt?: boolean; algorithms?: readonly string[] } = {}): AccessTokenVerifier {
  const discovery = new IssuerDiscovery(fake.issuer, fake.fetch, clock.now)
  const keys = new JwksCache(jose, async () => (await discovery.endpoints()).jwksUri, fake.fetch, clock.now)
  const rules = { issuer: fake.issuer, audience, requireAtJwt: o.requireAtJwt === true, algorithms: o.algorithms ?? DEFAULT_ALGORITHMS, clockToleranceSec: 60 }
  return new AccessTokenVerifier(jose, rules, keys, clock.now)
}

async function refusal(v: AccessTokenVerifier, token: string): Promise<TokenRefusalReason | string> {
  try {
    await v.verify(token)
    return 'accepted'
  } catch (error) {
    if (error instanceof TokenRefused) {
      expect(error.message).not.toContain(token)
      return error.reason
    }
    return String(error)
  }
}

beforeEach(async () => {
  key ??= await signingKey('k1')
  other ??= await signingKey('k2')
  clock = new FakeClock()
  fake = new FakeIssuer()
  fake.keys = [key.publicJwk]
})

describe('a valid access token', () => {
  it('gives the principal: subject, issuer, client and scopes', async () => {
    const token = await sign(key, claimsOf(fake.issuer, audience, clock.ms))
    const verified = await verifier().verify(token)
    expect(verified.principal).toEqual({ subject: 'alice', issuer: fake.issuer, clientId: 'alice', scopes: ['files:read', 'files:write'] })
    expect(verified.expiresAt).toBe(Math.floor(clock.ms / 1000) + 300)
  })

  it.each([
    ['aud as a list holding the audience', { aud: ['https://other.example', audience] }, {}],
    ['scp as a list', { scope: undefined, scp: ['a', 'b'] }, {}],
    ['typ JWT', {}, { typ: 'JWT' }],
    ['typ application/at+jwt', {}, { typ: 'application/at+jwt' }],
    ['typ AT+JWT in capitals', {}, { typ: 'AT+JWT' }],
    ['30 s past exp (inside the 60 s skew)', { exp: Math.floor(Date.UTC(2026, 11, 2, 12) / 1000) - 30 }, {}],
    ['azp instead of client_id', { client_id: undefined, azp: 'app' }, {}],
  ])('is accepted with %s', async (_label, claims, header) => {
    const token = await sign(key, claimsOf(fake.issuer, audience, clock.ms, claims), header)
    expect(await refusal(verifier(), token)).toBe('accepted')
  })

  it('reads scp as scopes, and azp as the client', async () => {
    const token = await sign(key, claimsOf(fake.issuer, audience, clock.ms, { scope: undefined, scp: ['a', 'b'], client_id: undefined, azp: 'app' }))
    expect((await verifier().verify(token)).principal).toMatchObject({ scopes: ['a', 'b'], clientId: 'app' })
  })
})

describe('every refused token is told why, by a fixed text', () => {
  const now = Math.floor(Date.UTC(2026, 11, 2, 12) / 1000)
  const cases: [string, () => Promise<string>, TokenRefusalReason][] = [
    ['expired 2 minutes ago', () => sign(key, claimsOf(fake.issuer, audience, clock.ms, { exp: now - 120 })), 'expired'],
    ['nbf 2 minutes ahead', () => sign(key, claimsOf(fake.issuer, audience, clock.ms, { nbf: now + 120 })), 'not_yet_valid'],
    ['no exp', () => sign(key, claimsOf(fake.issuer, audience, clock.ms, { exp: undefined })), 'claims'],
    ['no sub', () => sign(key, claimsOf(fake.issuer, audience, clock.ms, { sub: undefined })), 'claims'],
    ['a scope that is no scope token', () => sign(key, claimsOf(fake.issuer, audience, clock.ms, { scp: ['a"b'], scope: undefined })), 'claims'],
    ['another audience', () => sign(key, claimsOf(fake.issuer, 'https://mcp.example.test/other', clock.ms)), 'audience'],
    ['the audience with a trailing slash', () => sign(key, claimsOf(fake.issuer, `${audience}/`, clock.ms)), 'audience'],
    ['another issuer', () => sign(key, claimsOf(`${fake.issuer}/`, audience, clock.ms)), 'issuer'],
    ['a bad signature', async () => forged(key, claimsOf(fake.issuer, audience, clock.ms), await sign(key, claimsOf(fake.issuer, audience, clock.ms))).badSignature, 'signature'],
    ['alg none', async () => forged(key, claimsOf(fake.issuer, audience, clock.ms), '').none, 'algorithm'],
    ['HS256 signed with the public key', async () => forged(key, claimsOf(fake.issuer, audience, clock.ms), '').hmacWithPublicKey, 'algorithm'],
    ['an unknown kid', () => sign(other, claimsOf(fake.issuer, audience, clock.ms)), 'unknown_key'],
    ['no typ', () => sign(key, claimsOf(fake.issuer, audience, clock.ms), { typ: undefined }), 'type'],
    ['typ id+jwt', () => sign(key, claimsOf(fake.issuer, audience, clock.ms), { typ: 'id+jwt' }), 'type'],
    ['malformed: three parts, no JSON', async () => 'not.a.jwt', 'malformed'],
    ['opaque, without introspection', async () => 'an-opaque-token-value', 'opaque'],
  ]
  it.each(cases)('%s', async (_label, make, reason) => {
    const token = await make()
    expect(await refusal(verifier(), token)).toBe(reason)
  })

  it('refuses typ JWT when requireAtJwt is set', async () => {
    const token = await sign(key, claimsOf(fake.issuer, audience, clock.ms), { typ: 'JWT' })
    expect(await refusal(verifier({ requireAtJwt: true }), token)).toBe('type')
    const at = await sign(key, claimsOf(fake.issuer, audience, clock.ms), { typ: 'application/at+jwt' })
    expect(await refusal(verifier({ requireAtJwt: true }), at)).toBe('accepted')
  })

  it('refuses an algorithm left out of `algorithms`', async () => {
    const token = await sign(key, claimsOf(fake.issuer, audience, clock.ms))
    expect(await refusal(verifier({ algorithms: ['RS256'] }), token)).toBe('algorithm')
  })

  it('refuses alg none and HMAC before fetching any key', async () => {
    const { none, hmacWithPublicKey } = forged(key, claimsOf(fake.issuer, audience, clock.ms), '')
    const v = verifier()
    expect(await refusal(v, none)).toBe('algorithm')
    expect(await refusal(v, hmacWithPublicKey)).toBe('algorithm')
    expect(fake.metadataFetches + fake.jwksFetches).toBe(0)
  })

  it('has texts a client reads back whole: no "=", quote or backslash', () => {
    for (const text of Object.values(TOKEN_REFUSAL_TEXT)) expect(text).not.toMatch(/[="\\]/)
  })
})

describe('introspection is for opaque tokens only', () => {
  it('never sends a token shaped as a JWT there: a bad JWT is refused for what it is', async () => {
    const discovery = new IssuerDiscovery(fake.issuer, fake.fetch, clock.now)
    const keys = new JwksCache(jose, async () => (await discovery.endpoints()).jwksUri, fake.fetch, clock.now)
    const intro = new Introspector(
      { endpoint: async () => `${fake.issuer}/introspect`, clientId: 'rs', clientSecret: 'rs-secret', issuer: fake.issuer, audience, clockToleranceSec: 60 },
      fake.fetch,
      clock.now,
    )
    const v = new AccessTokenVerifier(jose, { issuer: fake.issuer, audience, requireAtJwt: false, algorithms: DEFAULT_ALGORITHMS, clockToleranceSec: 60 }, keys, clock.now, intro)
    fake.introspectionAnswer = { active: true, aud: audience, sub: 'mallory', exp: Math.floor(clock.ms / 1000) + 300 }
    expect(await refusal(v, await sign(other, claimsOf(fake.issuer, audience, clock.ms)))).toBe('unknown_key')
    expect(await refusal(v, 'abc.def.ghi')).toBe('accepted')
    // 'abc.def.ghi' is no JWS (its first part is no JSON header): that one went to introspection, the JWT did not
    expect(fake.introspections).toHaveLength(1)
  })
})

describe('discovery', () => {
  it('tries RFC 8414 then OpenID Connect metadata, path-aware', () => {
    expect(discoveryUrls('https://id.example.test')).toEqual(['https://id.example.test/.well-known/oauth-authorization-server', 'https://id.example.test/.well-known/openid-configuration'])
    expect(discoveryUrls('https://id.example.test/tenant/')).toEqual([
      'https://id.example.test/.well-known/oauth-authorization-server/tenant',
      'https://id.example.test/.well-known/openid-configuration/tenant',
      'https://id.example.test/tenant/.well-known/openid-configuration',
    ])
  })

  it('takes only a document naming exactly the issuer, and backs off while none does', async () => {
    const wrong = new FakeIssuer('https://id.example.test')
    const fetchFn = async (url: string, init: RequestInit): Promise<Response> =>
      url.endsWith('/oauth-authorization-server') ? Response.json({ issuer: 'https://id.example.test/', jwks_uri: wrong.jwksUri }) : wrong.fetch(url, init)
    const discovery = new IssuerDiscovery('https://id.example.test', fetchFn, clock.now)
    await expect(discovery.endpoints()).rejects.toBeInstanceOf(AuthUnavailable)
    // during the back-off nothing is fetched: the same refusal
    await expect(discovery.endpoints()).rejects.toMatchObject({ retryAfterSec: 1 })
  })

  it('refuses (503) while the key set cannot be fetched and no key is known', async () => {
    fake.failing = true
    const token = await sign(key, claimsOf(fake.issuer, audience, clock.ms))
    await expect(verifier().verify(token)).rejects.toBeInstanceOf(AuthUnavailable)
  })
})

describe('the verified-token cache', () => {
  it('answers a token again without verifying it, until the key set changes', async () => {
    const v = verifier()
    const token = await sign(key, claimsOf(fake.issuer, audience, clock.ms))
    const first = await v.verify(token)
    expect(await v.verify(token)).toBe(first)
    // the key is removed at the issuer: once the set is refetched, the remembered token goes too
    fake.keys = [other.publicJwk]
    clock.advance(61)
    expect(await refusal(v, token)).toBe('unknown_key')
  })
})
