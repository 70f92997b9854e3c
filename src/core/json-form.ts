/**
 * A value's JSON form, as validation reads it: JSON Pointers into it (keys clipped and escaped),
 * how many values it holds and how deep it nests, text in it that UTF-8 cannot carry (lone
 * surrogates), and where its JSON form is not the value itself (`toJSON`, wrapped primitives).
 * Nothing here throws a SchemaError: validate.ts decides what each finding means.
 */
import { MAX_VALUE_DEPTH as MAX_DEPTH, wellFormed } from './json.js'

/**
 * The most characters (Unicode code points) of an object key an issue's path quotes: a longer
 * key is cut to its first `MAX_PATH_TOKEN` characters followed by `…`, then escaped as a JSON
 * Pointer token. The same on both routes.
 */
export const MAX_PATH_TOKEN = 64
/** An object key as a JSON Pointer token: clipped to {@link MAX_PATH_TOKEN} code points (then `…`), then escaped. */
export function escapePointer(key: string): string {
  let token = key
  // a key of at most MAX_PATH_TOKEN UTF-16 units has at most that many code points
  if (key.length > MAX_PATH_TOKEN) {
    let end = 0
    for (let n = 0; n < MAX_PATH_TOKEN && end < key.length; n++) end += (key.codePointAt(end) ?? 0) > 0xffff ? 2 : 1
    if (end < key.length) token = `${key.slice(0, end)}…`
  }
  return token.replace(/~/g, '~0').replace(/\//g, '~1')
}


/**
 * What makes `value` too big to check: `'deep'` when it nests deeper than `depth` levels,
 * `'large'` when it holds more than `values` values counted along every path (a shared
 * sub-object counts once per path to it, as validation visits it, so sharing cannot make
 * the work exponential), else `undefined`. Iterative; a cyclic value is `'deep'`.
 */
export function shapeProblem(value: unknown, depth: number, values: number): 'deep' | 'large' | undefined {
  const measured = measure(value, depth, values)
  return typeof measured === 'number' ? undefined : measured
}

/**
 * How many values `value` holds, counted as {@link shapeProblem} counts them, or what makes it
 * too big. An object's keys are counted before any value is read (`Object.keys`: for an object
 * of 200,000 keys a third of what `Object.values` costs, and cheaper than a `for…in` that stops
 * at the limit, since V8 collects every key either way).
 */
export function measure(value: unknown, depth: number, values: number): number | 'deep' | 'large' {
  if (typeof value !== 'object' || value === null) return 1
  let count = 1
  // the node measured now and its level; the rest wait on a stack, made only when a child nests
  // (the usual input, an object of primitives, is counted without one)
  let node: object = value
  let level = 1
  let stack: [object, number][] | undefined
  for (;;) {
    if (level > depth) return 'deep'
    if (Array.isArray(node)) {
      // the length first: a sparse array of 2**32 - 1 is measured, not walked
      if ((count += node.length) > values) return 'large'
      for (const child of node as unknown[]) {
        if (typeof child === 'object' && child !== null) (stack ??= []).push([child, level + 1])
      }
    } else {
      // a typed array is measured before its elements are enumerated; then its keys (its indexes
      // and any member of its own) count, each once, as its JSON form's members would
      if (ArrayBuffer.isView(node) && count + ((node as { length?: number }).length ?? 0) > values) return 'large'
      const keys = Object.keys(node)
      if ((count += keys.length) > values) return 'large'
      for (const key of keys) {
        const child = (node as Record<string, unknown>)[key]
        if (typeof child === 'object' && child !== null) (stack ??= []).push([child, level + 1])
      }
    }
    const next = stack?.pop()
    if (next === undefined) return count
    node = next[0]
    level = next[1]
  }
}

/** A lone surrogate as `JSON.stringify` writes it (`\ud800`), its backslash not itself escaped. */
const ESCAPED_SURROGATE = /(?:^|[^\\])(?:\\\\)*\\ud[89a-f][0-9a-f]{2}/

/** Each lone surrogate `JSON.stringify` escaped (`\ud800`), its backslash not itself escaped. */
const LONE_SURROGATE_ESCAPES = /(?<=(?:^|[^\\])(?:\\\\)*)\\ud[89a-f][0-9a-f]{2}/g

/** A surrogate written as an escape in a regex (`\ud83d`), its backslash not itself escaped. */
const SURROGATE_ESCAPE = /(?<=(?:^|[^\\])(?:\\\\)*)\\u[dD][89a-fA-F][0-9a-fA-F]{2}(?:\\u[dD][c-fC-F][0-9a-fA-F]{2})?/

/**
 * The first `pattern` (or `patternProperties` name) in `schema` that writes a surrogate as an
 * escape, with where it is (a JSON Pointer) and the escape; `undefined` when there is none.
 */
export function surrogateEscapeIn(schema: unknown): { readonly at: string; readonly escape: string } | undefined {
  const stack: [unknown, string, number][] = [[schema, '', 0]]
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const [node, at, level] = next
    if (typeof node !== 'object' || node === null || level > MAX_DEPTH) continue
    for (const [key, child] of Object.entries(node)) {
      const path = `${at}/${escapePointer(key)}`
      const found = key === 'pattern' && typeof child === 'string' ? SURROGATE_ESCAPE.exec(child) : null
      if (found !== null) return { at: path, escape: found[0] }
      if (key === 'patternProperties' && typeof child === 'object' && child !== null) {
        for (const name of Object.keys(child)) {
          const named = SURROGATE_ESCAPE.exec(name)
          if (named !== null) return { at: `${path}/${escapePointer(name)}`, escape: named[0] }
        }
      }
      stack.push([child, path, level + 1])
    }
  }
  return undefined
}

