/**
 * The PostgreSQL store (`pg`): for many instances of an app on one database. Every state
 * change is one conditional statement; under READ COMMITTED a second `UPDATE` of a row waits
 * for the first and re-checks its condition on the row the first wrote, so a claim has one
 * winner across connections, pools and machines. `pg` is loaded when a store is opened,
 * never by `toolwire` itself.
 */
import { SCHEMA_VERSION, SqlStore, migrations, type Dialect, type Row, type SqlDriver, type SqlParam, type SqlStatement } from './sql.js'
import { passwordsOf } from '../../core/passwords.js'
import { StoreSchemaError, StoreUnavailableError, loadDriver, type StoreOptions } from './types.js'

/** What the store uses of a `pg` query result. */
export interface PgResult {
  readonly rows: unknown[]
  readonly rowCount: number | null
}

/** What the store uses of a `pg` client checked out of a pool. */
export interface PgClient {
  query(text: string, values?: unknown[]): Promise<PgResult>
  release(err?: Error | boolean): void
}

/** What the store uses of a `pg` `Pool`. */
export interface PgPool {
  query(text: string, values?: unknown[]): Promise<PgResult>
  connect(): Promise<PgClient>
  end(): Promise<void>
}

/** Options of {@link openPostgresStore}: a `connectionString`, or an open `pool`. */
export interface PostgresStoreOptions extends StoreOptions {
  /** `postgres://user@host:port/database`: the store makes its own pool, and ends it on `close()`. */
  readonly connectionString?: string
  /** An app's own `pg` pool: used as it is (its `search_path` decides the schema), and left open by `close()`. */
  readonly pool?: PgPool
  /** The schema of the store's tables, created when missing (default: the connection's `search_path`, usually `public`). Only with `connectionString`. */
  readonly schema?: string
  /** The most connections of the store's own pool (default 10). */
  readonly max?: number
}

const DIALECT: Dialect = { int: 'BIGINT', serial: 'BIGSERIAL', order: 'seq', nowMs: 'CAST(EXTRACT(EPOCH FROM now()) * 1000 AS BIGINT)' }
/** The advisory lock that serializes migrations across instances. */
const MIGRATION_LOCK = 0x746f6f6c // 'tool'

/** `?` placeholders as `$1`, `$2`, … (the shared statements hold no `?` in literals). */
function numbered(sql: string): string {
  let n = 0
  return sql.replace(/\?/g, () => `$${++n}`)
}

class PgDriver implements SqlDriver {
  private readonly texts = new Map<string, string>()
  constructor(
    private readonly pool: PgPool,
    private readonly owned: boolean,
  ) {}

  private text(sql: string): string {
    let t = this.texts.get(sql)
    if (t === undefined) this.texts.set(sql, (t = numbered(sql)))
    return t
  }

  async all(sql: string, params: readonly SqlParam[]): Promise<readonly Row[]> {
    return (await this.pool.query(this.text(sql), [...params])).rows as Row[]
  }

  async run(sql: string, params: readonly SqlParam[]): Promise<number> {
    return (await this.pool.query(this.text(sql), [...params])).rowCount ?? 0
  }

  async both(first: SqlStatement, second: SqlStatement): Promise<number> {
    // one statement: one round trip, one commit; both CTEs run whatever the first changed
    const sql = `WITH first AS (${first.sql} RETURNING 1), second AS (${second.sql}) SELECT count(*) AS n FROM first`
    const { rows } = await this.pool.query(this.text(sql), [...first.params, ...second.params])
    return Number((rows[0] as { n?: unknown } | undefined)?.n ?? 0)
  }

  isConflict(err: unknown): boolean {
    return (err as { code?: unknown } | null)?.code === '23505'
  }

  async close(): Promise<void> {
    if (this.owned) await this.pool.end()
  }
}

/** Brings the schema up to {@link SCHEMA_VERSION} in one transaction under an advisory lock. @throws StoreSchemaError when it is newer. */
async function migrate(pool: PgPool, schema: string | undefined): Promise<void> {
  const client = await pool.connect()
  try {
    await client.query('BEGIN')
    try {
      await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK])
      if (schema !== undefined) await client.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`)
      await client.query('CREATE TABLE IF NOT EXISTS toolwire_meta (name TEXT PRIMARY KEY, version BIGINT NOT NULL)')
      const { rows } = await client.query(`SELECT version FROM toolwire_meta WHERE name = 'schema'`)
      const version = rows[0] === undefined ? 0 : Number((rows[0] as { version: unknown }).version)
      if (version > SCHEMA_VERSION) {
        throw new StoreSchemaError(`toolwire: the store's schema is version ${version}; this toolwire knows versions up to ${SCHEMA_VERSION}`)
      }
      for (const m of migrations(DIALECT)) {
        if (m.version <= version) continue
        for (const sql of m.statements) await client.query(sql)
        await client.query(
          `INSERT INTO toolwire_meta (name, version) VALUES ('schema', $1) ON CONFLICT (name) DO UPDATE SET version = excluded.version`,
          [m.version],
        )
      }
      await client.query('COMMIT')
    } catch (err) {
      await client.query('ROLLBACK')
      throw err
    }
  } finally {
    client.release()
  }
}

