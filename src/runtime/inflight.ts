/**
 * The manager's calls in flight, for `tm.cancel` and the duplicate-id check: generated call ids
 * (a prefix per manager and a sequence number), a ring of slots indexed by that number, a map for
 * caller-chosen ids, and the calls whose asynchronous input check is still pending.
 */
import { Call } from './call.js'
import type { ToolResult } from '../core/result.js'

/** How many generated ids the ring holds at once (a power of two); more in flight go to the map. */
const SLOTS = 4096

let managerSeq = 0

/** A call whose asynchronous input check is pending: `cut` ends the wait with a result; `owner` is its principal's key. */
export interface Validating {
  readonly cut: (result: ToolResult) => void
  readonly owner: string | undefined
}

/** One manager's in-flight calls and its call ids. */
export class Inflight {
  /** In-flight calls by caller-chosen id, and (cheaper) by the sequence number of generated ids. */
  private readonly byId = new Map<string, Call>()
  /** Calls whose asynchronous input check is pending, by the call id they asked for, with their owner: `tm.cancel` cuts the wait. */
  readonly validating = new Map<string, Validating>()
  /** Generated ids index a ring of slots by sequence number (a Map's delete costs more than the whole call). */
  private readonly slots: (Call | undefined)[] = new Array(SLOTS).fill(undefined)
  /** The prefix of this manager's generated call ids. */
  readonly idPrefix = `call_${(++managerSeq).toString(36)}${Math.random().toString(36).slice(2, 8)}_`
  private seq = 0

  /**
   * The sequence number of the next generated id (its id is `idPrefix + seq`), past any id a
   * caller chose for a call still in flight (a caller may pick an id this manager would make).
   */
  nextSeq(): number {
    let seq = ++this.seq
    if (this.byId.size !== 0 || this.validating.size !== 0) while (this.taken(this.idPrefix + seq)) seq = ++this.seq
    return seq
  }

  /** Whether a caller-chosen (or ring-overflowed) call in flight, or a pending input check, holds `callId`. */
  private taken(callId: string): boolean {
    return this.byId.has(callId) || this.validating.has(callId)
  }

  /** A new generated call id. */
  nextCallId(): string {
    return this.idPrefix + this.nextSeq()
  }

  /** The in-flight call with exactly this id. */
  find(callId: string): Call | undefined {
    if (typeof callId !== 'string') return undefined
    if (callId.startsWith(this.idPrefix)) {
      const seq = Number(callId.slice(this.idPrefix.length))
      const call = Number.isSafeInteger(seq) && seq > 0 ? this.slots[seq & (SLOTS - 1)] : undefined
      // '0x1', '1.0' or ' 1' parse to the same number as '1': only the exact id matches
      if (call !== undefined && Call.seqOf(call) === seq && call.callId === callId) return call
    }
    return this.byId.get(callId)
  }

  track(call: Call): void {
    if (Call.seqOf(call) !== 0) {
      const i = Call.seqOf(call) & (SLOTS - 1)
      if (this.slots[i] === undefined) {
        this.slots[i] = call
        return
      }
    }
    this.byId.set(call.callId, call)
  }

  untrack(call: Call): void {
    if (Call.seqOf(call) !== 0) {
      const i = Call.seqOf(call) & (SLOTS - 1)
      if (this.slots[i] === call) {
        this.slots[i] = undefined
        return
      }
    }
    this.byId.delete(call.callId)
  }
}
