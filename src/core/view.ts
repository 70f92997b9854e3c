/**
 * The application view: the frozen, structured-cloneable union `tm.call` resolves
 * to, derived from one canonical `ToolResult`.
 *
 * A view's own data carries everything the model view and the wire adapters read, so a
 * copy (`JSON.parse(JSON.stringify(view))`, `structuredClone(view)`, a saved chat history)
 * renders byte for byte as the live view does: besides its status fields a view has
 * `untrusted`, `parts`, `metadata`, `modelText` and `disposition`, each only when it says something
 * (`ViewModelFields`; docs/wire-format.md, "Application views").
 */
import { asOwnResult, ToolResult } from './result.js'
import { isSkippedView, outcomeNamesOf } from './status.js'
import { cancelledText, invalidText, pendingModelText, skippedText } from './texts.js'
import type { ContentPart, FieldChange, JsonValue, PendingRequest, ToolErrorKind } from './types.js'
import type { Issue } from './validate.js'

/** Who stopped a call. */
export type CancelledBy = 'operator' | 'signal' | 'policy'

/**
 * What a view carries for the model besides its status fields. Each field appears only
 * when it says something, so a plain trusted text or JSON result has none of them.
 */
export interface ViewModelFields {
  /** `true` when the result is untrusted content (data, not instructions); absent otherwise. */
  readonly untrusted?: true
  /** The result's media parts, when it has any. */
  readonly parts?: readonly ContentPart[]
  /**
   * The text the model reads (before untrusted wrapping), only when the status fields
   * do not give it: for example a success whose text is not its data's JSON, or an error
   * whose output was replaced. Absent, the text is `modelTextOf(view)`.
   */
  readonly modelText?: string
  /** The result's app-only metadata, when it has any; it never reaches the model or a wire. */
  readonly metadata?: { readonly [key: string]: JsonValue }
  /**
   * `'refused'` only on a refusal whose code is `'skipped'`: without it, `status: 'refused'`
   * with `code: 'skipped'` is the view of a call runtime policy skipped.
   */
  readonly disposition?: 'refused'
  /**
   * `true` on the recorded result of an earlier call that an `idempotencyKey` answered
   * without running the tool again (docs/store.md); absent otherwise.
   */
  readonly replayed?: true
}

/** What the application sees of a call. `tm.call` never throws: every outcome is one of these. */
export type CallResult<T = JsonValue> = (
  | { readonly status: 'ok'; readonly data: T; readonly callId?: string }
  | { readonly status: 'invalid'; readonly issues: readonly Issue[]; readonly callId?: string }
  | { readonly status: 'refused'; readonly code: string; readonly message: string; readonly rev?: number; readonly callId?: string }
  | {
      readonly status: 'needs_confirmation'
      readonly confirmId: string
      readonly summary: string
      readonly changes?: readonly FieldChange[]
      readonly callId?: string
    }
  | { readonly status: 'pending'; readonly request: PendingRequest; readonly callId?: string }
  | { readonly status: 'cancelled'; readonly by: CancelledBy; readonly callId?: string }
  | { readonly status: 'error'; readonly kind: ToolErrorKind; readonly message: string; readonly callId?: string }
) &
  ViewModelFields

/** The status names of the application view (`ViewStatus` in status.ts, which maps them). */
export type CallStatus = CallResult['status']

/**
 * What a pending call waits for, without secrets: the kind and the summary or prompt.
 * The request's `url`, `id` and `changes` are for the application and never reach the model.
 */
export const pendingText: (request: PendingRequest) => string = pendingModelText

export { invalidText, isSkippedView }

/**
 * The text the model reads of `view` (before untrusted wrapping): `view.modelText` when
 * present, else the text its status fields give:
 *
 * | status | text |
 * |---|---|
 * | `ok` | `data` when a string, else `JSON.stringify(data)` |
 * | `invalid` | `Invalid arguments: <path or (root)>: <message>; …` |
 * | `refused` | `Skipped: <message>` for code `skipped` (a skipped call) unless `disposition: 'refused'`; else `message` |
 * | `cancelled` | `The call was cancelled (<by>)` |
 * | `error` | `message` |
 * | `needs_confirmation` | `pendingText({ kind: 'confirmation', summary })` |
 * | `pending` | `pendingText(request)` |
 */
export function modelTextOf(view: CallResult<unknown>): string {
  return view.modelText ?? derivedText(view)
}

function derivedText(view: CallResult<unknown>): string {
  switch (view.status) {
    case 'ok':
      return typeof view.data === 'string' ? view.data : (JSON.stringify(view.data) ?? 'null')
    case 'invalid':
      return invalidText(view.issues)
    case 'refused':
      return isSkippedView(view) ? skippedText(view.message) : view.message
    case 'cancelled':
      return cancelledText(view.by)
    case 'error':
      return view.message
    case 'needs_confirmation':
      return pendingModelText({ kind: 'confirmation', summary: view.summary })
    case 'pending':
      return pendingModelText(view.request)
  }
}

/**
 * The object an application view is made of. Its only hidden state is a private
 * field holding the canonical result: JSON, `structuredClone`, `Object.keys` and
 * deep equality see just the view's own data properties (a clone is a plain object).
 */
class View {
  #canonical: ToolResult

  constructor(canonical: ToolResult) {
    this.#canonical = canonical
  }

