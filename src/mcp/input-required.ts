/**
 * Confirmations as multi-round-trip requests on the 2026-07-28 era (basic/patterns/mrtr): the
 * glue between the `tools/call` handler and mrtr.ts / request-state.ts. A call that needs
 * confirmation, from a client that declared form elicitation, answers `input_required` with a
 * form `elicitation/create` input request and a sealed `requestState` (URL mode is not wired yet); the client's retry carries the answer, and the confirmation is decided through
 * `tm.confirm` (the store's claim keeps the run to once, on any instance). A second identical
 * retry answers the recorded result, marked replayed.
 */
import { inputRequired, ProtocolError, type InputRequest, type InputRequiredResult, type ServerContext } from '@modelcontextprotocol/server'
import type { CallResult } from '../core/view.js'
import { viewOf } from '../core/view.js'
import type { ToolStore } from '../runtime/store/types.js'
import { verifyApproval, type ApprovalSecrets } from '../runtime/store/approval.js'
import { confirmationOutcome } from '../runtime/durable/parking.js'
import {
  confirmationInputRequest,
  confirmationMode,
  expectedInputOf,
  INVALID_REQUEST_STATE,
  inputKey,
  readInputAnswer,
  RequestStateCodec,
  type ConfirmationView,
  type RequestState,
} from './mrtr.js'
import { MCP_ENVELOPE_KEYS } from './protocol.js'
import type { ServableManager } from './meta.js'

/** What the confirmations of one server factory share (`createMcpServerFactory`'s wiring). */
export interface ConfirmationWiring {
  /** The approval secret (or rotation list) that seals `requestState`; absent: this process's random key. */
  readonly secret?: ApprovalSecrets
  /** The principal every request of this server acts for (`principalOf` the bearer token; `''` without one). */
  readonly principal?: string
  /** The durable store, to answer a replayed retry with the outcome recorded on any instance. */
  readonly store?: ToolStore
}

/** What a retry answered: the call's result (replayed when recorded earlier), a denial, or a new input request. */
export type ConfirmationAnswer =
  | { readonly kind: 'result'; readonly view: CallResult; readonly replayed: boolean }
  | { readonly kind: 'declined'; readonly view: CallResult }
  | { readonly kind: 'ask'; readonly result: InputRequiredResult }

/** The most settled outcomes a memory manager's server keeps for replayed retries. */
const MAX_OUTCOMES = 1000

/** Sets `key` in a map bounded to {@link MAX_OUTCOMES} entries (the oldest goes first). */
function remember<V>(map: Map<string, V>, key: string, value: V): void {
  if (map.size >= MAX_OUTCOMES) map.delete(map.keys().next().value!)
  map.set(key, value)
}

/**
 * The confirmations of one server factory: asks (`ask`) and answers (`answer`) them as MRTR.
 * One `RequestStateCodec` per factory, shared by its per-request servers (`verify` is their
 * `ServerOptions.requestState.verify`).
 */
export class McpConfirmations {
  readonly codec: RequestStateCodec
  private readonly principal: string
  private readonly store: ToolStore | undefined
  private readonly secret: ApprovalSecrets | undefined
  /** confirmId → the result of its run here, for a replayed retry on a manager without a store. */
  private readonly outcomes = new Map<string, CallResult>()
  /** confirmId → its view as asked here, so a re-ask shows the same summary. */
  private readonly views = new Map<string, ConfirmationView>()

  constructor(
    private readonly tm: ServableManager,
    wiring: ConfirmationWiring = {},
  ) {
    this.codec = new RequestStateCodec(wiring.secret === undefined ? {} : { secret: wiring.secret })
    this.principal = wiring.principal ?? ''
    this.store = wiring.store
    this.secret = wiring.secret
  }

