/**
 * The MCP server: serves a `ToolManager`'s tools over the Model Context Protocol
 * (revision 2025-11-25) with the official SDK's low-level `Server`: the `tools/list`
 * and `tools/call` handlers, progress, cancellation and confirmations. The transports
 * are `stdio.ts` and `http.ts`; tool-module loading is `module.ts`.
 */
import { randomUUID } from 'node:crypto'
import { createRequire } from 'node:module'
import type { Ajv } from 'ajv'
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { Protocol } from '@modelcontextprotocol/sdk/shared/protocol.js'
import {
  CallToolRequestSchema,
  CallToolResultSchema,
  ErrorCode,
  LATEST_PROTOCOL_VERSION,
  ListToolsRequestSchema,
  McpError,
  RequestSchema,
  type CallToolResult,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js'
import { toMcp } from '../render/mcp.js'
import type { CallOptions, JsonSchema, ToolDefinition, ToolEvents, ToolManifestEntry } from '../runtime/manager.js'
import type { CallResult } from '../core/view.js'
import { clipped } from '../core/redact.js'
import { MAX_INPUT_VALUES } from '../core/validate.js'
import { MCP_CONFIRMATION_WHY, mcpConfirmationText } from '../core/texts.js'
import {
  MCP_CALL_ID_META_KEY,
  MCP_CONFIRMATION_META_KEY,
  MCP_IDEMPOTENCY_KEY_META_KEY,
  MCP_NEEDS_CONFIRMATION_META_KEY,
  MCP_REPLAYED_META_KEY,
  MCP_UNTRUSTED_CONTENT_META_KEY,
  type ServableManager,
} from './meta.js'
import { toolwireVersion } from './module.js'
import type { jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js'
import type { ConfirmationLinkInput } from './confirm-page.js'
import { checkOptions, isBoolean, isFunction, isOneOf, isString, type OptionRules } from './options.js'
import { traceContextOf } from '../observe/trace-context.js' // trace context (issue #22 Deliver 4)

export {
  MCP_CALL_ID_META_KEY,
  MCP_CONFIRMATION_META_KEY,
  MCP_IDEMPOTENCY_KEY_META_KEY,
  MCP_NEEDS_CONFIRMATION_META_KEY,
  MCP_REPLAYED_META_KEY,
  MCP_UNTRUSTED_CONTENT_META_KEY,
  type ServableManager,
} from './meta.js'

/** The MCP protocol revision toolwire serves (the SDK negotiates older ones when a client asks). */
export const MCP_PROTOCOL_VERSION: string = LATEST_PROTOCOL_VERSION

/**
 * The requests a server from `createMcpServer` answers (the SDK's `Server` adds
 * `initialize` and `ping`). The HTTP transport answers any other request 404 before
 * dispatch; a test keeps this list equal to the server's handlers.
 */
export const MCP_SERVED_METHODS: readonly string[] = Object.freeze(['initialize', 'ping', 'tools/list', 'tools/call'])

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
}

/** What each of `McpServerOptions` must be (any other key is refused). @internal */
export const MCP_SERVER_OPTION_RULES: OptionRules = Object.freeze({
  name: isString,
  version: isString,
  instructions: isString,
  confirmations: isOneOf(['elicit', 'refuse']),
  confirmationLink: isFunction,
  confirmationLinkInText: isBoolean,
})

/** An approval link for a call waiting for confirmation (see `McpServerOptions.confirmationLink`). */
export interface ConfirmationLink {
  /** The absolute URL a person opens. */
  readonly url: string
  /**
   * Resolves with the call's result once a decision is made (on the page or any other way;
   * with a shared store, on any instance: the outcome that instance recorded), or undefined
   * when the link ends without one or `signal` aborts.
   */
  decided(signal: AbortSignal): Promise<CallResult | undefined>
}

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

function withMeta(result: CallToolResult, meta: Record<string, unknown>): CallToolResult {
  return { ...result, _meta: { ...(result._meta ?? {}), ...meta } }
}

function confirmationResult(view: Extract<CallResult, { status: 'needs_confirmation' }>, why: string, url?: string, urlInText = true): CallToolResult {
  const rendered = toMcp(view) as unknown as CallToolResult
  const text = mcpConfirmationText(view.summary, why, url === undefined ? undefined : { url, inText: urlInText })
  const meta: Record<string, string> = { confirmId: view.confirmId, summary: view.summary }
  if (url !== undefined) meta.url = url
  return withMeta({ ...rendered, content: [{ type: 'text', text }, ...rendered.content.slice(1)], isError: true }, { [MCP_CONFIRMATION_META_KEY]: meta })
}

let mcpCallSeq = 0

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
export class UnknownToolError extends McpError {
  constructor(readonly tool: string) {
    super(ErrorCode.InvalidParams, `Unknown tool: ${clipped(tool)}`)
    // the SDK prefixes "MCP error -32602: "; the wire message is the plain sentence
    this.message = `Unknown tool: ${clipped(tool)}`
  }
}

/** The JSON-RPC error (`-32602`, invalid params) for `tools/call` params that are not `{ name: string, arguments?: object }`. */
export class InvalidCallParamsError extends McpError {
  constructor(problem: string) {
    super(ErrorCode.InvalidParams, `Invalid params: ${problem}`)
    // the SDK prefixes "MCP error -32602: "; the wire message is the plain sentence
    this.message = `Invalid params: ${problem}`
  }
}

/** What is wrong with `tools/call` params, in a short sentence, or undefined when they are well-formed. */
function callParamsProblem(params: unknown): string | undefined {
  if (typeof params !== 'object' || params === null || Array.isArray(params)) return 'tools/call needs a params object'
  const { name, arguments: args } = params as { name?: unknown; arguments?: unknown }
  if (name === undefined) return '"name" is required'
  if (typeof name !== 'string') return '"name" must be a string'
  if (args !== undefined && (typeof args !== 'object' || args === null || Array.isArray(args))) return '"arguments" must be an object'
  return undefined
}

/**
 * `tools/call` requests whose params are left to the handler. The SDK's `Server` parses
 * `tools/call` params before any handler runs and answers a failure with `-32603` and
 * the raw validation issues; the handler checks them itself and answers `-32602` with a
 * short message (`InvalidCallParamsError`).
 */
const UncheckedCallToolRequestSchema = RequestSchema.extend({ method: CallToolRequestSchema.shape.method })

/** The result as the SDK's `Server` would send it: parsed with `CallToolResultSchema` (a malformed one is an internal error). */
function checkedResult(result: CallToolResult): CallToolResult {
  const parsed = CallToolResultSchema.safeParse(result)
  if (!parsed.success) {
    const error = new McpError(ErrorCode.InternalError, 'Internal error: the tool result is not a valid CallToolResult')
    error.message = 'Internal error: the tool result is not a valid CallToolResult'
    throw error
  }
  return parsed.data as CallToolResult
}

/**
 * An MCP `Server` (the SDK's low-level class) serving `tm`'s tools: `tools/list` from
 * `tm.manifest()`, `tools/call` through `tm.call` rendered with `toMcp`.
 *
 * - An unknown tool is a JSON-RPC error `-32602` (`McpError(InvalidParams)`), and so are
 *   malformed params (no string `name`, `arguments` not an object), with a short message.
 * - Invalid arguments, refusals and tool failures are `isError: true` results.
 * - A call that needs confirmation asks the user through elicitation when the client
 *   supports it (then `tm.confirm` runs or denies it); otherwise it answers an
 *   `isError` result naming what to confirm, with `_meta["toolwire/confirmation"]`.
 * - `notifications/cancelled` aborts the call's signal (the call ends `cancelled`, and
 *   no response is sent, as the protocol requires).
 * - `ctx.reportProgress` becomes `notifications/progress` when the request carried a
 *   `_meta.progressToken` (non-increasing progress values are dropped).
 * - `_meta["toolwire/idempotencyKey"]` on the request becomes `tm.call`'s `idempotencyKey`
 *   (the manager needs a store; without one the call is refused `invalid_options`): a retry
 *   with the same key and input answers the recorded result, with `_meta["toolwire/replayed"]: true`.
 * - Every result carries `_meta["toolwire/callId"]`.
 */
export function createMcpServer(tm: ServableManager, options: McpServerOptions = {}): Server {
  checkOptions('createMcpServer', options, MCP_SERVER_OPTION_RULES)
  const server = new Server(
    { name: options.name ?? 'toolwire', version: options.version ?? toolwireVersion() },
    {
      capabilities: { tools: { listChanged: false } },
      jsonSchemaValidator: sharedElicitationValidator,
      ...(options.instructions === undefined ? {} : { instructions: options.instructions }),
    },
  )
  const progressSinks = new Map<string, (event: ToolEvents['progress']) => void>()
  const onProgress = (event: ToolEvents['progress']): void => progressSinks.get(event.callId)?.(event)
  let listening = false

  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: tm.manifest().map(mcpToolOf) }))

  // Protocol's own registration: the Server override would parse the params first (see UncheckedCallToolRequestSchema)
  Protocol.prototype.setRequestHandler.call(server, UncheckedCallToolRequestSchema, async (request, extra) => {
    const problem = callParamsProblem(request.params)
    if (problem !== undefined) throw new InvalidCallParamsError(problem)
    const { name, arguments: given } = request.params as { name: string; arguments?: Record<string, unknown> }
    const args = given ?? {}
    if (!tm.list().some((def: ToolDefinition<never>) => def.name === name)) {
      throw new UnknownToolError(name)
    }
    const callId = `mcp_${process.pid.toString(36)}_${(++mcpCallSeq).toString(36)}`
    const progressToken = extra._meta?.progressToken
    if (progressToken !== undefined) {
      if (!listening) {
        tm.on('progress', onProgress)
        listening = true
      }
      let last = -Infinity
      progressSinks.set(callId, (event) => {
        if (!(event.progress > last)) return
        last = event.progress
        const params: Record<string, unknown> = { progressToken, progress: event.progress }
        if (event.total !== undefined) params.total = event.total
        if (event.message !== undefined) params.message = event.message
        extra.sendNotification({ method: 'notifications/progress', params } as never).catch(() => undefined)
      })
    }
    try {
      // present but malformed (not a string of 1 to 1024 characters), or without a store: tm.call refuses it, nothing runs
      const idempotencyKey = (request.params._meta as Record<string, unknown> | undefined)?.[MCP_IDEMPOTENCY_KEY_META_KEY]
      const callOptions: CallOptions =
        idempotencyKey === undefined ? { signal: extra.signal, callId } : { signal: extra.signal, callId, idempotencyKey: idempotencyKey as string }
      // trace context (issue #22 Deliver 4): the request's _meta traceparent/tracestate/baggage parent the call's span
      let view = await tm.call(name, args, { ...callOptions, traceContext: traceContextOf(request.params._meta) })
      if (view.status === 'needs_confirmation') {
        const answered = await confirmThroughElicitation(server, tm, name, view, options, extra.signal, extra.requestId)
        if (answered === undefined) {
          const url = options.confirmations === 'refuse' ? undefined : options.confirmationLink?.({ tool: name, view })?.url
          return checkedResult(withMeta(
            confirmationResult(
              view,
              options.confirmations === 'refuse'
                ? MCP_CONFIRMATION_WHY.refused
                : MCP_CONFIRMATION_WHY.noElicitation,
              url,
              options.confirmationLinkInText !== false,
            ),
            { [MCP_CALL_ID_META_KEY]: callId },
          ))
        }
        view = answered
      }
      const meta: Record<string, unknown> = { [MCP_CALL_ID_META_KEY]: callId }
      if (view.replayed === true) meta[MCP_REPLAYED_META_KEY] = true
      return checkedResult(withMeta(toMcp(view) as unknown as CallToolResult, meta))
    } finally {
      progressSinks.delete(callId)
    }
  })
  return server
}

