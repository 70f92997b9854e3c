/**
 * W3C Trace Context of a call: the `traceparent`, `tracestate` and `baggage` a caller sends
 * (an MCP request's `params._meta`, or `CallOptions.traceContext`), checked by hand against
 * the W3C Trace Context and Baggage rules. No OpenTelemetry here: its bridge (extract,
 * inject) is in telemetry.ts.
 */

/**
 * A W3C trace context, as strings: what a call was called with (`CallOptions.traceContext`),
 * or what a tool body forwards (`ToolContext.traceContext`). The keys are the W3C header names
 * and MCP's `_meta` keys, so the object can be sent as either.
 */
export interface TraceContext {
  /** `00-{32 hex trace id}-{16 hex parent span id}-{2 hex flags}`, lowercase, ids not all zero. */
  readonly traceparent: string
  /** Vendor entries (`key=value,...`), when the caller sent a well-formed one. */
  readonly tracestate?: string
  /** W3C Baggage (`key=value;property,...`), when the caller sent a well-formed one. */
  readonly baggage?: string
}

/** A `traceparent` read into its parts. */
export interface ParsedTraceparent {
  readonly traceId: string
  readonly spanId: string
  readonly traceFlags: number
}

/** The longest `traceparent` read (a future version may append fields; version 00 is 55 characters). */
const TRACEPARENT_MAX = 512
const DASH = 0x2d

/**
 * Whether `value[from, to)` is lowercase hex: 2 when it is and not all `0`, 1 when all `0`,
 * 0 when it is not lowercase hex. A loop over char codes: no regex match array per call.
 */
function lowerHex(value: string, from: number, to: number): 0 | 1 | 2 {
  let nonZero = false
  for (let i = from; i < to; i++) {
    const c = value.charCodeAt(i)
    if (c >= 0x30 && c <= 0x39) {
      if (c !== 0x30) nonZero = true
    } else if (c >= 0x61 && c <= 0x66) nonZero = true
    else return 0
  }
  return nonZero ? 2 : 1
}

/**
 * A `traceparent` header's trace id, parent span id and flags, or `undefined` when it is not
 * a valid one: W3C Trace Context's version 00 format (lowercase hex, nothing after the flags),
 * trace id and parent id not all zero. A higher version (not `ff`) is read the same way, and
 * may carry more fields after the flags (after a `-`), as the W3C rules for future versions say.
 */
export function parseTraceparent(value: unknown): ParsedTraceparent | undefined {
  if (typeof value !== 'string' || value.length < 55 || value.length > TRACEPARENT_MAX) return undefined
  if (value.charCodeAt(2) !== DASH || value.charCodeAt(35) !== DASH || value.charCodeAt(52) !== DASH) return undefined
  if (lowerHex(value, 0, 2) === 0 || lowerHex(value, 53, 55) === 0) return undefined
  if (lowerHex(value, 3, 35) !== 2 || lowerHex(value, 36, 52) !== 2) return undefined
  const version = value.slice(0, 2)
  if (version === 'ff') return undefined
  if (value.length > 55 && (version === '00' || value.charCodeAt(55) !== DASH)) return undefined
  return { traceId: value.slice(3, 35), spanId: value.slice(36, 52), traceFlags: parseInt(value.slice(53, 55), 16) }
}

/** Optional whitespace around list separators (W3C `OWS`). */
const OWS_COMMA = /[ \t]*,[ \t]*/
const TRACESTATE_MAX_MEMBERS = 32
const TRACESTATE_KEY = /^(?:[a-z][a-z0-9_\-*/]{0,255}|[a-z0-9][a-z0-9_\-*/]{0,240}@[a-z][a-z0-9_\-*/]{0,13})$/
const TRACESTATE_VALUE = /^[\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e]$/

/** A well-formed `tracestate` (at most 32 members, valid keys and values, no key twice), normalized, or `undefined`. */
function readTracestate(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.length > 8192) return undefined
  const members = value.trim().split(OWS_COMMA).filter((m) => m !== '')
  if (members.length === 0 || members.length > TRACESTATE_MAX_MEMBERS) return undefined
  const keys = new Set<string>()
  for (const member of members) {
    const eq = member.indexOf('=')
    if (eq <= 0) return undefined
    const key = member.slice(0, eq)
    if (!TRACESTATE_KEY.test(key) || !TRACESTATE_VALUE.test(member.slice(eq + 1)) || keys.has(key)) return undefined
    keys.add(key)
  }
  return members.join(',')
}

