/**
 * A Standard Schema library's issues as toolwire's `{ path, message }` ({@link issuesOf}): the
 * path a JSON Pointer, the library's message kept only when it shows nothing of the input,
 * else a hint naming what is wrong.
 */
import { MAX_ISSUES, type Issue } from './validate.js'
import type { StandardSchemaV1 } from './schema-types.js'

/** The most characters of an object key an issue's path quotes. */
const MAX_PATH_TOKEN = 64

function pointerToken(key: unknown): string {
  let token = typeof key === 'symbol' ? (key.description ?? '') : String(key)
  if (token.length > MAX_PATH_TOKEN) token = `${[...token].slice(0, MAX_PATH_TOKEN).join('')}…`
  return token.replace(/~/g, '~0').replace(/\//g, '~1')
}

function segmentKey(segment: unknown): unknown {
  return typeof segment === 'object' && segment !== null ? (segment as { key?: unknown }).key : segment
}

/** The value at `keys` inside `input`, and whether it is there. */
function at(input: unknown, keys: readonly unknown[]): { readonly found: boolean; readonly value: unknown } {
  let node = input
  for (const key of keys) {
    if (typeof node !== 'object' || node === null || (typeof key !== 'string' && typeof key !== 'number') || !Object.hasOwn(node, key)) {
      return { found: false, value: undefined }
    }
    node = (node as Record<string, unknown>)[key]
  }
  return { found: true, value: node }
}

/** The shortest text of a value a message is checked for: one or two characters appear in messages by chance ("expected number"); they hide nothing. */
const MIN_ECHO = 3
/** How many of an input's values a failing validation collects to check its messages against. */
const MAX_ECHO_VALUES = 10_000
/** Of a long string, the first characters are also looked for (a library may quote a value clipped). */
const ECHO_PREFIX = 12

/**
 * The texts of `input` a message must not contain: every string and number inside it (3
 * characters or more; of a long string, also its first 12 characters), a string's JSON-escaped
 * form too, up to 10,000 values.
 */
function valueTexts(input: unknown): Set<string> {
  const texts = new Set<string>()
  const stack: unknown[] = [input]
  let seen = 0
  while (stack.length > 0 && seen++ < MAX_ECHO_VALUES) {
    const node = stack.pop()
    if (typeof node === 'string') {
      addText(texts, node)
      // a message may quote the value as JSON (`JSON.stringify(input)`): its escaped form too
      const escaped = JSON.stringify(node).slice(1, -1)
      if (escaped !== node) addText(texts, escaped)
    } else if (typeof node === 'number' || typeof node === 'bigint') {
      const text = String(node)
      if (text.length >= MIN_ECHO) texts.add(text)
    } else if (typeof node === 'object' && node !== null) {
      try {
        for (const v of Object.values(node)) stack.push(v)
      } catch {
        // a value that cannot be read shows nothing
      }
    }
  }
  return texts
}

/** Adds a string's text to `texts` (3 characters or more), and of a long one its first 12 characters. */
function addText(texts: Set<string>, text: string): void {
  if (text.length >= MIN_ECHO) texts.add(text)
  if (text.length > ECHO_PREFIX) texts.add(text.slice(0, ECHO_PREFIX))
}

/** The JSON form of the object an issue is about (a message may print it whole), `undefined` when it has none or is `{}`/`[]`. */
function jsonOf(value: object): string | undefined {
  try {
    const json = JSON.stringify(value)
    return json !== undefined && json.length > 2 ? json : undefined
  } catch {
    return undefined
  }
}

/** Whether `message` shows any of the input's texts. */
function echoes(message: string, texts: ReadonlySet<string>): boolean {
  for (const text of texts) if (message.includes(text)) return true
  return false
}

/** What the library says it received (valibot's `received`, arktype's `actual`), cut from its message. */
function withoutReceived(message: string, extra: { readonly received?: unknown; readonly actual?: unknown }): string {
  let out = message
  if (typeof extra.received === 'string' && extra.received !== '') {
    out = out.split(` but received ${extra.received}`).join('').split(`, received ${extra.received}`).join('').split(`received ${extra.received}`).join('')
  }
  if (typeof extra.actual === 'string' && extra.actual !== '') out = out.split(` (was ${extra.actual})`).join('')
  return out
}

/**
 * A hint that names what is wrong without any number or text from the input or the schema,
 * by the library's issue code (zod 4, valibot, arktype): the message when the library's own
 * shows the value.
 */
function hintOf(extra: { readonly code?: unknown; readonly type?: unknown; readonly origin?: unknown; readonly kind?: unknown }): string | undefined {
  const origin = extra.origin
  const code = typeof extra.code === 'string' ? extra.code : typeof extra.type === 'string' ? extra.type : undefined
  switch (code) {
    case 'too_small':
      return origin === 'string' ? 'is too short' : origin === 'array' || origin === 'set' ? 'has too few items' : 'is too small'
    case 'too_big':
      return origin === 'string' ? 'is too long' : origin === 'array' || origin === 'set' ? 'has too many items' : 'is too big'
    case 'min_length':
    case 'minLength':
      return 'is too short'
    case 'max_length':
    case 'maxLength':
      return 'is too long'
    case 'min_value':
    case 'min':
    case 'after':
      return 'is too small'
    case 'max_value':
    case 'max':
    case 'before':
      return 'is too big'
    case 'invalid_type':
    case 'domain':
    case 'proto':
      return 'has the wrong type'
    case 'invalid_value':
    case 'picklist':
    case 'enum':
    case 'literal':
    case 'unit':
    case 'union':
      return 'is not one of the allowed values'
    case 'invalid_format':
    case 'regex':
    case 'pattern':
    case 'email':
    case 'url':
    case 'uuid':
      return 'does not have the expected format'
    case 'not_multiple_of':
    case 'multiple_of':
    case 'divisor':
      return 'is not an allowed multiple'
    default:
      if (extra.kind === 'schema') return 'has the wrong type'
      return code === undefined ? undefined : `is not valid (${code})`
  }
}

/**
 * One library issue as toolwire's `{ path, message }`: the path a JSON Pointer (keys clipped
 * to 64 characters); the library's message kept when it shows nothing of the input (valibot's
 * "but received <value>" and arktype's "(was <value>)" cut first); a message that still
 * shows a value of the input becomes a hint naming what is wrong (`is too short`, `has the
 * wrong type`, ...), never with the value.
 */
function toIssues(raw: StandardSchemaV1.Issue, input: unknown, texts: () => ReadonlySet<string>): Issue[] {
  const keys = Array.isArray(raw.path) ? raw.path.map(segmentKey) : []
  const path = keys.map((k) => `/${pointerToken(k)}`).join('')
  const extra = raw as { code?: unknown; keys?: unknown; received?: unknown; actual?: unknown; type?: unknown; kind?: unknown; origin?: unknown }
  // zod's unknown keys: one issue per key, as ajv gives them
  if (extra.code === 'unrecognized_keys' && Array.isArray(extra.keys)) {
    return extra.keys.map((k) => Object.freeze({ path: `${path}/${pointerToken(k)}`, message: 'is not allowed' }))
  }
  const { found, value } = at(input, keys)
  const parentHas = keys.length === 0 || at(input, keys.slice(0, -1)).found
  if (!found && parentHas && keys.length > 0 && (extra.code === 'invalid_type' || extra.code === 'required' || extra.kind === 'schema')) {
    return [Object.freeze({ path, message: 'is required' })]
  }
  // the value the library checked, which a transform may have changed: valibot's `input`, arktype's `data`
  const checked = typeof extra.kind === 'string' ? valueTexts((raw as { input?: unknown }).input) : (raw as { ' arkKind'?: unknown })[' arkKind'] === 'error' ? valueTexts((raw as { data?: unknown }).data) : undefined
  const json = found && typeof value === 'object' && value !== null ? jsonOf(value) : undefined
  const shows = (text: string): boolean => echoes(text, texts()) || (checked !== undefined && echoes(text, checked)) || (json !== undefined && text.includes(json))
  let message = typeof raw.message === 'string' ? withoutReceived(raw.message, extra) : 'is not valid'
  if (shows(message)) {
    const hint = hintOf(extra)
    message = hint !== undefined && !shows(hint) ? hint : 'is not valid'
  }
  return [Object.freeze({ path, message })]
}

/** A library's issues mapped, at most `MAX_ISSUES` of them and a count of the rest; never empty. */
export function issuesOf(raw: readonly StandardSchemaV1.Issue[], input: unknown): readonly Issue[] {
  const issues: Issue[] = []
  let total = 0
  let collected: Set<string> | undefined
  const texts = (): ReadonlySet<string> => (collected ??= valueTexts(input))
  for (const issue of raw) {
    for (const mapped of toIssues(issue, input, texts)) {
      if (total++ < MAX_ISSUES) issues.push(mapped)
    }
  }
  if (issues.length === 0) issues.push(Object.freeze({ path: '', message: 'is not valid' }))
  if (total > MAX_ISSUES) issues.push(Object.freeze({ path: '', message: `${total - MAX_ISSUES} more issues not listed` }))
  return Object.freeze(issues)
}
