/**
 * Confirmations and pending input as multi-round-trip requests (basic/patterns/mrtr), in both
 * eras: the glue between the `tools/call` handler and mrtr.ts / request-state.ts.
 *
 * - A call that needs confirmation answers `input_required` with an `elicitation/create` input
 *   request (form: the summary and the redacted changes; URL: the approval page's link, when the
 *   client declared only URL elicitation or the tool asks for `confirmVia: 'url'` and a page can
 *   give a link) and a sealed `requestState`. The retry's answer is decided through `tm.confirm`
 *   (the store's claim keeps the run to once, on any instance); a URL retry waits, bounded, for
 *   the decision made on the page.
 * - A call a tool suspended with `pending({ kind: 'input', schema })`, whose schema fits form
 *   elicitation, answers a form for that schema; the retry's content goes to `tm.resume`.
 * - 2026-07-28: the client sees `input_required` and retries. 2025 (a session or stdio): the SDK's
 *   legacy shim sends the same input requests as `elicitation/create` on the request's stream and
 *   re-enters the handler with the answers; the client capabilities are those of `initialize`.
 *   A stateless 2025 instance has none, so it gets today's `isError` answer with the link.
 */
import { randomUUID } from 'node:crypto'
import { inputRequired, ProtocolError, type CallToolResult, type InputRequest, type InputRequiredResult, type Server, type ServerContext } from '@modelcontextprotocol/server'
import type { CallResult } from '../core/view.js'
import type { PendingRequest } from '../core/types.js'
import { viewOf } from '../core/view.js'
import { ToolResult, refusalError } from '../core/result.js'
import { MCP_CONFIRMATION_WHY, mcpConfirmationText, REFUSALS, STORE_TEXTS } from '../core/texts.js'
import { toMcp } from '../render/mcp.js'
import type { ToolStore } from '../runtime/store/types.js'
import type { Principal } from '../core/principal.js'
import { verifyApproval, type ApprovalSecrets } from '../runtime/store/approval.js'
import { confirmationOutcome } from '../runtime/durable/parking.js'
import { CONFIRMATION_RUNNING } from '../runtime/durable/shared.js'
import {
  clientElicitation,
  confirmationInputRequest,
  confirmationMode,
  expectedInputOf,
  INVALID_REQUEST_STATE,
  inputKey,
  pendingInputRequest,
  readInputAnswer,
  RequestStateCodec,
  type ConfirmationView,
  type InputAnswer,
  type RequestState,
  type RequestStateInit,
} from './mrtr.js'
import { MCP_ENVELOPE_KEYS } from './protocol.js'
import { MCP_CONFIRMATION_META_KEY, type ServableManager } from './meta.js'
import type { ConfirmationLink, ConfirmationLinkInput } from './confirm-page.js'
import { answeredBy, confirmAs, type RequestIdentity } from './principal-of.js'

/** What the confirmations of one server factory share (`createMcpServerFactory`'s wiring). */
export interface ConfirmationWiring {
  /** The approval secret (or rotation list) that seals `requestState`; absent: this process's random key. */
  readonly secret?: ApprovalSecrets
  /** The `requestState` principal of a request without an identity of its own (`principalOf` the bearer token; `''` without one). */
  readonly principal?: string
  /** The durable store, to answer a replayed retry with the outcome recorded on any instance. */
  readonly store?: ToolStore
  /**
   * Confirmations are answered only at the approval page (its sign-in decides who may): never in
   * a form a client answers with its token. `serveHttp` sets it with `auth.signIn`.
   */
  readonly confirmationsAtPage?: boolean
}

/** The server options the confirmations read (`McpServerOptions`). */
export interface ConfirmationOptions {
  readonly confirmations?: 'elicit' | 'refuse'
  readonly confirmationLink?: (input: ConfirmationLinkInput) => ConfirmationLink | undefined
  readonly confirmationLinkInText?: boolean
  readonly urlConfirmationWaitMs?: number
}

