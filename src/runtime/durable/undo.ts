/**
 * Undo payloads in a durable store: a call's `undo` payload is written there, and taken by
 * exactly one `tm.undo(callId)`, on whichever manager on the store asks first. A taker that
 * cannot run it, or whose run fails, puts it back (the store needs no peek: a put-back of
 * what one took cannot resurrect a payload another instance took).
 */
import { REFUSALS } from '../../core/texts.js'
import type { JsonValue } from '../../core/types.js'
import type { CallResult } from '../../core/view.js'
import { StoreConflictError, type UndoEntry } from '../store/types.js'
import type { UndoContext } from '../tool.js'
import { refused, type DurableContext } from './shared.js'

/** The undo payloads of a manager with a store. */
export class Undos {
  /** Undo payloads being written, by call id: `tm.undo` right after the call waits for its write. */
  private readonly writes = new Map<string, Promise<void>>()
  /** Call ids with a durable undo written by this process (for `canUndo`, bounded). */
  private readonly written = new Set<string>()

  constructor(private readonly ctx: DurableContext) {}

  /** Records an undo payload for a call (once per call); resolves once the store holds it (a failure is reported, never rejected). */
  put(callId: string, tool: string, payload: JsonValue): Promise<void> {
    const write = this.ctx.store.putUndo({ callId, tool, payload }).then(
      () => {
        this.written.add(callId)
        if (this.written.size > 10_000) this.written.delete(this.written.values().next().value as string)
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
    return this.written.has(callId) || this.writes.has(callId)
  }

  /**
   * Whether `tm.undo(callId)` here would run something, asked of the store: it holds the call's
   * undo (written by any manager on it, before or after a restart) and this manager has its
   * tool's `undo`. A store without `getUndo` answers {@link has}. Rejects when the store fails.
   */
  async undoable(callId: string): Promise<boolean> {
    const store = this.ctx.store
    if (store.getUndo === undefined) return this.has(callId)
    await this.writes.get(callId)
    const entry = await store.getUndo(callId)
    return entry !== undefined && typeof this.ctx.host.tool(entry.tool)?.def.undo === 'function'
  }

  /** Takes a call's undo from the store: exactly one of concurrent takers, on any instance, gets it. */
  private async take(callId: string): Promise<UndoEntry | undefined> {
    await this.writes.get(callId)
    this.written.delete(callId)
    return this.ctx.store.takeUndo(callId)
  }

  /**
   * Takes the call's undo payload from the store (exactly once across managers) and runs its
   * tool's `undo`. A manager that cannot run it (no such tool here, or the tool has no `undo`)
   * and a run that fails put the payload back, for another try or another instance. Never rejects.
   */
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
      // not ours to run: back in the store before refusing, for an instance that has the tool
      await this.putBack(entry)
      // the entry names its call: the refusal carries its tool and call id
      return host.early(entry.tool, callId, refused(REFUSALS.undoUnavailable.code, REFUSALS.undoUnavailable.message))
    }
    const taken = entry
    const tool = taken.tool
    return host.runUndo(
      callId,
      tool,
      () => (handler as (p: unknown, c: UndoContext) => unknown)(taken.payload, Object.freeze({ callId, toolName: tool })),
      (ok) => (ok ? undefined : this.putBack(taken)),
    )
  }

  /**
   * Puts back a payload this manager took and did not (successfully) run. Safe against a
   * double undo: from our take until this put the row did not exist, so no other instance
   * can have taken this payload meanwhile (a concurrent `tm.undo` found nothing and was
   * refused); after it, exactly one taker gets it again. A row that exists again (the call id
   * was given a new undo meanwhile) is left as it is. A failed write is reported (`error`):
   * the payload is lost then. Never rejects.
   */
  private async putBack(entry: UndoEntry): Promise<void> {
    try {
      await this.ctx.store.putUndo({ callId: entry.callId, tool: entry.tool, payload: entry.payload })
      this.written.add(entry.callId)
    } catch (err) {
      if (!(err instanceof StoreConflictError)) this.ctx.host.reportError(entry.callId, entry.tool, err)
    }
  }
}
