/**
 * The SQL stores (SQLite and PostgreSQL) share their statements: every method is one
 * statement, and each state change is a conditional `UPDATE … RETURNING`, `INSERT … ON
 * CONFLICT DO NOTHING RETURNING` or `DELETE … RETURNING`, which the database runs atomically
 * whatever the number of connections. JSON values are stored as their JSON text. One method
 * writes twice: `settleWithEvidence`, the ledger's settle and an evidence row in one commit.
 *
 * Migrations are versioned (sql-schema.ts): `toolwire_meta` holds the schema version; a store
 * applies the migrations it knows above that version, in one transaction under the driver's
 * write lock, and refuses to open a schema newer than the newest it knows.
 */
import type { JsonValue } from '../../core/types.js'
import type { EvidenceRecord } from '../../observe/evidence.js'
import { randomId } from './codec.js'
import { SqlTaskStore } from './tasks-sql.js'
import type { TaskStore } from './tasks.js'
import type { PrincipalRef } from '../../core/principal.js'
import {
  StoreConflictError,
  StoreClosedError,
  StoreCorruptRowError,
  StoreUnavailableError,
  begunBy,
  owned,
  pruneAge,
  type BeginOptions,
  type BeginResult,
  type ClaimOptions,
  type ClaimResult,
  type ParkInput,
  type ParkedCall,
  type ParkedKind,
  type ParkedState,
  type PruneOptions,
  type PruneResult,
  type SweepResult,
  type ToolStore,
  type UndoEntry,
} from './types.js'

import type { Row, SqlParam } from './sql-types.js'
import type { Dialect } from './sql-schema.js'
export type { Row, SqlParam } from './sql-types.js'
export { SCHEMA_VERSION, migrations, type Dialect, type Migration } from './sql-schema.js'

/** What the shared store needs of a database: statements with `?` placeholders. */
export interface SqlDriver {
  /** The rows a statement returns. */
  all(sql: string, params: readonly SqlParam[]): Promise<readonly Row[]>
  /** Runs a statement; rows it changed. */
  run(sql: string, params: readonly SqlParam[]): Promise<number>
  /**
   * Runs two writes as one: one transaction, one commit (SQLite: `BEGIN IMMEDIATE`, both,
   * `COMMIT`; PostgreSQL: one statement of two CTEs). Either both happen or neither does.
   * `first` is an `UPDATE` or `DELETE` without `RETURNING`. Resolves with the rows `first` changed.
   */
  both(first: SqlStatement, second: SqlStatement): Promise<number>
  /** Whether an error is a unique-key violation. */
  isConflict(err: unknown): boolean
  close(): Promise<void>
}

/** A statement with `?` placeholders and its parameters. */
export interface SqlStatement {
  readonly sql: string
  readonly params: readonly SqlParam[]
}

const num = (v: unknown): number => (typeof v === 'number' ? v : Number(v))
const numOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : num(v))
/** Hears of a corrupt row that was skipped or read around. */
type CorruptReport = (error: StoreCorruptRowError) => void

/** The default {@link CorruptReport}: a process warning. */
const warnCorrupt: CorruptReport = (error) => process.emitWarning(error)

/**
 * A JSON text column of a row. @throws StoreCorruptRowError naming the table, the row and the
 * column when it does not parse (never the parser's error: its message quotes the text).
 */
function json(table: string, rowId: string, column: string, v: unknown): JsonValue {
  try {
    return JSON.parse(String(v)) as JsonValue
  } catch {
    throw new StoreCorruptRowError(table, rowId, column)
  }
}

/** {@link json}, or `null` when it does not parse (reported to `report`). */
function jsonOr(report: CorruptReport, table: string, rowId: string, column: string, v: unknown): JsonValue {
  try {
    return json(table, rowId, column, v)
  } catch (err) {
    report(err as StoreCorruptRowError)
    return null
  }
}

/** A nullable JSON text column: `null` when absent (a row of an older schema), or unreadable (reported). */
function jsonOrNull(report: CorruptReport, table: string, rowId: string, column: string, v: unknown): JsonValue | null {
  return v === null || v === undefined ? null : jsonOr(report, table, rowId, column, v)
}

