/**
 * What `serveHttp` takes and gives: `ServeHttpOptions` with the rules each option must meet,
 * and `HttpMcpServer`, the running server.
 */
import type { Server as HttpServer } from 'node:http'
import { MCP_SERVER_OPTION_RULES, type McpServerOptions } from './server.js'
import type { ServeHttpAuthOptions } from './auth/resource-server.js'
import { isHttpUrl, isOrigin } from './http-checks.js'
import type { ToolStore } from '../runtime/store/types.js'
import type { ApprovalSecrets } from '../runtime/store/approval.js'
import {
  isBoolean,
  isCount,
  isFunction,
  isListOf,
  isNonEmptyString,
  isObjectWith,
  isPlainObject,
  isPositiveInteger,
  isPositiveMs,
  isWaitMs,
  type OptionRule,
  type OptionRules,
} from './options.js'

/** Options of `serveHttp`. */
export interface ServeHttpOptions extends McpServerOptions {
  /** The address to bind (default `127.0.0.1`: only this machine can connect). */
  readonly host?: string
  /** The port (default 0: any free port; read it from `url`). */
  readonly port?: number
  /** The MCP endpoint's path (default `/mcp`). */
  readonly path?: string
  /**
   * No 2025 sessions: every 2025 POST is served by a fresh server, so any instance behind a
   * load balancer can answer any request (the 2026-07-28 era never has sessions). GET and
   * DELETE answer 405; a call that needs confirmation answers with its `confirmId` (no
   * elicitation: a request to the client could not come back to the same instance).
   */
  readonly stateless?: boolean
  /** A bearer token every request must carry (`Authorization: Bearer <token>`); 401 otherwise. */
  readonly token?: string
  /**
   * Be an OAuth 2.1 resource server: every request carries an access token from `auth.issuer`
   * for this server (see docs/auth.md). Not with `token`.
   */
  readonly auth?: ServeHttpAuthOptions
  /** Serve `/healthz` and `/metrics` without the token. */
  readonly metricsPublic?: boolean
  /**
   * Origins (`scheme://host[:port]`) allowed besides the loopback ones. A request with
   * any other `Origin` header gets 403 (DNS rebinding). Requests without `Origin` (not
   * from a browser) pass.
   */
  readonly allowedOrigins?: readonly string[]
  /**
   * Host names allowed in the `Host` header besides the loopback names. When bound to a
   * loopback address only loopback names pass unless listed here (DNS rebinding); when
   * bound elsewhere and this is not given, any Host passes.
   */
  readonly allowedHosts?: readonly string[]
  /** The largest request body, in bytes (default 4 MiB); larger gets 413. */
  readonly maxBodyBytes?: number
  /** A session unused this long is closed, in ms (default 30 minutes). */
  readonly sessionIdleMs?: number
  /** A session with no request after its `initialize` is closed this long after it, in ms (default 60 000). */
  readonly sessionUnusedMs?: number
  /**
   * The most sessions open at once (default 1000). A new one beyond closes the oldest session
   * that had no request after its `initialize`, else the least recently used one with nothing
   * in flight; when every session has a request in flight it gets 503.
   */
  readonly maxSessions?: number
  /**
   * The most sessions one client holds at once (default 100): a client is the principal
   * (issuer and subject) with `auth`, its bearer token when `token` is set (every holder of it
   * is one client), else its address. A new one beyond
   * closes that client's own sessions first, in the same order.
   */
  readonly maxSessionsPerClient?: number
  /**
   * The most bytes of SSE events a session keeps for `Last-Event-ID` replay (default 4 MiB;
   * and at most 1,000 events): the oldest go first, and an event larger than this is not
   * kept. A resume from an event no longer kept answers 400.
   */
  readonly sessionReplayBytes?: number
  /** Prometheus text for `/metrics` (default: `tm.metrics({ format: 'prometheus' })` when the manager has it). */
  readonly metrics?: () => string
  /** Called with transport and protocol errors (default: ignored; responses never carry them). */
  readonly onError?: (error: Error) => void
  /**
   * The confirmation page (default on): a call needing confirmation that the client
   * cannot ask the user about gets a single-use approval URL on this server
   * (`/confirm/<secret>`, no token needed: the link is the credential), valid for
   * `confirmPageTtlMs` (default 10 minutes), on this process only unless `store` and
   * `approvalSecret` are given.
   */
  readonly confirmPage?: boolean
  /**
   * The manager's durable store (`new ToolManager({ store, approvalSecret })`). With
   * `approvalSecret`, approval links keep nothing in this process: a link made by one
   * instance works on any instance on the same store (see docs/mcp.md).
   */
  readonly store?: ToolStore
  /**
   * The secret the instances share (the manager's `approvalSecret`, at least 16 bytes): it
   * seals approval links and makes their CSRF tokens. Needs `store`. Or a non-empty list,
   * newest first, to rotate it (as the manager's): the first seals new links, any opens one;
   * an empty list or a secret listed twice is a `TypeError` naming its place, never the value.
   * See docs/store.md, "Rotating secrets".
   */
  readonly approvalSecret?: ApprovalSecrets
  /** How long an approval link stays valid, in ms (default 10 minutes). */
  readonly confirmPageTtlMs?: number
  /**
   * With `store`: how long a client asked through URL elicitation waits for the run of its
   * call once the link was approved on another instance, in ms (default 30 000). It is
   * answered the result that instance recorded; a run still going after this is answered
   * refused `confirmation_running` (it runs there, once).
   */
  readonly confirmOutcomeWaitMs?: number
  /** The address clients and browsers reach this server at, for approval links (default: the bound address). Its origin is allowed. */
  readonly publicUrl?: string
  /**
   * How long `close()` waits for the requests in flight to finish, in ms (default 10 000),
   * so a restart behind a load balancer loses no call: meanwhile new requests get 503 with
   * `Retry-After` and `Connection: close` (nothing ran, any instance may take them).
   */
  readonly shutdownGraceMs?: number
}

