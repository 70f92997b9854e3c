// Quotas per principal (issue #23, Deliver 5): a token bucket and a concurrency count per
// principal key, a 429 refusal with Retry-After, and a bounded table. A fake clock drives every
// time-dependent case: no timing assertion.
import { describe, expect, it } from 'vitest'
import { checkQuotaOptions, MAX_TRACKED_PRINCIPALS, PrincipalQuotas, quotaRefusal, type QuotaAdmission, type QuotaOptions } from '../src/mcp/quotas.js'

const A = 'a'.repeat(64)
const B = 'b'.repeat(64)

/** Quotas on a clock the test moves (ms). */
function clocked(options: QuotaOptions, maxPrincipals?: number): { quotas: PrincipalQuotas; advance: (ms: number) => void } {
  let t = 1_000_000
  const quotas = new PrincipalQuotas(options, { now: () => t, ...(maxPrincipals === undefined ? {} : { maxPrincipals }) })
  return { quotas, advance: (ms) => (t += ms) }
}

function admitted(a: QuotaAdmission): () => void {
  if (!a.ok) throw new Error(`refused: ${a.reason} ${a.retryAfterSec}`)
  return a.release
}

/** Acquires and releases `n` times; how many were admitted. */
function spend(quotas: PrincipalQuotas, key: string, n: number): number {
  let ok = 0
  for (let i = 0; i < n; i++) {
    const a = quotas.tryAcquire(key)
    if (a.ok) {
      ok++
      a.release()
    }
  }
  return ok
}

describe('the token bucket', () => {
  it('lets a rested principal make burst calls at once (default: callsPerMinute), then refuses with reason rate', () => {
    const { quotas } = clocked({ callsPerMinute: 60 })
    expect(spend(quotas, A, 100)).toBe(60)
    expect(quotas.tryAcquire(A)).toEqual({ ok: false, reason: 'rate', retryAfterSec: 1 })
    const small = clocked({ callsPerMinute: 60, burst: 5 }).quotas
    expect(spend(small, A, 10)).toBe(5)
  })

  it('a fractional rate gets a burst of one', () => {
    const { quotas, advance } = clocked({ callsPerMinute: 0.5 })
    expect(spend(quotas, A, 3)).toBe(1)
    expect(quotas.tryAcquire(A)).toEqual({ ok: false, reason: 'rate', retryAfterSec: 120 })
    advance(120_000)
    expect(spend(quotas, A, 3)).toBe(1)
  })

  it('refills continuously at callsPerMinute / 60 per second, never above burst', () => {
    const { quotas, advance } = clocked({ callsPerMinute: 30, burst: 3 })
    expect(spend(quotas, A, 3)).toBe(3)
    advance(1999)
    expect(quotas.tryAcquire(A).ok).toBe(false)
    advance(1)
    expect(spend(quotas, A, 2)).toBe(1) // one token at exactly 2 s
    advance(3_600_000)
    expect(spend(quotas, A, 10)).toBe(3) // an hour rests it to burst, not more
  })

  it('Retry-After is the seconds until one token, rounded up, at least 1', () => {
    const { quotas, advance } = clocked({ callsPerMinute: 7, burst: 1 })
    expect(spend(quotas, A, 1)).toBe(1)
    expect(quotas.tryAcquire(A)).toMatchObject({ ok: false, retryAfterSec: 9 }) // 60/7 = 8.57 s
    advance(8000)
    expect(quotas.tryAcquire(A)).toMatchObject({ ok: false, retryAfterSec: 1 }) // 0.57 s left
    advance(571)
    expect(quotas.tryAcquire(A)).toMatchObject({ ok: false, retryAfterSec: 1 }) // under a ms left
    advance(1)
    expect(quotas.tryAcquire(A).ok).toBe(true)

    const exact = clocked({ callsPerMinute: 30, burst: 1 })
    expect(spend(exact.quotas, A, 1)).toBe(1)
    expect(exact.quotas.tryAcquire(A)).toMatchObject({ retryAfterSec: 2 }) // exactly 2 s: not 3
    exact.advance(500)
    expect(exact.quotas.tryAcquire(A)).toMatchObject({ retryAfterSec: 2 }) // 1.5 s

    // 40 s after a token at 1 a minute, 20 s are left (the float math gives 20.000000000000004)
    const slow = clocked({ callsPerMinute: 1 })
    expect(spend(slow.quotas, A, 1)).toBe(1)
    slow.advance(40_000)
    expect(slow.quotas.tryAcquire(A)).toMatchObject({ retryAfterSec: 20 })
  })

  it('a refused call takes no token: retrying early does not push the next one later', () => {
    const { quotas, advance } = clocked({ callsPerMinute: 60, burst: 1 })
    expect(spend(quotas, A, 1)).toBe(1)
    for (let i = 0; i < 9; i++) {
      advance(100)
      expect(quotas.tryAcquire(A).ok).toBe(false)
    }
    advance(100)
    expect(quotas.tryAcquire(A).ok).toBe(true)
  })

  it('each principal has its own bucket', () => {
    const { quotas } = clocked({ callsPerMinute: 60, burst: 2 })
    expect(spend(quotas, A, 5)).toBe(2)
    expect(spend(quotas, B, 5)).toBe(2)
  })
})

