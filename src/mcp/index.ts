/**
 * `toolwire/mcp`: serve a ToolManager's tools over MCP, and import an MCP server's tools.
 * This entry loads the MCP SDK; `toolwire` itself does not.
 */
export {
  createMcpServer,
  serveStdio,
  StdioLineTransport,
  mcpToolOf,
  loadToolModule,
  isServableManager,
  toolwireVersion,
  UnknownToolError,
  MCP_PROTOCOL_VERSION,
  MCP_UNTRUSTED_CONTENT_META_KEY,
  MCP_NEEDS_CONFIRMATION_META_KEY,
  MCP_CALL_ID_META_KEY,
  MCP_CONFIRMATION_META_KEY,
} from './server.js'
export type { McpServerOptions, ServeStdioOptions, ServableManager, StdioLineTransportOptions } from './server.js'
export { importMcpTools, fromMcp } from './client.js'
export type { ImportMcpToolsOptions, FromMcpOptions } from './client.js'
