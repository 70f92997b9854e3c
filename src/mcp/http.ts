/**
 * MCP over Streamable HTTP: `serveHttp` puts a `ToolManager`'s tools behind one HTTP endpoint
 * (`/mcp`) serving both eras, plus `/healthz` and `/metrics`:
 *
 * - 2026-07-28 (a request carrying the `_meta` envelope, or `MCP-Protocol-Version: 2026-07-28`):
 *   the SDK v2's `createMcpHandler`, one server per request, no sessions.
 * - 2025-11-25 (`initialize` and what follows): sessions of our own (`sessions.ts`) over the
 *   SDK's `WebStandardStreamableHTTPServerTransport`, or with `stateless`, one server per request.
 *
 * In front of both sits a gate of our own that the SDK does not provide, or provides
 * differently: bearer tokens, Host and Origin checks on every path, the 2025
 * `MCP-Protocol-Version` check, the body limits (bytes, depth and values: the served manager's
 * `maxInputValues` plus the envelope) before any parsing, parse errors, JSON-RPC shape errors
 * and batches answered without an `id` (never `"id": null`), an unknown method answered 404
 * before dispatch, a short `-32602` for malformed `tools/call` params, wide integer ids, a
 * session table with per-client caps and an idle timeout, and an event store bounded by bytes.
 * See docs/mcp.md.
 */
import { randomUUID } from 'node:crypto'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import {
  createMcpHandler,
  SUPPORTED_PROTOCOL_VERSIONS,
  WebStandardStreamableHTTPServerTransport,
  type AuthInfo,
  type Server,
} from '@modelcontextprotocol/server'
import type { ServableManager } from './meta.js'
import { answerDirect, directHttpRequestOf, statelessDirectRequestOf } from './http-direct.js'
import { callParamsError, wiredServer, frameValueLimit, MCP_SERVER_OPTION_RULES, type McpServerOptions } from './server.js'
import { claimsModernEnvelope, MCP_LEGACY_METHODS, MCP_MODERN_METHODS, MCP_PROTOCOL_VERSION } from './protocol.js'
import { checkOptions, pick } from './options.js'
import { closeUnfinished, readBody } from './body.js'
import { prepareResourceServer, type ResourceServer } from './auth/resource-server.js'
import { SERVE_HTTP_OPTION_RULES, type HttpMcpServer, type ServeHttpOptions } from './http-options.js'
export type { ServeHttpAuthOptions } from './auth/resource-server.js'
export type { HttpMcpServer, ServeHttpOptions } from './http-options.js'
import { sendError, sendJson, sendText } from './http-answers.js'
import { httpGate } from './http-gate.js'
import { messageOfBody } from './http-message.js'
import { acceptsJsonAndEventStream, hostNameOf, isLoopbackAddress } from './http-checks.js'
import { MemoryEventStore } from './event-store.js'
import { sessionClientOf, SessionTable } from './sessions.js'
import { WideIds } from './ids.js'
import { forwardTo } from './web.js'
import { ConfirmSignIn } from './auth/signin.js'
import { CONFIRM_PATH, ConfirmationPages, SharedConfirmationPages, type ConfirmationLinks } from './confirm-page.js'
import { approvalSecretList } from '../runtime/store/approval.js'
import { principalOf } from './request-state.js'
import { principalOfAuthInfo } from './auth/auth-info.js'
import { serveTasks } from './task-serving.js'
import { taskOwner } from '../runtime/store/tasks.js'

/** The 406 answer to a POST whose `Accept` does not list both answer types. */
const NOT_ACCEPTABLE = 'Not Acceptable: Client must accept both application/json and text/event-stream'

interface Session {
  readonly transport: WebStandardStreamableHTTPServerTransport
  readonly server: Server
}

/** The 2025 protocol versions a request header may name (2026-07-28 goes to the modern era). */
const LEGACY_VERSIONS: readonly string[] = SUPPORTED_PROTOCOL_VERSIONS
const PROTOCOL_VERSION_SHAPE = /^\d{4}-\d{2}-\d{2}$/
const unsupportedVersion = `Bad Request: unsupported MCP-Protocol-Version (supported: ${[MCP_PROTOCOL_VERSION, ...LEGACY_VERSIONS].join(', ')})`

