/**
 * `ToolResult`: the typed wrapper of the core's canonical result. Queries and
 * constructors match the Rust crate (camelCase); the wire codec is the core's own,
 * so both languages write the same bytes.
 */
import { canonicalizeResult, coreTables } from './native.js'
import type {
  ContentPart,
  Disposition,
  FieldChange,
  JsonValue,
  PendingKind,
  PendingRequest,
  StatusName,
  ToolErrorKind,
  ToolExecutionError,
  ToolOutput,
  WireDocument,
} from './types.js'

const tables = coreTables()

/** The wire format version this build reads and writes (from the core). */
export const WIRE_VERSION: number = tables.wireVersion

const STATUS_NAMES = new Map<string, StatusName>(
  tables.dispositions.map((d) => [d.status, d.statusName as StatusName]),
)
const DEFAULT_RETRYABLE = new Map<string, boolean>(tables.errorKinds.map((k) => [k.name, k.retryable]))
const PENDING_KINDS = new Set<string>(tables.pendingKinds)

/** The error kinds the core knows, in wire order, with their default retryability. */
export const ERROR_KINDS: readonly ToolErrorKind[] = Object.freeze(
  tables.errorKinds.map((k) => k.name as ToolErrorKind),
)

/** Whether `kind` names one of the core's error kinds. */
export function isToolErrorKind(kind: unknown): kind is ToolErrorKind {
  return typeof kind === 'string' && DEFAULT_RETRYABLE.has(kind)
}

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
    message,
    retryable: options.retryable ?? (DEFAULT_RETRYABLE.get(kind) as boolean),
    refusal: false,
  }
  if (options.code !== undefined) error.code = checkString(options.code, 'an error code')
  if (options.details !== undefined) error.details = options.details
  return Object.freeze(error)
}

/**
 * An intentional refusal: kind `permission_denied`, never retryable.
 * @example refusalError('not_allowed', 'Only owners can publish')
 */
export function refusalError(code: string, message: string, details?: JsonValue): ToolExecutionError {
  checkString(code, 'a refusal code')
  if (typeof message !== 'string') throw typeError(`a refusal message must be a string, got ${describe(message)}`)
  const error: { -readonly [K in keyof ToolExecutionError]: ToolExecutionError[K] } = {
    kind: 'permission_denied',
    message,
    code,
    retryable: false,
    refusal: true,
  }
  if (details !== undefined) error.details = details
  return Object.freeze(error)
}

function checkString(value: unknown, what: string): string {
  if (typeof value !== 'string') throw typeError(`${what} must be a string, got ${describe(value)}`)
  return value
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
  if (hasData) checkString(p.data, `parts[${index}].data`)
  if (hasUrl) checkString(p.url, `parts[${index}].url`)
  if (p.name !== undefined) checkString(p.name, `parts[${index}].name`)
  const out: { -readonly [K in keyof ContentPart]: ContentPart[K] } = { type: p.type as ContentPart['type'], mimeType: p.mimeType as string }
  if (hasData) out.data = p.data as string
  if (hasUrl) out.url = p.url as string
  if (p.name !== undefined) out.name = p.name as string
  return Object.freeze(out)
}

function checkOutput(output: unknown): ToolOutput {
  if (typeof output === 'string') return Object.freeze({ text: output })
  if (typeof output !== 'object' || output === null) throw typeError(`an output must be a string or { text, parts? }, got ${describe(output)}`)
  const o = output as Record<string, unknown>
  const text = checkString(o.text, 'output.text')
  const out: { -readonly [K in keyof ToolOutput]: ToolOutput[K] } = { text }
  if (o.parts !== undefined) {
    if (!Array.isArray(o.parts)) throw typeError(`output.parts must be an array, got ${describe(o.parts)}`)
    if (o.parts.length > 0) out.parts = Object.freeze(o.parts.map(checkPart))
  }
  if (o.structured !== undefined) out.structured = o.structured as JsonValue
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
}

