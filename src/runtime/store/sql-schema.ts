/**
 * The SQL stores' schema: its versioned migrations, in both dialects (SQLite, PostgreSQL).
 * `toolwire_meta` holds the version a database is at; a store applies the migrations above it.
 */
import { taskTableStatements } from './tasks-sql.js'

/** One schema version: the statements that bring the schema from the version before to this one. */
export interface Migration {
  readonly version: number
  readonly statements: readonly string[]
}

/** Both dialects' column types for one migration. */
export interface Dialect {
  /** A 64-bit integer column. */
  readonly int: string
  /** An integer column the database numbers in insertion order. */
  readonly serial: string
  /** The expression that orders parked calls oldest first. */
  readonly order: string
  /** The database's clock, epoch ms (only to date rows written before schema 2). */
  readonly nowMs: string
}

/** The migrations, in order; the last one's version is the newest schema this toolwire knows. */
export function migrations(d: Dialect): readonly Migration[] {
  return [
    {
      version: 1,
      statements: [
        `CREATE TABLE toolwire_parked (
          id TEXT PRIMARY KEY, kind TEXT NOT NULL, call_id TEXT NOT NULL, tool TEXT NOT NULL,
          input TEXT NOT NULL, sealed TEXT, redacted ${d.int} NOT NULL, input_hash TEXT NOT NULL,
          data TEXT NOT NULL, state TEXT NOT NULL, fence ${d.int} NOT NULL, expires_at ${d.int},
          lease_until ${d.int}, created_at ${d.int} NOT NULL, updated_at ${d.int} NOT NULL, seq ${d.serial})`,
        `CREATE INDEX toolwire_parked_state ON toolwire_parked (state, seq)`,
        `CREATE TABLE toolwire_undo (
          call_id TEXT PRIMARY KEY, tool TEXT NOT NULL, payload TEXT NOT NULL, created_at ${d.int} NOT NULL)`,
        `CREATE TABLE toolwire_evidence (
          seq ${d.serial} PRIMARY KEY, call_id TEXT NOT NULL, tool TEXT NOT NULL, record TEXT NOT NULL)`,
        `CREATE TABLE toolwire_ledger (
          key TEXT PRIMARY KEY, input_hash TEXT NOT NULL, call_id TEXT NOT NULL, state TEXT NOT NULL,
          token TEXT NOT NULL, lease_until ${d.int}, started_at ${d.int} NOT NULL, result TEXT)`,
        `CREATE INDEX toolwire_ledger_state ON toolwire_ledger (state)`,
      ],
    },
    {
      // retention (prune): evidence rows get the time they were written; older rows are dated now
      version: 2,
      statements: [
        `ALTER TABLE toolwire_evidence ADD COLUMN created_at ${d.int}`,
        `UPDATE toolwire_evidence SET created_at = ${d.nowMs} WHERE created_at IS NULL`,
        `CREATE INDEX toolwire_evidence_created ON toolwire_evidence (created_at)`,
      ],
    },
    {
      // the ledger keeps the call's input (sensitive fields redacted, JSON text), so that a run
      // reported as outcome unknown says which action to verify; older rows have none (NULL)
      version: 3,
      statements: [`ALTER TABLE toolwire_ledger ADD COLUMN input TEXT`],
    },
    {
      // tasks of the MCP tasks extension, keyed by the SHA-256 of their id (tasks-sql.ts)
      version: 4,
      statements: taskTableStatements(d.int),
    },
    {
      // principals (issue 23): who owns a parked call or an undo (the principal's key; NULL: made
      // without a principal, unscoped), who began a ledger run (JSON), whose evidence a record is
      version: 5,
      statements: [
        `ALTER TABLE toolwire_parked ADD COLUMN owner TEXT`,
        `ALTER TABLE toolwire_undo ADD COLUMN owner TEXT`,
        `ALTER TABLE toolwire_ledger ADD COLUMN principal TEXT`,
        `ALTER TABLE toolwire_evidence ADD COLUMN subject TEXT`,
        `CREATE INDEX toolwire_evidence_subject ON toolwire_evidence (subject, created_at)`,
      ],
    },
  ]
}

/** The newest schema version this toolwire knows. */
export const SCHEMA_VERSION = 5
