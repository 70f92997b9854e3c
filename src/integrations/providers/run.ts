/**
 * What every provider runner shares: one batch of tool calls run through `tm.callMany`,
 * each with the provider's call id, and the options every call gets.
 */
import type { BatchCall, ToolManager } from '../../runtime/manager.js'
import type { CallOptions } from '../../runtime/tool.js'
import { viewOf, type CallResult } from '../../core/view.js'
import { refusalError, ToolResult } from '../../core/result.js'
import { REFUSALS, UNUSABLE_CALL_ID } from '../../core/texts.js'

/** The part of a `ToolManager` a runner uses (`manifest` for the `strict` option). */
export type ToolRunner = Pick<ToolManager, 'callMany' | 'confirm'> & Partial<Pick<ToolManager, 'manifest'>>

/** A call waiting for the user's approval, as a runner's `confirm` option gets it. */
export type ConfirmationRequest = Extract<CallResult, { readonly status: 'needs_confirmation' }> & { readonly tool: string }

/** Options of a provider runner. */
export interface RunToolCallsOptions {
  /** Cancels every call of the batch (each call settles `cancelled`). */
  readonly signal?: AbortSignal
  /** A timeout for each call of the batch. */
  readonly timeoutMs?: number
  /**
   * Asks the user about each call that needs confirmation (one at a time, in order): `true`
   * runs it (`tm.confirm`, once) and the model gets its result; `false`, or a throw, denies it
   * (`confirmation_denied`). Without it, the model is told the call awaits confirmation, and
   * `results` holds its `confirmId` for the app to confirm later.
   */
  readonly confirm?: (request: ConfirmationRequest) => boolean | Promise<boolean>
  /**
   * OpenAI runners: the tools were declared strict (`openAIChatTools(tm, { strict: true })`), so
   * a `null` for a property the tool has as optional means absent: it is left out before
   * toolwire validates the call.
   */
  readonly strict?: boolean
}

/**
 * What a runner returns: the provider's messages, in an order the provider accepts, and
 * (not enumerable, so spreading or serializing the list leaves it out) the application
 * view of each call, in the order of the provider's calls.
 */
export type ProviderMessages<T> = T[] & { readonly results: readonly CallResult[] }

/** One call a provider asked for: its id (when it gave one), the tool's name, and JSON text or an object. */
export interface ProviderCall {
  readonly id: string | undefined
  readonly name: unknown
  /** JSON text (as OpenAI sends arguments) or an already parsed value (Anthropic, Gemini). */
  readonly args: { readonly text: unknown } | { readonly value: unknown }
  /**
   * Why the call is not run: it is answered with this refusal instead (a malformed call is
   * answered, never dropped: a provider rejects a turn where a call has no answer).
   */
  readonly refusal?: { readonly code: string; readonly message: string }
}

/** The refusal of a call whose id a provider needs to pair its answer (`UNUSABLE_CALL_ID`). */
export const unusableId = UNUSABLE_CALL_ID
/** The refusal of a call whose fields could not be read. */
export const unreadableCall = REFUSALS.invalidCall

/**
 * Runs the calls in one `tm.callMany` batch, the provider's id as each call's id. A call
 * with a `refusal` is not run: its view is that refusal (no call events: it never reached
 * the manager). Never rejects.
 */
export function runCalls(tm: ToolRunner, calls: readonly ProviderCall[], options: RunToolCallsOptions = {}): Promise<readonly CallResult[]> {
  const batch: BatchCall[] = []
  const slots: number[] = []
  calls.forEach((c, i) => {
    if (c.refusal !== undefined) return
    const callOptions: CallOptions = {
      ...(c.id === undefined || c.id === '' ? {} : { callId: c.id }),
      ...(options.signal === undefined ? {} : { signal: options.signal }),
      ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
    }
    const name = c.name as string
    slots.push(i)
    // arguments that are not text go through callMany's own check: invalid JSON text is an `invalid` result
    batch.push('text' in c.args ? { name, args: c.args.text as string, options: callOptions } : { name, input: c.args.value, options: callOptions })
  })
  const run: Promise<readonly CallResult[]> =
    slots.length === calls.length
      ? tm.callMany(batch)
      : tm.callMany(batch).then((views) => {
          const all = calls.map((c) => (c.refusal === undefined ? undefined : viewOf(ToolResult.failed(refusalError(c.refusal.code, c.refusal.message)), undefined)))
          slots.forEach((slot, j) => {
            all[slot] = views[j]
          })
          return Object.freeze(all as CallResult[])
        })
  const confirm = options.confirm
  if (confirm === undefined) return run
  return run.then(async (views) => {
    const settled = [...views]
    for (let i = 0; i < settled.length; i++) {
      const view = settled[i]!
      if (view.status !== 'needs_confirmation') continue
      let approve = false
      try {
        approve = (await confirm({ ...view, tool: typeof calls[i]?.name === 'string' ? (calls[i]!.name as string) : '' })) === true
      } catch {
        // a confirm callback that fails denies the call
      }
      settled[i] = await tm.confirm(view.confirmId, { approve })
    }
    return Object.freeze(settled)
  })
}

/** `messages` with the views attached as a non-enumerable `results`. */
export function withResults<T>(messages: T[], results: readonly CallResult[]): ProviderMessages<T> {
  return Object.defineProperty(messages, 'results', { value: results, enumerable: false }) as ProviderMessages<T>
}

/** A value's own field, `undefined` when it is not an object or reading it throws. */
export function field(value: unknown, key: string): unknown {
  if ((typeof value !== 'object' && typeof value !== 'function') || value === null) return undefined
  try {
    return (value as Record<string, unknown>)[key]
  } catch {
    return undefined
  }
}

/** Whether `value` is an array; `false` for a revoked Proxy (which throws). */
export function isList(value: unknown): value is readonly unknown[] {
  try {
    return Array.isArray(value)
  } catch {
    return false
  }
}

/** A copy of the items of a list (each read once, a throwing read as `undefined`), `[]` for anything that is not an array. */
export function listOf(value: unknown): readonly unknown[] {
  if (!isList(value)) return []
  try {
    return Array.from(value, (_item, i) => field(value, String(i)))
  } catch {
    return []
  }
}

/** A string id, or `undefined`. */
export function idOf(value: unknown): string | undefined {
  return typeof value === 'string' && value.length > 0 ? value : undefined
}
