/**
 * The SQL stores' task table (`toolwire_tasks`, schema 4): one row per task, keyed by the SHA-256
 * of its id. Each change is one conditional `UPDATE … WHERE version = ? RETURNING`, so one of
 * concurrent writers wins whatever the number of connections or instances.
 */
import type { JsonValue } from '../../core/types.js'
import type { Row, SqlParam } from './sql-types.js'
import { StoreCorruptRowError } from './types.js'
import {
  OUTCOME_UNKNOWN_TASK_ERROR,
  OUTCOME_UNKNOWN_TASK_MESSAGE,
  newTaskId,
  respondByCas,
  taskIdDigest,
  taskRowOf,
  type JsonObject,
  type TaskInput,
  type TaskPatch,
  type TaskResponded,
  type TaskRow,
  type TaskStatus,
  type TaskStore,
  type TaskSweepResult,
} from './tasks.js'

/** What the task table needs of its store: statements (closed-store and failure handling included), the clock, the corrupt-row report. */
export interface SqlTaskHost {
  all(sql: string, params: readonly SqlParam[]): Promise<readonly Row[]>
  run(sql: string, params: readonly SqlParam[]): Promise<number>
  readonly now: () => number
  readonly corrupt: (error: StoreCorruptRowError) => void
}

/** The statements of schema 4 (`int`: the dialect's 64-bit integer type). */
export function taskTableStatements(int: string): readonly string[] {
  return [
    `CREATE TABLE toolwire_tasks (
      id_digest TEXT PRIMARY KEY, owner TEXT NOT NULL, parked_id TEXT, call_id TEXT NOT NULL, tool TEXT NOT NULL,
      status TEXT NOT NULL, status_message TEXT, input_requests TEXT, responses TEXT NOT NULL, result TEXT, error TEXT,
      ttl_ms ${int}, poll_ms ${int} NOT NULL, created_at ${int} NOT NULL, updated_at ${int} NOT NULL,
      expires_at ${int}, lease_until ${int}, version ${int} NOT NULL)`,
    `CREATE INDEX toolwire_tasks_status ON toolwire_tasks (status, lease_until)`,
    `CREATE INDEX toolwire_tasks_expires ON toolwire_tasks (expires_at)`,
    `CREATE INDEX toolwire_tasks_parked ON toolwire_tasks (parked_id)`,
  ]
}

const COLUMNS =
  'id_digest, owner, parked_id, call_id, tool, status, status_message, input_requests, responses, result, error, ttl_ms, poll_ms, created_at, updated_at, lease_until, version'

const num = (v: unknown): number => (typeof v === 'number' ? v : Number(v))
const numOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : num(v))
const textOrNull = (v: unknown): string | null => (v === null || v === undefined ? null : String(v))
const jsonText = (v: JsonValue | undefined): string | null => (v === undefined || v === null ? null : JSON.stringify(v))

/** A task of a row. @throws StoreCorruptRowError when a JSON column does not parse (naming the row by its digest, never its content). */
function taskOf(r: Row): TaskRow {
  const idDigest = String(r.id_digest)
  const obj = (column: string, v: unknown): JsonObject | null => {
    if (v === null || v === undefined) return null
    try {
      return JSON.parse(String(v)) as JsonObject
    } catch {
      throw new StoreCorruptRowError('toolwire_tasks', idDigest, column)
    }
  }
  return Object.freeze({
    idDigest,
    owner: String(r.owner),
    parkedId: textOrNull(r.parked_id),
    callId: String(r.call_id),
    tool: String(r.tool),
    status: String(r.status) as TaskStatus,
    statusMessage: textOrNull(r.status_message),
    inputRequests: obj('input_requests', r.input_requests),
    responses: obj('responses', r.responses) ?? {},
    result: obj('result', r.result),
    error: obj('error', r.error),
    ttlMs: numOrNull(r.ttl_ms),
    pollIntervalMs: num(r.poll_ms),
    createdAt: num(r.created_at),
    updatedAt: num(r.updated_at),
    leaseUntil: numOrNull(r.lease_until),
    version: num(r.version),
  })
}

/** A value of a patch: `[set?, value]`, so one statement serves every patch (`CASE WHEN ? THEN ? ELSE col END`). */
function field(v: SqlParam | undefined): [number, SqlParam] {
  return v === undefined ? [0, null] : [1, v]
}

/** A {@link TaskStore} over a SQL database. */
export class SqlTaskStore implements TaskStore {
  constructor(private readonly db: SqlTaskHost) {}

