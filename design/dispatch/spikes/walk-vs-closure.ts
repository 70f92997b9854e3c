/**
 * Spike for issue #24 (design/dispatch/README.md §3): the cost of the stage walk against a
 * closure specialised per tool, for a tool with no gate, no listener, no tracer, no store.
 *
 * Four rows, interleaved in rounds, one awaited `callJson`-shaped call at a time, the bench's
 * echo tool and argument text (bench/workload.mjs):
 * - floor: bench/peers.mjs's "hand-written + result guarantees (floor)" row, verbatim;
 * - tm.callJson: the real manager, built from this checkout's src/;
 * - walk: a model of today's path (manager.ts admission layers, call.ts's Call with its
 *   pipeline arrays, host closures, `new Promise(capture)`, `subscribe` closures, fan-out loop);
 * - closure: the same guarantees, composed once per tool from the same stage list into one
 *   straight-line closure (no admission layers for `options === undefined`, the body's own
 *   `.then` is the call's promise, stages called directly).
 * walk and closure use toolwire's real leaves: parseArgs, the compiled validator, resultData
 * (redacting deep-frozen copy), okView, MetricsBuffer, the helper/model/brand checks.
 * Run: node design/dispatch/spikes/run.mjs [rounds] [--ablate]
 * --only=<prefix> keeps the rows whose name starts with it (for --cpu-prof of one row).
 * --ablate adds the closure with one leaf at a time replaced by the floor's (what each leaf costs).
 */
import { Ajv } from 'ajv'
import { ToolManager } from '../../../src/index.js'
import { parseArgs } from '../../../src/runtime/normalize.js'
import { resultData } from '../../../src/core/redact.js'
import { okView, type CallResult } from '../../../src/core/view.js'
import { isHelperResult, isModelResult } from '../../../src/core/helpers.js'
import { ToolResult } from '../../../src/core/result.js'
import type { MetricsBuffer } from '../../../src/observe/metrics.js'
import type { ToolEntry } from '../../../src/runtime/types.js'

const schema = {
  type: 'object',
  properties: { text: { type: 'string' }, n: { type: 'integer' } },
  required: ['text', 'n'],
  additionalProperties: false,
}
const argsText = '{"text":"hello","n":3}'
const SRC = `return async function echo({ text, n }) { return { echoed: text.repeat(n) } }`
const echo = (): ((a: { text: string; n: number }) => Promise<unknown>) => new Function(SRC)()

// ---------------------------------------------------------------- floor (bench/peers.mjs)
function frozenCopy(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value
  if (Array.isArray(value)) return Object.freeze(value.map(frozenCopy))
  const out: Record<string, unknown> = {}
  for (const k of Object.keys(value)) out[k] = frozenCopy((value as Record<string, unknown>)[k])
  return Object.freeze(out)
}
const ajv = new Ajv()
const validate = ajv.compile(schema)
const floorBody = echo()
let floorSeq = 0
let durations = 0
async function floor(text: string): Promise<unknown> {
  const a = JSON.parse(text)
  if (!validate(a)) throw new TypeError('invalid')
  const callId = `call_${++floorSeq}`
  const t0 = performance.now()
  const data = frozenCopy(await floorBody(a as { text: string; n: number }))
  durations += performance.now() - t0
  return Object.freeze({ status: 'ok', data, callId })
}

// ---------------------------------------------------------------- the real manager
const tm = new ToolManager({ development: false })
tm.register({ name: 'echo', inputSchema: schema, run: echo() as never })
// the manager's own pieces, reached as the spike's rows need them (TS `private` is not private at run time)
interface Inside {
  tools: Map<string, ToolEntry>
  metricsBuffer: MetricsBuffer
  compiler: { maxInputValues: number }
}
const inside = tm as unknown as Inside
/** A second tool entry per row, so each row has its own body copy and IC feedback. */
function entryFor(name: string): ToolEntry {
  tm.register({ name, inputSchema: schema, run: echo() as never })
  return inside.tools.get(name)!
}
const metrics = inside.metricsBuffer
const maxValues = inside.compiler.maxInputValues

