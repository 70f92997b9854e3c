/**
 * The usual argument text of a tool call, a flat JSON object of strings, numbers, booleans and
 * nulls whose member names the tool's schema lists, read in one pass without `JSON.parse`
 * (which costs more than the rest of admission for a text this small). Anything else (nesting,
 * an escape, a name the schema does not list, a duplicate, text that is not JSON) is left to
 * `JSON.parse`: what the parser returns is exactly what `JSON.parse` returns for that text.
 */

/** Reads an argument text, or says (`undefined`) that `JSON.parse` must. */
export type FlatArgsParser = (text: string) => Record<string, unknown> | undefined

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
 * The parser for objects whose members are among `names` (the `properties` of a tool's
 * input schema), or `undefined` when there are none, more than 31, or a name that needs
 * escaping in JSON text (or is `__proto__`).
 *
 * ```ts
 * const parse = flatArgsParser(['text', 'n'])!
 * parse('{"text":"hi","n":3}') // { text: 'hi', n: 3 }
 * parse('{"text":"h\\u0069","n":3}') // undefined: JSON.parse reads escapes
 * ```
 */
export function flatArgsParser(names: readonly string[]): FlatArgsParser | undefined {
  if (names.length === 0 || names.length > MAX_NAMES || !names.every(plainName)) return undefined
  const known = Object.freeze([...names])
  return (text) => parseFlat(text, known)
}

/**
 * The parser for a tool's argument text given its input JSON Schema: the names in its
 * `properties`; `undefined` when it lists none that the parser can match, or when an object of
 * all of them would hold more than `maxValues` values (the input limit, counted as admission counts).
 */
export function flatArgsParserOf(schema: unknown, maxValues: number): FlatArgsParser | undefined {
  try {
    if (typeof schema !== 'object' || schema === null) return undefined
    const properties: unknown = (schema as { readonly properties?: unknown }).properties
    if (typeof properties !== 'object' || properties === null || Array.isArray(properties)) return undefined
    const names = Object.keys(properties)
    return names.length + 1 > maxValues ? undefined : flatArgsParser(names)
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
    if (codeAt(text, i + name.length) === 0x22 && text.startsWith(name, i)) return k
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

/** The number in `text` from `start` to `end` (a JSON number), as `JSON.parse` reads it. */
function numberOf(text: string, start: number, end: number): number {
  // up to 15 digits without a fraction or exponent: exact as an integer sum
  if (end - start <= 15) {
    let i = start
    const negative = codeAt(text, i) === 0x2d
    if (negative) i++
    let n = 0
    for (; i < end; i++) {
      const d = codeAt(text, i) - 0x30
      if (d < 0 || d > 9) return Number(text.slice(start, end))
      n = n * 10 + d
    }
    return negative ? -n : n
  }
  return Number(text.slice(start, end))
}

function parseFlat(text: string, names: readonly string[]): Record<string, unknown> | undefined {
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
    const c = codeAt(text, i)
    let value: unknown
    if (c === 0x22) {
      const start = ++i
      for (;;) {
        if (i >= end) return undefined
        const d = codeAt(text, i)
        if (d === 0x22) break
        if (d < 0x20 || d === 0x5c) return undefined
        i++
      }
      value = text.slice(start, i++)
    } else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
      const stop = numberEnd(text, i)
      if (stop < 0) return undefined
      value = numberOf(text, i, stop)
      i = stop
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