/**
 * A parked call of a row. Strict (no `report`): @throws StoreCorruptRowError when its input or
 * data does not parse. Lenient (with `report`, for a claim or a sweep, which need only the
 * call's id, tool and fence): an unreadable column reads as `null`, and is reported.
 */
function parkedOf(r: Row, report?: CorruptReport): ParkedCall {
  const id = String(r.id)
  const read = (column: string, v: unknown): JsonValue =>
    report === undefined ? json('toolwire_parked', id, column, v) : jsonOr(report, 'toolwire_parked', id, column, v)
  return Object.freeze({
    id,
    kind: String(r.kind) as ParkedKind,
    callId: String(r.call_id),
    tool: String(r.tool),
    input: Object.freeze({ input: read('input', r.input), sealed: r.sealed === null ? null : String(r.sealed), redacted: num(r.redacted) === 1 }),
    inputHash: String(r.input_hash),
    expiresAt: numOrNull(r.expires_at),
    data: read('data', r.data),
    state: String(r.state) as ParkedState,
    fence: num(r.fence),
    createdAt: num(r.created_at),
    updatedAt: num(r.updated_at),
    ...owned(textOrNull(r.owner)),
  })
}

/** A nullable text column. */
function textOrNull(v: unknown): string | null {
  return v === null || v === undefined ? null : String(v)
}

/** A ledger row's `principal` column: who began the run, or `null` (none, a row of an older schema, or unreadable: reported). */
function principalOf(report: CorruptReport, key: string, v: unknown): PrincipalRef | null {
  const p = jsonOrNull(report, 'toolwire_ledger', key, 'principal', v)
  if (typeof p !== 'object' || p === null || Array.isArray(p)) return null
  const { subject, issuer, clientId } = p as { subject?: unknown; issuer?: unknown; clientId?: unknown }
  if (typeof subject !== 'string' || typeof issuer !== 'string') return null
  return Object.freeze(typeof clientId === 'string' ? { subject, issuer, clientId } : { subject, issuer })
}

/** The subject an evidence record names (`principal.subject`), for the indexed column; `null` for none. */
function subjectOf(record: EvidenceRecord): string | null {
  const principal = (record as { readonly principal?: { readonly subject?: unknown } }).principal
  return typeof principal?.subject === 'string' ? principal.subject : null
}

/** An undo entry of a row. @throws StoreCorruptRowError when its payload does not parse. */
function undoOf(r: Row): UndoEntry {
  const callId = String(r.call_id)
  return Object.freeze({ callId, tool: String(r.tool), payload: json('toolwire_undo', callId, 'payload', r.payload), createdAt: num(r.created_at), ...owned(textOrNull(r.owner)) })
}

/** The ledger's settle: in flight → settled with `result`, only for the holder of `token` (an `UPDATE`, no `RETURNING`). */
function ledgerSettle(key: string, token: string, result: JsonValue): SqlStatement {
  return {
    sql: `UPDATE toolwire_ledger SET state = 'settled', result = ?, lease_until = NULL WHERE key = ? AND token = ? AND state = 'in_flight'`,
    params: [JSON.stringify(result), key, token],
  }
}

/** One evidence row, written at `now`. */
function evidenceInsert(record: EvidenceRecord, now: number): SqlStatement {
  return {
    sql: `INSERT INTO toolwire_evidence (call_id, tool, record, created_at, subject) VALUES (?, ?, ?, ?, ?)`,
    params: [record.callId, record.tool, JSON.stringify(record), now, subjectOf(record)],
  }
}

const PARKED_COLUMNS = 'id, kind, call_id, tool, input, sealed, redacted, input_hash, data, state, fence, expires_at, created_at, updated_at, owner'
const UNDO_COLUMNS = 'call_id, tool, payload, created_at, owner'

/** A {@link ToolStore} over a SQL database. */
export class SqlStore implements ToolStore {
  /** Hears of corrupt rows (the `onCorruptRow` option; never throws). */
  private readonly corrupt: CorruptReport
  /** The task table (`toolwire_tasks`). */
  readonly tasks: TaskStore
  /** It keeps owners (schema 5). */
  readonly principals = true

