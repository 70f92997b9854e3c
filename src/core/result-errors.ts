/**
 * A `ToolResult`'s execution errors and refusals: {@link toolError} and {@link refusalError}
 * make them, {@link checkError} takes one made elsewhere (checked, copied and frozen).
 */
import { toFrozenJson, wellFormed } from './json.js'
import { defaultRetryable, ERROR_KINDS, isToolErrorKind } from './status.js'
import { checkString, describe, typeError } from './result-checks.js'
import type { JsonValue, ToolErrorKind, ToolExecutionError } from './types.js'

/** Options of an execution error. */
export interface ToolErrorOptions {
  readonly code?: string
  readonly retryable?: boolean
  readonly details?: JsonValue
}

/**
 * An execution error of `kind`, retryable by the kind's default unless told.
 * @example toolError('timeout', 'The search took too long')
 */
export function toolError(kind: ToolErrorKind, message: string, options: ToolErrorOptions = {}): ToolExecutionError {
  if (!isToolErrorKind(kind)) throw typeError(`unknown error kind ${JSON.stringify(kind)}; expected one of ${ERROR_KINDS.join(', ')}`)
  if (typeof message !== 'string') throw typeError(`an error message must be a string, got ${describe(message)}`)
  if (options.retryable !== undefined && typeof options.retryable !== 'boolean') throw typeError(`an error's retryable must be a boolean, got ${describe(options.retryable)}`)
  const error: { -readonly [K in keyof ToolExecutionError]: ToolExecutionError[K] } = {
    kind,
    message: wellFormed(message),
    retryable: options.retryable ?? defaultRetryable(kind),
    refusal: false,
  }
  if (options.code !== undefined) error.code = checkString(options.code, 'an error code')
  if (options.details !== undefined) error.details = toFrozenJson(options.details)
  return made(Object.freeze(error))
}

/**
 * An intentional refusal: kind `permission_denied`, never retryable.
 * @example refusalError('not_allowed', 'Only owners can publish')
 */
export function refusalError(code: string, message: string, details?: JsonValue): ToolExecutionError {
  return refusalOf(checkString(code, 'a refusal code'), message, details)
}

/** A refusal with or without a code (the wire allows both; `refusalError` always gives one). */
function refusalOf(code: string | undefined, message: string, details: JsonValue | undefined): ToolExecutionError {
  if (typeof message !== 'string') throw typeError(`a refusal message must be a string, got ${describe(message)}`)
  const error: { -readonly [K in keyof ToolExecutionError]: ToolExecutionError[K] } = {
    kind: 'permission_denied',
    message: wellFormed(message),
    retryable: false,
    refusal: true,
  }
  if (code !== undefined) error.code = code
  if (details !== undefined) error.details = toFrozenJson(details)
  return made(Object.freeze(error))
}

/** The errors `toolError` and `refusalError` made: already checked, frozen JSON. */
const madeErrors = new WeakSet<ToolExecutionError>()

function made(error: ToolExecutionError): ToolExecutionError {
  madeErrors.add(error)
  return error
}

/** `error` when this module made it, else a checked, deeply frozen copy made by `toolError` or `refusalError`. */
export function checkError(error: unknown): ToolExecutionError {
  if (typeof error === 'object' && error !== null && madeErrors.has(error as ToolExecutionError)) return error as ToolExecutionError
  const e = error as Partial<Record<keyof ToolExecutionError, unknown>> | null
  if (typeof e !== 'object' || e === null || !isToolErrorKind(e.kind) || typeof e.message !== 'string') {
    throw typeError('ToolResult.failed takes an error made by toolError() or refusalError()')
  }
  const details = e.details === undefined ? undefined : (e.details as JsonValue)
  if (e.refusal === true) {
    if (e.kind !== 'permission_denied' || e.retryable === true) throw typeError('a refusal has kind "permission_denied" and is not retryable')
    return refusalOf(e.code === undefined ? undefined : checkString(e.code, 'a refusal code'), e.message, details)
  }
  const options: { -readonly [K in keyof ToolErrorOptions]: ToolErrorOptions[K] } = {}
  if (e.code !== undefined) options.code = checkString(e.code, 'an error code')
  if (e.retryable !== undefined) {
    if (typeof e.retryable !== 'boolean') throw typeError(`an error's retryable must be a boolean, got ${describe(e.retryable)}`)
    options.retryable = e.retryable
  }
  if (details !== undefined) options.details = details
  return toolError(e.kind, e.message, options)
}