/** W3C Baggage's limits: what a platform must propagate at least. */
const BAGGAGE_MAX_CHARS = 8192
const BAGGAGE_MAX_MEMBERS = 180
/** `key OWS = OWS value *(OWS ; OWS property)`: key a token, value baggage-octets. */
const TOKEN = "[!#$%&'*+\\-.^_`|~0-9A-Za-z]+"
const BAGGAGE_OCTETS = '[\\x21\\x23-\\x2b\\x2d-\\x3a\\x3c-\\x5b\\x5d-\\x7e]*'
const BAGGAGE_MEMBER = new RegExp(`^(${TOKEN})[ \\t]*=[ \\t]*(${BAGGAGE_OCTETS})((?:[ \\t]*;[ \\t]*${TOKEN}(?:[ \\t]*=[ \\t]*${BAGGAGE_OCTETS})?)*)$`)

/** One baggage member: its key, its value (percent-decoded) and its properties as sent. */
export interface BaggageMember {
  readonly key: string
  readonly value: string
  readonly properties: string
}

/** The members of a well-formed `baggage` header, or `undefined` when it is not one. */
export function baggageMembers(value: unknown): BaggageMember[] | undefined {
  if (typeof value !== 'string' || value.length > BAGGAGE_MAX_CHARS) return undefined
  const parts = value.trim().split(OWS_COMMA)
  if (parts.length > BAGGAGE_MAX_MEMBERS) return undefined
  const members: BaggageMember[] = []
  for (const part of parts) {
    const m = BAGGAGE_MEMBER.exec(part)
    if (m === null) return undefined
    let decoded: string
    try {
      decoded = decodeURIComponent(m[2]!)
    } catch {
      return undefined
    }
    members.push({ key: m[1]!, value: decoded, properties: m[3]!.replace(/^[ \t]*;[ \t]*/, '') })
  }
  return members
}

/** A well-formed `baggage` header, members joined by `,`, or `undefined`. */
function readBaggage(value: unknown): string | undefined {
  if (baggageMembers(value) === undefined) return undefined
  return (value as string).trim().split(OWS_COMMA).join(',')
}

/**
 * The trace context in a carrier (an MCP request's `params._meta`, a headers object, or
 * `CallOptions.traceContext`): its `traceparent` when valid (see {@link parseTraceparent}),
 * written as version 00, with its `tracestate` and `baggage` when each is well-formed. Anything
 * invalid is left out, and an invalid or absent `traceparent` gives `undefined`: never an
 * error, whatever the carrier holds (getters that throw included).
 */
export function traceContextOf(carrier: unknown): TraceContext | undefined {
  if (typeof carrier !== 'object' || carrier === null) return undefined
  let traceparent: unknown
  let tracestate: unknown
  let baggage: unknown
  try {
    const c = carrier as Record<string, unknown>
    traceparent = c.traceparent
    tracestate = c.tracestate
    baggage = c.baggage
  } catch {
    return undefined
  }
  const parsed = parseTraceparent(traceparent)
  if (parsed === undefined) return undefined
  // a version 00 one is kept as sent; a higher version is written as version 00
  const version00 = (traceparent as string).length === 55 && (traceparent as string).startsWith('00')
  const out: { -readonly [K in keyof TraceContext]: TraceContext[K] } = {
    traceparent: version00 ? (traceparent as string) : formatTraceparent(parsed.traceId, parsed.spanId, parsed.traceFlags),
  }
  const state = readTracestate(tracestate)
  if (state !== undefined) out.tracestate = state
  const bag = readBaggage(baggage)
  if (bag !== undefined) out.baggage = bag
  return Object.freeze(out)
}

/** A version 00 `traceparent`. */
export function formatTraceparent(traceId: string, spanId: string, traceFlags: number): string {
  return `00-${traceId}-${spanId}-${(traceFlags & 0xff).toString(16).padStart(2, '0')}`
}
