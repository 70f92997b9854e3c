// toolwire's OAuth client providers (src/mcp/oauth-client.ts) and token storage
// (src/mcp/oauth-storage.ts): the JSON file storage (mode 0600, writes by rename, keys per server),
// and, against a loopback MCP server that answers 401 and serves its own authorization server, that
// the SDK v2 transport asks the provider (authorization URL with PKCE and a state, the verifier kept
// in storage, never in the URL; the callback's state checked once), that finishAuth stores the tokens per server and issuer, that a wrong `iss`
// (RFC 9207) is refused before any token request, and that client credentials keep their tokens in
// storage. No error message carries a secret.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { linkSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { Client, StreamableHTTPClientTransport, UnauthorizedError } from '@modelcontextprotocol/client'
import { fileTokenStorage, mcpClientCredentials, mcpOAuthProvider, memoryTokenStorage, type TokenStorage } from '../src/mcp/oauth-client.js'

const dirs: string[] = []
function tempFile(): string {
  const dir = mkdtempSync(join(tmpdir(), 'toolwire-oauth-'))
  dirs.push(dir)
  return join(dir, 'sub', 'tokens.json')
}
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

describe('fileTokenStorage', () => {
  it('creates the file with mode 0600 and reads back what it wrote', async () => {
    const path = tempFile()
    const storage = fileTokenStorage(path)
    expect(await storage.get('a')).toBeUndefined()
    await storage.set('a', { access_token: 'x' })
    expect(statSync(path).mode & 0o777).toBe(0o600)
    expect(statSync(dirname(path)).mode & 0o777).toBe(0o700)
    expect(await storage.get('a')).toEqual({ access_token: 'x' })
    expect(await fileTokenStorage(path).get('a')).toEqual({ access_token: 'x' })
    await storage.delete('a')
    expect(await storage.get('a')).toBeUndefined()
  })

  it('replaces the file by rename: an old link keeps the old content, no temporary file is left', async () => {
    const path = tempFile()
    const storage = fileTokenStorage(path)
    await storage.set('a', { v: 1 })
    const old = `${path}.old`
    linkSync(path, old)
    await storage.set('a', { v: 2 })
    expect(JSON.parse(readFileSync(old, 'utf8'))).toEqual({ a: { v: 1 } })
    expect(JSON.parse(readFileSync(path, 'utf8'))).toEqual({ a: { v: 2 } })
    expect(statSync(path).mode & 0o777).toBe(0o600)
    expect(readdirSync(join(path, '..')).filter((f) => f.endsWith('.tmp'))).toEqual([])
  })

  it('keeps every one of many concurrent writes', async () => {
    const storage = fileTokenStorage(tempFile())
    await Promise.all(Array.from({ length: 40 }, (_, i) => storage.set(`k${i}`, { i })))
    for (let i = 0; i < 40; i++) expect(await storage.get(`k${i}`)).toEqual({ i })
  })

  it('names the file, never its content, when the file is not JSON', async () => {
    const path = tempFile()
    await fileTokenStorage(path).set('a', { v: 1 })
    writeFileSync(path, '{"tokens": "secret-access-token-123"')
    const err = await Promise.resolve(fileTokenStorage(path).get('a')).then(
      () => undefined,
      (e: unknown) => e as Error,
    )
    expect(err).toBeInstanceOf(Error)
    expect(err?.message).toContain(path)
    expect(err?.message).not.toContain('secret-access-token-123')
  })
})

describe('mcpOAuthProvider storage entries', () => {
  it('keeps tokens and client per issuer, and invalidates what the SDK names', async () => {
    const provider = mcpOAuthProvider({ serverUrl: 'https://mcp.example/mcp', redirectUrl: 'http://127.0.0.1:9/cb', onAuthorizationUrl: () => undefined })
    const a = { issuer: 'https://as-a.example' }
    await provider.saveClientInformation!({ client_id: 'c', issuer: a.issuer }, a)
    await provider.saveTokens({ access_token: 'at', token_type: 'Bearer', issuer: a.issuer }, a)
    await provider.saveCodeVerifier('v')
    expect((await provider.tokens(a))?.access_token).toBe('at')
    expect((await provider.tokens())?.access_token).toBe('at')
    expect(await provider.tokens({ issuer: 'https://as-b.example' })).toBeUndefined()
    expect(await provider.clientInformation({ issuer: 'https://as-b.example' })).toBeUndefined()
    await provider.invalidateCredentials!('tokens')
    expect(await provider.tokens(a)).toBeUndefined()
    expect(await provider.tokens()).toBeUndefined()
    expect((await provider.clientInformation(a))?.client_id).toBe('c')
    await provider.invalidateCredentials!('all')
    expect(await provider.clientInformation(a)).toBeUndefined()
    await expect(Promise.resolve(provider.codeVerifier())).rejects.toThrow(/no PKCE code verifier/)
  })
})

