/**
 * The model view: what a model reads of one canonical result, as
 * `{ output, isError, parts?, metadata? }`, plus the shared pieces every wire adapter
 * uses (the untrusted-content delimiter, public-safe texts, part descriptions).
 */
import { asOwnResult, refusalError, toolError, ToolResult } from '../core/result.js'
import type { ContentPart, Disposition, JsonValue, PendingRequest } from '../core/types.js'
import { renderTables } from '../core/native.js'
import { dispositionLabel, dispositionOfView, isSkippedView } from '../core/status.js'
import { pendingModelText } from '../core/texts.js'
import { canonicalOf, modelTextOf, plainTextOf, type CallResult } from '../core/view.js'

const tables = renderTables()

/** App-only metadata of a model view. `pending` is the reserved key of a suspension. */
export interface ModelViewMetadata {
  readonly pending?: PendingRequest
  readonly [key: string]: JsonValue | PendingRequest | undefined
}

/**
 * What the model sees of a call: `output` always (a string), `isError`, media `parts` in
 * addition (absent when there are none), and app-only `metadata` that never reaches a
 * model or a wire adapter.
 */
export interface ModelView {
  readonly output: string
  readonly isError: boolean
  readonly parts?: readonly ContentPart[]
  readonly metadata?: ModelViewMetadata
}

/** Anything the adapters render: a canonical result or an application view from `tm.call`. */
export type ResultLike = ToolResult | CallResult<unknown>

/** The opening tag of the untrusted-content delimiter (from the core). */
export const UNTRUSTED_OPEN: string = tables.untrustedOpen
/** The closing tag of the untrusted-content delimiter (from the core). */
export const UNTRUSTED_CLOSE: string = tables.untrustedClose
/** The one-line note that precedes untrusted content (from the core). */
export const UNTRUSTED_NOTE: string = tables.untrustedNote
/** The `_meta` key set (to `true`) on an untrusted MCP result and on each of its content items (from the core). */
export const MCP_UNTRUSTED_META_KEY: string = tables.mcpUntrustedMetaKey

const TAG = /<(\s*\/?\s*)untrusted-content/gi

/**
 * Wraps `text` in the untrusted-content delimiter, preceded by the note. Any
 * `<untrusted-content` or `</untrusted-content` inside `text` (any case, any spacing)
 * has its `<` replaced by `&lt;`, so the content can neither close the delimiter early
 * nor open a fake one.
 */
export function wrapUntrusted(text: string): string {
  return `${UNTRUSTED_NOTE}\n${UNTRUSTED_OPEN}\n${text.replace(TAG, '&lt;$1untrusted-content')}\n${UNTRUSTED_CLOSE}`
}

/**
 * What every renderer reads of one result, from a canonical result or from an
 * application view alone (a live one, or a copy made by JSON or `structuredClone`).
 * @internal
 */
export interface ModelSource {
  readonly disposition: Disposition
  /** The model-visible text before untrusted wrapping. */
  readonly text: string
  readonly parts: readonly ContentPart[] | undefined
  readonly untrusted: boolean
  /** The structured value of a success (MCP `structuredContent`). */
  readonly structured: JsonValue | undefined
  readonly metadata: { readonly [key: string]: JsonValue } | undefined
  readonly pending: PendingRequest | undefined
}

/** The source of a canonical result, a live view (its canonical result) or a copied view (its own fields). @internal */
export function sourceOf(input: ResultLike): ModelSource {
  // a result of this copy or of another copy of toolwire, else the result behind a live view
  const result = asOwnResult(input) ?? canonicalOf(input as CallResult<unknown>)
  if (result !== undefined) {
    const pending = result.pendingRequest()
    return {
      disposition: result.disposition(),
      text: plainTextOf(result),
      parts: result.parts(),
      untrusted: result.isUntrusted(),
      structured: result.isSuccess() ? result.data() : undefined,
      metadata: result.metadata(),
      pending,
    }
  }
  return viewSource(input as CallResult<unknown>)
}

