/**
 * A `ToolResult`'s wire forms: its output, error and pending request with their keys in the
 * canonical order ({@link wireOutput}, {@link wireError}, {@link wirePending}), and a parsed
 * wire document frozen ({@link deepFreeze}).
 */
import type { PendingRequest, ToolExecutionError, ToolOutput } from './types.js'

/** Freezes a parsed JSON value and everything in it; returns it. */
export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key])
    Object.freeze(value)
  }
  return value
}

/** An output as the wire writes it: text, parts (the keys of each part in order), structured. */
export function wireOutput(o: ToolOutput): ToolOutput {
  const out: Record<string, unknown> = { text: o.text }
  if (o.parts !== undefined) {
    out.parts = o.parts.map((p) => {
      const part: Record<string, unknown> = { type: p.type, mimeType: p.mimeType }
      if (p.data !== undefined) part.data = p.data
      if (p.url !== undefined) part.url = p.url
      if (p.name !== undefined) part.name = p.name
      return part
    })
  }
  if (o.structured !== undefined) out.structured = o.structured
  return out as unknown as ToolOutput
}

/** An error or refusal as the wire writes it (without `refusal`: the status tells). */
export function wireError(e: ToolExecutionError): Omit<ToolExecutionError, 'refusal'> {
  const out: Record<string, unknown> = { kind: e.kind, message: e.message }
  if (e.code !== undefined) out.code = e.code
  out.retryable = e.retryable
  if (e.details !== undefined) out.details = e.details
  return out as unknown as Omit<ToolExecutionError, 'refusal'>
}

/** A pending request as the wire writes it. */
export function wirePending(r: PendingRequest): PendingRequest {
  const out: Record<string, unknown> = { id: r.id, kind: r.kind }
  if (r.prompt !== undefined) out.prompt = r.prompt
  if (r.url !== undefined) out.url = r.url
  if (r.summary !== undefined) out.summary = r.summary
  if (r.changes !== undefined) {
    out.changes = r.changes.map((c) => {
      const fc: Record<string, unknown> = { path: c.path }
      if (c.before !== undefined) fc.before = c.before
      if (c.after !== undefined) fc.after = c.after
      return fc
    })
  }
  if (r.schema !== undefined) out.schema = r.schema
  return out as unknown as PendingRequest
}
