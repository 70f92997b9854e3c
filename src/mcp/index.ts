/**
 * `toolwire/mcp`: serve a ToolManager's tools over MCP (stdio or Streamable HTTP; revisions
 * 2026-07-28 and 2025-11-25), and import an MCP server's tools. This entry loads the MCP SDK;
 * `toolwire` itself does not.
 */
export {
  createMcpServer,
  createMcpServerFactory,
  mcpToolOf,
  UnknownToolError,
  MCP_PROTOCOL_VERSION,
  MCP_LEGACY_PROTOCOL_VERSION,
} from './server.js'
export type { McpServerOptions, McpEra } from './server.js'
export {
  MCP_UNTRUSTED_CONTENT_META_KEY,
  MCP_NEEDS_CONFIRMATION_META_KEY,
  MCP_CALL_ID_META_KEY,
  MCP_CONFIRMATION_META_KEY,
  MCP_IDEMPOTENCY_KEY_META_KEY,
  MCP_REPLAYED_META_KEY,
} from './meta.js'
export type { ServableManager } from './meta.js'
export { serveStdio, StdioLineTransport } from './stdio.js'
export type { ServeStdioOptions, StdioLineTransportOptions, StdioMcpServer } from './stdio.js'
export { loadToolModule, isServableManager, toolwireVersion } from './module.js'
export { importMcpTools, fromMcp, taskAwareTransport, TASKS_EXTENSION } from './client.js'
export type { ImportMcpToolsOptions, FromMcpOptions, McpToolClient, McpClientV1, McpClientV2, McpTool, TaskPollOptions } from './client.js'
export { serveHttp } from './http.js'
export type { ServeHttpOptions, HttpMcpServer, ServeHttpAuthOptions } from './http.js'
export { mcpOAuthProvider, mcpClientCredentials, fileTokenStorage, memoryTokenStorage } from './oauth-client.js'
export type {
  McpOAuthClientProvider,
  McpAuthorizationCodeProvider,
  McpOAuthProviderOptions,
  McpClientCredentialsOptions,
  McpPrivateKeyJwt,
  McpOAuthDiscoveryState,
  TokenStorage,
  TokenStorageValue,
} from './oauth-client.js'
