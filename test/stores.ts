/**
 * The store kinds the store tests run against, opened the same way by every file that uses
 * them (test/store.test.ts, test/durable.test.ts): in memory, SQLite (`better-sqlite3`, a file
 * of its own per test) and PostgreSQL (`pg`, a schema of its own per test).
 *
 * PostgreSQL: set TOOLWIRE_PG_URL (or DATABASE_URL) to a database the tests may create schemas
 * in; `.ci/run` starts a throwaway cluster (scripts/postgres.sh). Unset, the PostgreSQL cases
 * skip with a printed reason; with CI=true that is an error. SQLite: better-sqlite3 is compiled
 * for the Node.js that installed it, and `npm run test:node-matrix` compiles it for each other
 * major; where it does not load the SQLite cases skip with a printed reason, and with CI=true that
 * is an error (test/support.ts sqliteUnusable; any other load failure fails the file).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll } from 'vitest'
import { MemoryStore, openPostgresStore, openSqliteStore, randomId, type StoreOptions, type ToolStore } from '../src/runtime/store/index.js'
import { sqliteUnusable } from './support.js'

/** The PostgreSQL database the tests may create schemas in, if any. */
export const PG_URL: string | undefined = process.env.TOOLWIRE_PG_URL ?? process.env.DATABASE_URL

/** A clock the test moves by hand: expiries and leases without sleeping. */
export interface Clock {
  t: number
}

/** One kind of store under test. */
export interface StoreKind {
  readonly name: 'memory' | 'sqlite' | 'postgres'
  /** Whether it outlives the process (SQLite, PostgreSQL); the memory store is one instance per process. */
  readonly durable: boolean
  /** Whether its cases skip here (the reason was printed). */
  readonly skip: boolean
  /** A fresh place (a file, a schema) for one test, removed after the file's tests. */
  place(): string
  /** Opens a store at `place` on the test's clock (with `extra` options); two opens of one place share its state (for memory: the same instance). */
  open(place: string, clock: Clock, extra?: Omit<StoreOptions, 'now'>): Promise<ToolStore>
  /** How a child process opens the store at `place`: the source of an expression over `mod`, the bundled store entry. */
  childOpen(place: string, mod: string): string
  /** Sets the stored schema version by hand (durable kinds). */
  setVersion(place: string, version: number): Promise<void>
  /** Runs statements on the store's tables by hand, unqualified names (durable kinds). */
  exec(place: string, statements: readonly string[]): Promise<void>
}

/**
 * The store kinds, in order memory, SQLite, PostgreSQL, with what the file made of them
 * (files, schemas) removed after its tests. `tag` names the file in skip reasons and in the
 * names of its files and schemas.
 * @throws under CI=true when PostgreSQL is not configured.
 */
