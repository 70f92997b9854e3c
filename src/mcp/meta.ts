/**
 * The names toolwire's MCP server and client agree on: the `_meta` keys it sets, and what
 * a served manager must offer. No SDK import: the client, the transports and the CLI
 * read these without loading the server.
 */
import type { ToolManager } from '../runtime/manager.js'

/** The `_meta` key on a listed tool whose results are untrusted content (data, not instructions). */
export const MCP_UNTRUSTED_CONTENT_META_KEY = 'toolwire/untrustedContent'
/** The `_meta` key on a listed tool that needs the user's confirmation before it runs. */
export const MCP_NEEDS_CONFIRMATION_META_KEY = 'toolwire/needsConfirmation'
/** The `_meta` key on a `tools/call` result that carries the toolwire call id. */
export const MCP_CALL_ID_META_KEY = 'toolwire/callId'
/** The `_meta` key on a `tools/call` result that waits for confirmation: `{ confirmId, summary, url? }`. */
export const MCP_CONFIRMATION_META_KEY = 'toolwire/confirmation'

/**
 * The `_meta` key on a `tools/call` request that carries an idempotency key (a string of 1 to
 * 1024 characters): the server passes it to `tm.call`'s `idempotencyKey` (the manager needs a
 * store), so a retried call answers the recorded result instead of running again.
 */
export const MCP_IDEMPOTENCY_KEY_META_KEY = 'toolwire/idempotencyKey'
/** The `_meta` key on a `tools/call` result that is the recorded result of an earlier call with the same idempotency key (`true`). */
export const MCP_REPLAYED_META_KEY = 'toolwire/replayed'

/**
 * What the server needs of a manager (a `ToolManager`, possibly from another copy of toolwire).
 * `maxInputValues`, when the manager has it, bounds the values a frame may hold before it is parsed.
 */
export type ServableManager = Pick<ToolManager, 'call' | 'manifest' | 'list' | 'confirm' | 'resume' | 'on' | 'off'> & Partial<Pick<ToolManager, 'maxInputValues'>>

/**
 * What `tools/list` reads of a served manager when it has it: `tm.scopesMissing`, which scopes a
 * caller lacks for a tool (its `impliedScopes` followed). Without it (an older manager), the
 * manifest's `scopes` are compared exactly.
 * @internal
 */
export interface ScopeAwareManager {
  scopesMissing?(name: string, scopes: readonly string[]): readonly string[] | undefined
}
