/**
 * The MCP client side: `importMcpTools` turns a connected MCP server's tools into
 * toolwire tool definitions (and registers them into a manager when given one);
 * `fromMcp` maps a `CallToolResult` back to a canonical `ToolResult`. The calls themselves
 * are import/remote-tool.ts.
 */
import type { JsonSchema, ToolContext, ToolDefinition, ToolHints, ToolManager } from '../runtime/manager.js'
import { MCP_UNTRUSTED_CONTENT_META_KEY } from './meta.js'
import { listRemoteTools, type McpTool, type McpToolClient } from './import/remote-client.js'
import { RemoteTool } from './import/remote-tool.js'
import type { TaskPollOptions } from './import/remote-task.js'

export { fromMcp, type FromMcpOptions } from './import/from-mcp.js'
export { taskAwareTransport, TASKS_EXTENSION, type TaskPollOptions } from './import/remote-task.js'
export type { McpClientV1, McpClientV2, McpTool, McpToolClient } from './import/remote-client.js'

/** Options of `importMcpTools`. */
export interface ImportMcpToolsOptions {
  /** Prepended to each tool name (e.g. `"files__"`); the server is called with the original name. */
  readonly prefix?: string
  /** Which of the server's tools to import (default: all). */
  filter?(tool: McpTool): boolean
  /**
   * Mark every imported tool's results as untrusted content. Default: only tools the
   * server marks with `_meta["toolwire/untrustedContent"]`.
   */
  readonly untrusted?: boolean
  /** The MCP request timeout per call, in ms (default: the SDK's, 60 s). */
  readonly requestTimeoutMs?: number
  /** Replace same-named tools already registered in the manager. */
  readonly replace?: boolean
  /**
   * Register names outside the rule every model provider accepts (`^[a-zA-Z0-9_-]{1,64}$`),
   * such as MCP's dotted names; without it such a name fails the import.
   */
  readonly anyName?: boolean
  /**
   * How long a call waits for a remote task (the tasks extension, through `taskAwareTransport`)
   * before it answers `pending`: `tasks/get` every `intervalMs` (default: the task's
   * `pollIntervalMs`, else 1000) for at most `maxWaitMs` (default 0: `pending` at once).
   */
  readonly taskPoll?: TaskPollOptions
}

function hintsOf(tool: McpTool, untrusted: boolean | undefined): ToolHints {
  const a = tool.annotations ?? {}
  const hints: { -readonly [K in keyof ToolHints]: ToolHints[K] } = {}
  if (typeof a.readOnlyHint === 'boolean') hints.readOnly = a.readOnlyHint
  if (typeof a.destructiveHint === 'boolean') hints.destructive = a.destructiveHint
  if (typeof a.idempotentHint === 'boolean') hints.idempotent = a.idempotentHint
  if (untrusted ?? tool._meta?.[MCP_UNTRUSTED_CONTENT_META_KEY] === true) hints.untrustedContent = true
  return hints
}

/**
 * Lists a connected MCP server's tools (following pagination) and returns toolwire
 * tool definitions whose `run` calls the remote tool and maps the result back with
 * `fromMcp`: `isError` stays an error, images become parts, `structuredContent` becomes
 * the data. `client` is the SDK v2 `Client` (`@modelcontextprotocol/client`, any negotiation
 * mode; `versionNegotiation: { mode: 'auto' }` recommended) or a 1.x `Client`. The call's
 * signal cancels the MCP request, and the server's progress notifications become
 * `ctx.reportProgress`. The call's trace context (`ctx.traceContext`) travels in the request's
 * `_meta`, so the remote server's span joins the local trace.
 *
 * A remote `input_required` (2026-07-28) becomes a local suspension: a URL elicitation, or a
 * form whose one field is a boolean (a toolwire server's confirmation), ends
 * `needs_confirmation` with the elicitation's message as the summary; another form ends
 * `pending` kind `input` with the requested schema. `tm.confirm(id, { approve })` (or
 * `tm.resume(id, { approve })`) and `tm.resume(id, answer)` then retry the original call with
 * `inputResponses` and the remote's `requestState`; the retry's result is the call's result (a
 * further `input_required` parks again, at most 10 rounds). A decline is sent to the remote too,
 * and the call ends refused `confirmation_denied`.
 *
 * A call that a toolwire 2025 server holds for the user's confirmation (its
 * `_meta["toolwire/confirmation"]`) ends `needs_confirmation` with the server's `confirmId`;
 * it is decided on the server (a local `tm.confirm` answers refused `confirmation_remote`). A
 * JSON-RPC error from the server (for example an unknown tool) becomes an error result (kind
 * `provider`, `timeout` or `network`).
 *
 * With a manager (`importMcpTools(client, tm, options?)`) the tools are also registered.
 *
 * For an OAuth-protected server, give the client's transport an `authProvider` before `connect`:
 * `mcpOAuthProvider` (authorization code with PKCE) or `mcpClientCredentials` (oauth-client.ts).
 *
 * @example
 * const tm = new ToolManager()
 * await importMcpTools(client, tm, { prefix: 'fs__' })
 * await tm.call('fs__read_file', { path: 'notes.txt' })
 */
export async function importMcpTools(
  client: McpToolClient,
  tmOrOptions?: Pick<ToolManager, 'register'> | ImportMcpToolsOptions,
  maybeOptions: ImportMcpToolsOptions = {},
): Promise<ToolDefinition[]> {
  const tm = tmOrOptions !== undefined && typeof (tmOrOptions as { register?: unknown }).register === 'function' ? (tmOrOptions as Pick<ToolManager, 'register'>) : undefined
  const options = tm === undefined ? ((tmOrOptions as ImportMcpToolsOptions | undefined) ?? {}) : maybeOptions
  const tools = await listRemoteTools(client)
  const definitions = tools
    .filter((tool) => options.filter?.(tool) ?? true)
    .map((tool): ToolDefinition => {
      const hints = hintsOf(tool, options.untrusted)
      const remote = new RemoteTool(client, tool.name, hints.untrustedContent === true, options.requestTimeoutMs, options.taskPoll ?? {})
      const definition: { -readonly [K in keyof ToolDefinition]: ToolDefinition[K] } = {
        name: (options.prefix ?? '') + tool.name,
        inputSchema: tool.inputSchema as JsonSchema,
        hints,
        run: (input: Record<string, unknown>, ctx: ToolContext) => remote.run(input, ctx),
        resume: (answer: unknown, input: Record<string, unknown>, ctx: ToolContext) => remote.resume(answer, input, ctx),
      }
      const title = tool.title ?? tool.annotations?.title
      if (tool.description !== undefined) definition.description = tool.description
      else if (title !== undefined) definition.description = title
      if (tool.outputSchema !== undefined) definition.outputSchema = tool.outputSchema as JsonSchema
      return definition
    })
  if (tm !== undefined) for (const def of definitions) tm.register(def, { replace: options.replace === true, anyName: options.anyName === true })
  return definitions
}
