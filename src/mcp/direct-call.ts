/**
 * `tools/call` answered without the SDK's `Server` (issue #24, T9): a 2026-07-28 request whose
 * answer nothing in the SDK's dispatch can change (no progress token, log level, task, request
 * state or input responses; a client that declares no capabilities, so it can be asked nothing;
 * a tool that is served) is called here and answered as the `Server` answers it: the same
 * result, with the same `_meta` (the call id, the server's identity) and `resultType`. Any
 * other request goes the SDK's way. test/mcp-direct-call.test.ts compares both answers.
 */
import type { AuthInfo } from '@modelcontextprotocol/server'
import { MCP_ENVELOPE_KEYS, MCP_LEGACY_PROTOCOL_VERSION, MCP_PROTOCOL_VERSION } from './protocol.js'

/** Which era a server instance serves: `modern` (2026-07-28) or `legacy` (2025). */
export type McpEra = 'modern' | 'legacy'

/** A 2026-07-28 `tools/call` the SDK would dispatch unchanged: the tool's name and arguments. */
export interface DirectRequest {
  readonly id: string | number
  readonly name: string
  readonly args: Record<string, unknown>
}

/**
 * Runs a direct `tools/call` of `era` for the caller of `authInfo` (over HTTP with a token) and
 * answers its result as the SDK encodes it for that era (what it sends as `result`).
 */
export type DirectCall = (name: string, args: Record<string, unknown>, signal: AbortSignal, era: McpEra, authInfo?: AuthInfo) => Promise<Record<string, unknown>>

/** What a served server offers the transports for direct calls. */
export interface DirectCalls {
  /** Whether a tool of that name is served. */
  readonly serves: (name: string) => boolean
  readonly call: DirectCall
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && Object.getPrototypeOf(v) === Object.prototype
}

/** Whether `o` has no own keys other than `allowed` (at most `allowed.length` keys, each one of them). */
function onlyKeys(o: Record<string, unknown>, allowed: readonly string[]): boolean {
  for (const key in o) if (!allowed.includes(key)) return false
  return true
}

const REQUEST_KEYS: readonly string[] = ['jsonrpc', 'id', 'method', 'params']
const PARAMS_KEYS: readonly string[] = ['name', 'arguments', '_meta']
const ENVELOPE_KEYS: readonly string[] = [MCP_ENVELOPE_KEYS.protocolVersion, MCP_ENVELOPE_KEYS.clientCapabilities, MCP_ENVELOPE_KEYS.clientInfo]
const CLIENT_INFO_KEYS: readonly string[] = ['name', 'version']

/**
 * `message` as a direct call, or undefined when the SDK's dispatch must answer it: a JSON-RPC
 * request (a string or safe-integer id) of `tools/call` with only `name`, `arguments` (an
 * object) and an envelope of exactly the 2026-07-28 revision, an empty `clientCapabilities`
 * and, if any, a `clientInfo` of a string `name` and `version`.
 *
 * @example
 * const envelope = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} }
 * directRequestOf({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: {}, _meta: envelope } }) // { id: 1, name: 'echo', args: {} }
 * directRequestOf({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: envelope } }) // undefined
 */
export function directRequestOf(message: unknown): DirectRequest | undefined {
  const call = plainCallOf(message, PARAMS_KEYS)
  const meta = call?.params._meta
  if (call === undefined || !isPlainObject(meta) || !onlyKeys(meta, ENVELOPE_KEYS) || meta[MCP_ENVELOPE_KEYS.protocolVersion] !== MCP_PROTOCOL_VERSION) return undefined
  const capabilities = meta[MCP_ENVELOPE_KEYS.clientCapabilities]
  if (!isPlainObject(capabilities) || !onlyKeys(capabilities, [])) return undefined
  const info = meta[MCP_ENVELOPE_KEYS.clientInfo]
  if (info !== undefined && !(isPlainObject(info) && onlyKeys(info, CLIENT_INFO_KEYS) && typeof info.name === 'string' && typeof info.version === 'string')) return undefined
  return call.request
}

