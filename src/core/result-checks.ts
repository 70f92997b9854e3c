/**
 * The checks a `ToolResult`'s inputs pass before the result is made: outputs and their content
 * parts ({@link checkOutput}), pending requests ({@link checkPending}) and plain strings, each
 * a TypeError naming what is wrong, the accepted value copied and frozen.
 */
import { randomId } from './ids.js'
import { MAX_PENDING_SCHEMA_BYTES, MAX_PENDING_SCHEMA_DEPTH, toFrozenJson, wellFormed } from './json.js'
import { checkContentPart } from './native.js'
import { isPendingKind, PENDING_KINDS } from './status.js'
import { shapeProblem } from './json-form.js'
import type { ContentPart, FieldChange, JsonValue, PendingKind, PendingRequest, PendingSchema, ToolOutput } from './types.js'

/** A TypeError with toolwire's prefix. */
export function typeError(message: string): TypeError {
  return new TypeError(`toolwire: ${message}`)
}

/** A value named for a message: its type, and the start of a primitive's text. */
export function describe(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  return typeof value === 'object' ? 'an object' : `${typeof value} ${JSON.stringify(String(value)).slice(0, 40)}`
}

/** `value` as a well-formed string; a TypeError naming `what` when it is no string. */
export function checkString(value: unknown, what: string): string {
  if (typeof value !== 'string') throw typeError(`${what} must be a string, got ${describe(value)}`)
  return wellFormed(value)
}

const PART_TYPES = new Set(['image', 'audio', 'file'])

function checkPart(part: unknown, index: number): ContentPart {
  if (typeof part !== 'object' || part === null) throw typeError(`parts[${index}] must be an object, got ${describe(part)}`)
  const p = part as Record<string, unknown>
  if (!PART_TYPES.has(p.type as string)) throw typeError(`parts[${index}].type must be "image", "audio" or "file", got ${describe(p.type)}`)
  checkString(p.mimeType, `parts[${index}].mimeType`)
  const hasData = p.data !== undefined
  const hasUrl = p.url !== undefined
  if (hasData === hasUrl) throw typeError(`parts[${index}] needs exactly one of data (base64) or url`)
  const out: { -readonly [K in keyof ContentPart]: ContentPart[K] } = {
    type: p.type as ContentPart['type'],
    mimeType: checkString(p.mimeType, `parts[${index}].mimeType`),
  }
  if (hasData) out.data = checkString(p.data, `parts[${index}].data`)
  if (hasUrl) out.url = checkString(p.url, `parts[${index}].url`)
  if (p.name !== undefined) out.name = checkString(p.name, `parts[${index}].name`)
  corePartCheck(out, index)
  return Object.freeze(out)
}

/**
 * The core's own check of a part (`ContentPart::check_fields`, the one the wire decoder
 * runs: MIME type shape, kind and MIME type agreeing, standard padded base64, a
 * non-empty URL), so TypeScript accepts exactly the parts the core accepts.
 */
function corePartCheck(part: ContentPart, index: number): void {
  const problem = checkContentPart(part.type, part.mimeType, part.data ?? null, part.url ?? null)
  if (problem !== null) throw typeError(`parts[${index}]: ${problem.replace(/^malformed tool result: /, '')}`)
}

/** An output (a string is its text) checked and frozen, its parts and structured data copied. */
export function checkOutput(output: unknown): ToolOutput {
  if (typeof output === 'string') return Object.freeze({ text: wellFormed(output) })
  if (typeof output !== 'object' || output === null) throw typeError(`an output must be a string or { text, parts? }, got ${describe(output)}`)
  const o = output as Record<string, unknown>
  const text = checkString(o.text, 'output.text')
  const out: { -readonly [K in keyof ToolOutput]: ToolOutput[K] } = { text }
  if (o.parts !== undefined) {
    if (!Array.isArray(o.parts)) throw typeError(`output.parts must be an array, got ${describe(o.parts)}`)
    if (o.parts.length > 0) out.parts = Object.freeze(o.parts.map(checkPart))
  }
  // a deeply frozen JSON copy: JSON semantics, no BigInt, nothing the caller can still mutate
  if (o.structured !== undefined) out.structured = toFrozenJson(o.structured)
  return Object.freeze(out)
}

