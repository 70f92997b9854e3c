/**
 * The child process of the fuzzing harness. It receives case descriptors over IPC,
 * builds the hostile values they describe, runs them against toolwire (imported from
 * src/, bundled by test/fuzz/bundle.ts), and answers one report per case: the
 * properties it saw broken, and the longest event-loop block. A crash, a hang or a
 * runaway heap of this process is what the parent reports as "the process died".
 *
 * An unhandled rejection or an uncaught exception is recorded against the current
 * case (it would end a production process) and the runner keeps serving.
 */
import { PassThrough } from 'node:stream'
import { isDeepStrictEqual } from 'node:util'
import { CallToolResultSchema, JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js'
import { ToolManager, ToolResult, ToolwireWireError, cancelled, errorResult, invalid, ok, pending, refuse, toCanonical, toModel, type CallResult, type EvidenceRecord, type ToolContext, type ToolEvents } from '../../src/index.js'
import { toAnthropic, toGemini, toMcp, toOpenAIChat, toOpenAIResponses } from '../../src/render/index.js'
import { createMcpServer } from '../../src/mcp/server.js'
import { StdioLineTransport } from '../../src/mcp/stdio.js'
import { canonicalizeResult } from '../../src/core/native.js'
import { neverSettles, SECRET, type Body, type CallCase, type DecodeCase, type HV, type McpCase, type Op, type Report, type SchemaCase, type SchemaD, type SchemaInput, type ToolD } from './cases.js'

// ------------------------------------------------------------------ event-loop ticker

// A block is a stretch without a tick during which this process was on the CPU: the gap
// is min(wall-clock time, CPU time used). A process the OS did not schedule (a loaded CI
// machine) has a long wall-clock gap but little CPU time, and is not blocked by toolwire.
const cpuMs = (): number => {
  const u = process.cpuUsage()
  return (u.user + u.system) / 1000
}
let lastWall = performance.now()
let lastCpu = cpuMs()
let maxGap = 0
function observe(): void {
  const wall = performance.now()
  const cpu = cpuMs()
  const gap = Math.min(wall - lastWall, cpu - lastCpu)
  if (gap > maxGap) maxGap = gap
  lastWall = wall
  lastCpu = cpu
}
setInterval(observe, 5)
/** The harness's own synchronous work (scanning outputs) is left out of the measure. */
let pausedWall = 0
let pausedCpu = 0
function pauseGap(): void {
  observe()
  pausedWall = performance.now()
  pausedCpu = cpuMs()
}
function resumeGap(): void {
  lastWall += performance.now() - pausedWall
  lastCpu += cpuMs() - pausedCpu
}
function resetGap(): void {
  lastWall = performance.now()
  lastCpu = cpuMs()
  maxGap = 0
}
function readGap(): number {
  observe()
  return maxGap
}

// ------------------------------------------------------------------ process-level failures

let current: string[] = []
process.on('unhandledRejection', (reason) => {
  current.push(`crash: unhandled rejection (${describeThrown(reason)})`)
})
process.on('uncaughtException', (error) => {
  current.push(`crash: uncaught exception (${describeThrown(error)})`)
})

function describeThrown(v: unknown): string {
  try {
    if (v instanceof Error) return `${v.name}: ${String(v.message).slice(0, 120)}`
    return typeof v === 'object' ? `${Object.prototype.toString.call(v)}` : typeof v
  } catch {
    return 'an unreadable value'
  }
}

const tick = (): Promise<void> => new Promise((r) => setImmediate(r))
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms))

// ------------------------------------------------------------------ hostile values

const secretError = (): Error => new Error(`boom ${SECRET}`)

/**
 * Builds the value a descriptor describes (fresh each time). `thrown` says where the
 * value goes: thrown or rejected (its readable text is then SECRET, which must never be
 * shown), or returned as the tool's data (its text is public: the tool chose to return
 * it). Whatever a getter or a trap throws is always secret.
 */
