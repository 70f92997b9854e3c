/**
 * How one imported tool calls its remote tool: the first round (`run`), the retries that answer
 * a remote `input_required` (`resume`), and a remote task followed by `tasks/get` (bounded poll)
 * and answered by `tasks/update`.
 */
import type { CallToolResult } from '@modelcontextprotocol/server'
import type { ToolContext } from '../../runtime/tool.js'
import { keepForResume, resumeStateOf } from '../../runtime/resume-state.js'
import type { ToolResult } from '../../core/result.js'
import { REFUSALS } from '../../core/texts.js'
import { errorResult, pending, refuse, type HelperResult, type ModelResult } from '../../core/helpers.js'
import type { JsonValue } from '../../core/types.js'
import { fromMcp, remoteConfirmation } from './from-mcp.js'
import { callRemote, remoteFailure, type McpToolClient, type RemoteCallOptions, type RemoteCallParams } from './remote-client.js'
import { REMOTE_INPUT_MAX_ROUNDS, remoteAsk, remoteInputStateOf, remoteReply, type RemoteAsk, type RemoteInputState } from './remote-input.js'
import { canRequest, carriesTaskHandle, getTask, MIN_TASK_POLL_MS, pause, taskHandleOf, updateTask, type RemoteTask, type TaskPollOptions } from './remote-task.js'

/** What a round answers locally. */
type Local = ToolResult | ModelResult | HelperResult

/** The answer to a local `tm.confirm` of a confirmation a toolwire 2025 server holds: it is decided there. */
const DECIDED_REMOTELY = 'This confirmation is decided on the MCP server (its approval page or its own confirmation); it cannot be answered here.'

/** How one imported tool calls its remote tool. */
export class RemoteTool {
  constructor(
    private readonly client: McpToolClient,
    private readonly name: string,
    private readonly untrusted: boolean,
    private readonly requestTimeoutMs: number | undefined,
    private readonly taskPoll: TaskPollOptions,
  ) {}

  private options(ctx: ToolContext): RemoteCallOptions {
    return {
      signal: ctx.signal,
      onprogress: (p) => ctx.reportProgress(p.progress, p.total, p.message),
      ...(this.requestTimeoutMs === undefined ? {} : { timeout: this.requestTimeoutMs }),
    }
  }

  /** Sends `tools/call` with `extra` (a retry's `inputResponses` and `requestState`), the call's trace context in `_meta`. */
  private send(input: Record<string, unknown>, ctx: ToolContext, extra: Pick<RemoteCallParams, 'inputResponses' | 'requestState'>): Promise<unknown> {
    // trace context (issue #22 Deliver 4): the call's span context travels in _meta (traceparent, tracestate, baggage)
    const traceMeta = ctx.traceContext === undefined ? {} : { _meta: { ...ctx.traceContext } }
    return callRemote(this.client, { name: this.name, arguments: input, ...extra, ...traceMeta }, this.options(ctx))
  }

  /** The first round: the call as the model made it. */
  async run(input: Record<string, unknown>, ctx: ToolContext): Promise<Local> {
    let result: unknown
    try {
      result = await this.send(input, ctx, {})
    } catch (err) {
      return remoteFailure(err)
    }
    return this.settle(result, 1, ctx)
  }

  /**
   * A later round: `tm.confirm(id, { approve })` or `tm.resume(id, answer)` retries the original
   * call with the answer under the asked key and the remote's `requestState` echoed (or, asked
   * by a task, sends it with `tasks/update`). A decline is sent too (the remote records it), and
   * the call ends refused `confirmation_denied`. A working task is asked again (`tasks/get`).
   */
  async resume(answer: unknown, input: Record<string, unknown>, ctx: ToolContext): Promise<Local> {
    const state = remoteInputStateOf(resumeStateOf(ctx))
    if (state === undefined) return refuse('confirmation_remote', DECIDED_REMOTELY)
    if (state.ask === 'task' && state.taskId !== undefined) return this.followTask({ taskId: state.taskId, status: 'working' }, state.round, ctx, true)
    const reply = remoteReply(state, answer)
    if (!reply.ok) return errorResult(`The answer could not be sent to the MCP server: ${reply.problem}.`)
    const responses = { [state.key]: reply.response as unknown as JsonValue }
    try {
      if (state.taskId !== undefined) {
        await updateTask(this.requester(), state.taskId, responses, this.options(ctx))
        if (reply.declined) return declined(state)
        return await this.followTask({ taskId: state.taskId, status: 'working' }, state.round + 1, ctx, true)
      }
      const result = await this.send(input, ctx, { inputResponses: responses, ...(state.requestState === undefined ? {} : { requestState: state.requestState }) })
      return reply.declined ? declined(state) : await this.settle(result, state.round + 1, ctx)
    } catch (err) {
      return reply.declined ? declined(state) : remoteFailure(err)
    }
  }