  /**
   * The `input_required` answer for a call waiting for confirmation, when the request's client
   * declared form elicitation and the tool does not ask for URL (`confirmationMode`); otherwise
   * undefined (the caller answers the `isError` result naming the confirmation, and the link).
   */
  ask(ctx: ServerContext, tool: string, args: unknown, callId: string, view: ConfirmationView): InputRequiredResult | undefined {
    const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined
    const confirmVia = this.tm.manifest().find((entry) => entry.name === tool)?.confirmVia
    // URL mode is not wired yet: a client with URL elicitation only gets the isError answer with the page's link
    const mode = confirmationMode({ capabilities: envelope?.[MCP_ENVELOPE_KEYS.clientCapabilities], confirmVia, linkAvailable: false })
    if (mode !== 'form') return undefined
    remember(this.views, view.confirmId, view)
    const base = { kind: 'confirm' as const, tool, arguments: args, callId, id: view.confirmId, principal: this.principal }
    return this.request(view, 1, base)
  }

  /**
   * Answers a retry carrying `state` (opened by the SDK's `verify` hook): refuses a state sealed
   * for another call or principal (nothing runs), then reads the answer under the round's key.
   * @throws ProtocolError (`INVALID_REQUEST_STATE`) for a state of another call.
   */
  async answer(ctx: ServerContext, tool: string, args: unknown, state: RequestState): Promise<ConfirmationAnswer> {
    if (this.codec.check(state, { tool, arguments: args, principal: this.principal }) !== undefined || state.kind !== 'confirm') {
      throw new ProtocolError(INVALID_REQUEST_STATE.code, INVALID_REQUEST_STATE.message, { ...INVALID_REQUEST_STATE.data })
    }
    const expected = expectedInputOf(state)
    const answer = readInputAnswer(ctx.mcpReq.inputResponses, inputKey('confirm', state.round), expected)
    const view = this.views.get(state.id) ?? ({ status: 'needs_confirmation', confirmId: state.id, summary: `Run ${tool}` } as unknown as ConfirmationView)
    switch (answer.kind) {
      case 'approve':
        return this.approve(state)
      case 'decline':
        return { kind: 'declined', view: await this.tm.confirm(state.id, { approve: false }) }
      default:
        // missing or not an answer to what was asked: ask the same again
        return { kind: 'ask', result: this.reask(state, args, view, state.round) }
    }
  }

  private async approve(state: RequestState): Promise<ConfirmationAnswer> {
    const view = await this.tm.confirm(state.id, { approve: true })
    if (view.status === 'refused' && view.code === 'confirmation_used') {
      const recorded = await this.recorded(state.id)
      if (recorded !== undefined) return { kind: 'result', view: recorded, replayed: true }
    }
    if (this.store === undefined && view.status !== 'refused') remember(this.outcomes, state.id, view)
    return { kind: 'result', view, replayed: false }
  }

  /** The outcome recorded for a confirmation already decided: here, or in the store by any instance. */
  private async recorded(confirmId: string): Promise<CallResult | undefined> {
    const local = this.outcomes.get(confirmId)
    if (local !== undefined) return local
    if (this.store === undefined) return undefined
    try {
      // with an approval secret the confirmId is a signed token naming the parked row
      const id = (this.secret === undefined ? undefined : verifyApproval(this.secret, confirmId)?.confirmationId) ?? confirmId
      const outcome = await confirmationOutcome(this.store, id)
      return outcome.state === 'settled' ? viewOf(outcome.result, outcome.callId) : undefined
    } catch {
      return undefined
    }
  }

  private reask(state: RequestState, args: unknown, view: ConfirmationView, round: number): InputRequiredResult {
    const base = { kind: 'confirm' as const, tool: state.tool, arguments: args, callId: state.callId, id: state.id, principal: state.principal }
    return this.request(view, round, base)
  }

  private request(
    view: ConfirmationView,
    round: number,
    base: { kind: 'confirm'; tool: string; arguments: unknown; callId: string; id: string; principal: string },
  ): InputRequiredResult {
    const request = confirmationInputRequest(view, 'form')
    return inputRequired({ inputRequests: { [inputKey('confirm', round)]: request as InputRequest }, requestState: this.codec.seal({ ...base, round }) })
  }
}
