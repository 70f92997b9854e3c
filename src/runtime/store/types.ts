/**
 * The state of a tool manager that must outlive its process, and be shared by instances:
 * parked calls (confirmations and suspensions), undo entries, evidence records and the
 * idempotency ledger. Three implementations pass one test suite: in memory, SQLite, PostgreSQL.
 *
 * Every change that decides who runs a side effect is one compare-and-swap in the store:
 * `claim` (parked → running), `takeUndo` (present → gone), `begin` (absent → in flight),
 * `sweep` (stale in flight → outcome unknown). Each succeeds for exactly one caller, whether
 * the callers share a connection, a process, or neither.
 */
import type { JsonValue } from '../../core/types.js'
import type { EvidenceRecord } from '../../observe/evidence.js'
import type { StoredInput } from './codec.js'
import type { TaskStore } from './tasks.js'
import type { PrincipalRef } from '../../core/principal.js'

/** Whether a parked call waits for a confirmation (`tm.confirm`) or an answer (`tm.resume`). */
export type ParkedKind = 'confirmation' | 'suspension'

/**
 * The life of a parked call:
 * `parked` → `running` (claimed) → `done` (finished);
 * `parked` → `denied` (refused or cancelled) or `expired` (claimed after its expiry);
 * `running` → `unknown` (its claim's lease ran out without `finish`: the process died mid-run).
 */
export type ParkedState = 'parked' | 'running' | 'done' | 'denied' | 'expired' | 'unknown'

/** A call to park. */
export interface ParkInput {
  /** The confirmation id or request id: what `claim` takes. Unique in the store. */
  readonly id: string
  readonly kind: ParkedKind
  readonly callId: string
  readonly tool: string
  /** The input as {@link sealInput} prepared it. */
  readonly input: StoredInput
  /** {@link inputHash} of the real input. */
  readonly inputHash: string
  /**
   * Epoch ms after which a claim answers `expired`; `null` for never. Ignored when `ttlMs` is
   * given: then the store sets it from its own clock, the one its claims read.
   */
  readonly expiresAt: number | null
  /** How long the call may wait, from now on the store's clock (its `now` option): sets `expiresAt`. */
  readonly ttlMs?: number
  /** Anything else the manager needs to continue the call (the pending request, a summary), redacted. */
  readonly data?: JsonValue
  /**
   * The owner key (`principalKey`) of the principal that made the call; absent or `null` for a
   * call made without one. Written once, never updated: an answer with another principal finds nothing.
   */
  readonly owner?: string | null
}

/** A parked call as the store holds it. */
export interface ParkedCall extends ParkInput {
  readonly state: ParkedState
  /** Fencing token: 0 while parked, then one more on each successful claim. `finish` must present it. */
  readonly fence: number
  readonly createdAt: number
  readonly updatedAt: number
  readonly data: JsonValue
  /** The owner key; absent for a call made without a principal. */
  readonly owner?: string | null
}

/** What `claim` answers: the call and its fencing token, or why not. */
export type ClaimResult =
  | { readonly ok: true; readonly call: ParkedCall; readonly fence: number }
  | { readonly ok: false; readonly reason: 'unknown' | 'used' | 'expired'; readonly state?: ParkedState }

/** A durable undo: the tool's `undo(payload)` runs it, once. */
export interface UndoEntry {
  readonly callId: string
  readonly tool: string
  readonly payload: JsonValue
  readonly createdAt: number
  /** The owner key of the principal whose call registered it; absent (or `null`) for none. */
  readonly owner?: string | null
}

