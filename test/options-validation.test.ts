/**
 * Options that are checked when they are given, whatever else is given: `approvalSecret` and
 * `storeKey` are a TypeError when malformed with or without a `store` (before, without one they
 * were accepted silently and the mistake surfaced only when a store was added). And a store that
 * cannot be opened is the store's own StoreUnavailableError, saying which store and why, with the
 * driver's error as its cause and never a password of the connection string.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { ToolManager, type ToolManagerOptions } from '../src/runtime/manager.js'
import { canonicalOf } from '../src/core/view.js'
import { MemoryStore, openPostgresStore, openSqliteStore, StoreUnavailableError } from '../src/runtime/store/index.js'
import { sqliteUnusable } from './support.js'

/** The error `new ToolManager(options)` throws, or `undefined`. */
function thrownBy(options: ToolManagerOptions): unknown {
  try {
    new ToolManager(options)
    return undefined
  } catch (err) {
    return err
  }
}

const KEY = '22'.repeat(32)
const SECRET = 'an approval secret of enough bytes'

describe('approvalSecret and storeKey are checked with or without a store', () => {
  const bad: readonly [string, ToolManagerOptions, RegExp][] = [
    ['a short approvalSecret', { approvalSecret: 'short' }, /approvalSecret must be at least 16 bytes/],
    ['a short secret in an approvalSecret list', { approvalSecret: [SECRET, 'short'] }, /approvalSecret\[1\] must be at least 16 bytes/],
    ['an empty approvalSecret list', { approvalSecret: [] }, /approvalSecret is an empty list/],
    ['an approvalSecret listed twice', { approvalSecret: [SECRET, SECRET] }, /approvalSecret\[1\] is the same as approvalSecret\[0\]/],
    ['an approvalSecret that is a number', { approvalSecret: 12345678901234567 as unknown as string }, /approvalSecret must be a string or a Uint8Array/],
    ['a storeKey that is not 32 bytes', { storeKey: 'bad' }, /32 bytes/],
    ['a bad key in a storeKey list', { storeKey: [KEY, 'bad'] }, /storeKey\[1\] is not 32 bytes/],
    ['an empty storeKey list', { storeKey: [] }, /storeKey is an empty list/],
    ['a storeKey listed twice in two spellings', { storeKey: [KEY, Buffer.from(KEY, 'hex')] }, /storeKey\[1\] is the same as storeKey\[0\]/],
  ]
  for (const [what, options, message] of bad) {
    it(`${what} is the same TypeError without a store as with one`, () => {
      const without = thrownBy(options)
      const withStore = thrownBy({ ...options, store: new MemoryStore() })
      expect(withStore).toBeInstanceOf(TypeError)
      expect(without).toBeInstanceOf(TypeError)
      expect((without as Error).message).toMatch(message)
      expect((without as Error).message).toBe((withStore as Error).message)
      expect((without as Error).message).not.toContain('short')
    })
  }

  it('well-formed values, one or a list, are accepted with or without a store', () => {
    for (const options of [{ approvalSecret: SECRET, storeKey: KEY }, { approvalSecret: [SECRET, `${SECRET}, older`], storeKey: [KEY, Buffer.alloc(32, 7)] }] as ToolManagerOptions[]) {
      expect(thrownBy(options)).toBeUndefined()
      expect(thrownBy({ ...options, store: new MemoryStore() })).toBeUndefined()
    }
  })
})

// where better-sqlite3 does not load on this Node.js its cases skip, saying why (under CI=true: fail)
const SQLITE_UNUSABLE = await sqliteUnusable()
if (SQLITE_UNUSABLE !== undefined) console.warn(`SKIP: test/options-validation SQLite cases: ${SQLITE_UNUSABLE}`)

