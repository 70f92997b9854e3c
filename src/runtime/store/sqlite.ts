/**
 * The SQLite store (`better-sqlite3`): the embedded store for one machine. Several processes
 * may open one file: writes are serialized by SQLite's lock (WAL mode), and every state change
 * is one conditional statement, so a claim has one winner across them. Every commit is synced
 * to disk (`synchronous = FULL`) unless the app asks for less.
 *
 * better-sqlite3 is synchronous: SQLite's own busy timeout would block the event loop while
 * another connection holds the lock. The connection's busy timeout is therefore short (10 ms),
 * and statements that find the file locked wait in the store's {@link LockQueue}: one try per
 * event-loop turn while it is locked, in order, until `busyTimeoutMs` has passed (then a
 * statement fails as `store_unavailable`). A statement is one autocommit step: one that found
 * the lock did nothing, so trying it again is safe. The one transaction of two writes
 * (`settleWithEvidence`) is one step too, rolled back before it reports the lock.
 * `better-sqlite3` is loaded when a store is opened, never by `toolwire` itself.
 */
import { SCHEMA_VERSION, SqlStore, migrations, type Dialect, type Row, type SqlDriver, type SqlParam, type SqlStatement } from './sql.js'
import { LockQueue } from './sqlite-wait.js'
import { StoreSchemaError, StoreUnavailableError, loadDriver, type StoreOptions } from './types.js'

/** What the store uses of a `better-sqlite3` statement. */
export interface SqliteStatement {
  all(...params: SqlParam[]): unknown[]
  run(...params: SqlParam[]): { readonly changes: number }
}

/** What the store uses of a `better-sqlite3` `Database`. */
export interface SqliteDatabase {
  prepare(sql: string): SqliteStatement
  exec(sql: string): unknown
  pragma(source: string, options?: { simple?: boolean }): unknown
  close(): unknown
  /** Whether a transaction is open on the connection (better-sqlite3's `inTransaction`). */
  readonly inTransaction?: boolean
}

/** Options of {@link openSqliteStore}: a file `path`, or an open `database`. */
export interface SqliteStoreOptions extends StoreOptions {
  /** The database file (created when missing); `':memory:'` for a private database. */
  readonly path?: string
  /** An open `better-sqlite3` database: used as it is, and left open by `close()`. */
  readonly database?: SqliteDatabase
  /**
   * How long a statement waits for another connection's lock, in ms (default 5000). The wait
   * does not block the event loop: the statement is tried again on a timer until then.
   */
  readonly busyTimeoutMs?: number
  /**
   * How commits reach the disk (default `'full'`: SQLite's `synchronous = FULL`, the WAL is
   * synced on every commit, so a row the store wrote survives an OS crash or a power loss).
   * `'normal'` syncs only at checkpoints: faster, and still safe against the process dying,
   * but an OS crash or power loss can drop the last commits, such as the in-flight ledger row
   * written before a body ran (a retry would then run that body again).
   */
  readonly synchronous?: 'full' | 'normal'
}

/**
 * How long one try of a statement may block the event loop waiting for the lock (SQLite's own
 * busy timeout on the connection, in ms): short, so the loop keeps turning, and not 0, so a
 * lock freed a moment later is taken at once (SQLite's own wait polls finely) instead of
 * after a timer, which starves the waiter when another process writes back to back.
 */
const SLICE_MS = 10

const DIALECT: Dialect = { int: 'INTEGER', serial: 'INTEGER', order: 'rowid', nowMs: `CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)` }

/** Why a store's statement did not run on a handle inside the app's own transaction. */
const IN_APP_TRANSACTION =
  "the database handle is inside a transaction of the app's own: the store's writes would commit or roll back with it (call the manager outside the transaction)"

class SqliteDriver implements SqlDriver {
  private readonly statements = new Map<string, SqliteStatement>()
  constructor(
    private readonly db: SqliteDatabase,
    private readonly owned: boolean,
    /** Where statements wait for another connection's lock. */
    private readonly queue: LockQueue,
  ) {}

  /**
   * A statement at the start of a step: every step of the store begins and ends its own work, so
   * a transaction open now is the app's (its own handle, inside `db.transaction(...)`), and the
   * store's writes would commit or roll back with it (a ledger row rolled back forgets a call that ran).
   */
  private first(sql: string): SqliteStatement {
    if (this.db.inTransaction === true) throw new Error(IN_APP_TRANSACTION)
    return this.statement(sql)
  }

  private statement(sql: string): SqliteStatement {
    let s = this.statements.get(sql)
    if (s === undefined) this.statements.set(sql, (s = this.db.prepare(sql)))
    return s
  }

  all(sql: string, params: readonly SqlParam[]): Promise<readonly Row[]> {
    return this.queue.run(() => this.first(sql).all(...params) as Row[])
  }

  run(sql: string, params: readonly SqlParam[]): Promise<number> {
    return this.queue.run(() => this.first(sql).run(...params).changes)
  }