export function hv(d: HV, depth = 0, thrown = false): unknown {
  const text = thrown ? SECRET : 'public-text'
  switch (d.k) {
    case 'json':
      return structuredClone(d.v)
    case 'prim':
      switch (d.v) {
        case 'undefined':
          return undefined
        case 'null':
          return null
        case 'nan':
          return NaN
        case 'bigint':
          return 10n ** 30n
        case 'symbol':
          return Symbol(text)
        case 'secretString':
          return `leaked ${text}`
        case 'number':
          return 42
        case 'true':
          return true
        case 'negzero':
          return -0
      }
      break
    case 'error': {
      const e =
        d.ctor === 'AggregateError'
          ? new AggregateError([new Error(text)], `agg ${text}`)
          : d.ctor === 'DOMException'
            ? new DOMException(`dom ${text}`, 'AbortError')
            : d.ctor === 'TypeError'
              ? new TypeError(`type ${text}`)
              : new Error(`boom ${text}`)
      if (d.throwing !== undefined) {
        Object.defineProperty(e, d.throwing, {
          get() {
            throw secretError()
          },
          configurable: true,
        })
      }
      return e
    }
    case 'errorLike': {
      const o: Record<string, unknown> = { kind: d.kind, message: 'fine', retryable: true }
      if (d.secretIn === 'retryable') o.retryable = text
      else o[d.secretIn] = d.secretIn === 'details' ? { note: text } : text
      return o
    }
    case 'nullProto': {
      const o = Object.create(null) as Record<string, unknown>
      o.message = text
      o.kind = 'network'
      return o
    }
    case 'getterThrows': {
      const o: Record<string, unknown> = {}
      for (const key of d.keys) {
        Object.defineProperty(o, key, {
          enumerable: true,
          get() {
            throw depth > 3 ? secretError() : hv(d.thrown, depth + 1, true)
          },
        })
      }
      return o
    }
    case 'proxy': {
      const target = d.target === 'array' ? [] : d.target === 'function' ? () => text : d.target === 'error' ? new Error(text) : { message: text }
      const thrower = (): never => {
        throw secretError()
      }
      const traps: ProxyHandler<object> =
        d.trap === 'all'
          ? { get: thrower, has: thrower, ownKeys: thrower, getPrototypeOf: thrower, getOwnPropertyDescriptor: thrower, set: thrower, apply: thrower }
          : { [d.trap]: thrower }
      return new Proxy(target, traps)
    }
    case 'revoked': {
      const target = d.target === 'array' ? [] : d.target === 'function' ? () => 1 : {}
      const { proxy, revoke } = Proxy.revocable(target, {})
      revoke()
      return proxy
    }
    case 'thenable': {
      // what a thenable resolves with is data; what it rejects with or throws is secret
      const inner = (): unknown => hv(d.v, depth + 1, thrown)
      const failure = (): unknown => hv(d.v, depth + 1, true)
      switch (d.mode) {
        case 'resolve':
          return { then: (res: (v: unknown) => void) => res(inner()) }
        case 'reject':
          return { then: (_: unknown, rej: (v: unknown) => void) => rej(failure()) }
        case 'resolveThenReject':
          return {
            then(res: (v: unknown) => void, rej: (v: unknown) => void) {
              res(inner())
              rej(failure())
              res(inner())
            },
          }
        case 'rejectThenResolve':
          return {
            then(res: (v: unknown) => void, rej: (v: unknown) => void) {
              rej(failure())
              res(inner())
            },
          }
        case 'never':
          return { then: () => undefined }
        case 'thenThrows':
          return {
            then() {
              throw failure()
            },
          }
        case 'thenGetterThrows':
          return Object.defineProperty({}, 'then', {
            get() {
              throw secretError()
            },
          })
        case 'late':
          return { then: (res: (v: unknown) => void) => void setTimeout(() => res(inner()), 3) }
      }
      break
    }
    case 'cycle': {
      const o: Record<string, unknown> = { a: [1] }
      o.self = o
      ;(o.a as unknown[]).push(o)
      return o
    }
    case 'deep': {
      let v: unknown = 'leaf'
      for (let i = 0; i < d.depth; i++) v = d.arrays ? [v] : { n: v }
      return v
    }
    case 'huge':
      return { blob: 'x'.repeat(d.kb * 1024) }
    case 'wide':
      return Array.from({ length: d.n }, (_, i) => ({ i }))
    case 'date':
      return { at: new Date(0), bad: new Date(NaN) }
    case 'loneSurrogate':
      return { text: 'a\uD800b', key: { '\uDC00': 1 } }
    case 'function':
      return () => text
    case 'toJSONThrows':
      return {
        toJSON() {
          throw secretError()
        },
      }
    case 'helper': {
      const p = hv(d.payload, depth + 1, thrown)
      try {
        switch (d.which) {
          case 'ok':
            return ok(p)
          case 'invalid':
            return invalid(p as string)
          case 'refuse':
            return refuse(p as string, 'declined')
          case 'refuseNaN':
            return refuse('stale', 'Reload', { rev: NaN })
          case 'cancelled':
            return cancelled(p as 'operator')
          case 'errorResult':
            return errorResult(p as string)
          case 'pending':
            return pending(p as never)
        }
      } catch {
        // a helper rejecting its argument is fine: the tool then returns the raw payload
        return p
      }
      break
    }
    case 'modelResult': {
      const parts =
        d.parts === 'none'
          ? undefined
          : d.parts === 'badBase64'
            ? [{ type: 'image', mimeType: 'image/png', data: '%%%not base64%%%' }]
            : d.parts === 'valid'
              ? [{ type: 'image', mimeType: 'image/png', data: 'iVBORw0KGgo=', name: 'a.png' }]
              : d.parts === 'notArray'
                ? 'parts'
                : [hv(d.output, depth + 1, thrown), { type: 'image', mimeType: 42, data: 1n }]
      const r: Record<string, unknown> = { output: hv(d.output, depth + 1, thrown), isError: hv(d.isError, depth + 1, thrown) }
      if (parts !== undefined) r.parts = parts
      if (d.metadata !== null) r.metadata = hv(d.metadata, depth + 1, thrown)
      return r
    }
    case 'forgedResult':
      return Object.create(ToolResult.prototype) as unknown
    case 'toolResult':
      try {
        switch (d.which) {
          case 'bigintStructured':
            return ToolResult.success({ text: 'n', structured: { n: 1n } as never })
          case 'mutableStructured':
            return ToolResult.success({ text: 'm', structured: { list: [1, 2], nested: { a: 1 } } })
          case 'hostileDetails':
            return ToolResult.failed({ kind: 'other', message: 'x', retryable: false, refusal: false, details: { f: () => 1 } as never })
          case 'untrustedParts':
            return ToolResult.success({ text: 'look', parts: [{ type: 'image', mimeType: 'image/png', data: 'iVBORw0KGgo=' }] }).withUntrusted(true)
        }
      } catch {
        return { note: 'constructor refused' }
      }
      break
  }
  return undefined
}

// ------------------------------------------------------------------ outputs and the secret scan

/** Every string reachable from `v` (keys included), without calling getters or toJSON. */
function strings(v: unknown, out: string[] = [], seen = new Set<unknown>()): string[] {
  if (typeof v === 'string') out.push(v)
  else if (typeof v === 'object' && v !== null && !seen.has(v)) {
    seen.add(v)
    for (const key of Reflect.ownKeys(v)) {
      if (typeof key === 'string') out.push(key)
      const desc = Reflect.getOwnPropertyDescriptor(v, key)
      if (desc !== undefined && 'value' in desc) strings(desc.value, out, seen)
      else if (desc !== undefined) out.push(`[accessor ${String(key)}]`)
    }
  }
  return out
}

/** Renders one view on every output; a renderer that throws is a violation too. */
/** The wires a model reads; a copied view must render each byte-identically. */
const WIRES = ['toModel', 'toOpenAIChat', 'toOpenAIResponses', 'toAnthropic', 'toGemini', 'toMcp'] as const

