/**
 * A `tools/call` over HTTP answered without the SDK's handler (direct-call.ts): a 2026-07-28 one
 * whose standard headers are exactly what the SDK checks them against, or a 2025-11-25 one of a
 * stateless server, runs directly and is answered as the SDK answers it: `200`,
 * `application/json`, the JSON-RPC response.
 * test/mcp-direct-call.test.ts compares both answers.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { AuthInfo } from '@modelcontextprotocol/server'
import { directRequestOf, errorAnswerOf, legacyDirectRequestOf, type DirectCalls, type DirectRequest, type McpEra } from './direct-call.js'
import { acceptsJsonAndEventStream } from './http-checks.js'
import type { WideIds } from './ids.js'
import { MCP_LEGACY_PROTOCOL_VERSION, MCP_PROTOCOL_VERSION } from './protocol.js'

/** Where the SDK's Base64 form of an `Mcp-Name` value starts: such a header goes the SDK's way. */
const BASE64_SENTINEL = '=?base64?'

/**
 * `message` as a direct call when `req` carries it with exactly the headers the SDK would
 * accept unchanged: `Content-Type: application/json`, `MCP-Protocol-Version: 2026-07-28`,
 * `Mcp-Method: tools/call` and `Mcp-Name` equal to the tool's name; else undefined.
 */
export function directHttpRequestOf(req: IncomingMessage, message: unknown, direct: DirectCalls): DirectRequest | undefined {
  const h = req.headers
  if (h['content-type'] !== 'application/json' || h['mcp-protocol-version'] !== MCP_PROTOCOL_VERSION || h['mcp-method'] !== 'tools/call') return undefined
  const request = directRequestOf(message)
  if (request === undefined || h['mcp-name'] !== request.name || request.name.startsWith(BASE64_SENTINEL) || !direct.serves(request.name)) return undefined
  return request
}

/**
 * `message` as a direct 2025-11-25 call of a stateless server (no session, so the client can be
 * asked nothing) when `req` carries `Content-Type: application/json`, `MCP-Protocol-Version:
 * 2025-11-25` and an `Accept` of both JSON and SSE, and its params are only `name` and
 * `arguments` (no `_meta`, so no progress token); else undefined.
 */
export function statelessDirectRequestOf(req: IncomingMessage, message: unknown, direct: DirectCalls): DirectRequest | undefined {
  const h = req.headers
  // the SDK's 2025 transport reads Accept case-sensitively: another spelling goes its way (a 406)
  const accept = h.accept
  if (h['content-type'] !== 'application/json' || h['mcp-protocol-version'] !== MCP_LEGACY_PROTOCOL_VERSION || h['mcp-session-id'] !== undefined) return undefined
  if (accept === undefined || !accept.includes('application/json') || !accept.includes('text/event-stream') || !acceptsJsonAndEventStream(accept)) return undefined
  const request = legacyDirectRequestOf(message)
  return request !== undefined && direct.serves(request.name) ? request : undefined
}

/**
 * Runs `request` for the caller of `authInfo` and writes its answer; the client going away
 * first aborts the call (as the SDK's handler does), and nothing is written.
 */
export async function answerDirect(res: ServerResponse, request: DirectRequest, era: McpEra, direct: DirectCalls, authInfo: AuthInfo | undefined, ids: WideIds): Promise<void> {
  const controller = new AbortController()
  const abort = (): void => {
    if (!res.writableFinished) controller.abort()
  }
  res.once('close', abort)
  let frame: Record<string, unknown>
  try {
    frame = { result: await direct.call(request.name, request.args, controller.signal, era, authInfo), jsonrpc: '2.0', id: request.id }
  } catch (error) {
    frame = { jsonrpc: '2.0', id: request.id, error: errorAnswerOf(error) }
  } finally {
    res.off('close', abort)
  }
  if (controller.signal.aborted) return
  const text = ids.serialize(frame)
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) })
  res.end(text)
}
