/**
 * `toolwire/store`: durable state for a tool manager — parked calls, undo entries, evidence
 * and the idempotency ledger — in memory, SQLite (`better-sqlite3`) or PostgreSQL (`pg`).
 * The drivers are optional peer dependencies, loaded only when their store is opened; the
 * root `toolwire` entry loads neither. See docs/store.md.
 */
import type { EvidenceRecord, EvidenceStore } from '../../observe/evidence.js'
import type { ToolStore } from './types.js'

export type {
  BeginOptions,
  BeginResult,
  ClaimOptions,
  ClaimResult,
  ParkInput,
  ParkedCall,
  ParkedKind,
  ParkedState,
  StoreOptions,
  SweepResult,
  ToolStore,
  UndoEntry,
} from './types.js'
export { StoreConflictError, StoreSchemaError } from './types.js'
export { MemoryStore } from './memory.js'
export { SCHEMA_VERSION, type SqlStore } from './sql.js'
export { openSqliteStore, type SqliteDatabase, type SqliteStatement, type SqliteStoreOptions } from './sqlite.js'
export { openPostgresStore, type PgClient, type PgPool, type PgResult, type PostgresStoreOptions } from './postgres.js'
export { canonicalJson, inputHash, openInput, randomId, sealInput, type StoreKey, type StoredInput } from './codec.js'
export { signApproval, verifyApproval, type ApprovalClaims } from './approval.js'

/**
 * The evidence half of a store as an `EvidenceStore`, for `new ToolManager({ evidence })`:
 * each record is one row, written when `append` resolves.
 */
export function evidenceOf(store: ToolStore): EvidenceStore {
  const pending = new Set<Promise<void>>()
  let failed: unknown[] = []
  return {
    append(record: EvidenceRecord): Promise<void> {
      const p = store.appendEvidence(record)
      const tracked = p.then(
        () => {},
        (err: unknown) => {
          failed.push(err)
        },
      )
      pending.add(tracked)
      void tracked.finally(() => pending.delete(tracked))
      return p
    },
    readAll: () => store.readEvidence(),
    async flush(): Promise<void> {
      await Promise.all([...pending])
      const errors = failed
      failed = []
      if (errors.length === 1) throw errors[0]
      if (errors.length > 1) throw new AggregateError(errors, `${errors.length} evidence records were not written`)
    },
  }
}