/** `valueOf` of each primitive wrapper: it throws for any other object, of any realm. */
const UNWRAPPERS: readonly ((this: unknown) => unknown)[] = [Number.prototype.valueOf, String.prototype.valueOf, Boolean.prototype.valueOf, BigInt.prototype.valueOf]

/** Whether `node` wraps a primitive (`new String('x')`): `JSON.stringify` writes the primitive. */
function wrapsPrimitive(node: object): boolean {
  if ((node as { valueOf?: unknown }).valueOf === Object.prototype.valueOf) return false
  for (const unwrap of UNWRAPPERS) {
    try {
      unwrap.call(node)
      return true
    } catch {
      // not this wrapper
    }
  }
  return false
}

/**
 * Where the JSON form of `value` (what the core's validator checks) is not what the tool would
 * get: a `toJSON` method, a wrapped primitive, a function, a symbol or a BigInt, a number JSON
 * writes `null` (`NaN`, `Infinity`), an array item that is `undefined` or a hole (`null` in
 * JSON), a non-enumerable own member (left out), a key with a lone surrogate (two such keys
 * could become one). A JSON Pointer, or `undefined` when it is the same. A getter that throws, throws.
 */
export function jsonFormDiffers(value: unknown): string | undefined {
  const stack: [unknown, string, number][] = [[value, '', 0]]
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const [node, at, level] = next
    const type = typeof node
    if (type === 'function' || type === 'symbol' || type === 'bigint' || (type === 'number' && !Number.isFinite(node))) return at
    if (type !== 'object' || node === null || level > MAX_DEPTH) continue
    const object = node as object
    if (typeof (object as { toJSON?: unknown }).toJSON === 'function' || wrapsPrimitive(object)) return at
    if (Array.isArray(object)) {
      for (let i = object.length - 1; i >= 0; i--) {
        if (!(i in object) || object[i] === undefined) return `${at}/${i}`
        stack.push([object[i], `${at}/${i}`, level + 1])
      }
      continue
    }
    const keys = Object.keys(object)
    const names = Object.getOwnPropertyNames(object)
    if (names.length !== keys.length) {
      const hidden = names.find((name) => !Object.prototype.propertyIsEnumerable.call(object, name))!
      return `${at}/${escapePointer(wellFormed(hidden))}`
    }
    for (let i = keys.length - 1; i >= 0; i--) {
      const key = keys[i]!
      const shown = wellFormed(key)
      if (shown !== key) return `${at}/${escapePointer(shown)}`
      stack.push([(object as Record<string, unknown>)[key], `${at}/${escapePointer(key)}`, level + 1])
    }
  }
  return undefined
}

/**
 * Where in `value` (JSON, acyclic) a key or a string is not well-formed Unicode: a JSON Pointer
 * (`''` for the value itself), or `undefined` when no such text is found within {@link MAX_DEPTH} levels.
 */
export function illFormedAt(value: unknown): string | undefined {
  const stack: [unknown, string, number][] = [[value, '', 0]]
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const [node, at, level] = next
    if (typeof node === 'string') {
      if (wellFormed(node) !== node) return at
      continue
    }
    if (typeof node !== 'object' || node === null || level >= MAX_DEPTH) continue
    const keys = Object.keys(node)
    for (let i = keys.length - 1; i >= 0; i--) {
      const key = keys[i]!
      const shown = wellFormed(key)
      const path = `${at}/${escapePointer(shown)}`
      if (!Array.isArray(node) && shown !== key) return path
      stack.push([(node as Record<string, unknown>)[key], path, level + 1])
    }
  }
  return undefined
}

/** Whether JSON text (from `JSON.stringify`) holds a lone surrogate, which it writes escaped (`\\ud800`). */
export function escapesLoneSurrogate(text: string): boolean {
  return text.includes('\\ud') && ESCAPED_SURROGATE.test(text)
}

/** JSON text (from `JSON.stringify`) with each lone surrogate written as U+FFFD instead. */
export function lonesAsReplacement(text: string): string {
  return text.includes('\\ud') ? text.replace(LONE_SURROGATE_ESCAPES, '\\ufffd') : text
}
