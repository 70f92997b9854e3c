/**
 * Outcome-reporting tools: a callback may catch an operational error, still return
 * its application value, and report the failure to its own invocation. The first
 * valid report wins; reports are inert once the callback settles; a late report
 * (after cancellation or a timeout froze the outcome) only updates that invocation's
 * late diagnostics.
 */
import type { JsonSchema, ToolContext, ToolDefinition, ToolHints } from './tool.js'
import type { ToolErrorKind } from '../core/types.js'
import { when } from './normalize.js'

/** What an outcome callback receives besides its arguments. */
export interface OutcomeInvocation {
  /** The call's context, when run by a manager. */
  readonly context?: ToolContext
  /** Reports an operational failure with a public-safe message. Never throws. */
  reportFailure(error: Error): void
}

/** Options of `createOutcomeTool`: normal tool metadata plus an outcome-aware callback. */
export interface OutcomeToolOptions<TArgs, TResult> {
  readonly definition: {
    readonly type: 'function'
    readonly function: { readonly name: string; readonly description?: string; readonly parameters: JsonSchema }
  }
  readonly output?: { readonly effect?: 'read' | 'write' | 'none' }
  readonly hints?: ToolHints
  readonly timeoutMs?: number
  execute(args: TArgs, invocation: OutcomeInvocation): TResult | Promise<TResult>
}

/** A tool made by `createOutcomeTool`: an ordinary tool whose `execute` returns raw data. */
export interface OutcomeTool<TArgs, TResult> extends ToolDefinition<TArgs> {
  readonly definition: OutcomeToolOptions<TArgs, TResult>['definition']
  /** Runs the callback directly and returns its raw data, with no outcome to report into. */
  execute(args: TArgs, context?: ToolContext): Promise<TResult>
}

/** The frozen semantic outcome of one execution. */
export interface ToolExecutionOutcome {
  readonly status: 'succeeded' | 'failed' | 'cancelled' | 'timed_out' | 'denied' | 'invalid' | 'pending' | 'skipped'
  readonly callId: string
  readonly tool: string
  /** Whether the callback reported the failure (rather than throwing or being stopped). */
  readonly reported: boolean
  readonly error?: { readonly kind: ToolErrorKind; readonly message: string }
}

/** Diagnostics of one invocation. Late reports land here and nowhere else. */
export interface OutcomeDiagnostics {
  /** Reports that were not Error instances: configuration failures, recorded without throwing. */
  readonly configurationFailures: string[]
  /** Valid reports after the outcome was frozen (the caller cancelled or timed out). */
  readonly late: { readonly message: string }[]
  /** A throw or normalization error after a report: causal pipeline diagnostics. */
  pipeline?: string
}

type Callback = (args: never, invocation: OutcomeInvocation) => unknown

const callbacks = new WeakMap<object, Callback>()

/** @internal The outcome callback behind a tool's `execute`, if it has one. */
export function outcomeCallbackOf(tool: { readonly execute?: unknown }): Callback | undefined {
  return typeof tool.execute === 'function' ? callbacks.get(tool.execute) : undefined
}

const inert: OutcomeInvocation['reportFailure'] = () => {}

/**
 * Makes a tool whose callback can report operational failures.
 *
 * @example
 * const lookup = createOutcomeTool({
 *   definition: { type: 'function', function: { name: 'lookup', parameters: { type: 'object' } } },
 *   execute: async (args, invocation) => {
 *     try { return { success: true, record: await find(args) } }
 *     catch { invocation.reportFailure(new Error('Lookup is unavailable')); return { success: false, record: null } }
 *   },
 * })
 */
