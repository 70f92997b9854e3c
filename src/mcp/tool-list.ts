/**
 * The `tools/list` entries of a served manager: each manifest entry as an MCP `Tool`, the list
 * built once per set of registered tools, and the tools a principal may see.
 */
import type { Tool } from '@modelcontextprotocol/server'
import type { JsonSchema, ToolDefinition, ToolManifestEntry } from '../runtime/manager.js'
import { MCP_NEEDS_CONFIRMATION_META_KEY, MCP_UNTRUSTED_CONTENT_META_KEY, type ScopeAwareManager, type ServableManager } from './meta.js'
import { missingScopes, type Principal } from '../core/principal.js'

/**
 * An MCP `tools/list` entry for a manifest entry.
 *
 * - `inputSchema` and `outputSchema` are passed verbatim (`$schema`, `$defs`,
 *   `additionalProperties` and everything else kept) when they are object schemas
 *   (`type: "object"`), as MCP requires. A boolean `true` input schema becomes
 *   `{ "type": "object" }`; an object schema without `type` gets `type: "object"` added.
 *   A non-object output schema is wrapped as `{ type: "object", properties: { result } }`,
 *   matching how `toMcp` wraps non-object structured output.
 * - hints map to annotations: `readOnly` → `readOnlyHint`, `destructive` →
 *   `destructiveHint`, `idempotent` → `idempotentHint` (only the hints the tool declares).
 * - `_meta`: `"toolwire/untrustedContent": true` for tools marked `untrustedContent`,
 *   `"toolwire/needsConfirmation": true` for tools that need confirmation.
 */
export function mcpToolOf(entry: ToolManifestEntry): Tool {
  const tool: Record<string, unknown> = { name: entry.name }
  if (entry.description !== undefined) tool.description = entry.description
  tool.inputSchema = objectSchema(entry.inputSchema)
  if (entry.outputSchema !== undefined) tool.outputSchema = outputObjectSchema(entry.outputSchema)
  const hints = entry.hints ?? {}
  const annotations: Record<string, boolean> = {}
  if (typeof hints.readOnly === 'boolean') annotations.readOnlyHint = hints.readOnly
  if (typeof hints.destructive === 'boolean') annotations.destructiveHint = hints.destructive
  if (typeof hints.idempotent === 'boolean') annotations.idempotentHint = hints.idempotent
  if (Object.keys(annotations).length > 0) tool.annotations = annotations
  const meta: Record<string, boolean> = {}
  if (hints.untrustedContent === true) meta[MCP_UNTRUSTED_CONTENT_META_KEY] = true
  if (entry.needsConfirmation === true) meta[MCP_NEEDS_CONFIRMATION_META_KEY] = true
  if (Object.keys(meta).length > 0) tool._meta = meta
  return tool as Tool
}

function objectSchema(schema: JsonSchema): Record<string, unknown> {
  if (typeof schema !== 'object' || schema === null) return { type: 'object' }
  if (schema.type === 'object') return schema as Record<string, unknown>
  return { ...schema, type: 'object' }
}

function outputObjectSchema(schema: JsonSchema): Record<string, unknown> {
  if (typeof schema === 'object' && schema !== null && schema.type === 'object') return schema as Record<string, unknown>
  if (typeof schema === 'object' && schema !== null && typeof schema.$schema === 'string') {
    const { $schema, $defs, ...inner } = schema as Record<string, unknown>
    const wrapped: Record<string, unknown> = { $schema, type: 'object', properties: { result: inner }, required: ['result'] }
    if ($defs !== undefined) wrapped.$defs = $defs
    return wrapped
  }
  return { type: 'object', properties: { result: schema }, required: ['result'] }
}

/** The `tools/list` entries of a manager, with the scopes each needs. */
export interface ToolList {
  /** Every tool, sorted by name: the list of a request without a principal. */
  readonly tools: Tool[]
  readonly names: ReadonlySet<string>
  /** The scopes each tool needs, in `tools`' order (`[]`: none). */
  readonly scopes: readonly (readonly string[])[]
  /** Every scope some tool needs, without duplicates (empty: every caller sees every tool). */
  readonly allScopes: readonly string[]
}

/**
 * The `tools/list` entries of `tm`, sorted by name, built once for each set of registered
 * tools (the same definitions in the same order answer the list already built). The list is
 * the same for every caller: {@link visibleTools} filters it per request, and nothing filtered
 * is kept.
 */
export function toolListOf(tm: ServableManager): () => ToolList {
  let defs: readonly ToolDefinition<never>[] = []
  let built: ToolList | undefined
  return () => {
    const now = tm.list()
    if (built !== undefined && now.length === defs.length && now.every((def, i) => def === defs[i])) return built
    defs = now
    const entries = [...tm.manifest()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    const tools = entries.map(mcpToolOf)
    const scopes = entries.map((entry) => entry.scopes ?? [])
    built = { tools, names: new Set(tools.map((t) => t.name)), scopes, allScopes: [...new Set(scopes.flat())] }
    return built
  }
}

/**
 * The tools of `list` that `principal` may call: those whose scopes it holds (directly or
 * through the manager's `impliedScopes`: `tm.scopesMissing`, as `tm.call` checks them). Without
 * a principal, every tool, as before.
 */
export function visibleTools(tm: ServableManager, list: ToolList, principal: Principal | undefined): Tool[] {
  if (principal === undefined || list.allScopes.length === 0) return list.tools
  const granted = principal.scopes
  const aware = tm as ServableManager & ScopeAwareManager
  const allowed = (name: string, scopes: readonly string[]): boolean =>
    scopes.length === 0 || (aware.scopesMissing === undefined ? missingScopes(granted, scopes).length === 0 : aware.scopesMissing(name, granted)?.length === 0)
  return list.tools.filter((tool, i) => allowed(tool.name, list.scopes[i]!))
}
