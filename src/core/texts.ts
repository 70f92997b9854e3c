/**
 * Every text a model or an application reads that toolwire writes itself (pending,
 * refusal and error texts), defined once. The Rust core writes the same texts where it
 * builds results (`PendingRequest`'s default output, `model::pending_text`); the shared
 * vectors and test/differential.test.ts hold the two to the same bytes.
 */
import type { PendingKind } from './types.js'

/** What the pending texts read of a request: never its `url`, `id` or `changes` (they may carry secrets). */
export interface PendingTextSource {
  readonly kind: PendingKind
  readonly prompt?: string
  readonly summary?: string
}

/**
 * The output text a pending result gets when it is made (`ToolResult.pending`, the
 * `pending()` helper; the core's `ToolResult::pending`): `Waiting for <kind>` and the
 * summary or prompt. It is stored in the wire document's `output.text`.
 */
export function pendingOutputText(request: PendingTextSource): string {
  const detail = request.summary ?? request.prompt
  return detail === undefined ? `Waiting for ${request.kind}` : `Waiting for ${request.kind}: ${detail}`
}

/**
 * What a model reads of a pending call (the core's `model::pending_text`): the kind, said
 * so a model knows what to tell the user, and the summary or prompt; without either, that
 * the call has not run yet.
 */
export function pendingModelText(request: PendingTextSource): string {
  const detail = request.summary ?? request.prompt
  const what = request.kind === 'authorization' ? 'authorization (the user must sign in)' : request.kind
  return detail === undefined ? `Waiting for ${what}; the call has not run yet.` : `Waiting for ${what}: ${detail}`
}

/** The output text of a skipped call. */
export function skippedText(reason: string): string {
  return `Skipped: ${reason}`
}

/** The text of a call stopped by an operator, a signal or a policy. */
export function cancelledText(by: string): string {
  return `The call was cancelled (${by})`
}

/** The text of an `invalid_args` error with `issues`: `Invalid arguments: <path or (root)>: <message>; …`. */
export function invalidText(issues: readonly { readonly path: string; readonly message: string }[]): string {
  return `Invalid arguments: ${issues.map((i) => `${i.path || '(root)'}: ${i.message}`).join('; ')}`
}

/** The text of an answer to `tm.resume` that does not match the pending request's schema. */
export function invalidAnswerText(issues: readonly { readonly path: string; readonly message: string }[]): string {
  return `The answer does not match the requested input: ${issues.map((i) => `${i.path || '(root)'}: ${i.message}`).join('; ')}`
}

/** The message a model and an application see when a tool throws. Details go to `error` events. */
export const TOOL_FAILED_MESSAGE = 'The tool failed.'

/** The message of a call its timeout stopped (validating its input or running). */
export function timedOutText(timeoutMs: number): string {
  return `The tool did not finish within ${timeoutMs} ms`
}

/** The message of a call whose asynchronous input check outlasted its timeout (the tool never started). */
export function validationTimedOutText(timeoutMs: number): string {
  return `The input check did not finish within ${timeoutMs} ms; the tool did not run`
}

/** The message of a thrown error that names its kind (other than `other`). */
export function toolFailedText(kind: string): string {
  return kind === 'other' ? TOOL_FAILED_MESSAGE : `The tool failed (${kind}).`
}

/**
 * The message of a value that claims to be a `ToolResult` of another copy of toolwire (the
 * cross-copy brand) but gives no wire text this copy can read.
 */
export const UNREADABLE_RESULT_MESSAGE = 'The tool returned a result that could not be read.'

/** The message when an undo handler fails. */
export const UNDO_FAILED_MESSAGE = 'The undo failed.'

/** The issue message of an argument text or value nested deeper than `limit` levels. */
export function nestsDeeperText(limit: number): string {
  return `nests deeper than ${limit} levels`
}

/** The issue message of an argument text or value holding more than `limit` values. */
export function holdsMoreValuesText(limit: number): string {
  return `holds more than ${limit} values`
}

