/**
 * `toolwire/ai-sdk`: a manager's tools as Vercel AI SDK 6 tools, for `generateText`,
 * `streamText` and `ToolLoopAgent`.
 *
 * ```ts
 * import { aiSdkTools } from 'toolwire/ai-sdk'
 * const result = await generateText({ model, tools: aiSdkTools(tm), prompt })
 * ```
 *
 * - `execute` runs `tm.call` with the SDK's `toolCallId` as the call id and its `abortSignal`.
 * - A success is the SDK's `tool-result` (its output the application view); every other
 *   status is thrown as a `ToolwireCallFailure`, so it is a `tool-error` in the step results and
 *   the model reads toolwire's model text as `error-text` (wrapped when untrusted).
 * - `toModelOutput` (`toAiSdkOutput`) gives `text`/`json`, or `content` with media parts for
 *   images, audio and files; for a stored view of a failure, `error-text` (`error-json` with the
 *   issues for `invalid`), and `execution-denied` for a refusal.
 * - A tool with `needsConfirmation` gets `needsApproval`: toolwire makes the call, holds its
 *   confirmation (`pendingApproval(tm, toolCallId)` gives the redacted summary and changes),
 *   and the SDK's approval runs it once; no `tm.confirm` by the application. The same approval
 *   sent again answers the recorded result; held calls are matched by id, tool and input.
 */
import { jsonSchema, type JSONSchema7, type ModelMessage, type Tool } from 'ai'
import type { ToolManager } from '../runtime/manager.js'
import type { CallResult } from '../core/view.js'
import type { ContentPart } from '../core/types.js'
import { ambiguousApproval } from './held.js'
import { listedTools, modelText, renderParts, type ListedTool } from './shared.js'
import { approvalNeeded, runCall } from './held.js'

export { denyApproval, pendingApproval } from './held.js'
export type { HeldCallMatch, PendingApproval } from './held.js'

/** What the model reads of a tool result (the SDK's `ToolResultOutput`). */
export type AiSdkToolOutput = Awaited<ReturnType<NonNullable<Tool['toModelOutput']>>>
type ContentItem = Extract<AiSdkToolOutput, { type: 'content' }>['value'][number]

/** Options of `aiSdkTools`. */
export interface AiSdkToolsOptions {
  /** Only these tools (default: every tool registered now). */
  readonly only?: readonly string[]
}

/**
 * The error `execute` throws for every status but `ok`: its `message` is the text the model
 * reads (toolwire's model text, wrapped when untrusted), `result` the application view.
 */
export class ToolwireCallFailure extends Error {
  override name = 'ToolwireCallFailure'
  constructor(readonly result: CallResult) {
    super(failureText(result))
  }
}

/**
 * An `onError` for the SDK's UI message streams (`toUIMessageStream`,
 * `toUIMessageStreamResponse`), which mask every tool error as `An error occurred.` by
 * default: a toolwire failure keeps the text the model read (public-safe, wrapped when
 * untrusted), so a chat history sent back by the client shows the model the same text again.
 * Any other error stays masked.
 *
 * @example
 * return streamText({ model, tools: aiSdkTools(tm), messages }).toUIMessageStreamResponse({ onError: toolErrorText })
 */
export function toolErrorText(error: unknown): string {
  return error instanceof ToolwireCallFailure ? error.message : 'An error occurred.'
}

/** The SDK cannot carry media in a tool error: they are named in the text instead. */
function failureText(view: CallResult): string {
  const { notes } = renderParts(view, 'an AI SDK tool error', () => undefined)
  return modelText(view, notes)
}

function mediaItem(part: ContentPart): ContentItem | undefined {
  if (part.data !== undefined) {
    if (part.type === 'image') return { type: 'image-data', data: part.data, mediaType: part.mimeType }
    return part.name === undefined
      ? { type: 'file-data', data: part.data, mediaType: part.mimeType }
      : { type: 'file-data', data: part.data, mediaType: part.mimeType, filename: part.name }
  }
  if (part.url !== undefined) {
    return part.type === 'image' ? { type: 'image-url', url: part.url } : { type: 'file-url', url: part.url, mediaType: part.mimeType }
  }
  return undefined
}

function isView(value: unknown): value is CallResult {
  return typeof value === 'object' && value !== null && typeof (value as { status?: unknown }).status === 'string'
}

/**
 * What the model reads of an application view, as the SDK's `ToolResultOutput`. A view that
 * was saved with the messages and loaded again (a JSON copy) gives the same output,
 * untrusted wrapping included.
 *
 * | view | output |
 * |---|---|
 * | `ok` with parts | `content`: the text, then `image-data` / `file-data` / `image-url` / `file-url` |
 * | `ok`, trusted JSON data | `json` |
 * | `ok`, other | `text` (wrapped when untrusted) |
 * | `refused` (a skipped call too) | `execution-denied` with the text as reason |
 * | `invalid` | `error-json`: `{ message, issues }` |
 * | `error`, `cancelled`, `needs_confirmation`, `pending` | `error-text` |
 */