  constructor(
    readonly kind: string,
    private readonly db: SqlDriver,
    private readonly dialect: Dialect,
    /** The store's clock (the `now` option, default `Date.now`). */
    readonly now: () => number,
    onCorruptRow: CorruptReport = warnCorrupt,
  ) {
    this.corrupt = (error) => {
      try {
        onCorruptRow(error)
      } catch {
        // a report that throws changes nothing
      }
    }
    this.tasks = new SqlTaskStore({ all: (sql, p) => this.all(sql, p), run: (sql, p) => this.run(sql, p), now, corrupt: this.corrupt })
  }

  /** The rows' parked calls; a row that does not parse is skipped and reported. */
  private readable(rows: readonly Row[]): ParkedCall[] {
    const out: ParkedCall[] = []
    for (const r of rows) {
      try {
        out.push(parkedOf(r))
      } catch (err) {
        this.corrupt(err as StoreCorruptRowError)
      }
    }
    return out
  }

  /** A statement's rows. @throws StoreUnavailableError when the store is closed or the database fails (a unique-key violation is thrown as it is). */
  private async all(sql: string, params: readonly SqlParam[]): Promise<readonly Row[]> {
    if (this.closed !== undefined) throw new StoreClosedError(`toolwire: the ${this.kind} store is closed`)
    try {
      return await this.db.all(sql, params)
    } catch (err) {
      throw this.failure(err)
    }
  }

  /** Runs a statement; the rows it changed. @throws as {@link all}. */
  private async run(sql: string, params: readonly SqlParam[]): Promise<number> {
    if (this.closed !== undefined) throw new StoreClosedError(`toolwire: the ${this.kind} store is closed`)
    try {
      return await this.db.run(sql, params)
    } catch (err) {
      throw this.failure(err)
    }
  }

  private failure(err: unknown): unknown {
    if (this.db.isConflict(err)) return err
    const message = err instanceof Error ? err.message : String(err)
    return new StoreUnavailableError(`toolwire: the ${this.kind} store failed: ${message}`, { cause: err })
  }

  async park(call: ParkInput): Promise<void> {
    const now = this.now()
    const { input } = call
    const expiresAt = call.ttlMs === undefined ? call.expiresAt : now + call.ttlMs
    try {
      await this.run(
        `INSERT INTO toolwire_parked (id, kind, call_id, tool, input, sealed, redacted, input_hash, data, state, fence, expires_at, created_at, updated_at, owner)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'parked', 0, ?, ?, ?, ?)`,
        [
          call.id, call.kind, call.callId, call.tool, JSON.stringify(input.input), input.sealed, input.redacted ? 1 : 0,
          call.inputHash, JSON.stringify(call.data ?? null), expiresAt, now, now, call.owner ?? null,
        ],
      )
    } catch (err) {
      if (this.db.isConflict(err)) throw new StoreConflictError(`toolwire: parked call ${call.id} exists`)
      throw err
    }
  }

  async getParked(id: string): Promise<ParkedCall | undefined> {
    const rows = await this.all(`SELECT ${PARKED_COLUMNS} FROM toolwire_parked WHERE id = ?`, [id])
    return rows[0] === undefined ? undefined : parkedOf(rows[0])
  }

  async listParked(state: ParkedState = 'parked'): Promise<readonly ParkedCall[]> {
    const rows = await this.all(`SELECT ${PARKED_COLUMNS} FROM toolwire_parked WHERE state = ? ORDER BY ${this.dialect.order}`, [state])
    return this.readable(rows)
  }

  async claim(id: string, options: ClaimOptions = {}): Promise<ClaimResult> {
    const now = this.now()
    const kind = options.kind ?? null
    const lease = options.leaseMs === undefined ? null : now + options.leaseMs
    const won = await this.all(
      `UPDATE toolwire_parked SET state = 'running', fence = fence + 1, lease_until = ?, updated_at = ?
       WHERE id = ? AND state = 'parked' AND (expires_at IS NULL OR expires_at > ?) AND (CAST(? AS TEXT) IS NULL OR kind = ?)
       RETURNING ${PARKED_COLUMNS}`,
      [lease, now, id, now, kind, kind],
    )
    if (won[0] !== undefined) {
      // the claim is won: a column that does not parse must not leave the call running unreported
      const call = parkedOf(won[0], this.corrupt)
      return { ok: true, call, fence: call.fence }
    }
    const found = await this.getParked(id)
    if (found === undefined || (options.kind !== undefined && found.kind !== options.kind)) return { ok: false, reason: 'unknown' }
    if (found.state === 'parked') {
      // past its expiry: it stays expired, whoever asks next
      await this.run(`UPDATE toolwire_parked SET state = 'expired', updated_at = ? WHERE id = ? AND state = 'parked'`, [now, id])
      return { ok: false, reason: 'expired', state: 'expired' }
    }
    return { ok: false, reason: found.state === 'expired' ? 'expired' : 'used', state: found.state }
  }