/** The call a `tools/call` request names, as the handler sees it. */
export interface AskedCall {
  readonly server: Server
  /** `modern` (2026-07-28) or `legacy` (2025, through the SDK's shim). */
  readonly era: 'modern' | 'legacy'
  readonly ctx: ServerContext
  readonly tool: string
  readonly args: unknown
  readonly callId: string
  /**
   * Who the request acts for (`identityOf` its context): its principal answers every `tm.confirm`
   * and `tm.resume`, its `stateKey` is what the sealed state binds. Absent: no principal, and the
   * wiring's `principal`.
   */
  readonly identity?: RequestIdentity
}

/** What a retry answered: the call's result (replayed when recorded earlier), a denial, or a new input request. */
export type ConfirmationAnswer =
  | { readonly kind: 'result'; readonly view: CallResult; readonly replayed: boolean }
  | { readonly kind: 'declined'; readonly view: CallResult }
  | { readonly kind: 'ask'; readonly result: InputRequiredResult }

/** How long a 2026-07-28 retry after a URL-mode `accept` waits for the page's decision by default, in ms, before asking again. */
export const URL_CONFIRMATION_WAIT_MS = 60_000

/** How often a retry waiting for a run on another instance looks at the store. */
const RUN_POLL_MS = 100

/** The most settled outcomes (and asked views, links) a server keeps in memory. */
const MAX_REMEMBERED = 1000

/** Sets `key` in a map bounded to {@link MAX_REMEMBERED} entries (the oldest goes first). */
function remember<V>(map: Map<string, V>, key: string, value: V): void {
  if (map.size >= MAX_REMEMBERED) map.delete(map.keys().next().value!)
  map.set(key, value)
}

/** `result` with `meta` merged into its `_meta`. */
export function withMeta(result: CallToolResult, meta: Record<string, unknown>): CallToolResult {
  return { ...result, _meta: { ...(result._meta ?? {}), ...meta } }
}

/** Whether a view is a refusal with `code` (`confirmation_used`, `request_used`, …). */
function refusedWith(view: CallResult, code: string): boolean {
  return view.status === 'refused' && view.code === code
}

/** Whether `tm.resume` refused an answer its pending schema does not accept (the call stays parked). */
function invalidAnswer(view: CallResult): boolean {
  return view.status === 'invalid' || (view as { code?: unknown }).code === 'invalid_answer'
}

/**
 * The confirmations and input requests of one server factory: asks (`ask`) and answers
 * (`answer`) them as MRTR. One `RequestStateCodec` per factory, shared by its per-request
 * servers (`verify` is their `ServerOptions.requestState.verify`).
 */
export class McpConfirmations {
  readonly codec: RequestStateCodec
  private readonly principal: string
  private readonly store: ToolStore | undefined
  private readonly secret: ApprovalSecrets | undefined
  /** Confirmations only at the approval page: {@link ConfirmationWiring.confirmationsAtPage}. */
  private readonly atPage: boolean
  private readonly urlWaitMs: number
  /** parked id → the result of its run here, for a replayed retry on a manager without a store. */
  private readonly outcomes = new Map<string, CallResult>()
  /** parked call id → its approved run or resume going on in this process, for a retry sent meanwhile. */
  private readonly runs = new Map<string, Promise<CallResult>>()
  /** confirmId → its view as asked here, so a re-ask shows the same summary. */
  private readonly views = new Map<string, ConfirmationView>()
  /** pending request id → the request as asked here, so a re-ask shows the same prompt. */
  private readonly inputs = new Map<string, PendingRequest>()
  /** confirmId → the approval link opened for it here (URL mode). */
  private readonly links = new Map<string, ConfirmationLink>()
  /** confirmId → the `elicitationId` a 2025 URL request carried, for `notifications/elicitation/complete`. */
  private readonly elicitationIds = new Map<string, string>()
  private listening = false
  /** confirmId → what stops a 2025 request's cancellation from denying it, once the answer came (`denyOnAbort`). */
  private readonly abandon = new Map<string, () => void>()

