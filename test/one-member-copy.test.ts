import { describe, expect, it } from 'vitest'
import { toFrozenJson, toFrozenJsonHiding } from '../src/core/json.js'
import { ToolManager } from '../src/index.js'

// A copy of an object with one member is made by an exact-size constructor (json.ts `OneMember`):
// it must be indistinguishable from the `{}` copy it replaces.
describe('one-member copies are plain frozen objects', () => {
  it.each([
    [{ a: 1 }],
    [{ a: { b: { c: 'x' } } }],
    [{ a: undefined, b: 2 }],
    [{ a: () => 1, b: 'y' }],
    [{ '0': 'index key' }],
    [Object.create({ inherited: 1 }, { own: { value: 'v', enumerable: true } })],
  ])('%j', (value) => {
    const copy = toFrozenJson(value) as Record<string, unknown>
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype)
    expect(copy.constructor).toBe(Object)
    expect(Object.isFrozen(copy)).toBe(true)
    expect(Object.keys(copy)).toHaveLength(1)
    expect(JSON.stringify(copy)).toBe(JSON.stringify(value))
    expect(structuredClone(copy)).toEqual(JSON.parse(JSON.stringify(value)))
    expect(copy).toEqual(JSON.parse(JSON.stringify(value)))
  })

  it('an own __proto__ member stays a data member', () => {
    const copy = toFrozenJson(JSON.parse('{"__proto__":{"x":1}}')) as Record<string, unknown>
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype)
    expect(Object.keys(copy)).toEqual(['__proto__'])
    expect(JSON.stringify(copy)).toBe('{"__proto__":{"x":1}}')
  })

  it('two keys that become the same well-formed key give one member, the later value', () => {
    const copy = toFrozenJson({ '\uD800': 1, '\uDBFF': 2 }) as Record<string, unknown>
    expect(Object.keys(copy)).toEqual(['\uFFFD'])
    expect(copy['\uFFFD']).toBe(2)
  })

  it('a hidden member is hidden in a one-member copy, its value never read', () => {
    const value = Object.defineProperty({}, 'password', {
      enumerable: true,
      get: () => {
        throw new Error('read')
      },
    })
    expect(toFrozenJsonHiding(value, (k) => k === 'password', '[redacted]')).toEqual({ password: '[redacted]' })
  })

  it('an empty object and a two-member object are copied as before', () => {
    expect(toFrozenJson({})).toEqual({})
    expect(Object.isFrozen(toFrozenJson({}))).toBe(true)
    expect(Object.keys(toFrozenJson({ b: 1, a: 2 }) as object)).toEqual(['b', 'a'])
  })

  it('a view of a one-member result keeps it', async () => {
    const tm = new ToolManager({ development: false })
    tm.register({ name: 'one', inputSchema: { type: 'object' }, run: () => ({ echoed: 'hi' }) })
    const view = await tm.callJson('one', '{}')
    expect(view).toMatchObject({ status: 'ok', data: { echoed: 'hi' } })
    expect(Object.isFrozen((view as { data: object }).data)).toBe(true)
    expect(structuredClone(view)).toEqual(JSON.parse(JSON.stringify(view)))
  })
})
