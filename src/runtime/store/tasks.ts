/**
 * Durable tasks (the MCP tasks extension, `io.modelcontextprotocol/tasks`): a task is a handle a
 * client polls for a call's outcome. The store keeps one row per task, keyed by the SHA-256 of
 * its id: the id is a bearer handle (`twt_` + 256 random bits), and a dump of the table holds
 * none. Each row has an owner (a digest of the caller's credential, `''` without one); a read or
 * write by another owner answers exactly as an unknown id does.
 *
 * Every change is a compare-and-swap on the row's `version`; a terminal task (`completed`,
 * `failed`, `cancelled`) never changes again. `respond` records answers to outstanding input
 * requests, each key once: the caller that recorded an answer is the one that acts on it.
 */
import { createHash, randomBytes } from 'node:crypto'
import type { JsonValue } from '../../core/types.js'

/** A task's status, as SEP-2663 names them. */
export type TaskStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled'

/** The statuses after which a task never changes. */
export const TERMINAL_TASK_STATUSES: readonly TaskStatus[] = Object.freeze(['completed', 'failed', 'cancelled'])

/** Whether a task in `status` can still change. */
export function isTerminalTask(status: TaskStatus): boolean {
  return TERMINAL_TASK_STATUSES.includes(status)
}

/** A JSON object (input requests, responses, a result, an error). */
export type JsonObject = { readonly [key: string]: JsonValue }

/** What `create` takes. */
export interface TaskInput {
  /** The credential digest the task is bound to (`''` without one): only that owner sees it. */
  readonly owner: string
  /** The parked call (confirmation id or request id) the task waits on, if any. */
  readonly parkedId?: string | null
  readonly callId: string
  readonly tool: string
  readonly status: TaskStatus
  readonly statusMessage?: string | null
  /** Outstanding input requests, by key (with status `input_required`). */
  readonly inputRequests?: JsonObject | null
  readonly result?: JsonObject | null
  readonly error?: JsonObject | null
  /** How long the task is kept after its creation, ms; `null` for unlimited. */
  readonly ttlMs: number | null
  /** The polling interval the client is told, ms. */
  readonly pollIntervalMs: number
  /** How long a `working` task may go without an update before `sweep` calls its outcome unknown; omit for no lease. */
  readonly leaseMs?: number
}

/** A task as the store holds it (never its id: only its digest). */
export interface TaskRow {
  /** SHA-256 (hex) of the task id. */
  readonly idDigest: string
  readonly owner: string
  readonly parkedId: string | null
  readonly callId: string
  readonly tool: string
  readonly status: TaskStatus
  readonly statusMessage: string | null
  /** Every input request issued over the task's life, by key (keys are never reused). */
  readonly inputRequests: JsonObject | null
  /** The answers recorded, by key. A key in `inputRequests` and not here is outstanding. */
  readonly responses: JsonObject
  readonly result: JsonObject | null
  readonly error: JsonObject | null
  readonly ttlMs: number | null
  readonly pollIntervalMs: number
  /** Epoch ms on the store's clock. */
  readonly createdAt: number
  readonly updatedAt: number
  /** Epoch ms after which `sweep` fails a `working` task; `null` for no lease. */
  readonly leaseUntil: number | null
  /** One more on each change: what `update` compares. */
  readonly version: number
}

/** What `update` may change. A field left out keeps its value. */
export interface TaskPatch {
  readonly status?: TaskStatus
  /** The parked call the task now waits on (a continued call parked again). */
  readonly parkedId?: string | null
  readonly statusMessage?: string | null
  readonly inputRequests?: JsonObject | null
  readonly result?: JsonObject | null
  readonly error?: JsonObject | null
  readonly pollIntervalMs?: number
  /** A new lease from now (ms), or `null` for none. */
  readonly leaseMs?: number | null
}

/** What `respond` recorded: the answers this caller won (the others were not outstanding), and the row after. */
export interface TaskResponded {
  readonly accepted: JsonObject
  readonly task: TaskRow
}

/** What `sweep` did: tasks failed as outcome unknown (their run's process stopped), and how many expired tasks were deleted. */
export interface TaskSweepResult {
  readonly failed: readonly TaskRow[]
  readonly expired: number
}

/** The error a task whose run was interrupted fails with: it is never run again. */
export const OUTCOME_UNKNOWN_TASK_ERROR: JsonObject = Object.freeze({
  code: -32603,
  message: 'Outcome unknown: the call was interrupted and is not re-run',
  data: { toolwire: { status: 'outcome_unknown' } },
})

/** The status message of such a task. */
export const OUTCOME_UNKNOWN_TASK_MESSAGE = 'outcome_unknown: the process running this call stopped before it finished; it may or may not have happened'

/**
 * The task table of a {@link ToolStore}. Every method is atomic on its own; a task id or owner
 * that does not match answers `undefined`, whichever it was.
 */
