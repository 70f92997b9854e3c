/**
 * MCP adapter: a `CallToolResult` with text, image, audio, embedded-resource and
 * resource-link content, `structuredContent` for structured output and `isError`.
 */
import { MCP_UNTRUSTED_META_KEY, sourceOf, wireText, type ResultLike } from './model.js'
import type { ContentPart, JsonValue } from '../core/types.js'

export { MCP_UNTRUSTED_META_KEY }

/** `_meta` of an MCP item. */
export type McpMeta = { readonly [key: string]: JsonValue }

/** Fields every MCP content item may carry. */
interface McpItemBase {
  readonly _meta?: McpMeta
}

/** MCP text content. */
export interface McpTextContent extends McpItemBase {
  readonly type: 'text'
  readonly text: string
}

/** MCP image content (base64). */
export interface McpImageContent extends McpItemBase {
  readonly type: 'image'
  readonly data: string
  readonly mimeType: string
}

/** MCP audio content (base64). */
export interface McpAudioContent extends McpItemBase {
  readonly type: 'audio'
  readonly data: string
  readonly mimeType: string
}

/** MCP embedded resource with a base64 blob. */
export interface McpEmbeddedResource extends McpItemBase {
  readonly type: 'resource'
  readonly resource: { readonly uri: string; readonly mimeType: string; readonly blob: string }
}

/** MCP link to a resource by URI. */
export interface McpResourceLink extends McpItemBase {
  readonly type: 'resource_link'
  readonly uri: string
  readonly name: string
  readonly mimeType: string
}

/** One MCP content item. */
export type McpContent = McpTextContent | McpImageContent | McpAudioContent | McpEmbeddedResource | McpResourceLink

/** The MCP `CallToolResult`. */
export interface McpCallToolResult {
  readonly content: McpContent[]
  readonly structuredContent?: { readonly [key: string]: JsonValue }
  readonly isError: boolean
  readonly _meta?: McpMeta
}

/** `name` with lone surrogates replaced by U+FFFD (`encodeURIComponent` throws on them). */
function wellFormed(name: string): string {
  return name.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD')
}

function mcpPart(part: ContentPart, index: number): McpContent {
  const name = part.name ?? `part-${index}`
  if (part.data !== undefined) {
    if (part.type === 'image') return { type: 'image', data: part.data, mimeType: part.mimeType }
    if (part.type === 'audio') return { type: 'audio', data: part.data, mimeType: part.mimeType }
    return {
      type: 'resource',
      resource: { uri: `toolwire://parts/${index}/${encodeURIComponent(wellFormed(name))}`, mimeType: part.mimeType, blob: part.data },
    }
  }
  return { type: 'resource_link', uri: part.url as string, name, mimeType: part.mimeType }
}

/**
 * Renders a result as an MCP `CallToolResult`.
 *
 * - `content`: a text item with the model view's output, then one item per part:
 *   base64 images as `image`, base64 audio as `audio`, other base64 files as an embedded
 *   `resource` (blob, `uri` `toolwire://parts/<index>/<name>`), and any URL part as a
 *   `resource_link`.
 * - `structuredContent`: on success with structured output; a JSON object as is, any
 *   other JSON value wrapped as `{ result: value }` (MCP requires an object).
 * - `isError`: true for every non-success.
 * - Untrusted results: the text is delimited (as in every adapter) and the result and
 *   every content item carry `_meta: { "toolwire/untrusted": true }`.
 */
export function toMcp(input: ResultLike): McpCallToolResult {
  const source = sourceOf(input)
  const meta: McpMeta | undefined = source.untrusted ? { [MCP_UNTRUSTED_META_KEY]: true } : undefined
  const items: McpContent[] = [{ type: 'text', text: wireText(source) }, ...(source.parts ?? []).map(mcpPart)]
  const content = meta === undefined ? items : items.map((item) => ({ ...item, _meta: meta }))
  const data = source.structured
  const structured =
    data !== undefined
      ? typeof data === 'object' && data !== null && !Array.isArray(data)
        ? (data as { readonly [key: string]: JsonValue })
        : { result: data }
      : undefined
  return {
    content,
    ...(structured === undefined ? {} : { structuredContent: structured }),
    isError: source.disposition !== 'success',
    ...(meta === undefined ? {} : { _meta: meta }),
  }
}