/**
 * URL-mode elicitation (a client that declared `elicitation.url` but not `form`): the
 * server sends the approval link with `elicitation/create`; once the user agreed to open
 * it, the call waits for the decision made on the page, then sends
 * `notifications/elicitation/complete`. A call decided on another instance (a shared
 * store) answers the outcome recorded there. A declined or cancelled elicitation, or a link
 * that ends without a decision, denies the call.
 */
async function confirmThroughUrl(
  server: Server,
  tm: ServableManager,
  link: ConfirmationLink,
  view: Extract<CallResult, { status: 'needs_confirmation' }>,
  signal: AbortSignal,
  requestId: string | number,
): Promise<CallResult> {
  const elicitationId = randomUUID()
  let accepted = false
  try {
    const answer = await server.elicitInput(
      { mode: 'url', message: `Approve or deny: ${view.summary}`, url: link.url, elicitationId },
      { signal, relatedRequestId: requestId } as never,
    )
    accepted = answer.action === 'accept'
  } catch {
    accepted = false
  }
  const decided = accepted ? await link.decided(signal) : undefined
  if (accepted) await server.createElicitationCompletionNotifier(elicitationId, { relatedRequestId: requestId } as never)().catch(() => undefined)
  return decided ?? tm.confirm(view.confirmId, { approve: false })
}

