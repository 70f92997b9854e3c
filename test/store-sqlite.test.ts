/**
 * What the SQLite store promises of its file (docs/store.md, "SQLite"): every commit is durable
 * (`synchronous = FULL`, unless `synchronous: 'normal'` is asked for), and a lock held by another
 * connection is waited for without blocking the event loop (at most one statement tries per turn
 * while it is held, in the order asked), up to `busyTimeoutMs`.
 * Skips (with a printed reason) where better-sqlite3 cannot load.
 */
import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { build } from 'esbuild'
import { afterAll, describe, expect, it } from 'vitest'
import { openSqliteStore, StoreUnavailableError, type SqliteDatabase } from '../src/runtime/store/index.js'
import { sqliteUnusable } from './support.js'

const dirs: string[] = []
afterAll(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})
function tempDir(prefix: string, parent = tmpdir()): string {
  const d = mkdtempSync(join(parent, prefix))
  dirs.push(d)
  return d
}

const skip = await sqliteUnusable()
if (skip !== undefined) console.warn(`SKIP: test/store-sqlite.test.ts: ${skip}`)

const parkInput = (id: string) => ({
  id,
  kind: 'confirmation' as const,
  callId: `call-${id}`,
  tool: 'pay',
  input: { input: { id }, sealed: null, redacted: false },
  inputHash: 'h',
  expiresAt: null,
})

async function database(path: string): Promise<SqliteDatabase & { pragma(s: string, o?: { simple?: boolean }): unknown }> {
  const { default: Database } = await import('better-sqlite3')
  return new Database(path) as never
}

describe.skipIf(skip !== undefined)('SQLite store durability', () => {
  it('a store opened by path commits with synchronous = FULL (2)', async () => {
    const path = join(tempDir('toolwire-sqlite-'), 'store.db')
    // `synchronous` is a setting of each connection: the store's own handle is caught as it is set up
    const { default: Database } = await import('better-sqlite3')
    const pragma = Database.prototype.pragma
    let handle: InstanceType<typeof Database> | undefined
    Database.prototype.pragma = function (this: InstanceType<typeof Database>, ...args: Parameters<typeof pragma>) {
      handle ??= this
      return pragma.apply(this, args)
    }
    let store
    try {
      store = await openSqliteStore({ path })
    } finally {
      Database.prototype.pragma = pragma
    }
    expect(handle!.pragma('synchronous', { simple: true })).toBe(2)
    await store.close()
  })

  it('a handed-in database is set to synchronous = FULL too; synchronous: "normal" is an explicit choice', async () => {
    const path = join(tempDir('toolwire-sqlite-'), 'store.db')
    const db = await database(path)
    const store = await openSqliteStore({ database: db })
    expect(db.pragma('synchronous', { simple: true })).toBe(2)
    await store.close()
    const fast = await openSqliteStore({ database: db, synchronous: 'normal' })
    expect(db.pragma('synchronous', { simple: true })).toBe(1)
    await fast.close()
    db.close()
  })

  it('a synchronous option other than "full" or "normal" is a TypeError', async () => {
    const path = join(tempDir('toolwire-sqlite-'), 'store.db')
    await expect(openSqliteStore({ path, synchronous: 'off' as never })).rejects.toThrow(TypeError)
  })

  it.skipIf(spawnSync('strace', ['-V']).status !== 0)('50 parks on a store opened by path make at least 50 fsyncs (strace)', async () => {
    // bundled where `better-sqlite3` resolves (the repository's node_modules)
    const cache = join(import.meta.dirname, '..', 'node_modules', '.cache')
    mkdirSync(cache, { recursive: true })
    const out1 = tempDir('toolwire-sqlite-', cache)
    const bundle = join(out1, 'store.mjs')
    await build({ entryPoints: [join(import.meta.dirname, '..', 'src/runtime/store/index.ts')], outfile: bundle, bundle: true, format: 'esm', platform: 'node', packages: 'external', logLevel: 'silent' })
    const dir = tempDir('toolwire-sqlite-')
    const script = `
      const { openSqliteStore } = await import(${JSON.stringify(bundle)})
      const store = await openSqliteStore({ path: ${JSON.stringify(join(dir, 'store.db'))} })
      for (let i = 0; i < 50; i++) await store.park({ id: 'p' + i, kind: 'confirmation', callId: 'c' + i, tool: 't', input: { input: {}, sealed: null, redacted: false }, inputHash: 'h', expiresAt: null })
      await store.close()
    `
    const out = spawnSync('strace', ['-f', '-c', '-e', 'trace=fsync,fdatasync', process.execPath, '--input-type=module', '-e', script], { encoding: 'utf8' })
    if (out.status !== 0 && /ptrace|Operation not permitted/.test(out.stderr)) return console.warn('SKIP: strace cannot trace here')
    expect(out.status, out.stderr).toBe(0)
    const calls = [...out.stderr.matchAll(/^\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?f(?:data)?sync$/gm)].reduce((n, m) => n + Number(m[1]), 0)
    expect(calls).toBeGreaterThanOrEqual(50)
  })
})

