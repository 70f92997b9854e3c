/**
 * The tasks extension on the wire (SEP-2663): its identifier, the errors its methods answer, and
 * the shapes of a task and of the methods' results.
 */
import type { JsonObject, TaskStatus } from '../runtime/store/tasks.js'
import { MCP_CALL_ID_META_KEY } from './meta.js'

/** The extension's identifier, in `extensions` of client and server capabilities. */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks'

/** JSON-RPC codes the tasks methods answer. */
export const TASK_ERROR_CODES = Object.freeze({ invalidParams: -32602, internal: -32603, missingCapability: -32021 })

/** The text SEP-2663 gives an unknown task (also a foreign or expired one: they are not told apart). */
export const TASK_NOT_FOUND_MESSAGE = 'Failed to retrieve task: Task not found'

/** A tasks request answered with a JSON-RPC error: `code` and `message` (and `data`) go on the wire as they are. */
export class TaskRequestError extends Error {
  override name = 'TaskRequestError'
  constructor(
    readonly code: number,
    message: string,
    readonly data?: JsonObject,
    options?: { cause?: unknown },
  ) {
    super(message, options)
  }
}

/** The -32602 answer for an unknown, foreign or expired task. */
export function taskNotFound(): TaskRequestError {
  return new TaskRequestError(TASK_ERROR_CODES.invalidParams, TASK_NOT_FOUND_MESSAGE)
}

/** The -32021 answer to a request that needs the extension and did not declare it. */
export function tasksNotDeclared(): TaskRequestError {
  return new TaskRequestError(TASK_ERROR_CODES.missingCapability, 'Missing required client capability', {
    requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } },
  })
}

/** Whether a request's `_meta` declares the tasks extension in its client capabilities (per request, as SEP-2663 requires). */
export function declaresTasks(meta: unknown): boolean {
  const caps = record(record(meta)?.['io.modelcontextprotocol/clientCapabilities'])
  const ext = record(caps?.extensions)
  return ext !== undefined && Object.hasOwn(ext, TASKS_EXTENSION) && record(ext[TASKS_EXTENSION]) !== undefined
}

/** `v` as a plain object, if it is one. */
export function record(v: unknown): Record<string, unknown> | undefined {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined
}

/** The fields of a task on the wire (SEP-2663 `Task`). */
export interface WireTask {
  readonly taskId: string
  readonly status: TaskStatus
  readonly statusMessage?: string
  readonly createdAt: string
  readonly lastUpdatedAt: string
  readonly ttlMs: number | null
  readonly pollIntervalMs: number
}

/** `tools/call`'s answer when it became a task. */
export interface CreateTaskResult extends WireTask {
  readonly resultType: 'task'
  readonly _meta: { readonly [MCP_CALL_ID_META_KEY]: string }
}

/** `tasks/get`'s answer: the task with what its status carries. */
export type GetTaskResult = WireTask & {
  readonly resultType: 'complete'
  readonly inputRequests?: JsonObject
  readonly result?: JsonObject
  readonly error?: JsonObject
}

/** `tasks/update`'s and `tasks/cancel`'s answer: an empty result. */
export interface TaskAck {
  readonly resultType: 'complete'
}