  async create(task: TaskInput): Promise<{ readonly taskId: string; readonly task: TaskRow }> {
    const taskId = newTaskId()
    const row = taskRowOf(taskIdDigest(taskId), task, this.db.now())
    await this.db.run(
      `INSERT INTO toolwire_tasks (${COLUMNS}, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        row.idDigest, row.owner, row.parkedId, row.callId, row.tool, row.status, row.statusMessage, jsonText(row.inputRequests),
        JSON.stringify(row.responses), jsonText(row.result), jsonText(row.error), row.ttlMs, row.pollIntervalMs, row.createdAt,
        row.updatedAt, row.leaseUntil, row.version, row.ttlMs === null ? null : row.createdAt + row.ttlMs,
      ],
    )
    return { taskId, task: row }
  }

  async get(taskId: string, owner: string): Promise<TaskRow | undefined> {
    if (typeof taskId !== 'string') return undefined
    const rows = await this.db.all(
      `SELECT ${COLUMNS} FROM toolwire_tasks WHERE id_digest = ? AND owner = ? AND (expires_at IS NULL OR expires_at > ?)`,
      [taskIdDigest(taskId), owner, this.db.now()],
    )
    return rows[0] === undefined ? undefined : taskOf(rows[0])
  }

  async update(taskId: string, owner: string, version: number, patch: TaskPatch): Promise<TaskRow | undefined> {
    return this.write(taskId, owner, version, patch)
  }

  private async write(taskId: string, owner: string, version: number, patch: TaskPatch & { readonly responses?: JsonObject }): Promise<TaskRow | undefined> {
    if (typeof taskId !== 'string') return undefined
    const now = this.db.now()
    const lease = patch.leaseMs === undefined ? undefined : patch.leaseMs === null ? null : now + patch.leaseMs
    const json = (v: JsonObject | null | undefined): SqlParam | undefined => (v === undefined ? undefined : jsonText(v))
    const rows = await this.db.all(
      `UPDATE toolwire_tasks SET
         status = CASE WHEN ? = 1 THEN ? ELSE status END,
         parked_id = CASE WHEN ? = 1 THEN ? ELSE parked_id END,
         status_message = CASE WHEN ? = 1 THEN ? ELSE status_message END,
         input_requests = CASE WHEN ? = 1 THEN ? ELSE input_requests END,
         responses = CASE WHEN ? = 1 THEN ? ELSE responses END,
         result = CASE WHEN ? = 1 THEN ? ELSE result END,
         error = CASE WHEN ? = 1 THEN ? ELSE error END,
         poll_ms = CASE WHEN ? = 1 THEN ? ELSE poll_ms END,
         lease_until = CASE WHEN ? = 1 THEN ? ELSE lease_until END,
         updated_at = ?, version = version + 1
       WHERE id_digest = ? AND owner = ? AND version = ? AND status NOT IN ('completed', 'failed', 'cancelled')
         AND (expires_at IS NULL OR expires_at > ?)
       RETURNING ${COLUMNS}`,
      [
        ...field(patch.status), ...field(patch.parkedId), ...field(patch.statusMessage), ...field(json(patch.inputRequests)), ...field(json(patch.responses)),
        ...field(json(patch.result)), ...field(json(patch.error)), ...field(patch.pollIntervalMs), ...field(lease),
        now, taskIdDigest(taskId), owner, version, now,
      ],
    )
    return rows[0] === undefined ? undefined : taskOf(rows[0])
  }

  respond(taskId: string, owner: string, responses: JsonObject, leaseMs?: number): Promise<TaskResponded | undefined> {
    return respondByCas(this, (id, o, v, p) => this.write(id, o, v, p), taskId, owner, responses, leaseMs)
  }

  async sweep(): Promise<TaskSweepResult> {
    const now = this.db.now()
    const expired = await this.db.run(`DELETE FROM toolwire_tasks WHERE expires_at IS NOT NULL AND expires_at <= ?`, [now])
    const rows = await this.db.all(
      `UPDATE toolwire_tasks SET status = 'failed', status_message = ?, error = ?, lease_until = NULL, updated_at = ?, version = version + 1
       WHERE status = 'working' AND ((lease_until IS NOT NULL AND lease_until <= ?)
         OR parked_id IN (SELECT id FROM toolwire_parked WHERE state = 'unknown'))
       RETURNING ${COLUMNS}`,
      [OUTCOME_UNKNOWN_TASK_MESSAGE, JSON.stringify(OUTCOME_UNKNOWN_TASK_ERROR), now, now],
    )
    const failed: TaskRow[] = []
    for (const r of rows) {
      try {
        failed.push(taskOf(r))
      } catch (err) {
        this.db.corrupt(err as StoreCorruptRowError)
      }
    }
    return { failed, expired }
  }
}