/**
 * Renders one view on every output; a renderer that throws is a violation too. Yields
 * between renderers, so that each synchronous stretch the event-loop ticker measures is
 * one toolwire operation, not the harness's checks.
 */
async function renderAll(view: CallResult, tag: string, v: string[]): Promise<Map<string, string>> {
  const outputs = new Map<string, string>()
  const renderers: [string, () => unknown][] = [
    ['JSON.stringify(view)', () => JSON.stringify(view)],
    ['toJSONText', () => toCanonical(view).toJSONText()],
    ['toModel', () => toModel(view)],
    ['toOpenAIChat', () => toOpenAIChat(view, { toolCallId: 'c1' })],
    ['toOpenAIResponses', () => toOpenAIResponses(view, { callId: 'c1' })],
    ['toAnthropic', () => toAnthropic(view, { toolUseId: 'c1' })],
    ['toGemini', () => toGemini(view, { name: 't' })],
    ['toMcp', () => toMcp(view)],
  ]
  pauseGap()
  outputs.set('view (own data)', strings(view).join('\u0000'))
  resumeGap()
  for (const [what, f] of renderers) {
    await tick()
    let r: unknown
    try {
      r = f()
    } catch (err) {
      v.push(`render: ${what} of ${tag} threw ${describeThrown(err)}`)
      continue
    }
    pauseGap()
    outputs.set(what, typeof r === 'string' ? r : JSON.stringify(r))
    resumeGap()
  }
  return outputs
}

function scanSecrets(outputs: Map<string, string>, tag: string, v: string[]): void {
  for (const [what, text] of outputs) if (text.includes(SECRET)) v.push(`secret: ${SECRET} appears in ${what} of ${tag}`)
}

/** A copy (JSON, structuredClone) renders byte-identically to the live view on every wire. */
async function checkCopies(view: CallResult, live: Map<string, string>, v: string[]): Promise<void> {
  let copies: [string, CallResult][]
  await tick()
  try {
    copies = [
      ['JSON copy', JSON.parse(JSON.stringify(view)) as CallResult],
      ['structuredClone', structuredClone(view)],
    ]
  } catch (err) {
    v.push(`copy: the view cannot be copied (${describeThrown(err)})`)
    return
  }
  for (const [how, copy] of copies) {
    const scratch: string[] = []
    const rendered = await renderAll(copy, how, scratch)
    for (const what of WIRES) {
      if (rendered.get(what) !== live.get(what)) v.push(`copy: ${what} of a ${how} differs from the live view (status ${String(view.status)})`)
    }
  }
}

// ------------------------------------------------------------------ op: call

function bodyOf(d: Body, probe: { n: number }): (input: unknown, ctx: ToolContext) => unknown {
  // the value the body returns or throws is built before the call: building a large one is
  // the tool's work, not toolwire's, and stays out of the event-loop measure
  const pre = 'v' in d ? hv(d.v, 0, d.b === 'throw' || d.b === 'reject' || (d.b === 'hangSignal' && d.then === 'rejectHostile')) : undefined
  const secretPre = 'v' in d ? hv(d.v, 0, true) : undefined
  return (_input, ctx) => {
    if (probe.n++ > 0) return 'probe'
    switch (d.b) {
      case 'return': {
        const v = pre
        return d.how === 'sync' ? v : d.how === 'promise' ? Promise.resolve().then(() => v) : new Promise((r) => setTimeout(() => r(v), 2))
      }
      case 'throw':
        throw pre
      case 'reject':
        return d.how === 'promise' ? Promise.reject(pre) : new Promise((_, rej) => setTimeout(() => rej(pre), 2))
      case 'hangSignal': {
        const signal = ctx.signal
        return new Promise((resolve, reject) => {
          signal.addEventListener('abort', () => {
            if (d.then === 'resolve') resolve(pre)
            else if (d.then === 'rejectReason') reject(signal.reason)
            else reject(pre)
          })
        })
      }
      case 'hangForever':
        return new Promise(() => undefined)
      case 'ctxAbuse': {
        if (d.what === 'progressHostile') ctx.reportProgress(pre as number, pre as number, pre as string)
        else if (d.what === 'undoNotFunction') ctx.registerUndo(pre as () => unknown)
        else if (d.what === 'undoThrows')
          ctx.registerUndo(() => {
            throw secretPre
          })
        else setTimeout(() => void ctx.signal.aborted, 1)
        return pre
      }
    }
  }
}

function schemaOf(t: ToolD): object | boolean {
  switch (t.schema) {
    case 'object':
      return { type: 'object' }
    case 'true':
      return true
    case 'secretChecks':
      return {
        type: 'object',
        properties: {
          password: { type: 'string', minLength: 40, maxLength: 41, pattern: '^[0-9]+$', enum: ['a'], format: 'email' },
          'cc-number': { type: 'integer', const: 3 },
          apiKey: { type: 'string', maxLength: 2 },
        },
      }
    case 'core':
      return {
        type: 'object',
        properties: { password: { type: 'string', minLength: 40, pattern: '^[0-9]+$' }, apiKey: { const: 'x' } },
        unevaluatedProperties: false,
      }
  }
}