function viewSource(view: CallResult<unknown>): ModelSource {
  if (typeof view !== 'object' || view === null) throw new TypeError('toolwire: not a ToolResult or an application view')
  const disposition = dispositionOfView(view)
  if (disposition === undefined) throw new TypeError('toolwire: not a ToolResult or an application view')
  let structured: JsonValue | undefined
  if (view.status === 'ok') {
    // with modelText, data is the structured value even when it is a string
    structured = view.modelText !== undefined || typeof view.data !== 'string' ? ((view.data ?? null) as JsonValue) : undefined
  }
  let pending: PendingRequest | undefined
  if (view.status === 'pending') pending = view.request
  if (view.status === 'needs_confirmation') {
    // a confirmation that had neither summary nor prompt states so in its modelText
    const bare: PendingRequest = { id: view.confirmId, kind: 'confirmation' }
    const summary = view.modelText !== undefined && view.modelText === pendingModelText(bare) ? undefined : view.summary
    pending = {
      ...bare,
      ...(summary === undefined ? {} : { summary }),
      ...(view.changes === undefined ? {} : { changes: view.changes }),
    }
  }
  return {
    disposition,
    text: modelTextOf(view),
    parts: view.parts !== undefined && view.parts.length > 0 ? view.parts : undefined,
    untrusted: view.untrusted === true,
    structured,
    metadata: view.metadata,
    pending,
  }
}

/**
 * The canonical result behind `input`: itself for a `ToolResult` (one of another copy of
 * toolwire is read from its wire text), `canonicalOf(view)`
 * for an application view, or one rebuilt from the view's own fields when it has none
 * (for example a view that was structured-cloned across a worker boundary, or saved as
 * JSON). A rebuilt result renders as the original did; app-only error details stay with
 * the original.
 */
export function toCanonical(input: ResultLike): ToolResult {
  return asOwnResult(input) ?? canonicalOf(input as CallResult<unknown>) ?? fromView(input as CallResult<unknown>)
}

function fromView(view: CallResult<unknown>): ToolResult {
  const source = viewSource(view)
  const output = { text: source.text, ...(source.parts === undefined ? {} : { parts: source.parts }) }
  let result: ToolResult
  switch (view.status) {
    case 'ok':
      result = ToolResult.success(source.structured === undefined ? output : { ...output, structured: source.structured })
      break
    case 'invalid':
      result = ToolResult.failed(toolError('invalid_args', source.text, { details: { issues: view.issues as unknown as JsonValue } }))
      break
    case 'refused':
      result =
        isSkippedView(view)
          ? ToolResult.skipped(view.message)
          : ToolResult.failed(refusalError(view.code, view.message, view.rev === undefined ? undefined : { rev: view.rev }))
      break
    case 'needs_confirmation':
    case 'pending':
      result = ToolResult.pending(source.pending!)
      break
    case 'cancelled':
      result = ToolResult.failed(toolError('cancelled', source.text, { details: { by: view.by } }))
      break
    case 'error':
      result = ToolResult.failed(toolError(view.kind, view.message))
      break
  }
  // the output (model text and parts) as the view states it; a success was made with it
  if (view.status !== 'ok') result = result.withOutput(output)
  result = result.withUntrusted(source.untrusted)
  return source.metadata === undefined ? result : result.withMetadata(source.metadata)
}

/** What a pending call waits for, as a model reads it. */
export const pendingText: (request: PendingRequest) => string = pendingModelText

export { dispositionLabel }

/**
 * The text a wire shows: the model text, then `notes` (one line each, for the parts the
 * wire cannot carry), all inside the untrusted-content delimiter when the result is
 * untrusted, so nothing a tool produced, an attachment's name included, follows the
 * closing tag.
 * @internal
 */
export function wireText(source: ModelSource, notes: readonly string[] = []): string {
  const text = notes.length > 0 ? `${source.text}\n${notes.join('\n')}` : source.text
  return source.untrusted ? wrapUntrusted(text) : text
}

/**
 * The model view of a result.
 *
 * - `output` is always a string: the text, or the structured data serialized
 *   deterministically (`result.text()`); untrusted results are wrapped in the
 *   `<untrusted-content>` delimiter.
 * - `isError` is false only for success; error, refused, skipped and pending are true.
 * - `parts` appears only when there are parts; without them the shape is text-only.
 * - `metadata` holds the app-only metadata and, for a pending result, `pending`.
 *
 * A copied application view (JSON, `structuredClone`) gives the same model view as the
 * live one (a confirmation's `metadata.pending` holds the id, kind, summary and changes the
 * view shows).
 *
 * @example
 * toModel(ToolResult.success('done')) // { output: 'done', isError: false }
 */