async function confirmThroughElicitation(
  server: Server,
  tm: ServableManager,
  tool: string,
  view: Extract<CallResult, { status: 'needs_confirmation' }>,
  options: McpServerOptions,
  signal: AbortSignal,
  requestId: string | number,
): Promise<CallResult | undefined> {
  if (options.confirmations === 'refuse') return undefined
  const elicitation = server.getClientCapabilities()?.elicitation as { form?: unknown; url?: unknown } | undefined
  if (elicitation !== undefined && elicitation.form === undefined && elicitation.url !== undefined) {
    const link = options.confirmationLink?.({ tool, view })
    return link === undefined ? undefined : confirmThroughUrl(server, tm, link, view, signal, requestId)
  }
  if (elicitation === undefined || elicitation.form === undefined) return undefined
  let approve = false
  try {
    const answer = await server.elicitInput(
      {
        mode: 'form',
        message: `Confirm: ${view.summary}`,
        requestedSchema: {
          type: 'object',
          properties: { approve: { type: 'boolean', title: 'Approve', description: view.summary } },
          required: ['approve'],
        },
      },
      { signal, relatedRequestId: requestId } as never,
    )
    approve = answer.action === 'accept' && (answer.content as { approve?: unknown } | undefined)?.approve === true
  } catch {
    if (signal.aborted) {
      await tm.confirm(view.confirmId, { approve: false })
      return undefined
    }
    return undefined // the elicitation failed: fall back to naming what to confirm
  }
  return tm.confirm(view.confirmId, { approve })
}
