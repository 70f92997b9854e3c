/**
 * What the framework integrations (`toolwire/ai-sdk`, `toolwire/openai-agents`,
 * `toolwire/langchain`) share: the model-visible text of an application view, its media
 * parts made safe for untrusted results, and the confirmations a framework's approval
 * step holds for a tool call.
 *
 * Only toolwire's public API is used here; no framework is imported.
 */
import type { ToolManager } from '../runtime/manager.js'
import type { ToolManifestEntry } from '../runtime/tool.js'
import type { ContentPart, FieldChange } from '../core/types.js'
import { modelTextOf, type CallResult } from '../core/view.js'
import { wrapUntrusted } from '../render/model.js'
import { partBytes } from '../core/attach.js'

/** A tool toolwire lists, as an integration wraps it. */
export type ListedTool = ToolManifestEntry

/** The tools of `tm` an integration wraps: all of them, or those named in `only`. */
export function listedTools(tm: ToolManager, only: readonly string[] | undefined): readonly ListedTool[] {
  const all = tm.manifest()
  if (only === undefined) return all
  const wanted = new Set(only)
  for (const name of wanted) {
    if (!all.some((t) => t.name === name)) throw new Error(`toolwire: no tool named ${JSON.stringify(name).slice(0, 100)} is registered`)
  }
  return all.filter((t) => wanted.has(t.name))
}

/** Whether the view is a call runtime policy skipped (a refusal view with code `skipped`). */
export function isSkipped(view: CallResult<unknown>): boolean {
  return view.status === 'refused' && view.code === 'skipped' && view.disposition !== 'refused'
}

/** A short description of a part, for a note inside the text: `image "page.png" (image/png, 70 bytes)`. */
function describePart(part: ContentPart): string {
  const name = part.name === undefined ? '' : ` ${JSON.stringify(part.name)}`
  const bytes = partBytes(part)
  return `${part.type}${name} (${part.mimeType}, ${bytes === undefined ? `at ${part.url}` : `${bytes} bytes`})`
}

/**
 * The text a framework shows the model for `view`: toolwire's model text, then `notes`
 * (one line each), all inside the untrusted-content delimiter when the result is untrusted,
 * so nothing a tool chose follows the closing tag.
 */
export function modelText(view: CallResult<unknown>, notes: readonly string[] = []): string {
  const text = notes.length > 0 ? `${modelTextOf(view)}\n${notes.join('\n')}` : modelTextOf(view)
  return view.untrusted === true ? wrapUntrusted(text) : text
}

/**
 * The view's parts rendered for a framework by `render` (`undefined`: the framework cannot
 * carry that part), and the notes for the text: one for each part not carried, and, for an
 * untrusted result, one naming each named part (rendered without its tool-chosen name).
 */
export function renderParts<T>(
  view: CallResult<unknown>,
  framework: string,
  render: (part: ContentPart) => T | undefined,
): { readonly carried: T[]; readonly notes: string[] } {
  const carried: T[] = []
  const notes: string[] = []
  for (const part of view.parts ?? []) {
    const named = view.untrusted === true && part.name !== undefined
    const rendered = render(named ? unnamed(part) : part)
    if (rendered === undefined) notes.push(`[Attachment not shown: ${describePart(part)}; ${framework} cannot carry it here.]`)
    else {
      carried.push(rendered)
      if (named) notes.push(`[Attachment: ${describePart(part)}.]`)
    }
  }
  return { carried, notes }
}

function unnamed(part: ContentPart): ContentPart {
  const { name: _name, ...rest } = part
  return rest
}

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

/** The most calls held per manager (the oldest go first; toolwire's own confirmation expires them anyway). */
const HELD_LIMIT = 10_000

interface Held {
  /** Calls waiting for the framework's approval, by call id. */
  readonly approvals: Map<string, PendingApproval>
  /** Calls that ran while the framework asked whether they need approval, by call id: their result waits for the framework's execute. */
  readonly settled: Map<string, CallResult>
}

const HELD = new WeakMap<ToolManager, Held>()

function heldOf(tm: ToolManager): Held {
  let held = HELD.get(tm)
  if (held === undefined) {
    held = { approvals: new Map(), settled: new Map() }
    HELD.set(tm, held)
  }
  return held
}

