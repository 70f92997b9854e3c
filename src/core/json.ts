/**
 * JSON semantics for tool return values: one walk that applies `toJSON` (so a
 * `Date` becomes its ISO string), drops what JSON drops, rejects what JSON cannot
 * carry (BigInt, cycles, a bare function) and returns a deeply frozen copy whose
 * own keys, `__proto__` included, are plain data.
 *
 * The copy is also what the wire can carry (docs/wire-format.md, "Strings and nesting"):
 * every string and key is well-formed Unicode (a lone surrogate becomes U+FFFD, as
 * `String.prototype.toWellFormed` does) and no array or object nests deeper than the
 * core's `MAX_VALUE_DEPTH` (a deeper value is rejected).
 */
import { coreTables } from './native.js'
import type { JsonValue } from './types.js'

/** The deepest nesting of arrays and objects a value in a result may have (the core's `MAX_VALUE_DEPTH`). */
export const MAX_VALUE_DEPTH: number = coreTables().maxValueDepth

/** The deepest nesting a pending request's `schema` may have, the object itself level 1 (the core's `MAX_PENDING_SCHEMA_DEPTH`). */
export const MAX_PENDING_SCHEMA_DEPTH: number = coreTables().maxPendingSchemaDepth

/** The most bytes a pending request's `schema` may take as compact JSON, UTF-8 (the core's `MAX_PENDING_SCHEMA_BYTES`). */
export const MAX_PENDING_SCHEMA_BYTES: number = coreTables().maxPendingSchemaBytes

interface WellFormedString {
  isWellFormed(): boolean
  toWellFormed(): string
}

/**
 * `text` as well-formed Unicode: each lone surrogate replaced by U+FFFD. UTF-8, and so
 * the core and every wire, cannot carry a lone surrogate.
 */
export function wellFormed(text: string): string {
  const s = text as unknown as WellFormedString
  return s.isWellFormed() ? text : s.toWellFormed()
}

/**
 * Whether JSON `text` nests arrays and objects deeper than `limit` levels, read in one
 * linear pass without parsing ({@link textShape} without a value limit). A text shorter
 * than `2 * limit` characters cannot nest deeper and is not scanned.
 *
 * ```ts
 * textNestsDeeper('[[[1]]]', 2) // true
 * textNestsDeeper('{"a":"[[["}', 2) // false: brackets inside strings do not count
 * ```
 */
export function textNestsDeeper(text: string, limit: number): boolean {
  return textShape(text, limit, Infinity) === 'deep'
}

/**
 * What makes JSON `text` too big to parse, read in one linear pass without parsing: `'deep'`
 * when it nests arrays and objects deeper than `depth` levels, `'large'` when it holds more
 * than `values` values, else `undefined`. Values are counted as the input validator counts
 * them: one for the text's value, plus each array item and object member as written (so a
 * repeated key counts each time). `JSON.parse` of a line nested 100,000 deep, or of an object
 * of 200,000 keys, blocks the event loop for over 100 ms inside V8, so untrusted text is
 * measured before it is parsed. A text shorter than `2 * depth` and `2 * values` characters
 * cannot exceed either and is not scanned. A malformed text is measured as far as it reads.
 *
 * ```ts
 * textShape('[1,2,3]', 10, 3) // 'large': 4 values
 * textShape('{"a":[],"b":"[,,"}', 10, 3) // undefined: 3 values, brackets and commas inside strings do not count
 * ```
 */
export function textShape(text: string, depth: number, values: number): 'deep' | 'large' | undefined {
  if (text.length < 2 * depth && text.length < 2 * values) return undefined
  let level = 0
  let count = 1
  // the last character outside strings opened an array or object: a member follows unless it closes
  let opened = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) continue
    if (opened) {
      opened = false
      if (c !== 0x5d && c !== 0x7d && ++count > values) return 'large'
    }
    if (c === 0x22) {
      // a string: skip to its closing quote (a backslash escapes the next character)
      for (i++; i < text.length; i++) {
        const d = text.charCodeAt(i)
        if (d === 0x5c) i++
        else if (d === 0x22) break
      }
    } else if (c === 0x2c) {
      if (++count > values) return 'large'
    } else if (c === 0x5b || c === 0x7b) {
      if (++level > depth) return 'deep'
      opened = true
    } else if (c === 0x5d || c === 0x7d) {
      level--
    }
  }
  return undefined
}

/** Thrown inside the runtime when a value has no JSON form; never escapes `tm.call`. */
export class NotJsonError extends TypeError {
  override name = 'NotJsonError'
}

const sharedStack: unknown[] = []
let active = 0
/** The most values (array items and object members, counted along every path) a result may hold. */
export const MAX_VALUES = 1_000_000
/** Values left in the budget of the outermost walk. */
let budget = MAX_VALUES

