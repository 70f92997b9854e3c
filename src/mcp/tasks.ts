/**
 * The MCP tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663), without the SDK: when a
 * `tools/call` becomes a task, and what `tasks/get`, `tasks/update` and `tasks/cancel` answer.
 * The server's handlers call {@link McpTasks}; the results are the objects SEP-2663 shapes, the
 * errors are {@link TaskRequestError}s carrying their JSON-RPC code.
 *
 * A call becomes a task when the client declared the extension on that request and the call
 * parks: it needs a confirmation, or it is suspended for an answer (`pending`, kinds `input` and
 * `confirmation`). The task waits in `input_required` with one input request (keys `confirm-1`,
 * `input-2`, …, never reused over the task's life); `tasks/update` answers it, and the call then
 * runs detached on the instance that took the answer, once (the store's claim), under a lease:
 * if that process dies, a sweep fails the task as outcome unknown and it is never run again.
 */
import type { CallResult } from '../core/view.js'
import type { JsonValue } from '../core/types.js'
import type { ToolManager } from '../runtime/manager.js'
import type { Principal } from '../core/principal.js'
import {
  isTaskIdShape,
  isTerminalTask,
  tasksOf,
  type JsonObject,
  type TaskRow,
  type TaskStore,
  type TaskSweepResult,
} from '../runtime/store/tasks.js'
import { StoreUnavailableError, type ToolStore } from '../runtime/store/types.js'
import { MCP_CALL_ID_META_KEY } from './meta.js'
import { answeredBy, confirmAs } from './principal-of.js'
import { record, taskNotFound, TaskRequestError, TASK_ERROR_CODES, type CreateTaskResult, type GetTaskResult, type TaskAck } from './task-wire.js'
import { answersRequest, becomesTask, decisionOf, nextState, outstanding, waitOf, wireTask, type LongRunning } from './task-waits.js'
export { declaresTasks, taskNotFound, tasksNotDeclared, TaskRequestError, TASK_ERROR_CODES, TASK_NOT_FOUND_MESSAGE, TASKS_EXTENSION } from './task-wire.js'
export type { CreateTaskResult, GetTaskResult, TaskAck, WireTask } from './task-wire.js'
export { becomesTask, callToolResultOf, longRunningOf, type LongRunning } from './task-waits.js'

/** Options of {@link McpTasks}. */
export interface McpTasksOptions {
  /** How long a task is kept after its creation (default 24 hours). */
  readonly ttlMs?: number
  /** The polling interval clients are told (default 2 seconds). */
  readonly pollIntervalMs?: number
  /** How long a detached run may take before a sweep calls its outcome unknown (default 10 minutes; keep it the manager's `leaseMs`). */
  readonly leaseMs?: number
  /** Hears of a failure of a detached run's bookkeeping (the store failed while recording its outcome). Must not throw. */
  readonly onError?: (error: unknown) => void
  /** Confirmations are answered only at the approval page (its sign-in): a task never asks for one as a form. */
  readonly confirmationsAtPage?: boolean
}

/** What a task needs to know of the call that made it. */
export interface TaskCall {
  /** The tool's name. */
  readonly tool: string
  /** The call id (`_meta["toolwire/callId"]`). */
  readonly callId: string
  /** Whose task it is: `taskOwnerOf` the caller's principal key, else `taskOwner(token)` (`''` without one). */
  readonly owner: string
}

/** What the tasks methods use of a manager. */
export type TaskManager = Pick<ToolManager, 'confirm' | 'resume' | 'cancel' | 'recover'>

/**
 * The tasks of one MCP server (one per manager and store; any number of instances may share
 * the store). Never throws out of a detached run: its failures go to `onError`.
 */
export class McpTasks {
  private readonly ttlMs: number
  private readonly pollIntervalMs: number
  private readonly leaseMs: number
  private readonly onError: (error: unknown) => void
  private readonly atPage: boolean
  /** Runs started here, by task id: what `tasks/cancel` stops, and what {@link idle} waits for. */
  private readonly running = new Map<string, { readonly callId: string; readonly done: Promise<void> }>()

