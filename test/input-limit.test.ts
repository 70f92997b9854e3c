// The input value limit (issue #11, "never block"): an input holding more than
// `maxInputValues` values (default MAX_INPUT_VALUES, 100,000) is one `invalid` issue, unchecked;
// a JSON argument text is measured before it is parsed, so a huge text is never parsed.
import { afterEach, describe, expect, it, vi } from 'vitest'
import { z } from 'zod'
import { ToolManager } from '../src/index.js'
import { MAX_VALUES, textShape } from '../src/core/json.js'
import { MAX_INPUT_VALUES } from '../src/core/validate.js'
import { shapeProblem } from '../src/core/json-form.js'

const ROUTES = {
  ajv: { type: 'array', items: { type: 'number' } },
  core: { type: 'array', items: { type: 'number' }, unevaluatedItems: false },
}

/** A manager with one array tool per validation route, and a Standard Schema one. */
function manager(options?: ConstructorParameters<typeof ToolManager>[0]): ToolManager {
  const tm = new ToolManager(options)
  for (const [name, inputSchema] of Object.entries(ROUTES)) tm.register({ name, inputSchema, run: () => 'ran' })
  tm.register({ name: 'zod', inputSchema: z.array(z.number()), run: () => 'ran' })
  tm.register({ name: 'object', inputSchema: { type: 'object', additionalProperties: { type: 'number' } }, run: () => 'ran' })
  return tm
}

const tooLarge = (limit: number) => ({ status: 'invalid', issues: [{ path: '', message: `holds more than ${limit} values` }] })

afterEach(() => {
  vi.restoreAllMocks()
})

