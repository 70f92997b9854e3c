/**
 * What the framework integrations (`toolwire/ai-sdk`, `toolwire/openai-agents`,
 * `toolwire/langchain`) share: the model-visible text of an application view, its media
 * parts made safe for untrusted results; the calls a framework's approval step holds are
 * in held.ts.
 *
 * Only toolwire's public API is used here; no framework is imported.
 */
import type { ToolManager } from '../runtime/manager.js'
import type { ToolManifestEntry } from '../runtime/tool.js'
import type { ContentPart } from '../core/types.js'
import { modelTextOf, type CallResult } from '../core/view.js'
import { wrapUntrusted } from '../render/model.js'
import { partBytes } from '../core/attach.js'

/** A tool toolwire lists, as an integration wraps it. */
export type ListedTool = ToolManifestEntry

/** The tools of `tm` an integration wraps: all of them, or those named in `only`. */
export function listedTools(tm: ToolManager, only: readonly string[] | undefined): readonly ListedTool[] {
  const all = tm.manifest()
  if (only === undefined) return all
  const wanted = new Set(only)
  for (const name of wanted) {
    if (!all.some((t) => t.name === name)) throw new Error(`toolwire: no tool named ${JSON.stringify(name).slice(0, 100)} is registered`)
  }
  return all.filter((t) => wanted.has(t.name))
}

/**
 * How an integration gives the model a result's media: `'parts'` (default) as the framework's
 * media blocks; `'text'` as a note in the text naming each part (`[Attachment not shown: image
 * (image/png, 70 bytes); …]`), for a chat model whose tool messages carry text only (OpenAI Chat
 * Completions: LangChain's `ChatOpenAI` rejects an image in a tool message, and the Agents SDK's
 * `OpenAIChatCompletionsModel` drops it without a word).
 */
export type MediaMode = 'parts' | 'text'

/** The wire named in the note of a part given as text (`MediaMode` `'text'`). */
export const TEXT_ONLY_WIRE = 'a tool message of this chat model'

/** Whether the view is a call runtime policy skipped (a refusal view with code `skipped`). */
export function isSkipped(view: CallResult<unknown>): boolean {
  return view.status === 'refused' && view.code === 'skipped' && view.disposition !== 'refused'
}

/** A short description of a part, for a note inside the text: `image "page.png" (image/png, 70 bytes)`. */
function describePart(part: ContentPart): string {
  const name = part.name === undefined ? '' : ` ${JSON.stringify(part.name)}`
  const bytes = partBytes(part)
  return `${part.type}${name} (${part.mimeType}, ${bytes === undefined ? `at ${part.url}` : `${bytes} bytes`})`
}

/**
 * The text a framework shows the model for `view`: toolwire's model text, then `notes`
 * (one line each), all inside the untrusted-content delimiter when the result is untrusted,
 * so nothing a tool chose follows the closing tag.
 */
export function modelText(view: CallResult<unknown>, notes: readonly string[] = []): string {
  const text = notes.length > 0 ? `${modelTextOf(view)}\n${notes.join('\n')}` : modelTextOf(view)
  return view.untrusted === true ? wrapUntrusted(text) : text
}

/**
 * The view's parts rendered for a framework by `render` (`undefined`: the framework cannot
 * carry that part), and the notes for the text: one for each part not carried, and, for an
 * untrusted result, one naming each named part (rendered without its tool-chosen name).
 */
export function renderParts<T>(
  view: CallResult<unknown>,
  framework: string,
  render: (part: ContentPart) => T | undefined,
): { readonly carried: T[]; readonly notes: string[] } {
  const carried: T[] = []
  const notes: string[] = []
  for (const part of view.parts ?? []) {
    const named = view.untrusted === true && part.name !== undefined
    const rendered = render(named ? unnamed(part) : part)
    if (rendered === undefined) notes.push(`[Attachment not shown: ${describePart(part)}; ${framework} cannot carry it here.]`)
    else {
      carried.push(rendered)
      if (named) notes.push(`[Attachment: ${describePart(part)}.]`)
    }
  }
  return { carried, notes }
}

function unnamed(part: ContentPart): ContentPart {
  const { name: _name, ...rest } = part
  return rest
}

/** A fresh call id for a framework call that has none. */
let seq = 0
export function freshCallId(prefix: string): string {
  return `${prefix}-${Date.now().toString(36)}-${++seq}`
}