// ---------------------------------------------------------------- walk: today's structure, modelled
// (its fields copy call.ts's Call on purpose: the model must allocate and initialise what Call does)
type Stage = (c: WalkCall) => void
interface Host {
  metrics: MetricsBuffer
  track: (c: WalkCall) => void
  untrack: (c: WalkCall) => void
  reportError: (id: string, tool: string, err: unknown) => void
}
const SLOTS = 1024
const slots: (object | undefined)[] = new Array(SLOTS).fill(undefined)
let captured: ((v: CallResult) => void) | undefined
const capture = (r: (v: CallResult) => void): void => {
  captured = r
}
const PromiseProto = Promise.prototype
const PromiseThen = PromiseProto.then
class WalkCall {
  readonly callId: string
  readonly toolName: string
  #flags = 32
  #resolve: ((v: CallResult) => void) | undefined = undefined
  #sink: unknown = undefined
  #index = 0
  #clock = performance.now()
  #gate = 0
  #attemptNo = 1
  #raw: unknown = undefined
  #result: ToolResult | undefined = undefined
  #view: CallResult | undefined = undefined
  #x: object | undefined = undefined
  readonly #host: Host
  readonly #entry: ToolEntry
  readonly #pipeline: { start: Stage[]; gates: Stage[]; settle: Stage[] }
  readonly #input: unknown
  readonly #options: undefined
  readonly #mode: string
  readonly #continuation: undefined
  readonly #seq: number
  constructor(host: Host, entry: ToolEntry, pipeline: { start: Stage[]; gates: Stage[]; settle: Stage[] }, callId: string, input: unknown, seq: number) {
    this.callId = callId
    this.toolName = entry.name
    this.#host = host
    this.#entry = entry
    this.#pipeline = pipeline
    this.#input = input
    this.#options = undefined
    this.#mode = 'view'
    this.#continuation = undefined
    this.#seq = seq
  }
  static seqOf(c: WalkCall): number {
    return c.#seq
  }
  start(): Promise<CallResult> {
    const p = new Promise<CallResult>(capture)
    this.#resolve = captured
    captured = undefined
    const start = this.#pipeline.start
    for (let i = 0; i < start.length; i++) start[i]!(this)
    this.#host.track(this)
    this.#gate = 0
    this.#proceed()
    return p
  }
  #proceed(): void {
    if ((this.#flags & 1) !== 0) return
    try {
      const gates = this.#pipeline.gates
      if (this.#gate < gates.length) gates[this.#gate++]!(this)
      else this.#runBody()
    } catch (err) {
      this.#host.reportError(this.callId, this.toolName, err)
    }
  }
  #runBody(): void {
    this.#flags |= 16 | 4
    const ret = (this.#entry.def.run as (i: unknown, c: unknown) => unknown)(this.#input, this) as object
    if (Object.getPrototypeOf(ret) === PromiseProto && !Object.hasOwn(ret, 'then'))
      PromiseThen.call(
        ret as Promise<unknown>,
        (v) => this.#onValue(v),
        (e) => this.#host.reportError(this.callId, this.toolName, e),
      )
  }
  #onValue(value: unknown): void {
    this.#flags &= ~4
    try {
      this.#complete(value)
    } catch (err) {
      this.#host.reportError(this.callId, this.toolName, err)
    }
  }
  #complete(value: unknown): void {
    this.#raw = value
    const helper = isHelperResult(value)
    const plain = this.#x === undefined && !helper && !isModelResult(value) && !ToolResult.isBranded(value)
    if (!plain) throw new Error('spike: plain values only')
    this.#finish(resultData(value, this.#entry.sensitiveKey))
  }
  #finish(data: unknown): void {
    this.#flags |= 1
    this.#host.untrack(this)
    const view = okView(data as never, this.callId, this.#entry.untrusted)
    this.#view = view
    this.#clock = performance.now() - this.#clock
    const fan = this.#pipeline.settle
    for (let i = 0; i < fan.length; i++) {
      try {
        fan[i]!(this)
      } catch (err) {
        this.#host.reportError(this.callId, this.toolName, err)
      }
    }
    this.#resolve!(view)
  }
  static stages = {
    metricsStart: (c: WalkCall) => c.#host.metrics.started(c.#entry.metricsId),
    metricsEnd: (c: WalkCall) => c.#host.metrics.succeeded(c.#entry.metricsId, c.#clock),
  }
}
const walkHost: Host = {
  metrics,
  track: (c) => {
    const i = WalkCall.seqOf(c) & (SLOTS - 1)
    if (slots[i] === undefined) slots[i] = c
  },
  untrack: (c) => {
    const i = WalkCall.seqOf(c) & (SLOTS - 1)
    if (slots[i] === c) slots[i] = undefined
  },
  reportError: () => undefined,
}
const walkEntry = entryFor('echo_walk')
const walkPipeline = { start: [WalkCall.stages.metricsStart], gates: [] as Stage[], settle: [WalkCall.stages.metricsEnd] }
const walkTools = new Map([['echo_walk', walkEntry]])
let walkSeq = 0
const walkPrefix = 'call_w_'
// manager.ts's layers: callJson → callParsed → dispatch → admitChecked → admit → admitValid
function readOptionsLike(o: unknown): undefined {
  if (o === undefined || o === null) return undefined
  throw new Error('spike: no options')
}
function admitValid(entry: ToolEntry, input: unknown, options: undefined): WalkCall {
  const seq = options === undefined ? ++walkSeq : 0
  return new WalkCall(walkHost, entry, walkPipeline, walkPrefix + seq, input, seq)
}
function admit(name: string, input: unknown, options: undefined, textLength: number): WalkCall | { result: unknown } {
  const entry = walkTools.get(name)
  if (entry === undefined) return { result: 'unknown' }
  const parsed = textLength < 0 ? undefined : entry.validate.parsed
  const issues: unknown = parsed === undefined ? entry.validate(input) : parsed(input, textLength)
  if (issues !== undefined) return { result: issues }
  return admitValid(entry, input, options)
}
function admitChecked(name: unknown, input: unknown, options: unknown, textLength: number): WalkCall | { result: unknown } {
  const opts = readOptionsLike(options)
  if (typeof name !== 'string') return { result: 'name' }
  return admit(name, input, opts, textLength)
}
function dispatch(name: string, input: unknown, options: unknown, textLength: number): Promise<CallResult> {
  const a = admitChecked(name, input, options, textLength)
  if (a instanceof WalkCall) return a.start()
  throw new Error('spike: refused')
}
function walkCallJson(name: string, text: string, options?: unknown): Promise<CallResult> {
  try {
    const input = parseArgs(text, maxValues)
    if (!(input instanceof ToolResult)) {
      try {
        return dispatch(name, input, options, text.length)
      } catch (err) {
        throw err
      }
    }
    throw new Error('spike: bad args')
  } catch (err) {
    return Promise.reject(err)
  }
}