function toolOf(name: string, d: CallCase, probe: { n: number }): Record<string, unknown> {
  const t = d.tool
  const tool: Record<string, unknown> = {
    name,
    description: 'fuzzed',
    inputSchema: schemaOf(t),
    run: bodyOf(d.body, probe),
    concurrency: { limit: t.limit, queue: 10 },
  }
  if (t.sensitive) tool.sensitive = ['apiKey', 'note']
  if (t.untrusted) tool.hints = { untrustedContent: true }
  if (t.outputSchema) tool.outputSchema = { type: 'object', properties: { n: { type: 'integer' } } }
  const thrower = (): never => {
    throw secretError()
  }
  if (t.confirm === 'true') tool.needsConfirmation = true
  else if (t.confirm === 'fnThrows') tool.needsConfirmation = thrower
  else if (t.confirm === 'fnRejects') tool.needsConfirmation = () => Promise.reject(secretError())
  else if (t.confirm === 'fnHostile') tool.needsConfirmation = () => hv({ k: 'proxy', trap: 'all', target: 'object' })
  if (t.summarize === 'throws') tool.summarize = thrower
  else if (t.summarize === 'hostile') tool.summarize = () => hv({ k: 'getterThrows', keys: ['toString', 'length'], thrown: { k: 'prim', v: 'secretString' } })
  if (t.preview === 'sensitive')
    tool.previewChanges = (input: Record<string, unknown>) => [
      { path: '/password', before: 'old', after: typeof input?.password === 'string' ? input.password : `${SECRET}-new` },
      { path: '/cc-number', before: `${SECRET}-cc` },
      ...(t.sensitive ? [{ path: '/apiKey', after: `${SECRET}-key` }] : []),
    ]
  else if (t.preview === 'throws') tool.previewChanges = thrower
  else if (t.preview === 'rejects') tool.previewChanges = () => Promise.reject(secretError())
  else if (t.preview === 'hostile') tool.previewChanges = () => [hv({ k: 'getterThrows', keys: ['path', 'after'], thrown: { k: 'error', ctor: 'Error' } })]
  if (t.permission === 'allow') tool.permission = () => true
  else if (t.permission === 'throws') tool.permission = thrower
  else if (t.permission === 'rejects') tool.permission = () => Promise.reject(secretError())
  else if (t.permission === 'hostile') tool.permission = () => hv({ k: 'getterThrows', keys: ['allow', 'code', 'message'], thrown: { k: 'error', ctor: 'Error' } })
  return tool
}

function inputOf(d: CallCase): unknown {
  switch (d.call.input) {
    // apiKey and note are secrets only when the tool declares them sensitive
    case 'secrets':
      return d.tool.sensitive
        ? { password: `${SECRET}-pw`, 'cc-number': `${SECRET}-cc`, apiKey: `${SECRET}-api`, note: `${SECRET}-note`, n: 1 }
        : { password: `${SECRET}-pw`, 'cc-number': `${SECRET}-cc`, apiKey: 'public', note: 'public', n: 1 }
    case 'secretToJSON':
      return { n: 1, inner: { toJSON: () => ({ password: `${SECRET}-tojson`, 'cc-exp': `${SECRET}-tojson` }) } }
    case 'hostile':
      return hv(d.call.inputHV)
    case 'json':
      return hv(d.call.inputHV)
  }
}

function nameOf(d: CallCase, registered: string): unknown {
  switch (d.call.name) {
    case 'registered':
      return registered
    case 'unknown':
      return `missing-${SECRET}`.slice(0, 7)
    case 'throwingToString':
      return {
        toString() {
          throw secretError()
        },
      }
    case 'proxy':
      return hv({ k: 'proxy', trap: 'all', target: 'object' })
    case 'symbol':
      return Symbol('n')
    case 'object':
      return { name: registered }
  }
}

let seq = 0

/** An evidence store whose every write fails. */
class ThrowingEvidence {
  append(): void {
    throw secretError()
  }
  readAll(): Promise<readonly EvidenceRecord[]> {
    return Promise.reject(secretError())
  }
}

/** The first object in `v` that is not frozen, as a path, or undefined. */
function unfrozen(v: unknown, path = '', seen = new Set<unknown>()): string | undefined {
  if (typeof v !== 'object' || v === null || seen.has(v)) return undefined
  seen.add(v)
  if (!Object.isFrozen(v)) return path || '(root)'
  for (const key of Object.keys(v)) {
    const bad = unfrozen((v as Record<string, unknown>)[key], `${path}/${key}`, seen)
    if (bad !== undefined) return bad
  }
  return undefined
}

/** A view has a status, is deeply frozen, and survives JSON and structuredClone unchanged. */
function checkView(view: CallResult, i: number, v: string[]): void {
  if (typeof view.status !== 'string') v.push(`view: result ${i} has no status`)
  const bad = unfrozen(view)
  if (bad !== undefined) v.push(`view: result ${i} (${String(view.status)}) is not deeply frozen at ${bad}`)
  try {
    if (!isDeepStrictEqual(JSON.parse(JSON.stringify(view)), { ...view })) v.push(`view: result ${i} (${String(view.status)}) changes in a JSON round trip`)
  } catch (err) {
    v.push(`view: result ${i} (${String(view.status)}) is not JSON-safe (${describeThrown(err)})`)
  }
  try {
    if (!isDeepStrictEqual(structuredClone(view), { ...view })) v.push(`view: result ${i} (${String(view.status)}) changes in structuredClone`)
  } catch (err) {
    v.push(`view: result ${i} (${String(view.status)}) cannot be structured-cloned (${describeThrown(err)})`)
  }
}

/** Evidence records kept in memory, to scan them. */
class MemoryEvidence {
  readonly records: EvidenceRecord[] = []
  append(record: EvidenceRecord): void {
    this.records.push(record)
  }
  readAll(): Promise<readonly EvidenceRecord[]> {
    return Promise.resolve(this.records)
  }
}

