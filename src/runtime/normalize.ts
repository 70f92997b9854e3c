/**
 * From what happened to the canonical result: argument parsing, and the mapping of a
 * body's return value (helper results, model results `{ output, isError }`, plain values) to one
 * `ToolResult`.
 */
import { MAX_VALUE_DEPTH, textShape } from '../core/json.js'
import { isHelperResult, isModelResult, pendingOf, type HelperResult, type ModelResult } from '../core/helpers.js'
import { holdsHidden, redactChanges, resultData, sensitiveKeys } from '../core/redact.js'
import { asOwnResult, refusalError, toolError, ToolResult } from '../core/result.js'
import type { ContentPart, JsonValue, PendingRequest } from '../core/types.js'
import { MAX_INPUT_VALUES, tooLargeIssues, type Issue } from '../core/validate.js'
import { invalidText, type CancelledBy } from '../core/view.js'
import { argsNotTextText, cancelledText, invalidAnswerText, nestsDeeperText, notJsonArgsText, TOOL_FAILED_MESSAGE } from '../core/texts.js'

export { TOOL_FAILED_MESSAGE }
export { isThenable, when } from '../core/thenable.js'

/** A string for any value, without letting a hostile `toString`, getter or Proxy throw. */
export function safeString(value: unknown): string {
  if (typeof value === 'string') return value
  if (typeof value === 'symbol') return Symbol.prototype.toString.call(value)
  try {
    return String(value)
  } catch {
    try {
      return Object.prototype.toString.call(value)
    } catch {
      return '[unprintable value]'
    }
  }
}

/**
 * The message (and stack, for an Error) of a thrown value, for `error` events. Never
 * throws: a getter that throws, a revoked Proxy or an object without a prototype gives
 * a placeholder instead.
 */
export function describeThrown(error: unknown): { readonly message: string; readonly stack?: string } {
  let isError = false
  try {
    isError = error instanceof Error
  } catch {
    isError = false
  }
  if (!isError) return { message: safeString(error) }
  let message: string
  try {
    const m: unknown = (error as Error).message
    message = typeof m === 'string' ? m : safeString(m)
  } catch {
    message = '[unreadable error message]'
  }
  try {
    const stack: unknown = (error as Error).stack
    if (typeof stack === 'string') return { message, stack }
  } catch {
    // no stack then
  }
  return { message }
}

/** Reads `obj[key]` of a value a tool produced; a throwing getter or a revoked Proxy gives `undefined`. */
export function safeGet(obj: unknown, key: string): unknown {
  if (typeof obj !== 'object' || obj === null) return undefined
  try {
    return (obj as Record<string, unknown>)[key]
  } catch {
    return undefined
  }
}

/**
 * Parses model-sent argument text; malformed text gives the `invalid` result instead, and so
 * does a text nesting deeper than `MAX_VALUE_DEPTH` or holding more than `maxValues` values
 * (the manager's `maxInputValues`), measured before it is parsed (json.ts `textShape`).
 */
export function parseArgs(argsText: unknown, maxValues: number = MAX_INPUT_VALUES): unknown {
  try {
    if (typeof argsText !== 'string') throw new TypeError(`arguments must be JSON text, got ${typeof argsText}`)
    const shape = textShape(argsText, MAX_VALUE_DEPTH, maxValues)
    if (shape === 'deep') {
      return ToolResult.failed(invalidError(Object.freeze([Object.freeze({ path: '', message: nestsDeeperText(MAX_VALUE_DEPTH) })])))
    }
    if (shape === 'large') return ToolResult.failed(invalidError(tooLargeIssues(maxValues)))
    return JSON.parse(argsText)
  } catch (err) {
    // the parser's own message quotes the text (which may hold a secret): only the position is kept
    const position = /at position (\d+)/.exec(describeThrown(err).message)?.[1]
    const message =
      typeof argsText !== 'string' ? argsNotTextText(argsText === null ? 'null' : typeof argsText) : notJsonArgsText(position)
    return ToolResult.failed(invalidError(Object.freeze([Object.freeze({ path: '', message })])))
  }
}

/** The `invalid_args` error of a list of issues; the issues stay in its app-only details. */
export function invalidError(issues: readonly Issue[]): ReturnType<typeof toolError> {
  return toolError('invalid_args', invalidText(issues), { details: { issues: issues as unknown as JsonValue } })
}

/** Code of the `invalid_args` error of an answer to `tm.resume` that does not match the pending request's schema. */
export const INVALID_ANSWER = 'invalid_answer'

/** The `invalid_args` error (code {@link INVALID_ANSWER}) of an answer with `issues`; they stay in its app-only details. */
export function invalidAnswerError(issues: readonly Issue[]): ReturnType<typeof toolError> {
  return toolError('invalid_args', invalidAnswerText(issues), { code: INVALID_ANSWER, details: { issues: issues as unknown as JsonValue } })
}

