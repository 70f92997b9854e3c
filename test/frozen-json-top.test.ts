/**
 * `toFrozenJson` copies a top-level ordinary object without the generic walk's checks (nothing
 * is on the stack, so no cycle or depth check) and copies primitive members inline. It must
 * give exactly what the generic walk gives (fixtures/frozen-json-reference.ts, json.ts before
 * the shortcut): the same frozen copy, the same error, and the same reads in the same order
 * (getters, `toJSON`, Proxy traps), for the values at the shortcut's edges.
 */
import { describe, expect, it } from 'vitest'
import { MAX_VALUES, NotJsonError, toFrozenJson, toFrozenJsonHiding } from '../src/core/json.js'
import { REDACTED, resultData, sensitiveKeys } from '../src/core/redact.js'
import type { JsonValue } from '../src/core/types.js'
import * as reference from './fixtures/frozen-json-reference.js'

type Copy = typeof toFrozenJson

/** A value made afresh for each walk: `log` records what the walk reads; `copy` is the walk under test (for a re-entrant `toJSON` or getter). */
type Make = (log: string[], copy: Copy) => unknown

/** A getter that logs its reads. */
function getter<T>(log: string[], name: string, value: T): PropertyDescriptor {
  return {
    enumerable: true,
    configurable: true,
    get: () => {
      log.push(`get ${name}`)
      return value
    },
  }
}

/** `target` behind a Proxy that logs every trap it sees. */
function logged<T extends object>(target: T, log: string[], traps: ProxyHandler<T> = {}): T {
  return new Proxy(target, {
    get: (t, k, r) => (log.push(`get ${String(k)}`), traps.get ? traps.get(t, k, r) : Reflect.get(t, k, r)),
    getPrototypeOf: (t) => (log.push('getPrototypeOf'), traps.getPrototypeOf ? traps.getPrototypeOf(t) : Reflect.getPrototypeOf(t)),
    ownKeys: (t) => (log.push('ownKeys'), Reflect.ownKeys(t)),
    getOwnPropertyDescriptor: (t, k) => (log.push(`getOwnPropertyDescriptor ${String(k)}`), Reflect.getOwnPropertyDescriptor(t, k)),
    has: (t, k) => (log.push(`has ${String(k)}`), Reflect.has(t, k)),
  })
}

function nested(depth: number): unknown {
  let v: unknown = 'leaf'
  for (let i = 0; i < depth; i++) v = { v }
  return v
}