  constructor(
    private readonly tm: ServableManager,
    wiring: ConfirmationWiring = {},
    private readonly options: ConfirmationOptions = {},
  ) {
    this.codec = new RequestStateCodec(wiring.secret === undefined ? {} : { secret: wiring.secret })
    this.principal = wiring.principal ?? ''
    this.store = wiring.store
    this.secret = wiring.secret
    this.atPage = wiring.confirmationsAtPage === true
    this.urlWaitMs = options.urlConfirmationWaitMs ?? URL_CONFIRMATION_WAIT_MS
  }

  /**
   * The `input_required` answer for a parked call the client can be asked about: a confirmation
   * (form or URL, `confirmationMode`; never with `confirmations: 'refuse'`), or a pending input
   * whose schema fits a form, to a client that declared form elicitation. Otherwise undefined:
   * the caller answers the `isError` result (`unanswered` for a confirmation).
   */
  ask(call: AskedCall, view: CallResult): InputRequiredResult | undefined {
    const capabilities = this.capabilitiesOf(call)
    if (view.status === 'pending') {
      if (view.request.kind !== 'input' || !clientElicitation(capabilities).form) return undefined
      const fit = pendingInputRequest(view.request)
      if (!fit.fits) return undefined
      remember(this.inputs, view.request.id, view.request)
      const state = this.codec.seal({ kind: 'input', tool: call.tool, arguments: call.args, callId: call.callId, id: view.request.id, principal: this.stateKeyOf(call), schema: fit.schema })
      return inputRequired({ inputRequests: { [inputKey('input', 1)]: fit.request as InputRequest }, requestState: state })
    }
    if (view.status !== 'needs_confirmation' || this.options.confirmations === 'refuse') return undefined
    const confirmVia = this.atPage ? 'url' : this.tm.manifest().find((entry) => entry.name === call.tool)?.confirmVia
    const mode = confirmationMode({ capabilities, confirmVia, linkAvailable: this.options.confirmationLink !== undefined })
    if (mode === 'none') return undefined
    remember(this.views, view.confirmId, view)
    const base = { kind: 'confirm' as const, tool: call.tool, arguments: call.args, callId: call.callId, id: view.confirmId, principal: this.stateKeyOf(call) }
    const link = mode === 'url' ? this.options.confirmationLink!({ tool: call.tool, view, ...callerOf(call.identity?.principal) }) : undefined
    if (mode === 'url' && link === undefined) return undefined
    // 2025: the shim holds the request open while the client answers; a request cancelled meanwhile denies the call
    if (call.era === 'legacy') this.denyOnAbort(call.ctx.mcpReq.signal, view.confirmId, call.identity?.principal)
    if (link === undefined) return this.request(call, view, { ...base, round: 1 })
    this.listen()
    remember(this.links, view.confirmId, link)
    return this.request(call, view, { ...base, round: 1, link: link.url })
  }

  /**
   * The `isError` result of a call waiting for confirmation that the client cannot be asked
   * about: it names the confirmation, and the approval link when there is one (today's answer).
   */
  unanswered(tool: string, view: ConfirmationView, caller?: Principal): CallToolResult {
    const refused = this.options.confirmations === 'refuse'
    const url = refused ? undefined : this.options.confirmationLink?.({ tool, view, ...callerOf(caller) })?.url
    const why = refused ? MCP_CONFIRMATION_WHY.refused : MCP_CONFIRMATION_WHY.noElicitation
    const rendered = toMcp(view) as unknown as CallToolResult
    const text = mcpConfirmationText(view.summary, why, url === undefined ? undefined : { url, inText: this.options.confirmationLinkInText !== false })
    const meta: Record<string, string> = { confirmId: view.confirmId, summary: view.summary }
    if (url !== undefined) meta.url = url
    return withMeta({ ...rendered, content: [{ type: 'text', text }, ...rendered.content.slice(1)], isError: true }, { [MCP_CONFIRMATION_META_KEY]: meta })
  }