describe('a store that cannot be opened', () => {
  const dirs: string[] = []
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true })
  })

  it.skipIf(SQLITE_UNUSABLE !== undefined)('SQLite: a path in a missing folder is a StoreUnavailableError naming the path and the reason, with the cause', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'toolwire-open-'))
    dirs.push(dir)
    const path = join(dir, 'missing', 'x.db')
    const err = await openSqliteStore({ path }).then(
      () => undefined,
      (e: unknown) => e,
    )
    expect(err).toBeInstanceOf(StoreUnavailableError)
    const e = err as StoreUnavailableError
    expect(e.code).toBe('store_unavailable')
    expect(e.message).toContain(JSON.stringify(path))
    expect(e.message).toMatch(/could not be opened: .*directory does not exist/)
    expect(e.cause).toBeInstanceOf(Error)
  })

  it.skipIf(SQLITE_UNUSABLE !== undefined)('SQLite: a path that is a folder is a StoreUnavailableError too', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'toolwire-open-'))
    dirs.push(dir)
    const err = await openSqliteStore({ path: dir }).then(
      () => undefined,
      (e: unknown) => e,
    )
    expect(err).toBeInstanceOf(StoreUnavailableError)
    expect((err as Error).message).toContain(JSON.stringify(dir))
    expect((err as Error).cause).toBeInstanceOf(Error)
  })

  const PASSWORD = 'pw-Zq81-never-shown'
  const urls: readonly [string, string, RegExp][] = [
    ['an unreachable port', `postgres://alice:${PASSWORD}@127.0.0.1:1/app`, /127\.0\.0\.1:1\/app.*could not be opened: .*ECONNREFUSED/],
    ['a URL that does not parse', `postgres://alice:${PASSWORD}@127.0.0.1:notaport/app`, /could not be opened: /],
    ['a password in the query string', `postgres://alice@127.0.0.1:1/app?password=${PASSWORD}`, /could not be opened: .*ECONNREFUSED/],
  ]
  for (const [what, connectionString, message] of urls) {
    it(`PostgreSQL: ${what} rejects with a StoreUnavailableError that never shows the password`, async () => {
      const err = await openPostgresStore({ connectionString }).then(
        () => undefined,
        (e: unknown) => e,
      )
      expect(err).toBeInstanceOf(StoreUnavailableError)
      const e = err as StoreUnavailableError
      expect(e.code).toBe('store_unavailable')
      expect(e.message).toMatch(message)
      expect(e.message).not.toContain(PASSWORD)
      expect(String(e.stack)).not.toContain(PASSWORD)
      expect(e.cause).toBeInstanceOf(Error)
      const cause = e.cause as Error
      expect(`${cause.message} ${String(cause.stack)} ${JSON.stringify(cause)}`).not.toContain(PASSWORD)
      expect(e.message).not.toContain('alice')
    })
  }

  it('PostgreSQL: an empty connection string is a TypeError; a URL with an empty password fails readably', async () => {
    await expect(openPostgresStore({ connectionString: '' })).rejects.toThrow(new TypeError('toolwire: openPostgresStore needs a connectionString or a pool'))
    const err = (await openPostgresStore({ connectionString: 'postgres://alice:@127.0.0.1:1/app' }).then(
      () => undefined,
      (e: unknown) => e,
    )) as Error
    // an empty secret hides nothing: the message is not strewn with *** between its characters
    expect(err.message).toMatch(/^toolwire: the PostgreSQL store at 127\.0\.0\.1:1\/app could not be opened: connect ECONNREFUSED/)
  })
})