async function runCall(d: CallCase): Promise<string[]> {
  const v = current
  const observers = d.call.observers
  const evidence = observers === 'none' ? undefined : observers === 'all' ? new MemoryEvidence() : new ThrowingEvidence()
  const tm = new ToolManager(evidence === undefined ? { development: true } : { development: true, evidence })
  const name = `t${++seq}`
  const probe = { n: 0 }
  try {
    tm.register(toolOf(name, d, probe) as never)
  } catch (err) {
    v.push(`setup: register threw ${describeThrown(err)}`)
    return v
  }
  const ends: ToolEvents['call_end'][] = []
  if (observers !== 'none') tm.on('call_end', (e) => void ends.push(e))
  if (observers === 'all') tm.on('error', () => undefined)
  if (observers === 'throwing') {
    const readAll = (e: object): never => {
      // a listener that reads every field it is given, then throws
      for (const value of Object.values(e)) void String(value)
      throw secretError()
    }
    tm.on('error', readAll)
    tm.on('call_end', readAll)
    tm.on('call_start', readAll)
    tm.on('progress', () => Promise.reject(secretError()))
  }

  const ac = new AbortController()
  // a caller-chosen id, or (generatedId) none: the manager's generated ids and its fast path
  let callId = `fz-${seq}`
  if (d.call.generatedId) {
    // the generated id is known from call_start, emitted synchronously by the call
    if (d.call.options === 'cancel') tm.on('call_start', (e) => void (callId = e.callId))
  }
  let options: unknown
  switch (d.call.options) {
    case 'none':
      options = { callId }
      break
    case 'timeout':
      options = { callId, timeoutMs: d.call.ms }
      break
    case 'abort':
      options = { callId, signal: ac.signal }
      setTimeout(() => ac.abort(hv({ k: 'error', ctor: 'Error' })), d.call.ms)
      break
    case 'preAborted':
      ac.abort(secretError())
      options = { callId, signal: ac.signal }
      break
    case 'cancel':
      options = { callId }
      setTimeout(() => tm.cancel(callId), d.call.ms)
      break
    case 'hostileOptions':
      options = hv({ k: 'getterThrows', keys: ['signal', 'callId', 'timeoutMs'], thrown: { k: 'error', ctor: 'Error' } })
      break
    case 'proxyOptions':
      options = hv({ k: 'proxy', trap: 'all', target: 'object' })
      break
    case 'hostileSignal':
      options = { callId, signal: hv({ k: 'proxy', trap: 'get', target: 'object' }) }
      break
    case 'badTimeout':
      options = { callId, timeoutMs: [NaN, -1, Infinity, 1e12][d.call.ms % 4] }
      break
  }
  if (d.call.generatedId && d.call.options !== 'hostileOptions' && d.call.options !== 'proxyOptions') {
    const { callId: _, ...rest } = options as Record<string, unknown>
    options = Object.keys(rest).length === 0 ? undefined : rest
  }
  const nameArg = nameOf(d, name)
  const input = inputOf(d)
  let text: unknown
  if (d.call.via === 'callJson') {
    try {
      text = JSON.stringify(input) ?? 'null'
    } catch {
      text = input
    }
  }
  const calls: unknown[] = [{ name: nameArg, input, options }]
  if (d.call.hostileEntry) calls.push(hv({ k: 'getterThrows', keys: ['name', 'args', 'input', 'options'], thrown: { k: 'error', ctor: 'Error' } }), null, 7)
  // building the case is done: what follows is toolwire's work
  resetGap()

  let settledCount = 0
  let views: CallResult[] = []
  let promise: Promise<unknown>
  try {
    if (d.call.via === 'call') promise = tm.call(nameArg as string, input, options as never)
    else if (d.call.via === 'callJson') promise = tm.callJson(nameArg as string, text as string, options as never)
    else promise = tm.callMany(calls as never)
  } catch (err) {
    v.push(`settle: ${d.call.via} threw synchronously (${describeThrown(err)})`)
    return v
  }
  if (!(promise instanceof Promise)) {
    v.push(`settle: ${d.call.via} did not return a promise`)
    return v
  }
  const deadline = new Promise<'late'>((r) => setTimeout(() => r('late'), 2000))
  const outcome = await Promise.race([
    promise.then(
      (r) => {
        settledCount++
        return r
      },
      (err: unknown) => {
        v.push(`settle: ${d.call.via} rejected (${describeThrown(err)})`)
        return undefined
      },
    ),
    deadline,
  ])
  if (outcome === 'late') {
    v.push(`settle: ${d.call.via} did not settle within 2 s`)
    return v
  }
  if (outcome === undefined) return v
  views = d.call.via === 'callMany' ? [...(outcome as CallResult[])] : [outcome as CallResult]
  // late timers, aborts and body settlements
  await sleep(d.call.ms + 8)
  await tick()
  for (const [i, view] of views.entries()) {
    if (typeof view !== 'object' || view === null) {
      v.push(`settle: result ${i} is not a view`)
      continue
    }
    pauseGap()
    checkView(view, i, v)
    resumeGap()
    const live = await renderAll(view, `result ${i} (${String(view.status)})`, v)
    scanSecrets(live, `result ${i} (${String(view.status)})`, v)
    await checkCopies(view, live, v)
  }
  await tick()
  pauseGap()
  const perCall = new Map<string, number>()
  for (const e of ends) perCall.set(e.callId, (perCall.get(e.callId) ?? 0) + 1)
  for (const [id, n] of perCall) if (n !== 1) v.push(`settle: ${n} call_end events for one call (${id === callId ? 'the fuzzed call' : 'another'})`)
  if (observers !== 'none' && perCall.size < views.length) v.push(`settle: ${views.length - perCall.size} call(s) settled without a call_end event`)
  if (settledCount !== 1) v.push(`settle: the promise settled ${settledCount} times`)
  for (const e of ends) {
    let record: string
    try {
      record = JSON.stringify(e.record)
    } catch (err) {
      v.push(`render: call_end record threw ${describeThrown(err)}`)
      continue
    }
    if (record.includes(SECRET)) v.push(`secret: ${SECRET} appears in the call_end record`)
    if (strings(e.view).join('\u0000').includes(SECRET)) v.push(`secret: ${SECRET} appears in the call_end view (${String(e.view.status)})`)
  }
  for (const r of evidence instanceof MemoryEvidence ? evidence.records : []) {
    let text: string
    try {
      text = JSON.stringify(r)
    } catch (err) {
      v.push(`render: an evidence record threw ${describeThrown(err)}`)
      continue
    }
    if (text.includes(SECRET)) v.push(`secret: ${SECRET} appears in an evidence record`)
  }
  resumeGap()

  // the slot and the in-flight entry are released: a second call of the tool settles (a
  // body that never settles, even aborted, may keep its slot: the limit counts running bodies)
  const mayHoldSlot = neverSettles(d.body) && probe.n > 0
  if (d.call.name === 'registered' && !d.call.options.startsWith('hostile') && d.call.options !== 'proxyOptions' && !mayHoldSlot) {
    // the body's first run is the one that misbehaves (later runs answer at once): when the first
    // call never started it (refused, invalid, cancelled first), the second call's timeout is its
    // own body hanging, not a slot that was kept
    const runsBefore = probe.n
    const second = await Promise.race([tm.call(name, input, { timeoutMs: 500 }), sleep(1500).then(() => 'late' as const)])
    if (second === 'late') v.push('leak: a second call of the tool did not settle')
    else if (second.status === 'error' && second.kind === 'timeout' && probe.n === runsBefore) v.push('leak: a second call of the tool waited for a slot until it timed out')
    await sleep(2)
  }
  try {
    const inFlight = tm.metrics().tools.reduce((n, t) => n + t.in_flight, 0)
    if (inFlight !== 0) v.push(`leak: ${inFlight} call(s) still in flight after settling`)
  } catch (err) {
    v.push(`leak: metrics threw ${describeThrown(err)}`)
  }
  return v
}

