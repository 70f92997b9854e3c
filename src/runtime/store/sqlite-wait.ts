/**
 * The queue in which a SQLite store's statements wait for another connection's lock.
 *
 * better-sqlite3 is synchronous, and every try of a statement that finds the file locked blocks
 * the event loop for SQLite's busy timeout (a short slice). So while the file is locked, at most
 * one statement of a store tries per event-loop turn: once a statement finds the lock, it and
 * every statement after it wait in one FIFO; a single timer (backing off) tries the head, and
 * only once the head succeeds are the others run, one per turn (`setImmediate`), in order.
 * A statement that has waited `budgetMs` fails with the lock's error; statements run in the
 * order they were asked for.
 */

/** The most the queue waits before trying its head again, in ms. */
export const MAX_BACKOFF_MS = 50

/** Whether a better-sqlite3 error says another connection holds the lock. */
export function isBusy(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code
  return typeof code === 'string' && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'))
}

interface Waiting {
  readonly step: () => unknown
  readonly deadline: number
  readonly resolve: (value: unknown) => void
  readonly reject: (err: unknown) => void
}

/** One store's statements, run in order, each tried at most once per event-loop turn while the file is locked. */
export class LockQueue {
  private readonly waiting: Waiting[] = []
  private timer: ReturnType<typeof setTimeout> | undefined
  private immediate: ReturnType<typeof setImmediate> | undefined
  private backoff = 1
  /** The lock's error from the last try that found the file locked: what a statement that times out fails with. */
  private lockError: unknown
  /** A try found the file locked in this event-loop turn (cleared by `setImmediate`, so in the next turn). */
  private lockedThisTurn = false

  /** @param budgetMs how long a statement may wait for the lock in all, in ms. */
  constructor(private readonly budgetMs: number) {}

  /** Runs `step` now when nothing waits, else after the statements before it; it fails with the lock's error after `budgetMs`. */
  run<T>(step: () => T): Promise<T> {
    if (this.waiting.length === 0 && !this.lockedThisTurn) {
      try {
        return Promise.resolve(step())
      } catch (err) {
        if (!isBusy(err)) return Promise.reject(err)
        this.locked(err)
        return this.enqueue(step, true)
      }
    }
    return this.enqueue(step, this.waiting.length === 0)
  }

  /** Fails every waiting statement with `err` and stops trying. */
  clear(err: unknown): void {
    if (this.timer !== undefined) clearTimeout(this.timer)
    if (this.immediate !== undefined) clearImmediate(this.immediate)
    this.timer = this.immediate = undefined
    for (const w of this.waiting.splice(0)) w.reject(err)
  }

  /** Queues `step`; `start`: the queue was empty and the file was found locked in this turn, so the timer starts. */
  private enqueue<T>(step: () => T, start: boolean): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.waiting.push({ step, deadline: Date.now() + this.budgetMs, resolve: resolve as (v: unknown) => void, reject })
      if (start) this.later()
    })
  }

  /** A try found the file locked: no other try in this event-loop turn. */
  private locked(err: unknown): void {
    this.lockError = err
    if (this.lockedThisTurn) return
    this.lockedThisTurn = true
    setImmediate(() => (this.lockedThisTurn = false)).unref()
  }

  /**
   * Tries the head again on a timer (the file was found locked). The timer is set from the next
   * `setImmediate`, so it fires in a later turn than the try that found the lock (a timer set in
   * the timers phase could otherwise fire in the same pass).
   */
  private later(): void {
    const wait = this.backoff
    this.backoff = Math.min(this.backoff * 2, MAX_BACKOFF_MS)
    this.immediate = setImmediate(() => {
      this.immediate = undefined
      this.timer = setTimeout(() => {
        this.timer = undefined
        this.next()
      }, wait)
    })
  }

  /** Tries the head: on success the next one in the next turn; on the lock, the queue waits on the timer. */
  private next(): void {
    const head = this.waiting[0]
    if (head === undefined) return
    try {
      const value = head.step()
      this.waiting.shift()
      head.resolve(value)
      this.backoff = 1
    } catch (err) {
      if (!isBusy(err)) {
        this.waiting.shift()
        head.reject(err)
      } else {
        this.locked(err)
        this.expire()
        if (this.waiting.length > 0) this.later()
        return
      }
    }
    if (this.waiting.length > 0) {
      this.immediate = setImmediate(() => {
        this.immediate = undefined
        this.next()
      })
    }
  }

  /** Fails the statements that have waited their whole budget, with the lock's error (called only when the file was just found locked). */
  private expire(): void {
    const now = Date.now()
    for (let i = 0; i < this.waiting.length; ) {
      const w = this.waiting[i]!
      if (now < w.deadline) {
        i++
        continue
      }
      this.waiting.splice(i, 1)
      w.reject(this.lockError)
    }
  }
}