describe.skipIf(skip !== undefined)('SQLite store and another connection’s lock', () => {
  it('a write waiting for a lock held on this thread completes once the lock is released: the event loop kept turning', async () => {
    const path = join(tempDir('toolwire-sqlite-'), 'store.db')
    const store = await openSqliteStore({ path, busyTimeoutMs: 2000 })
    const holder = await database(path)
    holder.exec('BEGIN IMMEDIATE')
    let settled = false
    const parked = store.park(parkInput('a')).finally(() => (settled = true))
    // a blocking wait would have given up before this line ran: the lock is released from this thread
    let turns = 0
    while (turns < 5) {
      await new Promise((r) => setTimeout(r, 5))
      turns++
    }
    expect(settled).toBe(false)
    holder.exec('COMMIT')
    await expect(parked).resolves.toBeUndefined()
    expect((await store.getParked('a'))?.state).toBe('parked')
    holder.close()
    await store.close()
  })

  it('a lock held past busyTimeoutMs is a StoreUnavailableError naming the lock', async () => {
    const path = join(tempDir('toolwire-sqlite-'), 'store.db')
    const store = await openSqliteStore({ path, busyTimeoutMs: 50 })
    const holder = await database(path)
    holder.exec('BEGIN IMMEDIATE')
    const err = await store.park(parkInput('b')).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(StoreUnavailableError)
    expect((err as Error).message).toMatch(/locked|busy/i)
    holder.exec('COMMIT')
    holder.close()
    await store.close()
  })
})

describe.skipIf(skip !== undefined)('SQLite store: statements waiting for a lock', () => {
  it('while another connection holds the lock, at most one of 50 concurrent statements tries (spends SQLite’s busy wait) per event-loop turn, and they run in the order asked', async () => {
    const path = join(tempDir('toolwire-sqlite-'), 'store.db')
    const db = await database(path)
    let busyThisTurn = 0
    let busyTotal = 0
    const ran: string[] = []
    // every try that finds the lock is one busy wait of the connection: count them per turn
    const counted: SqliteDatabase = {
      prepare(sql) {
        const s = db.prepare(sql)
        const tried = <T>(f: () => T): T => {
          try {
            return f()
          } catch (err) {
            if (/SQLITE_BUSY/.test(String((err as { code?: unknown }).code))) {
              busyThisTurn++
              busyTotal++
            }
            throw err
          }
        }
        return {
          all: (...p) => tried(() => s.all(...p)),
          run: (...p) => tried(() => {
            const r = s.run(...p)
            if (sql.includes('INSERT INTO toolwire_parked')) ran.push(String(p[0]))
            return r
          }),
        }
      },
      exec: (sql) => db.exec(sql),
      pragma: (s, o) => db.pragma(s, o),
      close: () => db.close(),
    }
    const store = await openSqliteStore({ database: counted, busyTimeoutMs: 20_000 })
    const holder = await database(path)
    holder.exec('BEGIN IMMEDIATE')
    holder.exec('CREATE TABLE IF NOT EXISTS held (a)')
    // the monitor: one tick per event-loop turn (setImmediate runs once per turn)
    let most = 0
    let monitoring = true
    const monitor = (): void => {
      most = Math.max(most, busyThisTurn)
      busyThisTurn = 0
      if (monitoring) setImmediate(monitor)
    }
    setImmediate(monitor)
    const ids = Array.from({ length: 50 }, (_, i) => `q${i}`)
    const parked = Promise.all(ids.map((id) => store.park(parkInput(id))))
    // the lock is held until the store has found it locked 20 times, then released
    while (busyTotal < 20) await new Promise((r) => setTimeout(r, 5))
    holder.exec('COMMIT')
    await parked
    monitoring = false
    expect(busyTotal).toBeGreaterThanOrEqual(20)
    expect(most).toBe(1)
    expect(ran).toEqual(ids)
    holder.close()
    await store.close()
    db.close()
  })
})