// ---------------------------------------------------------------- closure: composed once per tool
/** The per-call object the body sees as ctx (today the Call itself): id, name, the fields a cancel finds. */
class LiteCall {
  state = 0
  clock: number
  constructor(
    readonly callId: string,
    readonly toolName: string,
    readonly seq: number,
  ) {
    this.clock = performance.now()
  }
}
/**
 * What `compose` would return for a tool with start=[metricsStart], gates=[], settle=[metricsEnd]
 * and no check: a closure whose stage calls are straight lines. A tool with gates, listeners, a
 * tracer or a store (or a call with options) takes the general path (today's Call).
 */
interface Cuts {
  /** JSON.parse instead of parseArgs (no shape pre-scan, no try). */
  readonly parse?: boolean
  /** frozenCopy (the floor's) instead of resultData (toJSON, limits, cycles, redaction, well-formed keys). */
  readonly copy?: boolean
  /** no helper/model/brand checks. */
  readonly checks?: boolean
  /** no metrics. */
  readonly metrics?: boolean
  /** a frozen literal instead of okView's OkView class. */
  readonly view?: boolean
}
function compileNoGate(entry: ToolEntry, m: MetricsBuffer, prefix: string, cut: Cuts = {}): (text: string, options?: unknown) => Promise<CallResult> {
  const { metricsId, sensitiveKey, untrusted, name } = entry
  const run = entry.def.run as (i: unknown, c: unknown) => unknown
  const check = entry.validate.parsed!
  let seq = 0
  return (text, options) => {
    if (options !== undefined) throw new Error('spike: general path')
    const input = cut.parse === true ? JSON.parse(text) : parseArgs(text, maxValues)
    if (input instanceof ToolResult || check(input, text.length) !== undefined) throw new Error('spike: general path')
    const n = ++seq
    const call = new LiteCall(prefix + n, name, n)
    const i = n & (SLOTS - 1)
    if (slots[i] === undefined) slots[i] = call
    if (cut.metrics !== true) m.started(metricsId)
    const ret = run(input, call) as Promise<unknown>
    return PromiseThen.call(ret, (value: unknown) => {
      call.state = 1
      if (slots[i] === call) slots[i] = undefined
      if (cut.checks !== true && (isHelperResult(value) || isModelResult(value) || ToolResult.isBranded(value))) throw new Error('spike: plain values only')
      const data = cut.copy === true ? frozenCopy(value) : resultData(value, sensitiveKey)
      const view = cut.view === true ? (Object.freeze({ status: 'ok', data, callId: call.callId }) as unknown as CallResult) : okView(data as never, call.callId, untrusted)
      if (cut.metrics !== true) m.succeeded(metricsId, performance.now() - call.clock)
      return view
    }) as Promise<CallResult>
  }
}
const closureCall = compileNoGate(entryFor('echo_closure'), metrics, 'call_c_')
const ablations: { name: string; cut: Cuts }[] = [
  { name: 'closure − parseArgs', cut: { parse: true } },
  { name: 'closure − resultData', cut: { copy: true } },
  { name: 'closure − result checks', cut: { checks: true } },
  { name: 'closure − metrics', cut: { metrics: true } },
  { name: 'closure − okView', cut: { view: true } },
  { name: 'closure − all five', cut: { parse: true, copy: true, checks: true, metrics: true, view: true } },
]