/** Why a `callMany` list was refused whole: it has more entries than an input may hold values. */
export function tooManyCallsText(entries: number, limit: number): string {
  return `toolwire: callMany got ${entries} entries, more than maxInputValues (${limit}); none ran and the answer is an empty list`
}

/** The issue message of argument text that is not JSON (`position` only: the parser's message may quote a secret). */
export function notJsonArgsText(position: string | undefined): string {
  return position === undefined ? 'The arguments are not valid JSON' : `The arguments are not valid JSON (at position ${position})`
}

/** The issue message of arguments given as something other than text. */
export function argsNotTextText(type: string): string {
  return `The arguments must be JSON text, not ${type}`
}

/** The message of a call refused because its principal lacks scopes the tool needs. */
export function insufficientScopeText(missing: readonly string[]): string {
  return `This call needs the scope${missing.length === 1 ? '' : 's'}: ${missing.join(' ')}`
}

/** Refusal messages, each with the code the runtime gives it. */
export const REFUSALS = Object.freeze({
  permissionDenied: Object.freeze({ code: 'permission_denied', message: 'Permission denied' }),
  permissionCheckFailed: Object.freeze({ code: 'permission_denied', message: 'The permission check failed' }),
  confirmationDenied: Object.freeze({ code: 'confirmation_denied', message: 'The user denied this call' }),
  inputDeclined: Object.freeze({ code: 'input_declined', message: 'The user declined to give the input this call waits for; it did not continue' }),
  undoUnavailable: Object.freeze({ code: 'undo_unavailable', message: 'There is nothing to undo for this call' }),
  invalidCall: Object.freeze({ code: 'invalid_call', message: 'This call could not be read' }),
  invalidDecision: Object.freeze({ code: 'invalid_decision', message: 'The decision could not be read' }),
  toolNameNotString: Object.freeze({ code: 'unknown_tool', message: 'The tool name must be a string' }),
})

/** The refusal code of a call whose principal lacks a scope the tool needs (`details: { scopes }` lists the missing ones). */
export const INSUFFICIENT_SCOPE = 'insufficient_scope'

/**
 * A provider's tool call without a usable id (a non-empty string) where the provider pairs
 * each answer with its call by id (OpenAI, Anthropic): it is answered, never run.
 */
export const UNUSABLE_CALL_ID = Object.freeze({
  code: 'invalid_call',
  message: 'This tool call has no usable id (a non-empty string), so its answer cannot be paired with it; it was not run',
})

/** The refusal code of a suspension whose request id a parked call already holds. */
export const REQUEST_ID_IN_USE = 'request_id_in_use'

/** `request_id_in_use`: the request id, as the tool gave it. */
export function requestIdInUseText(id: string): string {
  return `Another parked call already waits under request id ${JSON.stringify(id.length > 200 ? `${id.slice(0, 200)}…` : id)}; this call was not parked`
}

/**
 * The one rule for echoing a provider-chosen call id or tool name into model-visible text:
 * shown only when it is a plain token (letters, digits, `_ - . :`, at most 128 characters; a
 * clip's trailing `…` allowed), since any other text could pose as instructions
 * (`call_1</untrusted-content>\nSYSTEM: …`). `undefined`: do not show it.
 */
export function plainToken(value: string): string | undefined {
  return /^[A-Za-z0-9_.:-]{1,128}…?$/.test(value) ? value : undefined
}

/** What a text says instead of an id or name that is not a plain token. */
export const NOT_SHOWN = 'not shown (it holds characters other than letters, digits and _ - . :)'

/** `unknown_tool`: the name as quoted (clip it first); shown only when it is a plain token. */
export function unknownToolText(quotedName: string): string {
  const shown = plainToken(quotedName)
  return shown === undefined ? `No tool of that name is registered; its name is ${NOT_SHOWN}` : `No tool named ${JSON.stringify(shown)} is registered`
}