export function createOutcomeTool<TArgs, TResult>(options: OutcomeToolOptions<TArgs, TResult>): OutcomeTool<TArgs, TResult> {
  const fn = options?.definition?.function
  if (options?.definition?.type !== 'function' || typeof fn?.name !== 'string') {
    throw new TypeError('toolwire: createOutcomeTool needs definition: { type: "function", function: { name, parameters } }')
  }
  if (typeof options.execute !== 'function') throw new TypeError('toolwire: createOutcomeTool needs an execute(args, invocation) callback')
  const callback = options.execute
  const execute = async (args: TArgs, context?: ToolContext): Promise<TResult> =>
    callback(args, context === undefined ? { reportFailure: inert } : { context, reportFailure: inert })
  callbacks.set(execute, callback as Callback)
  const hints: ToolHints = { ...(options.output?.effect === 'read' ? { readOnly: true } : {}), ...options.hints }
  return {
    name: fn.name,
    ...(fn.description === undefined ? {} : { description: fn.description }),
    inputSchema: fn.parameters,
    hints,
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
    definition: options.definition,
    execute,
    run: (input: TArgs, ctx: ToolContext) => execute(input, ctx),
  }
}

/** @internal What running an outcome callback needs of its call (`CALL_ACCESS` in call.ts is one). */
export interface OutcomeAccess<C> {
  readonly input: (call: C) => unknown
  /** The call's outcome diagnostics, made on first use. */
  readonly diagnostics: (call: C) => OutcomeDiagnostics
  /** Whether the call settled: its outcome is frozen. */
  readonly settled: (call: C) => boolean
  /** Whether the call's callback settled (or none runs): its reports are inert. */
  readonly callbackSettled: (call: C) => boolean
  readonly setCallbackSettled: (call: C, settled: boolean) => void
  /** The failure the callback reported first, if any. */
  readonly reported: (call: C) => string | undefined
  readonly setReported: (call: C, message: string) => void
  /** A valid report after the call settled: the `late_report` event. */
  readonly reportLate: (call: C, message: string) => void
}

/**
 * @internal Runs a tool's outcome callback as `call`'s body: the first valid report wins (the
 * call then fails with its message), reports are inert once the callback settles, and a
 * report after the call settled lands in its late diagnostics. Returns what the callback
 * returned, a promise when it returned a thenable.
 */
export function runOutcomeCallback<C extends ToolContext>(access: OutcomeAccess<C>, call: C, callback: Callback): unknown {
  const diagnostics = access.diagnostics(call)
  access.setCallbackSettled(call, false)
  const invocation: OutcomeInvocation = {
    context: call,
    reportFailure: (error: Error) => {
      if (access.callbackSettled(call)) return // inert once the callback settles
      let isError = false
      try {
        isError = error instanceof Error
      } catch {
        isError = false
      }
      if (!isError) {
        diagnostics.configurationFailures.push(`reportFailure got ${error === null ? 'null' : typeof error}, not an Error`)
        return
      }
      let message: string
      try {
        const m: unknown = error.message // captured when reported
        message = typeof m === 'string' ? m : String(m)
      } catch {
        diagnostics.configurationFailures.push('reportFailure got an Error whose message cannot be read')
        return
      }
      if (access.settled(call)) {
        diagnostics.late.push(Object.freeze({ message }))
        access.reportLate(call, message)
      } else if (access.reported(call) === undefined) {
        access.setReported(call, message)
      }
    },
  }
  let ret: unknown
  try {
    ret = callback(access.input(call) as never, invocation)
  } catch (err) {
    access.setCallbackSettled(call, true)
    throw err
  }
  let thenable = false
  try {
    thenable = typeof ret === 'object' && ret !== null && typeof (ret as { then?: unknown }).then === 'function'
  } catch {
    thenable = true // a throwing `then` getter: `when` turns it into a rejection
  }
  if (!thenable) {
    access.setCallbackSettled(call, true)
    return ret
  }
  return new Promise<unknown>((resolve, reject) =>
    when(
      ret,
      (v) => {
        access.setCallbackSettled(call, true)
        resolve(v)
      },
      (e) => {
        access.setCallbackSettled(call, true)
        reject(e)
      },
    ),
  )
}
