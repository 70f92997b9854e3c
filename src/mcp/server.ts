/**
 * The MCP server: serves a `ToolManager`'s tools over the Model Context Protocol with the
 * official SDK v2's low-level `Server`, in both eras (2026-07-28 and 2025-11-25): the
 * `tools/list` and `tools/call` handlers, progress, cancellation and confirmations. The
 * transports are `stdio.ts` and `http.ts`; tool-module loading is `module.ts`.
 */
import { createRequire } from 'node:module'
import type { Ajv } from 'ajv'
import {
  isCallToolResult,
  ProtocolError,
  ProtocolErrorCode,
  Server,
  type CallToolResult,
  type InputRequiredResult,
  type jsonSchemaValidator,
  type McpServerFactory,
  type ServerContext,
} from '@modelcontextprotocol/server'
import { toMcp } from '../render/mcp.js'
import type { CallOptions, ToolEvents } from '../runtime/manager.js'
import type { CallResult } from '../core/view.js'
import { clipped } from '../core/redact.js'
import { MAX_INPUT_VALUES } from '../core/validate.js'
import { MCP_CALL_ID_META_KEY, MCP_IDEMPOTENCY_KEY_META_KEY, MCP_REPLAYED_META_KEY, type ServableManager } from './meta.js'
import { callParamsProblem, MCP_ENVELOPE_KEYS, MCP_LEGACY_METHODS, MCP_TASKS_EXTENSION } from './protocol.js'
import { toolwireVersion } from './module.js'
import type { ConfirmationLink, ConfirmationLinkInput } from './confirm-page.js'

export type { ConfirmationLink } from './confirm-page.js'
import { checkOptions, isBoolean, isFunction, isOneOf, isString, isWaitMs, type OptionRules } from './options.js'
import { traceContextOf } from '../observe/trace-context.js'
import { McpConfirmations, withMeta, type AskedCall, type ConfirmationWiring } from './input-required.js'
import { callAsTask, registerTaskHandlers, requestDeclaresTasks } from './task-handlers.js'
import type { McpTasks } from './tasks.js'
import { identityOf, withPrincipal, type PrincipalDefaults } from './principal-of.js'
import type { Principal } from '../core/principal.js'
import { toolListOf, visibleTools } from './tool-list.js'
import { encodedResult, type DirectCalls, type McpEra } from './direct-call.js'

/**
 * What `serveHttp` and `serveStdio` hand a server factory beyond the options: confirmations'
 * secret, the store, the tasks, and who a request without a principal acts for. @internal
 */
export interface ServerWiring extends ConfirmationWiring, PrincipalDefaults {
  /** The tasks extension on the manager's store (2026-07-28 only); absent: not advertised. */
  readonly tasks?: McpTasks
}
import type { RequestState } from './request-state.js'

export {
  MCP_CALL_ID_META_KEY,
  MCP_CONFIRMATION_META_KEY,
  MCP_IDEMPOTENCY_KEY_META_KEY,
  MCP_NEEDS_CONFIRMATION_META_KEY,
  MCP_REPLAYED_META_KEY,
  MCP_UNTRUSTED_CONTENT_META_KEY,
  type ServableManager,
} from './meta.js'

export { MCP_PROTOCOL_VERSION, MCP_LEGACY_PROTOCOL_VERSION } from './protocol.js'
export { mcpToolOf } from './tool-list.js'

/**
 * The requests a legacy-era server from `createMcpServer` answers (the SDK's `Server` adds
 * `initialize` and `ping`). The HTTP transport answers any other 2025 request 404 before
 * dispatch; a test keeps this list equal to the server's handlers.
 */
export const MCP_SERVED_METHODS: readonly string[] = MCP_LEGACY_METHODS

/**
 * The values a frame may hold beyond the tool arguments: the JSON-RPC envelope (`jsonrpc`,
 * `id`, `method`, `params`, `name`, `_meta` and its keys) holds about a dozen.
 */
const FRAME_ENVELOPE_VALUES = 64

/** The most values an MCP frame may hold by default: a default manager's input limit plus the envelope. */
export const MCP_FRAME_MAX_VALUES: number = MAX_INPUT_VALUES + FRAME_ENVELOPE_VALUES

/**
 * The most values a frame for `tm` may hold before it is parsed: the manager's
 * `maxInputValues` (100,000 when it has none) plus the envelope. A frame over it holds
 * arguments the manager would refuse, so the transports refuse it unparsed (`JSON.parse`
 * of a 200,000-key object blocks the event loop for hundreds of ms).
 * @internal
 */
