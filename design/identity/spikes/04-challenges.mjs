// Spike 04: the challenges this note proposes, read back by the SDK v2 client's own parser
// (@modelcontextprotocol/client 2.4.0, extractWWWAuthenticateParams, what its transport uses on 401/403),
// plus two facts about Node 20 the note relies on (crypto.hash for oidc-provider 9; require(esm) for jose).
// Run from the repository root: node design/identity/spikes/04-challenges.mjs
import { createRequire } from 'node:module'
import { extractWWWAuthenticateParams } from '@modelcontextprotocol/client'

const md = 'https://mcp.example.com/.well-known/oauth-protected-resource/mcp'
const challenges = {
  'no token': `Bearer resource_metadata="${md}"`,
  'no token, default scopes': `Bearer resource_metadata="${md}", scope="tools:read"`,
  'invalid token': `Bearer error="invalid_token", error_description="The access token expired", resource_metadata="${md}"`,
  'insufficient scope (SDK order)': `Bearer error="insufficient_scope", error_description="This tool needs more scopes", scope="files:write files:read", resource_metadata="${md}"`,
  'pitfall: a description holding scope=': `Bearer error="insufficient_scope", error_description="needs scope=admin", scope="files:write", resource_metadata="${md}"`,
}
for (const [name, value] of Object.entries(challenges)) {
  const res = new Response(null, { status: name.startsWith('insufficient') || name.startsWith('pitfall') ? 403 : 401, headers: { 'www-authenticate': value } })
  const p = extractWWWAuthenticateParams(res)
  console.log(`${name.padEnd(40)} -> ${JSON.stringify({ ...p, resourceMetadataUrl: p.resourceMetadataUrl?.href })}`)
}
const crypto = await import('node:crypto')
console.log(`node ${process.version}: typeof crypto.hash = ${typeof crypto.hash}`)
try {
  const jose = createRequire(import.meta.url)('jose')
  console.log(`require('jose') from CommonJS: ok (${typeof jose.jwtVerify}) - require(esm) is on in this Node; on 20.17/20.18 it is not, hence import()`)
} catch (e) {
  console.log(`require('jose') from CommonJS: ${e.code}`)
}
