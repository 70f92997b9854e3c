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
import { finds, ownerOf, refused, type DurableContext } from './shared.js'
import { undoInput } from './bounded.js'
import type { Principal } from '../../core/principal.js'

/** The undo payloads of a manager with a store. */
export class Undos {
  /** Undo payloads being written, by call id: `tm.undo` right after the call waits for its write. */
  private readonly writes = new Map<string, Promise<void>>()
  /** Call ids with a durable undo written by this process, with its owner (for `canUndo`, bounded). */
  private readonly written = new Map<string, string | null>()
  /** The owners of the undo payloads being written, by call id. */
  private readonly writing = new Map<string, string | null>()

  constructor(private readonly ctx: DurableContext) {}

  /**
   * Records an undo payload for a call (once per call), owned by the call's `principal` when it
   * has one; resolves once the store holds it (a failure is reported, never rejected).
   */
  put(callId: string, tool: string, payload: JsonValue, principal?: Principal): Promise<void> {
    const owner = ownerOf(principal) ?? null
    const write = this.ctx.store.putUndo(undoInput({ callId, tool, payload, owner })).then(
      () => this.remember(callId, owner),
      (err: unknown) => this.ctx.host.reportError(callId, tool, err),
    )
    this.writes.set(callId, write)
    this.writing.set(callId, owner)
    void write.finally(() => {
      if (this.writes.get(callId) === write) {
        this.writes.delete(callId)
        this.writing.delete(callId)
      }
    })
    return write
  }

  /** Remembers an undo this process wrote (bounded). */
  private remember(callId: string, owner: string | null): void {
    this.written.delete(callId)
    this.written.set(callId, owner)
    if (this.written.size > 10_000) this.written.delete(this.written.keys().next().value as string)
  }

  /**
   * Whether this process wrote an undo for the call that has not been taken (another instance
   * may have taken it), and that `principal` finds (the operator, when absent, finds any).
   */
  has(callId: string, principal?: Principal): boolean {
    const asker = ownerOf(principal)
    if (this.written.has(callId)) return finds(asker, this.written.get(callId))
    return this.writes.has(callId) && finds(asker, this.writing.get(callId))
  }

  /**
   * Whether `tm.undo(callId)` here would run something, asked of the store: it holds the call's
   * undo (written by any manager on it, before or after a restart) and this manager has its
   * tool's `undo`, and `principal` finds it (another principal's undo is not there for it). A
   * store without `getUndo` answers {@link has}. Rejects when the store fails.
   */
  async undoable(callId: string, principal?: Principal): Promise<boolean> {
    const store = this.ctx.store
    if (store.getUndo === undefined) return this.has(callId, principal)
    await this.writes.get(callId)
    const entry = await store.getUndo(callId)
    return entry !== undefined && finds(ownerOf(principal), entry.owner) && typeof this.ctx.host.tool(entry.tool)?.def.undo === 'function'
  }

  /**
   * Takes a call's undo from the store: exactly one of concurrent takers, on any instance, gets it;
   * with an `owner`, only an undo of that owner or of none.
   */
  private async take(callId: string, owner: string | undefined): Promise<UndoEntry | undefined> {
    await this.writes.get(callId)
    const entry = await (owner === undefined ? this.ctx.store.takeUndo(callId) : this.ctx.store.takeUndo(callId, owner))
    // gone from the store for this taker (taken now, or by another instance before): not this process's to offer any more
    if (entry !== undefined || finds(owner, this.written.get(callId) ?? null)) this.written.delete(callId)
    return entry
  }

  /**
   * Takes the call's undo payload from the store (exactly once across managers) and runs its
   * tool's `undo`. A manager that cannot run it (no such tool here, or the tool has no `undo`)
   * and a run that fails put the payload back, for another try or another instance. An undo of
   * another principal's call answers as an unknown call id. Never rejects.
   */
  async undo(callId: string, principal?: Principal): Promise<CallResult> {
    const host = this.ctx.host
    let entry: UndoEntry | undefined
    try {
      entry = typeof callId === 'string' ? await this.take(callId, ownerOf(principal)) : undefined
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
      () => (handler as (p: unknown, c: UndoContext) => unknown)(taken.payload, undoContext(callId, tool, principal)),
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
      await this.ctx.store.putUndo(undoInput(entry))
      this.remember(entry.callId, entry.owner ?? null)
    } catch (err) {
      if (!(err instanceof StoreConflictError)) this.ctx.host.reportError(entry.callId, entry.tool, err)
    }
  }
}

/** The context of a tool's `undo(payload, ctx)`: the undone call, and who asked for the undo (when a principal did). */
export function undoContext(callId: string, toolName: string, principal: Principal | undefined): UndoContext {
  return Object.freeze(principal === undefined ? { callId, toolName } : { callId, toolName, principal })
}
