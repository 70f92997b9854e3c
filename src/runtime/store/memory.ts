/**
 * The in-memory store: today's behaviour (nothing outlives the process), the library default.
 * JavaScript runs one method at a time to its first `await`, and no method here awaits before
 * it has changed the state, so each method is atomic.
 */
import type { JsonValue } from '../../core/types.js'
import type { EvidenceRecord } from '../../observe/evidence.js'
import { randomId } from './codec.js'
import {
  StoreConflictError,
  StoreClosedError,
  begunBy,
  owned,
  pruneAge,
  type BeginOptions,
  type BeginResult,
  type ClaimOptions,
  type ClaimResult,
  type ParkInput,
  type ParkedCall,
  type ParkedState,
  type PruneOptions,
  type PruneResult,
  type StoreOptions,
  type SweepResult,
  type ToolStore,
  type UndoEntry,
} from './types.js'
import { MemoryTaskStore } from './tasks-memory.js'
import type { TaskStore } from './tasks.js'
import type { PrincipalRef } from '../../core/principal.js'

interface Parked {
  call: ParkedCall
  leaseUntil: number | null
}

interface LedgerRow {
  readonly inputHash: string
  readonly callId: string
  readonly startedAt: number
  state: 'in_flight' | 'settled' | 'unknown'
  token: string
  leaseUntil: number | null
  result: JsonValue
  /** The input as `begin` recorded it (redacted by the caller), or null. */
  readonly input: JsonValue | null
  /** Who began the run, or null. */
  readonly principal: PrincipalRef | null
}

/** A {@link ToolStore} in this process's memory. */
export class MemoryStore implements ToolStore {
  readonly kind = 'memory'
  /** It keeps owners (parked calls, undos, ledger keys). */
  readonly principals = true
  /** The store's clock (the `now` option, default `Date.now`). */
  readonly now: () => number
  private readonly parked = new Map<string, Parked>()
  private readonly undos = new Map<string, UndoEntry>()
  private evidence: { readonly record: EvidenceRecord; readonly at: number }[] = []
  private readonly ledger = new Map<string, LedgerRow>()
  private closed = false
  /** Tasks (the MCP tasks extension), in this process only: another instance does not see them. */
  readonly tasks: TaskStore

  constructor(options: StoreOptions = {}) {
    this.now = options.now ?? Date.now
    this.tasks = new MemoryTaskStore(this.now, () => this.open(), (id) => this.parked.get(id)?.call.state)
  }

  /** A closed store answers nothing, as a closed database would. */
  private open(): void {
    if (this.closed) throw new StoreClosedError('toolwire: the store is closed')
  }

  async park(call: ParkInput): Promise<void> {
    this.open()
    if (this.parked.has(call.id)) throw new StoreConflictError(`toolwire: parked call ${call.id} exists`)
    const now = this.now()
    const { ttlMs: _ttl, owner, ...rest } = call
    const expiresAt = call.ttlMs === undefined ? call.expiresAt : now + call.ttlMs
    const row: ParkedCall = Object.freeze({ ...rest, expiresAt, data: call.data ?? null, state: 'parked', fence: 0, createdAt: now, updatedAt: now, ...owned(owner) })
    this.parked.set(call.id, { call: row, leaseUntil: null })
  }

  async getParked(id: string): Promise<ParkedCall | undefined> {
    this.open()
    return this.parked.get(id)?.call
  }

  async listParked(state: ParkedState = 'parked'): Promise<readonly ParkedCall[]> {
    this.open()
    return [...this.parked.values()].map((p) => p.call).filter((c) => c.state === state)
  }

  private set(p: Parked, state: ParkedState, fence = p.call.fence): ParkedCall {
    p.call = Object.freeze({ ...p.call, state, fence, updatedAt: this.now() })
    return p.call
  }

  async claim(id: string, options: ClaimOptions = {}): Promise<ClaimResult> {
    this.open()
    const p = this.parked.get(id)
    if (p === undefined || (options.kind !== undefined && p.call.kind !== options.kind)) return { ok: false, reason: 'unknown' }
    if (p.call.state !== 'parked') return { ok: false, reason: p.call.state === 'expired' ? 'expired' : 'used', state: p.call.state }
    const now = this.now()
    if (p.call.expiresAt !== null && p.call.expiresAt <= now) {
      this.set(p, 'expired')
      return { ok: false, reason: 'expired', state: 'expired' }
    }
    p.leaseUntil = options.leaseMs === undefined ? null : now + options.leaseMs
    const call = this.set(p, 'running', p.call.fence + 1)
    return { ok: true, call, fence: call.fence }
  }

  async finish(id: string, fence: number): Promise<boolean> {
    this.open()
    const p = this.parked.get(id)
    if (p === undefined || p.call.state !== 'running' || p.call.fence !== fence) return false
    this.set(p, 'done')
    return true
  }

  async unclaim(id: string, fence: number): Promise<boolean> {
    this.open()
    const p = this.parked.get(id)
    if (p === undefined || p.call.state !== 'running' || p.call.fence !== fence) return false
    p.leaseUntil = null
    this.set(p, 'parked')
    return true
  }

  async deny(id: string): Promise<boolean> {
    this.open()
    const p = this.parked.get(id)
    if (p === undefined || p.call.state !== 'parked') return false
    this.set(p, 'denied')
    return true
  }