export async function storeKinds(tag: string): Promise<readonly StoreKind[]> {
  if (PG_URL === undefined) {
    const reason = `TOOLWIRE_PG_URL (or DATABASE_URL) is not set: the PostgreSQL cases of test/${tag} are skipped. \`.ci/run\` starts a server (scripts/postgres.sh start)`
    if (process.env.CI === 'true') throw new Error(`${reason}; CI=true requires it`)
    console.warn(`SKIP: ${reason}`)
  }
  const sqliteSkip = await sqliteUnusable()
  if (sqliteSkip !== undefined) console.warn(`SKIP: test/${tag}: ${sqliteSkip}`)

  const schemas: string[] = []
  const memories = new Map<string, MemoryStore>()
  afterAll(async () => {
    for (const dir of tempDirs.splice(0)) rmSync(dir, { recursive: true, force: true })
    if (PG_URL !== undefined && schemas.length > 0) {
      const { default: pg } = await import('pg')
      const client = new pg.Client({ connectionString: PG_URL })
      await client.connect()
      for (const schema of schemas) await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
      await client.end()
    }
  })
  const byHand = (name: string) => async (): Promise<never> => {
    throw new Error(`the ${name} store has no tables to edit by hand`)
  }
  return [
    {
      name: 'memory',
      durable: false,
      skip: false,
      place: () => randomId('m'),
      async open(place, clock, extra) {
        // the memory store has one instance per process: "two stores" are the same one
        let s = memories.get(place)
        if (s === undefined) memories.set(place, (s = new MemoryStore({ ...extra, now: () => clock.t })))
        return s
      },
      childOpen: () => 'undefined',
      setVersion: byHand('memory'),
      exec: byHand('memory'),
    },
    {
      name: 'sqlite',
      durable: true,
      skip: sqliteSkip !== undefined,
      place: () => join(tempDir(`toolwire-${tag}-`), 'store.db'),
      open: (path, clock, extra) => openSqliteStore({ ...extra, path, now: () => clock.t }),
      childOpen: (path, mod) => `${mod}.openSqliteStore({ path: ${JSON.stringify(path)} })`,
      async setVersion(path, version) {
        const { default: Database } = await import('better-sqlite3')
        const db = new Database(path)
        db.prepare(`UPDATE toolwire_meta SET version = ? WHERE name = 'schema'`).run(version)
        db.close()
      },
      async exec(path, statements) {
        const { default: Database } = await import('better-sqlite3')
        const db = new Database(path)
        for (const sql of statements) db.exec(sql)
        db.close()
      },
    },
    {
      name: 'postgres',
      durable: true,
      skip: PG_URL === undefined,
      place() {
        const schema = `tw_${tag}_${randomId().replace(/[^A-Za-z0-9]/g, '').slice(0, 16).toLowerCase()}`
        schemas.push(schema)
        return schema
      },
      open: (schema, clock, extra) => openPostgresStore({ ...extra, connectionString: PG_URL!, schema, max: 4, now: () => clock.t }),
      childOpen: (schema, mod) => `${mod}.openPostgresStore({ connectionString: ${JSON.stringify(PG_URL)}, schema: ${JSON.stringify(schema)}, max: 4 })`,
      async setVersion(schema, version) {
        const { default: pg } = await import('pg')
        const client = new pg.Client({ connectionString: PG_URL })
        await client.connect()
        await client.query(`UPDATE "${schema}".toolwire_meta SET version = $1 WHERE name = 'schema'`, [version])
        await client.end()
      },
      async exec(schema, statements) {
        const { default: pg } = await import('pg')
        const client = new pg.Client({ connectionString: PG_URL, options: `-c search_path=${schema}` })
        await client.connect()
        for (const sql of statements) await client.query(sql)
        await client.end()
      },
    },
  ]
}

const tempDirs: string[] = []

/**
 * Two handles over one store's state on one clock (two handles on one SQLite file, two pools
 * on one PostgreSQL schema; memory: one instance), pushed to `opened` for the file to close
 * after its tests.
 */
export async function storePair(kind: StoreKind, opened: ToolStore[]): Promise<{ a: ToolStore; b: ToolStore; clock: Clock; place: string }> {
  const clock: Clock = { t: Date.now() }
  const place = kind.place()
  const a = await kind.open(place, clock)
  const b = await kind.open(place, clock)
  opened.push(a, b)
  return { a, b, clock, place }
}

/** A temporary folder (under `parent`, default the system's), removed after the file's tests (with {@link storeKinds}). */
export function tempDir(prefix: string, parent: string = tmpdir()): string {
  const dir = mkdtempSync(join(parent, prefix))
  tempDirs.push(dir)
  return dir
}

/**
 * Runs `f` with a fresh place of `kind` (a file, a schema), a hand-moved clock starting at
 * 1,000,000 and an `open` that opens the store there (each open another handle on the same
 * state); closes every handle it opened afterwards.
 */
export async function withStores<T>(kind: StoreKind, f: (open: () => Promise<ToolStore>, clock: Clock, place: string) => Promise<T>): Promise<T> {
  const place = kind.place()
  const clock: Clock = { t: 1_000_000 }
  const opened: ToolStore[] = []
  try {
    return await f(
      async () => {
        const s = await kind.open(place, clock)
        opened.push(s)
        return s
      },
      clock,
      place,
    )
  } finally {
    for (const s of opened) await s.close()
  }
}

/** The statements that take a durable store's tables back to schema 4 (before principals): its migration's columns and index dropped. */
export const SCHEMA_5_COLUMNS: readonly string[] = [
  'DROP INDEX toolwire_evidence_subject',
  'ALTER TABLE toolwire_evidence DROP COLUMN subject',
  'ALTER TABLE toolwire_ledger DROP COLUMN principal',
  'ALTER TABLE toolwire_undo DROP COLUMN owner',
  'ALTER TABLE toolwire_parked DROP COLUMN owner',
]
