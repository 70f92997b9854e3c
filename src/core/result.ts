/**
 * `ToolResult`: the typed wrapper of the core's canonical result. Queries and
 * constructors match the Rust crate (camelCase); the wire codec is the core's own,
 * so both languages write the same bytes.
 */
import { randomId } from './ids.js'
import { MAX_PENDING_SCHEMA_BYTES, MAX_PENDING_SCHEMA_DEPTH, toFrozenJson, wellFormed } from './json.js'
import { canonicalizeResult, checkContentPart } from './native.js'
import { defaultRetryable, ERROR_KINDS, isPendingKind, isToolErrorKind, PENDING_KINDS, statusNameOf, WIRE_VERSION } from './status.js'
import { pendingOutputText, skippedText, UNREADABLE_RESULT_MESSAGE } from './texts.js'
import { shapeProblem } from './validate.js'
import type {
  ContentPart,
  Disposition,
  FieldChange,
  JsonValue,
  PendingKind,
  PendingRequest,
  PendingSchema,
  StatusName,
  ToolErrorKind,
  ToolExecutionError,
  ToolOutput,
  WireDocument,
} from './types.js'

export { ERROR_KINDS, isToolErrorKind, WIRE_VERSION }

/** A malformed wire document given to `ToolResult.fromJSON`. */
export class ToolwireWireError extends Error {
  override name = 'ToolwireWireError'
  readonly code = 'TOOLWIRE_MALFORMED_RESULT'
}

function typeError(message: string): TypeError {
  return new TypeError(`toolwire: ${message}`)
}

function describe(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  return typeof value === 'object' ? 'an object' : `${typeof value} ${JSON.stringify(String(value)).slice(0, 40)}`
}

/** Options of an execution error. */
export interface ToolErrorOptions {
  readonly code?: string
  readonly retryable?: boolean
  readonly details?: JsonValue
}

/**
 * An execution error of `kind`, retryable by the kind's default unless told.
 * @example toolError('timeout', 'The search took too long')
 */
export function toolError(kind: ToolErrorKind, message: string, options: ToolErrorOptions = {}): ToolExecutionError {
  if (!isToolErrorKind(kind)) throw typeError(`unknown error kind ${JSON.stringify(kind)}; expected one of ${ERROR_KINDS.join(', ')}`)
  if (typeof message !== 'string') throw typeError(`an error message must be a string, got ${describe(message)}`)
  const error: { -readonly [K in keyof ToolExecutionError]: ToolExecutionError[K] } = {
    kind,
    message: wellFormed(message),
    retryable: options.retryable ?? defaultRetryable(kind),
    refusal: false,
  }
  if (options.code !== undefined) error.code = checkString(options.code, 'an error code')
  if (options.details !== undefined) error.details = toFrozenJson(options.details)
  return made(Object.freeze(error))
}

/**
 * An intentional refusal: kind `permission_denied`, never retryable.
 * @example refusalError('not_allowed', 'Only owners can publish')
 */
export function refusalError(code: string, message: string, details?: JsonValue): ToolExecutionError {
  return refusalOf(checkString(code, 'a refusal code'), message, details)
}

/** A refusal with or without a code (the wire allows both; `refusalError` always gives one). */
function refusalOf(code: string | undefined, message: string, details: JsonValue | undefined): ToolExecutionError {
  if (typeof message !== 'string') throw typeError(`a refusal message must be a string, got ${describe(message)}`)
  const error: { -readonly [K in keyof ToolExecutionError]: ToolExecutionError[K] } = {
    kind: 'permission_denied',
    message: wellFormed(message),
    retryable: false,
    refusal: true,
  }
  if (code !== undefined) error.code = code
  if (details !== undefined) error.details = toFrozenJson(details)
  return made(Object.freeze(error))
}

/** The errors `toolError` and `refusalError` made: already checked, frozen JSON. */
const madeErrors = new WeakSet<ToolExecutionError>()

function made(error: ToolExecutionError): ToolExecutionError {
  madeErrors.add(error)
  return error
}

