/**
 * The session table of `serveHttp`: which sessions are open, for which client, and which one
 * makes room for a new one, so that a flood of `initialize` requests cannot keep a new client
 * out. No MCP SDK import.
 */

/** Whose sessions these are: the principal's (`caller`'s key, with `auth`), the token's holders when one is set, else the address's. */
export function sessionClientOf(address: string | undefined, caller: { readonly extra?: unknown } | undefined, token: boolean): string {
  const key = (caller?.extra as { key?: string } | undefined)?.key
  if (key !== undefined) return `principal ${key}`
  return token ? 'token' : `address ${address ?? ''}`
}

/** Bounds of a {@link SessionTable}. */
export interface SessionLimits {
  /** The most sessions open at once. */
  readonly maxSessions: number
  /** The most sessions one client (one principal, else one token, else one address) holds at once. */
  readonly maxPerClient: number
  /** A session without a request in flight unused this long is closed, in ms. */
  readonly idleMs: number
  /** A session that had no request after its `initialize` is closed this long after it, in ms. */
  readonly unusedMs: number
}

interface Entry<T> {
  readonly value: T
  readonly client: string
  readonly created: number
  lastUsed: number
  /** Requests in flight, and open GET streams. */
  active: number
  /** Whether any request came after its `initialize`. */
  used: boolean
}

/**
 * Open sessions by id. Room for a new one is made, when a bound is reached, by closing first
 * the oldest session that had no request after its `initialize`, then the least recently used
 * one with nothing in flight: within the client's own sessions when the client is at
 * `maxPerClient`, then among all when the table is at `maxSessions`. A session with a
 * request in flight (or an open GET stream) is never closed to make room.
 */
export class SessionTable<T> {
  private readonly entries = new Map<string, Entry<T>>()
  private readonly perClient = new Map<string, number>()

  constructor(
    private readonly limits: SessionLimits,
    private readonly onClose: (id: string, value: T) => void,
    private readonly now: () => number = Date.now,
  ) {}

  get size(): number {
    return this.entries.size
  }

  ids(): string[] {
    return [...this.entries.keys()]
  }

  get(id: string): T | undefined {
    return this.entries.get(id)?.value
  }

  /** The client that opened the session (with `auth`, `principal <key>`), or undefined when it is not open. */
  clientOf(id: string): string | undefined {
    return this.entries.get(id)?.client
  }

  /** Makes room for a new session of `client`; false when every candidate has a request in flight. */
  admit(client: string): boolean {
    if ((this.perClient.get(client) ?? 0) >= this.limits.maxPerClient && !this.evictOne(client)) return false
    if (this.entries.size >= this.limits.maxSessions && !this.evictOne(undefined)) return false
    return true
  }

  add(id: string, client: string, value: T): void {
    const now = this.now()
    this.entries.set(id, { value, client, created: now, lastUsed: now, active: 0, used: false })
    this.perClient.set(client, (this.perClient.get(client) ?? 0) + 1)
    // initializes admitted at once may pass a bound together: the others make room again
    while ((this.perClient.get(client) ?? 0) > this.limits.maxPerClient && this.evictOne(client, id));
    while (this.entries.size > this.limits.maxSessions && this.evictOne(undefined, id));
  }

  /** A request of the session begins: it counts as use, and the session is not closed while it runs. */
  begin(id: string): T | undefined {
    const entry = this.entries.get(id)
    if (entry === undefined) return undefined
    entry.used = true
    entry.active++
    entry.lastUsed = this.now()
    return entry.value
  }

  end(id: string): void {
    const entry = this.entries.get(id)
    if (entry === undefined) return
    entry.active--
    entry.lastUsed = this.now()
  }

  /** Forgets the session (it is closed by its owner); `close` first for one closed here. */
  delete(id: string): T | undefined {
    const entry = this.entries.get(id)
    if (entry === undefined) return undefined
    this.entries.delete(id)
    const n = (this.perClient.get(entry.client) ?? 1) - 1
    if (n === 0) this.perClient.delete(entry.client)
    else this.perClient.set(entry.client, n)
    return entry.value
  }

  /** Closes the session: forgotten, then `onClose`. */
  close(id: string): void {
    const value = this.delete(id)
    if (value !== undefined) this.onClose(id, value)
  }

  /** Closes the sessions unused since their `initialize` for `unusedMs`, and those idle for `idleMs`. */
  sweep(): void {
    const now = this.now()
    for (const [id, e] of this.entries) {
      if (e.active > 0) continue
      if ((!e.used && now - e.created > this.limits.unusedMs) || now - e.lastUsed > this.limits.idleMs) this.close(id)
    }
  }

  /** Closes one session (of `client` when given; never `except`): the oldest never used, else the least recently used idle one. */
  private evictOne(client: string | undefined, except?: string): boolean {
    let unused: [string, Entry<T>] | undefined
    let idle: [string, Entry<T>] | undefined
    for (const pair of this.entries) {
      const e = pair[1]
      if (e.active > 0 || pair[0] === except || (client !== undefined && e.client !== client)) continue
      if (!e.used) {
        if (unused === undefined || e.created < unused[1].created) unused = pair
      } else if (idle === undefined || e.lastUsed < idle[1].lastUsed) idle = pair
    }
    const victim = unused ?? idle
    if (victim === undefined) return false
    this.close(victim[0])
    return true
  }
}