  async putUndo(entry: Omit<UndoEntry, 'createdAt'>): Promise<void> {
    this.open()
    if (this.undos.has(entry.callId)) throw new StoreConflictError(`toolwire: call ${entry.callId} has an undo`)
    this.undos.set(entry.callId, Object.freeze({ callId: entry.callId, tool: entry.tool, payload: entry.payload, createdAt: this.now(), ...owned(entry.owner) }))
  }

  async getUndo(callId: string): Promise<UndoEntry | undefined> {
    this.open()
    return this.undos.get(callId)
  }

  async takeUndo(callId: string, owner?: string): Promise<UndoEntry | undefined> {
    this.open()
    const entry = this.undos.get(callId)
    if (entry === undefined || (owner !== undefined && entry.owner !== undefined && entry.owner !== owner)) return undefined
    this.undos.delete(callId)
    return entry
  }

  async appendEvidence(record: EvidenceRecord): Promise<void> {
    this.open()
    this.evidence.push({ record, at: this.now() })
  }

  async readEvidence(): Promise<readonly EvidenceRecord[]> {
    this.open()
    return this.evidence.map((e) => e.record)
  }

  async begin(key: string, inputHash: string, options: BeginOptions): Promise<BeginResult> {
    this.open()
    const now = this.now()
    const row = this.ledger.get(key)
    if (row === undefined) {
      const token = options.token ?? randomId()
      const leaseUntil = options.leaseMs === undefined ? null : now + options.leaseMs
      const principal = options.principal ?? null
      this.ledger.set(key, { inputHash, callId: options.callId, startedAt: now, state: 'in_flight', token, leaseUntil, result: null, input: options.input ?? null, principal })
      return { state: 'new', token }
    }
    if (row.inputHash !== inputHash) return { state: 'mismatch', callId: row.callId }
    let swept = false
    if (row.state === 'in_flight' && row.leaseUntil !== null && row.leaseUntil <= now) {
      row.state = 'unknown'
      swept = true
    }
    if (row.state === 'settled') return { state: 'settled', callId: row.callId, result: row.result }
    if (row.state === 'unknown') return { state: 'unknown', callId: row.callId, startedAt: row.startedAt, swept, input: row.input, ...begunBy(row.principal) }
    return { state: 'in_flight', callId: row.callId, startedAt: row.startedAt }
  }

  async settle(key: string, token: string, result: JsonValue): Promise<boolean> {
    this.open()
    return this.settleNow(key, token, result)
  }

  /** {@link settle}, synchronously. */
  private settleNow(key: string, token: string, result: JsonValue): boolean {
    const row = this.ledger.get(key)
    if (row === undefined || row.state !== 'in_flight' || row.token !== token) return false
    row.state = 'settled'
    row.result = result
    return true
  }

  async settleWithEvidence(key: string, token: string, result: JsonValue, record: EvidenceRecord): Promise<boolean> {
    this.open()
    const at = this.now() // read before either write: a clock that throws leaves neither
    const settled = this.settleNow(key, token, result)
    this.evidence.push({ record, at })
    return settled
  }

  async release(key: string, token: string): Promise<boolean> {
    this.open()
    const row = this.ledger.get(key)
    if (row === undefined || row.state !== 'in_flight' || row.token !== token) return false
    this.ledger.delete(key)
    return true
  }

  async sweep(): Promise<SweepResult> {
    this.open()
    const now = this.now()
    const keys: SweepResult['keys'][number][] = []
    for (const [key, row] of this.ledger) {
      if (row.state === 'in_flight' && row.leaseUntil !== null && row.leaseUntil <= now) {
        row.state = 'unknown'
        keys.push({ key, callId: row.callId, startedAt: row.startedAt, input: row.input, ...begunBy(row.principal) })
      }
    }
    const parked: ParkedCall[] = []
    for (const p of this.parked.values()) {
      if (p.call.state === 'running' && p.leaseUntil !== null && p.leaseUntil <= now) parked.push(this.set(p, 'unknown'))
    }
    return { keys, parked }
  }

  async prune(options: PruneOptions): Promise<PruneResult> {
    this.open()
    const now = this.now()
    const cutoff = now - pruneAge(options)
    let parked = 0
    for (const [id, p] of this.parked) {
      const c = p.call
      const answered = c.state !== 'parked' && c.state !== 'running' && c.updatedAt < cutoff
      const lapsed = c.state === 'parked' && c.expiresAt !== null && c.expiresAt <= now && c.expiresAt < cutoff
      if (answered || lapsed) {
        this.parked.delete(id)
        parked++
      }
    }
    let undo = 0
    for (const [callId, u] of this.undos) {
      if (u.createdAt < cutoff) {
        this.undos.delete(callId)
        undo++
      }
    }
    const kept = this.evidence.filter((e) => e.at >= cutoff)
    const evidence = this.evidence.length - kept.length
    this.evidence = kept
    let ledger = 0
    for (const [key, row] of this.ledger) {
      if (row.state !== 'in_flight' && row.startedAt < cutoff) {
        this.ledger.delete(key)
        ledger++
      }
    }
    return { parked, undo, evidence, ledger }
  }

  async close(): Promise<void> {
    this.closed = true
  }
}

