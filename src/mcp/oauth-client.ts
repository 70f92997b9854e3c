/**
 * OAuth for the client side (`importMcpTools` against a protected server). OAuth lives in the SDK
 * client's transport (`new StreamableHTTPClientTransport(url, { authProvider })`): these build the
 * `authProvider`. `mcpOAuthProvider` is the SDK's `OAuthClientProvider` for authorization code +
 * PKCE over a pluggable `TokenStorage`; `mcpClientCredentials` wraps the SDK's machine-to-machine
 * providers. Discovery, PKCE, client ID metadata documents, dynamic registration, RFC 9207 `iss`
 * checks, refresh and the 403 step-up are the SDK's own (`auth()`): nothing here re-implements them.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto'
import {
  resourceUrlFromServerUrl,
  type AuthorizationServerMetadata,
  type OAuthClientMetadata,
  type OAuthProtectedResourceMetadata,
  type StoredOAuthClientInformation,
  type StoredOAuthTokens,
} from '@modelcontextprotocol/server'
import { memoryTokenStorage, type TokenStorage, type TokenStorageValue } from './oauth-storage.js'

export { fileTokenStorage, memoryTokenStorage, type TokenStorage, type TokenStorageValue } from './oauth-storage.js'

/** What the SDK's `auth()` discovered about a server (its `OAuthDiscoveryState`), kept between the two legs of a redirect. */
export interface McpOAuthDiscoveryState {
  authorizationServerUrl: string
  resourceMetadataUrl?: string
  resourceMetadata?: OAuthProtectedResourceMetadata
  authorizationServerMetadata?: AuthorizationServerMetadata
}

type CredentialKind = 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'

/** The SDK's `OAuthClientProvider` as these factories build it (pass it as the transport's `authProvider`). */
export interface McpOAuthClientProvider {
  readonly redirectUrl: string | URL | undefined
  readonly clientMetadataUrl?: string
  readonly clientMetadata: OAuthClientMetadata
  clientInformation(ctx?: { issuer: string }): StoredOAuthClientInformation | undefined | Promise<StoredOAuthClientInformation | undefined>
  saveClientInformation?(info: StoredOAuthClientInformation, ctx?: { issuer: string }): void | Promise<void>
  tokens(ctx?: { issuer: string }): StoredOAuthTokens | undefined | Promise<StoredOAuthTokens | undefined>
  saveTokens(tokens: StoredOAuthTokens, ctx?: { issuer: string }): void | Promise<void>
  redirectToAuthorization(authorizationUrl: URL): void | Promise<void>
  saveCodeVerifier(codeVerifier: string): void | Promise<void>
  codeVerifier(): string | Promise<string>
  invalidateCredentials?(scope: CredentialKind): void | Promise<void>
  saveDiscoveryState?(state: McpOAuthDiscoveryState): void | Promise<void>
  discoveryState?(): McpOAuthDiscoveryState | undefined | Promise<McpOAuthDiscoveryState | undefined>
}

/** `mcpOAuthProvider`'s provider: it also sends an OAuth `state` and checks the callback's. */
export interface McpAuthorizationCodeProvider extends McpOAuthClientProvider {
  state(): Promise<string>
  /**
   * The callback's query when its `state` is the one this provider last sent (each is good once);
   * else throws, and the callback must be discarded. Pass the result to `transport.finishAuth`.
   */
  verifyCallback(query: URLSearchParams): Promise<URLSearchParams>
}

/** Options of `mcpOAuthProvider`. */
export interface McpOAuthProviderOptions {
  /** The MCP server's URL (the transport's): the storage keys begin with it. */
  readonly serverUrl: string | URL
  /** Where tokens, the client registration, the PKCE verifier and discovery state live (default: memory). */
  readonly storage?: TokenStorage
  /** Where the authorization server sends the user back (your callback, e.g. `http://127.0.0.1:8765/callback`). */
  readonly redirectUrl: string | URL
  /** Your client ID metadata document (an https URL with a path), used as the client ID where the server supports it. */
  readonly clientMetadataUrl?: string
  /** A pre-registered client ID (no dynamic registration), with its secret for a confidential client. */
  readonly clientId?: string
  readonly clientSecret?: string
  /** The issuer the pre-registered client belongs to: its credentials then go to no other authorization server. */
  readonly issuer?: string
  /** Scope to ask for when the server names none (in its challenge or `scopes_supported`). */
  readonly scope?: string
  /** `client_name` in the registration (default `"toolwire"`). */
  readonly clientName?: string
  /**
   * Called with the authorization URL to send the user to. When the user comes back to
   * `redirectUrl`, check the callback's query and pass it to the transport:
   * `transport.finishAuth(await provider.verifyCallback(url.searchParams))` (the SDK checks `iss`
   * there), then connect again or repeat the failed call.
   */
  onAuthorizationUrl(url: URL): void | Promise<void>
}