/**
 * Where a connection string points, for a message: `host:port/database`, never its user, password
 * or parameters; `undefined` when it does not parse as a URL.
 */
function placeOf(connectionString: string): string | undefined {
  try {
    const url = new URL(connectionString)
    return `${url.host}${url.pathname === '/' ? '' : url.pathname}`
  } catch {
    return undefined
  }
}

/** `text` with each of `secrets` (and the whole connection string) replaced by `***`. */
function scrub(text: string, secrets: readonly string[]): string {
  let out = text
  // an empty secret hides nothing (and split('') would put *** between every character)
  for (const s of secrets) if (s !== '') out = out.split(s).join('***')
  return out
}

/**
 * The store could not be opened: where (host, port and database, never a password) and why,
 * with the driver's error as the cause, unless that error shows the password: then a copy
 * without it, of the same name and code.
 */
function openFailure(connectionString: string | undefined, err: unknown): StoreUnavailableError {
  const secrets = connectionString === undefined ? [] : [connectionString, ...passwordsOf(connectionString)]
  const why = scrub(err instanceof Error ? err.message : String(err), secrets)
  const place = connectionString === undefined ? '' : ` at ${scrub(placeOf(connectionString) ?? '(a connection string that is not a URL)', secrets)}`
  let cause = err
  if (err instanceof Error && secrets.length > 0) {
    const shown = `${err.message}\n${String(err.stack)}\n${safeJson(err)}`
    if (secrets.some((s) => shown.includes(s))) {
      const copy = new Error(why)
      copy.name = err.name
      const code = (err as { code?: unknown }).code
      if (code !== undefined) Object.assign(copy, { code })
      cause = copy
    }
  }
  return new StoreUnavailableError(`toolwire: the PostgreSQL store${place} could not be opened: ${why}`, { cause })
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? ''
  } catch {
    return ''
  }
}

/**
 * Opens (and migrates) a PostgreSQL store.
 *
 * ```ts
 * import { openPostgresStore } from 'toolwire/store'
 * const store = await openPostgresStore({ connectionString: process.env.DATABASE_URL })
 * ```
 * @throws StoreSchemaError when the database's schema is newer than this toolwire knows.
 * @throws StoreUnavailableError when the database cannot be reached or set up (refused, an
 * unknown host, a failed login, a connection string that does not parse): the message names the
 * host, port and database and the reason, never the password; `cause` is the driver's error.
 * @throws StoreDriverMissingError when `pg` is not installed (`npm install pg`).
 */
export async function openPostgresStore(options: PostgresStoreOptions): Promise<SqlStore> {
  const { schema } = options
  // lower case only: the search_path option folds an unquoted name to lower case, the CREATE SCHEMA above quotes it
  if (schema !== undefined && !/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) throw new TypeError('toolwire: schema must be a plain lower-case SQL identifier ([a-z_][a-z0-9_]*)')
  let pool = options.pool
  const owned = pool === undefined
  if (pool === undefined) {
    if (options.connectionString === undefined || options.connectionString === '') throw new TypeError('toolwire: openPostgresStore needs a connectionString or a pool')
    const mod = (await loadDriver('pg', () => import('pg'))) as unknown as { default: { Pool: new (config: Record<string, unknown>) => PgPool & { on(event: 'error', f: (err: Error) => void): unknown } } }
    let own: PgPool & { on(event: 'error', f: (err: Error) => void): unknown }
    try {
      own = new mod.default.Pool({
        connectionString: options.connectionString,
        max: options.max ?? 10,
        ...(schema === undefined ? {} : { options: `-c search_path=${schema}` }),
      })
    } catch (err) {
      throw openFailure(options.connectionString, err)
    }
    // an idle connection's error (a server restart) must not crash the app: the next query reports it
    own.on('error', () => {})
    pool = own
  } else if (schema !== undefined) {
    throw new TypeError('toolwire: schema applies only with connectionString; set the pool’s search_path instead')
  }
  try {
    await migrate(pool, schema)
  } catch (err) {
    if (owned) await pool.end().catch(() => undefined)
    throw err instanceof StoreSchemaError ? err : openFailure(options.connectionString, err)
  }
  return new SqlStore('postgres', new PgDriver(pool, owned), DIALECT, options.now ?? Date.now, options.onCorruptRow)
}