  private constructor(
    private readonly tm: TaskManager,
    private readonly store: ToolStore,
    private readonly tasks: TaskStore,
    options: McpTasksOptions,
  ) {
    this.ttlMs = options.ttlMs ?? 86_400_000
    this.pollIntervalMs = options.pollIntervalMs ?? 2000
    this.leaseMs = options.leaseMs ?? 10 * 60_000
    this.atPage = options.confirmationsAtPage === true
    const report = options.onError ?? ((error: unknown) => process.emitWarning(error instanceof Error ? error : String(error)))
    this.onError = (error) => {
      try {
        report(error)
      } catch {
        // a report that throws changes nothing
      }
    }
  }

  /**
   * The tasks of `tm` on `store`, or `undefined` when the store has no task table (a store of
   * the app's own): serving then says `NO_TASKS_SUPPORT` and answers calls without tasks.
   */
  static open(tm: TaskManager, store: ToolStore, options: McpTasksOptions = {}): McpTasks | undefined {
    const tasks = tasksOf(store)
    return tasks === undefined ? undefined : new McpTasks(tm, store, tasks, options)
  }

  /**
   * After `tm.call` of a `tools/call` whose client declared the extension (check it with
   * {@link declaresTasks}): the task handle when the call parked ({@link becomesTask}), created
   * and committed before this resolves; `undefined` when the call's own result is the answer.
   * Rejects with a `StoreUnavailableError` when the store fails (the call stays parked).
   */
  async taskFor(view: CallResult, call: TaskCall): Promise<CreateTaskResult | undefined> {
    const wait = waitOf(view, this.atPage)
    if (wait === undefined) return undefined
    const key = `${wait.prefix}-1`
    const { taskId, task } = await this.tasks.create({
      owner: call.owner,
      parkedId: wait.parkedId,
      callId: call.callId,
      tool: call.tool,
      status: 'input_required',
      statusMessage: wait.message,
      inputRequests: { [key]: wait.request },
      ttlMs: this.ttlMs,
      pollIntervalMs: this.pollIntervalMs,
    })
    return { resultType: 'task', ...wireTask(taskId, task), _meta: { [MCP_CALL_ID_META_KEY]: call.callId } }
  }

  /**
   * A `tools/call` of a tool with a `longRunning` rule, from a client that declared the
   * extension. `start` makes the call (`tm.call` with the call id, and without the request's
   * signal: a call that became a task outlives its request; `tasks/cancel` stops it). `true`:
   * the task is committed first, then the call starts detached; `{ afterMs }`: the call starts,
   * and becomes a task only if it has not finished after `afterMs` (otherwise its own view is
   * the answer, for the caller to render, and to pass to {@link taskFor} if it parked).
   * With `true`, rejects with a `StoreUnavailableError` when the task cannot be created
   * (nothing ran); with `{ afterMs }`, the call's own view then answers when it ends (the
   * failure goes to `onError`).
   */
  async runLong(call: TaskCall, rule: LongRunning, start: () => Promise<CallResult>): Promise<{ readonly task: CreateTaskResult } | { readonly view: CallResult }> {
    if (rule === true) {
      const task = await this.createWorking(call)
      this.track(task.taskId, call.owner, call.callId, start())
      return { task }
    }
    const run = start()
    let timer: ReturnType<typeof setTimeout> | undefined
    const late = new Promise<undefined>((resolve) => {
      timer = setTimeout(resolve, rule.afterMs, undefined)
    })
    const early = await Promise.race([run, late])
    clearTimeout(timer)
    if (early !== undefined) return { view: early }
    let task: CreateTaskResult
    try {
      task = await this.createWorking(call)
    } catch (err) {
      // no task could be made: the call goes on, and its own view answers the request when it ends
      this.onError(err)
      return { view: await run }
    }
    this.track(task.taskId, call.owner, call.callId, run)
    return { task }
  }

