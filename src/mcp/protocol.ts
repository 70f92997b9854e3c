/**
 * The MCP revisions toolwire serves and what each era answers: the 2026-07-28 revision (the
 * modern era: per-request `_meta` envelope, no sessions, `server/discover`) and 2025-11-25 (the
 * legacy era: `initialize`, sessions over HTTP). No SDK import: the transports and the CLI
 * read these without loading the server.
 */

/** The MCP protocol revision toolwire serves (the modern era). */
export const MCP_PROTOCOL_VERSION = '2026-07-28'

/** The 2025 revision toolwire also serves at the same endpoint (`initialize`; older 2025 ones are negotiated). */
export const MCP_LEGACY_PROTOCOL_VERSION = '2025-11-25'

/** The `_meta` keys of the per-request envelope (2026-07-28). */
export const MCP_ENVELOPE_KEYS = Object.freeze({
  protocolVersion: 'io.modelcontextprotocol/protocolVersion',
  clientCapabilities: 'io.modelcontextprotocol/clientCapabilities',
  clientInfo: 'io.modelcontextprotocol/clientInfo',
  logLevel: 'io.modelcontextprotocol/logLevel',
  serverInfo: 'io.modelcontextprotocol/serverInfo',
})

/** The tasks extension's name (SEP-2663): toolwire answers `tasks/*` only to a request that declared it. */
export const MCP_TASKS_EXTENSION = 'io.modelcontextprotocol/tasks'

/** The task methods of the modern era (not served yet: no task exists, so every id is unknown). */
export const MCP_TASK_METHODS: readonly string[] = Object.freeze(['tasks/get', 'tasks/update', 'tasks/cancel'])

/** The requests a 2025-11-25 client may send (the HTTP gate answers any other 404 before dispatch). */
export const MCP_LEGACY_METHODS: readonly string[] = Object.freeze(['initialize', 'ping', 'tools/list', 'tools/call'])

/** The requests a 2026-07-28 client may send (the HTTP gate answers any other 404 before dispatch). */
export const MCP_MODERN_METHODS: readonly string[] = Object.freeze(['server/discover', 'tools/list', 'tools/call', ...MCP_TASK_METHODS])

/** Whether a parsed request claims the modern era: its `params._meta` carries the envelope's protocol version. */
export function claimsModernEnvelope(message: unknown): boolean {
  const params = (message as { params?: unknown } | null)?.params
  if (typeof params !== 'object' || params === null) return false
  const meta = (params as { _meta?: unknown })._meta
  return typeof meta === 'object' && meta !== null && MCP_ENVELOPE_KEYS.protocolVersion in meta
}

/** What is wrong with `tools/call` params, in a short sentence, or undefined when they are well-formed. */
export function callParamsProblem(params: unknown): string | undefined {
  if (typeof params !== 'object' || params === null || Array.isArray(params)) return 'tools/call needs a params object'
  const { name, arguments: args } = params as { name?: unknown; arguments?: unknown }
  if (name === undefined) return '"name" is required'
  if (typeof name !== 'string') return '"name" must be a string'
  if (args !== undefined && (typeof args !== 'object' || args === null || Array.isArray(args))) return '"arguments" must be an object'
  return undefined
}
