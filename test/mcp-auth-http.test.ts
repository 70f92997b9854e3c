// serveHttp({ auth }): toolwire as an OAuth 2.1 resource server, against a real authorization
// server (oidc-provider on loopback, test/fixtures/auth/issuer.ts) and tokens minted with jose
// for what an issuer never issues. The metadata documents, the bare 401, a 401 invalid_token per
// bad token with nothing run, the 403 insufficient_scope step-up in both eras (2025 sessions and
// stateless), 2025 sessions bound to their subject, key rotation, introspection, 503 when the
// issuer is down, /healthz under auth, and the option checks.
import { createServer, request } from 'node:http'
import type { AddressInfo } from 'node:net'
import { extractWWWAuthenticateParams } from '@modelcontextprotocol/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ToolManager } from '../src/runtime/manager.js'
import { serveHttp, type HttpMcpServer } from '../src/mcp/http.js'
import { MCP_LEGACY_PROTOCOL_VERSION, MCP_PROTOCOL_VERSION } from '../src/mcp/protocol.js'
import { AUTH_INTERNALS, type AuthInternals, type ServeHttpAuthOptions } from '../src/mcp/auth/resource-server.js'
import { TOKEN_REFUSAL_TEXT, type TokenRefusalReason } from '../src/mcp/auth/challenge.js'
import { signingKey, startIssuer, type SigningKey, type TestIssuer } from './fixtures/auth/issuer.js'
import { claimsOf, FakeClock, forged, sign } from './fixtures/auth/mint.js'

const envelope = {
  'io.modelcontextprotocol/protocolVersion': MCP_PROTOCOL_VERSION,
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
}
const withInternals = (auth: ServeHttpAuthOptions, internals: AuthInternals): ServeHttpAuthOptions => Object.assign({ ...auth }, { [AUTH_INTERNALS]: internals })

let k1: SigningKey
let k2: SigningKey
let iss: TestIssuer
let served: HttpMcpServer
let stateless: HttpMcpServer
const clock = new FakeClock(Date.now())
let runs = 0

function manager(options: ConstructorParameters<typeof ToolManager>[0] = {}): ToolManager {
  const tm = new ToolManager(options)
  const scoped = (name: string, scopes: string[]) =>
    tm.register({
      name,
      inputSchema: { type: 'object' },
      scopes,
      run: () => {
        runs++
        return 'done'
      },
    })
  scoped('write_file', ['files:write', 'files:read'])
  scoped('read_file', ['files:read'])
  scoped('sync', ['offline_access', 'files:read'])
  scoped('ping', [])
  tm.register({ name: 'status', inputSchema: { type: 'object' }, run: () => (runs++, 'ok') })
  tm.register({ name: 'whoami', inputSchema: { type: 'object' }, run: (_input, ctx) => ({ principal: ctx.principal ?? null }) })
  return tm
}

beforeAll(async () => {
  ;[k1, k2] = await Promise.all([signingKey('k1'), signingKey('k2')])
  iss = await startIssuer({ scopes: ['files:read', 'files:write', 'files:admin', 'tools:use'], keys: [k1], otherResource: 'http://127.0.0.1:9/other' })
  const tm = manager()
  const auth = withInternals({ issuer: iss.issuer }, { now: clock.now })
  served = await serveHttp(tm, { auth })
  iss.setResource(served.url)
  stateless = await serveHttp(tm, { stateless: true, auth: { issuer: iss.issuer, audience: served.url } })
})
afterAll(async () => {
  await served?.close()
  await stateless?.close()
  await iss?.close()
})

interface Answer {
  status: number
  headers: Headers
  text: string
  frame: Record<string, unknown>
}

/** The JSON-RPC frame of an answer: JSON, or the last `data:` of an event stream. */
function frameOf(text: string): Record<string, unknown> {
  if (text.startsWith('{')) return JSON.parse(text) as Record<string, unknown>
  const data = text.split('\n').filter((l) => l.startsWith('data: ') && l.length > 6)
  return data.length === 0 ? {} : (JSON.parse(data.at(-1)!.slice(6)) as Record<string, unknown>)
}

