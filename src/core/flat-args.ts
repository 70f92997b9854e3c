/**
 * The usual argument text of a tool call, a flat JSON object of strings, numbers, booleans and
 * nulls whose member names the tool's schema lists, read in one pass without `JSON.parse`
 * (which costs more than the rest of admission for a text this small). Anything else (nesting,
 * an escape, a name the schema does not list, a duplicate, text that is not JSON) is left to
 * `JSON.parse`: what the parser returns is exactly what `JSON.parse` returns for that text.
 */

/** The member names a tool's argument text is read with (checked by {@link flatArgNames}). */
export type FlatArgNames = readonly string[] & { readonly __flatArgNames: true }

/** The most member names a parser matches (one bit each marks a name as seen). */
const MAX_NAMES = 31

/** Whether `name` matches itself in the raw text: no quote, backslash or control character, and not `__proto__`. */
function plainName(name: string): boolean {
  if (name === '__proto__') return false
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i)
    if (c < 0x20 || c === 0x22 || c === 0x5c) return false
  }
  return true
}

/**
 * The names {@link parseFlatArgs} reads objects of (the `properties` of a tool's input schema),
 * or `undefined` when there are none, more than 31, or a name that needs escaping in JSON text
 * (or is `__proto__`).
 *
 * ```ts
 * const names = flatArgNames(['text', 'n'])!
 * parseFlatArgs('{"text":"hi","n":3}', names) // { text: 'hi', n: 3 }
 * parseFlatArgs('{"text":"h\\u0069","n":3}', names) // undefined: JSON.parse reads escapes
 * ```
 */
export function flatArgNames(names: readonly string[]): FlatArgNames | undefined {
  if (names.length === 0 || names.length > MAX_NAMES || !names.every(plainName)) return undefined
  return Object.freeze([...names]) as unknown as FlatArgNames
}

/**
 * The names a tool's argument text is read with, given its input JSON Schema: those in its
 * `properties`; `undefined` when it lists none that the parser can match, or when an object of
 * all of them would hold more than `maxValues` values (the input limit, counted as admission counts).
 */
export function flatArgNamesOf(schema: unknown, maxValues: number): FlatArgNames | undefined {
  try {
    if (typeof schema !== 'object' || schema === null) return undefined
    const properties: unknown = (schema as { readonly properties?: unknown }).properties
    if (typeof properties !== 'object' || properties === null || Array.isArray(properties)) return undefined
    const names = Object.keys(properties)
    return names.length + 1 > maxValues ? undefined : flatArgNames(names)
  } catch {
    // a schema that cannot be read here was read by its compiler already: its calls take JSON.parse
    return undefined
  }
}

/** The code unit at `i`, or -1 past the end (a read past the end would make V8 recompile the parser slower). */
function codeAt(text: string, i: number): number {
  return i < text.length ? text.charCodeAt(i) : -1
}

/** Skips JSON whitespace from `i`; the index of the next other character. */
function skip(text: string, i: number): number {
  let c = codeAt(text, i)
  while (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) c = codeAt(text, ++i)
  return i
}

/** The index in `names` of the name quoted at `i` (just after its opening quote), or -1; `hint` is tried first. */
function nameAt(text: string, i: number, names: readonly string[], hint: number): number {
  const n = names.length
  for (let j = 0, k = hint; j < n; j++, k = k + 1 === n ? 0 : k + 1) {
    const name = names[k]!
    const length = name.length
    if (codeAt(text, i + length) !== 0x22) continue
    // compared code unit by code unit: cheaper than `startsWith` for a name this short
    let p = 0
    while (p < length && text.charCodeAt(i + p) === name.charCodeAt(p)) p++
    if (p === length) return k
  }
  return -1
}

/** Where a JSON number starting at `i` ends, or -1 when the text there is not one. */
function numberEnd(text: string, i: number): number {
  let c = codeAt(text, i)
  if (c === 0x2d) c = codeAt(text, ++i)
  if (c === 0x30) c = codeAt(text, ++i)
  else if (c >= 0x31 && c <= 0x39) {
    do c = codeAt(text, ++i)
    while (c >= 0x30 && c <= 0x39)
  } else return -1
  if (c === 0x2e) {
    c = codeAt(text, ++i)
    if (!(c >= 0x30 && c <= 0x39)) return -1
    do c = codeAt(text, ++i)
    while (c >= 0x30 && c <= 0x39)
  }
  if (c === 0x65 || c === 0x45) {
    c = codeAt(text, ++i)
    if (c === 0x2b || c === 0x2d) c = codeAt(text, ++i)
    if (!(c >= 0x30 && c <= 0x39)) return -1
    do c = codeAt(text, ++i)
    while (c >= 0x30 && c <= 0x39)
  }
  return i
}

/**
 * Reads `text` (a tool's argument text) as `JSON.parse` would when it is a flat object of
 * `names` (strings without escapes, numbers, booleans, `null`), each at most once; `undefined`
 * for any other text, which `JSON.parse` must read.
 */
export function parseFlatArgs(text: string, names: FlatArgNames): Record<string, unknown> | undefined {
  const end = text.length
  let i = skip(text, 0)
  if (codeAt(text, i) !== 0x7b) return undefined
  const out: Record<string, unknown> = {}
  i = skip(text, i + 1)
  if (codeAt(text, i) === 0x7d) return skip(text, i + 1) === end ? out : undefined
  let seen = 0
  let hint = 0
  for (;;) {
    if (codeAt(text, i) !== 0x22) return undefined
    const k = nameAt(text, i + 1, names, hint)
    if (k < 0 || (seen & (1 << k)) !== 0) return undefined
    seen |= 1 << k
    hint = k + 1 === names.length ? 0 : k + 1
    i = skip(text, i + names[k]!.length + 2)
    if (codeAt(text, i) !== 0x3a) return undefined
    i = skip(text, i + 1)
    let c = codeAt(text, i)
    let value: unknown
    if (c === 0x22) {
      const start = ++i
      for (;;) {
        if (i >= end) return undefined
        const d = text.charCodeAt(i)
        if (d === 0x22) break
        if (d < 0x20 || d === 0x5c) return undefined
        i++
      }
      value = text.slice(start, i++)
    } else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
      // an integer of up to 15 characters is summed as it is read (exact); a fraction, an
      // exponent or a longer one is read by the full grammar, then `Number`
      const start = i
      if (c === 0x2d) c = codeAt(text, ++i)
      let n = 0
      if (c === 0x30) c = codeAt(text, ++i)
      else if (c >= 0x31 && c <= 0x39) {
        do {
          n = n * 10 + (c - 0x30)
          c = codeAt(text, ++i)
        } while (c >= 0x30 && c <= 0x39)
      } else return undefined
      if (c === 0x2e || c === 0x65 || c === 0x45 || i - start > 15) {
        const stop = numberEnd(text, start)
        if (stop < 0) return undefined
        value = Number(text.slice(start, stop))
        i = stop
      } else value = codeAt(text, start) === 0x2d ? -n : n
    } else if (c === 0x74 && text.startsWith('true', i)) {
      value = true
      i += 4
    } else if (c === 0x66 && text.startsWith('false', i)) {
      value = false
      i += 5
    } else if (c === 0x6e && text.startsWith('null', i)) {
      value = null
      i += 4
    } else return undefined
    out[names[k]!] = value
    i = skip(text, i)
    const next = codeAt(text, i)
    if (next === 0x2c) {
      i = skip(text, i + 1)
      continue
    }
    if (next !== 0x7d) return undefined
    return skip(text, i + 1) === end ? out : undefined
  }
}
