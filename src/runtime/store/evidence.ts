/** The evidence half of a store, as the manager's `EvidenceStore` (no driver is loaded here). */
import type { EvidenceRecord, EvidenceStore } from '../../observe/evidence.js'
import type { ToolStore } from './types.js'

/**
 * The evidence half of a store as an `EvidenceStore`, for `new ToolManager({ evidence })`:
 * each record is one row, written when `append` resolves.
 */
export function evidenceOf(store: ToolStore): EvidenceStore {
  const pending = new Set<Promise<void>>()
  let failed: unknown[] = []
  return {
    append(record: EvidenceRecord): Promise<void> {
      const p = store.appendEvidence(record)
      const tracked = p.then(
        () => {},
        (err: unknown) => {
          failed.push(err)
        },
      )
      pending.add(tracked)
      void tracked.finally(() => pending.delete(tracked))
      return p
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
}