async function send(url: string, init: { method?: string; token?: string; headers?: Record<string, string>; body?: unknown }): Promise<Answer> {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...init.headers }
  if (init.token !== undefined) headers.authorization = `Bearer ${init.token}`
  const res = await fetch(url, { method: init.method ?? 'POST', headers, ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }) })
  const text = await res.text()
  return { status: res.status, headers: res.headers, text, frame: text === '' ? {} : frameOf(text) }
}

/** A 2026-07-28 `tools/call`. */
const modernCall = (token: string | undefined, name: string, url = served.url) =>
  send(url, {
    ...(token === undefined ? {} : { token }),
    headers: { 'mcp-protocol-version': MCP_PROTOCOL_VERSION, 'mcp-method': 'tools/call', 'mcp-name': name },
    body: { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name, arguments: {}, _meta: envelope } },
  })

const legacyHeaders = (session?: string): Record<string, string> => ({ 'mcp-protocol-version': MCP_LEGACY_PROTOCOL_VERSION, ...(session === undefined ? {} : { 'mcp-session-id': session }) })

/** Opens a 2025 session as the holder of `token`. */
async function openSession(token: string, url = served.url): Promise<string> {
  const init = await send(url, {
    token,
    body: { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: MCP_LEGACY_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'raw', version: '1' } } },
  })
  expect(init.status).toBe(200)
  const session = init.headers.get('mcp-session-id')!
  expect((await send(url, { token, headers: legacyHeaders(session), body: { jsonrpc: '2.0', method: 'notifications/initialized' } })).status).toBe(202)
  return session
}

const legacyCall = (token: string, session: string | undefined, name: string, url = served.url) =>
  send(url, { token, headers: legacyHeaders(session), body: { jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name, arguments: {} } } })

const metadataUrl = () => `${new URL(served.url).origin}/.well-known/oauth-protected-resource/mcp`

describe('protected resource metadata (RFC 9728)', () => {
  it('is served at both well-known paths: resource = the audience, the issuer verbatim, the declared scopes', async () => {
    for (const path of ['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp']) {
      const res = await fetch(new URL(path, served.url), { headers: { origin: 'https://elsewhere.example' } })
      expect(res.status).toBe(200)
      expect(res.headers.get('access-control-allow-origin')).toBe('*')
      // sorted, and offline_access is never advertised
      expect(await res.json()).toEqual({ resource: served.url, authorization_servers: [iss.issuer], scopes_supported: ['files:read', 'files:write'] })
    }
  })

  it('answers HEAD, OPTIONS 204, and other methods 405 with Allow', async () => {
    const options = await fetch(metadataUrl(), { method: 'OPTIONS' })
    expect(options.status).toBe(204)
    expect(options.headers.get('access-control-allow-origin')).toBe('*')
    const head = await fetch(metadataUrl(), { method: 'HEAD' })
    expect(head.status).toBe(200)
    expect(head.headers.get('content-type')).toBe('application/json')
    const post = await fetch(metadataUrl(), { method: 'POST' })
    expect(post.status).toBe(405)
    expect(post.headers.get('allow')).toBe('GET, HEAD, OPTIONS')
  })

  it('still checks the Host header', async () => {
    const status = await new Promise<number>((resolve, reject) => {
      const u = new URL(metadataUrl())
      request({ host: u.hostname, port: u.port, path: u.pathname, headers: { host: 'evil.example' } }, (res) => {
        res.resume()
        resolve(res.statusCode!)
      })
        .on('error', reject)
        .end()
    })
    expect(status).toBe(403)
  })

  it('names publicUrl and path as the audience by default, and a configured audience exactly', async () => {
    const tm = manager()
    const pub = await serveHttp(tm, { publicUrl: 'https://mcp.example.test', path: '/tools/mcp', auth: { issuer: iss.issuer } })
    const api = await serveHttp(tm, { auth: { issuer: iss.issuer, audience: 'api://toolwire' } })
    try {
      const doc = (await (await fetch(new URL('/.well-known/oauth-protected-resource/tools/mcp', pub.url))).json()) as { resource: string }
      expect(doc.resource).toBe('https://mcp.example.test/tools/mcp')
      const challenge = (await modernCall(undefined, 'ping', pub.url)).headers.get('www-authenticate')
      expect(challenge).toBe('Bearer resource_metadata="https://mcp.example.test/.well-known/oauth-protected-resource/tools/mcp"')
      expect(((await (await fetch(new URL('/.well-known/oauth-protected-resource', api.url))).json()) as { resource: string }).resource).toBe('api://toolwire')
    } finally {
      await pub.close()
      await api.close()
    }
  })
})

