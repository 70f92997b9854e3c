/**
 * The two hosts the manager hands out: what its calls see of it (`CallHost`, call.ts) and what
 * the durable store's side uses of it (`DurableHost`, durable.ts), both wired to the parked
 * calls, the undos, the in-flight calls and the events.
 */
import type { Call } from './call.js'
import { ownerOf, type Durable, type DurableHost } from './durable.js'
import type { Inflight } from './inflight.js'
import { continued, keptOptions, type ParkedCalls } from './parked.js'
import { settleEarly } from './settlement.js'
import type { LocalUndos } from './undos.js'
import { randomId } from '../core/ids.js'
import type { EvidenceStore } from '../observe/evidence.js'
import type { ImpliedScopes } from '../core/principal.js'
import type { CallHost, ManagerState } from './types.js'

/** What the durable layer uses of a manager. */
export function durableHostOf(state: ManagerState, parked: ParkedCalls, undos: LocalUndos, evidence: EvidenceStore | undefined): DurableHost {
  return {
    local: (id) => parked.local(id),
    forget: (id) => {
      parked.forget(id)
    },
    tool: (name) => state.tools.get(name),
    checkAnswer: (schema, answer) => parked.checkAnswer(schema, answer),
    run: (kind, tool, callId, input, timeoutMs, answer, idempotencyKey, traceContext, resumeState, as) => {
      const options = continued(keptOptions(timeoutMs, idempotencyKey, traceContext, as?.principal), as?.approvedBy)
      return parked.continueParked(kind, state.tools.get(tool)!, callId, input, options, answer, resumeState)
    },
    early: (tool, callId, result) => settleEarly(state, tool, callId === undefined ? undefined : { callId }, result),
    runUndo: (callId, tool, restore, after) => undos.runUndo(callId, tool, restore, after),
    reportError: (callId, tool, error) => state.events.reportError(callId, tool, error),
    emit: (event, payload) => state.events.emit(event, payload),
    evidence,
  }
}

/** What a call host is made from. */
export interface CallHostParts {
  readonly state: ManagerState
  readonly impliedScopes: ImpliedScopes | undefined
  /** Whether calls make spans (registration.ts's tracer probe). */
  readonly tracerReady: (now: number) => boolean
  readonly evidence: EvidenceStore | undefined
  /** The evidence is the store's: a call's record is awaited before its view. */
  readonly awaitEvidence: boolean
  readonly inflight: Inflight
  readonly parked: ParkedCalls
  readonly undos: LocalUndos
  readonly durable: Durable | undefined
}

/** What a manager's calls see of it. */
export function callHostOf(parts: CallHostParts): CallHost {
  const { state, inflight, parked, undos, durable } = parts
  const { events } = state
  return {
    metrics: state.metrics,
    impliedScopes: parts.impliedScopes,
    tracer: state.tracer,
    tracerReady: parts.tracerReady,
    evidence: parts.evidence,
    awaitEvidence: parts.awaitEvidence,
    hasListeners: (event) => events.listeners[event] !== undefined,
    emit: (event, payload) => events.emit(event, payload),
    reportError: (callId, tool, error) => events.reportError(callId, tool, error),
    registerUndo: (callId, restore, principal) => undos.registerUndo(callId, () => restore(), undefined, ownerOf(principal) ?? null),
    registerUndoPayload: (callId, entry, payload, principal) => undos.registerUndoPayload(callId, entry, payload, principal),
    canUndo: (callId) => undos.canUndo(callId),
    newConfirmation: (entry, input, callId) => {
      if (durable !== undefined) return durable.parking.newConfirmation(entry, input, callId)
      const id = randomId()
      return { id, handle: id }
    },
    park: (id, kind, entry, input, callId, options, extras) => parked.park(id, kind, entry, input, callId, options, extras),
    unpark: (id, callId) => parked.unpark(id, callId),
    ledgerBegin: (entry, callId, input, key, principal) => durable!.ledger.begin(entry, callId, input, key, principal),
    ledgerSettle: (ticket, result, callId, tool) => durable!.ledger.settle(ticket, result, callId, tool),
    ledgerRelease: (ticket, callId, tool) => durable!.ledger.release(ticket, callId, tool),
    track: (call) => inflight.track(call as Call),
    untrack: (call) => inflight.untrack(call as Call),
  }
}