  static canonicalOf(view: unknown): ToolResult | undefined {
    if (view instanceof View) return view.#canonical
    if (!(view instanceof OkView)) return undefined
    // an `ok` view made on the fast path builds its canonical result on first use
    let canonical = lazyCanonicals.get(view)
    if (canonical === undefined) {
      canonical = ToolResult.fromData(view.data, undefined, view.untrusted === true)
      lazyCanonicals.set(view, canonical)
    }
    return canonical
  }
}

/**
 * The `ok` view of a call that returned a plain value: its data properties only, set in
 * its constructor so that they live in the object itself (a retained view is small), and
 * no hidden state: its canonical result is built on first use and kept in `lazyCanonicals`.
 */
class OkView {
  declare readonly status: 'ok'
  declare readonly data: JsonValue
  declare readonly untrusted?: true
  declare readonly callId: string

  constructor(data: JsonValue, callId: string, untrusted: boolean) {
    this.status = 'ok'
    this.data = data
    if (untrusted) this.untrusted = true
    this.callId = callId
  }
}

/** The canonical results of fast-path `ok` views that were asked for one. */
const lazyCanonicals = new WeakMap<OkView, ToolResult>()

/**
 * The `ok` view of data that already has JSON form (deeply frozen), without building
 * the canonical result until someone asks for it (`canonicalOf`).
 */
export function okView(data: JsonValue, callId: string, untrusted: boolean): CallResult {
  return Object.freeze(new OkView(data, callId, untrusted)) as CallResult
}

/** The canonical result behind an application view made by this process, if any. */
export function canonicalOf(view: CallResult<unknown>): ToolResult | undefined {
  return View.canonicalOf(view)
}

function details(result: ToolResult): Record<string, unknown> | undefined {
  const d = (result.error() ?? result.refusal())?.details
  return typeof d === 'object' && d !== null && !Array.isArray(d) ? (d as Record<string, unknown>) : undefined
}

function isIssueList(value: unknown): value is readonly Issue[] {
  return (
    Array.isArray(value) &&
    value.every((i: unknown) => typeof i === 'object' && i !== null && typeof (i as Issue).path === 'string' && typeof (i as Issue).message === 'string')
  )
}

/** The model-visible text of a canonical result, before untrusted wrapping. */
export function plainTextOf(result: ToolResult): string {
  const request = result.pendingRequest()
  return request === undefined ? result.text() : pendingModelText(request)
}

/** Builds the frozen application view of `result` for call `callId`. */
export function viewOf(given: ToolResult, callId: string | undefined): CallResult {
  // a result of another copy of toolwire (the ES module and CommonJS builds) is read through its wire text
  const result = asOwnResult(given)
  if (result === undefined) throw new TypeError('toolwire: viewOf takes a ToolResult')
  const view = new View(result) as unknown as Record<string, unknown>
  // the view status comes from the one status table (status.ts)
  switch (outcomeNamesOf(result).view) {
    case 'ok': {
      const data = result.data()
      view.status = 'ok'
      view.data = data === undefined ? result.text() : data
      break
    }
    case 'invalid': {
      // details are deeply frozen JSON (toolError and the wire decoder make them so)
      const issues = details(result)?.issues
      view.status = 'invalid'
      view.issues = isIssueList(issues) ? issues : Object.freeze([Object.freeze({ path: '', message: result.error()!.message })])
      break
    }
    case 'cancelled': {
      const by = details(result)?.by
      Object.assign(view, { status: 'cancelled', by: by === 'operator' || by === 'signal' ? by : 'policy' })
      break
    }
    case 'error': {
      const error = result.error()!
      Object.assign(view, { status: 'error', kind: error.kind, message: error.message })
      break
    }
    case 'refused': {
      if (result.isSkipped()) {
        Object.assign(view, { status: 'refused', code: 'skipped', message: result.skipReason()! })
        break
      }
      const refusal = result.refusal()!
      Object.assign(view, { status: 'refused', code: refusal.code ?? 'refused', message: refusal.message })
      if (view.code === 'skipped') view.disposition = 'refused'
      const rev = details(result)?.rev
      if (typeof rev === 'number' && Number.isFinite(rev)) view.rev = rev
      break
    }
    case 'needs_confirmation': {
      const request = result.pendingRequest()!
      Object.assign(view, { status: 'needs_confirmation', confirmId: request.id, summary: request.summary ?? request.prompt ?? result.text() })
      if (request.changes !== undefined) view.changes = request.changes
      break
    }
    case 'pending':
      Object.assign(view, { status: 'pending', request: result.pendingRequest()! })
      break
  }
  if (result.isUntrusted()) view.untrusted = true
  const parts = result.parts()
  if (parts !== undefined && parts.length > 0) view.parts = parts
  const metadata = result.metadata()
  if (metadata !== undefined) view.metadata = metadata
  const own = ownModelText(result, view as unknown as CallResult)
  if (own !== undefined) view.modelText = own
  if (callId !== undefined) view.callId = callId
  return Object.freeze(view) as unknown as CallResult
}

/** The result's model text when the view's status fields do not give it, else `undefined`. */
function ownModelText(result: ToolResult, view: CallResult): string | undefined {
  if (view.status === 'ok') {
    // text rendered from the data, or text-only: the data gives it
    if (result.textFromData() || result.data() === undefined) return undefined
    const text = result.text()
    // a string value is read as the text itself, so a structured string always states its text
    return typeof view.data !== 'string' && text === JSON.stringify(view.data) ? undefined : text
  }
  const text = plainTextOf(result)
  return text === derivedText(view) ? undefined : text
}
