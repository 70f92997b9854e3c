/**
 * What a caller passes besides the input: the call options, read once into a frozen
 * snapshot (or refused), and the label a call's events use for its tool name.
 */
import { refusalError, ToolResult } from '../core/result.js'
import { invalidOptionsText } from '../core/texts.js'
import type { CallOptions } from './tool.js'
import { traceContextOf } from '../observe/trace-context.js'
import { readPrincipal } from '../core/principal.js'

/** The tool name a call's events and views use: the name, or a placeholder for a non-string. */
export function toolLabel(name: unknown): string {
  return typeof name === 'string' ? name : `<${typeof name}>`
}

/** A refusal of call options that cannot be read or are malformed. */
export function badOptions(what: string): ToolResult {
  return ToolResult.failed(refusalError('invalid_options', invalidOptionsText(what)))
}

/**
 * A plain frozen snapshot of the caller's options (each getter read once, here), or the
 * refusal of options that throw or are malformed: `signal` an AbortSignal-like object,
 * `callId` a string, `timeoutMs` a positive number, `principal` a principal (a frozen copy). A `traceContext` is kept only when valid.
 */
export function readOptions(options: unknown): CallOptions | undefined | ToolResult {
  if (options === undefined || options === null) return undefined
  if (typeof options !== 'object' && typeof options !== 'function') return badOptions('options must be an object')
  let signal: unknown
  let callId: unknown
  let timeoutMs: unknown
  let idempotencyKey: unknown
  let traceContext: unknown
  let principal: unknown
  try {
    const o = options as { signal?: unknown; callId?: unknown; timeoutMs?: unknown; idempotencyKey?: unknown; traceContext?: unknown; principal?: unknown }
    signal = o.signal
    callId = o.callId
    timeoutMs = o.timeoutMs
    idempotencyKey = o.idempotencyKey
    traceContext = o.traceContext
    principal = o.principal
  } catch {
    return badOptions('options')
  }
  const out: { -readonly [K in keyof CallOptions]: CallOptions[K] } = {}
  if (signal !== undefined) {
    try {
      const s = signal as { aborted?: unknown; addEventListener?: unknown; removeEventListener?: unknown }
      if (
        typeof signal !== 'object' ||
        signal === null ||
        typeof s.aborted !== 'boolean' ||
        typeof s.addEventListener !== 'function' ||
        typeof s.removeEventListener !== 'function'
      ) {
        return badOptions('signal must be an AbortSignal')
      }
    } catch {
      return badOptions('signal')
    }
    out.signal = signal as AbortSignal
  }
  if (callId !== undefined) {
    if (typeof callId !== 'string') return badOptions('callId must be a string')
    out.callId = callId
  }
  if (timeoutMs !== undefined) {
    if (typeof timeoutMs !== 'number' || !(timeoutMs > 0)) return badOptions('timeoutMs must be a positive number')
    out.timeoutMs = timeoutMs
  }
  if (idempotencyKey !== undefined) {
    if (typeof idempotencyKey !== 'string' || idempotencyKey.length === 0 || idempotencyKey.length > 1024) {
      return badOptions('idempotencyKey must be a string of 1 to 1024 characters')
    }
    out.idempotencyKey = idempotencyKey
  }
  if (traceContext !== undefined) {
    // an invalid trace context is ignored, never a refusal (W3C: the trace restarts)
    const valid = traceContextOf(traceContext)
    if (valid !== undefined) out.traceContext = valid
  }
  if (principal !== undefined) {
    let read: ReturnType<typeof readPrincipal>
    try {
      read = readPrincipal(principal)
    } catch {
      return badOptions('principal')
    }
    if (typeof read === 'string') return badOptions(read)
    out.principal = read
  }
  return Object.freeze(out)
}