const isOriginRule: OptionRule = { ok: isOrigin, must: 'an origin' }

/** What each of `ServeHttpOptions` must be (any other key is refused; a token is never shown). */
export const SERVE_HTTP_OPTION_RULES: OptionRules = Object.freeze({
  ...MCP_SERVER_OPTION_RULES,
  host: isNonEmptyString,
  port: { must: 'an integer from 0 to 65535', ok: (v) => Number.isInteger(v) && (v as number) >= 0 && (v as number) <= 65535 },
  path: { must: 'a path starting with "/", without spaces, "?" or "#"', ok: (v) => typeof v === 'string' && /^\/[^\s?#]*$/.test(v) },
  stateless: isBoolean,
  // what a client can send back after "Bearer ": one word of visible ASCII
  token: { must: 'a non-empty string of visible ASCII characters without spaces', ok: (v) => typeof v === 'string' && /^[\x21-\x7e]+$/.test(v) },
  auth: isPlainObject,
  metricsPublic: isBoolean,
  allowedOrigins: isListOf(isOriginRule, 'a list of origins (scheme://host[:port])'),
  allowedHosts: isListOf(isNonEmptyString, 'a list of non-empty host names'),
  maxBodyBytes: isPositiveInteger,
  sessionIdleMs: isPositiveMs,
  sessionUnusedMs: isPositiveMs,
  maxSessions: isPositiveInteger,
  maxSessionsPerClient: isPositiveInteger,
  sessionReplayBytes: isCount,
  metrics: isFunction,
  onError: isFunction,
  confirmPage: isBoolean,
  store: isObjectWith(['close'], 'a ToolStore'),
  // checked by approvalSecretList below, naming the place of a bad entry, never its value
  approvalSecret: { must: 'a string, a Uint8Array or a list of them', ok: () => true },
  confirmPageTtlMs: isWaitMs,
  confirmOutcomeWaitMs: isWaitMs,
  publicUrl: { must: 'an absolute http(s) URL', ok: isHttpUrl },
  shutdownGraceMs: isWaitMs,
})

/** A running `serveHttp`. */
export interface HttpMcpServer {
  /** The MCP endpoint, e.g. `http://127.0.0.1:43117/mcp`. */
  readonly url: string
  /** The underlying `node:http` server. */
  readonly http: HttpServer
  /** How many sessions are open. */
  sessions(): number
  /**
   * Stops listening, lets the requests in flight finish (up to `shutdownGraceMs`; a request
   * arriving meanwhile gets 503 and runs nothing), then closes every session (calls still
   * in flight are cancelled) and every connection.
   */
  close(): Promise<void>
}