/** A JSON-RPC `tools/call` request of plain JSON with a string or safe-integer id and params of only `paramsKeys` (a string `name`, `arguments` an object without an own `__proto__` member, or none). */
function plainCallOf(message: unknown, paramsKeys: readonly string[]): { request: DirectRequest; params: Record<string, unknown> } | undefined {
  if (!isPlainObject(message) || message.method !== 'tools/call' || message.jsonrpc !== '2.0' || !onlyKeys(message, REQUEST_KEYS)) return undefined
  const id = message.id
  if (typeof id !== 'string' && !Number.isSafeInteger(id)) return undefined
  const params = message.params
  if (!isPlainObject(params) || !onlyKeys(params, paramsKeys)) return undefined
  const { name, arguments: given } = params
  if (typeof name !== 'string' || (given !== undefined && !isPlainObject(given))) return undefined
  // the SDK's parse of the arguments drops an own `__proto__` member: such a call goes its way
  if (given !== undefined && Object.hasOwn(given, '__proto__')) return undefined
  return { request: { id: id as string | number, name, args: given ?? {} }, params }
}

/**
 * A handler's `tools/call` result as the SDK encodes it. 2026-07-28: `resultType` `complete`
 * when the handler set none, and the server's identity in `_meta` unless the result names one.
 * 2025-11-25: the result as it is. `_meta` comes first, as the SDK's result schema puts it.
 */
export function encodedResult(result: Record<string, unknown>, serverInfo: Readonly<Record<string, unknown>>, era: McpEra = 'modern'): Record<string, unknown> {
  const { _meta: meta, ...rest } = result
  if (era === 'legacy') return meta === undefined ? rest : { _meta: meta, ...rest }
  const typed = rest.resultType === undefined ? { ...rest, resultType: 'complete' } : rest
  if (meta === undefined) return { _meta: { [MCP_ENVELOPE_KEYS.serverInfo]: serverInfo }, ...typed }
  if (!isPlainObject(meta) || meta[MCP_ENVELOPE_KEYS.serverInfo] !== undefined) return { _meta: meta, ...typed }
  return { _meta: { ...meta, [MCP_ENVELOPE_KEYS.serverInfo]: serverInfo }, ...typed }
}

/**
 * The JSON-RPC error of a direct call that threw, as the SDK's dispatch answers a handler's
 * throw: its `code` when a safe integer (else `-32603`), its message, its `data`.
 */
export function errorAnswerOf(error: unknown): { code: number; message: string; data?: unknown } {
  const e = (typeof error === 'object' && error !== null ? error : {}) as { code?: unknown; message?: unknown; data?: unknown }
  const code = Number.isSafeInteger(e.code) ? (e.code as number) : -32603
  const answer: { code: number; message: string; data?: unknown } = { code: code === -32002 ? -32602 : code, message: typeof e.message === 'string' ? e.message : 'Internal error' }
  if (e.data !== undefined) answer.data = e.data
  return answer
}

/**
 * `message` as a direct call on a 2025-11-25 connection whose `initialize` was answered for a
 * client that declared no elicitation, or undefined: a JSON-RPC request (a string or
 * safe-integer id) of `tools/call` with only `name` and `arguments` (an object), no `_meta`.
 */
export function legacyDirectRequestOf(message: unknown): DirectRequest | undefined {
  return plainCallOf(message, LEGACY_PARAMS_KEYS)?.request
}

const LEGACY_PARAMS_KEYS: readonly string[] = ['name', 'arguments']

/** Whether an `initialize` request opens a connection direct calls may serve: revision 2025-11-25, a client that declares no elicitation. */
export function initializeAllowsDirect(message: unknown): boolean {
  const params = isPlainObject(message) ? message.params : undefined
  if (!isPlainObject(params) || params.protocolVersion !== MCP_LEGACY_PROTOCOL_VERSION) return false
  const capabilities = params.capabilities
  return isPlainObject(capabilities) && capabilities.elicitation === undefined
}
