/**
 * `toolwire/store`: durable state for a tool manager — parked calls, undo entries, evidence
 * and the idempotency ledger — in memory, SQLite (`better-sqlite3`) or PostgreSQL (`pg`).
 * The drivers are optional peer dependencies, loaded only when their store is opened; the
 * root `toolwire` entry loads neither. See docs/store.md.
 */

export type {
  BeginOptions,
  BeginResult,
  ClaimOptions,
  ClaimResult,
  ParkInput,
  ParkedCall,
  ParkedKind,
  ParkedState,
  PruneOptions,
  PruneResult,
  StoreOptions,
  SweepResult,
  ToolStore,
  UndoEntry,
} from './types.js'
export { StoreClosedError, StoreConflictError, StoreCorruptRowError, StoreDriverMissingError, StoreSchemaError, StoreUnavailableError } from './types.js'
export { MemoryStore } from './memory.js'
export { SCHEMA_VERSION, type SqlStore } from './sql.js'
export { openSqliteStore, type SqliteDatabase, type SqliteStatement, type SqliteStoreOptions } from './sqlite.js'
export { openPostgresStore, type PgClient, type PgPool, type PgResult, type PostgresStoreOptions } from './postgres.js'
export { canonicalJson, inputHash, openInput, randomId, sealInput, type StoreKey, type StoreKeys, type StoredInput } from './codec.js'
export { signApproval, verifyApproval, type ApprovalClaims, type ApprovalSecret, type ApprovalSecrets } from './approval.js'
export { evidenceOf } from './evidence.js'
export {
  NO_TASKS_SUPPORT,
  OUTCOME_UNKNOWN_TASK_ERROR,
  isTaskIdShape,
  newTaskId,
  taskIdDigest,
  taskOwner,
  tasksOf,
  type JsonObject,
  type TaskInput,
  type TaskPatch,
  type TaskResponded,
  type TaskRow,
  type TaskStatus,
  type TaskStore,
  type TaskSweepResult,
} from './tasks.js'