describe('401: no token, or a bad one; nothing runs', () => {
  it('without a token: a bare challenge naming the metadata, read back by the SDK client', async () => {
    const before = runs
    const answer = await modernCall(undefined, 'write_file')
    expect(answer.status).toBe(401)
    expect(answer.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${metadataUrl()}"`)
    const parsed = extractWWWAuthenticateParams(new Response(null, { status: 401, headers: answer.headers }))
    expect(parsed.resourceMetadataUrl?.href).toBe(metadataUrl())
    expect(parsed.error).toBeUndefined()
    expect(runs).toBe(before)
  })

  it('with another scheme than Bearer (Basic): the same bare challenge, no error code (RFC 6750 3.1); a bearer with nothing after it is malformed', async () => {
    const before = runs
    const basic = await send(served.url, { headers: { authorization: `Basic ${btoa('alice:pw')}`, 'mcp-protocol-version': MCP_PROTOCOL_VERSION }, body: { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: envelope } } })
    expect(basic.status).toBe(401)
    expect(basic.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${metadataUrl()}"`)
    const empty = await send(served.url, { headers: { authorization: 'Bearer ', 'mcp-protocol-version': MCP_PROTOCOL_VERSION }, body: { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: envelope } } })
    expect(empty.headers.get('www-authenticate')).toMatch(/^Bearer error="invalid_token"/)
    expect(runs).toBe(before)
  })

  const now = () => clock.ms
  const good = () => iss.token('alice', 'files:read files:write')
  const cases: [string, () => Promise<string>, TokenRefusalReason][] = [
    ['expired', () => sign(k1, claimsOf(iss.issuer, served.url, now(), { exp: Math.floor(now() / 1000) - 120 })), 'expired'],
    ['not yet valid', () => sign(k1, claimsOf(iss.issuer, served.url, now(), { nbf: Math.floor(now() / 1000) + 120 })), 'not_yet_valid'],
    ['for another resource (from the issuer)', () => iss.token('alice', 'files:read', 'http://127.0.0.1:9/other'), 'audience'],
    ['from another issuer', () => sign(k1, claimsOf('http://127.0.0.1:1/other', served.url, now())), 'issuer'],
    ['with a bad signature', async () => forged(k1, {}, await good()).badSignature, 'signature'],
    ['alg none', async () => forged(k1, claimsOf(iss.issuer, served.url, now()), '').none, 'algorithm'],
    ['HS256 signed with the public key', async () => forged(k1, claimsOf(iss.issuer, served.url, now()), '').hmacWithPublicKey, 'algorithm'],
    ['signed with an unknown kid', () => sign(k2, claimsOf(iss.issuer, served.url, now())), 'unknown_key'],
    ['malformed', async () => 'abc.def.ghi', 'malformed'],
    ['without exp', () => sign(k1, claimsOf(iss.issuer, served.url, now(), { exp: undefined })), 'claims'],
    ['without typ', () => sign(k1, claimsOf(iss.issuer, served.url, now()), { typ: undefined }), 'type'],
    ['opaque (no introspection configured)', async () => 'opaque-token-value', 'opaque'],
  ]
  it.each(cases)('a token %s', async (_label, make, reason) => {
    const token = await make()
    const before = runs
    const answer = await modernCall(token, 'write_file')
    expect(answer.status).toBe(401)
    const header = answer.headers.get('www-authenticate')!
    expect(header).toBe(`Bearer error="invalid_token", error_description="${TOKEN_REFUSAL_TEXT[reason]}", resource_metadata="${metadataUrl()}"`)
    const parsed = extractWWWAuthenticateParams(new Response(null, { status: 401, headers: answer.headers }))
    expect(parsed).toMatchObject({ error: 'invalid_token', errorDescription: TOKEN_REFUSAL_TEXT[reason] })
    expect(answer.text).not.toContain(token)
    expect(header).not.toContain(token)
    expect(runs).toBe(before)
  })

})