/** What `begin` answers for an idempotency key. */
export type BeginResult =
  /** The key is new: run the call, then `settle(key, token, result)`. */
  | { readonly state: 'new'; readonly token: string }
  /** Another run holds the key and its lease has not run out. */
  | { readonly state: 'in_flight'; readonly callId: string; readonly startedAt: number }
  /** A run settled the key with the same input: its recorded result. */
  | { readonly state: 'settled'; readonly callId: string; readonly result: JsonValue }
  /**
   * A run began and never settled (its process died, its lease ran out): it may or may not have
   * happened. `swept` is true for the one `begin` (or `sweep`) that turned the key unknown — it
   * reports the dead run — and false for every later one.
   */
  | {
      readonly state: 'unknown'
      readonly callId: string
      readonly startedAt: number
      readonly swept: boolean
      /** The run's input as `begin` recorded it (sensitive fields redacted); `null` when none was (a row of an older schema). */
      readonly input?: JsonValue | null
      /** Who began the run, as `begin` recorded it; absent when no principal did (or a row of an older schema). */
      readonly principal?: PrincipalRef | null
    }
  /** The key was used with another input. */
  | { readonly state: 'mismatch'; readonly callId: string }

/** Options of `begin`. */
export interface BeginOptions {
  /** The call that takes the key. */
  readonly callId: string
  /** How long the run may hold the key before `sweep` (or a later `begin`) calls its outcome unknown; omit for no lease. */
  readonly leaseMs?: number
  /**
   * The call's input with its sensitive fields redacted (never the raw input), kept with the
   * key so that a run reported as outcome unknown says which action to verify. Stored as JSON text.
   */
  readonly input?: JsonValue
  /** Who began the run (subject, issuer, client; never the scopes), for the evidence of a run reported as outcome unknown. */
  readonly principal?: PrincipalRef
  /**
   * The token a new key is held with (`begin` answers it), when the caller drew one already (a
   * random id); default: one the store draws. A store of the app's own may ignore it: the answer's token is the one to settle with.
   */
  readonly token?: string
}

/** What `sweep` settled as outcome unknown: ledger keys and parked calls whose lease ran out. */
export interface SweepResult {
  /** `input`: as `begin` recorded it (redacted); `null` when none was (a row of an older schema). */
  readonly keys: readonly {
    readonly key: string
    readonly callId: string
    readonly startedAt: number
    readonly input?: JsonValue | null
    /** `principal`: as `begin` recorded it; absent when none was. */
    readonly principal?: PrincipalRef | null
  }[]
  readonly parked: readonly ParkedCall[]
}

/** Options of `prune`. */
export interface PruneOptions {
  /** Rows older than this many ms (on the store's clock) go; at least 0. */
  readonly olderThanMs: number
}

/** How many rows `prune` removed, per kind. */
export interface PruneResult {
  readonly parked: number
  readonly undo: number
  readonly evidence: number
  readonly ledger: number
}

/** Options of `claim`. */
export interface ClaimOptions {
  /** Claims only a call of this kind; another kind answers `unknown`. */
  readonly kind?: ParkedKind
  /** How long the claimer may run before `sweep` calls the call's outcome unknown; omit for no lease. */
  readonly leaseMs?: number
}

/** The durable state of a tool manager. Every method is atomic on its own. */
export interface ToolStore {
  /** `'memory'`, `'sqlite'` or `'postgres'`. */
  readonly kind: string
  /**
   * `true` when the store keeps owners (schema 5: the three stores of `toolwire/store`). A manager
   * on a store of the app's own without it refuses a call with a principal (`invalid_options`).
   */
  readonly principals?: boolean
  /** The store's clock, epoch ms (its `now` option): expiries and leases are read from it. Optional for a store of the app's own. */
  readonly now?: () => number
  /** Parks a call. @throws StoreConflictError when the id is taken. */
  park(call: ParkInput): Promise<void>
  /** The parked call with this id, in any state. */
  getParked(id: string): Promise<ParkedCall | undefined>
  /** Parked calls in `state` (default `parked`), oldest first. */
  listParked(state?: ParkedState): Promise<readonly ParkedCall[]>
  /** Compare-and-swap parked → running; one more fencing token. Exactly one of concurrent claims of an id wins. */
  claim(id: string, options?: ClaimOptions): Promise<ClaimResult>
  /** running → done, only for the holder of `fence`. Whether it was. */
  finish(id: string, fence: number): Promise<boolean>
  /**
   * running → parked again, only for the holder of `fence`, before anything ran (the claimer
   * found it could not run the call: its tool was unregistered meanwhile). Whether it was.
   */
  unclaim(id: string, fence: number): Promise<boolean>
  /** parked → denied (a refusal or a cancel). Whether it was still parked. */
  deny(id: string): Promise<boolean>

