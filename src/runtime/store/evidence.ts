/** The evidence half of a store, as the manager's `EvidenceStore` (no driver is loaded here). */
import type { JsonValue } from '../../core/types.js'
import type { EvidenceRecord, EvidenceStore } from '../../observe/evidence.js'
import type { ToolStore } from './types.js'

/**
 * A store's `settleWithEvidence` through its evidence half: the ledger's settle and the record in
 * one commit, tracked as an `append` is (`flush` waits for it, and reports its failure).
 */
export type SettleWithEvidence = (key: string, token: string, result: JsonValue, record: EvidenceRecord) => Promise<boolean>

/** The evidence halves {@link evidenceOf} made of stores that have `settleWithEvidence`. */
const batched = new WeakMap<EvidenceStore, SettleWithEvidence>()

/**
 * The one-commit settlement of `evidence` when it is the evidence half of a store that has
 * `settleWithEvidence` ({@link evidenceOf}); `undefined` for any other evidence store.
 */
export function settlerOf(evidence: EvidenceStore | undefined): SettleWithEvidence | undefined {
  return evidence === undefined ? undefined : batched.get(evidence)
}

/**
 * The evidence half of a store as an `EvidenceStore`, for `new ToolManager({ evidence })`:
 * each record is one row, written when `append` resolves.
 */
export function evidenceOf(store: ToolStore): EvidenceStore {
  const pending = new Set<Promise<void>>()
  let failed: unknown[] = []
  const track = <T>(p: Promise<T>): Promise<T> => {
    const tracked = p.then(
      () => {},
      (err: unknown) => {
        failed.push(err)
      },
    )
    pending.add(tracked)
    void tracked.finally(() => pending.delete(tracked))
    return p
  }
  const evidence: EvidenceStore = {
    append(record: EvidenceRecord): Promise<void> {
      return track(store.appendEvidence(record))
    },
    readAll: () => store.readEvidence(),
    async flush(): Promise<void> {
      await Promise.all([...pending])
      const errors = failed
      failed = []
      if (errors.length === 1) throw errors[0]
      if (errors.length > 1) throw new AggregateError(errors, `${errors.length} evidence records were not written`)
    },
  }
  const settle = store.settleWithEvidence
  if (settle !== undefined) batched.set(evidence, (key, token, result, record) => track(settle.call(store, key, token, result, record)))
  return evidence
}
