// docs/schemas.md, "Which validator checks a JSON Schema": the core's validator checks an input's
// JSON form, so an input whose JSON form is not what the tool would get is refused there, and a
// lone surrogate is checked as U+FFFD while the tool gets the string as given.
import { describe, expect, it } from 'vitest'
import { SchemaError, ToolManager } from '../src/index.js'

const NOT_JSON = 'is not a JSON value that can be checked'

function manager() {
  const tm = new ToolManager({ development: false })
  const got: unknown[] = []
  const properties = { a: { type: 'string' }, b: { type: 'integer' } }
  // `pattern` sends the schema to the core's validator; the same schema without it stays on ajv's
  tm.register({ name: 'core', inputSchema: { type: 'object', properties: { ...properties, a: { type: 'string', pattern: '^[^x]*$' } } }, run: (i: unknown) => (got.push(i), 'ran') })
  tm.register({ name: 'ajv', inputSchema: { type: 'object', properties }, run: (i: unknown) => (got.push(i), 'ran') })
  return { tm, got }
}

describe("the core's validator and an input's JSON form", () => {
  const hidden = Object.defineProperty({ a: 'y' }, 'b', { value: 'not an integer', enumerable: false })
  it.each([
    ['a member with toJSON', { a: { toJSON: () => 'y' } }, '/a'],
    ['a Date', { a: new Date(0) }, '/a'],
    ['a wrapped string', { a: new String('y') }, '/a'],
    ['a wrapped number', { b: new Number(1) }, '/b'],
    ['a function', { a: () => 'y' }, '/a'],
    ['a symbol', { a: Symbol('y') }, '/a'],
    ['a non-enumerable own member', hidden, '/b'],
    ['a toJSON on the input itself', { a: 1, toJSON: () => ({ a: 'y' }) }, ''],
    ['an item of an array', { a: 'y', c: [1, { toJSON: () => 2 }] }, '/c/1'],
    ['Infinity (null in JSON)', { b: Infinity }, '/b'],
    ['NaN', { c: [NaN] }, '/c/0'],
    ['a BigInt, nested', { c: { d: [1, 2n] } }, '/c/d/1'],
    ['an undefined array item', { c: [1, undefined] }, '/c/1'],
    ['an array hole', { c: [1, , 3] }, '/c/1'],
    ['a key with a lone surrogate (two could become one)', { a: 'y', 'k\ud800': 1 }, '/k\ufffd'],
  ])('%s is refused with its path; the tool does not run', async (_what, input, path) => {
    const { tm, got } = manager()
    expect(await tm.call('core', input)).toEqual({ status: 'invalid', issues: [{ path, message: NOT_JSON }], callId: expect.any(String) })
    expect(got).toEqual([])
  })

  it('ajv checks the value itself: the same inputs are refused for what they are, or accepted as they are', async () => {
    const { tm } = manager()
    expect(await tm.call('ajv', { a: new String('y') })).toMatchObject({ status: 'invalid', issues: [{ path: '/a', message: 'must be string' }] })
    expect(await tm.call('ajv', hidden)).toMatchObject({ status: 'invalid', issues: [{ path: '/b', message: 'must be integer' }] })
  })

  it('a plain input, from an object or from text, is checked as before', async () => {
    const { tm, got } = manager()
    expect(await tm.call('core', { a: 'y', b: 1, c: [{ d: null }] })).toMatchObject({ status: 'ok', data: 'ran' })
    expect(await tm.callJson('core', '{"a":"y","b":1,"c":[{"d":null}]}')).toMatchObject({ status: 'ok', data: 'ran' })
    expect(await tm.call('core', { a: 'x' })).toMatchObject({ status: 'invalid', issues: [{ path: '/a' }] })
    expect(got).toHaveLength(2)
  })

  it('from text too: a number JSON cannot hold, and keys with lone surrogates', async () => {
    const { tm, got } = manager()
    expect(await tm.callJson('core', '{"b":1e400}')).toMatchObject({ status: 'invalid', issues: [{ path: '/b', message: NOT_JSON }] })
    expect(await tm.callJson('core', '{"\\ud800":"long","\\udc00":"x"}')).toMatchObject({ status: 'invalid', issues: [{ message: NOT_JSON }] })
    const [view] = await tm.callMany([{ name: 'core', args: '{"b":-1e999}' }])
    expect(view).toMatchObject({ status: 'invalid', issues: [{ path: '/b', message: NOT_JSON }] })
    expect(got).toEqual([])
  })

  it('a schema referring to a resource with a pattern is checked by the core too', async () => {
    const resources = { 'urn:slow': { type: 'string', pattern: '^(a+)+$' }, 'urn:look': { type: 'string', pattern: '^(?=a)a$' } }
    const tm = new ToolManager({ development: false, schemaResources: resources })
    // lookaround cannot run on the core's linear-time engine: refused, where ajv would have run it
    expect(() => tm.register({ name: 'look', inputSchema: { type: 'object', properties: { a: { $ref: 'urn:look' } } }, run: () => 1 })).toThrow(SchemaError)
    tm.register({ name: 'slow', inputSchema: { type: 'object', properties: { a: { $ref: 'urn:slow' } } }, run: () => 1 })
    expect(await tm.call('slow', { a: `${'a'.repeat(40)}!` })).toMatchObject({ status: 'invalid', issues: [{ path: '/a' }] })
    expect(await tm.call('slow', { a: 'aaa' })).toMatchObject({ status: 'ok' })
    expect(await tm.call('slow', { a: new String('aaa') })).toMatchObject({ status: 'invalid', issues: [{ path: '/a', message: NOT_JSON }] })
  })

  it('either way the tool gets the input itself, not a copy: a change made after the check is not checked', async () => {
    for (const route of ['core', 'ajv']) {
      const { tm, got } = manager()
      const input: { a: string } = { a: 'y' }
      const call = tm.call(route, input)
      input.a = 'x'
      expect(await call).toMatchObject({ status: 'ok' })
      expect(got[0]).toBe(input)
      expect((got[0] as { a: string }).a).toBe('x')
    }
  })

  it('a lone surrogate is checked as U+FFFD; the tool gets the string as given', async () => {
    const { tm, got } = manager()
    const tm2 = new ToolManager({ development: false })
    tm2.register({ name: 'fffd', inputSchema: { type: 'object', properties: { a: { type: 'string', pattern: '^\ufffd\ufffd$' } } }, run: () => 'ran' })
    expect(await tm.call('core', { a: 'y\ud800' })).toMatchObject({ status: 'ok' })
    expect(await tm.callJson('core', '{"a":"\\udc00\\ud800"}')).toMatchObject({ status: 'ok' })
    expect(got).toEqual([{ a: 'y\ud800' }, { a: '\udc00\ud800' }])
    expect(await tm2.call('fffd', { a: '\ud800\ud800' })).toMatchObject({ status: 'ok' })
    expect(await tm2.call('fffd', { a: '\\ud800' })).toMatchObject({ status: 'invalid' })
  })
})