function checkPending(init: unknown): PendingRequest {
  if (typeof init !== 'object' || init === null) throw typeError(`a pending request must be an object, got ${describe(init)}`)
  const r = init as Record<string, unknown>
  if (!PENDING_KINDS.has(r.kind as string)) throw typeError(`a pending request kind must be one of ${[...PENDING_KINDS].join(', ')}, got ${describe(r.kind)}`)
  const out: { -readonly [K in keyof PendingRequest]: PendingRequest[K] } = {
    id: r.id === undefined ? globalThis.crypto.randomUUID() : checkString(r.id, 'a pending request id'),
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
        if ('before' in change && change.before !== undefined) fc.before = change.before as JsonValue
        if ('after' in change && change.after !== undefined) fc.after = change.after as JsonValue
        return Object.freeze(fc)
      }),
    )
  }
  return Object.freeze(out)
}

function describePending(request: PendingRequest): string {
  // the URL stays out of model-visible text: it may carry state tokens
  const detail = request.summary ?? request.prompt
  return detail === undefined ? `Waiting for ${request.kind}` : `Waiting for ${request.kind}: ${detail}`
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
  /** @internal */
  private _text: string | undefined
  /** @internal */
  private _output: ToolOutput | undefined

  /** @internal Use the static constructors. */
  constructor(
    private readonly _disposition: Disposition,
    private readonly _data: JsonValue | undefined,
    private readonly _parts: readonly ContentPart[] | undefined,
    private readonly _error: ToolExecutionError | undefined,
    private readonly _detail: string | PendingRequest | undefined,
    private readonly _untrusted: boolean,
    private readonly _metadata: { readonly [key: string]: JsonValue } | undefined,
    text?: string,
  ) {
    this._text = text
    this._output = undefined
  }

  /** A successful result. A string is the text output. */
  static success(output: ToolOutput | string): ToolResult {
    const o = checkOutput(output)
    return new ToolResult('success', o.structured, o.parts, undefined, undefined, false, undefined, o.text)
  }

  /** @internal A success whose text is rendered from `data` only when someone reads it. */
  static fromData(data: JsonValue, parts?: readonly ContentPart[], untrusted = false, metadata?: { readonly [key: string]: JsonValue }): ToolResult {
    return typeof data === 'string'
      ? new ToolResult('success', undefined, parts, undefined, undefined, untrusted, metadata, data)
      : new ToolResult('success', data, parts, undefined, undefined, untrusted, metadata, undefined)
  }

  /** A failed result, or a refused one when the error is a refusal. The output text is the error's message. */
  static failed(error: ToolExecutionError): ToolResult {
    if (typeof error !== 'object' || error === null || !isToolErrorKind(error.kind) || typeof error.message !== 'string') {
      throw typeError('ToolResult.failed takes an error made by toolError() or refusalError()')
    }
    return new ToolResult(error.refusal === true ? 'refused' : 'error', undefined, undefined, error, undefined, false, undefined, error.message)
  }

  /** A result for a call skipped by runtime policy. */
  static skipped(reason: string): ToolResult {
    checkString(reason, 'a skip reason')
    return new ToolResult('skipped', undefined, undefined, undefined, reason, false, undefined, `Skipped: ${reason}`)
  }

  /** A result for a call suspended until `request` is answered; the id is generated when absent. */
  static pending(request: PendingRequestInit): ToolResult {
    const r = checkPending(request)
    return new ToolResult('pending', undefined, undefined, undefined, r, false, undefined, describePending(r))
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
    return ToolResult.fromWire(JSON.parse(canonical) as WireDocument)
  }

  /** @internal Builds from a document the core has validated. */
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
    return new ToolResult(this._disposition, o.structured, o.parts, this._error, this._detail, this._untrusted, this._metadata, o.text)
  }

  /** The same result marked (or unmarked) as untrusted content: data, not instructions. */
  withUntrusted(untrusted: boolean): ToolResult {
    if (typeof untrusted !== 'boolean') throw typeError('withUntrusted takes a boolean')
    return new ToolResult(this._disposition, this._data, this._parts, this._error, this._detail, untrusted, this._metadata, this._text)
  }

  /** The same result with app-only metadata, which never reaches the model. */
  withMetadata(metadata: { readonly [key: string]: JsonValue }): ToolResult {
    if (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata)) throw typeError('withMetadata takes an object')
    return new ToolResult(this._disposition, this._data, this._parts, this._error, this._detail, this._untrusted, metadata, this._text)
  }

  /** The model-visible text (rendered from structured data on first read). */
  text(): string {
    if (this._text === undefined) this._text = JSON.stringify(this._data) ?? 'null'
    return this._text
  }

  /** The structured value the text came from, if any. */
  data(): JsonValue | undefined {
    return this._data
  }

  /** The content parts, if any. */
  parts(): readonly ContentPart[] | undefined {
    return this._parts
  }

  /** Current model-visible output, including replacements made by `withOutput`. */
  output(): ToolOutput {
    if (this._output === undefined) {
      const o: { -readonly [K in keyof ToolOutput]: ToolOutput[K] } = { text: this.text() }
      if (this._parts !== undefined && this._parts.length > 0) o.parts = this._parts
      if (this._data !== undefined) o.structured = this._data
      this._output = Object.freeze(o)
    }
    return this._output
  }

  /** The execution error, if execution failed; refusals are under `refusal()`. */
  error(): ToolExecutionError | undefined {
    return this._disposition === 'error' ? this._error : undefined
  }

  /** The refusal, if the call was declined; mutually exclusive with `error()`. */
  refusal(): ToolExecutionError | undefined {
    return this._disposition === 'refused' ? this._error : undefined
  }

  /** The request a pending call waits on. */
  pendingRequest(): PendingRequest | undefined {
    return this._disposition === 'pending' ? (this._detail as PendingRequest) : undefined
  }

  /** Why runtime policy skipped the call. */
  skipReason(): string | undefined {
    return this._disposition === 'skipped' ? (this._detail as string) : undefined
  }

  /** Whether the content is untrusted (data, not instructions). */
  isUntrusted(): boolean {
    return this._untrusted
  }

  /** App-only metadata. */
  metadata(): { readonly [key: string]: JsonValue } | undefined {
    return this._metadata
  }

  /** The one disposition. */
  disposition(): Disposition {
    return this._disposition
  }

  isSuccess(): boolean {
    return this._disposition === 'success'
  }

  /** Whether execution failed. A refusal is not an error. */
  isError(): boolean {
    return this._disposition === 'error'
  }

  isSkipped(): boolean {
    return this._disposition === 'skipped'
  }

  isRefused(): boolean {
    return this._disposition === 'refused'
  }

  isPending(): boolean {
    return this._disposition === 'pending'
  }

  /** Whether this is an error of exactly `kind`; a refusal never matches. */
  isErrorKind(kind: ToolErrorKind): boolean {
    return this._disposition === 'error' && (this._error as ToolExecutionError).kind === kind
  }

  /** Success and skipped give `{ ok: true, output }`; errors and refusals `{ ok: false, error }`; a pending call an `other` error with code `pending`. */
  intoResult(): IntoResult {
    switch (this._disposition) {
      case 'success':
      case 'skipped':
        return { ok: true, output: this.output() }
      case 'pending':
        return { ok: false, error: toolError('other', describePending(this._detail as PendingRequest), { code: 'pending' }) }
      default:
        return { ok: false, error: this._error as ToolExecutionError }
    }
  }

  /** Stable telemetry name: success, error, denied, skipped or pending. */
  statusName(): StatusName {
    return STATUS_NAMES.get(this._disposition) as StatusName
  }

  /** The wire document, keys in canonical order (so `JSON.stringify(result)` gives the wire text). */
  toJSON(): WireDocument {
    const doc: Record<string, unknown> = { v: WIRE_VERSION, status: this._disposition, output: wireOutput(this.output()) }
    switch (this._disposition) {
      case 'error':
      case 'refused':
        doc[this._disposition === 'error' ? 'error' : 'refusal'] = wireError(this._error as ToolExecutionError)
        break
      case 'skipped':
        doc.skipReason = this._detail
        break
      case 'pending':
        doc.pending = wirePending(this._detail as PendingRequest)
        break
    }
    if (this._untrusted) doc.untrusted = true
    if (this._metadata !== undefined) doc.metadata = this._metadata
    return doc as unknown as WireDocument
  }

  /** The canonical wire text, written by the core (byte-identical to Rust's `to_json`). */
  toJSONText(): string {
    return canonicalizeResult(JSON.stringify(this.toJSON()))
  }
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
  return out as unknown as PendingRequest
}