export function toAiSdkOutput(view: CallResult<unknown>): AiSdkToolOutput {
  switch (view.status) {
    case 'ok': {
      const { carried, notes } = renderParts(view, 'the AI SDK', mediaItem)
      if (carried.length > 0) return { type: 'content', value: [{ type: 'text', text: modelText(view, notes) }, ...carried] }
      if (view.untrusted !== true && view.modelText === undefined && typeof view.data !== 'string' && notes.length === 0) {
        return { type: 'json', value: JSON.parse(JSON.stringify(view.data ?? null)) }
      }
      return { type: 'text', value: modelText(view, notes) }
    }
    case 'refused':
      return { type: 'execution-denied', reason: failureText(view) }
    case 'invalid':
      return {
        type: 'error-json',
        value: { message: failureText(view), issues: view.issues.map((i) => ({ path: i.path, message: i.message })) },
      }
    default:
      return { type: 'error-text', value: failureText(view) }
  }
}

/** A success, as a toolwire tool's `execute` returns it (every other status is thrown). */
export type AiSdkToolOutputView = Extract<CallResult, { readonly status: 'ok' }>

/** A toolwire tool as the AI SDK sees it: any input (toolwire validates it), the success view as output. */
export type AiSdkTool = Tool<unknown, AiSdkToolOutputView>

/** What `aiSdkTools` returns: a typed `ToolSet`, so `toolResults[].output` is the success view, not `any`. */
export type AiSdkToolSet = Record<string, AiSdkTool>

/**
 * The approval the SDK is processing for call `toolCallId`, when it is processing one: the
 * id of its approval request answered in the last (tool) message, and whether the assistant
 * message holding that request gives the id to several tool calls (then which one the user
 * approved is unknown: the SDK pairs an approval with the last call of that id).
 */
function approvalOf(messages: readonly ModelMessage[], toolCallId: string): { readonly approvalId: string; readonly ambiguous: boolean } | undefined {
  const last = messages.at(-1)
  if (last?.role !== 'tool') return undefined
  const answered = new Set(last.content.flatMap((p) => (p.type === 'tool-approval-response' ? [p.approvalId] : [])))
  if (answered.size === 0) return undefined
  for (const message of messages) {
    if (message.role !== 'assistant' || typeof message.content === 'string') continue
    const request = message.content.find((p) => p.type === 'tool-approval-request' && p.toolCallId === toolCallId && answered.has(p.approvalId))
    if (request?.type !== 'tool-approval-request') continue
    const calls = message.content.filter((p) => p.type === 'tool-call' && p.toolCallId === toolCallId).length
    return { approvalId: request.approvalId, ambiguous: calls > 1 }
  }
  return undefined
}

function aiSdkTool(tm: ToolManager, listed: ListedTool): AiSdkTool {
  return {
    ...(listed.description === undefined ? {} : { description: listed.description }),
    // toolwire validates the input (the SDK only parses the JSON): an invalid input reaches the model as `invalid`
    inputSchema: jsonSchema<unknown>(listed.inputSchema as JSONSchema7),
    ...(listed.needsConfirmation === true
      ? {
          needsApproval: (input: unknown, { toolCallId, messages }: { toolCallId: string; messages: ModelMessage[] }) => {
            const approval = approvalOf(messages, toolCallId)
            // an approval the SDK cannot tie to one call: execute answers it with a refusal, nothing runs
            if (approval?.ambiguous === true) return true
            return approvalNeeded(tm, listed, input, toolCallId, approval?.approvalId)
          },
        }
      : {}),
    execute: async (input: unknown, { toolCallId, abortSignal, messages }: { toolCallId: string; abortSignal?: AbortSignal; messages: ModelMessage[] }) => {
      const approval = listed.needsConfirmation === true ? approvalOf(messages, toolCallId) : undefined
      const view = approval?.ambiguous === true ? ambiguousApproval(toolCallId) : await runCall(tm, listed, { input }, toolCallId, abortSignal, approval?.approvalId)
      if (view.status !== 'ok') throw new ToolwireCallFailure(view)
      return view
    },
    toModelOutput: ({ output }: { output: unknown }) =>
      isView(output) ? toAiSdkOutput(output) : { type: 'text', value: typeof output === 'string' ? output : (JSON.stringify(output) ?? 'null') },
  }
}

/**
 * The manager's tools as an AI SDK tool set (by tool name), for `generateText`,
 * `streamText` and agents; typed, so a step's `toolResults[].output` is the success view.
 * Tools registered later are not included: call it again.
 *
 * @example
 * const { text, steps } = await generateText({ model, tools: aiSdkTools(tm), prompt: 'Read a.txt', stopWhen: stepCountIs(5) })
 */
export function aiSdkTools(tm: ToolManager, options: AiSdkToolsOptions = {}): AiSdkToolSet {
  // no prototype: a tool named `__proto__` is a tool like any other, and a name the model makes
  // up (`toString`, `constructor`) finds no inherited member
  const tools = Object.create(null) as AiSdkToolSet
  for (const listed of listedTools(tm, options.only)) tools[listed.name] = aiSdkTool(tm, listed)
  return tools
}
