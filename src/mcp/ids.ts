/**
 * JSON-RPC ids and progress tokens that are integers beyond ±2^53 (`1e21`,
 * `12345678901234567890`): valid per the MCP schema, refused by the SDK's (it takes safe
 * integers only). On the way in each one is swapped for a string alias the SDK carries; on
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
    if (isWideInteger(value.id)) out = { ...out, id: this.alias(value.id, text === undefined ? undefined : numberText(text, ['id'])) }
    const params = value.params
    if (isObject(params)) {
      let p = params
      if (isWideInteger(params.requestId)) p = { ...p, requestId: this.byValue.get(params.requestId) ?? this.alias(params.requestId, undefined) }
      const meta = params._meta
      if (isObject(meta) && isWideInteger(meta.progressToken)) p = { ...p, _meta: { ...meta, progressToken: this.alias(meta.progressToken, text === undefined ? undefined : numberText(text, ['params', '_meta', 'progressToken'])) } }
      if (p !== params) out = { ...out, params: p }
    }
    return out
  }

  /** The JSON text of an outgoing message, each alias written back as its number. */
  serialize(message: unknown): string {
    const text = JSON.stringify(message)
    if (this.texts.size === 0 || !text.includes(this.prefix)) return text
    return text.replace(this.pattern, (quoted) => this.texts.get(quoted.slice(1, -1)) ?? quoted)
  }
}
