/**
 * The option objects of `createMcpServer`, `serveStdio`, `StdioLineTransport` and `serveHttp`,
 * checked as `new ToolManager(options)` checks its own: an unknown key or a value of the wrong
 * type or range is a TypeError naming the option (never its value: some are secrets), before
 * anything is opened. No MCP SDK import.
 */

/** What one option must be: a test of its value, and how the error says it. */
export interface OptionRule {
  readonly ok: (value: unknown) => boolean
  readonly must: string
}

/** The rules of a function's options, by name: any other key is refused. */
export type OptionRules = Readonly<Record<string, OptionRule>>

/** The longest delay a Node.js timer keeps (a longer one fires at once): 2^31 - 1 ms, about 24.8 days. */
export const MAX_TIMER_MS = 2 ** 31 - 1

const rule = (must: string, ok: (value: unknown) => boolean): OptionRule => ({ ok, must })

export const isString = rule('a string', (v) => typeof v === 'string')
export const isNonEmptyString = rule('a non-empty string', (v) => typeof v === 'string' && v.length > 0)
export const isBoolean = rule('a boolean', (v) => typeof v === 'boolean')
export const isFunction = rule('a function', (v) => typeof v === 'function')
export const isPositiveInteger = rule('a positive integer', (v) => Number.isSafeInteger(v) && (v as number) > 0)
export const isCount = rule('a non-negative integer', (v) => Number.isSafeInteger(v) && (v as number) >= 0)
/** A duration compared with the clock, never given to a timer: any positive number (`Infinity`: never). */
export const isPositiveMs = rule('a positive number of ms', (v) => typeof v === 'number' && v > 0)
/** A delay given to a timer, 0 for none. */
export const isWaitMs = rule(`a non-negative number of ms of at most ${MAX_TIMER_MS.toLocaleString('en-US')}`, (v) => typeof v === 'number' && v >= 0 && v <= MAX_TIMER_MS)

/** One of `values`. */
export function isOneOf(values: readonly string[]): OptionRule {
  return rule(`one of ${values.map((v) => JSON.stringify(v)).join(', ')}`, (v) => typeof v === 'string' && values.includes(v))
}

/** An array of values `item` accepts. */
export function isListOf(item: OptionRule, must: string): OptionRule {
  return rule(must, (v) => Array.isArray(v) && v.every((x) => item.ok(x)))
}

/** An object with the methods `methods`. */
export function isObjectWith(methods: readonly string[], must: string): OptionRule {
  return rule(must, (v) => typeof v === 'object' && v !== null && methods.every((m) => typeof (v as Record<string, unknown>)[m] === 'function'))
}

/** The first characters of a key, for an error message. */
function keyName(key: string): string {
  return JSON.stringify(key.length > 40 ? `${key.slice(0, 40)}…` : key)
}

/** A plain object (not null, not an array). */
export const isPlainObject = rule('an object', (v) => typeof v === 'object' && v !== null && !Array.isArray(v))

/**
 * Checks `options` against `rules`: `undefined` passes (no options); otherwise it must be an
 * object whose every own key has a rule and whose every defined value passes it. `prefix`
 * names a nested object's options (`'auth.'`: "option auth.issuer").
 * @throws TypeError naming the function and the option, never the value.
 */
export function checkOptions(fn: string, options: unknown, rules: OptionRules, prefix = ''): void {
  if (options === undefined) return
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new TypeError(prefix === '' ? `toolwire: ${fn}() takes an options object` : `toolwire: ${fn}() option ${prefix.slice(0, -1)} must be an object`)
  }
  const unknown = Object.keys(options).filter((key) => !Object.hasOwn(rules, key))
  if (unknown.length > 0) {
    const names = unknown.map((key) => keyName(`${prefix}${key}`)).join(', ')
    throw new TypeError(`toolwire: ${fn}() has no option ${names} (its options: ${Object.keys(rules).map((key) => `${prefix}${key}`).join(', ')})`)
  }
  for (const [name, { ok, must }] of Object.entries(rules)) {
    const value = (options as Record<string, unknown>)[name]
    if (value !== undefined && !ok(value)) throw new TypeError(`toolwire: ${fn}() option ${prefix}${name} must be ${must}`)
  }
}

/** Only the keys of `options` that `rules` names (the options a function passes on to another). */
export function pick<T extends object>(options: T, rules: OptionRules): Partial<T> {
  const out: Record<string, unknown> = {}
  for (const key of Object.keys(rules)) {
    const value = (options as Record<string, unknown>)[key]
    if (value !== undefined) out[key] = value
  }
  return out as Partial<T>
}