export function frameValueLimit(tm: ServableManager): number {
  const limit = tm.maxInputValues
  return typeof limit === 'number' && Number.isSafeInteger(limit) && limit > 0 ? limit + FRAME_ENVELOPE_VALUES : MCP_FRAME_MAX_VALUES
}

/** Options of `createMcpServer`. */
export interface McpServerOptions {
  /** The server name in `initialize` (default `toolwire`). */
  readonly name?: string
  /** The server version in `initialize` (default: toolwire's version). */
  readonly version?: string
  /** Instructions for the client's model, sent in `initialize`. */
  readonly instructions?: string
  /**
   * How a call that needs confirmation is answered: `'elicit'` (default) asks the user
   * through MCP elicitation when the client declared that capability, otherwise answers
   * an `isError` result naming what to confirm; `'refuse'` always answers that result.
   * (A tool's pending input is asked as a form either way.)
   */
  readonly confirmations?: 'elicit' | 'refuse'
  /**
   * An approval URL for a call waiting for confirmation that the client cannot ask the
   * user about (`serveHttp` sets it to its confirmation page). The URL goes into the
   * result's text and `_meta["toolwire/confirmation"].url`.
   */
  readonly confirmationLink?: (input: ConfirmationLinkInput) => ConfirmationLink | undefined
  /**
   * Whether the approval URL given to a client without elicitation is also written in the
   * result's text, which the model reads (default `true`: a client that shows only the text
   * still lets its user approve). The link is the credential: a model with any tool that can
   * fetch a URL and post a form could approve its own call. `false` keeps the URL in
   * `_meta["toolwire/confirmation"].url` only, for an application that shows it to its user;
   * the text then says that the application holds the link.
   */
  readonly confirmationLinkInText?: boolean
  /**
   * How long a 2026-07-28 retry that accepted a URL-mode confirmation waits for the decision made
   * on the approval page, in ms (default 60,000), before it is asked again with the same link.
   */
  readonly urlConfirmationWaitMs?: number
  /**
   * How long a 2026-07-28 client may keep the `tools/list` result (its `ttlMs`, with
   * `cacheScope: "private"`), in ms (default 0: tools registered later are listed at once).
   */
  readonly toolListTtlMs?: number
}

/** What each of `McpServerOptions` must be (any other key is refused). @internal */
export const MCP_SERVER_OPTION_RULES: OptionRules = Object.freeze({
  name: isString,
  version: isString,
  instructions: isString,
  confirmations: isOneOf(['elicit', 'refuse']),
  confirmationLink: isFunction,
  confirmationLinkInText: isBoolean,
  urlConfirmationWaitMs: isWaitMs,
  toolListTtlMs: isWaitMs,
})

let mcpCallSeq = 0
/** A call id of an MCP request: unique in this process. */
const nextMcpCallId = (): string => `mcp_${process.pid.toString(36)}_${(++mcpCallSeq).toString(36)}`

const require = createRequire(import.meta.url)
let elicitationAjv: Ajv | undefined

/**
 * The validator of elicitation answers every server shares. The SDK's `Server` otherwise
 * builds an ajv instance of its own (~1 ms: most of the cost of a server, which stateless
 * HTTP builds per request). The one schema it sees is a confirmation form, checked once per
 * answer: it is compiled then removed, so the shared instance keeps nothing per call.
 */
const sharedElicitationValidator: jsonSchemaValidator = {
  getValidator(schema) {
    return (input) => {
      if (elicitationAjv === undefined) {
        const AjvClass = (require('ajv') as { default: new (options: object) => Ajv }).default
        elicitationAjv = new AjvClass({ strict: false, validateFormats: true, validateSchema: false, allErrors: true })
        ;(require('ajv-formats') as { default: (ajv: Ajv) => void }).default(elicitationAjv)
      }
      const ajv = elicitationAjv
      const validate = ajv.compile(schema)
      try {
        return validate(input)
          ? { valid: true, data: input as never, errorMessage: undefined }
          : { valid: false, data: undefined, errorMessage: ajv.errorsText(validate.errors) }
      } finally {
        ajv.removeSchema(schema)
      }
    }
  },
}

/** The JSON-RPC error (`-32602`, invalid params) for a `tools/call` of a tool that does not exist. */
export class UnknownToolError extends ProtocolError {
  constructor(readonly tool: string) {
    super(ProtocolErrorCode.InvalidParams, `Unknown tool: ${clipped(tool)}`)
  }
}

