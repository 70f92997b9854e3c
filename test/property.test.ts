/**
 * Property tests of `ToolManager`: whatever the tool name, input, schema and tool
 * behaviour, a call settles exactly once, never rejects, and gives a deeply frozen,
 * structured-cloneable, JSON-stable result with a string callId. Nothing a model can
 * send pollutes Object.prototype.
 */
import fc from 'fast-check'
import { afterEach, describe, expect, it } from 'vitest'
import {
  ToolManager,
  cancelled,
  errorResult,
  invalid,
  ok,
  pending,
  refuse,
  type CallResult,
  type JsonSchema,
  type ToolContext,
} from '../src/index.js'

const STATUSES = new Set(['ok', 'invalid', 'refused', 'needs_confirmation', 'pending', 'cancelled', 'error'])
const ODD_KEYS = ['__proto__', 'constructor', 'toString', 'valueOf', 'hasOwnProperty', 'prototype', 'polluted'] as const
const protoNames = Object.getOwnPropertyNames(Object.prototype).sort()

function deepFrozenPath(v: unknown, path = '', seen = new Set<unknown>()): string | undefined {
  if (typeof v !== 'object' || v === null || seen.has(v)) return undefined
  seen.add(v)
  if (!Object.isFrozen(v)) return path || '(root)'
  for (const k of Object.keys(v)) {
    const bad = deepFrozenPath((v as Record<string, unknown>)[k], `${path}/${k}`, seen)
    if (bad !== undefined) return bad
  }
  return undefined
}

function expectPrototypeClean() {
  expect(({} as Record<string, unknown>).polluted).toBeUndefined()
  expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(protoNames)
  expect(Object.prototype.toString.call({})).toBe('[object Object]')
}

afterEach(() => expectPrototypeClean())

// ---------------------------------------------------------------- arbitraries

/** A key: often one that means something to JavaScript objects. */
const keyArb = fc.oneof({ weight: 2, arbitrary: fc.constantFrom(...ODD_KEYS) }, { weight: 3, arbitrary: fc.string({ maxLength: 6 }) })