  /**
   * Answers a retry carrying `state` (opened by the SDK's `verify` hook): refuses a state sealed
   * for another call or principal (nothing runs), then reads the answer under the round's key.
   * @throws ProtocolError (`INVALID_REQUEST_STATE`) for a state of another call.
   */
  async answer(call: AskedCall, state: RequestState): Promise<ConfirmationAnswer> {
    if (this.codec.check(state, { tool: call.tool, arguments: call.args, principal: this.stateKeyOf(call) }) !== undefined) {
      throw new ProtocolError(INVALID_REQUEST_STATE.code, INVALID_REQUEST_STATE.message, { ...INVALID_REQUEST_STATE.data })
    }
    this.abandon.get(state.id)?.()
    const answer = readInputAnswer(call.ctx.mcpReq.inputResponses, inputKey(state.kind, state.round), expectedInputOf(state))
    if (state.kind === 'input') return this.answerInput(call, state, answer)
    switch (answer.kind) {
      case 'approve':
        return this.settle(state.id, await this.running(state.id, () => this.tm.confirm(state.id, confirmAs(true, call.identity?.principal))), 'confirmation_used', call.ctx.mcpReq.signal)
      case 'decline':
        return this.deny(call, state)
      case 'url_accept':
        return this.decision(call, state)
      default:
        // missing or not an answer to what was asked: ask the same again
        return { kind: 'ask', result: this.request(call, this.viewOf(state), this.init(call, state, state.round)) }
    }
  }

  /** A pending input's answer: the content to `tm.resume`; one its schema refuses asks again; a decline abandons the call. */
  private async answerInput(call: AskedCall, state: RequestState, answer: InputAnswer): Promise<ConfirmationAnswer> {
    const again = (): ConfirmationAnswer => {
      const request = pendingInputRequest(this.inputs.get(state.id) ?? { id: state.id, kind: 'input', schema: state.schema })
      if (!request.fits) throw new ProtocolError(INVALID_REQUEST_STATE.code, INVALID_REQUEST_STATE.message, { ...INVALID_REQUEST_STATE.data })
      return { kind: 'ask', result: inputRequired({ inputRequests: { [inputKey('input', state.round)]: request.request as InputRequest }, requestState: this.codec.seal(this.init(call, state, state.round)) }) }
    }
    const earlier = this.outcomes.get(state.id)
    if (earlier !== undefined && refusedWith(earlier, REFUSALS.inputDeclined.code)) return { kind: 'declined', view: earlier }
    if (answer.kind === 'decline') {
      // the suspension is abandoned: denied in the store (any instance); without a store it stays parked
      // until it expires, and this server answers every later retry of it declined: it never runs on
      await this.store?.deny(state.id).catch(() => false)
      const view = viewOf(ToolResult.failed(refusalError(REFUSALS.inputDeclined.code, REFUSALS.inputDeclined.message)), state.callId)
      remember(this.outcomes, state.id, view)
      return { kind: 'declined', view }
    }
    if (answer.kind !== 'input') return again()
    const view = await this.running(state.id, () => this.tm.resume(state.id, answer.content, answeredBy(call.identity?.principal)))
    // an answer the tool's pending schema refuses leaves the call parked: ask the same again
    if (invalidAnswer(view)) return again()
    return this.settle(state.id, view, 'request_used', call.ctx.mcpReq.signal)
  }