/** The JSON-RPC error (`-32602`, invalid params) for `tools/call` params that are not `{ name: string, arguments?: object }`. */
export class InvalidCallParamsError extends ProtocolError {
  constructor(problem: string) {
    super(ProtocolErrorCode.InvalidParams, `Invalid params: ${problem}`)
  }
}

/**
 * The answer frame for a `tools/call` request whose params are malformed, or undefined when
 * they are well-formed. The SDK's `Server` parses them before any handler runs and answers a
 * raw validation dump; the transports, which hold the parsed frame, answer this short
 * `-32602` instead (a `Server` wired to another transport answers the SDK's own).
 * @internal
 */
export function callParamsError(message: { method?: unknown; id?: unknown; params?: unknown }): { code: number; message: string } | undefined {
  if (message.method !== 'tools/call' || message.id === undefined) return undefined
  const problem = callParamsProblem(message.params)
  return problem === undefined ? undefined : { code: ProtocolErrorCode.InvalidParams, message: `Invalid params: ${problem}` }
}

/**
 * The result as the SDK would send it: a malformed one is an internal error. Only the parts a
 * tool returns (images, audio, files, links: the items after the first) can make one malformed;
 * a result of one text item (with an object as `structuredContent`) is valid as `toMcp` and
 * `withMeta` build it (test/mcp-params.test.ts checks it) and is not parsed again per call.
 */
function checkedResult(result: CallToolResult): CallToolResult {
  if (result.content.length > 1 && !isCallToolResult(result)) {
    throw new ProtocolError(ProtocolErrorCode.InternalError, 'Internal error: the tool result is not a valid CallToolResult')
  }
  return result
}

export type { McpEra } from './direct-call.js'

/** Per-call listeners of one manager event, subscribed to `tm` on first use. */
class CallSinks<E extends 'progress' | 'log'> {
  private readonly sinks = new Map<string, (payload: ToolEvents[E]) => void>()
  private listening = false

  constructor(
    private readonly tm: ServableManager,
    private readonly event: E,
  ) {}

  set(callId: string, sink: (payload: ToolEvents[E]) => void): void {
    if (!this.listening) {
      this.tm.on(this.event, (payload: ToolEvents[E]) => this.sinks.get(payload.callId)?.(payload))
      this.listening = true
    }
    this.sinks.set(callId, sink)
  }

  delete(callId: string): void {
    this.sinks.delete(callId)
  }
}

/**
 * A factory of MCP `Server`s (the SDK v2's low-level class) serving `tm`'s tools, one per
 * era: what `serveHttp` and `serveStdio` hand to the SDK's entries. The work shared by every
 * instance (options, the sorted tool list, the elicitation validator) is done once here; an
 * instance is cheap, as stateless HTTP builds one per request.
 *
 * - `tools/list` from `tm.manifest()`, sorted by name; on 2026-07-28 with `ttlMs`
 *   (`toolListTtlMs`, default 0) and `cacheScope: "private"`.
 * - `tools/call` through `tm.call` rendered with `toMcp`. An unknown tool is a JSON-RPC error
 *   `-32602` (`UnknownToolError`), and so are malformed params. Invalid arguments, refusals
 *   and tool failures are `isError: true` results.
 * - A call that needs confirmation, or a tool's `pending({ kind: 'input', schema })`, asks the user
 *   when the client can be asked (input-required.ts): a 2026-07-28 client that declared elicitation
 *   gets `input_required` and a sealed `requestState`; a 2025 client with a session or over stdio,
 *   the same input requests as `elicitation/create` (the SDK's legacy shim). A 2026-07-28 client
 *   that declared the tasks extension gets a task (task-handlers.ts, with `wiring.tasks`);
 *   otherwise a confirmation answers an `isError` result naming what to confirm, with
 *   `_meta["toolwire/confirmation"]`, and a pending input the pending `isError` result.
 * - Cancellation (`notifications/cancelled`, or a closed 2026-07-28 response stream) aborts the
 *   call's signal; `ctx.reportProgress` becomes `notifications/progress` when the request
 *   carried a `_meta.progressToken` (non-increasing progress values are dropped).
 * - `_meta["toolwire/idempotencyKey"]` on the request becomes `tm.call`'s `idempotencyKey`: a
 *   retry with the same key and input answers the recorded result, with `_meta["toolwire/replayed"]: true`.
 * - Every result carries `_meta["toolwire/callId"]`.
 * - Principals (issue #23): a request whose `AuthInfo` carries a verified principal (`serveHttp`
 *   with `auth` puts one there, per request) acts for it everywhere: `tm.call`, `tm.confirm` and
 *   `tm.resume` of its MRTR retries and 2025 elicitation answers, the tasks it makes and answers
 *   (owned by `taskOwnerOf` its key: another principal's task is "not found"), and the
 *   `requestState` it is given (bound to its `principalKey`: a newer token of the same subject
 *   opens it). `tools/list` shows it only the tools whose `scopes` it holds (the manager's
 *   `impliedScopes` followed, as `tm.call` checks them). Without one, as before.
 * - 2026-07-28 only: the `logging` capability, and `ctx.log` becomes `notifications/message`
 *   on the request's stream when the request set `_meta["io.modelcontextprotocol/logLevel"]`
 *   (entries below that level are dropped). A 2025 client sees no logging capability.
 * - 2026-07-28 only: `tasks/get`, `tasks/update` and `tasks/cancel` answer `-32021` to a request
 *   that did not declare the `io.modelcontextprotocol/tasks` extension; `serveHttp` or `serveStdio`
 *   on a store with tasks advertises the extension and serves them, else every task is "Task not found".
 */
