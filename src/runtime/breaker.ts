/**
 * A per-tool circuit breaker: opens after `failures` consecutive failures (reported
 * ones included), refuses calls while open, and lets a single half-open probe through
 * after `cooldownMs`.
 */
import type { BreakerState } from '../observe/metrics.js'

/** Breaker settings of a tool. */
export interface BreakerOptions {
  /** Consecutive failures that open the breaker. */
  readonly failures: number
  /** How long the breaker stays open before one probe may go through. */
  readonly cooldownMs: number
}

export class CircuitBreaker {
  private consecutive = 0
  private openedAt = 0
  private probing = false
  state: BreakerState = 'closed'

  constructor(
    private readonly options: BreakerOptions,
    private readonly now: () => number = Date.now,
  ) {
    if (!(Number.isInteger(options.failures) && options.failures > 0)) throw new TypeError('toolwire: breaker.failures must be a positive integer')
    if (!(options.cooldownMs >= 0)) throw new TypeError('toolwire: breaker.cooldownMs must be a non-negative number')
  }

  /** The state now, with an elapsed cooldown counted as half-open. */
  currentState(): BreakerState {
    if (this.state === 'open' && this.now() - this.openedAt >= this.options.cooldownMs) return 'half_open'
    return this.state
  }

  /** Whether a call may run now; a half-open breaker admits exactly one probe. */
  admit(): boolean {
    if (this.state === 'closed') return true
    if (this.state === 'open' && this.now() - this.openedAt >= this.options.cooldownMs) {
      this.state = 'half_open'
      this.probing = false
    }
    if (this.state === 'half_open' && !this.probing) {
      this.probing = true
      return true
    }
    return false
  }

  /**
   * Records how an admitted call ended: `healthy` (the tool answered) closes the breaker,
   * `failed` counts toward opening it, `neutral` (cancelled, or the tool's own
   * invalid-arguments error) says nothing about the tool's health: it leaves the count
   * alone and, for a half-open probe, lets the next call probe instead.
   */
  settle(outcome: 'healthy' | 'failed' | 'neutral'): void {
    if (outcome === 'neutral') {
      this.probing = false
      return
    }
    if (outcome === 'healthy') {
      this.consecutive = 0
      this.state = 'closed'
      this.probing = false
      return
    }
    this.consecutive++
    if (this.state === 'half_open' || this.consecutive >= this.options.failures) {
      this.state = 'open'
      this.openedAt = this.now()
      this.probing = false
    }
  }
}
