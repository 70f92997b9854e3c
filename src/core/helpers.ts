/**
 * Helpers tools return from `run`: `ok`, `invalid`, `refuse`, `cancelled`,
 * `errorResult`; and the suspensions `pending`, `authRequired`,
 * `pendingOf`.
 */
import type { JsonValue, PendingRequest } from './types.js'
import type { Issue } from './validate.js'
import type { CancelledBy } from './view.js'
import { checkPending, type PendingRequestInit } from './result.js'
import type { HelperStatus } from './status.js'
import { pendingOutputText } from './texts.js'

/** A helper result a tool returns; the manager turns it into the canonical result (status.ts maps its `status`). */
export type HelperResult<T = unknown> = (
  | { readonly status: 'ok'; readonly data: T }
  | { readonly status: 'invalid'; readonly issues: readonly Issue[] }
  | { readonly status: 'refused'; readonly code: string; readonly message: string; readonly rev?: number }
  | { readonly status: 'cancelled'; readonly by: CancelledBy }
  | { readonly status: 'error'; readonly message: string }
) & { readonly status: HelperStatus }

/** Shared by every copy of this module in the process (ESM and CJS builds, bundles). */
const REGISTRY = Symbol.for('toolwire.helperResults')
const helperResults: WeakSet<object> = ((globalThis as Record<symbol, WeakSet<object> | undefined>)[REGISTRY] ??= new WeakSet<object>())

/** @internal Whether `value` was made by one of the helpers. */
export function isHelperResult(value: unknown): value is HelperResult {
  return typeof value === 'object' && value !== null && helperResults.has(value)
}

function brand<T extends object>(value: T): T {
  helperResults.add(value)
  return Object.freeze(value)
}

/** Done; `data` is the tool's output (serialized with JSON semantics). */
export function ok<T>(data: T): HelperResult<T> {
  return brand({ status: 'ok' as const, data })
}

/** The input (or what the tool found in it) is not valid: fix `issues[].path` and retry. */
export function invalid(issues: readonly Issue[] | string): HelperResult<never> {
  const list = typeof issues === 'string' ? [{ path: '', message: issues }] : issues
  if (!Array.isArray(list)) throw new TypeError('toolwire: invalid() takes a list of { path, message } or a message')
  return brand({
    status: 'invalid' as const,
    issues: Object.freeze(list.map((i: Issue) => Object.freeze({ path: String(i.path ?? ''), message: String(i.message) }))),
  })
}

/** The tool declined: `code` says why; `rev` is an optional revision the app may retry against. */
export function refuse(code: string, message: string, options: { readonly rev?: number } = {}): HelperResult<never> {
  if (typeof code !== 'string' || typeof message !== 'string') throw new TypeError('toolwire: refuse(code, message) takes two strings')
  return brand(
    options.rev === undefined
      ? { status: 'refused' as const, code, message }
      : { status: 'refused' as const, code, message, rev: options.rev },
  )
}

/** The tool stopped because of an operator, a signal or a policy. */
export function cancelled(by: CancelledBy = 'policy'): HelperResult<never> {
  if (by !== 'operator' && by !== 'signal' && by !== 'policy') throw new TypeError('toolwire: cancelled(by) takes "operator", "signal" or "policy"')
  return brand({ status: 'cancelled' as const, by })
}

/** The tool failed; `message` is public-safe and reaches the model. */
export function errorResult(message: string): HelperResult<never> {
  if (typeof message !== 'string') throw new TypeError('toolwire: errorResult(message) takes a string')
  return brand({ status: 'error' as const, message })
}

/** A model result: `output` for the model, `isError`, media `parts`, app-only `metadata`. */
export interface ModelResult {
  readonly output: string
  readonly isError: boolean
  readonly parts?: readonly import('./types.js').ContentPart[]
  readonly metadata?: { readonly [key: string]: unknown }
}

/**
 * Builds a suspension: `metadata.pending` holds the request, checked and frozen (id generated
 * when absent). `schema` (kind `input` only) describes the input the call waits for.
 * @throws TypeError when the request is malformed (a schema on another kind, one that is not a
 *   JSON object or is too big); thrown in a tool's `run`, the call settles as an error.
 *
 * ```ts
 * pending({ kind: 'input', prompt: 'Which environment?', schema: { type: 'object', properties: { env: { type: 'string' } } } })
 * ```
 */
export function pending(request: PendingRequestInit): ModelResult {
  const req = checkPending(request)
  return Object.freeze({
    output: pendingOutputText(req),
    isError: true,
    metadata: Object.freeze({ pending: req }),
  })
}

/** Sugar for an authorization suspension: the user must log in at `url`. */
export function authRequired(url: string, prompt?: string): ModelResult {
  return pending(prompt === undefined ? { kind: 'authorization', url } : { kind: 'authorization', url, prompt })
}

/**
 * Reads the suspension back off a model result (what `pending()` made, or any
 * `{ output, isError, metadata? }`), or `undefined` for an ordinary one. For a canonical
 * `ToolResult`, use `result.pendingRequest()`.
 *
 * ```ts
 * pendingOf(authRequired('https://example.com/login'))?.kind // 'authorization'
 * pendingOf({ output: 'done', isError: false }) // undefined
 * ```
 */
export function pendingOf(result: ModelResult | { readonly metadata?: { readonly [key: string]: unknown } } | null | undefined): PendingRequest | undefined {
  const p = result?.metadata?.pending
  return typeof p === 'object' && p !== null && typeof (p as PendingRequest).kind === 'string' ? (p as PendingRequest) : undefined
}

/** The media types a content part may have. */
const PART_TYPES: ReadonlySet<unknown> = new Set(['image', 'audio', 'file'])

/** Whether `value` is a non-empty list of content parts (each `{ type: 'image' | 'audio' | 'file', mimeType }`). */
function isPartList(value: unknown): boolean {
  if (!Array.isArray(value) || value.length === 0) return false
  for (const part of value as unknown[]) {
    if (typeof part !== 'object' || part === null) return false
    const p = part as { type?: unknown; mimeType?: unknown }
    if (!PART_TYPES.has(p.type) || typeof p.mimeType !== 'string') return false
  }
  return true
}

/**
 * @internal Whether `value` has the model-result shape: `{ output, isError }`, or
 * `{ output, parts }` without `isError` (a success: its media stays media), with `parts` and
 * `metadata` optional and no other member.
 */
export function isModelResult(value: unknown): value is ModelResult {
  if (typeof value !== 'object' || value === null) return false
  const v = value as Record<string, unknown>
  if (typeof v.output !== 'string') return false
  if (typeof v.isError !== 'boolean' && (v.isError !== undefined || !isPartList(v.parts))) return false
  for (const key in v) {
    if (key !== 'output' && key !== 'isError' && key !== 'parts' && key !== 'metadata') return false
  }
  return true
}

export type { JsonValue }