/** JSON text of an object whose keys may be __proto__ & co (JSON.parse makes them own data properties). */
const oddObjectText = fc
  .uniqueArray(fc.tuple(keyArb, fc.jsonValue({ maxDepth: 2 })), { maxLength: 5, selector: (t) => t[0] })
  .map((entries) => `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`).join(',')}}`)

/** An input as JSON text (what models send). */
const jsonTextArb = fc.oneof(
  { weight: 4, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)) },
  { weight: 4, arbitrary: oddObjectText },
  { weight: 1, arbitrary: fc.constant('{"__proto__":{"polluted":1}}') },
  { weight: 1, arbitrary: fc.constant('{"constructor":{"prototype":{"polluted":1}}}') },
  { weight: 2, arbitrary: fc.string({ maxLength: 12 }) }, // mostly malformed
)

/** An input value (what `tm.call` receives): JSON values plus a few things JSON cannot say. */
const inputArb = fc.oneof(
  { weight: 6, arbitrary: jsonTextArb.map((t) => { try { return JSON.parse(t) as unknown } catch { return t } }) },
  { weight: 1, arbitrary: fc.constantFrom(undefined, NaN, Infinity, -Infinity, -0, { z: -0, list: [-0, 1] }) },
  { weight: 1, arbitrary: fc.record({ a: fc.constantFrom(undefined, NaN, 1), d: fc.date({ noInvalidDate: true }) }) },
)

const TYPES = ['string', 'number', 'integer', 'boolean', 'null', 'array', 'object'] as const

/** A small family of schemas: boolean schemas, or objects with typed properties. */
const schemaArb: fc.Arbitrary<JsonSchema> = fc.oneof(
  { weight: 1, arbitrary: fc.boolean() },
  {
    weight: 5,
    arbitrary: fc
      .record({
        props: fc.uniqueArray(fc.tuple(keyArb, fc.constantFrom(...TYPES), fc.boolean()), { maxLength: 4, selector: (t) => t[0] }),
        additional: fc.option(fc.boolean(), { nil: undefined }),
      })
      .map(({ props, additional }) => {
        // built as JSON text so a "__proto__" property is an own key of `properties`
        const properties = `{${props.map(([k, t]) => `${JSON.stringify(k)}:{"type":${JSON.stringify(t)}}`).join(',')}}`
        const required = JSON.stringify(props.filter(([, , req]) => req).map(([k]) => k))
        const extra = additional === undefined ? '' : `,"additionalProperties":${additional}`
        return JSON.parse(`{"type":"object","properties":${properties},"required":${required}${extra}}`) as JsonSchema
      }),
  },
)

type Terminator =
  | { readonly kind: 'none' }
  | { readonly kind: 'timeout'; readonly ms: number }
  | { readonly kind: 'abort'; readonly ms: number }
  | { readonly kind: 'preAborted' }
  | { readonly kind: 'cancel'; readonly ms: number }

type Behaviour =
  | { readonly kind: 'value'; readonly value: unknown; readonly async: boolean }
  | { readonly kind: 'echo'; readonly async: boolean }
  | { readonly kind: 'helper'; readonly which: number; readonly async: boolean }
  | { readonly kind: 'throw'; readonly what: unknown }
  | { readonly kind: 'reject'; readonly what: unknown }
  | { readonly kind: 'hangUntilSignal' }
  | { readonly kind: 'hangForever' }
  | { readonly kind: 'bigint' | 'cyclic' | 'function' | 'date' | 'symbol'; readonly async: boolean }

const msArb = fc.integer({ min: 1, max: 5 })
const anyTerminator: fc.Arbitrary<Terminator> = fc.oneof(
  { weight: 6, arbitrary: fc.constant({ kind: 'none' } as const) },
  { weight: 1, arbitrary: fc.integer({ min: 5, max: 20 }).map((ms) => ({ kind: 'timeout', ms }) as const) },
  { weight: 1, arbitrary: msArb.map((ms) => ({ kind: 'abort', ms }) as const) },
  { weight: 1, arbitrary: fc.constant({ kind: 'preAborted' } as const) },
  { weight: 1, arbitrary: msArb.map((ms) => ({ kind: 'cancel', ms }) as const) },
)
/** Something that will end a body that never finishes by itself. */
const endingTerminator: fc.Arbitrary<Terminator> = fc.oneof(
  fc.integer({ min: 5, max: 20 }).map((ms) => ({ kind: 'timeout', ms }) as const),
  msArb.map((ms) => ({ kind: 'abort', ms }) as const),
  msArb.map((ms) => ({ kind: 'cancel', ms }) as const),
)

const thrownArb = fc.oneof(
  fc.string().map((m) => new Error(m)),
  fc.constant(new TypeError('boom')),
  fc.constantFrom('a string', undefined, null, 42),
)

const finishingBehaviour: fc.Arbitrary<Behaviour> = fc.oneof(
  fc.record({ kind: fc.constant('value' as const), value: fc.jsonValue({ maxDepth: 3 }), async: fc.boolean() }),
  fc.record({ kind: fc.constant('echo' as const), async: fc.boolean() }),
  fc.record({ kind: fc.constant('helper' as const), which: fc.nat(9), async: fc.boolean() }),
  fc.record({ kind: fc.constant('throw' as const), what: thrownArb }),
  fc.record({ kind: fc.constant('reject' as const), what: thrownArb }),
  fc.record({ kind: fc.constantFrom('bigint', 'cyclic', 'function', 'date', 'symbol'), async: fc.boolean() }),
)

/** A behaviour with the terminator it needs: a hanging body always gets one that ends it. */
const scenarioArb = fc.oneof(
  { weight: 5, arbitrary: fc.record({ behaviour: finishingBehaviour, terminator: anyTerminator }) },
  { weight: 1, arbitrary: fc.record({ behaviour: fc.constant<Behaviour>({ kind: 'hangUntilSignal' }), terminator: endingTerminator }) },
  {
    weight: 1,
    arbitrary: fc.record({
      behaviour: fc.constant<Behaviour>({ kind: 'hangForever' }),
      terminator: fc.integer({ min: 5, max: 20 }).map((ms) => ({ kind: 'timeout', ms }) as Terminator),
    }),
  },
)

const toolNameArb = fc.oneof(
  fc.constant('t'),
  fc.constantFrom(...ODD_KEYS),
  fc.string({ minLength: 1, maxLength: 8 }),
)

// ---------------------------------------------------------------- the body

function helperResult(which: number, input: unknown): unknown {
  switch (which) {
    case 0:
      return ok(input)
    case 1:
      return invalid('bad input')
    case 2:
      return invalid([{ path: '/x', message: 'nope' }])
    case 3:
      return refuse('no', 'Not allowed')
    case 4:
      return refuse('stale', 'Reload', { rev: 3 })
    case 5:
      return cancelled('operator')
    case 6:
      return cancelled()
    case 7:
      return errorResult('Upstream failed')
    case 8:
      return pending({ kind: 'confirmation', summary: 'Delete 3 rows?' })
    default:
      return pending({ kind: 'input', prompt: 'Which one?' })
  }
}

function bodyOf(b: Behaviour) {
  return (input: unknown, ctx: ToolContext): unknown => {
    const wrap = (v: unknown, async: boolean) => (async ? Promise.resolve(v) : v)
    switch (b.kind) {
      case 'value':
        return wrap(b.value, b.async)
      case 'echo':
        return wrap(input, b.async)
      case 'helper':
        return wrap(helperResult(b.which, input), b.async)
      case 'throw':
        throw b.what
      case 'reject':
        return Promise.reject(b.what)
      case 'hangUntilSignal': {
        const signal = ctx.signal
        return new Promise((resolve, reject) => {
          signal.addEventListener('abort', () => (signal.reason instanceof Error ? reject(signal.reason) : resolve('late')), {
            once: true,
          })
        })
      }
      case 'hangForever':
        return new Promise(() => {})
      case 'bigint':
        return wrap({ n: 1n }, b.async)
      case 'cyclic': {
        const o: Record<string, unknown> = { input }
        o.self = { o }
        return wrap(o, b.async)
      }
      case 'function':
        return wrap(() => input, b.async)
      case 'symbol':
        return wrap(Symbol('s'), b.async)
      case 'date':
        return wrap({ at: new Date(86_400_000), list: [new Date(0)] }, b.async)
    }
  }
}

// ---------------------------------------------------------------- checks

let callSeq = 0

async function checkResult(r: CallResult) {
  expect(typeof r).toBe('object')
  expect(STATUSES.has(r.status), `unexpected status ${String(r.status)}`).toBe(true)
  expect(typeof r.callId).toBe('string')
  expect(deepFrozenPath(r), 'every object in the result is frozen').toBeUndefined()
  expect(structuredClone(r)).toEqual(r)
  expect(JSON.parse(JSON.stringify(r))).toEqual(r)
  expectPrototypeClean()
}

describe('ToolManager properties', () => {
  it('every call settles exactly once, never rejects, and gives a well-formed result', async () => {
    await fc.assert(
      fc.asyncProperty(
        toolNameArb,
        fc.option(toolNameArb, { nil: undefined }), // the name called when it differs from the registered one
        schemaArb,
        fc.option(schemaArb, { nil: undefined }), // outputSchema
        fc.boolean(), // development
        scenarioArb,
        fc.boolean(), // callJson rather than call
        inputArb,
        jsonTextArb,
        async (registered, calledName, inputSchema, outputSchema, development, { behaviour, terminator }, useJson, input, text) => {
          const tm = new ToolManager({ development })
          const ends = new Map<string, number>()
          tm.on('call_end', (e) => void ends.set(e.callId, (ends.get(e.callId) ?? 0) + 1))
          tm.on('error', () => {})
          tm.register({
            name: registered,
            inputSchema,
            ...(outputSchema === undefined ? {} : { outputSchema }),
            run: bodyOf(behaviour),
          }, { anyName: true }) // any string name, the provider name rule aside
          const name = calledName ?? registered
          const callId = `prop-${++callSeq}`
          const ac = new AbortController()
          const options: { callId: string; signal?: AbortSignal; timeoutMs?: number } = { callId }
          if (terminator.kind === 'timeout') options.timeoutMs = terminator.ms
          if (terminator.kind === 'abort' || terminator.kind === 'preAborted') options.signal = ac.signal
          if (terminator.kind === 'preAborted') ac.abort()
          const timers: ReturnType<typeof setTimeout>[] = []
          if (terminator.kind === 'abort') timers.push(setTimeout(() => ac.abort(), terminator.ms))
          if (terminator.kind === 'cancel') timers.push(setTimeout(() => tm.cancel(callId), terminator.ms))

          let resolved = 0
          let rejected = 0
          const p = useJson ? tm.callJson(name, text, options) : tm.call(name, input, options)
          expect(p).toBeInstanceOf(Promise)
          const r = await p.then(
            (v) => {
              resolved++
              return v
            },
            (e: unknown) => {
              rejected++
              throw e
            },
          )
          // let timers, late aborts and late body settlements happen, then look again
          await new Promise((res) => setTimeout(res, terminator.kind === 'none' ? 0 : 6))
          timers.forEach(clearTimeout)
          expect(rejected).toBe(0)
          expect(resolved).toBe(1)
          expect(r.callId).toBe(callId)
          expect(ends.get(callId), 'exactly one call_end for the call').toBe(1)
          expect([...ends.values()].every((n) => n === 1)).toBe(true)
          await checkResult(r)
          if (terminator.kind === 'preAborted' && name === registered) {
            // an aborted signal stops the call unless the input was rejected first
            expect(['cancelled', 'invalid']).toContain(r.status)
          }
          if (behaviour.kind === 'hangForever' && name === registered) {
            expect(['error', 'invalid']).toContain(r.status)
            if (r.status === 'error') expect(r.kind).toBe('timeout')
          }
          if (behaviour.kind === 'throw' || behaviour.kind === 'reject') {
            if (r.status === 'error' && r.kind === 'other') expect(r.message).toBe('The tool failed.')
          }
        },
      ),
      { numRuns: 200, interruptAfterTimeLimit: 15_000 },
    )
  }, 30_000)

  it('__proto__ in JSON text or in an object input never pollutes Object.prototype', async () => {
    const tm = new ToolManager()
    const seen: unknown[] = []
    tm.register({ name: 'echo', inputSchema: { type: 'object' }, run: (input: unknown) => (seen.push(input), input) })
    tm.register({
      name: 'strict',
      inputSchema: JSON.parse('{"type":"object","properties":{"__proto__":{"type":"object"}},"additionalProperties":false}') as JsonSchema,
      run: (input: unknown) => input,
    })
    const text = '{"__proto__":{"polluted":1},"constructor":{"prototype":{"polluted":1}}}'
    const asObject = JSON.parse(text) as object
    // a computed key makes an own "__proto__" data property, as JSON.parse does
    const literal = { ['__proto__']: { polluted: 1 } } as object
    for (const tool of ['echo', 'strict', 'missing']) {
      for (const r of [await tm.callJson(tool, text), await tm.call(tool, asObject), await tm.call(tool, literal)]) {
        await checkResult(r)
        expect(({} as Record<string, unknown>).polluted).toBeUndefined()
        if (r.status === 'ok') {
          const data = r.data as Record<string, unknown>
          expect(Object.hasOwn(data, '__proto__')).toBe(true)
          expect(Object.getPrototypeOf(data)).toBe(Object.prototype)
        }
      }
    }
    expect(seen.length).toBeGreaterThan(0)
  })
})
