/**
 * What a parked call asks of a task: the input request it waits on (an approval form or an
 * input form), whether an answer fits it and what the answer decides, and the change a
 * continued call's outcome makes to its task.
 */
import type { CallResult } from '../core/view.js'
import type { JsonValue } from '../core/types.js'
import { toMcp } from '../render/mcp.js'
import type { ToolManager } from '../runtime/manager.js'
import type { JsonObject, TaskPatch, TaskRow } from '../runtime/store/tasks.js'
import { MCP_CALL_ID_META_KEY } from './meta.js'
import { record, type WireTask } from './task-wire.js'

/** A tool's `longRunning` rule (`ToolDefinition.longRunning`). */
export type LongRunning = true | { readonly afterMs: number }

/** The `longRunning` rule of the tool `name`, if it is registered with one. */
export function longRunningOf(tm: Pick<ToolManager, 'list'>, name: string): LongRunning | undefined {
  return tm.list().find((def) => def.name === name)?.longRunning
}

/** A call parked for an answer. */
export type Parked = Extract<CallResult, { status: 'needs_confirmation' }> | Extract<CallResult, { status: 'pending' }>

/** What a parked call waits on, as an input request, and how an answer to it is applied. */
export interface Wait {
  /** The parked call's id (confirmation id or request id). */
  readonly parkedId: string
  /** The key prefix: `confirm` for a confirmation (answered by `tm.confirm`), `input` for a suspension (`tm.resume`). */
  readonly prefix: 'confirm' | 'input'
  readonly request: JsonObject
  readonly message: string
}

const APPROVE_SCHEMA = (summary: string): JsonObject => ({
  type: 'object',
  properties: { approve: { type: 'boolean', title: 'Approve', description: summary, default: false } },
  required: ['approve'],
})

/**
 * The input request of a parked call, or `undefined` when it is not one a task can ask for (an
 * authorization by URL; a confirmation, when confirmations are answered only at the approval page).
 */
export function waitOf(view: CallResult, atPage = false): Wait | undefined {
  if (atPage && (view.status === 'needs_confirmation' || (view.status === 'pending' && view.request.kind === 'confirmation'))) return undefined
  if (view.status === 'needs_confirmation') {
    const params = { mode: 'form', message: `Confirm: ${view.summary}`, requestedSchema: APPROVE_SCHEMA(view.summary) }
    return { parkedId: view.confirmId, prefix: 'confirm', request: { method: 'elicitation/create', params }, message: `Waiting for approval: ${view.summary}` }
  }
  if (view.status !== 'pending') return undefined
  const { request } = view
  const prompt = request.prompt ?? request.summary ?? 'An answer is needed to continue'
  if (request.kind === 'confirmation') {
    const params = { mode: 'form', message: `Confirm: ${prompt}`, requestedSchema: APPROVE_SCHEMA(prompt) }
    return { parkedId: request.id, prefix: 'input', request: { method: 'elicitation/create', params }, message: `Waiting for approval: ${prompt}` }
  }
  if (request.kind === 'input') {
    const requestedSchema = { type: 'object', properties: { answer: { type: 'string', title: 'Answer', description: prompt } }, required: ['answer'] }
    return { parkedId: request.id, prefix: 'input', request: { method: 'elicitation/create', params: { mode: 'form', message: prompt, requestedSchema } }, message: `Waiting for input: ${prompt}` }
  }
  return undefined
}

/** Whether a call's view makes a task for a client that declared the extension: it parked for an answer a task can ask for. */
export function becomesTask(view: CallResult): view is Parked {
  return waitOf(view) !== undefined
}

/** The keys of `row`'s input requests not answered yet. */
export function outstanding(row: TaskRow): JsonObject | undefined {
  if (row.inputRequests === null) return undefined
  const out: Record<string, JsonValue> = {}
  for (const [key, value] of Object.entries(row.inputRequests)) if (!Object.hasOwn(row.responses, key)) out[key] = value
  return out
}

/** The wire fields of a task. */
export function wireTask(taskId: string, row: TaskRow): WireTask {
  return {
    taskId,
    status: row.status,
    ...(row.statusMessage === null ? {} : { statusMessage: row.statusMessage }),
    createdAt: new Date(row.createdAt).toISOString(),
    lastUpdatedAt: new Date(row.updatedAt).toISOString(),
    ttlMs: row.ttlMs,
    pollIntervalMs: row.pollIntervalMs,
  }
}

/** The `CallToolResult` of a finished call, as a completed task carries it (`resultType: "complete"` kept: the 2026 schema requires it). */
export function callToolResultOf(view: CallResult, callId: string): JsonObject {
  const rendered = toMcp(view) as unknown as Record<string, JsonValue>
  const meta = record(rendered._meta) as JsonObject | undefined
  return { resultType: 'complete', ...rendered, _meta: { ...(meta ?? {}), [MCP_CALL_ID_META_KEY]: callId } }
}

/**
 * What an answer to an input request decides: go on (with the answer a suspension's `resume`
 * gets: `true` for an approval form, the text for an input form), or decline.
 */
export function decisionOf(request: JsonValue | undefined, response: JsonValue): { readonly go: boolean; readonly answer: JsonValue } {
  const r = record(response)
  const content = record(r?.content)
  if (r?.action !== 'accept' || content === undefined) return { go: false, answer: null }
  if (asksApproval(request)) return { go: content.approve === true, answer: true }
  return typeof content.answer === 'string' ? { go: true, answer: content.answer } : { go: false, answer: null }
}

/** Whether an input request is an approval form (its schema has an `approve` field), not an input form. */
export function asksApproval(request: JsonValue | undefined): boolean {
  const props = record(record(record(record(request)?.params)?.requestedSchema)?.properties)
  return props !== undefined && Object.hasOwn(props, 'approve')
}

/** Whether `response` answers `request`: a decline or cancel, or an accept whose content is what the form asks (a boolean `approve`, a string `answer`). */
export function answersRequest(request: JsonValue | undefined, response: JsonValue): boolean {
  const r = record(response)
  if (r?.action === 'decline' || r?.action === 'cancel') return true
  const content = record(r?.content)
  if (r?.action !== 'accept' || content === undefined) return false
  if (asksApproval(request)) return typeof content.approve === 'boolean'
  return typeof content.answer === 'string'
}

/** A declined task's result. */
export const DECLINED_RESULT = (callId: string): JsonObject => ({
  resultType: 'complete',
  content: [{ type: 'text', text: 'The user declined this request; the call did not continue.' }],
  isError: true,
  _meta: { [MCP_CALL_ID_META_KEY]: callId },
})

/** The change a continued call's outcome makes to its task. */
export function nextState(row: TaskRow, view: CallResult | undefined, callId: string, atPage: boolean): TaskPatch {
  if (view === undefined) return { status: 'completed', result: DECLINED_RESULT(callId), statusMessage: 'Declined', leaseMs: null }
  if (view.status === 'cancelled') return { status: 'cancelled', statusMessage: 'Cancelled', leaseMs: null }
  const wait = waitOf(view, atPage)
  if (wait !== undefined) {
    const key = `${wait.prefix}-${Object.keys(row.inputRequests ?? {}).length + 1}`
    return { status: 'input_required', statusMessage: wait.message, parkedId: wait.parkedId, inputRequests: { ...(row.inputRequests ?? {}), [key]: wait.request }, leaseMs: null }
  }
  return { status: 'completed', result: callToolResultOf(view, callId), leaseMs: null }
}