// ---------------------------------------------------------------- harness
const rows: { name: string; run: () => Promise<unknown> }[] = [
  { name: 'floor (bench row)', run: () => floor(argsText) },
  { name: 'tm.callJson (src)', run: () => tm.callJson('echo', argsText) },
  { name: 'walk (model)', run: () => walkCallJson('echo_walk', argsText) },
  { name: 'closure (specialised)', run: () => closureCall(argsText) },
  ...(process.argv.includes('--ablate')
    ? ablations.map((a, i) => {
        const f = compileNoGate(entryFor(`echo_ab${i}`), metrics, `call_a${i}_`, a.cut)
        return { name: a.name, run: () => f(argsText) }
      })
    : []),
]
const only = process.argv.find((a) => a.startsWith('--only='))?.slice(7)
if (only !== undefined) rows.splice(0, rows.length, ...rows.filter((r) => r.name.startsWith(only)))
const rounds = Number(process.argv.find((a) => /^\d+$/.test(a)) ?? 15)
const CALLS = 20_000

async function sample(run: () => Promise<unknown>, n: number): Promise<number> {
  const t0 = performance.now()
  for (let i = 0; i < n; i++) await run()
  return ((performance.now() - t0) * 1e6) / n
}
const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2
}

for (const r of rows) {
  const v = (await r.run()) as { status?: string; data?: { echoed?: string } }
  if (v.status !== 'ok' || v.data?.echoed !== 'hellohellohello') throw new Error(`${r.name}: ${JSON.stringify(v)}`)
  await sample(r.run, CALLS) // warm-up
}
const times = rows.map(() => [] as number[])
const ratios = rows.map(() => [] as number[])
for (let round = 0; round < rounds; round++) {
  const t = new Array<number>(rows.length)
  for (let k = 0; k < rows.length; k++) {
    const j = (k + round) % rows.length
    t[j] = await sample(rows[j]!.run, CALLS)
  }
  for (let j = 0; j < rows.length; j++) {
    times[j]!.push(t[j]!)
    ratios[j]!.push(t[j]! / t[0]!) // × the first row (the floor, unless --only)
  }
}
console.log(`node ${process.version}, ${rounds} rounds × ${CALLS} calls, loadavg ${(await import('node:fs')).readFileSync('/proc/loadavg', 'utf8').trim()}`)
console.log('row                       median ns   × floor (median of per-round ratios)')
for (let j = 0; j < rows.length; j++) {
  console.log(`${rows[j]!.name.padEnd(25)} ${median(times[j]!).toFixed(0).padStart(9)}   ${median(ratios[j]!).toFixed(2)}`)
}
if (durations < 0) console.log(durations)
