/**
 * `ToolResult`: the typed wrapper of the core's canonical result. Queries and
 * constructors match the Rust crate (camelCase); the wire codec is the core's own,
 * so both languages write the same bytes.
 */
import { canonicalizeResult } from './native.js'
import { ERROR_KINDS, isToolErrorKind, statusNameOf, WIRE_VERSION } from './status.js'
import { pendingOutputText, skippedText, UNREADABLE_RESULT_MESSAGE } from './texts.js'
import { toFrozenJson } from './json.js'
import { checkOutput, checkPending, checkString, describe, typeError, type PendingRequestInit } from './result-checks.js'
import { checkError, refusalError, toolError, type ToolErrorOptions } from './result-errors.js'
import { deepFreeze, wireError, wireOutput, wirePending } from './result-wire.js'
import type { ContentPart, Disposition, JsonValue, PendingRequest, StatusName, ToolErrorKind, ToolExecutionError, ToolOutput, WireDocument } from './types.js'

export { ERROR_KINDS, isToolErrorKind, WIRE_VERSION }
export { checkPending, refusalError, toolError }
export type { PendingRequestInit, ToolErrorOptions }

/** A malformed wire document given to `ToolResult.fromJSON`. */
export class ToolwireWireError extends Error {
  override name = 'ToolwireWireError'
  readonly code = 'TOOLWIRE_MALFORMED_RESULT'
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
