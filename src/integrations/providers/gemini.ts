/** Gemini runner: the `functionCall` parts of a model turn, run through `tm.callMany`. */
import { toGemini, type GeminiFunctionResponsePartEnvelope } from '../../render/gemini.js'
import { field, idOf, isList, listOf, runCalls, type ProviderCall, type RunToolCallsOptions, type ToolRunner } from './run.js'
import type { CallResult } from '../../core/view.js'

/** A Gemini `functionCall` (the SDK's `FunctionCall`). */
export interface GeminiFunctionCallLike {
  readonly id?: string
  readonly name?: string
  readonly args?: Record<string, unknown>
}

/** A Gemini part (the SDK's `Part`): only those with a `functionCall` are run. */
export interface GeminiPartLike {
  readonly functionCall?: GeminiFunctionCallLike
}

/**
 * What `runGemini` reads: a response (the SDK's `GenerateContentResponse`: its first
 * candidate's content), a `Content` (`{ role: 'model', parts }`), or a list of parts.
 */
export type GeminiCallsLike =
  | { readonly candidates?: readonly { readonly content?: { readonly parts?: readonly GeminiPartLike[] } }[] }
  | { readonly parts?: readonly GeminiPartLike[] }
  | readonly GeminiPartLike[]

/** The `user` content `runGemini` returns: one `functionResponse` part per call, in order. */
export interface GeminiFunctionResponseContent {
  readonly role: 'user'
  readonly parts: GeminiFunctionResponsePartEnvelope[]
  /** The application view of each call, in the same order (not enumerable: not sent). */
  readonly results: readonly CallResult[]
}

function partsOf(input: unknown): readonly unknown[] {
  if (isList(input)) return listOf(input)
  const candidates = field(input, 'candidates')
  if (candidates !== undefined) return listOf(field(field(listOf(candidates)[0], 'content'), 'parts'))
  return listOf(field(input, 'parts'))
}

/**
 * Runs the `functionCall` parts of a Gemini model turn with `tm.callMany` (each call's id
 * is the call's `id` when the model gave one) and returns the `user` content answering
 * them: one `functionResponse` part per call, in order, with the call's name and id, media
 * in `functionResponse.parts`. A call without `args` is a call with `{}`; nothing throws.
 * Gemini pairs answers by name and order, so a call whose `id` is missing or not a string
 * runs, and is answered without an id.
 *
 * @example
 * contents.push(response.candidates[0].content, await runGemini(tm, response))
 */
// generic so that a turn written inline (text parts, `role`) is checked by shape, not for excess properties
export async function runGemini<T extends GeminiCallsLike>(tm: ToolRunner, turn: T, options?: RunToolCallsOptions): Promise<GeminiFunctionResponseContent> {
  const calls: { call: ProviderCall; name: string; id: string | undefined }[] = []
  for (const part of partsOf(turn)) {
    const fc = field(part, 'functionCall')
    if (fc === undefined || fc === null) continue
    const id = idOf(field(fc, 'id'))
    const name = field(fc, 'name')
    const args = field(fc, 'args')
    calls.push({ id, name: typeof name === 'string' ? name : '', call: { id, name, args: { value: args === undefined || args === null ? {} : args } } })
  }
  const results = await runCalls(tm, calls.map((c) => c.call), options)
  const parts = results.map((result, i) => {
    const c = calls[i]!
    return toGemini(result, c.id === undefined ? { name: c.name } : { name: c.name, id: c.id })
  })
  const reply = { role: 'user' as const, parts }
  return Object.defineProperty(reply, 'results', { value: results, enumerable: false }) as GeminiFunctionResponseContent
}