describe('a valid token', () => {
  it('reaches the tool', async () => {
    const before = runs
    const answer = await modernCall(await iss.token('alice', 'files:read files:write'), 'write_file')
    expect(answer.status).toBe(200)
    expect((answer.frame.result as { isError: boolean }).isError).toBe(false)
    expect(runs).toBe(before + 1)
  })
})

describe('the principal of the token reaches the tool', () => {
  const principalIn = (answer: Answer) => (answer.frame.result as { structuredContent: { principal: unknown } }).structuredContent.principal
  const alice = (scopes: string[]) => ({ subject: 'alice', issuer: iss.issuer, clientId: 'alice', scopes })

  it('in every era: 2026-07-28, a 2025 session (also after a newer token with other scopes), 2025 stateless', async () => {
    const token = await iss.token('alice', 'files:read files:write')
    expect(principalIn(await modernCall(token, 'whoami'))).toEqual(alice(['files:read', 'files:write']))
    const session = await openSession(token)
    expect(principalIn(await legacyCall(token, session, 'whoami'))).toEqual(alice(['files:read', 'files:write']))
    expect(principalIn(await legacyCall(await iss.token('alice', 'files:read'), session, 'whoami'))).toEqual(alice(['files:read']))
    expect(principalIn(await legacyCall(token, undefined, 'whoami', stateless.url))).toEqual(alice(['files:read', 'files:write']))
  })
})

describe('403 insufficient_scope: every scope the tool needs, and nothing runs', () => {
  const expectStepUp = (answer: Answer, id: number) => {
    expect(answer.status).toBe(403)
    const header = answer.headers.get('www-authenticate')!
    expect(header).toMatch(/^Bearer error="insufficient_scope", scope="files:write files:read", resource_metadata="[^"]+", error_description="[^"=\\]+"$/)
    expect(extractWWWAuthenticateParams(new Response(null, { status: 403, headers: answer.headers }))).toMatchObject({ error: 'insufficient_scope', scope: 'files:write files:read' })
    expect(answer.frame).toMatchObject({ jsonrpc: '2.0', id, error: { code: -32000 } })
  }

  it('2026-07-28', async () => {
    const token = await iss.token('alice', 'files:read')
    const before = runs
    expectStepUp(await modernCall(token, 'write_file'), 7)
    expect(runs).toBe(before)
    // a tool within the token's scopes runs
    expect((await modernCall(token, 'read_file')).status).toBe(200)
    expect(runs).toBe(before + 1)
  })

  it('2025-11-25, in a session', async () => {
    const token = await iss.token('alice', 'files:read')
    const session = await openSession(token)
    const before = runs
    expectStepUp(await legacyCall(token, session, 'write_file'), 9)
    expect(runs).toBe(before)
  })

  it('2025-11-25, stateless', async () => {
    const token = await iss.token('alice', 'files:read')
    const before = runs
    expectStepUp(await legacyCall(token, undefined, 'write_file', stateless.url), 9)
    expect(runs).toBe(before)
    expect((await legacyCall(token, undefined, 'read_file', stateless.url)).status).toBe(200)
    expect(runs).toBe(before + 1)
  })
})

describe('scopes of the manager', () => {
  it('impliedScopes: a broader scope grants the narrower ones', async () => {
    const rs = await serveHttp(manager({ impliedScopes: { 'files:admin': ['files:write', 'files:read'] } }), { auth: { issuer: iss.issuer, audience: served.url } })
    try {
      const before = runs
      expect((await modernCall(await iss.token('alice', 'files:admin'), 'write_file', rs.url)).status).toBe(200)
      expect(runs).toBe(before + 1)
    } finally {
      await rs.close()
    }
  })

  it('a manager-wide default is needed by the tools declaring none, and listed in scopes_supported', async () => {
    const rs = await serveHttp(manager({ scopes: ['tools:use'] }), { auth: { issuer: iss.issuer, audience: served.url } })
    try {
      const doc = (await (await fetch(new URL('/.well-known/oauth-protected-resource', rs.url))).json()) as { scopes_supported: string[] }
      expect(doc.scopes_supported).toEqual(['files:read', 'files:write', 'tools:use'])
      const answer = await modernCall(await iss.token('alice', 'files:read'), 'status', rs.url)
      expect(answer.status).toBe(403)
      expect(answer.headers.get('www-authenticate')).toContain('scope="tools:use"')
      expect((await modernCall(await iss.token('alice', 'tools:use'), 'status', rs.url)).status).toBe(200)
    } finally {
      await rs.close()
    }
  })
})

