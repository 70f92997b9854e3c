/**
 * Redaction of sensitive fields: `password`, names starting `cc-`, and names the app
 * declares. Redaction works on a value's JSON form (after `toJSON`), so a secret that a
 * `toJSON()` puts under a sensitive name is redacted like any other. The walk is
 * `toFrozenJson`'s (json.ts): one walker, one set of limits.
 */
import type { FieldChange, JsonValue } from './types.js'
import { toFrozenJson, toFrozenJsonHiding } from './json.js'

/** What a redacted value shows. */
export const REDACTED = '[redacted]'

/** The most characters of a caller's text (such as a tool name) that a message quotes. */
export const MAX_QUOTED = 100

/** `text` as a message quotes it: at most {@link MAX_QUOTED} characters, then `…`. */
export function clipped(text: string): string {
  return text.length > MAX_QUOTED ? `${text.slice(0, MAX_QUOTED)}…` : text
}

/** Whether a field name is sensitive under the default rules or `extra`. */
export function isSensitive(name: string, extra: ReadonlySet<string> | undefined): boolean {
  if (extra !== undefined && extra.has(name)) return true
  // only ASCII letters lower-case to the letters of 'password' and 'cc-', one for one: the
  // length and the first characters decide without making a lower-case copy of every key
  const n = name.length
  if (n === 8) return name.toLowerCase() === 'password'
  return n >= 3 && (name.charCodeAt(0) | 0x20) === 0x63 && (name.charCodeAt(1) | 0x20) === 0x63 && name.charCodeAt(2) === 0x2d
}

/** The key test of a tool's sensitive fields (the default names and `extra`), for `toFrozenJson`'s `hideKey`. */
export function sensitiveKeys(extra: ReadonlySet<string> | undefined): (key: string) => boolean {
  return (key) => isSensitive(key, extra)
}

/**
 * A tool's returned data as its result carries it: `toFrozenJson(value)` with every sensitive
 * field's value replaced by `'[redacted]'`, unread.
 * @throws NotJsonError as `toFrozenJson` does.
 */
export function resultData(value: unknown, hideKey: (key: string) => boolean): JsonValue {
  return toFrozenJson(value, hideKey, REDACTED)
}

/** Whether JSON `value` holds a member whose name `hideKey` hides, at any depth (`value` is within `toFrozenJson`'s limits). */
export function holdsHidden(value: JsonValue | undefined, hideKey: (key: string) => boolean): boolean {
  if (typeof value !== 'object' || value === null) return false
  const stack: JsonValue[] = [value]
  while (stack.length > 0) {
    const node = stack.pop()!
    if (typeof node !== 'object' || node === null) continue
    if (Array.isArray(node)) {
      for (const item of node as readonly JsonValue[]) if (typeof item === 'object' && item !== null) stack.push(item)
      continue
    }
    for (const key in node) {
      if (hideKey(key)) return true
      const item = (node as { readonly [key: string]: JsonValue })[key]!
      if (typeof item === 'object' && item !== null) stack.push(item)
    }
  }
  return false
}

/**
 * Whether a change path names a sensitive field in any segment. Segments are split at `/`
 * (a JSON Pointer, `~1` and `~0` unescaped) and at `.` (a dotted path), so
 * `/user/password`, `user.password` and `/cards/0/cc-number` are all sensitive.
 */
export function isSensitivePath(path: string, extra: ReadonlySet<string> | undefined): boolean {
  for (const raw of path.split(/[/.]/)) {
    if (raw === '') continue
    const segment = raw.includes('~') ? raw.replace(/~1/g, '/').replace(/~0/g, '~') : raw
    if (isSensitive(segment, extra) || isSensitive(raw, extra)) return true
  }
  return false
}

/**
 * A deeply frozen copy of `value`'s JSON form (as `JSON.stringify` would see it: `toJSON`
 * applied, functions and `undefined` dropped) with every sensitive field's value replaced
 * by `'[redacted]'`. Never throws: a value with no JSON form (a cycle, a BigInt, a
 * throwing getter or `toJSON`, a revoked Proxy), or past the limits of `toFrozenJson` (nesting
 * over `MAX_VALUE_DEPTH`, more than `MAX_VALUES` values), is shown as `'[redacted]'` as a whole.
 */
export function redact(value: unknown, extra?: ReadonlySet<string>): JsonValue {
  try {
    // toFrozenJson's own walk, a sensitive member's value replaced unread
    return toFrozenJsonHiding(value, (key) => isSensitive(key, extra), REDACTED)
  } catch {
    return REDACTED
  }
}

/**
 * A deeply frozen, redacted copy of a list of field changes: `before`/`after` are
 * `'[redacted]'` when the path names a sensitive field (any segment), and otherwise
 * redacted copies of their JSON form. `before`/`after` absent (or `undefined`) stay absent.
 * @throws TypeError when `list` is not an array of `{ path: string }` objects.
 */
export function redactChanges(list: unknown, extra: ReadonlySet<string> | undefined): readonly FieldChange[] {
  if (!Array.isArray(list)) throw new TypeError('toolwire: changes must be an array')
  const n = list.length
  const out: FieldChange[] = []
  for (let i = 0; i < n; i++) {
    const c: unknown = list[i]
    if (typeof c !== 'object' || c === null) throw new TypeError(`toolwire: changes[${i}] must be an object`)
    const { path, before, after } = c as { path?: unknown; before?: unknown; after?: unknown }
    if (typeof path !== 'string') throw new TypeError(`toolwire: changes[${i}].path must be a string`)
    const hidden = isSensitivePath(path, extra)
    const change: { -readonly [K in keyof FieldChange]: FieldChange[K] } = { path }
    if (before !== undefined) change.before = hidden ? REDACTED : redact(before, extra)
    if (after !== undefined) change.after = hidden ? REDACTED : redact(after, extra)
    out.push(Object.freeze(change))
  }
  return Object.freeze(out)
}