export function createMcpServerFactory(tm: ServableManager, options: McpServerOptions = {}): McpServerFactory {
  return wiredServer(tm, options, {}).factory
}

/** A server factory and its direct calls (direct-call.ts). @internal */
export interface WiredServer {
  readonly factory: McpServerFactory
  readonly direct: DirectCalls
}

/** {@link createMcpServerFactory} with what `serveHttp` and `serveStdio` add (the approval secret, the principal, the tasks), and its direct calls. @internal */
export function wiredServer(tm: ServableManager, options: McpServerOptions, wiring: ServerWiring): WiredServer {
  checkOptions('createMcpServer', options, MCP_SERVER_OPTION_RULES)
  const confirmations = new McpConfirmations(tm, wiring, options)
  const info = { name: options.name ?? 'toolwire', version: options.version ?? toolwireVersion() }
  const hint = { ttlMs: options.toolListTtlMs ?? 0, cacheScope: 'private' as const }
  const toolList = toolListOf(tm)
  const progressSinks = new CallSinks(tm, 'progress')
  const logSinks = new CallSinks(tm, 'log')

  /** The result of a call that asks the client nothing. */
  const answerOf = (name: string, view: CallResult, callId: string, replayed: boolean, principal: Principal | undefined): CallToolResult => {
    if (view.status === 'needs_confirmation') return checkedResult(withMeta(confirmations.unanswered(name, view, principal), { [MCP_CALL_ID_META_KEY]: callId }))
    const meta: Record<string, unknown> = { [MCP_CALL_ID_META_KEY]: callId }
    if (view.replayed === true || replayed) meta[MCP_REPLAYED_META_KEY] = true
    return checkedResult(withMeta(toMcp(view) as unknown as CallToolResult, meta))
  }

  const callTool = async (server: Server, era: McpEra, request: { params: unknown }, ctx: ServerContext): Promise<CallToolResult | InputRequiredResult> => {
    const problem = callParamsProblem(request.params)
    if (problem !== undefined) throw new InvalidCallParamsError(problem)
    const { name, arguments: given, _meta: requestMeta } = request.params as { name: string; arguments?: Record<string, unknown>; _meta?: Record<string, unknown> }
    const args = given ?? {}
    // who the request acts for: every tm.* call below and the state it seals carry it
    const identity = identityOf(ctx, wiring)
    if (!toolList().names.has(name)) throw new UnknownToolError(name)
    // a retry answering input requests (2026-07-28), or the SDK's legacy shim re-entering with the answers (2025):
    // the call it continues keeps its id (sealed in the state), so progress and the result name the one call
    const state = ctx.mcpReq.requestState<RequestState>()
    const callId = state?.callId ?? nextMcpCallId()
    const progressToken = ctx.mcpReq._meta?.progressToken
    if (progressToken !== undefined) {
      let last = -Infinity
      progressSinks.set(callId, (event) => {
        if (!(event.progress > last)) return
        last = event.progress
        const params: Record<string, unknown> = { progressToken, progress: event.progress }
        if (event.total !== undefined) params.total = event.total
        if (event.message !== undefined) params.message = event.message
        ctx.mcpReq.notify({ method: 'notifications/progress', params }).catch(() => undefined)
      })
    }
    // 2026-07-28 only, and only when the request asked for it (`logLevel`): the SDK drops what is below that level
    if (era === 'modern' && (ctx.mcpReq.envelope as Record<string, unknown> | undefined)?.[MCP_ENVELOPE_KEYS.logLevel] !== undefined) {
      logSinks.set(callId, (event) => void ctx.mcpReq.log(event.level, event.data).catch(() => undefined))
    }
    const signal = ctx.mcpReq.signal
    try {
      // present but malformed (not a string of 1 to 1024 characters), or without a store: tm.call refuses it, nothing runs
      const idempotencyKey = (ctx.mcpReq._meta as Record<string, unknown> | undefined)?.[MCP_IDEMPOTENCY_KEY_META_KEY] ?? requestMeta?.[MCP_IDEMPOTENCY_KEY_META_KEY]
      const callOptions: CallOptions = withPrincipal(idempotencyKey === undefined ? { signal, callId } : { signal, callId, idempotencyKey: idempotencyKey as string }, identity.principal)
      // the request's _meta traceparent/tracestate/baggage parent the call's span (issue #22 Deliver 4)
      const asked: AskedCall = { server, era, ctx, tool: name, args, callId, identity }
      let view: CallResult
      let replayed = false
      if (state !== undefined) {
        // nothing runs unless it is approved (or the input given)
        const answered = await confirmations.answer(asked, state)
        if (answered.kind === 'ask') return answered.result
        view = answered.view
        replayed = answered.kind === 'result' && answered.replayed
      } else if (era === 'modern' && wiring.tasks !== undefined && requestDeclaresTasks(ctx)) {
        // a call that parks, or a long-running tool, becomes a task (before any MRTR answer)
        const started = (detached: boolean): Promise<CallResult> => {
          const { signal: _signal, ...rest } = callOptions
          return tm.call(name, args, { ...(detached ? rest : callOptions), traceContext: traceContextOf(requestMeta) })
        }
        const answered = await callAsTask(wiring.tasks, tm, { tool: name, callId, owner: identity.taskOwner }, started)
        if ('task' in answered) return answered.task as unknown as CallToolResult
        view = answered.view
      } else {
        view = await tm.call(name, args, { ...callOptions, traceContext: traceContextOf(requestMeta) })
      }
      // a confirmation or a pending input the client can be asked about: input_required (the shim asks a 2025 client)
      const ask = confirmations.ask(asked, view)
      if (ask !== undefined) return ask
      return answerOf(name, view, callId, replayed, identity.principal)
    } finally {
      progressSinks.delete(callId)
      logSinks.delete(callId)
    }
  }

  // a 2026-07-28 tools/call that asks nothing, answered without a Server (direct-call.ts), as callTool answers it
  const direct: DirectCalls = {
    serves: (name) => toolList().names.has(name),
    call: async (name, args, signal, era, authInfo) => {
      const identity = identityOf(authInfo === undefined ? {} : { http: { authInfo } }, wiring)
      const callId = nextMcpCallId()
      const view = await tm.call(name, args, withPrincipal({ signal, callId }, identity.principal))
      return encodedResult(answerOf(name, view, callId, false, identity.principal) as unknown as Record<string, unknown>, info, era)
    },
  }

  const factory: McpServerFactory = (ctx) => {
    const era: McpEra = ctx.era
    const server = new Server(info, {
      // logging only for 2026-07-28 clients (deprecated in 2025-11-25 terms: a 2025 client sees none)
      capabilities:
        era === 'legacy'
          ? { tools: { listChanged: false } }
          : wiring.tasks === undefined
            ? { tools: { listChanged: false }, logging: {} }
            : { tools: { listChanged: false }, logging: {}, extensions: { [MCP_TASKS_EXTENSION]: {} } },
      jsonSchemaValidator: sharedElicitationValidator,
      requestState: { verify: confirmations.codec.verify },
      cacheHints: { 'tools/list': hint, 'server/discover': hint },
      ...(options.instructions === undefined ? {} : { instructions: options.instructions }),
    })
    // per request: each caller sees the tools its scopes allow (the answer is cacheScope "private")
    server.setRequestHandler('tools/list', (_request, c) => ({ tools: visibleTools(tm, toolList(), identityOf(c, wiring).principal) }))
    server.setRequestHandler('tools/call', (request, c) => callTool(server, era, request, c))
    if (era === 'modern') registerTaskHandlers(server, wiring.tasks, wiring)
    return server
  }
  return { factory, direct }
}

/**
 * An MCP `Server` (the SDK v2's low-level class) serving `tm`'s tools to a 2025 client over a
 * transport of your own (`server.connect(transport)`): the legacy-era instance of
 * {@link createMcpServerFactory} (see there for what it answers). `serveHttp` and
 * `serveStdio` serve both eras.
 */
export function createMcpServer(tm: ServableManager, options: McpServerOptions = {}): Server {
  return createMcpServerFactory(tm, options)({ era: 'legacy' }) as Server
}