describe('concurrency per principal', () => {
  it('A at its limit is refused with reason concurrency and Retry-After 1; B is not affected', () => {
    const { quotas } = clocked({ concurrentCalls: 2 })
    const a1 = admitted(quotas.tryAcquire(A))
    admitted(quotas.tryAcquire(A))
    expect(quotas.tryAcquire(A)).toEqual({ ok: false, reason: 'concurrency', retryAfterSec: 1 })
    admitted(quotas.tryAcquire(B))
    admitted(quotas.tryAcquire(B))
    a1()
    admitted(quotas.tryAcquire(A))
    expect(quotas.tryAcquire(A).ok).toBe(false)
  })

  it.each([{ concurrentCalls: 1 }, { concurrentCalls: 1, callsPerMinute: 60 }])('release is idempotent: a second release frees no second slot (%o)', (options) => {
    const { quotas } = clocked(options)
    const release = admitted(quotas.tryAcquire(A))
    release()
    release()
    admitted(quotas.tryAcquire(A))
    expect(quotas.tryAcquire(A)).toMatchObject({ ok: false, reason: 'concurrency' })
  })

  it('a call refused for its slot takes no token, and one refused for its rate takes no slot', () => {
    const { quotas, advance } = clocked({ concurrentCalls: 1, callsPerMinute: 60, burst: 2 })
    const first = admitted(quotas.tryAcquire(A))
    for (let i = 0; i < 5; i++) expect(quotas.tryAcquire(A)).toMatchObject({ ok: false, reason: 'concurrency' })
    first()
    admitted(quotas.tryAcquire(A))() // the second token was still there
    expect(quotas.tryAcquire(A)).toMatchObject({ ok: false, reason: 'rate' })
    advance(1000)
    admitted(quotas.tryAcquire(A)) // the rate refusal held no slot
  })

  it('an empty bucket is reported before a full slot count (its wait is the longer one)', () => {
    const { quotas } = clocked({ concurrentCalls: 1, callsPerMinute: 6, burst: 1 })
    admitted(quotas.tryAcquire(A))
    expect(quotas.tryAcquire(A)).toEqual({ ok: false, reason: 'rate', retryAfterSec: 10 })
  })

  it('without limits every call is admitted and nothing is tracked', () => {
    const quotas = new PrincipalQuotas({})
    for (let i = 0; i < 1000; i++) expect(quotas.tryAcquire(A).ok).toBe(true)
    expect(quotas.size).toBe(0)
  })
})

