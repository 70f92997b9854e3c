/**
 * Quotas per principal (`serveHttp({ auth: { quotas } })`): how many `tools/call` requests one
 * principal may have in flight, and how fast it may make them (a token bucket). A refused call
 * gets 429 with `Retry-After` and runs nothing. Keyed by `principalKey`, so every token of one
 * subject shares one quota. No MCP SDK import.
 */
import { checkOptions, isPositiveInteger, type OptionRule, type OptionRules } from './options.js'

/** `auth.quotas` of `serveHttp`. Without a key, that limit is off. */
export interface QuotaOptions {
  /** The most `tools/call` requests one principal has in flight, from admission to the end of the response. */
  readonly concurrentCalls?: number
  /** The sustained rate of `tools/call` requests per principal: a bucket refills at this many tokens a minute, continuously. */
  readonly callsPerMinute?: number
  /** The bucket's size: the most calls a rested principal makes at once (default `ceil(callsPerMinute)`, a minute's worth). Needs `callsPerMinute`. */
  readonly burst?: number
}

/** A clock and a bound, for tests (not an option of serveHttp). */
export interface QuotaInternals {
  /** Milliseconds on a monotonic clock (default `performance.now()`). */
  readonly now?: () => number
  /** The most principals tracked at once (default 100 000). */
  readonly maxPrincipals?: number
}

/** The answer of {@link PrincipalQuotas.tryAcquire}. */
export type QuotaAdmission =
  | { readonly ok: true; readonly release: () => void }
  | { readonly ok: false; readonly retryAfterSec: number; readonly reason: 'rate' | 'concurrency' }

/** The most principals a {@link PrincipalQuotas} tracks by default. */
export const MAX_TRACKED_PRINCIPALS = 100_000

const isPositiveRate: OptionRule = { must: 'a positive finite number', ok: (v) => typeof v === 'number' && Number.isFinite(v) && v > 0 }

/** The rules of `auth.quotas`, for `checkOptions`. */
export const QUOTA_OPTION_RULES: OptionRules = { concurrentCalls: isPositiveInteger, callsPerMinute: isPositiveRate, burst: isPositiveInteger }

/**
 * Checks `value` as `<prefix>` options of `fn`: `undefined` passes; an unknown key, a malformed
 * value, or `burst` without `callsPerMinute` is a TypeError naming `<prefix>.<key>` (never the value).
 */
export function checkQuotaOptions(value: unknown, prefix: string, fn = 'serveHttp'): asserts value is QuotaOptions | undefined {
  checkOptions(fn, value, QUOTA_OPTION_RULES, `${prefix}.`)
  const options = value as QuotaOptions | undefined
  if (options?.burst !== undefined && options.callsPerMinute === undefined) {
    throw new TypeError(`toolwire: ${fn}() option ${prefix}.burst needs ${prefix}.callsPerMinute`)
  }
}

interface Entry {
  /** Tokens in the bucket at `at` (a fraction while it refills). */
  tokens: number
  /** The last admission, in clock ms. */
  at: number
  /** `tools/call` requests admitted and not yet released. */
  inFlight: number
}

/**
 * The quotas of every principal, in one process. Memory stays bounded under a flood of distinct
 * principals: a principal with nothing in flight and a full bucket is forgotten (it is the same as
 * a new one), and at most `maxPrincipals` are tracked, the least recently seen idle one dropped
 * first. A dropped principal comes back with a full bucket. A principal with a call in flight is
 * never dropped, so its concurrency count is exact.
 */
export class PrincipalQuotas {
  /** Least recently seen first. */
  private readonly entries = new Map<string, Entry>()
  private readonly concurrentCalls: number
  private readonly callsPerMinute: number
  private readonly burst: number
  private readonly now: () => number
  private readonly maxPrincipals: number

  constructor(options: QuotaOptions = {}, internals: QuotaInternals = {}) {
    checkQuotaOptions(options, 'quotas', 'new PrincipalQuotas')
    this.concurrentCalls = options.concurrentCalls ?? Infinity
    this.callsPerMinute = options.callsPerMinute ?? Infinity
    this.burst = options.burst ?? Math.ceil(this.callsPerMinute)
    this.now = internals.now ?? (() => performance.now())
    this.maxPrincipals = internals.maxPrincipals ?? MAX_TRACKED_PRINCIPALS
  }