  /** A retry after the user agreed to open the approval page: waits (bounded) for the page's decision. */
  private async decision(call: AskedCall, state: RequestState): Promise<ConfirmationAnswer> {
    // decided before this retry came (on the page, or by a retry before it): that outcome
    const earlier = await this.recorded(state.id)
    const signal = call.ctx.mcpReq.signal
    const view = this.viewOf(state)
    // another instance (or a restarted one) reopens a link for the same confirmation: its `decided` reads the store
    const link = this.links.get(state.id) ?? this.options.confirmationLink?.({ tool: call.tool, view, ...callerOf(call.identity?.principal) })
    let waitedOut = false
    let decided = earlier
    if (decided === undefined && link !== undefined) {
      const stop = new AbortController()
      const onAbort = (): void => stop.abort()
      signal.addEventListener('abort', onAbort, { once: true })
      // 2025: the shim holds the request open, as before the link's own expiry bounds the wait
      const timer = call.era === 'modern' ? setTimeout(() => ((waitedOut = true), stop.abort()), this.urlWaitMs) : undefined
      timer?.unref()
      try {
        decided = await link.decided(stop.signal)
      } finally {
        clearTimeout(timer)
        signal.removeEventListener('abort', onAbort)
      }
    }
    // approved on the page and still running: its outcome, waited for as an approved retry's is
    if (decided !== undefined && refusedWith(decided, 'confirmation_used')) decided = (await this.awaitOutcome(state.id, signal)) ?? this.stillRunning(decided)
    else if (decided === undefined && waitedOut && !signal.aborted && (await this.runsInStore(state.id))) decided = (await this.awaitOutcome(state.id, signal)) ?? this.stillRunning(undefined, state.callId)
    if (decided !== undefined) {
      const id = this.elicitationIds.get(state.id)
      if (call.era === 'legacy' && id !== undefined) {
        await call.server.createElicitationCompletionNotifier(id, { relatedRequestId: call.ctx.mcpReq.id })().catch(() => undefined)
      }
      if (this.store === undefined) remember(this.outcomes, state.id, decided)
      // 2026-07-28 marks an outcome decided before the retry came replayed; a 2025 client's one request never was
      return { kind: 'result', view: decided, replayed: earlier !== undefined && call.era === 'modern' }
    }
    // not decided within the limit: ask again, the same link, under the next round's key
    if (waitedOut && !signal.aborted) return { kind: 'ask', result: this.request(call, view, this.init(call, state, state.round + 1)) }
    // the link ended undecided, or the request went away: the call is denied
    return this.deny(call, state)
  }

  /**
   * Denies a confirmation; one already decided answers its recorded outcome, and one approved
   * whose run still goes on waits for it as an approved retry does (else `confirmation_running`).
   */
  private async deny(call: AskedCall, state: RequestState): Promise<ConfirmationAnswer> {
    const signal = call.ctx.mcpReq.signal
    const view = await this.tm.confirm(state.id, confirmAs(false, call.identity?.principal))
    if (refusedWith(view, 'confirmation_used')) {
      const recorded = (await this.recorded(state.id)) ?? (await this.awaitOutcome(state.id, signal))
      if (recorded === undefined) return { kind: 'result', view: this.stillRunning(view), replayed: false }
      return refusedWith(recorded, REFUSALS.confirmationDenied.code) ? { kind: 'declined', view: recorded } : { kind: 'result', view: recorded, replayed: true }
    }
    if (this.store === undefined) remember(this.outcomes, state.id, view)
    return { kind: 'declined', view }
  }

  /** Runs `answer` (the approved run or the resume of parked call `id`), known to retries of `id` while it runs here. */
  private running(id: string, answer: () => Promise<CallResult>): Promise<CallResult> {
    const run = answer()
    // a retry sent while the first run goes on is refused `used` at once: the first run stays the one waited for
    if (this.runs.has(id)) return run
    this.runs.set(id, run)
    const forget = (): void => {
      if (this.runs.get(id) === run) this.runs.delete(id)
    }
    run.then(forget, forget)
    return run
  }