export function toModel(input: ResultLike): ModelView {
  const source = sourceOf(input)
  const view: { -readonly [K in keyof ModelView]: ModelView[K] } = {
    output: wireText(source),
    isError: source.disposition !== 'success',
  }
  if (source.parts !== undefined && source.parts.length > 0) view.parts = source.parts
  if (source.metadata !== undefined || source.pending !== undefined) {
    const metadata: Record<string, JsonValue | PendingRequest> = { ...source.metadata }
    if (source.pending !== undefined) metadata.pending = source.pending
    view.metadata = Object.freeze(metadata)
  }
  return Object.freeze(view)
}

/** The text with the failure stated in it (`Error: …`, `Refused: …`, `Pending: …`), unless it already is. @internal */
export function statedText(source: ModelSource, text: string): string {
  const label = dispositionLabel(source.disposition)
  if (label === undefined || text.startsWith(`${label}:`)) return text
  return `${label}: ${text}`
}

/** The decoded byte length of a base64 part, computed from its length and padding; `undefined` for a URL part. */
export function partBytes(part: ContentPart): number | undefined {
  const data = part.data
  if (data === undefined) return undefined
  let end = data.length
  while (end > 0 && isSpace(data.charCodeAt(end - 1))) end--
  let pad = 0
  while (pad < 2 && end > 0 && data.charCodeAt(end - 1) === 61 /* = */) {
    end--
    pad++
  }
  return Math.floor((end * 3) / 4)
}

function isSpace(c: number): boolean {
  return c === 32 || c === 10 || c === 13 || c === 9
}

/** A short description of a part for a text note: `image "shot.png" (image/png, 82 bytes)`. */
export function describePart(part: ContentPart): string {
  const name = part.name === undefined ? '' : ` ${JSON.stringify(part.name)}`
  const bytes = partBytes(part)
  const where = bytes === undefined ? `at ${part.url}` : `${bytes} bytes`
  return `${part.type}${name} (${part.mimeType}, ${where})`
}

/** The text note an adapter appends for a part its wire cannot carry. */
export function degradedNote(part: ContentPart, wire: string): string {
  return `[Attachment not shown: ${describePart(part)}; ${wire} cannot carry it here.]`
}

/** The line an untrusted result's text gets, inside the delimiter, for a named part a wire carries without its name. */
export function carriedNote(part: ContentPart): string {
  return `[Attachment: ${describePart(part)}.]`
}

/**
 * Renders each part for a wire with `render`. A part the wire cannot carry (`render`
 * returns `undefined`) gets a note (`degradedNote`) for `wireText`. For an untrusted
 * result a part is rendered without its name (a tool-chosen name never appears in a
 * wire field after the delimiter); a named part gets a `carriedNote` instead, which
 * `wireText` puts inside the delimiter.
 * @internal
 */
export function renderParts<T>(
  source: ModelSource,
  wire: string,
  render: (part: ContentPart) => T | undefined,
): { readonly carried: T[]; readonly notes: string[] } {
  const carried: T[] = []
  const notes: string[] = []
  for (const part of source.parts ?? []) {
    const named = source.untrusted && part.name !== undefined
    const rendered = render(named ? unnamed(part) : part)
    if (rendered === undefined) {
      notes.push(degradedNote(part, wire))
    } else {
      carried.push(rendered)
      if (named) notes.push(carriedNote(part))
    }
  }
  return { carried, notes }
}

function unnamed(part: ContentPart): ContentPart {
  const { name: _name, ...rest } = part
  return rest
}

/** The image formats OpenAI (Chat and Responses) and Anthropic accept (the core's `adapters::WEB_IMAGES`). */
export const WEB_IMAGE_TYPES: ReadonlySet<string> = new Set(tables.webImageTypes)

/** The MIME types Gemini documents for multimodal function responses (the core's `adapters::GEMINI_FUNCTION_RESPONSE_MIME_TYPES`). */
export const GEMINI_FUNCTION_RESPONSE_MIME_TYPES: readonly string[] = Object.freeze([...tables.geminiFunctionResponseMimeTypes])

/** A `data:` URL of a base64 part. */
export function dataUrl(part: ContentPart & { readonly data: string }): string {
  return `data:${part.mimeType};base64,${part.data}`
}

/** The MIME type without parameters, lower-cased. */
export function baseMime(mimeType: string): string {
  return (mimeType.split(';')[0] ?? '').trim().toLowerCase()
}