// The app's own handle, inside a transaction of the app's own: the store's writes would commit or
// roll back with it (a ledger row rolled back forgets a call that ran), so nothing runs
describe.skipIf(skip !== undefined)('SQLite store on a handle inside the app’s own transaction', () => {
  it('refuses the call store_unavailable, runs nothing, and works again once the transaction ends', async () => {
    const { ToolManager } = await import('../src/index.js')
    const path = join(tempDir('toolwire-sqlite-'), 'store.db')
    const db = await database(path)
    const store = await openSqliteStore({ database: db })
    const tm = new ToolManager({ store })
    const errors: string[] = []
    tm.on('error', (e) => errors.push(String((e as { error?: { message?: string } }).error?.message)))
    let runs = 0
    tm.register({ name: 'pay', inputSchema: { type: 'object' }, run: () => ++runs })
    db.exec('BEGIN')
    const inside = await tm.call('pay', {}, { idempotencyKey: 'order-1' })
    const plain = await tm.call('pay', {})
    db.exec('ROLLBACK')
    expect(inside).toMatchObject({ status: 'refused', code: 'store_unavailable' })
    expect(plain).toMatchObject({ status: 'refused', code: 'store_unavailable' })
    expect(runs).toBe(0)
    expect(errors[0]).toContain("the database handle is inside a transaction of the app's own")
    await expect(store.park(parkInput('p1'))).resolves.toBeUndefined()
    db.exec('BEGIN')
    await expect(store.park(parkInput('p2'))).rejects.toThrow(StoreUnavailableError)
    db.exec('COMMIT')
    // the key was never taken: outside the transaction it runs once, then replays
    expect(await tm.call('pay', {}, { idempotencyKey: 'order-1' })).toMatchObject({ status: 'ok', data: 1 })
    expect(await tm.call('pay', {}, { idempotencyKey: 'order-1' })).toMatchObject({ status: 'ok', data: 1 })
    expect(runs).toBe(1)
    await store.close()
    db.close()
  })

  it('an idempotent tool runs (its record is an evidence_error); a confirmation stays answerable on this manager; savepoints count', async () => {
    const { ToolManager } = await import('../src/index.js')
    const db = await database(join(tempDir('toolwire-sqlite-'), 'store.db'))
    const store = await openSqliteStore({ database: db })
    const tm = new ToolManager({ store })
    const events: string[] = []
    tm.on('error', () => events.push('error'))
    tm.on('evidence_error', () => events.push('evidence_error'))
    const runs = { lookup: 0, pay: 0 }
    tm.register({ name: 'lookup', inputSchema: { type: 'object' }, hints: { idempotent: true }, run: () => ++runs.lookup })
    tm.register({ name: 'pay', inputSchema: { type: 'object' }, hints: { idempotent: true }, needsConfirmation: true, run: () => ++runs.pay })
    db.exec('SAVEPOINT app')
    expect(await tm.call('lookup', {})).toMatchObject({ status: 'ok', data: 1 })
    expect(events).toEqual(['evidence_error'])
    const asked = await tm.call('pay', {})
    db.exec('RELEASE app')
    expect(asked.status).toBe('needs_confirmation')
    expect(events).toEqual(['evidence_error', 'error'])
    const confirmId = asked.status === 'needs_confirmation' ? asked.confirmId : ''
    expect(await tm.confirm(confirmId, { approve: true })).toMatchObject({ status: 'ok', data: 1 })
    expect(runs).toEqual({ lookup: 1, pay: 1 })
    await store.close()
    db.close()
  })
})