const CASES: [string, Make][] = [
  ['a one-member object', () => ({ echoed: 'hellohellohello' })],
  ['every primitive', () => ({ s: 'x', n: 1.5, z: -0, nan: NaN, inf: -Infinity, t: true, f: false, nul: null, u: undefined, fn: () => 1, sym: Symbol('s') })],
  ['only dropped members', () => ({ u: undefined, fn: () => 1 })],
  ['an empty object', () => ({})],
  ['nested objects and arrays', () => ({ a: { b: [1, 'x', { c: 2 }, [], [null, undefined, () => 1]] }, d: [{}, { e: 'f' }] })],
  ['a top-level array', () => [1, 'two', { three: 3 }, undefined]],
  ['a sensitive key', () => ({ password: 'hunter2', user: { 'cc-number': '4111', name: 'n', PassWord: 'x' }, list: [{ password: 1 }] })],
  ['a sensitive key read by a getter', (log) => Object.defineProperties({}, { password: getter(log, 'password', 'p'), name: getter(log, 'name', 'n') })],
  ['an extra sensitive key', () => ({ secret: 's', open: 'o' })],
  ['a lone surrogate in a value', () => ({ text: 'a\uD83D', pair: '\uD83D\uDE00', low: '\uDC00' })],
  ['a lone surrogate in a key', () => ({ '\uD800': 1, ok: 2, '\uDBFF': 3 })],
  ['two-byte strings', () => ({ 'ключ': 'значение', emoji: '😀' })],
  ['a toJSON at the top returning an object', (log) => ({ hidden: 1, toJSON: (key: string) => (log.push(`toJSON ${JSON.stringify(key)}`), { shown: 2, password: 'p' }) })],
  ['a toJSON at the top returning a string', () => ({ toJSON: () => 'text\uD800' })],
  ['a toJSON at the top returning an array', () => ({ toJSON: () => [1, { a: 2 }] })],
  ['a toJSON at the top returning undefined', () => ({ toJSON: () => undefined })],
  ['a toJSON at the top returning a BigInt', () => ({ toJSON: () => 1n })],
  ['a toJSON at the top returning null', () => ({ toJSON: () => null })],
  ['a toJSON returning an object with its own toJSON (applied once)', () => ({ toJSON: () => ({ toJSON: () => 'twice', a: 1 }) })],
  ['a toJSON returning the object itself', () => {
    const o: Record<string, unknown> = { a: 1 }
    o.toJSON = () => o
    return o
  }],
  ['a toJSON read by a getter', (log) => Object.defineProperty({ a: 1 }, 'toJSON', { get: () => (log.push('get toJSON'), () => ({ b: 2 })), enumerable: false })],
  ['a toJSON that is not a function', () => ({ toJSON: 'not a function', a: 1 })],
  ['a nested toJSON', () => ({ when: new Date(0), inner: { toJSON: (key: string) => `inner at ${key}` } })],
  ['a Date at the top', () => new Date(0)],
  ['getters', (log) => Object.defineProperties({}, { a: getter(log, 'a', 1), b: getter(log, 'b', { c: 'd' }), c: getter(log, 'c', undefined) })],
  ['a throwing getter', (log) => Object.defineProperty({ before: 1 }, 'boom', { enumerable: true, get: () => (log.push('get boom'), (() => { throw new Error('getter') })()) })],
  ['a non-enumerable member', () => Object.defineProperty({ a: 1 }, 'hidden', { value: 2, enumerable: false })],
  ['symbol keys', () => ({ a: 1, [Symbol('s')]: 2 })],
  ['a cycle at the top', () => {
    const o: Record<string, unknown> = { a: 1 }
    o.self = o
    return o
  }],
  ['a cycle below', () => {
    const inner: Record<string, unknown> = { x: 1 }
    inner.back = inner
    return { inner }
  }],
  ['a repeated, acyclic member', () => {
    const shared = { s: 1 }
    return { a: shared, b: shared, c: [shared, shared] }
  }],
  ['nesting at the limit', () => nested(100)],
  ['nesting past the limit', () => nested(101)],
  ['an array nested past the limit', () => ({ a: JSON.parse('['.repeat(100) + ']'.repeat(100)) })],
  ['more values than the limit', () => ({ a: 1, big: new Array(MAX_VALUES) })],
  ['a BigInt member', () => ({ a: 1, b: 2n, c: 3 })],
  ['an own __proto__ member', () => JSON.parse('{"__proto__":{"x":1},"a":1}')],
  ['an own __proto__ member alone', () => JSON.parse('{"__proto__":[1]}')],
  ['an object without a prototype', () => Object.assign(Object.create(null) as object, { a: 1, b: 'x' })],
  ['an object with an inherited member', () => Object.create({ inherited: 1 }, { own: { value: 'v', enumerable: true } })],
  ['a class instance', () => new (class Point {
    x = 1
    y = 2
  })()],
  ['an array with Object.prototype', () => Object.setPrototypeOf([1, 2], Object.prototype)],
  ['an object with Array.prototype', () => Object.setPrototypeOf({ a: 1, length: 1 }, Array.prototype)],
  ['wrapper objects', () => [Object(1), Object('s'), Object(true), Object(2n)]],
  ['a wrapper object at the top', () => Object('text')],
  ['a Map and a Set', () => ({ m: new Map([[1, 2]]), s: new Set([1]) })],
  ['a typed array', () => ({ t: new Uint8Array([1, 2, 3]) })],
  ['a typed array at the top', () => new Uint8Array([1, 2])],
  ['a Proxy of a plain object', (log) => logged({ a: 1, password: 'p', b: { c: 2 } }, log)],
  ['a Proxy of an array claiming Object.prototype', (log) => logged([1, 2], log, { getPrototypeOf: () => Object.prototype })],
  ['a Proxy claiming Object.prototype for a Date', (log) => logged(new Date(0), log, { getPrototypeOf: () => Object.prototype })],
  ['a revoked Proxy', () => {
    const { proxy, revoke } = Proxy.revocable({ a: 1 }, {})
    revoke()
    return proxy
  }],
  ['a Proxy revoked by its own getPrototypeOf', () => {
    const { proxy, revoke } = Proxy.revocable({ a: 1 }, {
      getPrototypeOf: () => {
        revoke()
        return Object.prototype
      },
    })
    return proxy
  }],
  ['a getter that re-enters the copy', (log, copy) => Object.defineProperty({ a: 1 }, 'inner', {
    enumerable: true,
    get: () => (log.push('get inner'), copy({ password: 'p', b: [1] })),
  })],
  ['a toJSON that re-enters the copy', (_log, copy) => ({ toJSON: () => ({ wrapped: copy({ password: 'p', c: { d: 1 } }) }) })],
  ['a getter that re-enters the hiding walk', (log) => Object.defineProperty({}, 'x', {
    enumerable: true,
    get: () => (log.push('get x'), toFrozenJsonHiding({ password: 'p' }, (k) => k === 'password', 'H')),
  })],
]