function spend(n: number, stack: unknown[], key: string): void {
  if ((budget -= n) < 0) throw new NotJsonError(`the value at ${pointer(stack, key)} holds more than ${MAX_VALUES} values`)
}

const EMPTY_ARRAY: readonly JsonValue[] = Object.freeze([])

/**
 * Makes the copy of an object with one member: a plain object (its prototype is
 * `Object.prototype`) that V8 sizes to the one member its instances ever get, where `{}`
 * makes room for four (24 bytes more per retained copy).
 */
function OneMember(): void {}
OneMember.prototype = Object.prototype
const { hasOwn, getPrototypeOf } = Object

function setOwn(target: Record<string, JsonValue>, key: string, value: JsonValue): void {
  if (key === '__proto__') {
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true })
  } else {
    target[key] = value
  }
}

/**
 * While `hide` is set (by `toFrozenJsonHiding`), a member whose key it names is `hidden`
 * in the copy, its value never read (so its getter or `toJSON` cannot leak it).
 */
let hide: ((key: string) => boolean) | undefined
let hidden: JsonValue = null

/** A number as JSON carries it: `null` when not finite, `0` for `-0`. */
function jsonNumber(n: number): number | null {
  return Number.isFinite(n) ? (n === 0 ? 0 : n) : null
}

/** The copy of an array item or object member: primitives inline, anything else through `walk`. */
function member(key: string, v: unknown, stack: unknown[]): JsonValue | undefined {
  switch (typeof v) {
    case 'string':
      return wellFormed(v)
    case 'boolean':
      return v
    case 'number':
      return jsonNumber(v)
  }
  return v === null ? null : walk(key, v, stack)
}

function walk(key: string, input: unknown, stack: unknown[]): JsonValue | undefined {
  let value = input
  if (
    ((typeof value === 'object' && value !== null) || typeof value === 'bigint') &&
    typeof (value as { toJSON?: unknown }).toJSON === 'function'
  ) {
    value = (value as { toJSON(key: string): unknown }).toJSON(key)
  }
  return walkJson(key, value, stack)
}

/** `walk` of a value whose `toJSON` (if any) has been applied. */
function walkJson(key: string, value: unknown, stack: unknown[]): JsonValue | undefined {
  switch (typeof value) {
    case 'string':
      return wellFormed(value)
    case 'boolean':
      return value
    case 'number':
      return jsonNumber(value)
    case 'bigint':
      throw new NotJsonError(`a BigInt at ${pointer(stack, key)} has no JSON form`)
    case 'undefined':
    case 'function':
    case 'symbol':
      return undefined
  }
  if (value === null) return null
  const obj = value as object
  return walkObject(key, obj, getPrototypeOf(obj), stack)
}

/** `walk` of an object (its `toJSON` applied) whose prototype is `proto`. */
function walkObject(key: string, obj: object, proto: unknown, stack: unknown[]): JsonValue | undefined {
  if (proto !== Object.prototype && proto !== Array.prototype && (obj instanceof Number || obj instanceof String || obj instanceof Boolean)) {
    return walk(key, obj.valueOf(), stack)
  }
  if (stack.includes(obj)) throw new NotJsonError(`a cycle at ${pointer(stack, key)} has no JSON form`)
  if (stack.length >= MAX_VALUE_DEPTH) throw new NotJsonError(`a value nested deeper than ${MAX_VALUE_DEPTH} levels has no wire form`)
  stack.push(obj)
  let out: JsonValue
  if (Array.isArray(obj)) {
    spend(obj.length, stack, key) // before the loop: a sparse array of 2**32 - 1 is measured, not walked
    if (obj.length === 0) {
      out = EMPTY_ARRAY
    } else {
      const arr: JsonValue[] = new Array(obj.length)
      for (let i = 0; i < obj.length; i++) {
        const v: unknown = obj[i]
        // `member`, inline: the item's key is made only for a value that `walk` needs it for
        const item = typeof v === 'string' ? wellFormed(v) : typeof v === 'number' ? jsonNumber(v) : typeof v === 'boolean' || v === null ? v : walk(String(i), v, stack)
        arr[i] = item === undefined ? null : item
      }
      out = Object.freeze(arr)
    }
  } else {
    if (proto !== Object.prototype && ArrayBuffer.isView(obj)) spend((obj as { length?: number }).length ?? 0, stack, key)
    out = copyMembers(key, obj, stack)
  }
  stack.pop()
  return out
}

/**
 * The frozen copy of an object's own enumerable members, `obj` on top of `stack` (`walk`'s
 * object branch). A member's value is read once, unless `hide` names its key; a string,
 * number, boolean or `null` is copied here, anything else through `walk`.
 */
