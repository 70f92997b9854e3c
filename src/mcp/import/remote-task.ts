/**
 * A remote task (the MCP tasks extension, `io.modelcontextprotocol/tasks`, SEP-2663) as
 * importMcpTools follows it. The SDK v2 client rejects a task handle (`resultType: "task"`) with
 * `UNSUPPORTED_RESULT_TYPE` and keeps no raw result, so {@link taskAwareTransport} wraps the
 * client's transport and hands the handle on as a complete result carrying
 * `_meta["toolwire/task"]`; `tasks/get` and `tasks/update` go through `client.request` with a
 * pass-through schema. No SDK import.
 */
import type { JsonValue } from '../../core/types.js'
import type { RemoteCallOptions } from './remote-client.js'

/** Where {@link taskAwareTransport} puts a task handle in the result it hands on. */
export const TASK_META_KEY = 'toolwire/task'

/** The tasks extension's name, to declare in the client's `capabilities.extensions`. */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks'

/** A task's state, as a handle or `tasks/get` gives it (untrusted: read with {@link taskOf}). */
export interface RemoteTask {
  readonly taskId: string
  readonly status: 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled'
  readonly statusMessage?: string
  readonly pollIntervalMs?: number
  readonly inputRequests?: { readonly [key: string]: unknown }
  readonly result?: unknown
  readonly error?: { readonly message?: string }
}

const STATUSES: ReadonlySet<unknown> = new Set(['working', 'input_required', 'completed', 'failed', 'cancelled'])

/** A task state read from untrusted JSON, or `undefined`. */
export function taskOf(value: unknown): RemoteTask | undefined {
  if (typeof value !== 'object' || value === null) return undefined
  const t = value as { taskId?: unknown; status?: unknown }
  return typeof t.taskId === 'string' && t.taskId !== '' && STATUSES.has(t.status) ? (value as RemoteTask) : undefined
}

/** Whether a result carries a task handle put there by {@link taskAwareTransport}, well-formed or not. */
export function carriesTaskHandle(result: unknown): boolean {
  const meta = typeof result === 'object' && result !== null ? (result as { _meta?: unknown })._meta : undefined
  return typeof meta === 'object' && meta !== null && Object.hasOwn(meta, TASK_META_KEY)
}

/** The shortest wait between two `tasks/get`, in ms, whatever the task's `pollIntervalMs` or `taskPoll.intervalMs` says. */
export const MIN_TASK_POLL_MS = 100

/** The task handle a result carries (put there by {@link taskAwareTransport}), or `undefined`. */
export function taskHandleOf(result: unknown): RemoteTask | undefined {
  const meta = typeof result === 'object' && result !== null ? (result as { _meta?: unknown })._meta : undefined
  return typeof meta === 'object' && meta !== null ? taskOf((meta as Record<string, unknown>)[TASK_META_KEY]) : undefined
}

/** What the wrapper needs of a v2 client `Transport`: its message callback. */
interface WrappableTransport {
  onmessage?: ((message: never, extra?: never) => void) | undefined
}

/** A response's result as a task handle is rewritten: a complete result carrying the handle in `_meta`. */
function rewriteTask(message: unknown): unknown {
  const m = message as { result?: unknown }
  if (typeof m !== 'object' || m === null || typeof m.result !== 'object' || m.result === null) return message
  const { resultType, _meta, ...handle } = m.result as Record<string, unknown>
  if (resultType !== 'task') return message
  const meta = typeof _meta === 'object' && _meta !== null ? _meta : {}
  return { ...m, result: { resultType: 'complete', content: [], _meta: { ...meta, [TASK_META_KEY]: handle } } }
}

/**
 * Wraps an SDK v2 client transport (before `client.connect`) so that a task handle answering a
 * request reaches importMcpTools: a response whose result has `resultType: "task"` is handed on
 * as `{ resultType: "complete", content: [], _meta: { …, "toolwire/task": <the handle> } }`.
 * Everything else passes unchanged (every other member is the transport's own). Declare the
 * extension on the client too (`capabilities: { extensions: { "io.modelcontextprotocol/tasks": {} } }`).
 */
export function taskAwareTransport<T extends object>(inner: T & WrappableTransport): T {
  let onmessage: ((message: unknown, extra?: unknown) => void) | undefined
  return new Proxy(inner, {
    get(target, prop) {
      if (prop === 'onmessage') return onmessage
      const value = Reflect.get(target, prop, target) as unknown
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value
    },
    set(target, prop, value) {
      if (prop !== 'onmessage') return Reflect.set(target, prop, value, target)
      onmessage = value as typeof onmessage
      const handler = onmessage === undefined ? undefined : (message: unknown, extra?: unknown) => onmessage?.(rewriteTask(message), extra)
      return Reflect.set(target, 'onmessage', handler, target)
    },
  })
}

/** The `request` member of the SDK v2 client (custom methods with a Standard Schema). */
export interface TaskRequester {
  request(request: { method: string; params?: Record<string, unknown> }, resultSchema: PassThroughSchema, options?: RemoteCallOptions): Promise<unknown>
}

/** A Standard Schema that takes any value as it is (toolwire reads the answer itself). */
export interface PassThroughSchema {
  readonly '~standard': { readonly version: 1; readonly vendor: string; validate(value: unknown): { readonly value: unknown } }
}

const PASS_THROUGH: PassThroughSchema = Object.freeze({ '~standard': Object.freeze({ version: 1 as const, vendor: 'toolwire', validate: (value: unknown) => ({ value }) }) })

/** Whether the client can send `tasks/*` (the SDK v2 client). */
export function canRequest(client: unknown): client is TaskRequester {
  return typeof (client as Partial<TaskRequester>).request === 'function'
}

/** `tasks/get`: the task's state now. @throws what the client throws, or a TypeError for an answer that is not a task. */
export async function getTask(client: TaskRequester, taskId: string, options: RemoteCallOptions): Promise<RemoteTask> {
  const answer = await client.request({ method: 'tasks/get', params: { taskId } }, PASS_THROUGH, options)
  const task = taskOf(answer)
  if (task === undefined) throw new TypeError('toolwire: tasks/get answered something that is not a task')
  return task
}

/** `tasks/update` with the input responses. @throws what the client throws. */
export async function updateTask(client: TaskRequester, taskId: string, inputResponses: { readonly [key: string]: JsonValue }, options: RemoteCallOptions): Promise<void> {
  await client.request({ method: 'tasks/update', params: { taskId, inputResponses } }, PASS_THROUGH, options)
}

/** How importMcpTools waits for a remote task before answering `pending`. */
export interface TaskPollOptions {
  /** Between two `tasks/get`, in ms (default: the task's `pollIntervalMs`, else 1000; never under {@link MIN_TASK_POLL_MS}). */
  readonly intervalMs?: number
  /** The longest wait for a working task, in ms (default 0: answer `pending` at once). */
  readonly maxWaitMs?: number
}

/** Waits `ms`, or less when `signal` aborts. */
export function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve()
    const done = (): void => {
      clearTimeout(timer)
      signal.removeEventListener('abort', done)
      resolve()
    }
    const timer = setTimeout(done, ms)
    signal.addEventListener('abort', done, { once: true })
  })
}