/** The canonical result of a call stopped by `by`. */
export function cancelledResult(by: CancelledBy): ToolResult {
  return ToolResult.failed(toolError('cancelled', cancelledText(by), { details: { by } }))
}

/**
 * Turns whatever a body returned into the canonical result. Returned data is redacted with
 * `sensitiveKey` (the tool entry's precomputed key test, `sensitiveKeys(sensitive)`), the
 * changes of a pending confirmation with `sensitive` besides the default names.
 * @throws when the value cannot be read or carried; the caller settles the call as an error.
 */
export function normalizeReturn(value: unknown, untrusted: boolean, sensitive: ReadonlySet<string> | undefined, sensitiveKey: (key: string) => boolean): ToolResult {
  if (isHelperResult(value)) return fromHelper(value, sensitiveKey).withUntrusted(untrusted)
  // a result of this copy, or of another copy of toolwire (the ES module and CommonJS builds)
  const result = asOwnResult(value)
  if (result !== undefined) {
    const own = redactCarried(result === value ? canonicalCopy(result) : result, sensitiveKey)
    return redactPending(untrusted && !own.isUntrusted() ? own.withUntrusted(true) : own, sensitive)
  }
  if (isModelResult(value)) return redactPending(fromModelResult(value, sensitiveKey).withUntrusted(untrusted), sensitive)
  return ToolResult.fromData(resultData(value, sensitiveKey), undefined, untrusted)
}

/**
 * A `ToolResult` the runtime can rely on: the result itself when it is a plain instance,
 * else (a subclass, or an instance with own properties that may override its methods) a
 * copy through the wire codec, so no method the tool wrote runs after this point.
 * @throws when the result cannot be written or read back.
 */
function canonicalCopy(value: ToolResult): ToolResult {
  if (Object.getPrototypeOf(value) === ToolResult.prototype && Reflect.ownKeys(value).length === 0) return value
  const text: unknown = value.toJSONText()
  if (typeof text !== 'string') throw new TypeError('toolwire: a ToolResult subclass gave no wire text')
  return ToolResult.fromJSON(text)
}

/**
 * A returned `ToolResult` with every sensitive member redacted in the JSON it carries: its
 * structured data (and its text, when that is the data's JSON), its metadata, and its error's
 * or refusal's details; the result itself when none holds a sensitive member.
 */
function redactCarried(result: ToolResult, sensitiveKey: (key: string) => boolean): ToolResult {
  const data = result.data()
  const metadata = result.metadata()
  const failure = result.error() ?? result.refusal()
  const hidesData = holdsHidden(data, sensitiveKey)
  const hidesMetadata = holdsHidden(metadata, sensitiveKey)
  const hidesDetails = holdsHidden(failure?.details, sensitiveKey)
  if (!hidesData && !hidesMetadata && !hidesDetails) return result
  const safeData = hidesData ? resultData(data, sensitiveKey) : data
  // a text rendered from the data, or given as its JSON, shows the redacted data; any other text is the tool's own
  const text = result.textFromData() ? undefined : hidesData && result.text() === JSON.stringify(data) ? JSON.stringify(safeData) : result.text()
  const safeFailure = hidesDetails ? Object.freeze({ ...failure!, details: resultData(failure!.details, sensitiveKey) }) : failure
  const safeMetadata = hidesMetadata ? (resultData(metadata, sensitiveKey) as { readonly [key: string]: JsonValue }) : metadata
  return new ToolResult(result.disposition(), safeData, result.parts(), safeFailure, result.pendingRequest() ?? result.skipReason(), result.isUntrusted(), safeMetadata, text)
}

/**
 * A pending result whose request lists changes, with those changes redacted (in the
 * request and in a `metadata.pending` copy of it); any other result as it is.
 */
export function redactPending(result: ToolResult, sensitive: ReadonlySet<string> | undefined): ToolResult {
  const request = result.pendingRequest()
  if (request === undefined || request.changes === undefined) return result
  const safe: PendingRequest = Object.freeze({ ...request, changes: redactChanges(request.changes, sensitive) })
  let out = ToolResult.pending(safe).withOutput(result.output()).withUntrusted(result.isUntrusted())
  const metadata = result.metadata()
  if (metadata !== undefined) {
    const pending = metadata.pending
    out = out.withMetadata(typeof pending === 'object' && pending !== null && !Array.isArray(pending) ? { ...metadata, pending: safe as unknown as JsonValue } : metadata)
  }
  return out
}

/** The canonical result of a helper result. */
export function fromHelper(h: HelperResult, sensitiveKey: (key: string) => boolean = sensitiveKeys(undefined)): ToolResult {
  switch (h.status) {
    case 'ok':
      return ToolResult.fromData(resultData(h.data, sensitiveKey))
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

function fromModelResult(r: ModelResult, sensitiveKey: (key: string) => boolean): ToolResult {
  const request = pendingOf(r)
  const metadata = r.metadata === undefined ? undefined : (resultData(r.metadata, sensitiveKey) as { readonly [key: string]: JsonValue })
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