export interface TaskStore {
  /** Creates a task; resolves once it is committed (a `get` anywhere finds it). The id is returned once and never stored. */
  create(task: TaskInput): Promise<{ readonly taskId: string; readonly task: TaskRow }>
  /** The task, if `taskId` names one of `owner`'s that has not expired. */
  get(taskId: string, owner: string): Promise<TaskRow | undefined>
  /**
   * Compare-and-swap: applies `patch` when the task is at `version` and not terminal. The row
   * after, or `undefined` (unknown, another owner's, expired, changed meanwhile, or terminal).
   */
  update(taskId: string, owner: string, version: number, patch: TaskPatch): Promise<TaskRow | undefined>
  /**
   * Records `responses` for the keys that are outstanding (issued, not yet answered), each
   * for one caller only; others are ignored. When no key remains outstanding the task becomes
   * `working` with a lease of `leaseMs`. `undefined` as `get`.
   */
  respond(taskId: string, owner: string, responses: JsonObject, leaseMs?: number): Promise<TaskResponded | undefined>
  /**
   * Fails `working` tasks whose lease ran out or whose parked call the store's own sweep
   * marked `unknown` (status `failed`, {@link OUTCOME_UNKNOWN_TASK_ERROR}); deletes expired
   * tasks. Each failed task is returned by one sweep only.
   */
  sweep(): Promise<TaskSweepResult>
}

/** Whether a task has outlived its ttl at `now`. */
export function taskExpired(row: Pick<TaskRow, 'createdAt' | 'ttlMs'>, now: number): boolean {
  return row.ttlMs !== null && row.createdAt + row.ttlMs <= now
}

/** A new row for `task`, created at `now`. */
export function taskRowOf(idDigest: string, task: TaskInput, now: number): TaskRow {
  return Object.freeze({
    idDigest,
    owner: task.owner,
    parkedId: task.parkedId ?? null,
    callId: task.callId,
    tool: task.tool,
    status: task.status,
    statusMessage: task.statusMessage ?? null,
    inputRequests: task.inputRequests ?? null,
    responses: {},
    result: task.result ?? null,
    error: task.error ?? null,
    ttlMs: task.ttlMs,
    pollIntervalMs: task.pollIntervalMs,
    createdAt: now,
    updatedAt: now,
    leaseUntil: task.leaseMs === undefined ? null : now + task.leaseMs,
    version: 1,
  })
}

/** The prefix of task ids. */
export const TASK_ID_PREFIX = 'twt_'

/** A new task id: `twt_` + 256 random bits, base64url. */
export function newTaskId(): string {
  return TASK_ID_PREFIX + randomBytes(32).toString('base64url')
}

/** The digest a task is stored under: SHA-256 (hex) of its id. */
export function taskIdDigest(taskId: string): string {
  return createHash('sha256').update(taskId, 'utf8').digest('hex')
}

/** Whether `taskId` has the shape of a task id (anything else is unknown without asking the store). */
export function isTaskIdShape(taskId: unknown): taskId is string {
  return typeof taskId === 'string' && taskId.length === TASK_ID_PREFIX.length + 43 && taskId.startsWith(TASK_ID_PREFIX) && /^[A-Za-z0-9_-]+$/.test(taskId.slice(4))
}

/** The owner of a task made with a bearer `token`: SHA-256 (hex) of it, domain-separated; `''` without one. */
export function taskOwner(token: string | undefined): string {
  return token === undefined || token === '' ? '' : createHash('sha256').update('toolwire task owner v1\u0000', 'utf8').update(token, 'utf8').digest('hex')
}

/** Which of `responses` answer outstanding keys of `row`. */
export function outstandingResponses(row: TaskRow, responses: JsonObject): JsonObject {
  const out: Record<string, JsonValue> = {}
  if (row.status !== 'input_required' || row.inputRequests === null) return out
  for (const [key, value] of Object.entries(responses)) {
    if (Object.hasOwn(row.inputRequests, key) && !Object.hasOwn(row.responses, key)) out[key] = value
  }
  return out
}

/**
 * `respond` over `get` and `update`: reads the row, records the outstanding answers with a
 * compare-and-swap, and reads again when another writer changed it meanwhile.
 */
export async function respondByCas(
  store: Pick<TaskStore, 'get'>,
  write: (taskId: string, owner: string, version: number, patch: TaskPatch & { readonly responses: JsonObject }) => Promise<TaskRow | undefined>,
  taskId: string,
  owner: string,
  responses: JsonObject,
  leaseMs: number | undefined,
): Promise<TaskResponded | undefined> {
  for (;;) {
    const row = await store.get(taskId, owner)
    if (row === undefined) return undefined
    const accepted = outstandingResponses(row, responses)
    if (Object.keys(accepted).length === 0) return { accepted, task: row }
    const all = { ...row.responses, ...accepted }
    const left = Object.keys(row.inputRequests ?? {}).some((key) => !Object.hasOwn(all, key))
    const patch = left ? { responses: all } : { responses: all, status: 'working' as const, statusMessage: null, leaseMs: leaseMs ?? null }
    const task = await write(taskId, owner, row.version, patch)
    if (task !== undefined) return { accepted, task }
  }
}

/**
 * The store's task table, or `undefined` when it has none (a store of the app's own without
 * `tasks`): serving then says {@link NO_TASKS_SUPPORT} and does not offer tasks.
 */
export function tasksOf(store: { readonly tasks?: TaskStore } | undefined): TaskStore | undefined {
  const tasks = store?.tasks
  return tasks !== undefined && typeof tasks.create === 'function' && typeof tasks.get === 'function' ? tasks : undefined
}

/** What serving says of a store without a task table. */
export const NO_TASKS_SUPPORT = 'this store has no tasks support: tasks are off'