  async finish(id: string, fence: number): Promise<boolean> {
    const n = await this.run(
      `UPDATE toolwire_parked SET state = 'done', lease_until = NULL, updated_at = ? WHERE id = ? AND state = 'running' AND fence = ?`,
      [this.now(), id, fence],
    )
    return n === 1
  }

  async unclaim(id: string, fence: number): Promise<boolean> {
    const n = await this.run(
      `UPDATE toolwire_parked SET state = 'parked', lease_until = NULL, updated_at = ? WHERE id = ? AND state = 'running' AND fence = ?`,
      [this.now(), id, fence],
    )
    return n === 1
  }

  async deny(id: string): Promise<boolean> {
    const n = await this.run(`UPDATE toolwire_parked SET state = 'denied', updated_at = ? WHERE id = ? AND state = 'parked'`, [this.now(), id])
    return n === 1
  }

  async putUndo(entry: Omit<UndoEntry, 'createdAt'>): Promise<void> {
    try {
      await this.run(`INSERT INTO toolwire_undo (call_id, tool, payload, created_at, owner) VALUES (?, ?, ?, ?, ?)`, [
        entry.callId,
        entry.tool,
        JSON.stringify(entry.payload),
        this.now(),
        entry.owner ?? null,
      ])
    } catch (err) {
      if (this.db.isConflict(err)) throw new StoreConflictError(`toolwire: call ${entry.callId} has an undo`)
      throw err
    }
  }

  async getUndo(callId: string): Promise<UndoEntry | undefined> {
    const rows = await this.all(`SELECT ${UNDO_COLUMNS} FROM toolwire_undo WHERE call_id = ?`, [callId])
    return rows[0] === undefined ? undefined : undoOf(rows[0])
  }

  async takeUndo(callId: string, owner?: string): Promise<UndoEntry | undefined> {
    const o = owner ?? null
    const rows = await this.all(
      `DELETE FROM toolwire_undo WHERE call_id = ? AND (CAST(? AS TEXT) IS NULL OR owner IS NULL OR owner = ?) RETURNING ${UNDO_COLUMNS}`,
      [callId, o, o],
    )
    return rows[0] === undefined ? undefined : undoOf(rows[0])
  }

  async appendEvidence(record: EvidenceRecord): Promise<void> {
    const { sql, params } = evidenceInsert(record, this.now())
    await this.run(sql, params)
  }

  async readEvidence(): Promise<readonly EvidenceRecord[]> {
    const rows = await this.all(`SELECT call_id, record FROM toolwire_evidence ORDER BY seq`, [])
    const out: EvidenceRecord[] = []
    for (const r of rows) {
      try {
        out.push(json('toolwire_evidence', String(r.call_id), 'record', r.record) as unknown as EvidenceRecord)
      } catch (err) {
        this.corrupt(err as StoreCorruptRowError)
      }
    }
    return out
  }