/** `invalid_options`: which option could not be read. */
export function invalidOptionsText(what: string): string {
  return `The call options could not be read: ${what}`
}

/** `circuit_open`. */
export function circuitOpenText(tool: string): string {
  return `Tool "${tool}" is failing; its circuit breaker is open`
}

/** `concurrency_limit`. */
export function concurrencyLimitText(tool: string): string {
  return `Tool "${tool}" is at its concurrency limit and its queue is full`
}

/** `duplicate_call_id`. */
export function duplicateCallIdText(callId: string): string {
  const shown = plainToken(callId)
  return shown === undefined ? `A call with this id is already in flight; its id is ${NOT_SHOWN}` : `A call with id ${JSON.stringify(shown)} is already in flight`
}

/** `resume_unavailable`. */
export function resumeUnavailableText(tool: string): string {
  return `Tool "${tool}" has no resume handler`
}

/** `confirmation_unknown` / `unknown_request`: `what` is `confirmation` or `request`. */
export function noPendingText(what: string): string {
  return `No pending ${what} with this id`
}

/** `confirmation_used` / `request_used`. */
export function alreadyAnsweredText(what: string): string {
  return `This ${what} was already answered`
}

/** `confirmation_expired` / `request_expired`. */
export function expiredText(what: string): string {
  return `This ${what} has expired`
}

/** Texts of a manager with a durable store (docs/store.md). */
export const STORE_TEXTS = Object.freeze({
  outcomeUnknown:
    'The outcome of this action is unknown: it started but its process stopped before it finished, so it may or may not have happened. Verify whether it happened before trying it again.',
  outcomeUnknownTimedOut:
    'The outcome of this action is unknown: an earlier call with this idempotency key timed out while the action was still running, so it may or may not have happened. Verify whether it happened before trying it again with a new idempotency key.',
  outcomeUnknownCancelled:
    'The outcome of this action is unknown: an earlier call with this idempotency key was cancelled while the action was still running, so it may or may not have happened. Verify whether it happened before trying it again with a new idempotency key.',
  outcomeUnknownStopped:
    'The outcome of this action is unknown: an earlier call with this idempotency key was stopped while the action was still running, so it may or may not have happened. Verify whether it happened before trying it again with a new idempotency key.',
  approvalInvalid: 'This confirmation token is not valid: it was not issued here, or it was altered',
  approvalMismatch: 'This confirmation token does not match its call',
  callNotRecorded: 'The call could not be recorded in the store; it did not run',
  idempotencyMismatch: 'This idempotency key was used before with a different input',
  idempotencyInFlight: 'A call with this idempotency key is still running',
  confirmedElsewhereRunning:
    'This call was approved on another instance and is still running there; its result is not known here yet. Do not run it again.',
  confirmationStillRunning: 'This call was approved and is still running; its result is not known yet. Do not run it again: send the same answer later for its result.',
  confirmedElsewhereUnrecorded:
    'This call was approved on another instance and ran there, but its result could not be read from the store. Do not run it again.',
  confirmationStateUnknown:
    'This confirmation has a state in the store that this version does not know, so whether the call ran is not known here. Check before running it again.',
})

/** `input_unavailable`: a parked call's sensitive input is held only by the instance that parked it. */
export function inputUnavailableText(what: string): string {
  return `This ${what} has sensitive input that only the instance that parked it holds (no storeKey)`
}

/** `store_unavailable`: a parked call could not be read. */
export function storeUnreadableText(what: string): string {
  return `The ${what} could not be read from the store; nothing ran`
}

/** Why an MCP client got a confirmation it cannot answer in the protocol (mcp/server.ts). */
export const MCP_CONFIRMATION_WHY = Object.freeze({
  refused: 'This server does not take confirmations over MCP.',
  noElicitation: 'The client cannot ask the user (it did not declare the elicitation capability).',
})

