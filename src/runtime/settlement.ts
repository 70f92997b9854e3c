/**
 * What a settled execution reports besides its view: the raw contract's outcome and its
 * diagnostics (`tm.executeWithOutcome`).
 */
import { outcomeStatusOf } from '../core/status.js'
import type { ToolResult } from '../core/result.js'
import type { OutcomeDiagnostics, ToolExecutionOutcome } from './outcome.js'
import type { Settlement } from './types.js'

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
