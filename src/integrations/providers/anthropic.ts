/** Anthropic runner: the `tool_use` blocks of a message's `content`, run through `tm.callMany`. */
import { toAnthropic, type AnthropicToolResultBlock } from '../../render/anthropic.js'
import { field, idOf, isList, listOf, runCalls, unusableId, type ProviderCall, type RunToolCallsOptions, type ToolRunner } from './run.js'
import type { CallResult } from '../../core/view.js'

/** A `tool_use` content block (the SDK's `ToolUseBlock`). */
export interface AnthropicToolUseLike {
  readonly type: string
  readonly id?: unknown
  readonly name?: unknown
  readonly input?: unknown
}

/** An Anthropic message (the SDK's `Message`), or its `content` array. */
export type AnthropicCallsLike = { readonly content: readonly AnthropicToolUseLike[] } | readonly AnthropicToolUseLike[]

/** The user message `runAnthropic` returns: every `tool_result` block, in the order of the `tool_use` blocks. */
export interface AnthropicToolResultMessage {
  readonly role: 'user'
  readonly content: AnthropicToolResultBlock[]
  /** The application view of each call, in the same order (not enumerable: not sent). */
  readonly results: readonly CallResult[]
}

/**
 * Runs the `tool_use` blocks of an Anthropic message with `tm.callMany` (each call's id is
 * the block's id) and returns the `user` message answering them: one `tool_result` block
 * per `tool_use`, in order, media inside each block (Anthropic wants every result first in
 * the next user message; append your own text blocks after them). Other blocks (text,
 * thinking, server tools) are left alone. An `input` given as JSON text (a streamed
 * `partial_json` put together) is parsed; text that is not valid JSON gives the model an
 * `invalid` result; nothing throws. Every `tool_use` is answered: one without a usable `id`
 * (a non-empty string) is refused `invalid_call` and not run.
 *
 * @example
 * messages.push({ role: 'assistant', content: message.content }, await runAnthropic(tm, message))
 */
// generic so that a message written inline (text blocks, `role`) is checked by shape, not for excess properties
export async function runAnthropic<M extends AnthropicCallsLike>(tm: ToolRunner, message: M, options?: RunToolCallsOptions): Promise<AnthropicToolResultMessage> {
  const list = isList(message) ? listOf(message) : listOf(field(message, 'content'))
  const calls: { call: ProviderCall; id: string }[] = []
  for (const block of list) {
    if (field(block, 'type') !== 'tool_use') continue
    // every tool_use is answered: one without a usable id is refused, not run
    const id = idOf(field(block, 'id'))
    const input = field(block, 'input')
    const args = typeof input === 'string' ? { text: input } : { value: input }
    calls.push({ id: id ?? '', call: { id, name: field(block, 'name'), args, ...(id === undefined ? { refusal: unusableId } : {}) } })
  }
  const results = await runCalls(tm, calls.map((c) => c.call), options)
  const reply = { role: 'user' as const, content: results.map((result, i) => toAnthropic(result, { toolUseId: calls[i]!.id })) }
  return Object.defineProperty(reply, 'results', { value: results, enumerable: false }) as AnthropicToolResultMessage
}