/** What `ToolResult.pending` takes: the id is generated when absent. */
export interface PendingRequestInit {
  readonly id?: string
  readonly kind: PendingKind
  readonly prompt?: string
  readonly url?: string
  readonly summary?: string
  readonly changes?: readonly FieldChange[]
  /**
   * The JSON Schema of the input the call waits for: kind `input` only (any other kind with a
   * schema is a TypeError), a plain JSON object nesting at most `MAX_PENDING_SCHEMA_DEPTH` (32)
   * levels and at most `MAX_PENDING_SCHEMA_BYTES` (65,536) bytes as compact JSON.
   */
  readonly schema?: object
}

/** A pending request's schema as a frozen JSON copy; a TypeError when it breaks the rules of {@link PendingRequestInit.schema}. */
function checkPendingSchema(kind: PendingKind, schema: unknown): PendingSchema {
  if (kind !== 'input') throw typeError(`a pending request schema is only for kind "input", not ${JSON.stringify(kind)}`)
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) {
    throw typeError(`a pending request schema must be a JSON Schema object, got ${describe(schema)}`)
  }
  let copy: JsonValue
  try {
    copy = toFrozenJson(schema)
  } catch (err) {
    throw typeError(`a pending request schema must be JSON: ${(err as Error).message}`)
  }
  if (typeof copy !== 'object' || copy === null || Array.isArray(copy)) {
    throw typeError(`a pending request schema must be a JSON Schema object, got ${describe(copy)}`)
  }
  if (shapeProblem(copy, MAX_PENDING_SCHEMA_DEPTH, Number.MAX_SAFE_INTEGER) !== undefined) {
    throw typeError(`a pending request schema is nested deeper than ${MAX_PENDING_SCHEMA_DEPTH} levels`)
  }
  if (Buffer.byteLength(JSON.stringify(copy)) > MAX_PENDING_SCHEMA_BYTES) {
    throw typeError(`a pending request schema is longer than ${MAX_PENDING_SCHEMA_BYTES} bytes as JSON`)
  }
  return copy as PendingSchema
}

/**
 * A pending request checked and copied (frozen, its id generated when absent).
 * @throws TypeError when `init` is not a valid {@link PendingRequestInit}.
 */
export function checkPending(init: unknown): PendingRequest {
  if (typeof init !== 'object' || init === null) throw typeError(`a pending request must be an object, got ${describe(init)}`)
  const r = init as Record<string, unknown>
  if (!isPendingKind(r.kind)) throw typeError(`a pending request kind must be one of ${PENDING_KINDS.join(', ')}, got ${describe(r.kind)}`)
  const out: { -readonly [K in keyof PendingRequest]: PendingRequest[K] } = {
    id: r.id === undefined ? randomId() : checkString(r.id, 'a pending request id'),
    kind: r.kind as PendingKind,
  }
  for (const key of ['prompt', 'url', 'summary'] as const) {
    if (r[key] !== undefined) out[key] = checkString(r[key], `a pending request ${key}`)
  }
  if (r.changes !== undefined) {
    if (!Array.isArray(r.changes)) throw typeError(`pending changes must be an array, got ${describe(r.changes)}`)
    out.changes = Object.freeze(
      r.changes.map((c: unknown, i: number) => {
        if (typeof c !== 'object' || c === null) throw typeError(`changes[${i}] must be an object`)
        const change = c as Record<string, unknown>
        const fc: { -readonly [K in keyof FieldChange]: FieldChange[K] } = { path: checkString(change.path, `changes[${i}].path`) }
        if ('before' in change && change.before !== undefined) fc.before = toFrozenJson(change.before)
        if ('after' in change && change.after !== undefined) fc.after = toFrozenJson(change.after)
        return Object.freeze(fc)
      }),
    )
  }
  if (r.schema !== undefined) out.schema = checkPendingSchema(out.kind, r.schema)
  return Object.freeze(out)
}
