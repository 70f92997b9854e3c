/**
 * A tool's concurrency limiter: at most `limit` bodies hold a slot at once, up to
 * `queueLimit` more calls wait in order. Each tool with a limit has its own; a call only
 * asks it for a slot, gives the slot back, or withdraws from the queue.
 */
export class Limiter<T extends object = object> {
  /** Slots held now. */
  private active = 0
  private readonly queue: T[] = []

  /**
   * @param start starts a queued item that got a slot; returns false when the item no
   *   longer wants it (its call settled while it waited), and the slot goes to the next.
   */
  constructor(
    readonly limit: number,
    readonly queueLimit: number,
    private readonly start: (item: T) => boolean,
  ) {}

  /** Takes a slot (`'run'`), else queues `item` (`'queued'`), else refuses (`'full'`). */
  acquire(item: T): 'run' | 'queued' | 'full' {
    if (this.active < this.limit) {
      this.active++
      return 'run'
    }
    if (this.queue.length < this.queueLimit) {
      this.queue.push(item)
      return 'queued'
    }
    return 'full'
  }

  /** Gives a slot back and starts queued items while slots are free. */
  release(): void {
    this.active--
    while (this.queue.length > 0 && this.active < this.limit) {
      const next = this.queue.shift()!
      this.active++
      if (!this.start(next)) this.active--
    }
  }

  /** Removes a waiting item from the queue (its call settled while it waited). */
  withdraw(item: T): void {
    const i = this.queue.indexOf(item)
    if (i >= 0) this.queue.splice(i, 1)
  }
}
