/**
 * The calls a framework's approval step holds (AI SDK, OpenAI Agents): a confirmation waiting
 * for the framework's approval, a result made while the framework asked whether approval is
 * needed, and the results of approvals already answered (a replayed approval answers its
 * recorded result, never a second run).
 *
 * A held call is matched by its call id, its tool and its input, never by the call id alone:
 * a provider that repeats an id within a turn (`[lookup(call_0), transfer(call_0)]`) gets each
 * call's own result.
 */
import { createHash } from 'node:crypto'
import type { ToolManager } from '../runtime/manager.js'
import type { FieldChange } from '../core/types.js'
import { viewOf, type CallResult } from '../core/view.js'
import { refusalError, ToolResult } from '../core/result.js'
import type { ListedTool } from './shared.js'
import { cancelledResult } from '../runtime/normalize.js'

/** What a framework's approval step shows for a call toolwire holds for confirmation. */
export interface PendingApproval {
  /** The framework's tool call id (toolwire's call id). */
  readonly callId: string
  readonly toolName: string
  /** toolwire's `confirmId`; the integration answers it when the framework approves. */
  readonly confirmId: string
  /** The confirmation's summary, sensitive fields redacted. */
  readonly summary: string
  /** The changes the call would make, when the tool previews them (sensitive values redacted). */
  readonly changes?: readonly FieldChange[]
}

/** Which of several held calls sharing one call id is meant: the framework's tool name and input. */
export interface HeldCallMatch {
  readonly toolName: string
  readonly input: unknown
}

/** The most call ids (and answered approvals) held per manager (the oldest go first; toolwire's own confirmation expires them anyway). */
const HELD_LIMIT = 10_000

interface Entry<V> {
  /** The tool and a hash of the input, as `matchOf` gives them. */
  readonly match: string
  readonly value: V
}

interface Held {
  /** Calls waiting for the framework's approval, by call id. */
  readonly approvals: Map<string, Entry<PendingApproval>[]>
  /** Calls that ran while the framework asked whether they need approval, by call id: their result waits for the framework's execute. */
  readonly settled: Map<string, Entry<CallResult>[]>
  /**
   * The results of approvals answered, by the framework's approval id and the call id
   * (`approvalKey`), with the call's tool and input: a replay of that approval for that call
   * answers it again; the same approval id sent for another call, or another tool or input,
   * does not.
   */
  readonly answered: Map<string, Entry<CallResult>>
}

const HELD = new WeakMap<ToolManager, Held>()

function heldOf(tm: ToolManager): Held {
  let held = HELD.get(tm)
  if (held === undefined) {
    held = { approvals: new Map(), settled: new Map(), answered: new Map() }
    HELD.set(tm, held)
  }
  return held
}

function bounded<V>(map: Map<string, V>, key: string, value: V): void {
  map.delete(key)
  map.set(key, value)
  if (map.size > HELD_LIMIT) map.delete(map.keys().next().value as string)
}

/** The tool and a hash of the input's JSON text (`args`, as the framework sent it, is parsed first). */
function matchOf(toolName: string, call: { readonly input?: unknown; readonly args?: string }): string {
  let input = call.input
  if (call.args !== undefined) {
    try {
      input = JSON.parse(call.args)
    } catch {
      input = call.args
    }
  }
  let text: string
  try {
    text = JSON.stringify(input) ?? 'undefined'
  } catch {
    text = '' // an input JSON cannot write (a cycle, a BigInt): matched by the tool alone
  }
  return `${toolName}\u0000${createHash('sha256').update(text).digest('base64url')}`
}

function add<V>(map: Map<string, Entry<V>[]>, callId: string, entry: Entry<V>): void {
  bounded(map, callId, [...(map.get(callId) ?? []), entry])
}

/** Takes out the first entry of `callId` with `match` (any entry when `match` is undefined). */
function take<V>(map: Map<string, Entry<V>[]>, callId: string, match: string | undefined): V | undefined {
  const list = map.get(callId)
  const i = list?.findIndex((e) => match === undefined || e.match === match) ?? -1
  if (list === undefined || i < 0) return undefined
  const [entry] = list.splice(i, 1)
  if (list.length === 0) map.delete(callId)
  return entry!.value
}

