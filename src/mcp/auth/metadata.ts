/**
 * RFC 9728 protected resource metadata, and the scopes each tool needs. The document is public
 * and carries no credential: it is served with CORS `*` to any origin (the Host check still
 * applies), `OPTIONS` answers 204 and other methods than GET and HEAD 405. No MCP SDK import.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { ServableManager } from '../meta.js'

/** The RFC 9728 document toolwire serves. */
export interface ProtectedResourceMetadata {
  readonly resource: string
  readonly authorization_servers: readonly string[]
  readonly scopes_supported: readonly string[]
}

/** Tool names to the scopes their callers need, and the sorted union of them all. */
export interface ScopeTable {
  readonly byTool: ReadonlyMap<string, readonly string[]>
  readonly all: readonly string[]
}

/**
 * The scopes of `tm`'s tools (the manifest's `scopes`: the tool's own, else the manager's),
 * built once per set of registered tools.
 */
export function scopeTableOf(tm: ServableManager): () => ScopeTable {
  let defs: readonly unknown[] = []
  let built: ScopeTable | undefined
  return () => {
    const now = tm.list()
    if (built !== undefined && now.length === defs.length && now.every((def, i) => def === defs[i])) return built
    defs = now
    const byTool = new Map<string, readonly string[]>()
    const all = new Set<string>()
    for (const entry of tm.manifest()) {
      const scopes = entry.scopes ?? []
      byTool.set(entry.name, scopes)
      for (const s of scopes) all.add(s)
    }
    // MCP basic/authorization: offline_access is never advertised
    all.delete('offline_access')
    built = { byTool, all: [...all].sort() }
    return built
  }
}

/** Answers a request for the metadata document. */
export function sendMetadata(req: IncomingMessage, res: ServerResponse, doc: ProtectedResourceMetadata): void {
  const cors = { 'access-control-allow-origin': '*' }
  const method = req.method ?? 'GET'
  if (method === 'OPTIONS') {
    res.writeHead(204, { ...cors, 'access-control-allow-methods': 'GET, HEAD, OPTIONS', 'access-control-allow-headers': '*', 'access-control-max-age': '86400' })
    res.end()
    return
  }
  if (method !== 'GET' && method !== 'HEAD') {
    const text = JSON.stringify({ error: 'method_not_allowed', error_description: 'The metadata answers GET only' })
    res.writeHead(405, { ...cors, allow: 'GET, HEAD, OPTIONS', 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) })
    res.end(text)
    return
  }
  const text = JSON.stringify(doc)
  res.writeHead(200, { ...cors, 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), 'cache-control': 'no-cache' })
  res.end(method === 'HEAD' ? undefined : text)
}