/** `error` when this module made it, else a checked, deeply frozen copy made by `toolError` or `refusalError`. */
function checkError(error: unknown): ToolExecutionError {
  if (typeof error === 'object' && error !== null && madeErrors.has(error as ToolExecutionError)) return error as ToolExecutionError
  const e = error as Partial<Record<keyof ToolExecutionError, unknown>> | null
  if (typeof e !== 'object' || e === null || !isToolErrorKind(e.kind) || typeof e.message !== 'string') {
    throw typeError('ToolResult.failed takes an error made by toolError() or refusalError()')
  }
  const details = e.details === undefined ? undefined : (e.details as JsonValue)
  if (e.refusal === true) {
    if (e.kind !== 'permission_denied' || e.retryable === true) throw typeError('a refusal has kind "permission_denied" and is not retryable')
    return refusalOf(e.code === undefined ? undefined : checkString(e.code, 'a refusal code'), e.message, details)
  }
  const options: { -readonly [K in keyof ToolErrorOptions]: ToolErrorOptions[K] } = {}
  if (e.code !== undefined) options.code = checkString(e.code, 'an error code')
  if (e.retryable !== undefined) {
    if (typeof e.retryable !== 'boolean') throw typeError(`an error's retryable must be a boolean, got ${describe(e.retryable)}`)
    options.retryable = e.retryable
  }
  if (details !== undefined) options.details = details
  return toolError(e.kind, e.message, options)
}

