/**
 * Anthropic adapter: a `tool_result` content block with `is_error` set explicitly,
 * text plus `image` and `document` blocks.
 */
import { baseMime, renderParts, sourceOf, WEB_IMAGE_TYPES, wireText, type ResultLike } from './model.js'
import type { ContentPart } from '../core/types.js'

/** An Anthropic text block. */
export interface AnthropicTextBlock {
  readonly type: 'text'
  readonly text: string
}

/** Image media types Anthropic accepts as base64. */
export type AnthropicImageMediaType = 'image/jpeg' | 'image/png' | 'image/gif' | 'image/webp'

/** An Anthropic image block: base64 or URL source. */
export interface AnthropicImageBlock {
  readonly type: 'image'
  readonly source:
    | { readonly type: 'base64'; readonly media_type: AnthropicImageMediaType; readonly data: string }
    | { readonly type: 'url'; readonly url: string }
}

/** An Anthropic document block: a PDF (base64 or URL) or plain text. */
export interface AnthropicDocumentBlock {
  readonly type: 'document'
  readonly source:
    | { readonly type: 'base64'; readonly media_type: 'application/pdf'; readonly data: string }
    | { readonly type: 'url'; readonly url: string }
    | { readonly type: 'text'; readonly media_type: 'text/plain'; readonly data: string }
  readonly title?: string
}

/** A block inside a `tool_result`. */
export type AnthropicToolResultContent = AnthropicTextBlock | AnthropicImageBlock | AnthropicDocumentBlock

/** The `tool_result` block answering one `tool_use`. */
export interface AnthropicToolResultBlock {
  readonly type: 'tool_result'
  readonly tool_use_id: string
  readonly is_error: boolean
  readonly content: AnthropicToolResultContent[]
}

/** Options of `toAnthropic`. */
export interface AnthropicOptions {
  /** The `id` of the `tool_use` block being answered. */
  readonly toolUseId: string
}

function anthropicPart(part: ContentPart): AnthropicToolResultContent | undefined {
  const mime = baseMime(part.mimeType)
  const title = part.name
  if (part.type === 'image') {
    if (!WEB_IMAGE_TYPES.has(mime)) return undefined
    if (part.data !== undefined) return { type: 'image', source: { type: 'base64', media_type: mime as AnthropicImageMediaType, data: part.data } }
    return part.url === undefined ? undefined : { type: 'image', source: { type: 'url', url: part.url } }
  }
  if (part.type !== 'file') return undefined
  let block: AnthropicDocumentBlock | undefined
  if (mime === 'application/pdf') {
    if (part.data !== undefined) block = { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: part.data } }
    else if (part.url !== undefined) block = { type: 'document', source: { type: 'url', url: part.url } }
  } else if (mime === 'text/plain' && part.data !== undefined) {
    block = { type: 'document', source: { type: 'text', media_type: 'text/plain', data: Buffer.from(part.data, 'base64').toString('utf8') } }
  }
  if (block === undefined) return undefined
  return title === undefined ? block : { ...block, title }
}

/**
 * Renders a result as an Anthropic `tool_result` block. `is_error` is always set (true
 * for every non-success); `content` is a text block with the model view's output (left out
 * only when that text is empty) followed by `image` blocks (PNG/JPEG/GIF/WebP, base64 or
 * URL) and `document` blocks (PDF base64 or URL; `text/plain` data as a text source).
 *
 * Degradation: audio, other image formats, non-PDF URLs and other files become text notes
 * (inside the untrusted-content delimiter when the result is untrusted).
 */
export function toAnthropic(input: ResultLike, options: AnthropicOptions): AnthropicToolResultBlock {
  const source = sourceOf(input)
  const { carried: media, notes } = renderParts(source, 'an Anthropic tool_result', anthropicPart)
  const text = wireText(source, notes)
  const content: AnthropicToolResultContent[] = text.length > 0 ? [{ type: 'text', text }, ...media] : media
  return { type: 'tool_result', tool_use_id: options.toolUseId, is_error: source.disposition !== 'success', content }
}