describe("the manager's numeric options are checked as a tool's own are", () => {
  const bad: readonly [string, ToolManagerOptions, RegExp][] = [
    ['a negative timeoutMs', { timeoutMs: -5 }, /timeoutMs must be a positive number/],
    ['a timeoutMs that is a string', { timeoutMs: '100' as unknown as number }, /timeoutMs must be a positive number/],
    ['a zero confirmTtlMs', { confirmTtlMs: 0 }, /confirmTtlMs must be a positive number of at most a year/],
    ['an endless confirmTtlMs', { confirmTtlMs: Infinity }, /confirmTtlMs must be a positive number of at most a year/],
    ['a leaseMs that is not a number', { leaseMs: 'x' as unknown as number }, /leaseMs must be a positive number of at most a year/],
    ['a leaseMs past what a store can date', { leaseMs: 1e20 }, /leaseMs must be a positive number of at most a year/],
    ['a NaN leaseMs', { leaseMs: NaN }, /leaseMs must be a positive number of at most a year/],
    ['a fractional queueLimit', { queueLimit: 1.5 }, /queueLimit must be a non-negative integer or Infinity/],
    ['a negative undoLimit', { undoLimit: -1 }, /undoLimit must be a non-negative integer or Infinity/],
    ['a development flag that is a string', { development: 'yes' as unknown as boolean }, /development must be a boolean/],
  ]
  for (const [what, options, message] of bad) {
    it(`${what} is a TypeError naming it`, () => {
      const err = thrownBy(options)
      expect(err).toBeInstanceOf(TypeError)
      expect((err as Error).message).toMatch(message)
    })
  }

  it('good values, and the edges that mean "no bound", are accepted', () => {
    expect(thrownBy({ timeoutMs: 1, confirmTtlMs: 60_000, leaseMs: 30_000, queueLimit: 0, undoLimit: Infinity, development: false })).toBeUndefined()
    expect(thrownBy({ timeoutMs: Infinity, queueLimit: Infinity, undoLimit: 0 })).toBeUndefined()
  })

  it("a tool's concurrency.queue is checked when it is registered", () => {
    const tm = new ToolManager()
    expect(() => tm.register({ name: 't', inputSchema: { type: 'object' }, concurrency: { limit: 1, queue: -1 }, run: () => 1 })).toThrow(
      /tool "t" concurrency.queue must be a non-negative integer or Infinity/,
    )
    expect(() => tm.register({ name: 'u', inputSchema: { type: 'object' }, concurrency: { limit: 1, queue: 0 }, run: () => 1 })).not.toThrow()
  })
})

describe("the manager's other options are checked by kind, and read once", () => {
  const bad: readonly [string, unknown, RegExp][] = [
    ['a permission hook that is null', { permission: null }, /permission must be a function/],
    ['a permission hook that is a number', { permission: 5 }, /permission must be a function/],
    ['a store that is a number', { store: 5 }, /store must be a store/],
    ['a store that is null', { store: null }, /store must be a store/],
    ['formats that is a string', { formats: 'yes' }, /formats must be a boolean/],
    ['an evidence store without append', { evidence: { readAll: async () => [] } }, /evidence must be an evidence store/],
    ['telemetry that is true', { telemetry: true }, /telemetry must be an object/],
    ['telemetry whose tracing is a string', { telemetry: { tracing: 'off' } }, /telemetry must be an object/],
    ['schemaResources that is an array', { schemaResources: [{ type: 'string' }] }, /schemaResources must be an object/],
    ['a schemaResources entry that is a string', { schemaResources: { 'https://x/s': 'string' } }, /schemaResources must be an object/],
  ]
  for (const [what, options, message] of bad) {
    it(`${what} is a TypeError naming it`, () => {
      const err = thrownBy(options as ToolManagerOptions)
      expect(err).toBeInstanceOf(TypeError)
      expect((err as Error).message).toMatch(message)
    })
  }

  it('options that throw when read are a TypeError naming the option, with the thrown error as its cause', () => {
    const secret = new Error('pboom secret')
    const err = thrownBy(new Proxy({}, { get: () => { throw secret } }) as ToolManagerOptions)
    expect(err).toBeInstanceOf(TypeError)
    expect((err as Error).message).toBe("toolwire: the option development of new ToolManager() cannot be read (reading it threw; the error is this one's cause)")
    expect((err as Error).cause).toBe(secret)
    const getter = thrownBy({ get store(): never { throw secret } } as ToolManagerOptions)
    expect((getter as Error).message).toMatch(/^toolwire: the option store of new ToolManager\(\) cannot be read/)
  })

  it('each option is read once: a getter that answers differently later changes nothing', async () => {
    let reads = 0
    const tm = new ToolManager({
      get timeoutMs() {
        reads++
        return reads === 1 ? 20 : -1
      },
    })
    tm.register({ name: 't', inputSchema: { type: 'object' }, run: () => new Promise(() => {}) })
    expect(await tm.call('t', {})).toMatchObject({ status: 'error', kind: 'timeout' })
    expect(reads).toBe(1)
  })

  it('good values are accepted', () => {
    expect(thrownBy({ permission: () => ({ allow: true }), formats: true, evidence: { append: () => {}, readAll: async () => [] }, telemetry: { tracing: false }, schemaResources: { 'https://x/s': true } })).toBeUndefined()
  })
})