// ------------------------------------------------------------------ op: schema

function schemaTree(d: SchemaD): unknown {
  switch (d.s) {
    case 'refRoot':
      return d.sibling === 'none'
        ? { $ref: '#' }
        : d.sibling === 'unevaluatedProperties'
          ? { $ref: '#', unevaluatedProperties: false }
          : d.sibling === 'properties'
            ? { $ref: '#', properties: { a: { $ref: '#' } } }
            : { allOf: [{ $ref: '#' }] }
    case 'refCycle': {
      const defs: Record<string, unknown> = {}
      for (let i = 0; i < d.len; i++) {
        const next = { $ref: `#/$defs/d${(i + 1) % d.len}` }
        defs[`d${i}`] =
          d.via === 'ref' ? next : d.via === 'allOf' ? { allOf: [next] } : d.via === 'items' ? { items: next } : { properties: { x: next } }
      }
      return { $defs: defs, $ref: '#/$defs/d0', ...(d.unevaluated ? { unevaluatedProperties: false } : {}) }
    }
    case 'dynamic':
      return { $dynamicAnchor: 'n', $defs: { x: { $dynamicRef: '#n' } }, $ref: '#/$defs/x', unevaluatedItems: false }
    case 'deep': {
      let s: unknown = { type: 'string' }
      for (let i = 0; i < d.depth; i++) {
        s = d.via === 'allOf' ? { allOf: [s] } : d.via === 'properties' ? { type: 'object', properties: { n: s } } : d.via === 'items' ? { type: 'array', items: s } : { not: s }
      }
      return s
    }
    case 'redos':
      return { type: 'object', properties: { s: { type: 'string', pattern: d.pattern } }, ...(d.core ? { unevaluatedProperties: false } : {}) }
    case 'secretChecks':
      return {
        type: 'object',
        properties: {
          password: { type: 'string', minLength: 40, pattern: '^[0-9]+$', enum: ['a'], format: 'email', const: 'z' },
          n: { type: 'integer', maximum: 1, multipleOf: 7 },
          list: { type: 'array', contains: { const: 'q' }, uniqueItems: true, maxItems: 1 },
        },
        required: ['missing'],
        ...(d.core ? { unevaluatedProperties: false } : {}),
      }
    case 'bigEnum':
      return { enum: Array.from({ length: d.n }, (_, i) => `v${i}`) }
    case 'plain':
      return d.v
  }
}

function schemaInputOf(d: SchemaInput): unknown {
  switch (d.i) {
    case 'json':
      return d.v
    case 'deep': {
      let v: unknown = 1
      for (let i = 0; i < d.depth; i++) v = d.arrays ? [v, 1] : { n: v, a: 1 }
      return v
    }
    case 'redos':
      return { s: `${'a'.repeat(d.n)}!` }
    case 'secret':
      return { password: `${SECRET}-pw`, n: 3.5, list: [`${SECRET}-l`, `${SECRET}-l`], extra: `${SECRET}-x` }
    case 'wideArray':
      return { list: Array.from({ length: d.n }, () => `${SECRET}`), n: 'x' }
  }
}

async function runSchema(d: SchemaCase): Promise<string[]> {
  const v = current
  const tm = new ToolManager({ development: true })
  tm.on('error', () => undefined)
  const ends: ToolEvents['call_end'][] = []
  tm.on('call_end', (e) => void ends.push(e))
  // the schemas and the inputs' JSON text are built before the measure starts
  const inputSchema = schemaTree(d.schema)
  const outputSchema = schemaTree(d.schema)
  const texts = d.inputs.map((input) => JSON.stringify(schemaInputOf(input)))
  await tick()
  resetGap()
  try {
    tm.register({ name: 's', inputSchema: inputSchema as never, outputSchema: outputSchema as never, run: () => ({ ok: 1 }) })
  } catch {
    return v // rejected at registration: allowed
  }
  for (const text of texts) {
    let view: CallResult | 'late'
    await tick()
    try {
      view = await Promise.race([tm.callJson('s', text), sleep(3000).then(() => 'late' as const)])
    } catch (err) {
      v.push(`settle: callJson threw synchronously (${describeThrown(err)})`)
      continue
    }
    if (view === 'late') {
      v.push('settle: a call did not settle within 3 s')
      continue
    }
    const live = await renderAll(view, `the ${String(view.status)} view`, v)
    scanSecrets(live, `the ${String(view.status)} view`, v)
    if (view.status === 'invalid' && view.issues.length > 100) v.push(`size: ${view.issues.length} issues listed (cap them)`)
    const model = live.get('toModel') ?? ''
    if (model.length > 64 * 1024) v.push(`size: the model message is ${model.length} characters`)
  }
  for (const e of ends) {
    try {
      if (JSON.stringify(e.record).includes(SECRET)) v.push(`secret: ${SECRET} appears in the call_end record`)
    } catch (err) {
      v.push(`render: call_end record threw ${describeThrown(err)}`)
    }
  }
  return v
}