describe('input value limit', () => {
  it('is 100,000 values by default: an array of 99,999 items (100,000 values) is checked, one more is one issue, on every route', async () => {
    expect(MAX_INPUT_VALUES).toBe(100_000)
    const tm = manager()
    for (const name of ['ajv', 'core', 'zod']) {
      expect(await tm.call(name, new Array(MAX_INPUT_VALUES - 1).fill(1)), name).toMatchObject({ status: 'ok', data: 'ran' })
      const over = await tm.call(name, new Array(MAX_INPUT_VALUES).fill(1))
      expect(over, name).toMatchObject(tooLarge(MAX_INPUT_VALUES))
      expect(over.status === 'invalid' && over.issues, name).toHaveLength(1)
      // invalid items within the limit are still checked and listed
      const invalid = await tm.call(name, new Array(MAX_INPUT_VALUES - 1).fill('s'))
      expect(invalid.status === 'invalid' && invalid.issues[0], name).toMatchObject({ path: '/0' })
    }
    // object members count as array items do
    const keys = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i]))
    expect(await tm.call('object', keys(MAX_INPUT_VALUES - 1))).toMatchObject({ status: 'ok' })
    expect(await tm.call('object', keys(MAX_INPUT_VALUES))).toMatchObject(tooLarge(MAX_INPUT_VALUES))
    expect(await tm.call('object', keys(200_000))).toMatchObject(tooLarge(MAX_INPUT_VALUES))
  })

  it('callJson and callMany refuse a text over the limit as the value would be, and accept one at the limit', async () => {
    const tm = manager()
    const at = JSON.stringify(new Array(MAX_INPUT_VALUES - 1).fill(1))
    const over = JSON.stringify(new Array(MAX_INPUT_VALUES).fill(1))
    for (const name of ['ajv', 'core', 'zod']) {
      expect(await tm.callJson(name, at), name).toMatchObject({ status: 'ok' })
      expect(await tm.callJson(name, over), name).toMatchObject(tooLarge(MAX_INPUT_VALUES))
    }
    const [a, b] = await tm.callMany([
      { name: 'ajv', args: at },
      { name: 'ajv', args: over },
    ])
    expect(a).toMatchObject({ status: 'ok' })
    expect(b).toMatchObject(tooLarge(MAX_INPUT_VALUES))
  })

  it('a text over the limit is refused before it is parsed: JSON.parse never sees it', async () => {
    const tm = manager()
    const text = JSON.stringify(Object.fromEntries(Array.from({ length: 200_000 }, (_, i) => [`k${i}`, i])))
    const parse = vi.spyOn(JSON, 'parse')
    expect(await tm.callJson('object', text)).toMatchObject(tooLarge(MAX_INPUT_VALUES))
    expect(await tm.callMany([{ name: 'object', args: text }])).toMatchObject([tooLarge(MAX_INPUT_VALUES)])
    expect(parse.mock.calls.some(([arg]) => arg === text)).toBe(false)
    // a text within the limit is parsed
    const small = '{"a":1}'
    expect(await tm.callJson('object', small)).toMatchObject({ status: 'ok' })
    expect(parse.mock.calls.some(([arg]) => arg === small)).toBe(true)
  })

  it('commas and brackets inside strings are not values; whitespace and empty containers are read as JSON reads them', async () => {
    const tm = manager({ maxInputValues: 10 })
    tm.register({ name: 'any', inputSchema: {}, run: () => 'ran' })
    const inString = JSON.stringify(['a,'.repeat(1_000) + '[{"\\"', 'b'])
    expect(await tm.callJson('any', inString)).toMatchObject({ status: 'ok' })
    // 10 values: the object, 4 members, 5 items (the empty containers hold none)
    const ten = ' { "a" : [ 1 , 2 , [ ] ] , "b" : { } , "c" : [ { } , "x,y" ] , "d" : 1 } '
    expect(await tm.callJson('any', ten)).toMatchObject({ status: 'ok' })
    expect(await tm.callJson('any', ten.replace('[ ]', '[ 0 ]'))).toMatchObject(tooLarge(10))
  })

  it('the text count is the value count: textShape agrees with shapeProblem on the parsed value', () => {
    const texts = [
      '[]', '{}', '[[]]', '[1,2,3]', '{"a":{},"b":[[],[1]],"c":"x,]"}', ' [ 1 ,\n\t2 ] ', '"s"', '0',
      JSON.stringify({ a: [1, { b: [2, 3, { c: [] }] }], d: 'e\\"f,[', g: null, h: [true, false] }),
      JSON.stringify(Array.from({ length: 50 }, (_, i) => (i % 3 === 0 ? [] : i % 3 === 1 ? { i } : [i, [i]]))),
    ]
    for (const text of texts) {
      const value: unknown = JSON.parse(text)
      let exact = 1
      while (shapeProblem(value, 1000, exact) === 'large') exact++
      expect(textShape(text, 1000, exact), text).toBeUndefined()
      if (exact > 1) expect(textShape(text, 1000, exact - 1), text).toBe('large')
    }
    expect(textShape('[[[1]]]', 2, 100)).toBe('deep')
    expect(textShape('{"a":"[[["}', 2, 100)).toBeUndefined()
  })

  it('is set per manager: maxInputValues lowers or raises it for inputs and texts, on every route', async () => {
    const small = manager({ maxInputValues: 10 })
    for (const name of ['ajv', 'core', 'zod']) {
      expect(await small.call(name, new Array(9).fill(1)), name).toMatchObject({ status: 'ok' })
      expect(await small.call(name, new Array(10).fill(1)), name).toMatchObject(tooLarge(10))
      expect(await small.callJson(name, '[1,1,1,1,1,1,1,1,1]'), name).toMatchObject({ status: 'ok' })
      expect(await small.callJson(name, '[1,1,1,1,1,1,1,1,1,1]'), name).toMatchObject(tooLarge(10))
    }
    const big = manager({ maxInputValues: 300_000 })
    const input = new Array(200_000).fill(1)
    for (const name of ['ajv', 'core', 'zod']) {
      expect(await big.call(name, input), name).toMatchObject({ status: 'ok' })
      expect(await big.callJson(name, JSON.stringify(input)), name).toMatchObject({ status: 'ok' })
    }
  })

  it('a typed array counts as its elements (and any member of its own), as a plain array does, at the top or nested', async () => {
    const tm = new ToolManager({ maxInputValues: 10 })
    tm.register({ name: 'any', inputSchema: {}, run: () => 'ran' })
    // the array and its 9 elements; the object, the array and its 8 elements: 10 values each
    for (const at10 of [new Uint8Array(9), new Float64Array(9), { t: new Uint16Array(8) }, { t: new Array(8).fill(0) }, { t: new Array(8) }]) {
      expect(await tm.call('any', at10)).toMatchObject({ status: 'ok', data: 'ran' })
    }
    for (const at11 of [new Uint8Array(10), { t: new Uint8Array(9) }, { t: new Array(9).fill(0) }, { t: Object.assign(new Uint8Array(8), { extra: 1 }) }]) {
      expect(await tm.call('any', at11)).toMatchObject(tooLarge(10))
    }
    // the default limit: a typed array of 50,000 is far within it, as an array of 50,000 is
    expect(await new ToolManager().register({ name: 'any', inputSchema: {}, run: () => 'ran' }).call('any', { t: new Uint8Array(50_000) })).toMatchObject({ status: 'ok' })
  })

  it('a text is measured as written: a member given twice counts twice, though JSON.parse keeps the last', async () => {
    const tm = new ToolManager({ maxInputValues: 3 })
    tm.register({ name: 'ab', inputSchema: { type: 'object', properties: { a: {}, b: {} } }, run: (input: unknown) => input as never })
    expect(await tm.callJson('ab', '{"a":1,"b":3}')).toMatchObject({ status: 'ok', data: { a: 1, b: 3 } })
    expect(await tm.callJson('ab', '{"a":1,"a":2,"b":3}')).toMatchObject(tooLarge(3))
    expect(await tm.call('ab', JSON.parse('{"a":1,"a":2,"b":3}'))).toMatchObject({ status: 'ok', data: { a: 2, b: 3 } })
    expect(await tm.callJson('ab', '{"a":1,"a":2}')).toMatchObject({ status: 'ok', data: { a: 2 } })
  })

  it('a maxInputValues that is not a positive integer is a TypeError at construction', () => {
    for (const bad of [0, -1, 1.5, Number.NaN, Infinity, 2 ** 53, '10', null]) {
      expect(() => new ToolManager({ maxInputValues: bad as number }), String(bad)).toThrow(TypeError)
      expect(() => new ToolManager({ maxInputValues: bad as number }), String(bad)).toThrow('maxInputValues must be a positive integer')
    }
    expect(() => new ToolManager({ maxInputValues: 1 })).not.toThrow()
    expect(() => new ToolManager({ maxInputValues: undefined })).not.toThrow()
  })

  it('outputs keep their own limit: a result of 200,000 items is checked against its outputSchema', async () => {
    const tm = new ToolManager({ maxInputValues: 10 })
    const seen: unknown[] = []
    tm.on('output_invalid', (e) => seen.push(e))
    tm.register({ name: 'json', inputSchema: {}, outputSchema: { type: 'array', items: { type: 'number' } }, run: () => new Array(200_000).fill(1) })
    tm.register({ name: 'zod', inputSchema: {}, outputSchema: z.array(z.number()), run: () => new Array(200_000).fill(1) })
    for (const name of ['json', 'zod']) expect(await tm.call(name, {}), name).toMatchObject({ status: 'ok' })
    expect(seen).toEqual([])
    expect(MAX_VALUES).toBe(1_000_000)
  })
})
