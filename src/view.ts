/**
 * The application view: the frozen, structured-cloneable union `tm.call` resolves
 * to, derived from one canonical `ToolResult`.
 */
import { ToolResult } from './result.js'
import type { FieldChange, JsonValue, PendingRequest, ToolErrorKind } from './types.js'
import type { Issue } from './validate.js'

/** Who stopped a call. */
export type CancelledBy = 'operator' | 'signal' | 'policy'

/** What the application sees of a call. `tm.call` never throws: every outcome is one of these. */
export type CallResult<T = JsonValue> =
  | { readonly status: 'ok'; readonly data: T; readonly callId?: string }
  | { readonly status: 'invalid'; readonly issues: readonly Issue[]; readonly callId?: string }
  | { readonly status: 'refused'; readonly code: string; readonly message: string; readonly rev?: number; readonly callId?: string }
  | {
      readonly status: 'needs_confirmation'
      readonly confirmId: string
      readonly summary: string
      readonly changes?: readonly FieldChange[]
      readonly callId?: string
    }
  | { readonly status: 'pending'; readonly request: PendingRequest; readonly callId?: string }
  | { readonly status: 'cancelled'; readonly by: CancelledBy; readonly callId?: string }
  | { readonly status: 'error'; readonly kind: ToolErrorKind; readonly message: string; readonly callId?: string }

/** The status names of the application view. */
export type CallStatus = CallResult['status']

/**
 * The object an application view is made of. Its only hidden state is a private
 * field holding the canonical result: JSON, `structuredClone`, `Object.keys` and
 * deep equality see just the view's own data properties (a clone is a plain object).
 */
class View {
  #canonical: ToolResult | undefined
  readonly #untrusted: boolean

  constructor(canonical: ToolResult | undefined, untrusted: boolean) {
    this.#canonical = canonical
    this.#untrusted = untrusted
  }

  static canonicalOf(view: unknown): ToolResult | undefined {
    if (!(view instanceof View)) return undefined
    // an `ok` view made on the fast path builds its canonical result on first use
    view.#canonical ??= ToolResult.fromData((view as unknown as { data: JsonValue }).data, undefined, view.#untrusted)
    return view.#canonical
  }
}

/**
 * The `ok` view of data that already has JSON form (deeply frozen), without building
 * the canonical result until someone asks for it (`canonicalOf`).
 */
export function okView(data: JsonValue, callId: string, untrusted: boolean): CallResult {
  const view = new View(undefined, untrusted) as unknown as Record<string, unknown>
  view.status = 'ok'
  view.data = data
  view.callId = callId
  return Object.freeze(view) as unknown as CallResult
}

/** The canonical result behind an application view made by this process, if any. */
export function canonicalOf(view: CallResult<unknown>): ToolResult | undefined {
  return View.canonicalOf(view)
}

function details(result: ToolResult): Record<string, unknown> | undefined {
  const d = (result.error() ?? result.refusal())?.details
  return typeof d === 'object' && d !== null && !Array.isArray(d) ? (d as Record<string, unknown>) : undefined
}

/** Builds the frozen application view of `result` for call `callId`. */
export function viewOf(result: ToolResult, callId: string | undefined): CallResult {
  const view = new View(result, result.isUntrusted()) as unknown as Record<string, unknown>
  switch (result.disposition()) {
    case 'success': {
      const data = result.data()
      view.status = 'ok'
      view.data = data === undefined ? result.text() : data
      break
    }
    case 'error': {
      const error = result.error()!
      if (error.kind === 'invalid_args') {
        const issues = details(result)?.issues
        view.status = 'invalid'
        view.issues = Array.isArray(issues) ? issues : Object.freeze([Object.freeze({ path: '', message: error.message })])
      } else if (error.kind === 'cancelled') {
        const by = details(result)?.by
        Object.assign(view, { status: 'cancelled', by: by === 'operator' || by === 'signal' ? by : 'policy' })
      } else {
        Object.assign(view, { status: 'error', kind: error.kind, message: error.message })
      }
      break
    }
    case 'refused': {
      const refusal = result.refusal()!
      Object.assign(view, { status: 'refused', code: refusal.code ?? 'refused', message: refusal.message })
      const rev = details(result)?.rev
      if (typeof rev === 'number') view.rev = rev
      break
    }
    case 'skipped':
      Object.assign(view, { status: 'refused', code: 'skipped', message: result.skipReason()! })
      break
    case 'pending': {
      const request = result.pendingRequest()!
      if (request.kind === 'confirmation') {
        Object.assign(view, { status: 'needs_confirmation', confirmId: request.id, summary: request.summary ?? result.text() })
        if (request.changes !== undefined) view.changes = request.changes
      } else {
        Object.assign(view, { status: 'pending', request })
      }
      break
    }
  }
  if (callId !== undefined) view.callId = callId
  return Object.freeze(view) as unknown as CallResult
}
