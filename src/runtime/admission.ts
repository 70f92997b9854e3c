/**
 * Admission: what a caller passed (name, arguments, options) read and checked, the tool looked
 * up, its input validated (awaiting an asynchronous validator, which `tm.cancel` can cut) and
 * the call id picked; then the `Call` started, or the call settled early (settlement.ts).
 */
import { BatchSink, readBatchEntry, type BatchCall, type BatchEntry } from './batch.js'
import { Call } from './call.js'
import { badOptions, readOptions, toolLabel } from './options.js'
import { earlySettlement, earlyView, settleEarly, type Early } from './settlement.js'
import { awaitValidation } from './validation-wait.js'
import type { Inflight } from './inflight.js'
import { ownerOf } from './durable.js'
import { invalidError, isThenable, parseArgs, TOOL_FAILED_MESSAGE } from './normalize.js'
import { refusalError, toolError, ToolResult } from '../core/result.js'
import { duplicateCallIdText, REFUSALS, tooManyCallsText, unknownToolText } from '../core/texts.js'
import { clipped } from '../core/redact.js'
import { wellFormed } from '../core/json.js'
import { parseFlatArgs } from '../core/flat-args.js'
import type { Issue, SchemaCompiler } from '../core/validate.js'
import type { CallResult } from '../core/view.js'
import type { CallOptions } from './tool.js'
import type { CallHost, ManagerState, Settlement, ToolEntry } from './types.js'

/** A call ready to start, one that cannot run, or (an asynchronous validator) either, once its input is checked. */
type Admitted = Call | Early | Promise<Call | Early>

/** What admission is made from. */
export interface AdmissionConfig {
  readonly state: ManagerState
  readonly inflight: Inflight
  /** What the manager's calls see of it. */
  readonly host: CallHost
  readonly compiler: SchemaCompiler
  /** Whether the manager has a durable store. */
  readonly store: boolean
  /** Whether the store keeps principals (its `principals` flag). */
  readonly storePrincipals: boolean
}

/** Admits one manager's calls: `tm.call`, `tm.callJson`, `tm.callMany` and `tm.execute` enter here. */
export class Admission {
  private readonly state: ManagerState
  private readonly inflight: Inflight
  private readonly host: CallHost
  private readonly compiler: SchemaCompiler
  private readonly store: boolean
  private readonly storePrincipals: boolean

  constructor(config: AdmissionConfig) {
    this.state = config.state
    this.inflight = config.inflight
    this.host = config.host
    this.compiler = config.compiler
    this.store = config.store
    this.storePrincipals = config.storePrincipals
  }

  /**
   * Calls a tool with the arguments as JSON text, as models send them. Never throws or rejects.
   */
  callJson(name: string, argsText: string, options: CallOptions | undefined): Promise<CallResult> {
    try {
      // the usual call: no options, a tool that is there, a flat object of its members (flat-args.ts)
      const entry = options === undefined && typeof name === 'string' && typeof argsText === 'string' ? this.state.tools.get(name) : undefined
      if (entry !== undefined) {
        const parsed = this.readArgs(entry, argsText)
        if (parsed instanceof ToolResult) return settleEarly(this.state, name, undefined, parsed)
        return this.startView(name, this.admitTool(entry, parsed, undefined, 'view', argsText.length))
      }
      const input = parseArgs(argsText, this.compiler.maxInputValues)
      if (!(input instanceof ToolResult)) return this.call(name, input, options, argsText.length)
      const opts = readOptions(options)
      return settleEarly(this.state, toolLabel(name), opts instanceof ToolResult ? undefined : opts, input)
    } catch (err) {
      return settleEarly(this.state, toolLabel(name), undefined, ToolResult.failed(toolError('other', TOOL_FAILED_MESSAGE)), err)
    }
  }

