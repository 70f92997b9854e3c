import { describe, expect, it } from 'vitest'
import { ToolManager } from '../src/index.js'
import { acceptedValues } from '../src/core/schema-route.js'

// A schema that bounds what it accepts (a closed object of scalar members) lets `tm.call` check
// an input before measuring it (validate.ts `guarded`): only a failing input is measured. What
// the call answers must not change, for any input.
describe('acceptedValues', () => {
  const closed = (properties: object, more: object = {}) => ({ type: 'object', properties, additionalProperties: false, ...more })

  it.each([
    [closed({ a: { type: 'string' }, b: { type: 'integer' } }), 3],
    [closed({ a: { type: ['string', 'null'] }, b: { type: 'boolean', enum: [true] } }), 3],
    [closed({}), 1],
    [{ type: 'object', additionalProperties: false }, 1],
    [closed({ a: { type: 'number' } }, { required: ['a'], allOf: [{ properties: { a: { type: 'object' } } }] }), 2],
  ])('%j holds at most %d values', (schema, n) => {
    expect(acceptedValues(schema)).toBe(n)
  })

  it.each([
    [closed({ a: { type: 'object' } })],
    [closed({ a: { type: 'array' } })],
    [closed({ a: { type: ['string', 'array'] } })],
    [closed({ a: { type: [] } })],
    [closed({ a: {} })],
    [closed({ a: true })],
    [closed({ a: { enum: ['x'] } })],
    [closed({ a: { type: 'string' } }, { patternProperties: { '^x': { type: 'object' } } })],
    [{ type: 'object', properties: { a: { type: 'string' } } }],
    [{ type: 'object', properties: { a: { type: 'string' } }, additionalProperties: { type: 'string' } }],
    [{ properties: { a: { type: 'string' } }, additionalProperties: false }],
    [{ type: ['object', 'array'], properties: {}, additionalProperties: false }],
    [closed([] as unknown as object)],
    [true],
    [null],
  ])('%j is not bounded', (schema) => {
    expect(acceptedValues(schema)).toBeUndefined()
  })
})

describe('tm.call of a bounded schema answers as the measured check does', () => {
  const schema = {
    type: 'object',
    properties: { text: { type: 'string' }, n: { type: 'integer' } },
    required: ['text'],
    additionalProperties: false,
  }
  const manager = (maxInputValues?: number) => {
    const tm = new ToolManager({ development: false, ...(maxInputValues === undefined ? {} : { maxInputValues }) })
    tm.register({ name: 'echo', inputSchema: schema, run: (input: unknown) => input as never })
    return tm
  }
  const tm = manager()
  const issues = async (input: unknown, m = tm) => {
    const view = await m.call('echo', input)
    return view.status === 'invalid' ? view.issues : view.status
  }

  it('accepts a valid input', async () => {
    expect(await issues({ text: 'a', n: 3 })).toBe('ok')
  })

  it('refuses a member it does not list', async () => {
    expect(await issues({ text: 'a', x: 1 })).toEqual([{ path: '/x', message: 'is not allowed' }])
  })

  it('says an input of more values than the limit is too large, not which member is wrong', async () => {
    const big: Record<string, number> = { text: 0 }
    for (let i = 0; i < 100_001; i++) big[`k${i}`] = i
    expect(await issues(big)).toEqual([{ path: '', message: 'holds more than 100000 values' }])
  })

  it('says an input nesting too deep is too deep', async () => {
    let deep: unknown = 'x'
    for (let i = 0; i < 200; i++) deep = [deep]
    expect(await issues({ text: deep })).toEqual([{ path: '', message: 'nests deeper than 100 levels' }])
  })

  it('says a cyclic input is too deep', async () => {
    const cyclic: Record<string, unknown> = { text: 'a' }
    cyclic.self = cyclic
    expect(await issues(cyclic)).toEqual([{ path: '', message: 'nests deeper than 100 levels' }])
  })

  it('answers for an input whose getter throws as for one JSON cannot carry', async () => {
    const hostile = {
      get text(): string {
        throw new Error('no')
      },
    }
    expect(await issues(hostile)).toEqual([{ path: '', message: 'is not a JSON value that can be checked' }])
  })

  it('reads a Proxy the same way', async () => {
    const proxy = new Proxy({ text: 'a', n: 1 }, {})
    expect(await issues(proxy)).toBe('ok')
  })

  it('counts a typed array as its elements', async () => {
    const typed = Object.assign(new Uint8Array(100_001), { text: 'a' })
    expect(await issues(typed)).toEqual([{ path: '', message: 'holds more than 100000 values' }])
    expect(await issues(Object.assign(new Uint8Array(0), { text: 'a' }))).toBe('ok')
  })

  it('still counts against a limit below what the schema accepts', async () => {
    // at most 3 values: { text, n } holds 3, so a limit of 2 refuses it unchecked
    expect(await issues({ text: 'a', n: 1 }, manager(2))).toEqual([{ path: '', message: 'holds more than 2 values' }])
    expect(await issues({ text: 'a', n: 1 }, manager(3))).toBe('ok')
  })
})