function find<V>(map: Map<string, Entry<V>[]> | undefined, callId: string, match: string | undefined): V | undefined {
  return map?.get(callId)?.find((e) => match === undefined || e.match === match)?.value
}

/**
 * The confirmation toolwire holds for the framework's tool call `callId` (the summary and
 * changes to show the user before approving), or `undefined`. When a provider gave one id to
 * several calls, `call` (the tool call's `toolName` and `input`) picks the one meant; without
 * it, the first held.
 *
 * @example
 * const request = result.content.find((p) => p.type === 'tool-approval-request')
 * pendingApproval(tm, request.toolCall.toolCallId)?.summary // 'Run delete_file with {"path":"a.txt"}'
 */
export function pendingApproval(tm: ToolManager, callId: string, call?: HeldCallMatch): PendingApproval | undefined {
  return find(HELD.get(tm)?.approvals, callId, call === undefined ? undefined : matchOf(call.toolName, { input: call.input }))
}

/**
 * Answers with a denial the confirmation toolwire holds for call `callId` (and `call`, as for
 * `pendingApproval`), after the user denied it in the framework (the framework tells the model
 * itself and never calls the tool again): the `confirmation` event and evidence record the
 * denial now, not when the confirmation expires. `undefined` when no confirmation is held.
 */
export function denyApproval(tm: ToolManager, callId: string, call?: HeldCallMatch): Promise<CallResult> | undefined {
  const held = HELD.get(tm)
  if (held === undefined) return undefined
  const approval = take(held.approvals, callId, call === undefined ? undefined : matchOf(call.toolName, { input: call.input }))
  return approval === undefined ? undefined : tm.confirm(approval.confirmId, { approve: false })
}

/**
 * The framework asks whether call `callId` needs approval. For a tool without
 * `needsConfirmation`, no. When the framework is processing an approval (`approvalId`, its id
 * of the approval answered), yes: `runCall` runs the approved call, or answers the result
 * recorded for that approval. Otherwise toolwire decides, by making the call: a
 * `needs_confirmation` result is held (yes); any other result (the tool's rule said no, or the
 * input is invalid, or permission refused it) is kept for `runCall`, so the tool runs once (no).
 */
export async function approvalNeeded(tm: ToolManager, tool: ListedTool, input: unknown, callId: string, approvalId?: string): Promise<boolean> {
  if (tool.needsConfirmation !== true) return false
  if (approvalId !== undefined) return true
  const held = heldOf(tm)
  const match = matchOf(tool.name, { input })
  if (find(held.approvals, callId, match) !== undefined) return true
  if (find(held.settled, callId, match) !== undefined) return false
  const view = await tm.call(tool.name, input, { callId })
  if (view.status === 'needs_confirmation') {
    add(held.approvals, callId, { match, value: pendingOf(callId, tool.name, view) })
    return true
  }
  add(held.settled, callId, { match, value: view })
  return false
}

function pendingOf(callId: string, toolName: string, view: CallResult & { readonly status: 'needs_confirmation' }): PendingApproval {
  return {
    callId,
    toolName,
    confirmId: view.confirmId,
    summary: view.summary,
    ...(view.changes === undefined ? {} : { changes: view.changes }),
  }
}

/**
 * The ledger key of the run of the framework's approval `approvalId` of call `callId`: a hash,
 * so a long or odd id from the client's messages stays a valid key. The ledger scopes it by
 * tool and compares the input, so the same approval id sent for another call is refused
 * (`idempotency_mismatch`), never answered with another call's result.
 */
function approvalKey(approvalId: string, callId: string): string {
  return `ai-sdk-approval:${createHash('sha256').update(JSON.stringify([approvalId, callId])).digest('base64url')}`
}

/**
 * Runs call `callId` for the framework: the result kept by `approvalNeeded`, or a plain
 * `tm.call` (`args` JSON text, or `input`); for an approval the framework answered
 * (`approvalId`), the approved run, once: the result recorded for that approval when it was
 * answered before (in this process; with a store, on any manager on the store, its ledger
 * keyed by the approval), else the held confirmation approved (or, when none is held here, a
 * fresh one), the framework's signal cancelling the approved run.
 */