  /** Principals tracked now. */
  get size(): number {
    return this.entries.size
  }

  /**
   * Admits one `tools/call` of the principal `key`: it takes a token and a slot, given back (the
   * slot only) by `release`, which may be called more than once. A refusal takes neither, and says
   * when to retry: with an empty bucket `'rate'` and the seconds until the next token (at least 1),
   * else with every slot taken `'concurrency'` and 1.
   */
  tryAcquire(key: string): QuotaAdmission {
    if (this.concurrentCalls === Infinity && this.callsPerMinute === Infinity) return { ok: true, release: () => {} }
    const now = this.now()
    let entry = this.entries.get(key)
    if (entry === undefined) {
      this.trim(now)
      entry = { tokens: this.burst, at: now, inFlight: 0 }
    } else this.entries.delete(key)
    this.entries.set(key, entry)
    // a refusal changes nothing: the bucket's state is recomputed from its last admission
    const tokens = this.tokensAt(entry, now)
    if (tokens < 1) {
      // 1e-9 keeps float noise (2.0000000000000004) from adding a second
      const wait = ((1 - tokens) * 60) / this.callsPerMinute
      return { ok: false, retryAfterSec: Math.max(1, Math.ceil(wait - 1e-9)), reason: 'rate' }
    }
    if (entry.inFlight >= this.concurrentCalls) return { ok: false, retryAfterSec: 1, reason: 'concurrency' }
    entry.tokens = tokens - 1
    entry.at = now
    entry.inFlight++
    const held = entry
    let released = false
    return {
      ok: true,
      release: () => {
        if (released) return
        released = true
        held.inFlight--
        if (held.inFlight === 0 && this.entries.get(key) === held && this.isRested(held, this.now())) this.entries.delete(key)
      },
    }
  }

  /** The bucket's tokens at `now`. */
  private tokensAt(entry: Entry, now: number): number {
    if (this.callsPerMinute === Infinity) return this.burst
    // ms × calls per minute / 60 000: exact for whole ms and whole rates
    return Math.min(this.burst, entry.tokens + ((now - entry.at) * this.callsPerMinute) / 60_000)
  }

  /** Nothing in flight and a full bucket: the same as not tracked. */
  private isRested(entry: Entry, now: number): boolean {
    return entry.inFlight === 0 && this.tokensAt(entry, now) >= this.burst
  }

  /**
   * Before tracking a new principal: forgets rested principals from the least recently seen end,
   * and drops idle ones while at `maxPrincipals`. Busy ones met there move to the recent end.
   * Visits each entry at most once; O(1) amortized while most tracked principals are idle.
   */
  private trim(now: number): void {
    let budget = this.entries.size
    for (const [key, entry] of this.entries) {
      if (budget-- <= 0) return
      const full = this.entries.size >= this.maxPrincipals
      if (entry.inFlight > 0) {
        this.entries.delete(key)
        this.entries.set(key, entry)
      } else if (full || this.isRested(entry, now)) this.entries.delete(key)
      else return
    }
  }
}

/** The HTTP answer to a refused `tools/call`: its status, JSON-RPC error message and headers. */
export interface QuotaRefusal {
  readonly status: 429
  readonly message: string
  readonly headers: { readonly 'retry-after': string }
}

/** 429 with `Retry-After` (and, from the writer, a JSON-RPC error -32000 carrying the request's `id`), for a refusal of {@link PrincipalQuotas.tryAcquire}. */
export function quotaRefusal(refused: { readonly retryAfterSec: number; readonly reason: 'rate' | 'concurrency' }): QuotaRefusal {
  const why = refused.reason === 'rate' ? 'rate limit for this principal' : 'too many calls in flight for this principal'
  return { status: 429, message: `Too Many Requests: ${why}`, headers: { 'retry-after': String(refused.retryAfterSec) } }
}
