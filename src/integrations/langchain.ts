/**
 * `toolwire/langchain`: a manager's tools as LangChain.js structured tools (`@langchain/core`),
 * for `model.bindTools(...)`, LangGraph's `ToolNode` and `createAgent`.
 *
 * ```ts
 * import { langchainTools } from 'toolwire/langchain'
 * const tools = langchainTools(tm)
 * ```
 *
 * - toolwire validates the input, not LangChain first: an invalid input reaches the model as
 *   toolwire's `invalid` result (never a `ToolInputParsingException`).
 * - Invoked with a tool call (`tool.invoke(aiMessage.tool_calls[0])`), a tool returns a
 *   `ToolMessage`: `status: 'success'` for `ok` and `'error'` for every other status, its
 *   `content` toolwire's model text (wrapped when untrusted) with media content blocks, its
 *   `artifact` the application view. Invoked with plain arguments, it returns the content.
 * - The call id is the tool call's id; `config.signal` cancels the call (`cancelled`).
 * - LangGraph's interrupts (and every other `GraphBubbleUp`, such as a parent `Command`)
 *   thrown inside a tool pass through untouched.
 */
import { StructuredTool, type ToolRunnableConfig } from '@langchain/core/tools'
import { ToolMessage } from '@langchain/core/messages'
import type { ToolManager } from '../runtime/manager.js'
import type { CallResult } from '../core/view.js'
import type { ContentPart } from '../core/types.js'
import { freshCallId, listedTools, modelText, renderParts, TEXT_ONLY_WIRE, type ListedTool, type MediaMode } from './shared.js'
import { runCall } from './held.js'

export type { MediaMode } from './shared.js'

/** Options of `langchainTools`. */
export interface LangChainToolsOptions {
  /** Only these tools (default: every tool registered now). */
  readonly only?: readonly string[]
  /** `'text'` for a chat model whose tool messages carry text only, such as `ChatOpenAI` (default `'parts'`: content blocks). */
  readonly media?: MediaMode
}

/** A LangChain content block of a tool message. */
export type LangChainContentBlock =
  | { readonly type: 'text'; readonly text: string }
  | { readonly type: 'image' | 'audio' | 'file'; readonly mimeType: string; readonly data: string }
  | { readonly type: 'image' | 'audio' | 'file'; readonly mimeType: string; readonly url: string }

/** What a tool's `ToolMessage` content is: toolwire's model text, or that text then media blocks. */
export type LangChainToolContent = string | LangChainContentBlock[]

function block(part: ContentPart): LangChainContentBlock | undefined {
  if (part.data !== undefined) return { type: part.type, mimeType: part.mimeType, data: part.data }
  if (part.url !== undefined) return { type: part.type, mimeType: part.mimeType, url: part.url }
  return undefined
}

/** The content a model reads of an application view: text, or text then media blocks (with `media: 'text'`, the text naming them). */
export function toLangChainContent(view: CallResult<unknown>, options: { readonly media?: MediaMode } = {}): LangChainToolContent {
  const { carried, notes } = options.media === 'text' ? renderParts<LangChainContentBlock>(view, TEXT_ONLY_WIRE, () => undefined) : renderParts(view, 'LangChain', block)
  const text = modelText(view, notes)
  return carried.length === 0 ? text : [{ type: 'text', text }, ...carried]
}

/**
 * The `ToolMessage` answering tool call `toolCallId` with an application view: `status`
 * `'success'` only for `ok`, the content as `toLangChainContent` gives it, the view as `artifact`.
 */
export function toToolMessage(view: CallResult, toolCallId: string, name?: string, options: { readonly media?: MediaMode } = {}): ToolMessage {
  return new ToolMessage({
    status: view.status === 'ok' ? 'success' : 'error',
    content: toLangChainContent(view, options) as ToolMessage['content'],
    artifact: view,
    tool_call_id: toolCallId,
    ...(name === undefined ? {} : { name }),
  })
}

/** LangGraph's control-flow errors (interrupts, parent commands): they must reach the graph as thrown. */
function isGraphBubbleUp(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false
  const e = error as { is_bubble_up?: unknown; name?: unknown }
  return e.is_bubble_up === true || e.name === 'GraphInterrupt' || e.name === 'NodeInterrupt' || e.name === 'ParentCommand'
}

/**
 * Per manager: the calls this integration runs now, and the bubble-up errors their tool bodies
 * threw, until the call's `_call` rethrows them. Only these calls' errors are kept, and each
 * only until its call returns: nothing stays behind, and a later call with the same id starts clean.
 */
