/**
 * Gemini adapter: a `functionResponse` part with `response: { output }` or
 * `response: { error }` and media inside `functionResponse.parts`.
 */
import { baseMime, GEMINI_FUNCTION_RESPONSE_MIME_TYPES, renderParts, sourceOf, wireText, type ResultLike } from './model.js'
import type { ContentPart } from '../core/types.js'

/** One media part inside a `functionResponse`: inline bytes or a file URI. */
export type GeminiFunctionResponsePart =
  | { readonly inlineData: { readonly mimeType: string; readonly data: string; readonly displayName?: string } }
  | { readonly fileData: { readonly mimeType: string; readonly fileUri: string; readonly displayName?: string } }

/** The body of a `functionResponse`. */
export interface GeminiFunctionResponse {
  readonly name: string
  readonly id?: string
  readonly response: { readonly output: string } | { readonly error: string }
  readonly parts?: GeminiFunctionResponsePart[]
}

/** The content part answering one function call. */
export interface GeminiFunctionResponsePartEnvelope {
  readonly functionResponse: GeminiFunctionResponse
}

/** Options of `toGemini`. */
export interface GeminiOptions {
  /** The function's name (as in the `functionCall`). */
  readonly name: string
  /** The `functionCall.id`, when the model gave one. */
  readonly id?: string
}

export { GEMINI_FUNCTION_RESPONSE_MIME_TYPES }

const SUPPORTED = new Set(GEMINI_FUNCTION_RESPONSE_MIME_TYPES)

function geminiPart(part: ContentPart): GeminiFunctionResponsePart | undefined {
  const mimeType = baseMime(part.mimeType)
  if (!SUPPORTED.has(mimeType)) return undefined
  const name = part.name === undefined ? {} : { displayName: part.name }
  if (part.data !== undefined) return { inlineData: { mimeType, data: part.data, ...name } }
  if (part.url !== undefined) return { fileData: { mimeType, fileUri: part.url, ...name } }
  return undefined
}

/**
 * Renders a result as a Gemini `functionResponse` part: `response: { output }` on
 * success, `response: { error }` for every non-success (the text is the model view's
 * output), media in `functionResponse.parts` as `inlineData` (base64) or `fileData` (URL).
 *
 * Degradation: media types outside PNG/JPEG/WebP/PDF/plain text (audio, GIF, other
 * files) become a text note in `output`/`error`.
 */
export function toGemini(input: ResultLike, options: GeminiOptions): GeminiFunctionResponsePartEnvelope {
  const source = sourceOf(input)
  const { carried: parts, notes } = renderParts(source, 'a Gemini functionResponse', geminiPart)
  const text = wireText(source, notes)
  const response = source.disposition !== 'success' ? { error: text } : { output: text }
  const body: GeminiFunctionResponse = {
    name: options.name,
    ...(options.id === undefined ? {} : { id: options.id }),
    response,
    ...(parts.length > 0 ? { parts } : {}),
  }
  return { functionResponse: body }
}
