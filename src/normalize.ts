/**
 * From what happened to the canonical result: argument parsing, and the mapping of a
 * body's return value (helper results, toolnexus-style results, plain values) to one
 * `ToolResult`.
 */
import { toFrozenJson } from './json.js'
import { isHelperResult, isModelResult, pendingOf, type HelperResult, type ModelResult } from './helpers.js'
import { refusalError, toolError, ToolResult } from './result.js'
import type { ContentPart, JsonValue, PendingRequest } from './types.js'
import type { Issue } from './validate.js'
import type { CancelledBy } from './view.js'

/** The message a model and an application see when a tool throws. Details go to `error` events. */
export const TOOL_FAILED_MESSAGE = 'The tool failed.'

/** Whether `v` is a promise or another thenable. */
export const isThenable = (v: unknown): v is PromiseLike<unknown> =>
  typeof v === 'object' && v !== null && typeof (v as { then?: unknown }).then === 'function'

/** Parses model-sent argument text; malformed text gives the `invalid` result instead. */
export function parseArgs(argsText: unknown): unknown {
  try {
    if (typeof argsText !== 'string') throw new TypeError(`arguments must be JSON text, got ${typeof argsText}`)
    return JSON.parse(argsText)
  } catch (err) {
    const message = `The arguments are not valid JSON: ${(err as Error).message}`
    return ToolResult.failed(invalidError(Object.freeze([Object.freeze({ path: '', message })])))
  }
}

/** The `invalid_args` error of a list of issues; the issues stay in its app-only details. */
export function invalidError(issues: readonly Issue[]): ReturnType<typeof toolError> {
  const summary = issues.map((i) => `${i.path || '(root)'}: ${i.message}`).join('; ')
  return toolError('invalid_args', `Invalid arguments: ${summary}`, { details: { issues: issues as unknown as JsonValue } })
}

/** The canonical result of a call stopped by `by`. */
export function cancelledResult(by: CancelledBy): ToolResult {
  return ToolResult.failed(toolError('cancelled', `The call was cancelled (${by})`, { details: { by } }))
}

/** Turns whatever a body returned into the canonical result. */
export function normalizeReturn(value: unknown, untrusted: boolean): ToolResult {
  if (isHelperResult(value)) return fromHelper(value).withUntrusted(untrusted)
  if (value instanceof ToolResult) return untrusted && !value.isUntrusted() ? value.withUntrusted(true) : value
  if (isModelResult(value)) return fromModelResult(value).withUntrusted(untrusted)
  return ToolResult.fromData(toFrozenJson(value), undefined, untrusted)
}

/** The canonical result of a helper result. */
export function fromHelper(h: HelperResult): ToolResult {
  switch (h.status) {
    case 'ok':
      return ToolResult.fromData(toFrozenJson(h.data))
    case 'invalid':
      return ToolResult.failed(invalidError(h.issues))
    case 'refused':
      return ToolResult.failed(refusalError(h.code, h.message, h.rev === undefined ? undefined : { rev: h.rev }))
    case 'cancelled':
      return cancelledResult(h.by)
    case 'error':
      return ToolResult.failed(toolError('other', h.message))
  }
}

function fromModelResult(r: ModelResult): ToolResult {
  const request = pendingOf(r)
  const metadata = r.metadata === undefined ? undefined : (toFrozenJson(r.metadata) as { readonly [key: string]: JsonValue })
  let result: ToolResult
  if (request !== undefined) {
    result = ToolResult.pending(request as PendingRequest)
  } else if (r.isError) {
    result = ToolResult.failed(toolError('other', r.output))
    if (r.parts !== undefined && r.parts.length > 0) result = result.withOutput({ text: r.output, parts: r.parts as ContentPart[] })
  } else {
    result = ToolResult.success(r.parts === undefined ? r.output : { text: r.output, parts: r.parts })
  }
  return metadata === undefined ? result : result.withMetadata(metadata)
}
