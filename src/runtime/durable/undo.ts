/**
 * Undo payloads in a durable store: a call's `undo` payload is written there, and taken by
 * exactly one `tm.undo(callId)`, on whichever manager on the store asks first.
 */
import { REFUSALS } from '../../core/texts.js'
import type { JsonValue } from '../../core/types.js'
import type { CallResult } from '../../core/view.js'
import type { UndoEntry } from '../store/types.js'
import type { UndoContext } from '../tool.js'
import { refused, type DurableContext } from './shared.js'

/** The undo payloads of a manager with a store. */
export class Undos {
  /** Undo payloads being written, by call id: `tm.undo` right after the call waits for its write. */
  private readonly writes = new Map<string, Promise<void>>()
  /** Call ids with a durable undo written by this process (for `canUndo`, bounded). */
  private readonly undoable = new Set<string>()

  constructor(private readonly ctx: DurableContext) {}

  /** Records an undo payload for a call (once per call); resolves once the store holds it (a failure is reported, never rejected). */
  put(callId: string, tool: string, payload: JsonValue): Promise<void> {
    const write = this.ctx.store.putUndo({ callId, tool, payload }).then(
      () => {
        this.undoable.add(callId)
        if (this.undoable.size > 10_000) this.undoable.delete(this.undoable.values().next().value as string)
      },
      (err: unknown) => this.ctx.host.reportError(callId, tool, err),
    )
    this.writes.set(callId, write)
    void write.finally(() => {
      if (this.writes.get(callId) === write) this.writes.delete(callId)
    })
    return write
  }

  /** Whether this process wrote an undo for the call that has not been taken (another instance may have taken it). */
  has(callId: string): boolean {
    return this.undoable.has(callId) || this.writes.has(callId)
  }

  /** Takes a call's undo from the store: exactly one of concurrent takers, on any instance, gets it. */
  private async take(callId: string): Promise<UndoEntry | undefined> {
    await this.writes.get(callId)
    this.undoable.delete(callId)
    return this.ctx.store.takeUndo(callId)
  }

  /** Takes the call's undo payload from the store (exactly once across managers) and runs its tool's `undo`. Never rejects. */
  async undo(callId: string): Promise<CallResult> {
    const host = this.ctx.host
    let entry: UndoEntry | undefined
    try {
      entry = typeof callId === 'string' ? await this.take(callId) : undefined
    } catch (err) {
      host.reportError(callId, 'undo', err)
      return host.early('undo', undefined, refused('store_unavailable', 'The undo could not be read from the store; nothing ran'))
    }
    if (entry === undefined) return host.early('undo', undefined, refused(REFUSALS.undoUnavailable.code, REFUSALS.undoUnavailable.message))
    const handler = host.tool(entry.tool)?.def.undo
    if (typeof handler !== 'function') {
      // the entry names its call: the refusal carries its tool and call id
      return host.early(entry.tool, callId, refused(REFUSALS.undoUnavailable.code, REFUSALS.undoUnavailable.message))
    }
    const payload = entry.payload
    const tool = entry.tool
    return host.runUndo(callId, () => (handler as (p: unknown, c: UndoContext) => unknown)(payload, Object.freeze({ callId, toolName: tool })))
  }
}