/** A manager with tool `t`, idempotent with `retry: { attempts, baseMs: 0 }`, whose body throws `fail(n)` on run n (from 1) or, when it gives `undefined`, returns 'done'; `runs()` counts the runs. */
function retrying(attempts: number, fail: (n: number) => Error | undefined): { tm: ToolManager; runs: () => number } {
  const tm = new ToolManager()
  let n = 0
  tm.register({
    name: 't', inputSchema: { type: 'object' }, hints: { idempotent: true }, retry: { attempts, baseMs: 0 },
    run: () => {
      const err = fail(++n)
      if (err !== undefined) throw err
      return 'done'
    },
  })
  return { tm, runs: () => n }
}

describe("a tool's concurrency, breaker and retry are checked at register", () => {
  const bad: readonly [string, Record<string, unknown>, RegExp][] = [
    ['concurrency null', { concurrency: null }, /tool "t" concurrency must be a positive integer or \{ limit, queue\? \}/],
    ['breaker null', { breaker: null }, /tool "t" breaker must be \{ failures, cooldownMs \}/],
    ['retry null', { retry: null, hints: { idempotent: true } }, /tool "t" retry must be \{ attempts\?, baseMs\?, maxMs\? \}/],
    ['retry attempts a string', { retry: { attempts: 'x' }, hints: { idempotent: true } }, /tool "t" retry must be/],
    ['retry attempts 0', { retry: { attempts: 0 }, hints: { idempotent: true } }, /tool "t" retry must be/],
    ['retry baseMs negative', { retry: { baseMs: -1 }, hints: { idempotent: true } }, /tool "t" retry must be/],
  ]
  for (const [what, extra, message] of bad) {
    it(`${what} is a TypeError naming it`, () => {
      const tm = new ToolManager()
      expect(() => tm.register({ name: 't', inputSchema: { type: 'object' }, run: () => 1, ...extra } as never)).toThrow(message)
    })
  }

  it('a retry of the defaults registers and retries', async () => {
    const { tm, runs } = retrying(2, (n) => (n === 1 ? Object.assign(new Error('x'), { kind: 'network' }) : undefined))
    expect(await tm.call('t', {})).toMatchObject({ status: 'ok', data: 'done' })
    expect(runs()).toBe(2)
  })
})

describe('a thrown retryable is read whatever the kind', () => {
  it.each([
    ['no kind', {}],
    ["kind 'other'", { kind: 'other' }],
    ['a kind toolwire does not know', { kind: 'auth' }],
  ])('%s with retryable: true is retried, and its result says retryable', async (_what, extra) => {
    const { tm, runs } = retrying(3, () => Object.assign(new Error('x'), extra, { retryable: true }))
    const view = await tm.call('t', {})
    expect(view).toMatchObject({ status: 'error', kind: 'other' })
    expect(canonicalOf(view)!.error()?.retryable).toBe(true)
    expect(runs()).toBe(3)
  })

  it('retryable: false on a retryable kind is not retried', async () => {
    const { tm, runs } = retrying(3, () => Object.assign(new Error('x'), { kind: 'network', retryable: false }))
    expect(await tm.call('t', {})).toMatchObject({ status: 'error', kind: 'network' })
    expect(runs()).toBe(1)
  })
})