describe('the table stays bounded', () => {
  it(`a flood of distinct principals keeps at most ${MAX_TRACKED_PRINCIPALS.toLocaleString('en-US')} tracked; an evicted one comes back with a full bucket`, () => {
    const { quotas } = clocked({ callsPerMinute: 1, burst: 2 })
    expect(spend(quotas, A, 2)).toBe(2)
    expect(quotas.tryAcquire(A).ok).toBe(false)
    for (let i = 0; i < MAX_TRACKED_PRINCIPALS + 50; i++) spend(quotas, i.toString(16).padStart(64, '0'), 1)
    expect(quotas.size).toBe(MAX_TRACKED_PRINCIPALS)
    expect(spend(quotas, A, 5)).toBe(2) // A was the least recently seen: dropped, then new
    expect(quotas.size).toBe(MAX_TRACKED_PRINCIPALS)
  })

  it('the least recently seen principal is dropped first', () => {
    const { quotas } = clocked({ callsPerMinute: 1, burst: 1 }, 3)
    for (const key of ['k1', 'k2', 'k3']) spend(quotas, key, 1)
    expect(quotas.tryAcquire('k1').ok).toBe(false) // k1 seen again: k2 is now the oldest
    spend(quotas, 'k4', 1)
    expect(quotas.size).toBe(3)
    expect(quotas.tryAcquire('k1').ok).toBe(false) // kept, still empty
    expect(quotas.tryAcquire('k3').ok).toBe(false) // kept, still empty
    expect(quotas.tryAcquire('k2').ok).toBe(true) // dropped: a full bucket again
  })

  it('a principal with a call in flight is never dropped, so its concurrency count stays exact', () => {
    const { quotas } = clocked({ concurrentCalls: 1, callsPerMinute: 60 }, 3)
    const release = admitted(quotas.tryAcquire(A))
    for (let i = 0; i < 100; i++) expect(spend(quotas, `flood-${i}`, 1)).toBe(1)
    expect(quotas.size).toBe(3)
    expect(quotas.tryAcquire(A)).toMatchObject({ ok: false, reason: 'concurrency' })
    release()
    admitted(quotas.tryAcquire(A))
  })

  it('principals with calls in flight may pass the bound (each holds a request open), and the table still admits', () => {
    const { quotas } = clocked({ concurrentCalls: 1 }, 2)
    admitted(quotas.tryAcquire(A))
    admitted(quotas.tryAcquire(B))
    admitted(quotas.tryAcquire('c'))
    expect(quotas.size).toBe(3)
    expect(quotas.tryAcquire(A)).toMatchObject({ ok: false, reason: 'concurrency' })
    expect(quotas.tryAcquire(B)).toMatchObject({ ok: false, reason: 'concurrency' })
  })

  it('a rested principal (full bucket, nothing in flight) is forgotten', () => {
    const concurrency = clocked({ concurrentCalls: 4 }).quotas
    for (let i = 0; i < 1000; i++) admitted(concurrency.tryAcquire(`k${i}`))()
    expect(concurrency.size).toBe(0) // forgotten at release

    const { quotas, advance } = clocked({ callsPerMinute: 60, burst: 10 })
    for (let i = 0; i < 1000; i++) spend(quotas, `k${i}`, 1)
    expect(quotas.size).toBe(1000)
    advance(1000) // one token each: every bucket is full again
    spend(quotas, B, 1)
    expect(quotas.size).toBe(1) // swept when the next new principal came
  })
})

describe('the refusal', () => {
  it('is a 429 with Retry-After and the message of the JSON-RPC error', () => {
    expect(quotaRefusal({ reason: 'rate', retryAfterSec: 9 })).toEqual({
      status: 429,
      message: 'Too Many Requests: rate limit for this principal',
      headers: { 'retry-after': '9' },
    })
    expect(quotaRefusal({ reason: 'concurrency', retryAfterSec: 1 })).toEqual({
      status: 429,
      message: 'Too Many Requests: too many calls in flight for this principal',
      headers: { 'retry-after': '1' },
    })
  })

})

describe('checkQuotaOptions', () => {
  const check = (value: unknown): void => checkQuotaOptions(value, 'auth.quotas')

  it('accepts nothing, an empty object, and well-formed limits', () => {
    expect(() => check(undefined)).not.toThrow()
    expect(() => check({})).not.toThrow()
    expect(() => check({ concurrentCalls: 4, callsPerMinute: 0.5, burst: 3 })).not.toThrow()
  })

  it('refuses a non-object', () => {
    for (const value of [null, 5, 'x', []]) expect(() => check(value)).toThrow(new TypeError('toolwire: serveHttp() option auth.quotas must be an object'))
  })

  it('refuses an unknown key, naming it under the prefix and listing the options', () => {
    expect(() => check({ callsPerMinut: 5 })).toThrow(
      new TypeError('toolwire: serveHttp() has no option "auth.quotas.callsPerMinut" (its options: auth.quotas.concurrentCalls, auth.quotas.callsPerMinute, auth.quotas.burst)'),
    )
  })

  it.each([
    ['concurrentCalls', [0, -1, 1.5, NaN, Infinity, '4', null, true], 'a positive integer'],
    ['callsPerMinute', [0, -1, NaN, Infinity, '60', null], 'a positive finite number'],
    ['burst', [0, -1, 1.5, NaN, '5', null], 'a positive integer'],
  ])('refuses a malformed %s, naming auth.quotas.%s and never the value', (key, values, must) => {
    for (const value of values) {
      const options = key === 'burst' ? { callsPerMinute: 60, burst: value } : { [key]: value }
      expect(() => check(options)).toThrow(new TypeError(`toolwire: serveHttp() option auth.quotas.${key} must be ${must}`))
    }
  })

  it('refuses burst without callsPerMinute', () => {
    expect(() => check({ burst: 5 })).toThrow(new TypeError('toolwire: serveHttp() option auth.quotas.burst needs auth.quotas.callsPerMinute'))
  })

  it('the constructor checks its options too', () => {
    expect(() => new PrincipalQuotas({ concurrentCalls: 0 })).toThrow(TypeError)
  })
})