interface Loopback {
  url: string
  readonly tokenRequests: URLSearchParams[]
  /** `Authorization` headers the MCP endpoint saw. */
  readonly bearer: string[]
  issParameter: boolean
}

/** A loopback MCP endpoint (/mcp: 401 without a token, a minimal 2025 initialize with one) that is also its own authorization server. */
async function loopback(): Promise<{ server: Server; state: Loopback }> {
  const state: Loopback = { url: '', tokenRequests: [], bearer: [], issParameter: false }
  const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body))
  }
  const read = (req: IncomingMessage) => new Promise<string>((done) => {
    let body = ''
    req.on('data', (d: Buffer) => (body += d.toString())).on('end', () => done(body))
  })
  const server = createServer(async (req, res) => {
    const body = await read(req)
    const origin = state.url
    if (req.url === '/.well-known/oauth-protected-resource/mcp') return json(res, 200, { resource: `${origin}/mcp`, authorization_servers: [origin] })
    if (req.url === '/.well-known/oauth-authorization-server')
      return json(res, 200, {
        issuer: origin,
        authorization_endpoint: `${origin}/authorize`,
        token_endpoint: `${origin}/token`,
        registration_endpoint: `${origin}/register`,
        response_types_supported: ['code'],
        grant_types_supported: ['authorization_code', 'client_credentials'],
        code_challenge_methods_supported: ['S256'],
        authorization_response_iss_parameter_supported: state.issParameter,
      })
    if (req.url === '/register') return json(res, 201, { ...JSON.parse(body), client_id: 'registered-client' })
    if (req.url === '/token') {
      state.tokenRequests.push(new URLSearchParams(body))
      return json(res, 200, { access_token: 'AT-secret-value', token_type: 'Bearer', expires_in: 3600, refresh_token: 'RT-secret-value' })
    }
    if (req.url === '/mcp') {
      if (req.headers.authorization === undefined) {
        return json(res, 401, { error: 'invalid_token' }, { 'www-authenticate': `Bearer resource_metadata="${origin}/.well-known/oauth-protected-resource/mcp"` })
      }
      state.bearer.push(req.headers.authorization)
      if (req.method !== 'POST') return res.writeHead(405).end()
      const msg = JSON.parse(body) as { id?: number; method: string }
      if (msg.id === undefined) return res.writeHead(202).end()
      return json(res, 200, { jsonrpc: '2.0', id: msg.id, result: { protocolVersion: '2025-11-25', capabilities: { tools: {} }, serverInfo: { name: 'loopback', version: '1' } } })
    }
    json(res, 404, {})
  })
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done))
  const address = server.address()
  state.url = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`
  return { server, state }
}

describe('the providers against a loopback server that answers 401', () => {
  let server: Server
  let state: Loopback
  beforeAll(async () => ({ server, state } = await loopback()))
  afterAll(() => new Promise<void>((done) => server.close(() => done())))
  afterEach(() => {
    state.tokenRequests.length = 0
    state.bearer.length = 0
    state.issParameter = false
  })

  /** Connects a client whose transport authorizes with `authProvider`; resolves the transport and the connect's outcome. */
  async function connect(authProvider: ConstructorParameters<typeof StreamableHTTPClientTransport>[1]) {
    const transport = new StreamableHTTPClientTransport(new URL(`${state.url}/mcp`), authProvider)
    const client = new Client({ name: 'oauth-test', version: '1.0.0' })
    const error = await client.connect(transport).then(() => undefined, (e: unknown) => e as Error)
    return { transport, client, error }
  }

  it('asks the provider: the authorization URL carries PKCE and the resource, the verifier stays in storage', async () => {
    const path = tempFile()
    const urls: URL[] = []
    const provider = mcpOAuthProvider({ serverUrl: `${state.url}/mcp`, storage: fileTokenStorage(path), redirectUrl: 'http://127.0.0.1:9/callback', onAuthorizationUrl: (u) => void urls.push(u) })
    const { transport, error } = await connect({ authProvider: provider })
    expect(error).toBeInstanceOf(UnauthorizedError)
    expect(urls).toHaveLength(1)
    const asked = urls[0]!
    expect(`${asked.origin}${asked.pathname}`).toBe(`${state.url}/authorize`)
    expect(asked.searchParams.get('client_id')).toBe('registered-client')
    expect(asked.searchParams.get('code_challenge_method')).toBe('S256')
    expect(asked.searchParams.get('resource')).toBe(`${state.url}/mcp`)
    const verifier = await provider.codeVerifier()
    expect(asked.href).not.toContain(verifier)
    const file = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>
    expect(Object.keys(file).every((k) => k.startsWith(`${state.url}/mcp#`))).toBe(true)

    // the callback must carry the state sent, once
    const sent = asked.searchParams.get('state') ?? ''
    expect(sent).toMatch(/^[\w-]{43}$/)
    await expect(provider.verifyCallback(new URLSearchParams({ code: 'the-code', state: 'forged' }))).rejects.toThrow(/state this client sent/)
    await expect(provider.verifyCallback(new URLSearchParams({ code: 'the-code' }))).rejects.toThrow(/state this client sent/)
    const query = await provider.verifyCallback(new URLSearchParams({ code: 'the-code', state: sent }))
    await expect(provider.verifyCallback(query)).rejects.toThrow(/state this client sent/)
    await transport.finishAuth(query)
    expect(state.tokenRequests[0]?.get('code_verifier')).toBe(verifier)
    const tokens = JSON.parse(readFileSync(path, 'utf8')) as Record<string, { access_token?: string; issuer?: string }>
    expect(tokens[`${state.url}/mcp#tokens`]?.access_token).toBe('AT-secret-value')
    expect(tokens[`${state.url}/mcp#tokens@${state.url}`]?.issuer).toBe(state.url)
    expect(statSync(path).mode & 0o777).toBe(0o600)

    // a second server's provider on the same file sees none of it
    const other = mcpOAuthProvider({ serverUrl: 'http://127.0.0.1:1/other', storage: fileTokenStorage(path), redirectUrl: 'http://127.0.0.1:9/callback', onAuthorizationUrl: () => undefined })
    expect(await other.tokens()).toBeUndefined()

    const again = await connect({ authProvider: provider })
    expect(again.error).toBeUndefined()
    expect(state.bearer[0]).toBe('Bearer AT-secret-value')
    await again.client.close()
  })

  it('refuses a callback whose iss is not the issuer (RFC 9207) before any token request', async () => {
    state.issParameter = true
    const provider = mcpOAuthProvider({ serverUrl: `${state.url}/mcp`, storage: memoryTokenStorage(), redirectUrl: 'http://127.0.0.1:9/callback', onAuthorizationUrl: () => undefined })
    const { transport, error } = await connect({ authProvider: provider })
    expect(error).toBeInstanceOf(UnauthorizedError)
    const refused = await transport.finishAuth(new URLSearchParams({ code: 'the-code', iss: 'https://evil.example' })).then(() => undefined, (e: unknown) => e as Error)
    expect(refused?.name).toBe('IssuerMismatchError')
    expect(state.tokenRequests).toEqual([])
    expect(await provider.tokens()).toBeUndefined()
  })

  it('client credentials: tokens land in the storage, the secret in no error', async () => {
    const storage: TokenStorage = memoryTokenStorage()
    const provider = await mcpClientCredentials({ clientId: 'machine', clientSecret: 'cs-secret-value', issuer: state.url, storage, serverUrl: `${state.url}/mcp` })
    const { error, client } = await connect({ authProvider: provider })
    expect(error).toBeUndefined()
    expect(state.tokenRequests[0]?.get('grant_type')).toBe('client_credentials')
    expect((await storage.get(`${state.url}/mcp#tokens`))?.access_token).toBe('AT-secret-value')
    await client.close()
    // credentials bound to another issuer are never sent to this authorization server
    const elsewhere = await mcpClientCredentials({ clientId: 'machine', clientSecret: 'cs-secret-value', issuer: 'https://as.example' })
    const refused = await connect({ authProvider: elsewhere })
    expect(refused.error).toBeInstanceOf(Error)
    expect(refused.error?.message).not.toContain('cs-secret-value')
    expect(state.tokenRequests).toHaveLength(1)
    for (const bad of [{ clientId: 'm' }, { clientId: 'm', clientSecret: 'cs-secret-value', privateKeyJwt: { privateKey: 'k', algorithm: 'ES256' } }]) {
      const err = await mcpClientCredentials(bad).catch((e: unknown) => e as Error)
      expect(err).toBeInstanceOf(TypeError)
      expect((err as Error).message).not.toContain('cs-secret-value')
    }
  })
})
