/**
 * The memory store's task table: a `Map` in this process. It serves one process only (a task
 * made here is unknown to any other instance, and gone when the process ends).
 */
import type { ParkedState } from './types.js'
import {
  OUTCOME_UNKNOWN_TASK_ERROR,
  OUTCOME_UNKNOWN_TASK_MESSAGE,
  isTerminalTask,
  newTaskId,
  respondByCas,
  taskExpired,
  taskIdDigest,
  taskRowOf,
  type JsonObject,
  type TaskInput,
  type TaskPatch,
  type TaskResponded,
  type TaskRow,
  type TaskStore,
  type TaskSweepResult,
} from './tasks.js'

/** A {@link TaskStore} in this process's memory. */
export class MemoryTaskStore implements TaskStore {
  private readonly rows = new Map<string, TaskRow>()

  constructor(
    private readonly now: () => number,
    /** Throws when the store is closed. */
    private readonly open: () => void,
    /** The state of a parked call of the same store. */
    private readonly parkedState: (id: string) => ParkedState | undefined,
  ) {}

  async create(task: TaskInput): Promise<{ readonly taskId: string; readonly task: TaskRow }> {
    this.open()
    const taskId = newTaskId()
    const row = taskRowOf(taskIdDigest(taskId), task, this.now())
    this.rows.set(row.idDigest, row)
    return { taskId, task: row }
  }

  async get(taskId: string, owner: string): Promise<TaskRow | undefined> {
    this.open()
    return this.visible(taskId, owner)
  }

  private visible(taskId: string, owner: string): TaskRow | undefined {
    const row = typeof taskId === 'string' ? this.rows.get(taskIdDigest(taskId)) : undefined
    return row === undefined || row.owner !== owner || taskExpired(row, this.now()) ? undefined : row
  }

  async update(taskId: string, owner: string, version: number, patch: TaskPatch): Promise<TaskRow | undefined> {
    this.open()
    return this.write(taskId, owner, version, patch)
  }

  private write(taskId: string, owner: string, version: number, patch: TaskPatch & { readonly responses?: JsonObject }): TaskRow | undefined {
    const row = this.visible(taskId, owner)
    if (row === undefined || row.version !== version || isTerminalTask(row.status)) return undefined
    const now = this.now()
    const { leaseMs, ...rest } = patch
    const next: TaskRow = Object.freeze({
      ...row,
      ...definedOnly(rest),
      leaseUntil: leaseMs === undefined ? row.leaseUntil : leaseMs === null ? null : now + leaseMs,
      updatedAt: now,
      version: row.version + 1,
    })
    this.rows.set(row.idDigest, next)
    return next
  }

  async respond(taskId: string, owner: string, responses: JsonObject, leaseMs?: number): Promise<TaskResponded | undefined> {
    this.open()
    return respondByCas(this, async (id, o, v, p) => this.write(id, o, v, p), taskId, owner, responses, leaseMs)
  }

  async sweep(): Promise<TaskSweepResult> {
    this.open()
    const now = this.now()
    const failed: TaskRow[] = []
    let expired = 0
    for (const [digest, row] of this.rows) {
      if (taskExpired(row, now)) {
        this.rows.delete(digest)
        expired++
        continue
      }
      if (row.status !== 'working') continue
      const lapsed = row.leaseUntil !== null && row.leaseUntil <= now
      const unknown = row.parkedId !== null && this.parkedState(row.parkedId) === 'unknown'
      if (!lapsed && !unknown) continue
      const next: TaskRow = Object.freeze({
        ...row,
        status: 'failed',
        statusMessage: OUTCOME_UNKNOWN_TASK_MESSAGE,
        error: OUTCOME_UNKNOWN_TASK_ERROR,
        leaseUntil: null,
        updatedAt: now,
        version: row.version + 1,
      })
      this.rows.set(digest, next)
      failed.push(next)
    }
    return { failed, expired }
  }
}

/** `patch` without its `undefined` fields (a field left out keeps its value). */
function definedOnly<T extends object>(patch: T): Partial<T> {
  return Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)) as Partial<T>
}