/** The storage entries of one server: `<server URL>#<kind>`, and `…#<kind>@<issuer>` where the issuer is known. */
class ServerEntries {
  private readonly base: string
  constructor(
    private readonly storage: TokenStorage,
    serverUrl: string | URL,
  ) {
    this.base = resourceUrlFromServerUrl(serverUrl).href
  }

  private key(kind: string, issuer?: string): string {
    return issuer === undefined ? `${this.base}#${kind}` : `${this.base}#${kind}@${issuer}`
  }

  async read<T>(kind: string, issuer?: string): Promise<T | undefined> {
    return (await this.storage.get(this.key(kind, issuer))) as T | undefined
  }

  /** Writes the latest value, and the issuer's own when known. */
  async write(kind: string, value: object, issuer?: string): Promise<void> {
    if (issuer !== undefined) await this.storage.set(this.key(kind, issuer), value as TokenStorageValue)
    await this.storage.set(this.key(kind), value as TokenStorageValue)
  }

  /** Deletes the latest value and the one of the issuer it was stamped with. */
  async remove(kind: string): Promise<void> {
    const latest = await this.read<{ issuer?: unknown }>(kind)
    if (typeof latest?.issuer === 'string') await this.storage.delete(this.key(kind, latest.issuer))
    await this.storage.delete(this.key(kind))
  }

  async invalidate(scope: CredentialKind): Promise<void> {
    for (const kind of ['client', 'tokens', 'verifier', 'discovery'] as const) if (scope === 'all' || scope === kind) await this.remove(kind)
    if (scope === 'all' || scope === 'verifier') await this.remove('state')
  }
}

function requireString(value: unknown, name: string, fn: string): void {
  if (typeof value !== 'string' || value === '') throw new TypeError(`${fn}: ${name} must be a non-empty string`)
}

/**
 * An `OAuthClientProvider` (authorization code with PKCE) for one MCP server, over `storage`.
 * The client registers dynamically, or uses `clientMetadataUrl` as its client ID where the
 * authorization server supports client ID metadata documents, or uses a pre-registered
 * `clientId`. Tokens and client information are kept per server URL and per issuer (the SDK
 * stamps each with the issuer and never sends them to another). The flow itself is the SDK's.
 *
 * @example
 * const provider = mcpOAuthProvider({
 *   serverUrl, storage: fileTokenStorage('.tokens.json'),
 *   redirectUrl: 'http://127.0.0.1:8765/callback', onAuthorizationUrl: (url) => openBrowser(url),
 * })
 * const transport = new StreamableHTTPClientTransport(new URL(serverUrl), { authProvider: provider })
 */
export function mcpOAuthProvider(options: McpOAuthProviderOptions): McpAuthorizationCodeProvider {
  if (typeof options.onAuthorizationUrl !== 'function') throw new TypeError('mcpOAuthProvider: onAuthorizationUrl must be a function')
  if (options.clientSecret !== undefined && options.clientId === undefined) throw new TypeError('mcpOAuthProvider: clientSecret needs clientId')
  if (options.clientId !== undefined) requireString(options.clientId, 'clientId', 'mcpOAuthProvider')
  const entries = new ServerEntries(options.storage ?? memoryTokenStorage(), options.serverUrl)
  const redirectUrl = String(options.redirectUrl)
  const clientMetadata: OAuthClientMetadata = {
    client_name: options.clientName ?? 'toolwire',
    redirect_uris: [redirectUrl],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: options.clientSecret === undefined ? 'none' : 'client_secret_basic',
    ...(options.scope === undefined ? {} : { scope: options.scope }),
  }
  const preRegistered: StoredOAuthClientInformation | undefined =
    options.clientId === undefined
      ? undefined
      : {
          client_id: options.clientId,
          ...(options.clientSecret === undefined ? {} : { client_secret: options.clientSecret }),
          ...(options.issuer === undefined ? {} : { issuer: options.issuer }),
        }
  const provider: McpAuthorizationCodeProvider = {
    redirectUrl,
    clientMetadata,
    ...(options.clientMetadataUrl === undefined ? {} : { clientMetadataUrl: options.clientMetadataUrl }),
    async clientInformation(ctx) {
      return (await entries.read<StoredOAuthClientInformation>('client', ctx?.issuer)) ?? preRegistered
    },
    saveClientInformation: (info, ctx) => entries.write('client', info, ctx?.issuer ?? info.issuer),
    tokens: (ctx) => entries.read<StoredOAuthTokens>('tokens', ctx?.issuer),
    saveTokens: (tokens, ctx) => entries.write('tokens', tokens, ctx?.issuer ?? tokens.issuer),
    redirectToAuthorization: (url) => options.onAuthorizationUrl(url),
    saveCodeVerifier: (codeVerifier) => entries.write('verifier', { codeVerifier }),
    async codeVerifier() {
      const stored = await entries.read<{ codeVerifier?: unknown }>('verifier')
      if (typeof stored?.codeVerifier !== 'string') throw new Error('no PKCE code verifier is stored for this MCP server: start the authorization again')
      return stored.codeVerifier
    },
    invalidateCredentials: (scope) => entries.invalidate(scope),
    saveDiscoveryState: (state) => entries.write('discovery', state),
    discoveryState: () => entries.read<McpOAuthDiscoveryState>('discovery'),
    async state() {
      const state = randomBytes(32).toString('base64url')
      await entries.write('state', { state })
      return state
    },
    async verifyCallback(query) {
      const sent = await entries.read<{ state?: unknown }>('state')
      const got = Buffer.from(query.get('state') ?? '')
      const expected = Buffer.from(typeof sent?.state === 'string' ? sent.state : '')
      if (expected.length === 0 || got.length !== expected.length || !timingSafeEqual(got, expected)) {
        throw new Error('the authorization callback does not carry the state this client sent: discard it')
      }
      await entries.remove('state')
      return query
    },
  }
  return provider
}

