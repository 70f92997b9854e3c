// docs/schemas.md, "Which validator checks a JSON Schema": the core's validator checks an input's
// JSON form, so an input whose JSON form is not what the tool would get is refused there, and a
// lone surrogate is checked as U+FFFD while the tool gets the string as given.
import { describe, expect, it } from 'vitest'
import { ToolManager } from '../src/index.js'

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
