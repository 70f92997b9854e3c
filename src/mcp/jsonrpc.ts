/**
 * The JSON-RPC 2.0 shape check of an inbound MCP message, as `parseJSONRPCMessage` (the SDK's
 * zod schema) makes it, with a plain check for the usual request or notification first: an
 * object with only `jsonrpc: "2.0"`, `method`, an `id` that is a string or a safe integer (a
 * request) and `params` that is an object whose `_meta`, if any, is an object without
 * `progressToken` or the related-task key. Any other value goes to the SDK's parse, which
 * accepts or refuses it as before; the SDK checks the message again on its own entry.
 */
import { parseJSONRPCMessage, type JSONRPCMessage } from '@modelcontextprotocol/server'

const RELATED_TASK_META_KEY = 'io.modelcontextprotocol/related-task'

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

/** Whether `value` is a request or notification the SDK's schema accepts as it is, told without it. */
function isPlainRequest(value: unknown): boolean {
  if (!isPlainObject(value) || value.jsonrpc !== '2.0' || typeof value.method !== 'string') return false
  let keys = 2
  if (value.id !== undefined) {
    if (typeof value.id !== 'string' && !Number.isSafeInteger(value.id)) return false
    keys++
  }
  const params = value.params
  if (params !== undefined) {
    if (!isPlainObject(params)) return false
    const meta = params._meta
    if (meta !== undefined && (!isPlainObject(meta) || meta.progressToken !== undefined || meta[RELATED_TASK_META_KEY] !== undefined)) return false
    keys++
  }
  // a strict object: no other key
  return Object.keys(value).length === keys
}

/**
 * `value` as a JSON-RPC message; throws, as `parseJSONRPCMessage` does, when it is not one.
 *
 * @example
 * readJsonRpcMessage({ jsonrpc: '2.0', id: 1, method: 'ping' }) // the same message
 * readJsonRpcMessage({ jsonrpc: '2.0', id: 2.5, method: 'ping' }) // throws
 */
export function readJsonRpcMessage(value: unknown): JSONRPCMessage {
  return isPlainRequest(value) ? (value as JSONRPCMessage) : parseJSONRPCMessage(value)
}
