/**
 * A parked confirmation's outcome as other instances see it: the ledger key a confirmed run's
 * outcome is recorded under ({@link outcomeKey}), what the store says of the confirmation
 * ({@link confirmationOutcome}), and the `confirmation` event of an answered call
 * ({@link confirmationEvent}).
 */
import type { ToolResult } from '../../core/result.js'
import type { CallResult } from '../../core/view.js'
import { REFUSALS, STORE_TEXTS } from '../../core/texts.js'
import type { ToolStore } from '../store/types.js'
import type { ToolEvents } from '../types.js'
import { recordedResult } from './ledger.js'
import { principalRef, type PrincipalRef } from '../../core/principal.js'
import { evidenceApproverOf } from '../../observe/evidence.js'
import { CONFIRMATION_RUNNING, refused, unknownOutcomeResult } from './shared.js'

/** The `confirmation` event of an answered call: who called and who answered, when known. */
export function confirmationEvent(
  confirmId: string,
  call: { readonly tool: string; readonly callId: string; readonly principal?: PrincipalRef },
  approved: boolean,
  result: CallResult,
  approvedBy: PrincipalRef | undefined,
): ToolEvents['confirmation'] {
  const event: { -readonly [K in keyof ToolEvents['confirmation']]: ToolEvents['confirmation'][K] } = { confirmId, callId: call.callId, tool: call.tool, approved, result }
  if (call.principal !== undefined) event.principal = principalRef(call.principal)
  if (approvedBy !== undefined) event.approvedBy = evidenceApproverOf(approvedBy)
  return event
}

/** The ledger key of a confirmed run's outcome (two elements: never a call's key, which has three). */
export function outcomeKey(id: string): string {
  return JSON.stringify(['o', id])
}

/**
 * What the store says of a parked confirmation, for an instance waiting for its decision
 * while another instance may take it: still `parked`; `running` (claimed, its run not
 * finished); `settled` with the call's result (the outcome its run recorded, a denial, or an
 * unknown outcome when the run's process died); `gone` (no such confirmation, or expired).
 * A run that finished without a readable record settles as refused `confirmation_used` with a
 * message saying it ran elsewhere. @throws when the store cannot be read.
 */
export type ConfirmationOutcome =
  | { readonly state: 'gone' }
  | { readonly state: 'parked' | 'running'; readonly callId: string; readonly tool: string }
  | { readonly state: 'settled'; readonly callId: string; readonly tool: string; readonly result: ToolResult }

/** Reads a confirmation's {@link ConfirmationOutcome} from the store by its parked id. */
export async function confirmationOutcome(store: ToolStore, id: string): Promise<ConfirmationOutcome> {
  const call = await store.getParked(id)
  if (call === undefined || call.kind !== 'confirmation') return { state: 'gone' }
  const settled = (result: ToolResult): ConfirmationOutcome => ({ state: 'settled', callId: call.callId, tool: call.tool, result })
  switch (call.state) {
    case 'parked':
    case 'running':
      return { state: call.state, callId: call.callId, tool: call.tool }
    case 'expired':
      return { state: 'gone' }
    case 'denied':
      return settled(refused(REFUSALS.confirmationDenied.code, REFUSALS.confirmationDenied.message))
    case 'unknown':
      return settled(unknownOutcomeResult())
    case 'done': {
      // the run recorded its outcome before `finish`: a key still free means it recorded none
      const key = outcomeKey(id)
      const begun = await store.begin(key, '', { callId: call.callId })
      if (begun.state === 'settled') {
        const result = recordedResult(begun.result)
        if (result !== undefined) return settled(result)
      }
      if (begun.state === 'new') await store.release(key, begun.token).catch(() => undefined)
      return settled(refused('confirmation_used', STORE_TEXTS.confirmedElsewhereUnrecorded))
    }
  }
}

/** The refusal of a confirmation approved elsewhere whose run outlasted the wait for it. */
export function confirmedElsewhereRunning(): ToolResult {
  return refused(CONFIRMATION_RUNNING, STORE_TEXTS.confirmedElsewhereRunning)
}
