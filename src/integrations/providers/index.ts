/**
 * `toolwire/providers`: provider tool-call runners and declaration helpers. A runner
 * takes a provider's tool calls, runs them with `tm.callMany`, and returns that
 * provider's messages in an order it accepts; a declaration helper gives the tools as that
 * provider's tool definitions.
 */
export { runOpenAIChat, runOpenAIResponses } from './openai.js'
export type {
  OpenAIChatCallsLike,
  OpenAIChatRunMessage,
  OpenAIChatToolCallLike,
  OpenAIResponsesCallsLike,
  OpenAIResponsesFunctionCallLike,
} from './openai.js'
export { runAnthropic } from './anthropic.js'
export type { AnthropicCallsLike, AnthropicToolResultMessage, AnthropicToolUseLike } from './anthropic.js'
export { runGemini } from './gemini.js'
export type { GeminiCallsLike, GeminiFunctionCallLike, GeminiFunctionResponseContent, GeminiPartLike } from './gemini.js'
export { anthropicTools, GEMINI_CUT_DESCRIPTION, geminiTools, openAIChatTools, openAIResponsesTools, toGeminiSchema } from './declare.js'
export type {
  AnthropicTool,
  DeclareOptions,
  GeminiFunctionDeclaration,
  GeminiTool,
  JsonSchemaObject,
  OpenAIChatTool,
  OpenAIResponsesTool,
  ToolDeclarer,
} from './declare.js'
export { StrictSchemaError, toOpenAIStrictSchema } from './strict.js'
export type { ConfirmationRequest, ProviderMessages, RunToolCallsOptions, ToolRunner } from './run.js'
