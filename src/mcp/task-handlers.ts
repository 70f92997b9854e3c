/**
 * The tasks extension's glue to the v2 server (2026-07-28 only): the `tasks/get`,
 * `tasks/update` and `tasks/cancel` handlers over {@link McpTasks}, and the `tools/call` step
 * that answers a task handle instead of the call's result when the request declared the
 * extension. Protocol logic is tasks.ts; this maps it onto the SDK's `Server`.
 */
import { MissingRequiredClientCapabilityError, ProtocolError, type Server, type ServerContext, type StandardSchemaV1 } from '@modelcontextprotocol/server'
import type { CallResult } from '../core/view.js'
import { declaresTasks, longRunningOf, McpTasks, TaskRequestError, TASK_ERROR_CODES, TASKS_EXTENSION, type CreateTaskResult } from './tasks.js'
import { MCP_TASK_METHODS } from './protocol.js'
import type { ServableManager } from './meta.js'
import { identityOf, type PrincipalDefaults } from './principal-of.js'

/** A Standard Schema that passes any params (the handlers read them themselves). */
const anyParams: StandardSchemaV1 = { '~standard': { version: 1, vendor: 'toolwire', validate: (value) => ({ value }) } }

/** Whether this request declared the tasks extension in its envelope. */
export function requestDeclaresTasks(ctx: ServerContext): boolean {
  return declaresTasks(ctx.mcpReq.envelope)
}

/** A {@link TaskRequestError} as the SDK's wire error (other errors pass through). */
function protocolErrorOf(error: unknown): unknown {
  if (!(error instanceof TaskRequestError)) return error
  if (error.code === TASK_ERROR_CODES.missingCapability) return new MissingRequiredClientCapabilityError({ requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } })
  return new ProtocolError(error.code, error.message, error.data)
}

/** `tasks/update`'s params with its `inputResponses`, which the SDK lifts out of them into `ctx.mcpReq.inputResponses`. */
function withResponses(params: unknown, ctx: ServerContext): unknown {
  const given = typeof params === 'object' && params !== null ? (params as Record<string, unknown>) : {}
  return given.inputResponses !== undefined || ctx.mcpReq.inputResponses === undefined ? params : { ...given, inputResponses: ctx.mcpReq.inputResponses }
}

/**
 * Registers `tasks/get`, `tasks/update` and `tasks/cancel` on a modern `server`: `-32021` to a
 * request that did not declare the extension; without `tasks` (no store, or a store without
 * tasks) every task is "not found"; otherwise `tasks.get|update|cancel(params, owner, principal)`
 * for the request's identity (`identityOf`, per request: another principal's task is not found).
 */
export function registerTaskHandlers(server: Server, tasks: McpTasks | undefined, defaults: PrincipalDefaults): void {
  for (const method of MCP_TASK_METHODS) {
    server.setRequestHandler(method, { params: anyParams }, async (params, ctx) => {
      if (!requestDeclaresTasks(ctx)) throw new MissingRequiredClientCapabilityError({ requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } })
      const { taskOwner: owner, principal } = identityOf(ctx, defaults)
      if (tasks === undefined) throw new ProtocolError(TASK_ERROR_CODES.invalidParams, 'Failed to retrieve task: Task not found')
      try {
        const op =
          method === 'tasks/get'
            ? tasks.get(params, owner)
            : method === 'tasks/update'
              ? tasks.update(withResponses(params, ctx), owner, principal)
              : tasks.cancel(params, owner, principal)
        return (await op) as never
      } catch (error) {
        throw protocolErrorOf(error)
      }
    })
  }
}

/**
 * A `tools/call` whose request declared the extension: a tool with a `longRunning` rule runs
 * through `tasks.runLong` (a task handle, or the call's own view when it ended first); then a
 * call that parked becomes a task (`tasks.taskFor`). Answers the handle, or the view to render.
 */
export async function callAsTask(
  tasks: McpTasks,
  tm: ServableManager,
  call: { readonly tool: string; readonly callId: string; readonly owner: string },
  start: (detached: boolean) => Promise<CallResult>,
): Promise<{ readonly task: CreateTaskResult } | { readonly view: CallResult }> {
  const rule = longRunningOf(tm, call.tool)
  let view: CallResult
  if (rule !== undefined) {
    const ran = await taskWritten(() => tasks.runLong(call, rule, () => start(true)))
    if ('task' in ran) return ran
    view = ran.view
  } else {
    view = await start(false)
  }
  const task = await taskWritten(() => tasks.taskFor(view, call))
  return task === undefined ? { view } : { task }
}

/** What a client is told when its task could not be written: the call did not run (a parked one stays parked until it expires). */
export const TASK_NOT_WRITTEN_MESSAGE = 'Internal error: the task store is unavailable; the call did not run'

/**
 * A step that writes a task: its failure (the store's, whose message may name the database) is
 * the JSON-RPC error `-32603` {@link TASK_NOT_WRITTEN_MESSAGE}. `tm.call` never rejects, so a
 * rejection here is the task store's: `runLong` with `true` rejects before the call starts,
 * `taskFor` after the call parked.
 */
async function taskWritten<T>(step: () => Promise<T>): Promise<T> {
  try {
    return await step()
  } catch {
    throw new ProtocolError(TASK_ERROR_CODES.internal, TASK_NOT_WRITTEN_MESSAGE)
  }
}
