/**
 * OpenAI runners: the `tool_calls` of a Chat Completions assistant message, and the
 * `function_call` items of a Responses API output, run through `tm.callMany`.
 */
import { toOpenAIChat, toOpenAIResponses } from '../../render/openai.js'
import type {
  OpenAIChatToolMessage,
  OpenAIChatUserMessage,
  OpenAIChatUserPart,
  OpenAIResponsesFunctionCallOutput,
} from '../../render/openai.js'
import { field, idOf, isList, listOf, runCalls, unreadableCall, unusableId, withResults, type ProviderCall, type ProviderMessages, type RunToolCallsOptions, type ToolRunner } from './run.js'
import { strictArguments, strictForm, type StrictForm } from './strict.js'

/** With `strict`, each strict tool's way back from strict arguments, by name (a tool whose schema has no strict form was not declared strict). */
function strictForms(tm: ToolRunner, options: RunToolCallsOptions | undefined): ReadonlyMap<string, StrictForm> | undefined {
  if (options?.strict !== true || tm.manifest === undefined) return undefined
  const forms = new Map<string, StrictForm>()
  for (const entry of tm.manifest()) {
    try {
      forms.set(entry.name, strictForm(entry.inputSchema))
    } catch {
      // not declarable strict: its calls are taken as sent
    }
  }
  return forms
}

/** The argument text of a call, a strict call's `null`s for optional properties left out. */
function argumentsOf(forms: ReadonlyMap<string, StrictForm> | undefined, name: unknown, args: unknown): unknown {
  const form = typeof name === 'string' ? forms?.get(name) : undefined
  return form !== undefined && typeof args === 'string' ? strictArguments(form, args) : args
}

/** A Chat Completions function tool call, as the SDK's `ChatCompletionMessageToolCall` has it. */
export interface OpenAIChatToolCallLike {
  readonly id: string
  readonly type: string
  readonly function?: { readonly name: string; readonly arguments: string }
}

/** A Chat Completions assistant message (the SDK's `ChatCompletionMessage`), or just its tool calls. */
export type OpenAIChatCallsLike = { readonly tool_calls?: readonly OpenAIChatToolCallLike[] | null } | readonly OpenAIChatToolCallLike[]

/** A message `runOpenAIChat` returns: tool messages, then at most one user message with media. */
export type OpenAIChatRunMessage = OpenAIChatToolMessage | OpenAIChatUserMessage

/**
 * Runs the function tool calls of a Chat Completions assistant message with `tm.callMany`
 * (each call's id is the tool call's id) and returns the messages that answer them: one
 * `role: "tool"` message per call, in the calls' order, then (only when some result has
 * media Chat can carry) ONE `user` message with every result's media, each introduced by
 * its tool call id. OpenAI rejects a user message between tool messages, so media never
 * come between them.
 *
 * Arguments that are not valid JSON give the model an `invalid` result; nothing throws.
 * Every function call is answered: one without a usable `id` (a non-empty string), or whose
 * `function` cannot be read, is refused `invalid_call` and not run. A `custom` tool call (free-text input) is not toolwire's and is left for the app to answer.
 *
 * @example
 * const message = completion.choices[0].message
 * messages.push(message, ...(await runOpenAIChat(tm, message)))
 */
// generic so that a message written inline (`role`, `content`) is checked by shape, not for excess properties
export async function runOpenAIChat<M extends OpenAIChatCallsLike>(
  tm: ToolRunner,
  message: M,
  options?: RunToolCallsOptions,
): Promise<ProviderMessages<OpenAIChatRunMessage>> {
  const forms = strictForms(tm, options)
  const list = isList(message) ? listOf(message) : listOf(field(message, 'tool_calls'))
  const calls: { call: ProviderCall; id: string }[] = []
  for (const item of list) {
    const fn = field(item, 'function')
    const type = field(item, 'type')
    // a call without `type` (some OpenAI-compatible servers leave it out) is a function call when it has a `function`
    if (type !== 'function' && !(type === undefined && fn !== undefined)) continue
    // every function call is answered: one without a usable id, or whose `function` cannot be read, is refused, not run
    const id = idOf(field(item, 'id'))
    const refusal = id === undefined ? unusableId : typeof fn !== 'object' || fn === null ? unreadableCall : undefined
    const name = field(fn, 'name')
    calls.push({ id: id ?? '', call: { id, name, args: { text: argumentsOf(forms, name, field(fn, 'arguments')) }, ...(refusal === undefined ? {} : { refusal }) } })
  }
  const results = await runCalls(tm, calls.map((c) => c.call), options)
  const tools: OpenAIChatRunMessage[] = []
  const media: OpenAIChatUserPart[] = []
  results.forEach((result, i) => {
    for (const m of toOpenAIChat(result, { toolCallId: calls[i]!.id })) {
      if (m.role === 'tool') tools.push(m)
      else media.push(...m.content)
    }
  })
  if (media.length > 0) tools.push({ role: 'user', content: media })
  return withResults(tools, results)
}

/** A Responses API `function_call` output item (the SDK's `ResponseFunctionToolCall`). */
export interface OpenAIResponsesFunctionCallLike {
  readonly type: string
  readonly call_id?: unknown
  readonly name?: unknown
  readonly arguments?: unknown
}

/** A Responses API response (its `output`), or its output items. */
export type OpenAIResponsesCallsLike = { readonly output?: readonly OpenAIResponsesFunctionCallLike[] } | readonly OpenAIResponsesFunctionCallLike[]

/**
 * Runs the `function_call` items of a Responses API output with `tm.callMany` (each call's
 * id is its `call_id`) and returns one `function_call_output` input item per call, in the
 * calls' order, media inside each output. Other output items (messages, reasoning, built-in
 * tools' calls) are left alone. Arguments that are not valid JSON give the model an
 * `invalid` result; nothing throws. Every `function_call` is answered: one without a usable
 * `call_id` (a non-empty string) is refused `invalid_call` and not run.
 *
 * @example
 * input.push(...response.output, ...(await runOpenAIResponses(tm, response)))
 */
// generic so that output written inline (message items beside the calls) is checked by shape, not for excess properties
export async function runOpenAIResponses<R extends OpenAIResponsesCallsLike>(
  tm: ToolRunner,
  response: R,
  options?: RunToolCallsOptions,
): Promise<ProviderMessages<OpenAIResponsesFunctionCallOutput>> {
  const forms = strictForms(tm, options)
  const list = isList(response) ? listOf(response) : listOf(field(response, 'output'))
  const calls: { call: ProviderCall; id: string }[] = []
  for (const item of list) {
    if (field(item, 'type') !== 'function_call') continue
    // every function_call is answered: one without a usable `call_id` is refused, not run
    const id = idOf(field(item, 'call_id'))
    const name = field(item, 'name')
    calls.push({ id: id ?? '', call: { id, name, args: { text: argumentsOf(forms, name, field(item, 'arguments')) }, ...(id === undefined ? { refusal: unusableId } : {}) } })
  }
  const results = await runCalls(tm, calls.map((c) => c.call), options)
  return withResults(
    results.map((result, i) => toOpenAIResponses(result, { callId: calls[i]!.id })),
    results,
  )
}
