/**
 * What a manager does with a durable store (`new ToolManager({ store })`, see docs/store.md),
 * one part per concept, in ./durable/:
 * - parking.ts: parks confirmations and suspensions in the store, confirms and resumes them
 *   through its compare-and-swap claim (exactly one run across processes), hands out signed
 *   approval tokens;
 * - ledger.ts: the idempotency ledger around calls, and the sweeps that report the calls whose
 *   outcome a crash made unknown;
 * - undo.ts: undo payloads, taken once across managers.
 *
 * The manager reaches this layer through {@link Durable}; the layer reaches the manager
 * through {@link DurableHost} (no import of the manager or of a call).
 */
import { approvalSecretList } from './store/approval.js'
import { inputHash, inputHashKey, keyedInputHash, parkedHash, storeKeyList, type ParkedBinding } from './store/codec.js'
import { redact } from '../core/redact.js'
import { boundedStore } from './durable/bounded.js'
import { Ledger } from './durable/ledger.js'
import { Parking } from './durable/parking.js'
import { DEFAULT_LEASE_MS, type DurableContext, type DurableHost, type DurableOptions } from './durable/shared.js'
import { Undos } from './durable/undo.js'
import type { ToolStore } from './store/types.js'

export {
  APPROVAL_INVALID,
  DEFAULT_LEASE_MS,
  IDEMPOTENCY_IN_FLIGHT,
  IDEMPOTENCY_MISMATCH,
  INPUT_UNAVAILABLE,
  OUTCOME_UNKNOWN,
  OUTCOME_UNKNOWN_MESSAGE,
  STORE_UNAVAILABLE,
  finds,
  interruptedOutcomeResult,
  ownerOf,
  unknownOutcomeResult,
  type DurableHost,
  type DurableOptions,
  type LocalParked,
  type RunAs,
} from './durable/shared.js'
export { replayedView } from './durable/ledger.js'
export { undoContext } from './durable/undo.js'
export { STORE_WAIT_MS } from './durable/bounded.js'
export type { Answered } from './durable/parking.js'
export { confirmationEvent } from './durable/parking.js'

/** The durable half of a manager: its parts share the store, the lease and the input hash. */
export class Durable implements DurableContext {
  readonly store: ToolStore
  readonly host: DurableHost
  readonly leaseMs: number
  /** Parked confirmations and suspensions. */
  readonly parking: Parking
  /** The idempotency ledger and the sweeps. */
  readonly ledger: Ledger
  /** Undo payloads. */
  readonly undos: Undos
  /** Whether the store keeps owners (`principals: true`): without it, a call with a principal is refused. */
  readonly principals: boolean
  /**
   * The keys of the input hashes this manager hands out or stores (from the store keys, else the
   * approval secrets): the first hashes; the others match rows hashed before a rotation.
   */
  private readonly hashKeys: readonly Buffer[]

  /** @throws TypeError when a store key or an approval secret is malformed, a list is empty or lists one twice. */
  constructor(options: DurableOptions, host: DurableHost) {
    // every answer of the store is awaited for a bounded time: a store that stops answering hangs nothing
    this.store = boundedStore(options.store)
    this.principals = options.store.principals === true
    this.host = host
    this.leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS
    const keys = options.storeKey === undefined ? undefined : storeKeyList(options.storeKey)
    const secrets = options.approvalSecret === undefined ? undefined : approvalSecretList(options.approvalSecret)
    this.parking = new Parking(this, keys, secrets)
    this.hashKeys = (keys ?? secrets ?? []).map(inputHashKey)
    this.ledger = new Ledger(this)
    this.undos = new Undos(this)
  }

  /**
   * The input's hash as tokens and the store keep it: keyed (HMAC) with a store key or an
   * approval secret, so it reveals nothing of the input; with neither, the hash of the input with
   * its sensitive fields redacted (two inputs that differ only there then hash the same).
   * @throws TypeError when the input has no JSON form.
   */
  hashInput(input: unknown, sensitive: ReadonlySet<string> | undefined): string {
    const key = this.hashKeys[0]
    return key !== undefined ? keyedInputHash(key, input) : inputHash(redact(input, sensitive))
  }

  otherHashes(input: unknown): readonly string[] {
    return this.hashKeys.slice(1).map((key) => keyedInputHash(key, input))
  }

  hashParked(id: string, binding: ParkedBinding, input: unknown, sensitive: ReadonlySet<string> | undefined): string {
    const key = this.hashKeys[0]
    return parkedHash(key, id, binding, key !== undefined ? input : redact(input, sensitive))
  }

  otherParkedHashes(id: string, binding: ParkedBinding, input: unknown): readonly string[] {
    return this.hashKeys.slice(1).map((key) => parkedHash(key, id, binding, input))
  }
}