/** A private key for `private_key_jwt` client authentication (RFC 7523). */
export interface McpPrivateKeyJwt {
  /** PEM text, raw bytes, or a JWK. */
  readonly privateKey: string | Uint8Array | Record<string, unknown>
  /** The signing algorithm, e.g. `ES256` or `RS256`. */
  readonly algorithm: string
  /** The assertion's lifetime in seconds (default: the SDK's, 300). */
  readonly lifetimeSeconds?: number
}

/** Options of `mcpClientCredentials`: a client secret or a private key, not both. */
export interface McpClientCredentialsOptions {
  readonly clientId: string
  readonly clientSecret?: string
  readonly privateKeyJwt?: McpPrivateKeyJwt
  readonly scope?: string
  /** The authorization server these credentials belong to: they then go to no other (recommended). */
  readonly issuer?: string
  /** Keep tokens in `storage` (keys per `serverUrl`); default: in the provider's memory. */
  readonly storage?: TokenStorage
  readonly serverUrl?: string | URL
}

/**
 * A machine-to-machine provider (OAuth `client_credentials`): the SDK's `ClientCredentialsProvider`
 * (`clientSecret`, sent as `client_secret_basic`) or `PrivateKeyJwtProvider` (`privateKeyJwt`),
 * with its tokens kept in `storage` when given. Async because it loads `@modelcontextprotocol/client`
 * (which a client of a remote server has installed) on first use.
 */
export async function mcpClientCredentials(options: McpClientCredentialsOptions): Promise<McpOAuthClientProvider> {
  const fn = 'mcpClientCredentials'
  requireString(options.clientId, 'clientId', fn)
  if ((options.clientSecret === undefined) === (options.privateKeyJwt === undefined)) throw new TypeError(`${fn}: give exactly one of clientSecret and privateKeyJwt`)
  if (options.clientSecret !== undefined) requireString(options.clientSecret, 'clientSecret', fn)
  if (options.storage !== undefined && options.serverUrl === undefined) throw new TypeError(`${fn}: storage needs serverUrl (the keys are per server)`)
  const sdk = await import('@modelcontextprotocol/client')
  const common = {
    clientId: options.clientId,
    clientName: 'toolwire',
    ...(options.scope === undefined ? {} : { scope: options.scope }),
    ...(options.issuer === undefined ? {} : { expectedIssuer: options.issuer }),
  }
  const jwt = options.privateKeyJwt
  const provider =
    jwt === undefined
      ? new sdk.ClientCredentialsProvider({ ...common, clientSecret: options.clientSecret! })
      : new sdk.PrivateKeyJwtProvider({
          ...common,
          privateKey: jwt.privateKey,
          algorithm: jwt.algorithm,
          ...(jwt.lifetimeSeconds === undefined ? {} : { jwtLifetimeSeconds: jwt.lifetimeSeconds }),
        })
  if (options.storage !== undefined) {
    const entries = new ServerEntries(options.storage, options.serverUrl!)
    Object.assign(provider, {
      tokens: (ctx?: { issuer: string }) => entries.read<StoredOAuthTokens>('tokens', ctx?.issuer),
      saveTokens: (tokens: StoredOAuthTokens, ctx?: { issuer: string }) => entries.write('tokens', tokens, ctx?.issuer ?? tokens.issuer),
      invalidateCredentials: (scope: CredentialKind) => (scope === 'all' || scope === 'tokens' ? entries.remove('tokens') : undefined),
    })
  }
  return provider
}
