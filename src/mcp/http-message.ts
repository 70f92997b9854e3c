/**
 * A POST body to one JSON-RPC message, or the error answering it: the shape limits (depth,
 * values) checked in one linear pass before `JSON.parse`, wide integer ids read as aliases,
 * batches refused (not part of MCP), and the JSON-RPC 2.0 shape checked.
 */
import { textShape } from '../core/json.js'
import type { JsonRpcErrorBody } from './http-answers.js'
import type { WideIds } from './ids.js'
import { readJsonRpcMessage } from './jsonrpc.js'

/** The deepest nesting a request body may have (as for stdio frames). */
export const MAX_BODY_DEPTH = 1000

/** A JSON-RPC message as `serveHttp` reads it. */
export interface HttpJsonRpcMessage {
  id?: string | number
  method?: string
  params?: unknown
}

/**
 * Reads `text` (a request body) as one JSON-RPC message holding at most `maxValues` values.
 *
 * @example
 * const read = messageOfBody('{"jsonrpc":"2.0","id":1,"method":"ping"}', 1000, new WideIds())
 * 'message' in read // true
 */
export function messageOfBody(text: string, maxValues: number, ids: WideIds): { message: HttpJsonRpcMessage } | { refusal: JsonRpcErrorBody } {
  const shape = textShape(text, MAX_BODY_DEPTH, maxValues)
  if (shape !== undefined) {
    const message = shape === 'deep' ? `Parse error: nested deeper than ${MAX_BODY_DEPTH} levels` : `Parse error: holds more than ${maxValues} values`
    return { refusal: { status: 400, code: -32700, message } }
  }
  let value: unknown
  try {
    // an integer id beyond ±2^53 (valid in MCP, refused by the SDK) travels as an alias, written back as sent
    value = ids.inbound(JSON.parse(text), text)
  } catch {
    return { refusal: { status: 400, code: -32700, message: 'Parse error: invalid JSON' } }
  }
  if (Array.isArray(value)) return { refusal: { status: 400, code: -32600, message: 'Invalid Request: JSON-RPC batches are not part of MCP' } }
  try {
    return { message: readJsonRpcMessage(value) as HttpJsonRpcMessage }
  } catch {
    const id = (value as { id?: unknown } | null)?.id
    const knownId = typeof id === 'string' || (typeof id === 'number' && Number.isSafeInteger(id)) ? id : undefined
    return { refusal: { status: 400, code: -32600, message: 'Invalid Request: not a JSON-RPC 2.0 message', id: knownId, ids } }
  }
}