export async function runCall(
  tm: ToolManager,
  tool: ListedTool,
  call: { readonly input?: unknown; readonly args?: string },
  callId: string,
  signal: AbortSignal | undefined,
  approvalId?: string,
): Promise<CallResult> {
  const held = HELD.get(tm)
  const match = matchOf(tool.name, call)
  if (approvalId !== undefined && tool.needsConfirmation === true) {
    const h = heldOf(tm)
    const key = approvalKey(approvalId, callId)
    const answered = h.answered.get(key)
    if (answered !== undefined && answered.match === match) return answered.value
    // aborted before the approved run started: it does not start, and the approval stays
    // unanswered (sent again, it runs then)
    if (signal?.aborted === true) return viewOf(cancelledResult('signal'), callId)
    const view = await approvedRun(tm, tool, call, callId, signal, take(h.approvals, callId, match), key)
    bounded(h.answered, key, { match, value: view })
    return view
  }
  if (held !== undefined) {
    const settled = take(held.settled, callId, match)
    if (settled !== undefined) return settled
    const approval = take(held.approvals, callId, match)
    if (approval !== undefined) return confirmed(tm, approval, signal, undefined)
  }
  return plainCall(tm, tool, call, callId, signal, undefined)
}

function plainCall(
  tm: ToolManager,
  tool: ListedTool,
  call: { readonly input?: unknown; readonly args?: string },
  callId: string,
  signal: AbortSignal | undefined,
  idempotencyKey: string | undefined,
): Promise<CallResult> {
  const options = { callId, ...(signal === undefined ? {} : { signal }), ...(idempotencyKey === undefined ? {} : { idempotencyKey }) }
  return call.args !== undefined ? tm.callJson(tool.name, call.args, options) : tm.call(tool.name, call.input, options)
}

/**
 * The run of an approved call: its held confirmation approved, or, when this process holds
 * none (the approval reached another process, or came after a restart), a fresh call whose
 * confirmation is approved. With a store the run is recorded under `key`, so a replay of the
 * approval on any manager on the store answers the recorded result (`replayed: true`).
 */
async function approvedRun(
  tm: ToolManager,
  tool: ListedTool,
  call: { readonly input?: unknown; readonly args?: string },
  callId: string,
  signal: AbortSignal | undefined,
  approval: PendingApproval | undefined,
  key: string,
): Promise<CallResult> {
  const keyed = tm.durableStore ? key : undefined
  if (approval !== undefined) return confirmed(tm, approval, signal, keyed)
  const view = await plainCall(tm, tool, call, callId, undefined, keyed)
  // a call the tool's rule lets through ran (or was replayed) already
  if (view.status !== 'needs_confirmation') return view
  // the key went with the parked call: approving it records (or replays) the run under it
  return confirmed(tm, pendingOf(callId, tool.name, view), signal, undefined)
}

/**
 * Approves a held confirmation (recorded under `key` in the store's ledger, when given); the
 * framework's signal cancels the approved run (it keeps the call id).
 */
async function confirmed(tm: ToolManager, approval: PendingApproval, signal: AbortSignal | undefined, key: string | undefined): Promise<CallResult> {
  // aborted before the approved run started: it does not start
  if (signal?.aborted === true) return viewOf(cancelledResult('signal'), approval.callId)
  const running = key === undefined ? tm.confirm(approval.confirmId, { approve: true }) : tm.approveKeyed(approval.confirmId, key)
  if (signal === undefined) return running
  const cancel = (): void => {
    tm.cancelBySignal(approval.callId)
  }
  signal.addEventListener('abort', cancel, { once: true })
  try {
    return await running
  } finally {
    signal.removeEventListener('abort', cancel)
  }
}

/**
 * The refusal of an approval the framework cannot tie to one call: the history holds several
 * tool calls with id `callId`, so which one the user approved is unknown; none is run.
 */
export function ambiguousApproval(callId: string): CallResult {
  // the id is the provider's: it is not echoed into the model's text
  const message = 'Several tool calls share this call\'s id, so the approval cannot be tied to one of them; none was run. Call the tool again.'
  return viewOf(ToolResult.failed(refusalError('duplicate_call_id', message)), callId)
}