// ------------------------------------------------------------------ op: decode

function runDecode(d: DecodeCase): string[] {
  const v = current
  // the core's decoder alone: a string in, canonical text or an Error out
  let coreAccepts: boolean
  try {
    coreAccepts = typeof canonicalizeResult(d.text) === 'string'
  } catch (err) {
    if (!(err instanceof Error)) v.push(`decode: the core's decoder threw ${describeThrown(err)}, not an Error`)
    coreAccepts = false
  }
  let result: ToolResult
  try {
    result = ToolResult.fromJSON(d.text)
  } catch (err) {
    if (!(err instanceof ToolwireWireError)) v.push(`decode: fromJSON threw ${describeThrown(err)}, not a ToolwireWireError`)
    else if (d.canonical) v.push(`decode: a canonical document was rejected (${err.message.slice(0, 160)})`)
    if (coreAccepts) v.push('decode: fromJSON rejected what the core accepts')
    return v
  }
  let canonical: string
  try {
    canonical = canonicalizeResult(d.text)
  } catch (err) {
    v.push(`decode: the core rejected what fromJSON accepted (${describeThrown(err)})`)
    return v
  }
  let written: string
  try {
    written = result.toJSONText()
  } catch (err) {
    v.push(`decode: toJSONText of an accepted document threw ${describeThrown(err)}`)
    return v
  }
  if (written !== canonical) v.push('decode: toJSONText differs from the core canonical text')
  if (d.canonical && written !== d.text) v.push('decode: a canonical document does not round-trip byte-identically')
  try {
    const again = ToolResult.fromJSON(written).toJSONText()
    if (again !== written) v.push('decode: the canonical text does not round-trip byte-identically')
  } catch (err) {
    v.push(`decode: the canonical text is rejected (${describeThrown(err)})`)
  }
  try {
    JSON.stringify(result)
    const view = toModel(result)
    if (typeof view.output !== 'string') v.push('decode: the model view has no text output')
  } catch (err) {
    v.push(`decode: rendering an accepted document threw ${describeThrown(err)}`)
  }
  return v
}

// ------------------------------------------------------------------ op: mcp

function mcpManager(): ToolManager {
  const tm = new ToolManager()
  tm.on('error', () => undefined)
  tm.register({ name: 'echo', inputSchema: { type: 'object', properties: { text: { type: 'string' } } }, run: (i: { text?: string }) => ({ text: i.text ?? '' }) })
  tm.register({
    name: 'fails',
    inputSchema: { type: 'object' },
    run: () => {
      throw secretError()
    },
  })
  tm.register({
    name: 'secret_input',
    inputSchema: { type: 'object', properties: { password: { type: 'string', minLength: 40 } }, required: ['password'] },
    sensitive: ['password'],
    run: () => 'done',
  })
  tm.register({
    name: 'slow',
    inputSchema: { type: 'object' },
    timeoutMs: 40,
    run: (_i: unknown, ctx: ToolContext) => new Promise((r) => ctx.signal.addEventListener('abort', () => r('stopped'))),
  })
  tm.register({ name: 'confirm', inputSchema: { type: 'object' }, needsConfirmation: true, run: () => 'confirmed' })
  tm.register({
    name: 'image',
    inputSchema: { type: 'object' },
    hints: { untrustedContent: true },
    run: () => ({ output: 'pic', isError: false, parts: [{ type: 'image', mimeType: 'image/png', data: '%%bad base64%%' }] }),
  })
  return tm
}

interface Frame {
  readonly jsonrpc?: unknown
  readonly id?: unknown
  readonly result?: unknown
  readonly error?: { readonly code?: unknown; readonly message?: unknown }
  readonly method?: unknown
}