const HIDES: [string, ((key: string) => boolean) | undefined, JsonValue][] = [
  ['no hiding', undefined, null],
  ['the default sensitive names', sensitiveKeys(undefined), REDACTED],
  ['an extra sensitive name', sensitiveKeys(new Set(['secret'])), REDACTED],
]

type Outcome = { readonly copy: unknown } | { readonly error: { readonly name: string; readonly message: string; readonly notJson: boolean } }

function run(make: Make, copy: Copy, hide: ((key: string) => boolean) | undefined, replacement: JsonValue): { outcome: Outcome; log: string[] } {
  const log: string[] = []
  const value = make(log, copy)
  log.push('-- walk')
  try {
    return { outcome: { copy: copy(value, hide, replacement) }, log }
  } catch (err) {
    const e = err as Error
    return { outcome: { error: { name: e.name, message: e.message, notJson: e instanceof NotJsonError } }, log }
  }
}

/** Asserts that `a` and `b` are the same frozen JSON copy: values, key order, prototypes, descriptors, frozenness. */
function expectSameCopy(a: unknown, b: unknown, path = '$'): void {
  if (typeof a !== 'object' || a === null) {
    expect(Object.is(a, b), path).toBe(true)
    return
  }
  expect(typeof b, path).toBe('object')
  expect(b, path).not.toBeNull()
  expect(Object.getPrototypeOf(a), path).toBe(Object.getPrototypeOf(b))
  expect(Object.isFrozen(a), path).toBe(true)
  expect(Object.isFrozen(b), path).toBe(true)
  expect(Array.isArray(a), path).toBe(Array.isArray(b))
  expect(Reflect.ownKeys(a), path).toEqual(Reflect.ownKeys(b as object))
  for (const key of Reflect.ownKeys(a)) {
    const da = Object.getOwnPropertyDescriptor(a, key)!
    const db = Object.getOwnPropertyDescriptor(b, key)!
    expect({ ...da, value: undefined }, `${path}.${String(key)}`).toEqual({ ...db, value: undefined })
    expectSameCopy(da.value, db.value, `${path}.${String(key)}`)
  }
}

describe('the top-level shortcut gives what the generic walk gives', () => {
  for (const [hideName, hide, replacement] of HIDES) {
    describe(hideName, () => {
      it.each(CASES)('%s', (_name, make) => {
        const now = run(make, toFrozenJson, hide, replacement)
        const before = run(make, reference.toFrozenJson as Copy, hide, replacement)
        expect(now.log).toEqual(before.log)
        if ('error' in before.outcome) {
          expect(now.outcome).toEqual(before.outcome)
        } else {
          expect('copy' in now.outcome, JSON.stringify(now.outcome)).toBe(true)
          expectSameCopy((now.outcome as { copy: unknown }).copy, before.outcome.copy)
        }
      })
    })
  }

  it.each(CASES)('the hiding walk (redact) is unchanged: %s', (_name, make) => {
    const hide = sensitiveKeys(undefined)
    const now = run(make, (v, h, r) => toFrozenJsonHiding(v, h!, r!), hide, REDACTED)
    const before = run(make, (v, h, r) => reference.toFrozenJsonHiding(v, h!, r!), hide, REDACTED)
    expect(now.log).toEqual(before.log)
    if ('error' in before.outcome) expect(now.outcome).toEqual(before.outcome)
    else expectSameCopy((now.outcome as { copy: unknown }).copy, before.outcome.copy)
  })

  it('resultData is the redacting copy', () => {
    const data = resultData({ password: 'p', a: [{ 'cc-x': 1, b: '\uD800' }] }, sensitiveKeys(undefined))
    expect(data).toEqual({ password: REDACTED, a: [{ 'cc-x': REDACTED, b: '\uFFFD' }] })
    expect(Object.isFrozen(data)).toBe(true)
  })

  it('a hidden member is not read', () => {
    const log: string[] = []
    const value = Object.defineProperties({}, { password: getter(log, 'password', 'p'), a: getter(log, 'a', 1) })
    expect(toFrozenJson(value, sensitiveKeys(undefined), REDACTED)).toEqual({ password: REDACTED, a: 1 })
    expect(log).toEqual(['get a'])
  })

  it('a walk after a failed one starts afresh (the stack and budget are reset)', () => {
    const cyclic: Record<string, unknown> = { a: 1 }
    cyclic.self = { back: cyclic }
    expect(() => toFrozenJson(cyclic)).toThrow(/a cycle at depth 2/)
    expect(() => toFrozenJson({ a: 1, big: new Array(MAX_VALUES) })).toThrow(/more than 1000000 values/)
    expect(toFrozenJson({ a: { b: 1 } })).toEqual({ a: { b: 1 } })
    expect(toFrozenJson({ big: new Array(MAX_VALUES - 1).fill(0) })).toHaveProperty('big.length', MAX_VALUES - 1)
  })
})