describe('a 2025 session belongs to its subject', () => {
  it('is not found for another subject, and stays open for its own', async () => {
    const alice = await iss.token('alice', 'files:read')
    const bob = await iss.token('bob', 'files:read files:write')
    const session = await openSession(alice)
    const open = served.sessions()
    const before = runs
    const foreign = await legacyCall(bob, session, 'read_file')
    expect(foreign.status).toBe(404)
    expect(foreign.frame).toMatchObject({ error: { message: 'Session not found' } })
    expect((await send(served.url, { method: 'DELETE', token: bob, headers: legacyHeaders(session) })).status).toBe(404)
    expect((await send(served.url, { method: 'GET', token: bob, headers: legacyHeaders(session) })).status).toBe(404)
    expect(runs).toBe(before)
    expect(served.sessions()).toBe(open)
    expect((await legacyCall(alice, session, 'read_file')).status).toBe(200)
  })

  it('takes a newer token of the same subject at once, with its scopes', async () => {
    const first = await iss.token('alice', 'files:read')
    const session = await openSession(first)
    expect((await legacyCall(first, session, 'write_file')).status).toBe(403)
    const newer = await iss.token('alice', 'files:read files:write')
    const before = runs
    expect((await legacyCall(newer, session, 'write_file')).status).toBe(200)
    expect(runs).toBe(before + 1)
  })

  it('counts maxSessionsPerClient per principal', async () => {
    const capped = await serveHttp(manager(), { maxSessionsPerClient: 1, auth: { issuer: iss.issuer, audience: served.url } })
    try {
      const alice = await iss.token('alice', 'files:read')
      const bob = await iss.token('bob', 'files:read')
      const a1 = await openSession(alice, capped.url)
      const a2 = await openSession(alice, capped.url)
      await openSession(bob, capped.url)
      expect(capped.sessions()).toBe(2)
      expect((await legacyCall(alice, a1, 'read_file', capped.url)).status).toBe(404)
      expect((await legacyCall(alice, a2, 'read_file', capped.url)).status).toBe(200)
    } finally {
      await capped.close()
    }
  })
})

describe('/healthz and /metrics under auth', () => {
  it('need a valid access token, unless metricsPublic', async () => {
    expect((await fetch(new URL('/healthz', served.url))).status).toBe(401)
    const token = await iss.token('bob', 'files:read')
    expect((await fetch(new URL('/healthz', served.url), { headers: { authorization: `Bearer ${token}` } })).status).toBe(200)
    const open = await serveHttp(manager(), { metricsPublic: true, auth: { issuer: iss.issuer, audience: served.url } })
    try {
      expect((await fetch(new URL('/healthz', open.url))).status).toBe(200)
      expect((await modernCall(undefined, 'ping', open.url)).status).toBe(401)
    } finally {
      await open.close()
    }
  })
})