function checkString(value: unknown, what: string): string {
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

function checkOutput(output: unknown): ToolOutput {
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

/** `intoResult()`: success and skipped give `ok: true`, errors and refusals `ok: false`. */
export type IntoResult = { readonly ok: true; readonly output: ToolOutput } | { readonly ok: false; readonly error: ToolExecutionError }

/**
 * The canonical result of one tool call: exactly one disposition, fixed at creation.
 *
 * @example
 * const r = ToolResult.failed(toolError('timeout', 'too slow'))
 * r.isErrorKind('timeout') // true
 * r.statusName()           // 'error'
 * ToolResult.fromJSON(r.toJSONText()).isError() // true
 */
export class ToolResult {
  readonly #disposition: Disposition
  readonly #data: JsonValue | undefined
  readonly #parts: readonly ContentPart[] | undefined
  readonly #error: ToolExecutionError | undefined
  readonly #detail: string | PendingRequest | undefined
  readonly #untrusted: boolean
  readonly #metadata: { readonly [key: string]: JsonValue } | undefined
  /** The text as given; `undefined` when it is rendered from `#data` (then cached in `#output`). */
  readonly #text: string | undefined
  #output: ToolOutput | undefined

  /** @internal Use the static constructors. */
  constructor(
    disposition: Disposition,
    data: JsonValue | undefined,
    parts: readonly ContentPart[] | undefined,
    error: ToolExecutionError | undefined,
    detail: string | PendingRequest | undefined,
    untrusted: boolean,
    metadata: { readonly [key: string]: JsonValue } | undefined,
    text?: string,
  ) {
    this.#disposition = disposition
    this.#data = data
    this.#parts = parts
    this.#error = error
    this.#detail = detail
    this.#untrusted = untrusted
    this.#metadata = metadata
    this.#text = text
    this.#output = undefined
  }

  /**
   * Only results made by this class's constructors are `ToolResult`s: an object that
   * merely has `ToolResult.prototype` in its chain (a forgery) is not.
   */
  static [Symbol.hasInstance](value: unknown): boolean {
    return typeof value === 'object' && value !== null && #disposition in value
  }

  /**
   * Whether `value` is a result of this copy or claims to be one of another copy of toolwire
   * (`isToolResult`); never throws.
   * @internal
   */
  static isBranded(value: unknown): boolean {
    return isToolResult(value)
  }

  /** A successful result. A string is the text output. */
  static success(output: ToolOutput | string): ToolResult {
    const o = checkOutput(output)
    return new ToolResult('success', o.structured, o.parts, undefined, undefined, false, undefined, o.text)
  }

  /** @internal A success whose text is rendered from `data` (already deeply frozen JSON) only when someone reads it. */
  static fromData(data: JsonValue, parts?: readonly ContentPart[], untrusted = false, metadata?: { readonly [key: string]: JsonValue }): ToolResult {
    return typeof data === 'string'
      ? new ToolResult('success', undefined, parts, undefined, undefined, untrusted, metadata, data)
      : new ToolResult('success', data, parts, undefined, undefined, untrusted, metadata, undefined)
  }

  /** A failed result, or a refused one when the error is a refusal. The output text is the error's message. */
  static failed(error: ToolExecutionError): ToolResult {
    const e = checkError(error)
    return new ToolResult(e.refusal ? 'refused' : 'error', undefined, undefined, e, undefined, false, undefined, e.message)
  }

  /** A result for a call skipped by runtime policy. */
  static skipped(reason: string): ToolResult {
    const why = checkString(reason, 'a skip reason')
    return new ToolResult('skipped', undefined, undefined, undefined, why, false, undefined, skippedText(why))
  }

  /** A result for a call suspended until `request` is answered; the id is generated when absent. */
  static pending(request: PendingRequestInit): ToolResult {
    const r = checkPending(request)
    return new ToolResult('pending', undefined, undefined, undefined, r, false, undefined, pendingOutputText(r))
  }

  /** Parses and validates a wire document (in the core). Throws `ToolwireWireError` when malformed. */
  static fromJSON(text: string): ToolResult {
    if (typeof text !== 'string') throw typeError(`ToolResult.fromJSON takes JSON text, got ${describe(text)}`)
    let canonical: string
    try {
      canonical = canonicalizeResult(text)
    } catch (err) {
      throw new ToolwireWireError((err as Error).message)
    }
    return ToolResult.fromWire(deepFreeze(JSON.parse(canonical)) as WireDocument)
  }

  /** @internal Builds from a document the core has validated (deeply frozen). */
  static fromWire(doc: WireDocument): ToolResult {
    const out = doc.output
    const untrusted = doc.untrusted === true
    switch (doc.status) {
      case 'success':
        return new ToolResult('success', out.structured, out.parts, undefined, undefined, untrusted, doc.metadata, out.text)
      case 'error':
      case 'refused': {
        const body = (doc.status === 'error' ? doc.error : doc.refusal) as Omit<ToolExecutionError, 'refusal'>
        const error = Object.freeze({ ...body, refusal: doc.status === 'refused' })
        return new ToolResult(doc.status, out.structured, out.parts, error, undefined, untrusted, doc.metadata, out.text)
      }
      case 'skipped':
        return new ToolResult('skipped', out.structured, out.parts, undefined, doc.skipReason, untrusted, doc.metadata, out.text)
      case 'pending':
        return new ToolResult('pending', out.structured, out.parts, undefined, doc.pending, untrusted, doc.metadata, out.text)
    }
  }

  /** The same result with its model-visible output replaced, keeping its disposition. */
  withOutput(output: ToolOutput | string): ToolResult {
    const o = checkOutput(output)
    return new ToolResult(this.#disposition, o.structured, o.parts, this.#error, this.#detail, this.#untrusted, this.#metadata, o.text)
  }

  /** The same result marked (or unmarked) as untrusted content: data, not instructions. */
  withUntrusted(untrusted: boolean): ToolResult {
    if (typeof untrusted !== 'boolean') throw typeError('withUntrusted takes a boolean')
    return new ToolResult(this.#disposition, this.#data, this.#parts, this.#error, this.#detail, untrusted, this.#metadata, this.#text)
  }

  /** The same result with app-only metadata (kept as a deeply frozen JSON copy), which never reaches the model. */
  withMetadata(metadata: { readonly [key: string]: JsonValue }): ToolResult {
    if (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata)) throw typeError('withMetadata takes an object')
    const copy = toFrozenJson(metadata) as { readonly [key: string]: JsonValue }
    return new ToolResult(this.#disposition, this.#data, this.#parts, this.#error, this.#detail, this.#untrusted, copy, this.#text)
  }

  /** The model-visible text (rendered from structured data on first read). */
  text(): string {
    return this.#text ?? this.output().text
  }

  /** @internal Whether the text was rendered from the structured data (`JSON.stringify`) rather than given. */
  textFromData(): boolean {
    return this.#text === undefined
  }

  /** The structured value the text came from, if any. */
  data(): JsonValue | undefined {
    return this.#data
  }

  /** The content parts, if any. */
  parts(): readonly ContentPart[] | undefined {
    return this.#parts
  }

  /** Current model-visible output, including replacements made by `withOutput`. */
  output(): ToolOutput {
    if (this.#output === undefined) {
      const o: { -readonly [K in keyof ToolOutput]: ToolOutput[K] } = { text: this.#text ?? JSON.stringify(this.#data) ?? 'null' }
      if (this.#parts !== undefined && this.#parts.length > 0) o.parts = this.#parts
      if (this.#data !== undefined) o.structured = this.#data
      this.#output = Object.freeze(o)
    }
    return this.#output
  }

  /** The execution error, if execution failed; refusals are under `refusal()`. */
  error(): ToolExecutionError | undefined {
    return this.#disposition === 'error' ? this.#error : undefined
  }

  /** The refusal, if the call was declined; mutually exclusive with `error()`. */
  refusal(): ToolExecutionError | undefined {
    return this.#disposition === 'refused' ? this.#error : undefined
  }

  /** The request a pending call waits on. */
  pendingRequest(): PendingRequest | undefined {
    return this.#disposition === 'pending' ? (this.#detail as PendingRequest) : undefined
  }

  /** Why runtime policy skipped the call. */
  skipReason(): string | undefined {
    return this.#disposition === 'skipped' ? (this.#detail as string) : undefined
  }

  /** Whether the content is untrusted (data, not instructions). */
  isUntrusted(): boolean {
    return this.#untrusted
  }

  /** App-only metadata. */
  metadata(): { readonly [key: string]: JsonValue } | undefined {
    return this.#metadata
  }

  /** The one disposition. */
  disposition(): Disposition {
    return this.#disposition
  }

  isSuccess(): boolean {
    return this.#disposition === 'success'
  }

  /** Whether execution failed. A refusal is not an error. */
  isError(): boolean {
    return this.#disposition === 'error'
  }

  isSkipped(): boolean {
    return this.#disposition === 'skipped'
  }

  isRefused(): boolean {
    return this.#disposition === 'refused'
  }

  isPending(): boolean {
    return this.#disposition === 'pending'
  }

  /** Whether this is an error of exactly `kind`; a refusal never matches. */
  isErrorKind(kind: ToolErrorKind): boolean {
    return this.#disposition === 'error' && (this.#error as ToolExecutionError).kind === kind
  }

  /** Success and skipped give `{ ok: true, output }`; errors and refusals `{ ok: false, error }`; a pending call an `other` error with code `pending`. */
  intoResult(): IntoResult {
    switch (this.#disposition) {
      case 'success':
      case 'skipped':
        return { ok: true, output: this.output() }
      case 'pending':
        return { ok: false, error: toolError('other', pendingOutputText(this.#detail as PendingRequest), { code: 'pending' }) }
      default:
        return { ok: false, error: this.#error as ToolExecutionError }
    }
  }

  /** Stable telemetry name: success, error, denied, skipped or pending. */
  statusName(): StatusName {
    return statusNameOf(this.#disposition)
  }

  /** The wire document, keys in canonical order (so `JSON.stringify(result)` gives the wire text). */
  toJSON(): WireDocument {
    const doc: Record<string, unknown> = { v: WIRE_VERSION, status: this.#disposition, output: wireOutput(this.output()) }
    switch (this.#disposition) {
      case 'error':
      case 'refused':
        doc[this.#disposition === 'error' ? 'error' : 'refusal'] = wireError(this.#error as ToolExecutionError)
        break
      case 'skipped':
        doc.skipReason = this.#detail
        break
      case 'pending':
        doc.pending = wirePending(this.#detail as PendingRequest)
        break
    }
    if (this.#untrusted) doc.untrusted = true
    if (this.#metadata !== undefined) doc.metadata = this.#metadata
    return doc as unknown as WireDocument
  }

  /**
   * The canonical wire text, written by the core (byte-identical to Rust's `to_json`).
   * Never throws for a result made by this class: every string in it is well-formed
   * Unicode and every value nests at most `MAX_VALUE_DEPTH` levels (docs/wire-format.md).
   */
  toJSONText(): string {
    return canonicalizeResult(JSON.stringify(this.toJSON()))
  }
}

/**
 * The cross-copy brand of a `ToolResult`. An application can load two copies of this
 * module (the ES module build and the CommonJS build, or two bundles), and `instanceof`
 * only knows its own copy's class. `Symbol.for` gives every copy the same key; its value on
 * `ToolResult.prototype` is the wire format version that copy writes (`WIRE_VERSION`).
 * @internal
 */
export const RESULT_BRAND: unique symbol = Symbol.for('toolwire.ToolResult')

Object.defineProperty(ToolResult.prototype, RESULT_BRAND, { value: WIRE_VERSION, enumerable: false, writable: false, configurable: false })

/**
 * The brand `value` claims (its wire version), or `undefined`. A read that throws (a getter,
 * a Proxy trap) claims nothing: the value is then taken as data, and a Proxy whose traps
 * throw fails there as any hostile value does.
 */
function brandOf(value: object): unknown {
  try {
    return (value as { [RESULT_BRAND]?: unknown })[RESULT_BRAND]
  } catch {
    return undefined
  }
}

/**
 * Whether `value` is a `ToolResult` of this copy, or claims to be one of another copy of
 * toolwire (it carries the brand). Never throws. `asOwnResult` turns either into a result
 * of this copy.
 * @internal
 */
export function isToolResult(value: unknown): boolean {
  if (value instanceof ToolResult) return true
  return typeof value === 'object' && value !== null && brandOf(value) !== undefined
}

/**
 * The one place a value from outside becomes a `ToolResult` of this copy:
 *
 * - a result of this copy: itself;
 * - a result of another copy of toolwire (the brand): a result of this copy read from its
 *   canonical wire text (`toJSONText()`, validated by the core as `ToolResult.fromJSON`
 *   does), so it keeps its disposition, output, parts, untrusted mark and metadata;
 * - a value that carries the brand but gives no wire text this copy reads (a forgery, a
 *   hostile object, a copy writing another wire version): an `other` error with code
 *   `unreadable_result`, never a success and never a throw;
 * - anything else: `undefined` (not a result).
 * @internal
 */
export function asOwnResult(value: unknown): ToolResult | undefined {
  if (value instanceof ToolResult) return value
  if (typeof value !== 'object' || value === null) return undefined
  const version = brandOf(value)
  if (version === undefined) return undefined
  if (typeof version !== 'number' || !Number.isSafeInteger(version) || version < 1) return unreadable('brand', undefined)
  const foreignVersion = version === WIRE_VERSION ? undefined : version
  let text: unknown
  try {
    const write: unknown = (value as { toJSONText?: unknown }).toJSONText
    text = typeof write === 'function' ? (write as () => unknown).call(value) : undefined
  } catch {
    return unreadable('wire_text', foreignVersion)
  }
  if (typeof text !== 'string') return unreadable('wire_text', foreignVersion)
  try {
    return ToolResult.fromJSON(text)
  } catch {
    return unreadable('wire', foreignVersion)
  }
}

/**
 * The error result of a branded value that could not be read. Only the step that failed is
 * kept (in app-only details): what a hostile object threw or wrote may hold anything.
 */
function unreadable(step: 'brand' | 'wire_text' | 'wire', version: number | undefined): ToolResult {
  const details: { [key: string]: JsonValue } = { step }
  if (version !== undefined) details.wireVersion = version
  return ToolResult.failed(toolError('other', UNREADABLE_RESULT_MESSAGE, { code: 'unreadable_result', details }))
}

/** Freezes a parsed JSON value and everything in it; returns it. */
function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key])
    Object.freeze(value)
  }
  return value
}

function wireOutput(o: ToolOutput): ToolOutput {
  const out: Record<string, unknown> = { text: o.text }
  if (o.parts !== undefined) {
    out.parts = o.parts.map((p) => {
      const part: Record<string, unknown> = { type: p.type, mimeType: p.mimeType }
      if (p.data !== undefined) part.data = p.data
      if (p.url !== undefined) part.url = p.url
      if (p.name !== undefined) part.name = p.name
      return part
    })
  }
  if (o.structured !== undefined) out.structured = o.structured
  return out as unknown as ToolOutput
}

function wireError(e: ToolExecutionError): Omit<ToolExecutionError, 'refusal'> {
  const out: Record<string, unknown> = { kind: e.kind, message: e.message }
  if (e.code !== undefined) out.code = e.code
  out.retryable = e.retryable
  if (e.details !== undefined) out.details = e.details
  return out as unknown as Omit<ToolExecutionError, 'refusal'>
}

function wirePending(r: PendingRequest): PendingRequest {
  const out: Record<string, unknown> = { id: r.id, kind: r.kind }
  if (r.prompt !== undefined) out.prompt = r.prompt
  if (r.url !== undefined) out.url = r.url
  if (r.summary !== undefined) out.summary = r.summary
  if (r.changes !== undefined) {
    out.changes = r.changes.map((c) => {
      const fc: Record<string, unknown> = { path: c.path }
      if (c.before !== undefined) fc.before = c.before
      if (c.after !== undefined) fc.after = c.after
      return fc
    })
  }
  if (r.schema !== undefined) out.schema = r.schema
  return out as unknown as PendingRequest
}