  /** `tm.call` of an input parsed from a JSON text of `textLength` characters (-1: not parsed from text). */
  call(name: string, input: unknown, options: CallOptions | undefined, textLength: number): Promise<CallResult> {
    try {
      // the usual call, without options, of a tool that is there: no options to read or check
      const entry = options === undefined && typeof name === 'string' ? this.state.tools.get(name) : undefined
      if (entry !== undefined) return this.startView(name, this.admitTool(entry, input, undefined, 'view', textLength))
      return this.startView(name, this.admitChecked(name, input, options, 'view', textLength))
    } catch (err) {
      // a bug in the runtime itself still gives a result
      return settleEarly(this.state, toolLabel(name), undefined, ToolResult.failed(toolError('other', TOOL_FAILED_MESSAGE)), err)
    }
  }

  /**
   * Runs the calls a model made in one turn, in parallel, and resolves once with their
   * views in order. Each call behaves exactly as `call`/`callJson`; never rejects.
   */
  callMany(calls: readonly BatchCall[]): Promise<readonly CallResult[]> {
    // the list and each entry are read once, here: a getter or a Proxy that throws refuses that entry only
    let entries: (BatchEntry | undefined)[]
    try {
      const n: unknown = Array.isArray(calls) ? calls.length : undefined
      if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0) {
        this.state.events.reportError('', '<callMany>', new TypeError('toolwire: tm.callMany takes an array of calls ({ name, input | args, options? }); it got none, and ran nothing'))
        return Promise.resolve(Object.freeze([]))
      }
      // more entries than an input may hold values (no model's turn holds that many calls): one
      // view each would exhaust memory for a sparse list of 2**32 - 1, so none runs
      if (n > this.compiler.maxInputValues) {
        this.state.events.reportError('', '<callMany>', new RangeError(tooManyCallsText(n, this.compiler.maxInputValues)))
        return Promise.resolve(Object.freeze([]))
      }
      entries = new Array<BatchEntry | undefined>(n)
      for (let i = 0; i < n; i++) entries[i] = readBatchEntry(calls, i)
    } catch {
      return Promise.resolve(Object.freeze([]))
    }
    const sink = new BatchSink(entries.length)
    for (let i = 0; i < entries.length; i++) {
      const c = entries[i]
      try {
        if (c === undefined) {
          sink.put(i, earlyView(this.state, '<unreadable>', undefined, ToolResult.failed(refusalError(REFUSALS.invalidCall.code, REFUSALS.invalidCall.message))))
        } else {
          this.dispatchInto(sink, i, c)
        }
      } catch (err) {
        sink.put(i, earlyView(this.state, toolLabel(c?.name), undefined, ToolResult.failed(toolError('other', TOOL_FAILED_MESSAGE)), err))
      }
    }
    return sink.promise
  }

  /** An argument text read by the tool's flat parser when it can (flat-args.ts), else by `JSON.parse`: the input, or the `ToolResult` of a text that is not JSON or over the limits. */
  private readArgs(entry: ToolEntry | undefined, text: unknown): unknown {
    const flat = entry?.flatArgs !== undefined && typeof text === 'string' ? parseFlatArgs(text, entry.flatArgs) : undefined
    return flat !== undefined ? flat : parseArgs(text, this.compiler.maxInputValues)
  }

  /** Admits batch entry `index` and starts it into `sink`, or puts its early view there. */
  private dispatchInto(sink: BatchSink, index: number, c: BatchEntry): void {
    // as in `callJson`: an entry without options, of a tool that is there, with flat arguments skips JSON.parse
    const entry = c.options === undefined && typeof c.name === 'string' ? this.state.tools.get(c.name) : undefined
    const input = c.args !== undefined ? this.readArgs(entry, c.args) : c.input
    let admitted: Admitted
    if (input instanceof ToolResult) {
      const opts = readOptions(c.options)
      admitted = { result: input, options: opts instanceof ToolResult ? undefined : opts }
    } else {
      const textLength = typeof c.args === 'string' ? c.args.length : -1
      // as in `call`: an entry without options of a tool that is there goes straight to its check
      admitted = entry !== undefined ? this.admitTool(entry, input, undefined, 'view', textLength) : this.admitChecked(c.name, input, c.options, 'view', textLength)
    }
    if (admitted instanceof Call) admitted.startInto(sink, index)
    else if (admitted instanceof Promise) {
      void admitted.then((a) => {
        try {
          if (a instanceof Call) a.startInto(sink, index)
          else sink.put(index, earlyView(this.state, toolLabel(c.name), a.options, a.result))
        } catch (err) {
          sink.put(index, earlyView(this.state, toolLabel(c.name), undefined, ToolResult.failed(toolError('other', TOOL_FAILED_MESSAGE)), err))
        }
      })
    } else sink.put(index, earlyView(this.state, toolLabel(c.name), admitted.options, admitted.result))
  }

  /** `tm.execute`'s run: the settlement of the call (its view, canonical result and raw return). Never rejects. */
  settle(name: string, input: unknown, options: CallOptions | undefined): Promise<Settlement> {
    let admitted: Admitted
    try {
      admitted = this.admitChecked(name, input, options, 'settlement')
    } catch (err) {
      this.state.events.reportError('', toolLabel(name), err)
      admitted = { result: ToolResult.failed(toolError('other', TOOL_FAILED_MESSAGE)), options: undefined }
    }
    if (admitted instanceof Promise) return admitted.then((a) => this.settleAdmitted(name, a))
    return this.settleAdmitted(name, admitted)
  }

  /** Starts an admitted call for its settlement, or settles one that cannot run. */
  private settleAdmitted(name: string, admitted: Call | Early): Promise<Settlement> {
    if (admitted instanceof Call) {
      try {
        return admitted.start() as Promise<Settlement>
      } catch (err) {
        this.state.events.reportError(admitted.callId, toolLabel(name), err)
        admitted = { result: ToolResult.failed(toolError('other', TOOL_FAILED_MESSAGE)), options: undefined }
      }
    }
    return earlySettlement(this.state, toolLabel(name), admitted)
  }

  /** Starts an admitted call for its view, or settles one that cannot run (once an asynchronous validator settled, too). */
  private startView(name: unknown, admitted: Admitted): Promise<CallResult> {
    if (admitted instanceof Call) return admitted.start() as Promise<CallResult>
    if (admitted instanceof Promise) return admitted.then((a) => this.startLater(name, a))
    return settleEarly(this.state, toolLabel(name), admitted.options, admitted.result)
  }

  /** `startView` after an asynchronous validator settled: a throw still gives a result. */
  private startLater(name: unknown, admitted: Call | Early): Promise<CallResult> {
    try {
      return this.startView(name, admitted)
    } catch (err) {
      return settleEarly(this.state, toolLabel(name), undefined, ToolResult.failed(toolError('other', TOOL_FAILED_MESSAGE)), err)
    }
  }

  /** `admit` for what a caller passed: a name that is not a string and unreadable options are refused first. */
  private admitChecked(
    name: unknown,
    input: unknown,
    options: unknown,
    mode: 'view' | 'settlement',
    textLength = -1,
  ): Admitted {
    const opts = readOptions(options)
    if (opts instanceof ToolResult) return { result: opts, options: undefined }
    // without a store there is no ledger: a key would promise what nothing keeps
    if (opts?.idempotencyKey !== undefined && !this.store) return { result: badOptions('idempotencyKey needs a store (new ToolManager({ store }))'), options: opts }
    // a store of the app's own that cannot keep owners would leave the call's records unscoped: refused, never silently
    if (opts?.principal !== undefined && this.store && !this.storePrincipals) return { result: badOptions('this store cannot keep principals (its principals flag is not true)'), options: opts }
    // a store keeps text as UTF-8, where a lone surrogate becomes U+FFFD: the id would be another one on every other instance
    if (this.store && opts?.callId !== undefined && wellFormed(opts.callId) !== opts.callId) {
      return { result: badOptions('callId must be well-formed Unicode (no lone surrogate): a store keeps it as UTF-8'), options: undefined }
    }
    if (typeof name !== 'string') {
      return { result: ToolResult.failed(refusalError(REFUSALS.toolNameNotString.code, REFUSALS.toolNameNotString.message)), options: opts }
    }
    return this.admit(name, input, opts, mode, textLength)
  }

  /**
   * Looks the tool up, validates the input and picks the call id: a call ready to start,
   * or the result of one that cannot run (with the options its view should use).
   */
  private admit(
    name: string,
    input: unknown,
    options: CallOptions | undefined,
    mode: 'view' | 'settlement',
    textLength = -1,
  ): Admitted {
    const entry = this.state.tools.get(name)
    if (entry === undefined) {
      return { result: ToolResult.failed(refusalError('unknown_tool', unknownToolText(clipped(String(name))))), options }
    }
    return this.admitTool(entry, input, options, mode, textLength)
  }

  /** `admit` of a tool that is there: validates the input and picks the call id. */
  private admitTool(entry: ToolEntry, input: unknown, options: CallOptions | undefined, mode: 'view' | 'settlement', textLength: number): Admitted {
    // an input parsed from a short text needs no shape walk before its check (validate.ts)
    const parsed = textLength < 0 ? undefined : entry.validate.parsed
    const issues: unknown = parsed === undefined ? entry.validate(input) : parsed(input, textLength)
    if (issues !== undefined) {
      // a Standard Schema may validate asynchronously: only then is the check awaited
      if (isThenable(issues)) return this.admitWhenChecked(issues, entry, input, options, mode)
      return { result: ToolResult.failed(invalidError(issues as readonly Issue[])), options }
    }
    return this.admitValid(entry, input, options, mode)
  }

  /**
   * `admit` once an asynchronous validator settled, or the call's timeout or signal ended the
   * wait (validation-wait.ts). Never rejects: a validator that rejects fails the call.
   */
  private admitWhenChecked(
    validation: PromiseLike<unknown>,
    entry: ToolEntry,
    input: unknown,
    options: CallOptions | undefined,
    mode: 'view' | 'settlement',
  ): Promise<Call | Early> {
    const startedAt = performance.now()
    const callId = typeof options?.callId === 'string' && !this.inflight.validating.has(options.callId) ? options.callId : undefined
    return new Promise((resolve) => {
      let ended = false
      const settle = (value: Call | Early): void => {
        ended = true
        if (callId !== undefined) this.inflight.validating.delete(callId)
        resolve(value)
      }
      const cut = awaitValidation(validation, options?.timeoutMs ?? entry.timeoutMs, options?.signal, {
        checked: (issues) => {
          try {
            if (issues !== undefined) return settle({ result: ToolResult.failed(invalidError(issues as readonly Issue[])), options })
            if (callId !== undefined) this.inflight.validating.delete(callId)
            const admitted = this.admitValid(entry, input, options, mode)
            settle(admitted instanceof Call ? Call.since(admitted, startedAt) : admitted)
          } catch (err) {
            this.state.events.reportError('', entry.name, err)
            settle({ result: ToolResult.failed(toolError('other', TOOL_FAILED_MESSAGE)), options })
          }
        },
        failed: (err) => {
          this.state.events.reportError('', entry.name, err)
          settle({ result: ToolResult.failed(toolError('other', TOOL_FAILED_MESSAGE)), options })
        },
        cut: (result) => settle({ result, options }),
      })
      // registered only while the wait is on (a signal already aborted ends it at once)
      if (callId !== undefined && !ended) this.inflight.validating.set(callId, { cut, owner: ownerOf(options?.principal) })
    })
  }

  /** Picks the call id of a call whose input is valid: a call ready to start, or a refused duplicate id. */
  private admitValid(entry: ToolEntry, input: unknown, options: CallOptions | undefined, mode: 'view' | 'settlement'): Call | Early {
    const seq = options?.callId === undefined ? this.inflight.nextSeq() : 0
    const callId = seq !== 0 ? this.inflight.idPrefix + seq : options!.callId!
    if (seq === 0 && this.inflight.find(callId) !== undefined) {
      const duplicate = refusalError('duplicate_call_id', duplicateCallIdText(callId))
      return { result: ToolResult.failed(duplicate), options: undefined }
    }
    return new Call(this.host, entry, callId, input, options, mode, undefined, seq)
  }
}