  both(first: SqlStatement, second: SqlStatement): Promise<number> {
    // one queue step: the driver is synchronous, so nothing else runs on this connection in between
    return this.queue.run(() => {
      this.first('BEGIN IMMEDIATE').run()
      try {
        const changed = this.statement(first.sql).run(...first.params).changes
        this.statement(second.sql).run(...second.params)
        this.statement('COMMIT').run()
        return changed
      } catch (err) {
        // undone before the error goes on: a step that found the file locked is then tried again whole
        try {
          this.statement('ROLLBACK').run()
        } catch {
          // SQLite rolled it back itself
        }
        throw err
      }
    })
  }

  isConflict(err: unknown): boolean {
    const code = (err as { code?: unknown } | null)?.code
    return code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === 'SQLITE_CONSTRAINT_UNIQUE'
  }

  async close(): Promise<void> {
    this.queue.clear(new Error('toolwire: the SQLite store was closed while the statement waited for the lock'))
    this.statements.clear()
    if (this.owned) this.db.close()
  }
}

/**
 * Brings the schema up to {@link SCHEMA_VERSION} in one immediate transaction, waiting for
 * another connection's lock as statements do. @throws StoreSchemaError when it is newer.
 */
async function migrate(db: SqliteDatabase, queue: LockQueue): Promise<void> {
  await queue.run(() => db.exec('CREATE TABLE IF NOT EXISTS toolwire_meta (name TEXT PRIMARY KEY, version INTEGER NOT NULL)'))
  await queue.run(() => db.exec('BEGIN IMMEDIATE'))
  try {
    const row = db.prepare(`SELECT version FROM toolwire_meta WHERE name = 'schema'`).all()[0] as { version: number } | undefined
    const version = row?.version ?? 0
    if (version > SCHEMA_VERSION) {
      throw new StoreSchemaError(`toolwire: the store's schema is version ${version}; this toolwire knows versions up to ${SCHEMA_VERSION}`)
    }
    for (const m of migrations(DIALECT)) {
      if (m.version <= version) continue
      for (const sql of m.statements) db.exec(sql)
      db.prepare(`INSERT INTO toolwire_meta (name, version) VALUES ('schema', ?) ON CONFLICT (name) DO UPDATE SET version = excluded.version`).run(m.version)
    }
    db.exec('COMMIT')
  } catch (err) {
    db.exec('ROLLBACK')
    throw err
  }
}

/** The SQLite file at `path` could not be opened or set up: why, with the driver's error as the cause. */
function openFailure(path: string, err: unknown): StoreUnavailableError {
  const why = err instanceof Error ? err.message : String(err)
  return new StoreUnavailableError(`toolwire: the SQLite store ${JSON.stringify(path)} could not be opened: ${why}`, { cause: err })
}

/**
 * Opens (and migrates) a SQLite store.
 *
 * ```ts
 * import { openSqliteStore } from 'toolwire/store'
 * const store = await openSqliteStore({ path: 'toolwire.db' })
 * ```
 * @throws StoreSchemaError when the file's schema is newer than this toolwire knows.
 * @throws StoreUnavailableError when the file cannot be opened or set up (a missing folder, no
 * permission, not a database): the message names the path and the reason, `cause` is the driver's error.
 * @throws StoreDriverMissingError when `better-sqlite3` is not installed (`npm install better-sqlite3`).
 */
export async function openSqliteStore(options: SqliteStoreOptions): Promise<SqlStore> {
  const synchronous = options.synchronous ?? 'full'
  if (synchronous !== 'full' && synchronous !== 'normal') throw new TypeError(`toolwire: synchronous must be 'full' or 'normal'`)
  const busyMs = Math.max(0, Math.floor(options.busyTimeoutMs ?? 5000))
  let db = options.database
  const owned = db === undefined
  if (db === undefined) {
    if (options.path === undefined) throw new TypeError('toolwire: openSqliteStore needs a path or a database')
    const mod = (await loadDriver('better-sqlite3', () => import('better-sqlite3'))) as unknown as { default: new (path: string, options?: { timeout?: number }) => SqliteDatabase }
    try {
      // SQLite's own wait blocks the event loop: a short slice of it, then the store waits on a timer
      db = new mod.default(options.path, { timeout: SLICE_MS })
    } catch (err) {
      // better-sqlite3's own TypeError ("the directory does not exist") names no path: say which, and keep it as the cause
      throw openFailure(options.path, err)
    }
  } else {
    db.pragma(`busy_timeout = ${SLICE_MS}`)
  }
  const handle = db
  const queue = new LockQueue(busyMs)
  try {
    await queue.run(() => handle.pragma('journal_mode = WAL'))
    handle.pragma(`synchronous = ${synchronous.toUpperCase()}`)
    await migrate(handle, queue)
  } catch (err) {
    if (owned) db.close()
    throw err instanceof StoreSchemaError || !owned ? err : openFailure(options.path!, err)
  }
  return new SqlStore('sqlite', new SqliteDriver(handle, owned, queue), DIALECT, options.now ?? Date.now, options.onCorruptRow)
}