  /** A committed task in `working`, under a lease, for a call about to run (or running) here. */
  private async createWorking(call: TaskCall): Promise<CreateTaskResult> {
    const { taskId, task } = await this.tasks.create({
      owner: call.owner,
      callId: call.callId,
      tool: call.tool,
      status: 'working',
      ttlMs: this.ttlMs,
      pollIntervalMs: this.pollIntervalMs,
      leaseMs: this.leaseMs,
    })
    return { resultType: 'task', ...wireTask(taskId, task), _meta: { [MCP_CALL_ID_META_KEY]: call.callId } }
  }

  /** `tasks/get` by `owner`. @throws TaskRequestError -32602 for an unknown, foreign or expired task, -32603 when the store fails. */
  async get(params: unknown, owner: string): Promise<GetTaskResult> {
    const { taskId, row } = await this.find(params, owner)
    const base = { resultType: 'complete' as const, ...wireTask(taskId, row) }
    switch (row.status) {
      case 'input_required':
        return { ...base, inputRequests: outstanding(row) ?? {} }
      case 'completed':
        return { ...base, result: row.result ?? {} }
      case 'failed':
        return { ...base, error: row.error ?? { code: TASK_ERROR_CODES.internal, message: 'Internal error' } }
      default:
        return base
    }
  }

  /**
   * `tasks/update` by `owner`: records the answers to outstanding keys (others are ignored) and
   * acks; the answered call then runs detached here, once, answered as `principal` (the request's;
   * none: the operator). @throws TaskRequestError as {@link get}, and -32602 when `inputResponses` is not an object.
   */
  async update(params: unknown, owner: string, principal?: Principal): Promise<TaskAck> {
    const responses = record(record(params)?.inputResponses)
    if (responses === undefined) throw new TaskRequestError(TASK_ERROR_CODES.invalidParams, 'tasks/update needs inputResponses (an object)')
    const { taskId, row } = await this.find(params, owner)
    // an answer that is not one to what was asked (`approve: "true"`, no `answer`) is ignored: the key stays outstanding
    const valid = Object.fromEntries(Object.entries(responses).filter(([key, response]) => answersRequest(row.inputRequests?.[key], response as JsonValue))) as JsonObject
    const answered = await this.guard(() => this.tasks.respond(taskId, owner, valid, this.leaseMs))
    if (answered === undefined) throw taskNotFound()
    const keys = Object.keys(answered.accepted)
    // the one caller that recorded the last outstanding answer continues the call
    if (keys.length > 0 && answered.task.status === 'working' && answered.task.parkedId !== null) {
      const key = keys[keys.length - 1]!
      const prefix = key.startsWith('confirm-') ? 'confirm' : 'input'
      this.detach(taskId, owner, answered.task, prefix, decisionOf(answered.task.inputRequests?.[key], answered.accepted[key]!), principal)
    }
    return { resultType: 'complete' }
  }

  /**
   * `tasks/cancel` by `owner`, as `principal` (the request's; none: the operator): a task waiting
   * for input is cancelled and its parked call denied (it never runs); one running here is
   * interrupted (cooperative: it may still complete); otherwise nothing changes. Acks.
   * @throws TaskRequestError as {@link get}.
   */
  async cancel(params: unknown, owner: string, principal?: Principal): Promise<TaskAck> {
    let { taskId, row } = await this.find(params, owner)
    while (row.status === 'input_required') {
      const cancelled = await this.guard(() => this.tasks.update(taskId, owner, row.version, { status: 'cancelled', statusMessage: 'Cancelled by the client' }))
      if (cancelled !== undefined) {
        if (row.parkedId !== null) await this.deny(row.parkedId, row, principal)
        return { resultType: 'complete' }
      }
      const again = await this.guard(() => this.tasks.get(taskId, owner))
      if (again === undefined) return { resultType: 'complete' }
      row = again
    }
    const local = this.running.get(taskId)
    if (local !== undefined) this.tm.cancel(local.callId, answeredBy(principal))
    return { resultType: 'complete' }
  }

