/**
 * How a call settles outside its body's run: the view (and events, span, metrics) of a call
 * that settled before its body could run, and what a settled execution reports besides its
 * view: the raw contract's outcome and its diagnostics (`tm.executeWithOutcome`).
 */
import { outcomeStatusOf } from '../core/status.js'
import type { ToolResult } from '../core/result.js'
import { viewOf, type CallResult } from '../core/view.js'
import { callRecord } from '../observe/record.js'
import type { OutcomeDiagnostics, ToolExecutionOutcome } from './outcome.js'
import { principalRef } from '../core/principal.js'
import type { CallOptions } from './tool.js'
import type { ManagerState, Settlement } from './types.js'

/** The result of a call that cannot run, with the options its view should use. */
export interface Early {
  readonly result: ToolResult
  readonly options: CallOptions | undefined
}

/** The empty diagnostics of one invocation. */
export function newDiagnostics(): OutcomeDiagnostics {
  return { configurationFailures: [], late: [] }
}

/** The semantic status of a canonical result, as outcomes and evidence report it. */
export const outcomeStatus: (result: ToolResult) => ToolExecutionOutcome['status'] = outcomeStatusOf

/** The frozen outcome of a settled execution. */
export function outcomeOf(s: Settlement, tool: string): ToolExecutionOutcome {
  const e = s.result.error() ?? s.result.refusal()
  const outcome: Record<string, unknown> = { status: outcomeStatus(s.result), callId: s.view.callId ?? '', tool, reported: s.reported !== undefined }
  if (e !== undefined) outcome.error = Object.freeze({ kind: e.kind, message: e.message })
  return Object.freeze(outcome) as unknown as ToolExecutionOutcome
}

/** A call settled before its body could run. */
export function settleEarly(state: ManagerState, tool: string, options: CallOptions | undefined, result: ToolResult, bug?: unknown): Promise<CallResult> {
  return Promise.resolve(earlyView(state, tool, options, result, bug))
}

/** The settlement (`tm.execute`'s) of a call that settled before its body could run: it returned nothing. */
export function earlySettlement(state: ManagerState, tool: string, early: Early): Promise<Settlement> {
  const { result } = early
  return settleEarly(state, tool, early.options, result).then((view) => ({
    view,
    result,
    raw: undefined,
    ran: false,
    reported: undefined,
    diagnostics: newDiagnostics(),
  }))
}

/** The view of a call that settled before its body could run. `options` are a snapshot from `readOptions`. Never throws. */
export function earlyView(state: ManagerState, tool: string, options: CallOptions | undefined, result: ToolResult, bug?: unknown): CallResult {
  const callId = typeof options?.callId === 'string' ? options.callId : state.nextCallId()
  const view = viewOf(result, callId)
  const principal = options?.principal
  const who = principal === undefined ? undefined : principalRef(principal)
  const { events, tracer } = state
  try {
    if (events.listeners.call_start !== undefined) events.emit('call_start', who === undefined ? { callId, tool } : { callId, tool, principal: who })
    if (tracer !== undefined) {
      const entry = state.tools.get(tool)
      const span = tracer.start(tool, callId, entry?.def.description, undefined, undefined, tracer.parentOf(options?.traceContext), who)
      if (span !== undefined) tracer.end(span, result, undefined)
    }
    if (bug !== undefined) events.reportError(callId, tool, bug)
    const entry = state.tools.get(tool)
    if (entry !== undefined) {
      // counted as started too, so the in-flight gauge is left as it was
      state.metrics.started(entry.metricsId)
      state.metrics.settled(entry.metricsId, result, 0)
    }
    if (events.listeners.call_end !== undefined) {
      const now = Date.now()
      const record = callRecord(callId, tool, result, now, now, 1, state.hasUndo(callId), who?.subject)
      const payload = { callId, tool, status: view.status, statusName: result.statusName(), durationMs: 0, result, view, record }
      events.emit('call_end', who === undefined ? payload : { ...payload, principal: who })
    }
  } catch (err) {
    // bookkeeping never keeps a call from settling
    if (err !== bug) events.reportError(callId, tool, err)
  }
  return view
}