  /** A remote answer as this call's result: an `input_required` or a task becomes a local suspension (parked with its state). */
  private async settle(result: unknown, round: number, ctx: ToolContext): Promise<Local> {
    const r = result as { resultType?: unknown; inputRequests?: unknown; requestState?: unknown }
    if (typeof r === 'object' && r !== null && r.resultType === 'input_required') return this.ask(remoteAsk(r, round), ctx)
    const task = taskHandleOf(result)
    if (task !== undefined) return this.followTask(task, round, ctx, false)
    if (carriesTaskHandle(result)) return errorResult('The MCP server answered with a malformed task handle (no task id, or an unknown status).')
    if (typeof result !== 'object' || result === null) return errorResult('The MCP server answered without a result.')
    const complete = result as CallToolResult
    return remoteConfirmation(complete) ?? fromMcp(complete, { untrusted: this.untrusted })
  }

  /** What the remote asks as a local confirmation or input request; `taskId` when a task asks it. */
  private ask(ask: RemoteAsk, ctx: ToolContext, taskId?: string): Local {
    if (ask.kind === 'unsupported') return errorResult(`The MCP server asked for input importMcpTools cannot give (${ask.what}).`)
    if (ask.state.round > REMOTE_INPUT_MAX_ROUNDS) return errorResult(`The MCP server asked for input more than ${REMOTE_INPUT_MAX_ROUNDS} times in one call.`)
    let asked: ModelResult
    try {
      if (ask.kind === 'input') asked = pending({ kind: 'input', prompt: ask.prompt, schema: ask.schema })
      else asked = pending(ask.url === undefined ? { kind: 'confirmation', summary: ask.summary } : { kind: 'confirmation', summary: ask.summary, url: ask.url })
    } catch (err) {
      // a request pending() refuses: a schema over its limits (64 KiB, 32 levels), a summary or URL it cannot carry
      const why = err instanceof TypeError ? err.message.replace(/^toolwire: /, '') : 'not a request toolwire can carry'
      return errorResult(`The MCP server asked for input importMcpTools cannot carry (${shortText(why)}).`)
    }
    keepForResume(ctx, (taskId === undefined ? ask.state : { ...ask.state, taskId }) as unknown as JsonValue)
    return asked
  }

  private requester(): Parameters<typeof getTask>[0] {
    if (!canRequest(this.client)) throw new TypeError('toolwire: following a remote task needs the SDK v2 client')
    return this.client
  }

  /**
   * Follows a remote task: `tasks/get` (at once when `fetch`, or when the handle carries no input
   * requests it asks for), then every `intervalMs` while it works, for at most `maxWaitMs`. A
   * completed task answers its result, a failed one an error, a cancelled one refused
   * `task_cancelled`; one asking for input asks it locally; one still working answers `pending`
   * (kind `input`, no schema) that `tm.resume(id, {})` asks about again.
   */
  private async followTask(handle: RemoteTask, round: number, ctx: ToolContext, fetch: boolean): Promise<Local> {
    let task = handle
    try {
      const requester = this.requester()
      const options = this.options(ctx)
      if (fetch || (task.status === 'input_required' && task.inputRequests === undefined)) task = await getTask(requester, task.taskId, options)
      const maxWaitMs = this.taskPoll.maxWaitMs ?? 0
      const started = Date.now()
      while (task.status === 'working' && Date.now() - started < maxWaitMs && !ctx.signal.aborted) {
        // a remote cannot make the client poll faster than MIN_TASK_POLL_MS
        const interval = Math.max(MIN_TASK_POLL_MS, this.taskPoll.intervalMs ?? task.pollIntervalMs ?? 1000)
        await pause(Math.max(1, Math.min(interval, maxWaitMs - (Date.now() - started))), ctx.signal)
        task = await getTask(requester, task.taskId, options)
      }
    } catch (err) {
      return remoteFailure(err)
    }
    switch (task.status) {
      case 'completed':
        if (typeof task.result !== 'object' || task.result === null) return errorResult('The remote task completed without a result.')
        return this.settle(task.result, round, ctx)
      case 'failed':
        return errorResult(`The remote task failed: ${shortText(task.error?.message ?? task.statusMessage ?? 'no message')}`)
      case 'cancelled':
        return refuse('task_cancelled', 'The remote task was cancelled.')
      case 'input_required':
        return this.ask(remoteAsk({ inputRequests: task.inputRequests }, round), ctx, task.taskId)
      case 'working':
        keepForResume(ctx, { v: 1, key: '', ask: 'task', round, taskId: task.taskId })
        return pending({ kind: 'input', prompt: `The remote task is still working${task.statusMessage === undefined ? '' : ` (${shortText(task.statusMessage)})`}: resume this request to ask again.` })
    }
  }
}

/** A remote text cut to its first line and 200 characters. */
function shortText(text: string): string {
  const line = String(text).split('\n', 1)[0]!.trim()
  return line.length > 200 ? `${line.slice(0, 200)}…` : line
}

/** The local result of a declined remote confirmation. */
function declined(state: RemoteInputState): HelperResult {
  const what = state.summary === undefined ? '' : `: ${state.summary}`
  return refuse(REFUSALS.confirmationDenied.code, `${REFUSALS.confirmationDenied.message}${what}`)
}
