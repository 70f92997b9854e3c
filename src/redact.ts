/** Redaction of sensitive fields: `password`, names starting `cc-`, and names the app declares. */
import type { JsonValue } from './types.js'

/** What a redacted value shows. */
export const REDACTED = '[redacted]'

/** Whether a field name is sensitive under the default rules or `extra`. */
export function isSensitive(name: string, extra: ReadonlySet<string> | undefined): boolean {
  const lower = name.toLowerCase()
  return lower === 'password' || lower.startsWith('cc-') || (extra !== undefined && extra.has(name))
}

/** A deep copy of `value` with every sensitive field's value replaced by `'[redacted]'`. */
export function redact(value: unknown, extra?: ReadonlySet<string>): JsonValue {
  if (Array.isArray(value)) return value.map((v) => redact(v, extra))
  if (typeof value !== 'object' || value === null) return (value ?? null) as JsonValue
  const out: Record<string, JsonValue> = {}
  for (const [k, v] of Object.entries(value)) {
    const item = isSensitive(k, extra) ? REDACTED : redact(v, extra)
    if (k === '__proto__') Object.defineProperty(out, k, { value: item, enumerable: true, writable: true, configurable: true })
    else out[k] = item
  }
  return out
}
