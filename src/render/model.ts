/**
 * The model view: what a model reads of one canonical result, as
 * `{ output, isError, parts?, metadata? }`, plus the shared pieces every wire adapter
 * uses (the untrusted-content delimiter, public-safe texts, part descriptions).
 */
import { asOwnResult, refusalError, toolError, ToolResult } from '../core/result.js'
import type { ContentPart, Disposition, JsonValue, PendingRequest } from '../core/types.js'
import { renderTables } from '../core/native.js'
import { partBytes } from '../core/part-bytes.js'
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

/** `<` and the characters a model may read as one (all in the BMP). */
const OPEN = /[<\uff1c\ufe64\u2039\u3008\u2329\u27e8]/
const isOpen = (c: number): boolean => c === 0x3c || c === 0xff1c || c === 0xfe64 || c === 0x2039 || c === 0x3008 || c === 0x2329 || c === 0x27e8
/** `/` and the characters a model may read as one. */
const isSlash = (c: number): boolean => c === 0x2f || c === 0xff0f || c === 0x2044 || c === 0x2215 || c === 0x29f8
/** `-` and the characters a model may read as one. */
const isDash = (c: number): boolean => c === 0x2d || (c >= 0x2010 && c <= 0x2015) || c === 0x2043 || c === 0x2212 || c === 0xfe58 || c === 0xfe63 || c === 0xff0d

/** Look-alikes of the letters of `untrusted-content` (Cyrillic, Greek, long s), by code point. */
const LOOK_ALIKES: ReadonlyMap<number, number> = new Map([
  [0x17f, 0x73], [0x405, 0x73], [0x455, 0x73],
  [0x395, 0x65], [0x415, 0x65], [0x435, 0x65],
  [0x39f, 0x6f], [0x3bf, 0x6f], [0x41e, 0x6f], [0x43e, 0x6f],
  [0x3f2, 0x63], [0x3f9, 0x63], [0x421, 0x63], [0x441, 0x63],
  [0x3a4, 0x74], [0x422, 0x74],
  [0x39d, 0x6e], [0x3c5, 0x75], [0x501, 0x64],
])

/** The lower-case ASCII letter (its code) a model may read `c` as: ASCII in any case, fullwidth, look-alikes; else -1. */
function fold(c: number): number {
  if (c >= 0x41 && c <= 0x5a) return c + 0x20
  if (c >= 0x61 && c <= 0x7a) return c
  if (c >= 0xff21 && c <= 0xff3a) return c - 0xff21 + 0x61
  if (c >= 0xff41 && c <= 0xff5a) return c - 0xff41 + 0x61
  return LOOK_ALIKES.get(c) ?? -1
}

/** Format and other default-ignorable characters, variation selectors and combining marks, as [first, last] code points. */
const IGNORABLE: readonly (readonly [number, number])[] = [
  [0xad, 0xad], [0x300, 0x36f], [0x600, 0x605], [0x61c, 0x61c], [0x6dd, 0x6dd], [0x70f, 0x70f], [0x890, 0x891], [0x8e2, 0x8e2],
  [0x115f, 0x1160], [0x17b4, 0x17b5], [0x180b, 0x180f], [0x1ab0, 0x1aff], [0x1dc0, 0x1dff], [0x200b, 0x200f], [0x202a, 0x202e],
  [0x2060, 0x206f], [0x20d0, 0x20ff], [0x3164, 0x3164], [0xfe00, 0xfe0f], [0xfe20, 0xfe2f], [0xffa0, 0xffa0], [0xfff0, 0xfffb],
  [0x110bd, 0x110bd], [0x110cd, 0x110cd], [0x13430, 0x1343f], [0x1bca0, 0x1bca3], [0x1d173, 0x1d17a], [0xe0000, 0xe0fff],
]

/** What may sit unseen between the characters of a tag: JavaScript's `\s`, NEL (U+0085, Unicode white space `\s` leaves out) and the {@link IGNORABLE} ranges. */
function isGap(c: number): boolean {
  if (c < 0x80) return c === 0x20 || (c >= 0x09 && c <= 0x0d)
  if (c === 0x85) return true
  if (/\s/.test(String.fromCodePoint(c))) return true
  for (const [first, last] of IGNORABLE) if (c >= first && c <= last) return true
  return false
}

/** The index after the gap characters from `i`. */
function skipGaps(text: string, i: number): number {
  while (i < text.length) {
    const c = text.codePointAt(i)!
    if (!isGap(c)) break
    i += c > 0xffff ? 2 : 1
  }
  return i
}

/** Whether the text from `i` (after a `<`) reads as `/untrusted-content` or `untrusted-content`. */
function namesTag(text: string, i: number): boolean {
  let at = skipGaps(text, i)
  if (at < text.length && isSlash(text.charCodeAt(at))) at = skipGaps(text, at + 1)
  for (const word of ['untrusted', 'content']) {
    if (word === 'content' && at < text.length && isDash(text.charCodeAt(at))) at = skipGaps(text, at + 1)
    for (let k = 0; k < word.length; k++) {
      const c = text.codePointAt(at)
      if (c === undefined || fold(c) !== word.charCodeAt(k)) return false
      at = skipGaps(text, at + (c > 0xffff ? 2 : 1))
    }
  }
  return true
}

/**
 * `text` with every `<` (or a look-alike: `＜`, `﹤`, `‹`, `〈`, `⟨`) that starts something a
 * model could read as the delimiter's opening or closing tag replaced by `&lt;`: after it, an
 * optional slash (`/`, `／`, `⁄`, `∕`, `⧸`), then `untrusted`, an optional dash (`-` or a
 * look-alike) and `content`, in any case, in fullwidth letters or Cyrillic/Greek look-alikes,
 * with any whitespace, format or other default-ignorable characters, variation selectors or
 * combining marks between any two of them. The rest is kept as it is. The core's
 * `wrap_untrusted` does the same, character for character. Linear: a scan from one `<` stops
 * at the next one.
 */
function neutralizeTags(text: string): string {
  if (!OPEN.test(text)) return text
  let out = ''
  let last = 0
  for (let i = 0; i < text.length; i++) {
    if (isOpen(text.charCodeAt(i)) && namesTag(text, i + 1)) {
      out += `${text.slice(last, i)}&lt;`
      last = i + 1
    }
  }
  return last === 0 ? text : out + text.slice(last)
}

/**
 * Wraps `text` in the untrusted-content delimiter, preceded by the note; inside `text`,
 * anything a model could read as the delimiter's tags is neutralized (`neutralizeTags`), so
 * the content can neither close the delimiter early nor open a fake one.
 */
export function wrapUntrusted(text: string): string {
  return `${UNTRUSTED_NOTE}\n${UNTRUSTED_OPEN}\n${neutralizeTags(text)}\n${UNTRUSTED_CLOSE}`
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
