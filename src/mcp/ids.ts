/**
 * JSON-RPC ids and progress tokens that are integers beyond ±2^53 (`1e21`,
 * `12345678901234567890`, `1e400`): valid per the MCP schema, refused by the SDK's (it takes safe
 * integers only). One that is not integer-valued as written (`1.5`, `1e-400`, which parses
 * to 0) is refused (-32600), whatever it parses to. On the way in each one is swapped for a string alias the SDK carries; on
 * the way out the alias is written back as the number's text as the client sent it. No MCP
 * SDK import.
 */
import { randomBytes } from 'node:crypto'

/** The most aliases remembered (the oldest are forgotten first). */
const MAX_ALIASES = 10_000

type Json = Record<string, unknown>

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** An integer JSON can hold but the SDK cannot: integer-valued, beyond the safe range. */
function isWideInteger(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && !Number.isSafeInteger(value)
}

/**
 * Whether a JSON number, as written, is an integer (`1e400`, `2.50e1` yes; `1.5`, `1e-400`,
 * which `JSON.parse` makes 0, no): decided on its digits, never on the parsed value.
 */
export function integerAsWritten(token: string): boolean {
  const m = /^-?(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(token)
  if (m === null) return false
  const fraction = (m[2] ?? '').replace(/0+$/, '')
  const digits = (m[1]! + fraction).replace(/^0+/, '')
  if (digits === '') return true
  // the value is digits × 10^scale: an integer when the digits' trailing zeros cover a negative scale
  const trailingZeros = digits.length - digits.replace(/0+$/, '').length
  return Number(m[3] ?? '0') - fraction.length + trailingZeros >= 0
}

/** A number id or progress token the SDK must not see as it parsed: an integer beyond ±2^53 (or ±Infinity), or not integer-valued as written. */
type Odd = 'wide' | 'fraction' | undefined

/** Which kind of odd number `value` is, from its text in `text` at `path` when known (else from the value). */
function oddNumber(value: unknown, text: string | undefined, path: readonly string[]): Odd {
  if (typeof value !== 'number') return undefined
  if (text !== undefined && path.length === 1 && plainTopLevelInteger(value, text, path[0]!)) return undefined
  const written = text === undefined ? undefined : numberText(text, path)
  if (written === undefined) return isWideInteger(value) ? 'wide' : undefined
  if (!integerAsWritten(written)) return 'fraction'
  return Number.isSafeInteger(value) ? undefined : 'wide'
}

/**
 * Whether the top-level member `key` of the JSON text `text` is written as `value`'s plain
 * integer text (`42`, never `42.0` or `4.2e1`), told without scanning the whole text: only when
 * `"key"` occurs once in `text` and `text` has no backslash (so that no key is escaped, and that
 * one occurrence is the member's name). `false` means "not told": scan the text.
 */
function plainTopLevelInteger(value: number, text: string, key: string): boolean {
  if (!Number.isSafeInteger(value) || Object.is(value, -0) || text.includes('\\')) return false
  const quoted = `"${key}"`
  const at = text.indexOf(quoted)
  if (at === -1 || text.indexOf(quoted, at + 1) !== -1) return false
  let i = at + quoted.length
  while (isJsonSpace(text.charCodeAt(i))) i++
  if (text.charCodeAt(i) !== 0x3a) return false // ':'
  i++
  while (isJsonSpace(text.charCodeAt(i))) i++
  const digits = String(value)
  if (!text.startsWith(digits, i)) return false
  // the number ends right after its digits: no fraction, exponent or further digit
  const next = text.charCodeAt(i + digits.length)
  return next !== 0x2e && next !== 0x65 && next !== 0x45 && !(next >= 0x30 && next <= 0x39)
}

/** JSON whitespace: space, tab, newline, carriage return. */
function isJsonSpace(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d
}

/** What stands for a number that is not integer-valued as written: a fraction, which the SDK refuses (-32600) as it would the number sent. */
const FRACTION = 0.5

/**
 * The text of the number at `path` (member names from the top) in a JSON text (the last one
 * when a member is repeated, as `JSON.parse` takes it); `undefined` when there is none. `text`
 * must be valid JSON.
 */
export function numberText(text: string, path: readonly string[]): string | undefined {
  // one frame per open object (its current member name) or array (null)
  const frames: (string | undefined | null)[] = []
  let found: string | undefined
  let i = 0
  while (i < text.length) {
    const c = text[i]!
    if (c === '"') {
      const start = i
      for (i++; text[i] !== '"'; i++) if (text[i] === '\\') i++
      i++
      let j = i
      while (j < text.length && (text[j] === ' ' || text[j] === '\n' || text[j] === '\r' || text[j] === '\t')) j++
      if (text[j] === ':' && frames.length > 0 && frames[frames.length - 1] !== null) {
        frames[frames.length - 1] = JSON.parse(text.slice(start, i)) as string
        i = j + 1
      }
      continue
    }
    if (c === '{') frames.push(undefined)
    else if (c === '[') frames.push(null)
    else if (c === '}' || c === ']') frames.pop()
    else if (c === '-' || (c >= '0' && c <= '9')) {
      const token = /^-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/.exec(text.slice(i, i + 400))![0]
      if (frames.length === path.length && frames.every((key, k) => key === path[k])) found = token
      i += token.length
      continue
    }
    i++
  }
  return found
}

/** Aliases of wide integer ids for one server (or transport): see the module comment. */
export class WideIds {
  private readonly prefix = `toolwire-id-${randomBytes(6).toString('hex')}-`
  private readonly pattern: RegExp
  private seq = 0
  /** alias → the number's text as sent */
  private readonly texts = new Map<string, string>()
  /** the number → its newest alias (a `notifications/cancelled` names a request by value) */
  private readonly byValue = new Map<number, string>()

  constructor() {
    this.pattern = new RegExp(`"${this.prefix}\\d+"`, 'g')
  }

  private alias(value: number, text: string | undefined): string {
    const alias = `${this.prefix}${++this.seq}`
    this.texts.set(alias, text ?? JSON.stringify(value))
    this.byValue.set(value, alias)
    if (this.texts.size > MAX_ALIASES) this.texts.delete(this.texts.keys().next().value as string)
    if (this.byValue.size > MAX_ALIASES) this.byValue.delete(this.byValue.keys().next().value as number)
    return alias
  }

  /**
   * A parsed message with each wide integer (its `id`, a cancelled `requestId`, a
   * `_meta.progressToken`) swapped for an alias; the same value when it has none. `text` is
   * the message as received, so that the id is written back exactly as sent.
   */
  inbound(value: unknown, text?: string): unknown {
    if (!isObject(value)) return value
    let out = value
    const id = oddNumber(value.id, text, ['id'])
    if (id === 'fraction') out = { ...out, id: FRACTION }
    else if (id === 'wide') out = { ...out, id: this.alias(value.id as number, text === undefined ? undefined : numberText(text, ['id'])) }
    const params = value.params
    if (isObject(params)) {
      let p = params
      if (isWideInteger(params.requestId)) p = { ...p, requestId: this.byValue.get(params.requestId) ?? this.alias(params.requestId, undefined) }
      const meta = params._meta
      const token = isObject(meta) ? oddNumber(meta.progressToken, text, ['params', '_meta', 'progressToken']) : undefined
      if (isObject(meta) && token === 'fraction') p = { ...p, _meta: { ...meta, progressToken: FRACTION } }
      else if (isObject(meta) && token === 'wide') p = { ...p, _meta: { ...meta, progressToken: this.alias(meta.progressToken as number, text === undefined ? undefined : numberText(text, ['params', '_meta', 'progressToken'])) } }
      if (p !== params) out = { ...out, params: p }
    }
    return out
  }

  /** The JSON text of an outgoing message, each alias written back as its number. */
  serialize(message: unknown): string {
    return this.restore(JSON.stringify(message))
  }

  /** JSON text (a message, or SSE lines carrying messages) with each alias written back as its number. */
  restore(text: string): string {
    if (this.texts.size === 0 || !text.includes(this.prefix)) return text
    return text.replace(this.pattern, (quoted) => this.texts.get(quoted.slice(1, -1)) ?? quoted)
  }

  /** Whether any alias was made (only then can outgoing text hold one). */
  get active(): boolean {
    return this.texts.size > 0
  }
}
