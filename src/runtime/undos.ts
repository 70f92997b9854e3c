/**
 * The undos registered in this process: closures (and, without a store, JSON payloads run by the
 * tool's `undo`), `tm.undo` (through the store when the undo is not here) and the run of an undo
 * with its events.
 */
import { finds, ownerOf, undoContext, type Durable } from './durable.js'
import type { Inflight } from './inflight.js'
import { answererOf, type Principal } from '../core/principal.js'
import { describeThrown, normalizeReturn } from './normalize.js'
import { settleEarly } from './settlement.js'
import { badOptions } from './options.js'
import { refusalError, toolError, ToolResult } from '../core/result.js'
import { REFUSALS, UNDO_FAILED_MESSAGE } from '../core/texts.js'
import { sensitiveKeys } from '../core/redact.js'
import { viewOf, type CallResult } from '../core/view.js'
import type { JsonValue } from '../core/types.js'
import { callRecord } from '../observe/record.js'
import { StoreUnavailableError } from './store/types.js'
import type { AnswerOptions, UndoContext } from './tool.js'
import type { ManagerState, ToolEntry } from './types.js'

/** A closure undo: the tool whose call registered it (for the undo's `call_end`), `restore` (given the undoer) and its owner (the key of the call's principal; `null` for none). */
interface RegisteredUndo {
  readonly tool: string
  readonly restore: (undoer: Principal | undefined) => unknown
  readonly owner: string | null
}

/** What the undos are made from; the durable side is read when needed (it is made after). */
export interface UndosConfig {
  readonly state: ManagerState
  /** The manager's options (`undoLimit` is read at each registration). */
  readonly options: { readonly undoLimit?: number }
  readonly inflight: Inflight
  readonly durable: () => Durable | undefined
}

/** One manager's undos. */
export class LocalUndos {
  /** Closure undos by call id, oldest first. */
  private readonly byId = new Map<string, RegisteredUndo>()
  private readonly state: ManagerState
  private readonly config: UndosConfig

  constructor(config: UndosConfig) {
    this.config = config
    this.state = config.state
  }

  /** The durable store's side of the manager; `undefined` without a store. */
  private get durable(): Durable | undefined {
    return this.config.durable()
  }

  /** Whether a closure undo is registered here under `callId`. */
  has(callId: string): boolean {
    return this.byId.has(callId)
  }

  /**
   * Runs the undo a call registered, exactly once. Otherwise refused `undo_unavailable`. Never rejects.
   * An undo whose run fails (its view is not `ok`) stays registered: `tm.undo` may try it again.
   * With `options.principal`, only the undo of a call that principal made (or of one made without a
   * principal) is found: another's is refused as for an unknown call id.
   */
  undo(callId: string, options?: AnswerOptions): Promise<CallResult> {
    const tool = 'undo'
    const principal = answererOf(options)
    if (typeof principal === 'string') return settleEarly(this.state, tool, undefined, badOptions(principal))
    const registered = this.undoFor(callId, principal)
    // through the store: exactly one manager on it takes the undo
    if (registered === undefined && this.durable !== undefined) return this.durable.undos.undo(callId, principal)
    if (registered === undefined) {
      return settleEarly(this.state, tool, undefined, ToolResult.failed(refusalError(REFUSALS.undoUnavailable.code, REFUSALS.undoUnavailable.message)))
    }
    // taken while it runs: a concurrent tm.undo of the call is refused
    this.byId.delete(callId)
    return this.runUndo(callId, registered.tool, () => registered.restore(principal), (ok) => {
      // a failed undo is put back, unless the call id was given another undo meanwhile
      if (!ok && !this.byId.has(callId)) this.registerUndo(callId, registered.restore, registered.tool, registered.owner)
    })
  }

  /** The closure undo registered here for `callId` that `principal` finds (the operator, when absent, finds any). */
  private undoFor(callId: string, principal: Principal | undefined): RegisteredUndo | undefined {
    const registered = this.byId.get(callId)
    return registered === undefined || finds(ownerOf(principal), registered.owner) ? registered : undefined
  }