async function runMcp(d: McpCase): Promise<string[]> {
  const v = current
  const tm = mcpManager()
  const input = new PassThrough()
  const output = new PassThrough()
  const server = createMcpServer(tm)
  server.onerror = () => undefined
  const transport = new StdioLineTransport(input, output, { drainTimeoutMs: 200 })
  const frames: Frame[] = []
  const raw: string[] = []
  let buffered = ''
  output.on('data', (chunk: Buffer) => {
    buffered += chunk.toString('utf8')
    let nl: number
    while ((nl = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, nl)
      buffered = buffered.slice(nl + 1)
      raw.push(line)
      try {
        frames.push(JSON.parse(line) as Frame)
      } catch {
        v.push('mcp: the server wrote a line that is not JSON')
      }
    }
  })
  await server.connect(transport)
  const expected = new Map<string | number, string>() // id → method
  const cancelled = new Set<string | number>()
  const toolOfId = new Map<string | number, string>()
  const send = (o: unknown): void => void input.write(`${typeof o === 'string' ? o : JSON.stringify(o)}\n`)
  let nextId = 1
  const ids: (string | number)[] = []
  if (d.initialize) {
    expected.set(0, 'initialize')
    send({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'fuzz', version: '1' } } })
    send({ jsonrpc: '2.0', method: 'notifications/initialized' })
  }
  for (const f of d.frames) {
    switch (f.f) {
      case 'request': {
        const id = f.idKind === 'int' ? 1000 + nextId++ : `s-${nextId++}`
        ids.push(id)
        expected.set(id, f.method)
        send(f.params === undefined ? { jsonrpc: '2.0', id, method: f.method } : { jsonrpc: '2.0', id, method: f.method, params: f.params })
        break
      }
      case 'call': {
        const id = 1000 + nextId++
        ids.push(id)
        expected.set(id, `tools/call:${f.paramsShape}`)
        toolOfId.set(id, f.tool)
        const args = f.args === undefined ? undefined : f.args
        let params: unknown
        switch (f.paramsShape) {
          case 'ok':
            params = args === undefined ? { name: f.tool } : { name: f.tool, arguments: args }
            break
          case 'noName':
            params = { arguments: {} }
            break
          case 'nameNumber':
            params = { name: 42, arguments: {} }
            break
          case 'argsArray':
            params = { name: f.tool, arguments: [1, SECRET] }
            break
          case 'argsString':
            params = { name: f.tool, arguments: `${SECRET}` }
            break
          case 'argsNull':
            params = { name: f.tool, arguments: null }
            break
          case 'paramsArray':
            params = [f.tool]
            break
          case 'noParams':
            params = undefined
            break
        }
        send(params === undefined ? { jsonrpc: '2.0', id, method: 'tools/call' } : { jsonrpc: '2.0', id, method: 'tools/call', params })
        break
      }
      case 'cancel': {
        const target = ids.length === 0 ? 999 : ids[f.target % ids.length]!
        cancelled.add(target)
        send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: target, reason: SECRET } })
        break
      }
      case 'notification':
        send({ jsonrpc: '2.0', method: f.method })
        break
      case 'response':
        send({ jsonrpc: '2.0', id: f.id, result: {} })
        break
      case 'badId':
        send({ jsonrpc: '2.0', id: f.id, method: 'ping' })
        break
      case 'raw':
        send(f.line)
        break
    }
  }
  // the server survives: a ping after everything is answered
  const pingId = 'final-ping'
  expected.set(pingId, 'ping')
  send({ jsonrpc: '2.0', id: pingId, method: 'ping' })
  const end = Date.now() + 3000
  while (Date.now() < end) {
    const answered = new Set(frames.map((f) => f.id))
    if ([...expected.keys()].every((id) => answered.has(id) || cancelled.has(id))) break
    await sleep(5)
  }
  await sleep(10)
  const byId = new Map<unknown, Frame[]>()
  for (const f of frames) {
    const parsed = JSONRPCMessageSchema.safeParse(f)
    if (!parsed.success) v.push(`mcp: a frame is not a JSON-RPC message: ${JSON.stringify(f).slice(0, 160)}`)
    if (f.jsonrpc !== '2.0') v.push('mcp: a frame without jsonrpc "2.0"')
    if (f.method !== undefined) continue // a request or notification from the server
    if (('result' in f) === ('error' in f)) v.push('mcp: a response with both or neither of result and error')
    if (f.error !== undefined && (!Number.isInteger(f.error.code) || typeof f.error.message !== 'string')) v.push('mcp: a malformed error object')
    const list = byId.get(f.id) ?? []
    list.push(f)
    byId.set(f.id, list)
  }
  for (const [id, method] of expected) {
    const got = byId.get(id) ?? []
    if (got.length > 1) v.push(`mcp: ${got.length} responses to one ${method} request`)
    if (got.length === 0 && !cancelled.has(id)) v.push(id === pingId ? 'mcp: the server stopped answering (final ping)' : `mcp: no response to a ${method} request`)
    const r = got[0]
    if (r === undefined) continue
    if (method === 'tools/call:paramsArray') {
      // params that are not an object are not an MCP request: the transport answers -32600 (or the server -32602)
      if (r.error?.code !== -32600 && r.error?.code !== -32602) v.push(`mcp: array params answered ${r.error === undefined ? 'a result' : `code ${String(r.error.code)}`}, not -32600/-32602`)
    } else if (method.startsWith('tools/call:') && method !== 'tools/call:ok') {
      if (r.error?.code !== -32602) v.push(`mcp: bad tools/call params (${method.slice(11)}) answered ${r.error === undefined ? 'a result' : `code ${String(r.error.code)}`}, not -32602`)
      else if (typeof r.error.message !== 'string' || r.error.message.length > 200 || r.error.message.includes('\n')) v.push(`mcp: the -32602 message for ${method.slice(11)} is not short: ${JSON.stringify(r.error.message).slice(0, 120)}`)
    }
    if (method === 'tools/call:ok' && r.result !== undefined) {
      const ok = CallToolResultSchema.safeParse(r.result)
      if (!ok.success) v.push('mcp: a tools/call result fails the CallToolResult schema')
    }
  }
  for (const line of raw) {
    if (!line.includes(SECRET)) continue
    let id: unknown
    try {
      id = (JSON.parse(line) as Frame).id
    } catch {
      id = undefined
    }
    const tool = toolOfId.get(id as number)
    v.push(`secret: ${SECRET} appears in ${tool === undefined ? 'an MCP frame' : `the response to tools/call ${tool}`}`)
  }
  input.end()
  await transport.close()
  await server.close().catch(() => undefined)
  return v
}

// ------------------------------------------------------------------ the IPC loop

process.on('message', (msg: { id: number; op: Op }) => {
  void (async () => {
    current = []
    await tick()
    resetGap()
    let note: string | undefined
    try {
      const { op } = msg
      if (op.op === 'call') await runCall(op.c)
      else if (op.op === 'schema') await runSchema(op.c)
      else if (op.op === 'decode') runDecode(op.c)
      else await runMcp(op.c)
    } catch (err) {
      current.push(`harness: the runner threw ${describeThrown(err)}`)
    }
    const maxGapMs = readGap()
    // let pending rejections of this case surface before reporting
    await tick()
    await tick()
    const report: Report = note === undefined ? { violations: [...new Set(current)], maxGapMs } : { violations: [...new Set(current)], maxGapMs, note }
    process.send!({ id: msg.id, report })
  })()
})
/** Loads what every case needs (ajv, the core's validator) before the first case. */
async function warmUp(): Promise<void> {
  const tool: ToolD = { schema: 'core', sensitive: true, confirm: 'none', summarize: 'none', preview: 'none', permission: 'none', untrusted: true, outputSchema: true, limit: 1 }
  const call = { via: 'call', name: 'registered', input: 'secrets', inputHV: { k: 'json', v: 1 }, options: 'none', ms: 1, hostileEntry: false, observers: 'all', generatedId: false } as const
  await runCall({ tool, body: { b: 'return', v: { k: 'json', v: { n: 1 } }, how: 'sync' }, call })
  current = []
}

void warmUp().then(() => process.send!({ ready: true }))
