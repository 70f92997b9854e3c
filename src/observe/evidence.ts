/**
 * Evidence: an opt-in durable record of each call (redacted input, the allowed raw
 * result, the semantic status, timestamps). The default store appends JSON Lines to
 * a local file; reopening it reads every record back.
 *
 * A call's record is handed to the store before the call settles, but written after it:
 * `await store.flush()` waits until every record appended so far is in the file.
 */
import { appendFile, mkdir, readFile } from 'node:fs/promises'
import { dirname } from 'node:path'
import type { JsonValue } from '../core/types.js'
import { principalRef, type PrincipalRef } from '../core/principal.js'

/**
 * Who approved a confirmed call: the signed-in approver's identity, or `{ link: true }` when
 * the confirmation link alone was the credential.
 */
export type EvidenceApprover = { readonly subject: string; readonly issuer: string } | { readonly link: true }

/** One durable call record. */
export interface EvidenceRecord {
  readonly callId: string
  readonly tool: string
  readonly input: JsonValue
  readonly result: JsonValue | null
  readonly status: string
  readonly startedAt: string
  readonly endedAt: string
  /** Who called, when the call had a principal: its identity only, never its scopes or a token. */
  readonly principal?: PrincipalRef
  /** Who approved, on a call that waited for a confirmation. */
  readonly approvedBy?: EvidenceApprover
}

const LINK_APPROVER: EvidenceApprover = Object.freeze({ link: true })

/**
 * Who approved a confirmed call, as evidence keeps it: the signed-in approver's frozen
 * `{ subject, issuer }` (an `{ link: true }` given back as the one frozen link approver), or
 * `{ link: true }` without a signed-in approver.
 */
export function evidenceApproverOf(approver: PrincipalRef | EvidenceApprover | undefined): EvidenceApprover {
  if (approver === undefined || 'link' in approver) return LINK_APPROVER
  return Object.freeze({ subject: approver.subject, issuer: approver.issuer })
}

/**
 * The identity fields of an evidence record, to spread into it: `principal` when the call had
 * one (its identity only), `approvedBy` when the call was confirmed (from
 * {@link evidenceApproverOf} at the confirmation). Absent ones are left out, so a record
 * without them keeps its bytes.
 *
 * ```ts
 * store.append({ callId, tool, input, result, status, startedAt, endedAt, ...evidenceIdentity(principal, approvedBy) })
 * ```
 */
export function evidenceIdentity(principal: PrincipalRef | undefined, approvedBy?: EvidenceApprover): Pick<EvidenceRecord, 'principal' | 'approvedBy'> {
  const out: { principal?: PrincipalRef; approvedBy?: EvidenceApprover } = {}
  if (principal !== undefined) out.principal = principalRef(principal)
  if (approvedBy !== undefined) out.approvedBy = evidenceApproverOf(approvedBy)
  return out
}

/** Where evidence goes. A failing `append` emits `evidence_error`; the action is never repeated. */
export interface EvidenceStore {
  append(record: EvidenceRecord): void | Promise<void>
  readAll(): Promise<readonly EvidenceRecord[]>
  /**
   * Resolves once every record appended so far is written. Optional for custom stores whose
   * `append` is already durable when it returns.
   */
  flush?(): Promise<void>
}

/** The lines of one write, and the promise every record in it shares. */
interface Batch {
  readonly lines: string[]
  readonly done: Promise<void>
}

/**
 * An append-only JSON Lines file. Writes are serialized, one line per record: records
 * appended while a write is in flight go into the next write together.
 *
 * ```ts
 * const store = new JsonlEvidenceStore('evidence.jsonl')
 * const tm = new ToolManager({ evidence: store })
 * await tm.call('delete_file', { path: 'notes.txt' })
 * await store.flush() // the call's record is in the file now
 * ```
 */
export class JsonlEvidenceStore implements EvidenceStore {
  /** Settles (never rejects) when the last write started so far is done. */
  private tail: Promise<void> = Promise.resolve()
  /** The write still taking lines, not started yet. */
  private open: Batch | undefined
  private ready: Promise<unknown> | undefined
  /** Failed writes no `flush()` has reported yet (the first few errors, and how many). */
  private unreported: { errors: unknown[]; count: number } = { errors: [], count: 0 }

  constructor(readonly path: string) {}

  /** Queues one record; the promise settles when its line is written (or the write failed). */
  append(record: EvidenceRecord): Promise<void> {
    const line = JSON.stringify(record) + '\n'
    if (this.open !== undefined) {
      this.open.lines.push(line)
      return this.open.done
    }
    const lines = [line]
    const done = this.tail.then(() => {
      // from here on, newly appended records go into the next write
      if (this.open?.lines === lines) this.open = undefined
      return this.write(lines.join(''))
    })
    this.open = { lines, done }
    this.tail = done.catch((err: unknown) => {
      const failed = this.unreported
      if (failed.errors.length < 8) failed.errors.push(err)
      failed.count += lines.length
    })
    return done
  }

  /**
   * Resolves once every record appended before this call is written. If one of those writes
   * failed, rejects with its error (that record's `append` promise rejected too, which a
   * `ToolManager` reports as `evidence_error`); each failure is reported by one `flush()`.
   */
  async flush(): Promise<void> {
    await this.tail
    const failed = this.unreported
    if (failed.count === 0) return
    this.unreported = { errors: [], count: 0 }
    if (failed.count === 1) throw failed.errors[0]
    throw new AggregateError(failed.errors, `${failed.count} evidence records were not written`)
  }

  /** Every record in the file, after this store's own pending writes. */
  async readAll(): Promise<readonly EvidenceRecord[]> {
    await this.tail
    let text: string
    try {
      text = await readFile(this.path, 'utf8')
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return []
      throw err
    }
    const records: EvidenceRecord[] = []
    for (const line of text.split('\n')) {
      if (line.trim() === '') continue
      try {
        records.push(JSON.parse(line) as EvidenceRecord)
      } catch {
        // a torn last line from a crash is skipped, not fatal
      }
    }
    return records
  }

  private async write(text: string): Promise<void> {
    this.ready ??= mkdir(dirname(this.path), { recursive: true })
    try {
      await this.ready
    } catch (err) {
      this.ready = undefined // the next write tries again
      throw err
    }
    await appendFile(this.path, text, 'utf8')
  }
}