  /** Records an undo for a call (with its `owner`, when a principal made the call). @throws StoreConflictError when the call has one. */
  putUndo(entry: Omit<UndoEntry, 'createdAt'>): Promise<void>
  /**
   * Removes and returns a call's undo: exactly one of concurrent takers gets it. With `owner`,
   * only an undo of that owner or of none; without, any (the operator).
   */
  takeUndo(callId: string, owner?: string): Promise<UndoEntry | undefined>
  /**
   * A call's undo, left in the store (what `tm.undoable` asks). Optional for a store of the
   * app's own: without it, `tm.undoable` answers what the manager's process knows (`tm.canUndo`).
   */
  getUndo?(callId: string): Promise<UndoEntry | undefined>

  /** Appends an evidence record. */
  appendEvidence(record: EvidenceRecord): Promise<void>
  /** Every evidence record, in the order appended. */
  readEvidence(): Promise<readonly EvidenceRecord[]>

  /** Takes an idempotency key for a run, or says why not (see {@link BeginResult}). */
  begin(key: string, inputHash: string, options: BeginOptions): Promise<BeginResult>
  /** in flight → settled with `result`, only for the holder of `token`. Whether it was. */
  settle(key: string, token: string, result: JsonValue): Promise<boolean>
  /**
   * `settle(key, token, result)` and `appendEvidence(record)` in one transaction: both or
   * neither, one commit (the SQL stores: one `queue` step on SQLite, one statement on
   * PostgreSQL). The record is written whether or not the key settled, as the two calls do.
   * Whether it settled. Optional for a store of the app's own: without it, the manager makes the two calls.
   */
  settleWithEvidence?(key: string, token: string, result: JsonValue, record: EvidenceRecord): Promise<boolean>
  /** in flight → free again, only for the holder of `token`: the call holding it ended before its body ran. Whether it was. */
  release(key: string, token: string): Promise<boolean>
  /** Marks in-flight keys and running parked calls whose lease ran out as outcome unknown; each is returned by one sweep only. */
  sweep(): Promise<SweepResult>

  /**
   * Retention: deletes what is older than `olderThanMs` and can no longer change an answer —
   * parked calls that were answered (`done`, `denied`, `expired`, `unknown`) or whose expiry
   * passed, settled or unknown ledger keys (by when their run began), undo entries and evidence
   * records (by when they were written). Never a parked call that can still be confirmed or
   * resumed, a running one, or a ledger key in flight. A pruned key is forgotten: a retry with
   * it runs again.
   */
  prune(options: PruneOptions): Promise<PruneResult>

  /**
   * Tasks of the MCP tasks extension (`toolwire/store`'s three stores have them). Optional for a
   * store of the app's own: without it, serving says "this store has no tasks support: tasks are
   * off" and answers calls without tasks.
   */
  readonly tasks?: TaskStore

  /** Releases the connection (a store made from an app's own handle leaves it open). Any later call rejects with {@link StoreUnavailableError}. */
  close(): Promise<void>
}

/** A second `park` or `putUndo` of one id. */
export class StoreConflictError extends Error {
  override name = 'StoreConflictError'
}

/**
 * The store could not be used: it was closed, its database is unreachable, a statement failed.
 * `code` is `'store_unavailable'`; `cause` is the driver's error.
 */