  /**
   * The outcome of a run: a parked call already answered (`used`) answers the result recorded
   * earlier, marked replayed. A retry that comes while that run still goes on waits for it (here,
   * or in the store for a run on another instance) at most `urlConfirmationWaitMs` and while
   * its request lasts, then answers `confirmation_running`: the call runs once, elsewhere.
   */
  private async settle(id: string, view: CallResult, used: string, signal: AbortSignal): Promise<ConfirmationAnswer> {
    if (refusedWith(view, used)) {
      const recorded = (await this.recorded(id)) ?? (await this.awaitRun(id, signal))
      if (recorded === 'running') return { kind: 'result', view: this.stillRunning(view), replayed: false }
      if (recorded !== undefined) return { kind: 'result', view: recorded, replayed: true }
    }
    if (this.store === undefined && view.status !== 'refused') remember(this.outcomes, id, view)
    return { kind: 'result', view, replayed: false }
  }

  /**
   * The outcome of a run of `id` still going on (here, or on another instance through the store),
   * bounded as {@link settle} says: `'running'` when it outlasts the wait, undefined when no run
   * of it is going on.
   */
  private async awaitRun(id: string, signal: AbortSignal): Promise<CallResult | 'running' | undefined> {
    const here = this.runs.get(id)
    if (here !== undefined) return (await this.awaitOutcome(id, signal, here)) ?? 'running'
    if (!(await this.runsInStore(id))) return undefined
    return (await this.awaitOutcome(id, signal)) ?? 'running'
  }

  /** The refusal `confirmation_running` of a call approved and still running, with the call id of `view` (or `callId`). */
  private stillRunning(view: CallResult | undefined, callId?: string): CallResult {
    return viewOf(ToolResult.failed(refusalError(CONFIRMATION_RUNNING, STORE_TEXTS.confirmationStillRunning)), view?.callId ?? callId)
  }

  /**
   * The outcome of confirmation `id`, approved and not yet recorded (its run goes on, here or on
   * another instance): `here`, the run in this process, when given; else looked for every
   * {@link RUN_POLL_MS} (this process's `confirmation` events, the store). At most
   * `urlConfirmationWaitMs` and while `signal` lasts; undefined when it does not come.
   */
  private async awaitOutcome(id: string, signal: AbortSignal, here?: Promise<CallResult>): Promise<CallResult | undefined> {
    const until = Date.now() + this.urlWaitMs
    let settled: CallResult | undefined
    void here?.then((view) => (settled = view)).catch(() => undefined)
    for (;;) {
      const recorded = settled ?? (here === undefined ? await this.recorded(id) : undefined)
      if (recorded !== undefined) return recorded
      if (signal.aborted || Date.now() >= until) return undefined
      await new Promise<void>((resolve) => {
        const done = (): void => {
          clearTimeout(timer)
          signal.removeEventListener('abort', done)
          resolve()
        }
        const timer = setTimeout(done, Math.min(RUN_POLL_MS, until - Date.now()))
        timer.unref()
        signal.addEventListener('abort', done, { once: true })
        // the run here settling ends the wait at once
        void here?.then(done, done)
      })
    }
  }

  /** Whether the store says confirmation `id` is running (claimed, not settled). */
  private async runsInStore(id: string): Promise<boolean> {
    if (this.store === undefined) return false
    try {
      const parked = (this.secret === undefined ? undefined : verifyApproval(this.secret, id)?.confirmationId) ?? id
      return (await confirmationOutcome(this.store, parked)).state === 'running'
    } catch {
      return false
    }
  }

  /** The outcome recorded for a parked call already decided: here, or (a confirmation) in the store by any instance. */
  private async recorded(id: string): Promise<CallResult | undefined> {
    const local = this.outcomes.get(id)
    if (local !== undefined) return local
    if (this.store === undefined) return undefined
    try {
      // with an approval secret the confirmId is a signed token naming the parked row
      const parked = (this.secret === undefined ? undefined : verifyApproval(this.secret, id)?.confirmationId) ?? id
      const outcome = await confirmationOutcome(this.store, parked)
      return outcome.state === 'settled' ? viewOf(outcome.result, outcome.callId) : undefined
    } catch {
      return undefined
    }
  }

