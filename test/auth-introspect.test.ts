// RFC 7662 introspection of opaque tokens (src/mcp/auth/introspect.ts) against a stub endpoint:
// what an answer must say, Basic client authentication, the caches, and an unreachable endpoint.
import { beforeEach, describe, expect, it } from 'vitest'
import { Introspector } from '../src/mcp/auth/introspect.js'
import { AuthUnavailable, TokenRefused } from '../src/mcp/auth/challenge.js'
import { FakeClock, FakeIssuer } from './fixtures/auth/mint.js'

const audience = 'https://mcp.example.test/mcp'
let fake: FakeIssuer
let clock: FakeClock
let intro: Introspector
const secret = 'the client secret: never shown'

beforeEach(() => {
  clock = new FakeClock()
  fake = new FakeIssuer()
  intro = new Introspector(
    { endpoint: async () => `${fake.issuer}/introspect`, clientId: 'toolwire rs', clientSecret: secret, issuer: fake.issuer, audience, clockToleranceSec: 60 },
    fake.fetch,
    clock.now,
  )
})

const start = Math.floor(new FakeClock().ms / 1000)
const active = (more: Record<string, unknown> = {}) => ({ active: true, iss: new FakeIssuer().issuer, aud: audience, sub: 'alice', client_id: 'app', scope: 'files:read', exp: start + 300, ...more })

async function outcome(token: string): Promise<string> {
  try {
    const { principal } = await intro.introspect(token)
    return `ok ${principal.subject} ${principal.scopes.join(',')}`
  } catch (error) {
    if (error instanceof TokenRefused) {
      expect(error.message).not.toContain(token)
      return error.reason
    }
    if (error instanceof AuthUnavailable) return 'unavailable'
    throw error
  }
}

describe('introspection', () => {
  it('accepts an active token for this audience, posting it with Basic client authentication', async () => {
    fake.introspectionAnswer = active()
    expect(await outcome('opaque-1')).toBe('ok alice files:read')
    const [call] = fake.introspections
    expect(call!.authorization).toBe(`Basic ${Buffer.from(`toolwire+rs:${encodeURIComponent(secret).replace(/%20/g, '+')}`).toString('base64')}`)
    expect(new URLSearchParams(call!.body).get('token')).toBe('opaque-1')
    expect(new URLSearchParams(call!.body).get('token_type_hint')).toBe('access_token')
  })

  it('takes the client as the subject when the answer names none (client credentials)', async () => {
    fake.introspectionAnswer = active({ sub: undefined })
    expect(await outcome('opaque-2')).toBe('ok app files:read')
  })

  it.each([
    ['inactive', { active: false }, 'inactive'],
    ['another issuer', active({ iss: 'https://other.example' }), 'issuer'],
    ['no aud', active({ aud: undefined }), 'audience'],
    ['another aud', active({ aud: ['https://other.example/mcp'] }), 'audience'],
    ['no exp', active({ exp: undefined }), 'claims'],
    ['expired', active({ exp: start - 120 }), 'expired'],
    ['nbf ahead', active({ nbf: start + 120 }), 'not_yet_valid'],
  ])('refuses %s', async (_label, answer, reason) => {
    fake.introspectionAnswer = answer
    expect(await outcome('opaque-3')).toBe(reason)
  })

  it('keeps an active answer up to 60 s and an inactive one 10 s', async () => {
    fake.introspectionAnswer = active()
    await outcome('a')
    clock.advance(59)
    await outcome('a')
    expect(fake.introspections).toHaveLength(1)
    clock.advance(2)
    await outcome('a')
    expect(fake.introspections).toHaveLength(2)
    fake.introspectionAnswer = { active: false }
    expect(await outcome('b')).toBe('inactive')
    clock.advance(9)
    expect(await outcome('b')).toBe('inactive')
    expect(fake.introspections).toHaveLength(3)
    clock.advance(2)
    await outcome('b')
    expect(fake.introspections).toHaveLength(4)
  })

  it('answers unavailable (503) when the endpoint fails, naming no secret', async () => {
    fake.failing = true
    await expect(intro.introspect('opaque-4')).rejects.toSatisfy((e: unknown) => e instanceof AuthUnavailable && !e.message.includes(secret) && !e.message.includes('opaque-4'))
  })
})