describe('the issuer', () => {
  it('rotating its keys is followed without a restart', async () => {
    const clock2 = new FakeClock(Date.now())
    const [a, b] = await Promise.all([signingKey('a'), signingKey('b')])
    const own = await startIssuer({ scopes: ['files:read', 'files:write'], keys: [a] })
    const rs = await serveHttp(manager(), { auth: withInternals({ issuer: own.issuer }, { now: clock2.now }) })
    own.setResource(rs.url)
    try {
      const old = await own.token('alice', 'files:read')
      expect((await modernCall(old, 'read_file', rs.url)).status).toBe(200)
      await own.rotate([b])
      const fresh = await own.token('alice', 'files:read')
      // the new kid is unknown until a refetch is allowed (30 s after the last attempt)
      clock2.advance(31)
      expect((await modernCall(fresh, 'read_file', rs.url)).status).toBe(200)
      // the removed key: refused once the cached set is replaced
      const answer = await modernCall(old, 'read_file', rs.url)
      expect(answer.status).toBe(401)
      expect(answer.headers.get('www-authenticate')).toContain(TOKEN_REFUSAL_TEXT.unknown_key)
    } finally {
      await rs.close()
      await own.close()
    }
  })

  it('down, with no key known: 503 with Retry-After, and nothing runs', async () => {
    const closed = createServer()
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r))
    const port = (closed.address() as AddressInfo).port
    await new Promise<void>((r) => closed.close(() => r()))
    const rs = await serveHttp(manager(), { auth: { issuer: `http://127.0.0.1:${port}` } })
    try {
      const before = runs
      const answer = await modernCall(await sign(k1, claimsOf(`http://127.0.0.1:${port}`, rs.url, Date.now())), 'ping', rs.url)
      expect(answer.status).toBe(503)
      expect(Number(answer.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
      expect(answer.headers.get('www-authenticate')).toBeNull()
      expect(runs).toBe(before)
    } finally {
      await rs.close()
    }
  })

  it('introspects opaque tokens when configured (RFC 7662)', async () => {
    const rs = await serveHttp(manager(), { auth: { issuer: iss.issuer, audience: served.url, introspection: { clientId: 'toolwire', clientSecret: 'toolwire-secret' } } })
    try {
      const before = runs
      const opaque = await iss.opaqueToken('alice', 'files:read files:write')
      expect(opaque.split('.')).toHaveLength(1)
      expect((await modernCall(opaque, 'write_file', rs.url)).status).toBe(200)
      expect(runs).toBe(before + 1)
      const narrow = await iss.opaqueToken('alice', 'files:read')
      expect((await modernCall(narrow, 'write_file', rs.url)).status).toBe(403)
      const junk = await modernCall('not-a-token-the-issuer-made', 'ping', rs.url)
      expect(junk.status).toBe(401)
      expect(junk.headers.get('www-authenticate')).toContain(TOKEN_REFUSAL_TEXT.inactive)
    } finally {
      await rs.close()
    }
  })
})

describe('options', () => {
  const tm = new ToolManager()
  it.each([
    ['an unknown nested key', { auth: { issuer: 'https://id.example.test', audiance: 'x' } }, /option "auth\.audiance"/],
    ['an unknown introspection key', { auth: { issuer: 'https://id.example.test', introspection: { clientId: 'a', clientSecret: 'b', secret: 'c' } } }, /"auth\.introspection\.secret"/],
    ['introspection without its secret', { auth: { issuer: 'https://id.example.test', introspection: { clientId: 'a' } } }, /auth\.introspection\.clientSecret is required/],
    ['no issuer', { auth: {} }, /auth\.issuer is required/],
    ['an http issuer off loopback', { auth: { issuer: 'http://id.example.test' } }, /option auth\.issuer must be an https URL/],
    ['an issuer with credentials in it', { auth: { issuer: 'https://user:pw@id.example.test' } }, /option auth\.issuer must be an https URL without credentials/],
    ['an issuer with a query', { auth: { issuer: 'https://id.example.test/?x=1' } }, /option auth\.issuer/],
    ['HS256 allowed', { auth: { issuer: 'https://id.example.test', algorithms: ['ES256', 'HS256'] } }, /option auth\.algorithms must be/],
    ['none allowed', { auth: { issuer: 'https://id.example.test', algorithms: ['none'] } }, /option auth\.algorithms must be/],
    ['more than a minute of skew', { auth: { issuer: 'https://id.example.test', clockToleranceSec: 120 } }, /auth\.clockToleranceSec/],
    ['an audience with a fragment', { auth: { issuer: 'https://id.example.test', audience: 'https://a.example/mcp#x' } }, /auth\.audience/],
    ['token and auth together', { token: 'tok-1234', auth: { issuer: 'https://id.example.test' } }, /token or auth, not both/],
    ['bound off loopback with no audience nor publicUrl', { host: '0.0.0.0', auth: { issuer: 'https://id.example.test' } }, /auth\.audience is required/],
    ['auth not an object', { auth: 'https://id.example.test' }, /option auth must be an object/],
  ])('refuses %s (TypeError)', async (_label, options, message) => {
    await expect(serveHttp(tm, options as never)).rejects.toThrow(TypeError)
    await expect(serveHttp(tm, options as never)).rejects.toThrow(message)
  })

  it('never names the introspection secret', async () => {
    const error = await serveHttp(tm, { auth: { issuer: 'http://id.example.test', introspection: { clientId: 'a', clientSecret: 'very-secret-value' } } }).catch((e: unknown) => e as Error)
    expect(String(error)).not.toContain('very-secret-value')
  })
})
