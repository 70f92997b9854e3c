/**
 * What `importMcpTools` uses of a connected MCP client, as a structural type both the SDK v2
 * `Client` (`@modelcontextprotocol/client`) and the 1.x one (`@modelcontextprotocol/sdk`) satisfy,
 * and the one place that calls either. Errors are read by their shape (the SDK v2 classes are
 * brand-matched; 1.x's `McpError` by name and code), so neither client package is imported.
 */
import { ProtocolError, SdkError, SdkErrorCode } from '@modelcontextprotocol/server'
import { toolError, ToolResult } from '../../core/result.js'

/** An MCP tool as `tools/list` lists it (what importMcpTools reads of it; both SDKs' `Tool` fit). */
export interface McpTool {
  readonly name: string
  readonly title?: string
  readonly description?: string
  readonly inputSchema: { readonly [key: string]: unknown }
  readonly outputSchema?: { readonly [key: string]: unknown }
  readonly annotations?: {
    readonly title?: string
    readonly readOnlyHint?: boolean
    readonly destructiveHint?: boolean
    readonly idempotentHint?: boolean
  }
  readonly _meta?: { readonly [key: string]: unknown }
}

/** The params of one `tools/call` (a retry carries `inputResponses` and the echoed `requestState`). */
export interface RemoteCallParams {
  readonly name: string
  readonly arguments?: Record<string, unknown>
  readonly _meta?: Record<string, unknown>
  readonly inputResponses?: Record<string, unknown>
  readonly requestState?: string
}

/** A progress notification of the remote call. */
export interface RemoteProgress {
  readonly progress: number
  readonly total?: number
  readonly message?: string
}

/** The request options importMcpTools passes. */
export interface RemoteCallOptions {
  readonly signal?: AbortSignal
  readonly onprogress?: (progress: RemoteProgress) => void
  readonly timeout?: number
}

/** A page of `tools/list`. */
export interface RemoteToolPage {
  readonly tools: readonly McpTool[]
  readonly nextCursor?: string
}

/** The SDK v2 `Client`: connected in any negotiation mode (`versionNegotiation: { mode: 'auto' }` recommended). */
export interface McpClientV2 {
  getProtocolEra(): string | undefined
  listTools(params?: { cursor?: string }): Promise<RemoteToolPage>
  callTool(params: RemoteCallParams, options?: RemoteCallOptions & { readonly allowInputRequired?: boolean }): Promise<unknown>
}

/** The 1.x `Client` (`@modelcontextprotocol/sdk`): revision 2025-11-25 and earlier only. */
export interface McpClientV1 {
  listTools(params?: { cursor?: string }): Promise<RemoteToolPage>
  callTool(params: RemoteCallParams, resultSchema?: undefined, options?: RemoteCallOptions): Promise<unknown>
}

/** A connected MCP client importMcpTools can use. */
export type McpToolClient = McpClientV2 | McpClientV1

function isV2(client: McpToolClient): client is McpClientV2 {
  return typeof (client as Partial<McpClientV2>).getProtocolEra === 'function'
}

/**
 * Calls a remote tool. On the SDK v2 client the call passes `allowInputRequired: true`: an
 * `input_required` result comes back as it is (never fulfilled by the SDK's own handlers).
 */
export function callRemote(client: McpToolClient, params: RemoteCallParams, options: RemoteCallOptions): Promise<unknown> {
  if (isV2(client)) return client.callTool(params, { ...options, allowInputRequired: true })
  return client.callTool(params, undefined, options)
}

/** Every page of the server's tools (the SDK v2 client gathers them in one call; 1.x pages). */
export async function listRemoteTools(client: McpToolClient): Promise<McpTool[]> {
  const tools: McpTool[] = []
  let cursor: string | undefined
  do {
    const page = await client.listTools(cursor === undefined ? undefined : { cursor })
    tools.push(...page.tools)
    cursor = page.nextCursor
  } while (cursor !== undefined)
  return tools
}

/** The longest part of a server's error message that reaches the model. */
const SERVER_MESSAGE_MAX = 200

/** 1.x's codes for a request timeout and a closed connection. */
const V1_REQUEST_TIMEOUT = -32001
const V1_CONNECTION_CLOSED = -32000

function shortMessage(message: string): string {
  // the SDK prefixes "MCP error <code>: " on each side that wraps the message
  const plain = message.replace(/^(MCP error -?\d+: )+/, '')
  const line = plain.split('\n', 1)[0]!.trim()
  return line.length > SERVER_MESSAGE_MAX ? `${line.slice(0, SERVER_MESSAGE_MAX)}…` : line === '' ? 'no message' : line
}

/**
 * A failed remote call as an error result: a JSON-RPC error from the server (kind `provider`,
 * its message cut to its first line and 200 characters, so a raw validation dump never becomes
 * the model's message), a timeout (`timeout`) or a closed connection (`network`). Anything else
 * is rethrown (the manager settles it as the tool's failure).
 */
export function remoteFailure(err: unknown): ToolResult {
  if (err instanceof SdkError) {
    const kind = err.code === SdkErrorCode.RequestTimeout ? 'timeout' : err.code === SdkErrorCode.ConnectionClosed ? 'network' : 'provider'
    return ToolResult.failed(toolError(kind, `The MCP request failed (${err.code}): ${shortMessage(err.message)}`))
  }
  const v1 = err instanceof Error && err.name === 'McpError' && typeof (err as { code?: unknown }).code === 'number'
  if (err instanceof ProtocolError || v1) {
    const code = (err as unknown as { code: number }).code
    const kind = v1 && code === V1_REQUEST_TIMEOUT ? 'timeout' : v1 && code === V1_CONNECTION_CLOSED ? 'network' : 'provider'
    return ToolResult.failed(toolError(kind, `The MCP server answered with an error (${code}): ${shortMessage((err as Error).message)}`))
  }
  throw err
}