export class StoreUnavailableError extends Error {
  override name: string = 'StoreUnavailableError'
  readonly code = 'store_unavailable'
}

/**
 * A stored row whose JSON column does not parse (a disk fault, a hand edit): names the table,
 * the row (its id, call id or ledger key) and the column, never the content. A
 * {@link StoreUnavailableError} (`code` `'store_unavailable'`). A list skips such a row and
 * reports it to the store's `onCorruptRow`; a read of that one row rejects with it.
 */
export class StoreCorruptRowError extends StoreUnavailableError {
  override name = 'StoreCorruptRowError'
  constructor(
    readonly table: string,
    readonly rowId: string,
    readonly column: string,
    options?: { cause?: unknown },
  ) {
    super(`toolwire: the store's row ${JSON.stringify(rowId)} of ${table} has an unreadable ${column} column (not JSON)`, options)
  }
}

/** The store was closed by the application (a {@link StoreUnavailableError}, `code` `'store_unavailable'`). */
export class StoreClosedError extends StoreUnavailableError {
  override name = 'StoreClosedError'
}

/**
 * A store's driver is not installed: `npm install better-sqlite3` for SQLite, `npm install pg`
 * for PostgreSQL (optional peer dependencies of toolwire). `code` is `'store_driver_missing'`.
 */
export class StoreDriverMissingError extends Error {
  override name = 'StoreDriverMissingError'
  readonly code = 'store_driver_missing'
  constructor(
    /** The package to install. */
    readonly driver: 'better-sqlite3' | 'pg',
    options?: { cause?: unknown },
  ) {
    super(`toolwire: the ${driver === 'pg' ? 'PostgreSQL' : 'SQLite'} store needs the '${driver}' package, which is not installed: npm install ${driver}`, options)
  }
}

/**
 * Loads a store's driver; a missing package is a {@link StoreDriverMissingError} (its own
 * missing dependency, or any other load failure, is rethrown as it is).
 */
export async function loadDriver<T>(driver: 'better-sqlite3' | 'pg', load: () => Promise<T>): Promise<T> {
  try {
    return await load()
  } catch (err) {
    const e = err as { code?: unknown; message?: unknown } | null
    const missing = (e?.code === 'ERR_MODULE_NOT_FOUND' || e?.code === 'MODULE_NOT_FOUND') && typeof e.message === 'string' && new RegExp(`['"]${driver}['"/]`).test(e.message)
    if (missing) throw new StoreDriverMissingError(driver, { cause: err })
    throw err
  }
}

/** The age of `prune`'s cut-off. @throws TypeError when it is not a number ≥ 0. */
export function pruneAge(options: PruneOptions): number {
  const age = options?.olderThanMs
  if (typeof age !== 'number' || !(age >= 0)) throw new TypeError('toolwire: prune needs { olderThanMs } ≥ 0')
  return age
}

/** A store whose schema is newer than this version of toolwire knows. */
export class StoreSchemaError extends Error {
  override name = 'StoreSchemaError'
}

/** Options every store takes. */
export interface StoreOptions {
  /** The clock, epoch ms (default `Date.now`): expiries and leases are read from it. */
  readonly now?: () => number
  /**
   * Hears of each corrupt row a list or a sweep skipped or read around (default: a process
   * warning, `process.emitWarning`). Must not throw (what it throws is ignored).
   */
  readonly onCorruptRow?: (error: StoreCorruptRowError) => void
}

/** `{ owner }` for a record a principal made; nothing for one made without (its shape is as before principals). */
export function owned(owner: string | null | undefined): { readonly owner?: string } {
  return owner === null || owner === undefined ? {} : { owner }
}

/** `{ principal }` for a ledger run a principal began; nothing for one without. */
export function begunBy(principal: PrincipalRef | null | undefined): { readonly principal?: PrincipalRef } {
  return principal === null || principal === undefined ? {} : { principal }
}
