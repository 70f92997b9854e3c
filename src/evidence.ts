/**
 * Evidence: an opt-in durable record of each call (redacted input, the allowed raw
 * result, the semantic status, timestamps). The default store appends JSON Lines to
 * a local file; reopening it reads every record back.
 */
import { appendFile, mkdir, readFile } from 'node:fs/promises'
import { dirname } from 'node:path'
import type { JsonValue } from './types.js'

/** One durable call record. */
export interface EvidenceRecord {
  readonly callId: string
  readonly tool: string
  readonly input: JsonValue
  readonly result: JsonValue | null
  readonly status: string
  readonly startedAt: string
  readonly endedAt: string
}

/** Where evidence goes. A failing `append` emits `evidence_error`; the action is never repeated. */
export interface EvidenceStore {
  append(record: EvidenceRecord): void | Promise<void>
  readAll(): Promise<readonly EvidenceRecord[]>
}

/** An append-only JSON Lines file. Writes are serialized, one line per record. */
export class JsonlEvidenceStore implements EvidenceStore {
  private tail: Promise<void> = Promise.resolve()
  private ready: Promise<unknown> | undefined

  constructor(readonly path: string) {}

  append(record: EvidenceRecord): Promise<void> {
    const line = JSON.stringify(record) + '\n'
    this.ready ??= mkdir(dirname(this.path), { recursive: true })
    const write = this.tail.then(() => this.ready).then(() => appendFile(this.path, line, 'utf8'))
    this.tail = write.catch(() => {})
    return write
  }

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
}
