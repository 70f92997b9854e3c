/**
 * `toolwire/openai-agents`: a manager's tools as OpenAI Agents SDK (`@openai/agents`)
 * `FunctionTool`s.
 *
 * ```ts
 * import { openaiAgentTools } from 'toolwire/openai-agents'
 * const agent = new Agent({ name: 'Assistant', tools: openaiAgentTools(tm) })
 * ```
 *
 * - `invoke` runs `tm.callJson` with the model's arguments, the SDK's tool call id as the call
 *   id and the SDK's abort signal (`cancelled`).
 * - The output is what toolwire's Responses adapter gives: toolwire's model text (failures
 *   stated, `Error: …`; wrapped when untrusted), and media as the SDK's structured outputs
 *   (`{ type: 'image' }`, `{ type: 'file' }`), never as text.
 * - A failure is marked on the SDK's function span (`setError`, as the SDK marks its own
 *   non-fatal tool errors), and every output item carries the application view in its
 *   `customData.toolwire` (app-only; it never reaches the model).
 * - A tool with `needsConfirmation` gets `needsApproval`: toolwire holds the call's confirmation
 *   (`pendingApproval(tm, callId)` gives the redacted summary); approving the interruption in
 *   the SDK runs it once.
 */
import { getCurrentSpan, tool as agentsTool, type FunctionTool } from '@openai/agents'
import type { ToolManager } from '../runtime/manager.js'
import type { CallResult } from '../core/view.js'
import { toOpenAIResponses, type OpenAIResponsesOutputItem } from '../render/openai.js'
import { renderParts, sourceOf, statedText, wireText } from '../render/model.js'
import { freshCallId, listedTools, TEXT_ONLY_WIRE, type ListedTool, type MediaMode } from './shared.js'
import { approvalNeeded, runCall } from './held.js'
import { objectSchema, strictParameters } from './providers/declare.js'
import { strictArguments, strictForm } from './providers/strict.js'

export { denyApproval, pendingApproval } from './held.js'
export type { HeldCallMatch, PendingApproval } from './held.js'
export type { MediaMode } from './shared.js'

/** Options of `openaiAgentTools`. */
export interface OpenAIAgentToolsOptions {
  /** Only these tools (default: every tool registered now). */
  readonly only?: readonly string[]
  /** `'text'` for a Chat Completions model (`OpenAIChatCompletionsModel`, which drops media from a tool output without a word); default `'parts'`. */
  readonly media?: MediaMode
  /**
   * Declare the tools in strict mode (what the SDK's own `tool()` does by default), each schema
   * in strict form (`toOpenAIStrictSchema`: optional properties nullable; a `null` the model sends
   * for one is left out before toolwire validates). Throws a `StrictSchemaError` naming the tool
   * when a schema has no strict form. Default `false`: toolwire validates every input anyway.
   */
  readonly strict?: boolean
}

/** One structured output item of a function tool, in the SDK's shapes. */
export type AgentsToolOutputItem =
  | { readonly type: 'text'; readonly text: string }
  | { readonly type: 'image'; readonly image: string; readonly detail: 'auto' }
  | { readonly type: 'file'; readonly file: { readonly data: string; readonly mediaType: string; readonly filename: string } }
  | { readonly type: 'file'; readonly file: { readonly url: string; readonly filename?: string } }

/** What a function tool returns: the text alone, or structured items when there are media. */
export type AgentsToolOutput = string | AgentsToolOutputItem[]

function agentsItem(item: OpenAIResponsesOutputItem): AgentsToolOutputItem {
  switch (item.type) {
    case 'input_text':
      return { type: 'text', text: item.text }
    case 'input_image':
      return { type: 'image', image: item.image_url, detail: 'auto' }
    case 'input_file': {
      if ('file_data' in item) {
        const [head, data] = item.file_data.split(',', 2) as [string, string]
        return { type: 'file', file: { data, mediaType: head.slice('data:'.length, -';base64'.length), filename: item.filename } }
      }
      return { type: 'file', file: item.filename === undefined ? { url: item.file_url } : { url: item.file_url, filename: item.filename } }
    }
  }
}

/**
 * What the model reads of an application view, as a function tool's output: the output of
 * toolwire's Responses adapter (`toOpenAIResponses`) in the SDK's structured shapes; with
 * `media: 'text'`, its text alone, each part named in a note.
 */
export function toAgentsOutput(view: CallResult<unknown>, callId = '', options: { readonly media?: MediaMode } = {}): AgentsToolOutput {
  if (options.media === 'text') {
    // the Responses text, every part named in a note instead of carried
    const source = sourceOf(view)
    return statedText(source, wireText(source, renderParts(source, TEXT_ONLY_WIRE, () => undefined).notes))
  }
  const { output } = toOpenAIResponses(view, { callId })
  return typeof output === 'string' ? output : output.map(agentsItem)
}

/** The SDK's static "no approval" policy (made by its own `tool()`, so the runner treats it as static). */
let noApproval: FunctionTool['needsApproval'] | undefined
function staticNoApproval(): FunctionTool['needsApproval'] {
  noApproval ??= agentsTool({
    name: 'toolwire_no_approval',
    description: '',
    parameters: { type: 'object', properties: {}, required: [], additionalProperties: true },
    strict: false,
    execute: () => '',
  }).needsApproval as unknown as FunctionTool['needsApproval']
  return noApproval
}

/** The most views waiting for the SDK's custom-data step per tool (the oldest go first). */
const VIEW_LIMIT = 1000

function agentTool(tm: ToolManager, listed: ListedTool, media: MediaMode, strict: boolean): FunctionTool {
  const views = new Map<string, CallResult>()
  // the declaration every provider helper gives: an object schema without `$schema` (in strict form when asked)
  const schema = (strict ? strictParameters(listed) : objectSchema(listed.inputSchema)) as FunctionTool['parameters']
  const form = strict ? strictForm(listed.inputSchema) : undefined
  return {
    type: 'function',
    name: listed.name,
    description: listed.description ?? '',
    parameters: schema,
    strict,
    invoke: async (_runContext, input, details) => {
      const callId = details?.toolCall?.callId ?? freshCallId('agents')
      const view = await runCall(tm, listed, { args: form === undefined ? input : strictArguments(form, input) }, callId, details?.signal)
      if (view.status !== 'ok') getCurrentSpan()?.setError({ message: 'Error running tool (non-fatal)', data: { tool_name: listed.name, status: view.status } })
      views.set(callId, view)
      if (views.size > VIEW_LIMIT) views.delete(views.keys().next().value as string)
      return toAgentsOutput(view, callId, { media })
    },
    needsApproval:
      listed.needsConfirmation === true
        ? async (_runContext, input, callId) => approvalNeeded(tm, listed, form === undefined ? input : form.toToolInput(input), callId ?? freshCallId('agents'))
        : staticNoApproval(),
    isEnabled: async () => true,
    customDataExtractor: ({ toolCall }) => {
      const view = views.get(toolCall.callId)
      if (view === undefined) return undefined
      views.delete(toolCall.callId)
      return { toolwire: JSON.parse(JSON.stringify(view)) as Record<string, unknown> }
    },
  }
}

/**
 * The manager's tools as OpenAI Agents SDK function tools. Tools registered later are not
 * included: call it again.
 *
 * @example
 * const agent = new Agent({ name: 'Assistant', instructions: '…', tools: openaiAgentTools(tm) })
 */
export function openaiAgentTools(tm: ToolManager, options: OpenAIAgentToolsOptions = {}): FunctionTool[] {
  return listedTools(tm, options.only).map((listed) => agentTool(tm, listed, options.media ?? 'parts', options.strict === true))
}