interface Bubbles {
  readonly running: Set<string>
  readonly thrown: Map<string, unknown>
}

const BUBBLES = new WeakMap<ToolManager, Bubbles>()

function bubblesOf(tm: ToolManager): Bubbles {
  let bubbles = BUBBLES.get(tm)
  if (bubbles === undefined) {
    const state: Bubbles = { running: new Set(), thrown: new Map() }
    tm.on('error', ({ callId, error }) => {
      if (state.running.has(callId) && isGraphBubbleUp(error)) state.thrown.set(callId, error)
    })
    BUBBLES.set(tm, state)
    bubbles = state
  }
  return bubbles
}

/** Runs `run` as call `callId`, and what a tool body threw to bubble up, if it did. */
async function watched<T>(tm: ToolManager, callId: string, run: () => Promise<T>): Promise<{ readonly value: T; readonly bubble?: { readonly error: unknown } }> {
  const bubbles = bubblesOf(tm)
  bubbles.running.add(callId)
  bubbles.thrown.delete(callId)
  try {
    const value = await run()
    return bubbles.thrown.has(callId) ? { value, bubble: { error: bubbles.thrown.get(callId) } } : { value }
  } finally {
    bubbles.running.delete(callId)
    bubbles.thrown.delete(callId)
  }
}

/** A permissive schema LangChain validates against while toolwire does the validating (not frozen: LangChain's validator caches its base URI in it). */
const ANY_INPUT: Record<string, unknown> = {}

/**
 * One toolwire tool as a LangChain structured tool. Its `schema` is the tool's JSON Schema
 * (what `bindTools` advertises); LangChain's own validation is bypassed so toolwire's applies.
 */
export class ToolwireTool extends StructuredTool {
  readonly name: string
  readonly description: string
  #bypass = 0
  readonly #schema: ListedTool['inputSchema']

  constructor(
    private readonly tm: ToolManager,
    private readonly listed: ListedTool,
    private readonly media: MediaMode = 'parts',
  ) {
    super()
    this.name = listed.name
    this.description = listed.description ?? ''
    this.#schema = listed.inputSchema
    // StructuredTool.call validates against `schema` before its first await: the bypass covers exactly that
    const call = this.call.bind(this)
    this.call = ((...args: Parameters<typeof call>) => {
      this.#bypass++
      try {
        return call(...args)
      } finally {
        this.#bypass--
      }
    }) as typeof this.call
  }

  get schema(): StructuredTool['schema'] {
    return (this.#bypass > 0 ? ANY_INPUT : this.#schema) as StructuredTool['schema']
  }

  protected async _call(input: unknown, _runManager?: unknown, config?: ToolRunnableConfig): Promise<ToolMessage | LangChainToolContent> {
    const toolCallId = config?.toolCall?.id
    const callId = toolCallId ?? freshCallId('langchain')
    const { value: view, bubble } = await watched(this.tm, callId, () => runCall(this.tm, this.listed, { input }, callId, config?.signal))
    if (bubble !== undefined) throw bubble.error
    const options = { media: this.media }
    return toolCallId === undefined ? toLangChainContent(view, options) : toToolMessage(view, toolCallId, this.name, options)
  }
}

/**
 * Answers the confirmation a tool message holds (its artifact is a `needs_confirmation`
 * view): approving runs the call once, denying refuses it. Returns the `ToolMessage` that
 * replaces it, for the same tool call and with the same `id`, so LangGraph's messages reducer
 * replaces the waiting message rather than adding a second answer to the tool call.
 *
 * @example
 * const answered = await answerConfirmation(tm, toolMessage, { approve: true })
 */
export async function answerConfirmation(
  tm: ToolManager,
  message: ToolMessage,
  decision: { readonly approve: boolean },
  options: { readonly media?: MediaMode } = {},
): Promise<ToolMessage> {
  const view = message.artifact as CallResult | undefined
  if (view?.status !== 'needs_confirmation') throw new TypeError('toolwire: the tool message holds no confirmation')
  const answered = toToolMessage(await tm.confirm(view.confirmId, decision), message.tool_call_id, message.name, options)
  if (message.id !== undefined) answered.id = message.id
  return answered
}

/**
 * The manager's tools as LangChain structured tools. Tools registered later are not
 * included: call it again.
 *
 * @example
 * const model = chatModel.bindTools(langchainTools(tm))
 */
export function langchainTools(tm: ToolManager, options: LangChainToolsOptions = {}): ToolwireTool[] {
  return listedTools(tm, options.only).map((listed) => new ToolwireTool(tm, listed, options.media))
}