function bounded<V>(map: Map<string, V>, key: string, value: V): void {
  map.set(key, value)
  if (map.size > HELD_LIMIT) map.delete(map.keys().next().value as string)
}

/**
 * The confirmation toolwire holds for the framework's tool call `callId` (the summary and
 * changes to show the user before approving), or `undefined`.
 *
 * @example
 * const request = result.content.find((p) => p.type === 'tool-approval-request')
 * pendingApproval(tm, request.toolCall.toolCallId)?.summary // 'Run delete_file with {"path":"a.txt"}'
 */
export function pendingApproval(tm: ToolManager, callId: string): PendingApproval | undefined {
  return HELD.get(tm)?.approvals.get(callId)
}

/**
 * The framework asks whether call `callId` needs approval. For a tool without
 * `needsConfirmation`, no. Otherwise toolwire decides, by making the call: a
 * `needs_confirmation` result is held (yes); any other result (the tool's rule said no, or
 * the input is invalid, or permission refused it) is kept for `runCall`, so the tool runs
 * once (no).
 */
export async function approvalNeeded(tm: ToolManager, tool: ListedTool, input: unknown, callId: string): Promise<boolean> {
  if (tool.needsConfirmation !== true) return false
  const held = heldOf(tm)
  if (held.approvals.has(callId)) return true
  if (held.settled.has(callId)) return false
  const view = await tm.call(tool.name, input, { callId })
  if (view.status === 'needs_confirmation') {
    bounded(held.approvals, callId, {
      callId,
      toolName: tool.name,
      confirmId: view.confirmId,
      summary: view.summary,
      ...(view.changes === undefined ? {} : { changes: view.changes }),
    })
    return true
  }
  bounded(held.settled, callId, view)
  return false
}

/**
 * Runs call `callId` for the framework: the result kept by `approvalNeeded`, or the held
 * confirmation approved (the framework approved it; the framework's signal cancels the
 * approved run), or a plain `tm.call` (`args` JSON text, or `input`).
 */
export function runCall(
  tm: ToolManager,
  tool: ListedTool,
  call: { readonly input?: unknown; readonly args?: string },
  callId: string,
  signal: AbortSignal | undefined,
): Promise<CallResult> {
  const held = HELD.get(tm)
  if (held !== undefined) {
    const settled = held.settled.get(callId)
    if (settled !== undefined) {
      held.settled.delete(callId)
      return Promise.resolve(settled)
    }
    const approval = held.approvals.get(callId)
    if (approval !== undefined) {
      held.approvals.delete(callId)
      return confirmed(tm, approval, signal)
    }
  }
  const options = signal === undefined ? { callId } : { callId, signal }
  return call.args !== undefined ? tm.callJson(tool.name, call.args, options) : tm.call(tool.name, call.input, options)
}

/** Approves a held confirmation; the framework's signal cancels the approved run (it keeps the call id). */
async function confirmed(tm: ToolManager, approval: PendingApproval, signal: AbortSignal | undefined): Promise<CallResult> {
  if (signal === undefined) return tm.confirm(approval.confirmId, { approve: true })
  const running = tm.confirm(approval.confirmId, { approve: true })
  const cancel = (): void => {
    tm.cancel(approval.callId)
  }
  if (signal.aborted) cancel()
  else signal.addEventListener('abort', cancel, { once: true })
  try {
    return await running
  } finally {
    signal.removeEventListener('abort', cancel)
  }
}

/**
 * Answers with a denial the confirmation toolwire holds for call `callId`, after the user
 * denied it in the framework (the framework tells the model itself and never calls the tool
 * again): the `confirmation` event and evidence record the denial now, not when the
 * confirmation expires. `undefined` when no confirmation is held for `callId`.
 */
export function denyApproval(tm: ToolManager, callId: string): Promise<CallResult> | undefined {
  const held = HELD.get(tm)
  const approval = held?.approvals.get(callId)
  if (held === undefined || approval === undefined) return undefined
  held.approvals.delete(callId)
  return tm.confirm(approval.confirmId, { approve: false })
}

/** A fresh call id for a framework call that has none. */
let seq = 0
export function freshCallId(prefix: string): string {
  return `${prefix}-${Date.now().toString(36)}-${++seq}`
}
