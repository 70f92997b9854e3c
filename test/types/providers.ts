// Type test (tsc -p test/tsconfig.json): the provider runners take a provider's message written
// inline, with the blocks, parts and fields toolwire does not read (text blocks, `role`), and the
// SDKs' own types.
import type Anthropic from '@anthropic-ai/sdk'
import type OpenAI from 'openai'
import { ToolManager } from '../../src/index.js'
import { openAIResponsesTools, runAnthropic, runGemini, runOpenAIChat, runOpenAIResponses } from '../../src/integrations/providers/index.js'

const tm = new ToolManager()

export async function inline(): Promise<void> {
  await runAnthropic(tm, { role: 'assistant', content: [{ type: 'text', text: 'ok' }, { type: 'tool_use', id: 'tu_1', name: 'echo', input: {} }] })
  await runOpenAIChat(tm, { role: 'assistant', content: null, refusal: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'echo', arguments: '{}' } }] })
  await runOpenAIResponses(tm, { output: [{ type: 'message', id: 'm1', content: [] }, { type: 'function_call', call_id: 'c1', name: 'echo', arguments: '{}' }] })
  await runGemini(tm, { role: 'model', parts: [{ text: 'calling' }, { functionCall: { name: 'echo', args: {} } }] })
}

export async function sdkTypes(message: Anthropic.Message, chat: OpenAI.Chat.ChatCompletionMessage, response: OpenAI.Responses.Response): Promise<void> {
  await runAnthropic(tm, message)
  await runOpenAIChat(tm, chat)
  await runOpenAIResponses(tm, response)
}

// docs/providers.md's Responses line, under the openai SDK's types: with `previous_response_id` no cast is needed;
// keeping the conversation yourself needs one (the SDK does not type every output item as an input item)
export async function responsesTurn(client: OpenAI, response: OpenAI.Responses.Response): Promise<unknown[]> {
  const next = await client.responses.create({ model: 'gpt-5', tools: openAIResponsesTools(tm), previous_response_id: response.id, input: await runOpenAIResponses(tm, response) })
  const input: OpenAI.Responses.ResponseInput = [...(response.output as OpenAI.Responses.ResponseInputItem[]), ...(await runOpenAIResponses(tm, response))]
  return [next, input]
}