function copyMembers(key: string, obj: object, stack: unknown[]): JsonValue {
  // the copy is made once its second member is known: a copy of one member is an exact-size
  // `OneMember` (an object made from `{}` carries room for four)
  let copy: Record<string, JsonValue> | undefined
  let firstKey = ''
  let firstItem: JsonValue = null
  let members = 0
  const hideKey = hide
  for (const k in obj) {
    if (!hasOwn(obj, k)) continue
    if (--budget < 0) spend(0, stack, key)
    let item: JsonValue | undefined
    if (hideKey !== undefined && hideKey(k)) {
      item = hidden
    } else {
      const v = (obj as Record<string, unknown>)[k]
      // `member`, inline
      if (typeof v === 'string') item = wellFormed(v)
      else if (typeof v === 'number') item = jsonNumber(v)
      else if (typeof v === 'boolean' || v === null) item = v
      else {
        item = walk(k, v, stack)
        if (item === undefined) continue
      }
    }
    if (members === 0) {
      firstKey = wellFormed(k)
      firstItem = item
    } else {
      if (members === 1) {
        copy = {}
        setOwn(copy, firstKey, firstItem)
      }
      setOwn(copy!, wellFormed(k), item)
    }
    members++
  }
  if (members === 1) {
    copy = new (OneMember as unknown as new () => Record<string, JsonValue>)()
    setOwn(copy, firstKey, firstItem)
  }
  return Object.freeze(copy ?? {})
}

/**
 * `walk('', input, [])`: the same reads in the same order, with a shorter way for the common
 * result, an ordinary object (its prototype `Object.prototype`, not an array): with nothing on
 * the stack it cannot close a cycle or nest too deep, so its members are copied at once.
 */
function walkTop(input: object | null, stack: unknown[]): JsonValue | undefined {
  if (input === null) return null
  let value: unknown = input
  if (typeof (input as { toJSON?: unknown }).toJSON === 'function') value = (input as { toJSON(key: string): unknown }).toJSON('')
  if (typeof value !== 'object' || value === null) return walkJson('', value, stack)
  const proto = getPrototypeOf(value)
  if (proto !== Object.prototype || stack.length !== 0 || Array.isArray(value)) return walkObject('', value, proto, stack)
  stack.push(value)
  const out = copyMembers('', value, stack)
  stack.pop()
  return out
}

function pointer(stack: unknown[], key: string): string {
  return stack.length === 0 ? 'the top level' : `depth ${stack.length} (key ${JSON.stringify(key)})`
}

/**
 * The value as `JSON.parse(JSON.stringify(value))` would give it, deeply frozen, with
 * lone surrogates replaced by U+FFFD. A top-level `undefined` (a tool that returns
 * nothing) becomes `null`. With `hideKey`, a member whose key it names is `replacement` in the
 * copy, its value never read (redaction of a result's data, redact.ts).
 * @throws NotJsonError when JSON cannot carry the value, it nests deeper than `MAX_VALUE_DEPTH`, or it
 *   holds more than `MAX_VALUES` values.
 */
export function toFrozenJson(value: unknown, hideKey?: (key: string) => boolean, replacement: JsonValue = null): JsonValue {
  switch (typeof value) {
    case 'string':
    case 'boolean':
    case 'number':
      return member('', value, sharedStack) as JsonValue
    case 'undefined':
      return null
    case 'function':
    case 'symbol':
      throw new NotJsonError(`a ${typeof value} has no JSON form`)
  }
  // one shared stack, unless a toJSON re-enters while it is in use
  const stack = active === 0 ? sharedStack : []
  if (active === 0) budget = MAX_VALUES // a toJSON that re-enters spends from the outer walk's budget
  const outerHide = hide // a toJSON inside a hiding walk gets a plain copy here, unless it asks to hide
  const outerHidden = hidden
  hide = hideKey
  hidden = replacement
  active++
  let out: JsonValue | undefined
  try {
    out = typeof value === 'object' ? walkTop(value, stack) : walk('', value, stack)
  } finally {
    active--
    hide = outerHide
    hidden = outerHidden
    if (stack.length !== 0) stack.length = 0 // only after a throw: a walk pops what it pushes
  }
  if (out === undefined) throw new NotJsonError('the value has no JSON form')
  return out
}

/**
 * `toFrozenJson(value)` with the value of every member whose key `hideKey` names replaced
 * by `replacement`, unread; the same walk, limits and errors. A top-level value that has
 * no JSON form (`undefined`, a function) is `null`. Redaction (`redact.ts`) is this walk.
 * @throws NotJsonError as `toFrozenJson` does.
 */
export function toFrozenJsonHiding(value: unknown, hideKey: (key: string) => boolean, replacement: JsonValue): JsonValue {
  const outerHide = hide
  const outerHidden = hidden
  const outerBudget = budget // its own budget: a toJSON that hides again does not spend from its caller's walk
  hide = hideKey
  hidden = replacement
  budget = MAX_VALUES
  active++ // a toFrozenJson inside (from a toJSON) walks with a stack of its own
  try {
    return walk('', value, []) ?? null
  } finally {
    active--
    hide = outerHide
    hidden = outerHidden
    budget = outerBudget
  }
}