  async begin(key: string, inputHash: string, options: BeginOptions): Promise<BeginResult> {
    const now = this.now()
    const token = options.token ?? randomId()
    const lease = options.leaseMs === undefined ? null : now + options.leaseMs
    const taken = await this.all(
      `INSERT INTO toolwire_ledger (key, input_hash, call_id, state, token, lease_until, started_at, input, principal)
       VALUES (?, ?, ?, 'in_flight', ?, ?, ?, ?, ?) ON CONFLICT (key) DO NOTHING RETURNING token`,
      [
        key, inputHash, options.callId, token, lease, now, options.input === undefined ? null : JSON.stringify(options.input),
        options.principal === undefined ? null : JSON.stringify(options.principal),
      ],
    )
    if (taken[0] !== undefined) return { state: 'new', token }
    // a run whose lease ran out never settles: its outcome is unknown, for good
    const swept = await this.run(
      `UPDATE toolwire_ledger SET state = 'unknown' WHERE key = ? AND input_hash = ? AND state = 'in_flight' AND lease_until IS NOT NULL AND lease_until <= ?`,
      [key, inputHash, now],
    )
    const rows = await this.all(`SELECT input_hash, call_id, state, started_at, result, input, principal FROM toolwire_ledger WHERE key = ?`, [key])
    const r = rows[0]
    if (r === undefined) return this.begin(key, inputHash, options) // pruned meanwhile: the key is free again
    const callId = String(r.call_id)
    if (String(r.input_hash) !== inputHash) return { state: 'mismatch', callId }
    if (r.state === 'settled') return { state: 'settled', callId, result: jsonOr(this.corrupt, 'toolwire_ledger', key, 'result', r.result) }
    if (r.state === 'unknown') {
      const input = jsonOrNull(this.corrupt, 'toolwire_ledger', key, 'input', r.input)
      return { state: 'unknown', callId, startedAt: num(r.started_at), swept: swept === 1, input, ...begunBy(principalOf(this.corrupt, key, r.principal)) }
    }
    return { state: 'in_flight', callId, startedAt: num(r.started_at) }
  }

  async settle(key: string, token: string, result: JsonValue): Promise<boolean> {
    const { sql, params } = ledgerSettle(key, token, result)
    return (await this.run(sql, params)) === 1
  }

  async settleWithEvidence(key: string, token: string, result: JsonValue, record: EvidenceRecord): Promise<boolean> {
    if (this.closed !== undefined) throw new StoreClosedError(`toolwire: the ${this.kind} store is closed`)
    // both texts are made before the database is touched: a record that does not serialize writes nothing
    const settle = ledgerSettle(key, token, result)
    const evidence = evidenceInsert(record, this.now())
    try {
      return (await this.db.both(settle, evidence)) === 1
    } catch (err) {
      throw this.failure(err)
    }
  }

  async release(key: string, token: string): Promise<boolean> {
    return (await this.run(`DELETE FROM toolwire_ledger WHERE key = ? AND token = ? AND state = 'in_flight'`, [key, token])) === 1
  }

  async sweep(): Promise<SweepResult> {
    const now = this.now()
    const keys = await this.all(
      `UPDATE toolwire_ledger SET state = 'unknown' WHERE state = 'in_flight' AND lease_until IS NOT NULL AND lease_until <= ? RETURNING key, call_id, started_at, input, principal`,
      [now],
    )
    const parked = await this.all(
      `UPDATE toolwire_parked SET state = 'unknown', updated_at = ? WHERE state = 'running' AND lease_until IS NOT NULL AND lease_until <= ? RETURNING ${PARKED_COLUMNS}`,
      [now, now],
    )
    return {
      // every run the statements marked is returned: a column that does not parse reads as null (reported)
      keys: keys.map((r) => {
        const key = String(r.key)
        const input = jsonOrNull(this.corrupt, 'toolwire_ledger', key, 'input', r.input)
        return Object.freeze({ key, callId: String(r.call_id), startedAt: num(r.started_at), input, ...begunBy(principalOf(this.corrupt, key, r.principal)) })
      }),
      parked: parked.map((r) => parkedOf(r, this.corrupt)),
    }
  }

  async prune(options: PruneOptions): Promise<PruneResult> {
    const now = this.now()
    const cutoff = now - pruneAge(options)
    const parked = await this.run(
      `DELETE FROM toolwire_parked WHERE (state IN ('done', 'denied', 'expired', 'unknown') AND updated_at < ?)
       OR (state = 'parked' AND expires_at IS NOT NULL AND expires_at <= ? AND expires_at < ?)`,
      [cutoff, now, cutoff],
    )
    const undo = await this.run(`DELETE FROM toolwire_undo WHERE created_at < ?`, [cutoff])
    const evidence = await this.run(`DELETE FROM toolwire_evidence WHERE created_at < ?`, [cutoff])
    const ledger = await this.run(`DELETE FROM toolwire_ledger WHERE state IN ('settled', 'unknown') AND started_at < ?`, [cutoff])
    return { parked, undo, evidence, ledger }
  }

  /** Closes the connection once; later calls resolve with the first. */
  close(): Promise<void> {
    return (this.closed ??= this.db.close())
  }

  private closed: Promise<void> | undefined
}