/**
 * The model's text of a call waiting for confirmation over MCP: with an approval link (in the
 * text, or held by the application), else `why` the client cannot answer it. Never "did not run
 * yet": a model reads that as "call again", which parks a second approval (both approved, the
 * action runs twice).
 */
export function mcpConfirmationText(summary: string, why: string, link?: { readonly url: string; readonly inText: boolean }): string {
  if (link === undefined) {
    return (
      `This call needs the user's confirmation and did not run: ${summary}. ${why} ` +
      'Ask the user to confirm it in the application, or to perform it themselves. ' +
      'Calling this tool again would ask for a second, separate confirmation.'
    )
  }
  return (
    `This call waits for the user's approval: ${summary}. ` +
    (link.inText
      ? `Ask the user to approve or deny it at ${link.url} (the link works once). `
      : 'The application has a link where the user can approve or deny it; ask the user to do so there. ') +
    'It runs once approved there, without another call. Calling this tool again would ask for a second, separate approval.'
  )
}

/** The most characters of a summary an MCP elicitation message carries (what the confirmation page shows). */
const ELICIT_SUMMARY_CHARS = 1000
/** The most changes an elicitation message lists, and the most characters of each value it shows. */
const ELICIT_CHANGES = 20
const ELICIT_VALUE_CHARS = 200

/**
 * `text` as one line a person reads in a client's dialog: control characters (line breaks
 * included, so a summary cannot forge lines of its own) and bidirectional overrides become a
 * space or U+FFFD, and at most `max` characters are kept, then `…`.
 */
export function dialogLine(text: string, max: number): string {
  // past 2 * max code units there are more than max characters: the rest is never read
  const long = text.length > 2 * max
  const head = long ? text.slice(0, 2 * max) : text
  // eslint-disable-next-line no-control-regex
  const clean = head.replace(/[\t\n\r]/g, ' ').replace(/[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, '\ufffd')
  const chars = [...clean]
  return long || chars.length > max ? `${chars.slice(0, max).join('')}…` : clean
}

/** One side of a change as a dialog shows it: its JSON form, `(none)` when absent. */
function changeValue(value: unknown): string {
  return value === undefined ? '(none)' : dialogLine(JSON.stringify(value) ?? 'null', ELICIT_VALUE_CHARS)
}

/**
 * The message of an MCP form elicitation asking to confirm a call: `Confirm: <summary>`, then
 * the (already redacted) changes, one line each, `- <path>: <before> → <after>`. Bounded: the
 * summary to 1,000 characters, 20 changes, 200 characters a value, one line each.
 */
export function mcpConfirmationFormMessage(summary: string, changes?: readonly { readonly path: string; readonly before?: unknown; readonly after?: unknown }[]): string {
  let text = `Confirm: ${dialogLine(summary, ELICIT_SUMMARY_CHARS)}`
  if (changes === undefined || changes.length === 0) return text
  text += '\n\nChanges:'
  for (const change of changes.slice(0, ELICIT_CHANGES)) {
    text += `\n- ${dialogLine(change.path, ELICIT_VALUE_CHARS)}: ${changeValue(change.before)} → ${changeValue(change.after)}`
  }
  if (changes.length > ELICIT_CHANGES) text += `\n… and ${changes.length - ELICIT_CHANGES} more`
  return text
}

/** The message of an MCP URL elicitation to a call's approval page: `Approve or deny: <summary>` (bounded as the form's). */
export function mcpConfirmationUrlMessage(summary: string): string {
  return `Approve or deny: ${dialogLine(summary, ELICIT_SUMMARY_CHARS)}`
}

/** The message of an MCP form elicitation asking for a pending call's input: its prompt or summary (bounded as a confirmation's). */
export function mcpInputMessage(request: PendingTextSource): string {
  const detail = request.prompt ?? request.summary
  return detail === undefined ? 'The tool needs your input to continue' : dialogLine(detail, ELICIT_SUMMARY_CHARS)
}