  /**
   * Runs an undo and gives its view, with `call_start` and a `call_end` marked `undo: true`
   * (the undone call's id and tool). `after(ok)` runs before `call_end` (and before the view is
   * given): a failed undo is put back there. Never rejects.
   */
  runUndo(callId: string, tool: string, restore: () => unknown, after: (ok: boolean) => void | Promise<void>): Promise<CallResult> {
    const startedAt = Date.now()
    if (this.state.events.listeners.call_start !== undefined) this.state.events.emit('call_start', { callId, tool })
    let result: ToolResult
    const fail = (err: unknown): void => {
      this.state.events.reportError(callId, tool, err)
      result = ToolResult.failed(toolError('other', UNDO_FAILED_MESSAGE))
    }
    const end = async (): Promise<CallResult> => {
      // done, or nothing left to do (`skipped`); an error or a refusal it returned is a failure
      const ok = result.statusName() === 'success' || result.statusName() === 'skipped'
      try {
        await after(ok)
      } catch (err) {
        this.state.events.reportError(callId, tool, err)
      }
      const view = viewOf(result, callId)
      if (this.state.events.listeners.call_end !== undefined) {
        const endedAt = Date.now()
        const record = callRecord(callId, tool, result, startedAt, endedAt, 1, this.canUndo(callId))
        const durationMs = Math.max(0, endedAt - startedAt)
        this.state.events.emit('call_end', { callId, tool, status: view.status, statusName: result.statusName(), durationMs, result, view, record, undo: true })
      }
      return view
    }
    let value: unknown
    try {
      value = restore()
    } catch (err) {
      fail(err)
      return end()
    }
    return Promise.resolve(value).then(
      (v) => {
        try {
          // read like a body's return (a ToolResult or helper result it returns is its outcome), redacted with the tool's sensitive names
          const entry = this.state.tools.get(tool)
          result = normalizeReturn(v, entry?.untrusted ?? false, entry?.sensitive, entry?.sensitiveKey ?? sensitiveKeys(undefined))
          if (result.statusName() === 'pending') throw new TypeError('toolwire: an undo cannot suspend (it returned a pending result)')
        } catch (err) {
          fail(err)
        }
        return end()
      },
      (err: unknown) => {
        fail(err)
        return end()
      },
    )
  }

  /** A JSON undo payload for the tool's `undo(payload, ctx)`, owned by `principal`: in the store when there is one, else a closure here. */
  registerUndoPayload(callId: string, entry: ToolEntry, payload: JsonValue, principal: Principal | undefined): void | Promise<void> {
    if (this.durable !== undefined) return this.durable.undos.put(callId, entry.name, payload, principal)
    const handler = entry.def.undo as (p: unknown, c: UndoContext) => unknown
    const toolName = entry.name
    this.registerUndo(callId, (undoer) => handler(payload, undoContext(callId, toolName, undoer)), toolName, ownerOf(principal) ?? null)
  }

  /**
   * Whether `tm.undo(callId)` would run something now, asked of the store when there is one:
   * the call's undo is in it (registered by any manager on the store, before or after a
   * restart, and not taken since; still there after a failed undo) and this manager has its
   * tool's `undo`. Without a store, or with a store of the app's own that has no `getUndo`, the
   * answer is {@link canUndo}'s. Rejects with a `StoreUnavailableError` when the store fails
   * (also an `error` event): `false` always means there is nothing to undo here.
   */
  async undoable(callId: string, options?: AnswerOptions): Promise<boolean> {
    if (typeof callId !== 'string') return false
    const principal = answererOf(options)
    if (typeof principal === 'string') return false
    if (this.undoFor(callId, principal) !== undefined) return true
    if (this.durable === undefined) return false
    try {
      return await this.durable.undos.undoable(callId, principal)
    } catch (err) {
      this.state.events.reportError(callId, 'undo', err)
      throw err instanceof StoreUnavailableError ? err : new StoreUnavailableError(`toolwire: the store could not be asked for the undo: ${describeThrown(err).message}`, { cause: err })
    }
  }

  /** Registers a closure undo owned by `owner`; `tool` defaults to the tool of the call in flight with this id. */
  registerUndo(callId: string, restore: (undoer: Principal | undefined) => unknown, tool: string | undefined, owner: string | null): void {
    this.byId.delete(callId)
    this.byId.set(callId, { tool: tool ?? this.config.inflight.find(callId)?.toolName ?? 'undo', restore, owner })
    const limit = this.config.options.undoLimit ?? 1000
    while (this.byId.size > limit) this.byId.delete(this.byId.keys().next().value as string)
  }

  /**
   * Whether `tm.undo(callId)` would run something, as far as this process knows: an undo
   * registered here (a closure, or a payload without a store), or a payload this process wrote
   * to the store and has not seen taken. With a store it can be wrong both ways: an undo written
   * by another manager (or before a restart) is not known here, and one that another manager
   * took still answers `true`. Ask {@link undoable} for the store's answer.
   */
  canUndo(callId: string, options?: AnswerOptions): boolean {
    const principal = answererOf(options)
    if (typeof principal === 'string') return false
    return this.undoFor(callId, principal) !== undefined || (this.durable !== undefined && this.durable.undos.has(callId, principal))
  }
}
