/** Wire adapters: one canonical result rendered as each provider's tool-result message. */
export { toOpenAIChat, toOpenAIResponses } from './openai.js'
export type {
  OpenAIChatAudioPart,
  OpenAIChatFilePart,
  OpenAIChatImagePart,
  OpenAIChatMessage,
  OpenAIChatOptions,
  OpenAIChatTextPart,
  OpenAIChatToolMessage,
  OpenAIChatUserMessage,
  OpenAIChatUserPart,
  OpenAIResponsesFile,
  OpenAIResponsesFunctionCallOutput,
  OpenAIResponsesImage,
  OpenAIResponsesOptions,
  OpenAIResponsesOutputItem,
  OpenAIResponsesText,
} from './openai.js'
export { toAnthropic } from './anthropic.js'
export type {
  AnthropicDocumentBlock,
  AnthropicImageBlock,
  AnthropicImageMediaType,
  AnthropicOptions,
  AnthropicTextBlock,
  AnthropicToolResultBlock,
  AnthropicToolResultContent,
} from './anthropic.js'
export { toGemini, GEMINI_FUNCTION_RESPONSE_MIME_TYPES } from './gemini.js'
export type { GeminiFunctionResponse, GeminiFunctionResponsePart, GeminiFunctionResponsePartEnvelope, GeminiOptions } from './gemini.js'
export { toMcp, MCP_UNTRUSTED_META_KEY } from './mcp.js'
export type {
  McpAudioContent,
  McpCallToolResult,
  McpContent,
  McpEmbeddedResource,
  McpImageContent,
  McpMeta,
  McpResourceLink,
  McpTextContent,
} from './mcp.js'