  /**
   * Marks runs whose process stopped as outcome unknown (`tm.recover()`, which reports each
   * once), then fails their tasks and deletes expired ones. Call it periodically on one
   * instance or all. Rejects with a `StoreUnavailableError` when the store fails.
   */
  async sweep(): Promise<TaskSweepResult> {
    await this.tm.recover()
    return this.tasks.sweep()
  }

  /** Resolves when every run started here has recorded its outcome (for a shutdown, or a test). */
  async idle(): Promise<void> {
    while (this.running.size > 0) await Promise.all([...this.running.values()].map((r) => r.done))
  }

  /** The task `params.taskId` names, for `owner`. @throws TaskRequestError -32602 when there is none, -32603 when the store fails. */
  private async find(params: unknown, owner: string): Promise<{ taskId: string; row: TaskRow }> {
    const taskId = record(params)?.taskId
    if (!isTaskIdShape(taskId)) throw taskNotFound()
    const row = await this.guard(() => this.tasks.get(taskId, owner))
    if (row === undefined) throw taskNotFound()
    return { taskId, row }
  }

  /** A store operation; its failure is a -32603 (never the driver's message: it may name the database). */
  private async guard<T>(op: () => Promise<T>): Promise<T> {
    try {
      return await op()
    } catch (err) {
      if (err instanceof StoreUnavailableError) throw new TaskRequestError(TASK_ERROR_CODES.internal, 'Internal error: the task store is unavailable', undefined, { cause: err })
      throw err
    }
  }

  /** Denies, as `principal`, a parked call whose task was cancelled: a confirmation through the manager (its `confirmation` event), a suspension in the store. */
  private async deny(parkedId: string, row: TaskRow, principal: Principal | undefined): Promise<void> {
    const confirm = Object.keys(outstanding(row) ?? {}).some((k) => k.startsWith('confirm-'))
    try {
      if (confirm) await this.tm.confirm(parkedId, confirmAs(false, principal))
      else await this.store.deny(parkedId)
    } catch (err) {
      this.onError(err)
    }
  }

  /** Continues the task's call here, detached, answered as `principal` (the answering request's), and records its outcome. */
  private detach(
    taskId: string,
    owner: string,
    task: TaskRow,
    prefix: 'confirm' | 'input',
    decision: { readonly go: boolean; readonly answer: JsonValue },
    principal: Principal | undefined,
  ): void {
    const parkedId = task.parkedId!
    const work = (async (): Promise<CallResult | undefined> => {
      if (prefix === 'confirm') return this.tm.confirm(parkedId, confirmAs(decision.go, principal))
      if (decision.go) return this.tm.resume(parkedId, decision.answer, answeredBy(principal))
      await this.store.deny(parkedId)
      return undefined
    })()
    this.track(taskId, owner, task.callId, work)
  }

  /** Records the outcome of `work`, a run of the task's call here (`undefined`: declined); `tasks/cancel` can interrupt it meanwhile. */
  private track(taskId: string, owner: string, callId: string, work: Promise<CallResult | undefined>): void {
    const done = work
      .then((view) => this.settle(taskId, owner, callId, view))
      .catch((err: unknown) => this.onError(err))
      .finally(() => this.running.delete(taskId))
    this.running.set(taskId, { callId, done })
  }

  /** Records a continued call's outcome: another wait (a new key), cancelled, or completed with its result. */
  private async settle(taskId: string, owner: string, callId: string, view: CallResult | undefined): Promise<void> {
    for (;;) {
      const row = await this.tasks.get(taskId, owner)
      if (row === undefined || isTerminalTask(row.status)) return // swept or expired meanwhile: nothing to record
      const next = nextState(row, view, callId, this.atPage)
      if ((await this.tasks.update(taskId, owner, row.version, next)) !== undefined) return
    }
  }
}