/**
 * Serves `tm` over MCP Streamable HTTP until `close()`.
 *
 * @example
 * const served = await serveHttp(tm, { port: 8808, token: process.env.TOOLWIRE_TOKEN })
 * console.log(served.url) // http://127.0.0.1:8808/mcp
 */
export async function serveHttp(tm: ServableManager, options: ServeHttpOptions = {}): Promise<HttpMcpServer> {
  checkOptions('serveHttp', options, SERVE_HTTP_OPTION_RULES)
  const host = options.host ?? '127.0.0.1'
  const path = options.path ?? '/mcp'
  const maxBodyBytes = options.maxBodyBytes ?? 4 * 1024 * 1024
  // a body over the manager's input limit (plus the envelope) is refused before JSON.parse
  const maxBodyValues = frameValueLimit(tm)
  const idleMs = options.sessionIdleMs ?? 30 * 60_000
  const replayBytes = options.sessionReplayBytes ?? 4 * 1024 * 1024
  const loopbackBound = isLoopbackAddress(host)
  const auth = options.auth === undefined ? undefined : prepareResourceServer(options.auth, { publicUrl: options.publicUrl, path, loopbackBound, token: options.token !== undefined })
  let resourceServer: ResourceServer | undefined
  const allowedHosts = new Set((options.allowedHosts ?? []).map((h) => hostNameOf(h)))
  const checkHost = loopbackBound || options.allowedHosts !== undefined
  const allowedOrigins = new Set((options.allowedOrigins ?? []).map((o) => o.replace(/\/+$/, '').toLowerCase()))
  const onError = (error: Error): void => options.onError?.(error)
  const metricsText =
    options.metrics ??
    (typeof (tm as { metrics?: unknown }).metrics === 'function'
      ? () => (tm as unknown as { metrics(o: { format: 'prometheus' }): string }).metrics({ format: 'prometheus' })
      : undefined)
  const sessions = new SessionTable<Session>(
    {
      maxSessions: options.maxSessions ?? 1000,
      maxPerClient: options.maxSessionsPerClient ?? 100,
      idleMs,
      unusedMs: options.sessionUnusedMs ?? 60_000,
    },
    (_id, session) => void session.server.close().catch(onError),
  )
  if ((options.store === undefined) !== (options.approvalSecret === undefined)) {
    throw new TypeError('serveHttp: store and approvalSecret go together (links shared through the store are sealed with the secret)')
  }
  // checked here, whether or not the page is on: a short or repeated secret, or an empty list, is told now
  const approvalSecrets = options.approvalSecret === undefined ? undefined : approvalSecretList(options.approvalSecret)
  if (options.auth?.signIn !== undefined && options.confirmPage === false) throw new TypeError('toolwire: serveHttp() option auth.signIn needs the confirmation page (not confirmPage: false)')
  let publicBase = ''
  const signIn =
    options.auth?.signIn === undefined
      ? undefined
      : new ConfirmSignIn({
          issuer: options.auth.issuer,
          // the resource server's default audience, known once listening
          audience: () => options.auth!.audience ?? `${publicBase}${path}`,
          publicUrl: () => publicBase,
          signIn: options.auth.signIn,
          onError,
          ...(approvalSecrets === undefined ? {} : { secret: approvalSecrets }),
        })
  // a missing openid-client is a TypeError now, not on the first page
  await signIn?.load()
  const ttl = { ...(options.confirmPageTtlMs === undefined ? {} : { ttlMs: options.confirmPageTtlMs }), ...(signIn === undefined ? {} : { signIn }) }
  const pages: ConfirmationLinks | undefined =
    options.confirmPage === false
      ? undefined
      : options.store !== undefined && approvalSecrets !== undefined
        ? new SharedConfirmationPages(tm, {
            ...ttl,
            ...(options.confirmOutcomeWaitMs === undefined ? {} : { outcomeWaitMs: options.confirmOutcomeWaitMs }),
            store: options.store,
            secret: approvalSecrets,
          })
        : new ConfirmationPages(tm, ttl)
  if (options.publicUrl !== undefined) {
    const u = new URL(options.publicUrl)
    publicBase = u.origin
    allowedOrigins.add(u.origin.toLowerCase())
    allowedHosts.add(hostNameOf(u.host))
  }
  const serverOptions: McpServerOptions =
    pages === undefined
      ? pick(options, MCP_SERVER_OPTION_RULES)
      : {
          ...pick(options, MCP_SERVER_OPTION_RULES),
          confirmationLink: (input) => {
            const path = pages.open(input)
            return { url: `${publicBase}${path}`, decided: (signal) => pages.decided(path, signal) }
          },
        }

  const { hostAllowed, originAllowed, authorized } = httpGate({ checkHost, allowedHosts, allowedOrigins, ...(options.token === undefined ? {} : { token: options.token }) })
  const ids = new WideIds()

  const clientOf = (req: IncomingMessage, caller: AuthInfo | undefined): string => sessionClientOf(req.socket.remoteAddress, caller, options.token !== undefined)

  // one requestState codec for every instance on the approval secret (else this process's key); the principal is the token's
  // with sign-in at the approval page, a confirmation is answered there only: never in a form a token answers
  const confirmationsAtPage = options.auth?.signIn !== undefined
  const servedTasks = serveTasks(tm, options.store, onError, confirmationsAtPage)
  const tasks = servedTasks?.tasks
  const { factory, direct } = wiredServer(tm, serverOptions, {
    ...(approvalSecrets === undefined ? {} : { secret: approvalSecrets }),
    ...(options.store === undefined ? {} : { store: options.store }),
    ...(tasks === undefined ? {} : { tasks }),
    principal: principalOf(options.token),
    owner: taskOwner(options.token),
    // with auth, a request that reached the server without a principal acts for no one (never as the operator)
    principalRequired: options.auth !== undefined,
    confirmationsAtPage,
  })
  // the 2026-07-28 era: one server per request, never a session
  const modernHandler = createMcpHandler(factory, { legacy: 'reject', responseMode: 'auto', onerror: onError })

  /** Opens a 2025 session's transport and server; the session is kept once its `initialize` is answered. */
  const openSession = async (client: string): Promise<Session> => {
    const server = (await factory({ era: 'legacy' })) as Server
    const transport: WebStandardStreamableHTTPServerTransport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      eventStore: new MemoryEventStore({ maxBytes: replayBytes }),
      retryInterval: 1000,
      onsessioninitialized: (id) => {
        sessions.add(id, client, { transport, server })
      },
      onsessionclosed: (id) => {
        sessions.delete(id)
      },
    })
    transport.onerror = onError
    server.onerror = onError
    await server.connect(transport)
    return { transport, server }
  }

  const forward = (req: IncomingMessage, res: ServerResponse, handle: (request: Request, parsedBody: unknown) => Promise<Response>, parsedBody?: unknown): Promise<void> =>
    forwardTo(req, res, handle, ids, parsedBody)
  // the caller's AuthInfo (with `auth`) travels per request: a session's later request may carry a newer token
  const viaSession = (session: Session, authInfo: AuthInfo | undefined) => (request: Request, parsedBody: unknown) =>
    session.transport.handleRequest(request, { ...(parsedBody === undefined ? {} : { parsedBody }), ...(authInfo === undefined ? {} : { authInfo }) })
  const viaModern = (authInfo: AuthInfo | undefined) => (request: Request, parsedBody: unknown) =>
    modernHandler.fetch(request, authInfo === undefined ? { parsedBody } : { parsedBody, authInfo })

  /**
   * A 2025 request without a session (`stateless`): a fresh server and transport answer it,
   * as plain JSON unless a progress token asks for progress (the SDK's own stateless legacy
   * leg always answers SSE).
   */
  const serveStatelessLegacy = async (req: IncomingMessage, res: ServerResponse, message: { params?: unknown }, authInfo: AuthInfo | undefined): Promise<void> => {
    const progressToken = (message.params as { _meta?: { progressToken?: unknown } } | undefined)?._meta?.progressToken
    const server = (await factory({ era: 'legacy' })) as Server
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: progressToken === undefined })
    transport.onerror = onError
    server.onerror = onError
    try {
      await server.connect(transport)
      await forward(req, res, (request, parsedBody) => transport.handleRequest(request, authInfo === undefined ? { parsedBody } : { parsedBody, authInfo }), message)
    } finally {
      await server.close().catch(onError)
    }
  }

  const sweep = setInterval(() => sessions.sweep(), Math.max(1000, Math.min(idleMs, options.sessionUnusedMs ?? 60_000, 60_000)))
  sweep.unref()

  /** A 2025 session of another principal is not found for this one (and stays open for its own). */
  const beginSession = (id: string, req: IncomingMessage, caller: AuthInfo | undefined): Session | undefined =>
    caller !== undefined && sessions.clientOf(id) !== clientOf(req, caller) ? undefined : sessions.begin(id)

  const handleMcp = async (req: IncomingMessage, res: ServerResponse, caller: AuthInfo | undefined): Promise<void> => {
    const method = req.method ?? 'GET'
    if (method !== 'POST' && method !== 'GET' && method !== 'DELETE') {
      sendError(res, { status: 405, code: -32000, message: 'Method not allowed', headers: { allow: options.stateless === true ? 'POST' : 'GET, POST, DELETE' } })
      return
    }
    const versionHeader = req.headers['mcp-protocol-version']
    const version = Array.isArray(versionHeader) ? versionHeader.join(',') : versionHeader
    const modernHeader = version === MCP_PROTOCOL_VERSION
    // a malformed version is refused before the body is read; a well-formed one the era decides on
    if (version !== undefined && !PROTOCOL_VERSION_SHAPE.test(version)) {
      sendError(res, { status: 400, code: -32000, message: unsupportedVersion })
      return
    }
    const sessionHeader = req.headers['mcp-session-id']
    const sessionId = Array.isArray(sessionHeader) ? sessionHeader[0] : sessionHeader

    if (method !== 'POST') {
      if (options.stateless === true || modernHeader) {
        const why = modernHeader ? 'the 2026-07-28 era has no sessions' : 'this server is stateless'
        sendError(res, { status: 405, code: -32000, message: `Method not allowed: ${why} (POST only)`, headers: { allow: 'POST' } })
        return
      }
      if (version !== undefined && !LEGACY_VERSIONS.includes(version)) {
        sendError(res, { status: 400, code: -32000, message: unsupportedVersion })
        return
      }
      if (sessionId === undefined) {
        sendError(res, { status: 400, code: -32000, message: 'Bad Request: Mcp-Session-Id header is required' })
        return
      }
      // a GET stream counts as use for as long as it is open
      const session = beginSession(sessionId, req, caller)
      if (session === undefined) {
        sendError(res, { status: 404, code: -32001, message: 'Session not found' })
        return
      }
      try {
        await forward(req, res, viaSession(session, caller))
      } finally {
        sessions.end(sessionId)
      }
      return
    }

    const body = await readBody(req, maxBodyBytes)
    if (body === undefined) {
      // answered at the limit, never read to its end: closeUnfinished ends the connection
      sendError(res, { status: 413, code: -32000, message: `Payload Too Large: the request body must not exceed ${maxBodyBytes} bytes`, headers: { connection: 'close' } })
      return
    }
    const read = messageOfBody(body.toString('utf8'), maxBodyValues, ids)
    if ('refusal' in read) {
      sendError(res, read.refusal)
      return
    }
    const message = read.message
    const modern = modernHeader || claimsModernEnvelope(message)
    if (!modern && version !== undefined && !LEGACY_VERSIONS.includes(version)) {
      sendError(res, { status: 400, code: -32000, message: unsupportedVersion })
      return
    }
    if (message.method !== undefined && message.id !== undefined) {
      if (!(modern ? MCP_MODERN_METHODS : MCP_LEGACY_METHODS).includes(message.method)) {
        sendError(res, { status: 404, code: -32601, message: 'Method not found', id: message.id, ids })
        return
      }
      const invalidParams = callParamsError(message)
      if (invalidParams !== undefined) {
        sendError(res, { status: 200, ...invalidParams, id: message.id, ids })
        return
      }
      // a call needing scopes the token lacks: the step-up challenge, and nothing runs
      const who = caller === undefined ? undefined : principalOfAuthInfo(caller)
      const lacking = message.method === 'tools/call' && who !== undefined ? resourceServer?.scopeRefusal(who.principal, (message.params as { name: string }).name) : undefined
      if (lacking !== undefined) {
        sendError(res, { ...lacking, code: -32000, id: message.id, ids })
        return
      }
      // a principal over its quota: 429 with Retry-After, and nothing runs; in flight until the response is over
      const admitted = message.method === 'tools/call' && who !== undefined ? resourceServer?.admitCall(who.key) : undefined
      if (admitted !== undefined) {
        if ('refusal' in admitted) {
          sendError(res, { ...admitted.refusal, code: -32000, id: message.id, ids })
          return
        }
        res.once('close', admitted.release)
      }
    }
    if (modern) {
      // as 2025-11-25's transport does: a 2026-07-28 client MUST accept both (basic/transports/streamable-http)
      if (!acceptsJsonAndEventStream(req.headers.accept)) {
        sendError(res, { status: 406, code: -32000, message: NOT_ACCEPTABLE, id: message.id, ids })
        return
      }
      // a call that asks nothing, with the headers the SDK accepts as they are: answered without its handler
      const directly = options.auth === undefined || caller !== undefined ? directHttpRequestOf(req, message, direct) : undefined
      if (directly !== undefined) return answerDirect(res, directly, 'modern', direct, caller, ids)
      await forward(req, res, viaModern(caller), message)
      return
    }
    if (options.stateless === true) {
      const directly = options.auth === undefined || caller !== undefined ? statelessDirectRequestOf(req, message, direct) : undefined
      if (directly !== undefined) return answerDirect(res, directly, 'legacy', direct, caller, ids)
      await serveStatelessLegacy(req, res, message, caller)
      return
    }

    if (sessionId === undefined) {
      if (message.method !== 'initialize') {
        sendError(res, { status: 400, code: -32000, message: 'Bad Request: Mcp-Session-Id header is required', id: message.id, ids })
        return
      }
      // room is made by closing a session unused since its initialize, else the least recently used
      if (!sessions.admit(clientOf(req, caller))) {
        sendError(res, { status: 503, code: -32000, message: 'Service Unavailable: too many sessions', id: message.id, headers: { 'retry-after': '60' }, ids })
        return
      }
      const session = await openSession(clientOf(req, caller))
      await forward(req, res, viaSession(session, caller), message)
      // an initialize the transport refused opened no session: nothing to keep
      if (session.transport.sessionId === undefined || sessions.get(session.transport.sessionId) === undefined) await session.server.close().catch(onError)
      return
    }
    const session = beginSession(sessionId, req, caller)
    if (session === undefined) {
      sendError(res, { status: 404, code: -32001, message: 'Session not found', id: message.id, ids })
      return
    }
    try {
      await forward(req, res, viaSession(session, caller), message)
    } finally {
      sessions.end(sessionId)
    }
  }

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (shuttingDown) {
      // shutting down: nothing runs here; the client (or its load balancer) may send it elsewhere
      req.resume()
      sendError(res, { status: 503, code: -32000, message: 'Service Unavailable: shutting down', headers: { 'retry-after': '1', connection: 'close' } })
      return
    }
    if (!hostAllowed(req)) {
      sendError(res, { status: 403, code: -32000, message: 'Forbidden: Host not allowed' })
      return
    }
    const url = new URL(req.url ?? '/', 'http://localhost')
    // the public metadata document: CORS *, no Origin check, no token
    if (resourceServer?.metadataPaths.has(url.pathname) === true) {
      resourceServer.serveMetadata(req, res)
      return
    }
    if (!originAllowed(req)) {
      sendError(res, { status: 403, code: -32000, message: 'Forbidden: Origin not allowed' })
      return
    }
    if (pages !== undefined && url.pathname.startsWith(CONFIRM_PATH)) {
      // the link is the credential: no bearer token (a person opens it in a browser)
      await pages.handle(req, res, url.pathname)
      return
    }
    const isOps = url.pathname === '/healthz' || url.pathname === '/metrics'
    let caller: AuthInfo | undefined
    if (!(isOps && options.metricsPublic === true) && resourceServer !== undefined) {
      const gate = await resourceServer.authenticate(req.headers.authorization)
      if ('refusal' in gate) {
        sendError(res, { ...gate.refusal, code: -32000 })
        return
      }
      caller = gate.authInfo
    } else if (!(isOps && options.metricsPublic === true)) {
      const auth = authorized(req)
      if (auth !== 'ok') {
        const challenge = auth === 'missing' ? 'Bearer realm="toolwire"' : 'Bearer realm="toolwire", error="invalid_token"'
        sendError(res, { status: 401, code: -32000, message: 'Unauthorized', headers: { 'www-authenticate': challenge } })
        return
      }
    }
    if (isOps) {
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        sendText(res, 405, 'method not allowed\n', undefined, { allow: 'GET' })
        return
      }
      if (url.pathname === '/healthz') {
        sendJson(res, 200, { status: 'ok', sessions: sessions.size })
        return
      }
      if (metricsText === undefined) {
        sendText(res, 404, 'no metrics\n')
        return
      }
      sendText(res, 200, metricsText(), 'text/plain; version=0.0.4; charset=utf-8')
      return
    }
    if (url.pathname !== path) {
      sendText(res, 404, 'not found\n')
      return
    }
    await handleMcp(req, res, caller)
  }

  let shuttingDown = false
  let inflight = 0
  let drained: (() => void) | undefined
  const http = createServer((req, res) => {
    // a body still coming once the answer is sent (over a limit, or refused unread) is not read to its end
    closeUnfinished(req, res, maxBodyBytes)
    // an open GET stream is not a request in flight: close() ends it
    const counted = req.method !== 'GET'
    if (counted) {
      inflight++
      res.once('close', () => {
        if (--inflight === 0) drained?.()
      })
    }
    if (shuttingDown) res.setHeader('connection', 'close')
    handle(req, res).catch((error: unknown) => {
      onError(error instanceof Error ? error : new Error(String(error)))
      // never a stack trace, never the error's own text
      if (!res.headersSent) sendError(res, { status: 500, code: -32603, message: 'Internal error' })
      else res.end()
    })
  })
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject)
    http.listen(options.port ?? 0, host, () => {
      http.off('error', reject)
      resolve()
    })
  })
  const address = http.address() as AddressInfo
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address
  const url = `http://${shownHost}:${address.port}${path}`
  if (publicBase === '') publicBase = `http://${shownHost}:${address.port}`
  resourceServer = auth?.(tm, `http://${shownHost}:${address.port}`)

  return {
    url,
    http,
    sessions: () => sessions.size,
    async close() {
      // stop listening first: new connections go to another instance
      const closing = new Promise<void>((resolve) => (http.listening ? http.close(() => resolve()) : resolve()))
      if (!shuttingDown) {
        shuttingDown = true
        const grace = options.shutdownGraceMs ?? 10_000
        http.closeIdleConnections()
        if (inflight > 0 && grace > 0) {
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, grace)
            timer.unref()
            drained = () => {
              clearTimeout(timer)
              resolve()
            }
          })
        }
      }
      clearInterval(sweep)
      pages?.close()
      await servedTasks?.close()
      await modernHandler.close().catch(onError)
      for (const id of sessions.ids()) sessions.close(id)
      http.closeAllConnections()
      await closing
    },
  }
}