  /** Denies confirmation `confirmId`, as `principal`, if `signal` (its 2025 request's) aborts before the client's answer comes back. */
  private denyOnAbort(signal: AbortSignal, confirmId: string, principal: Principal | undefined): void {
    if (signal.aborted) return
    const onAbort = (): void => {
      this.abandon.delete(confirmId)
      void this.tm.confirm(confirmId, confirmAs(false, principal)).catch(() => undefined)
    }
    signal.addEventListener('abort', onAbort, { once: true })
    remember(this.abandon, confirmId, () => {
      this.abandon.delete(confirmId)
      signal.removeEventListener('abort', onAbort)
    })
  }

  /** Keeps the outcome of each decision made here another way (on the page), for a URL retry that comes after it. */
  private listen(): void {
    if (this.listening) return
    this.listening = true
    this.tm.on('confirmation', (event) => {
      if (event.result !== undefined && this.links.has(event.confirmId)) remember(this.outcomes, event.confirmId, event.result)
    })
  }

  /** What a state sealed for `call` binds: its caller's `principalKey`, else the wiring's principal. */
  private stateKeyOf(call: AskedCall): string {
    return call.identity?.stateKey ?? this.principal
  }

  /** The client capabilities of the request: the 2026 envelope's, or (2025) those its `initialize` declared. */
  private capabilitiesOf(call: AskedCall): unknown {
    if (call.era === 'legacy') return call.server.getClientCapabilities()
    return (call.ctx.mcpReq.envelope as Record<string, unknown> | undefined)?.[MCP_ENVELOPE_KEYS.clientCapabilities]
  }

  /** The view a confirmation was asked with here, or its summary's stand-in on another instance. */
  private viewOf(state: RequestState): ConfirmationView {
    return this.views.get(state.id) ?? ({ status: 'needs_confirmation', confirmId: state.id, summary: `Run ${state.tool}` } as unknown as ConfirmationView)
  }

  /** The seal input of `state` at `round`, bound to the arguments of `call` (which `check` found to be the state's). */
  private init(call: AskedCall, state: RequestState, round: number): RequestStateInit & { readonly round: number } {
    const base = { kind: state.kind, tool: state.tool, arguments: call.args, callId: state.callId, id: state.id, principal: state.principal, round }
    return { ...base, ...(state.link === undefined ? {} : { link: state.link }), ...(state.schema === undefined ? {} : { schema: state.schema }) }
  }

  /** A confirmation's input request at the state's round, with its sealed state. */
  private request(call: AskedCall, view: ConfirmationView, init: RequestStateInit & { readonly round: number }): InputRequiredResult {
    const sealed = this.codec.seal(init)
    if (init.link === undefined) {
      return inputRequired({ inputRequests: { [inputKey('confirm', init.round)]: confirmationInputRequest(view, 'form') as InputRequest }, requestState: sealed })
    }
    const request = confirmationInputRequest(view, 'url', init.link)
    // 2025 URL elicitation carries an elicitationId (the shim would mint one): toolwire's own, for the completion notice
    if (call.era === 'legacy') {
      const elicitationId = this.elicitationIds.get(view.confirmId) ?? randomUUID()
      remember(this.elicitationIds, view.confirmId, elicitationId)
      return inputRequired({ inputRequests: { [inputKey('confirm', init.round)]: { ...request, params: { ...request.params, elicitationId } } as InputRequest }, requestState: sealed })
    }
    return inputRequired({ inputRequests: { [inputKey('confirm', init.round)]: request as InputRequest }, requestState: sealed })
  }
}

/** The caller a confirmation link keeps (for the page's `approverNotCaller`), when the call has a principal. */
function callerOf(principal: Principal | undefined): { caller?: { readonly subject: string; readonly issuer: string } } {
  return principal === undefined ? {} : { caller: { subject: principal.subject, issuer: principal.issuer } }
}
