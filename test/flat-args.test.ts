/**
 * The flat argument parser (src/core/flat-args.ts) reads the usual tool-call text without
 * `JSON.parse`. Whatever it returns must be exactly `JSON.parse`'s value (the same members in
 * the same order, the same numbers, -0 too, a plain object); every other text, valid or not,
 * must be left to `JSON.parse`. The calls it serves behave as before.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { flatArgNames, flatArgNamesOf, parseFlatArgs } from '../src/core/flat-args.js'
import { ToolManager } from '../src/index.js'

const NAMES = ['text', 'n', 'te', 'flag', 'nothing', 'ñame', '0', 'constructor']
const names = flatArgNames(NAMES)!
const parse = (text: string): Record<string, unknown> | undefined => parseFlatArgs(text, names)

let accepted = 0

/** The parser agrees with JSON.parse on `text`: the same value, or it declines. */
function agrees(text: string): void {
  const fast = parse(text)
  let expected: unknown
  try {
    expected = JSON.parse(text)
  } catch {
    expect(fast, `accepted text JSON.parse rejects: ${JSON.stringify(text)}`).toBeUndefined()
    return
  }
  if (fast === undefined) return
  accepted++
  expect(Object.getPrototypeOf(fast)).toBe(Object.prototype)
  expect(Object.keys(fast)).toEqual(Object.keys(expected as object))
  for (const key of Object.keys(fast)) expect(Object.is(fast[key], (expected as Record<string, unknown>)[key]), `${key} in ${text}`).toBe(true)
}

const ws = fc.constantFrom('', ' ', '\n', '\t', '\r', '  ')
const key = fc.oneof({ arbitrary: fc.constantFrom(...NAMES), weight: 8 }, fc.constantFrom('other', 'tex', 'texts', '__proto__', 'te\\u0078t', 'n"'), fc.string({ maxLength: 4 }))
const primitive = fc.oneof(
  { arbitrary: fc.string({ maxLength: 8 }).map((s) => JSON.stringify(s)), weight: 3 },
  fc.constantFrom('"a\\"b"', '"\\u0041"', '"tab\there"', '"\ud800"', '""'),
  { arbitrary: fc.double().map((d) => JSON.stringify(d)), weight: 2 },
  { arbitrary: fc.integer().map(String), weight: 2 },
  fc.constantFrom('-0', '0', '1e400', '-1e-400', '1.5E+3', '123456789012345', '1234567890123456', '9007199254740993', '-12.50', '01', '1.', '.5', '-', '+1', '0x10', '1e', 'NaN', '-123456789012345', '-1234567890123456', '999999999999999', '0e0', '-0.0', '-01', '1E-0'),
  fc.constantFrom('true', 'false', 'null', 'tru', 'nul', 'falsey', '[]', '{}', '{"a":1}', '[1,2]'),
)
const member = fc.tuple(ws, key, ws, ws, primitive, ws).map(([a, k, b, c, v, d]) => `${a}${k.startsWith('te\\') || k.endsWith('"') ? `"${k}"` : JSON.stringify(k)}${b}:${c}${v}${d}`)
const objectText = fc.tuple(ws, fc.array(member, { maxLength: 4 }), ws, fc.constantFrom('', '', '', ' ', ',', '}', 'x', '\ufeff')).map(([a, ms, b, tail]) => `${a}{${ms.join(',')}}${b}${tail}`)

describe('flat argument parser', () => {
  it('returns exactly what JSON.parse returns, or declines (generated texts)', () => {
    accepted = 0
    fc.assert(fc.property(objectText, (text) => agrees(text)), { numRuns: 3000 })
    // the generator reaches the parser's own path, not only its declines
    expect(accepted).toBeGreaterThan(400)
  })

  it('returns exactly what JSON.parse returns, or declines (texts with one character changed)', () => {
    const mutated = fc.tuple(objectText, fc.nat(), fc.constantFrom('', '"', '\\', ',', ':', '{', '}', ' ', '1', '-', 'e', '.', '\u0000', 'x')).map(([t, at, c]) => {
      const i = t.length === 0 ? 0 : at % t.length
      return t.slice(0, i) + c + t.slice(i + 1)
    })
    fc.assert(fc.property(mutated, (text) => agrees(text)), { numRuns: 3000 })
  })

  it('reads the usual texts itself', () => {
    expect(parse('{"text":"hello","n":3}')).toEqual({ text: 'hello', n: 3 })
    expect(parse(' { "n" : -1.5e3 ,\n"text":"x" } ')).toEqual({ n: -1500, text: 'x' })
    expect(parse('{}')).toEqual({})
    expect(Object.is(parse('{"n":-0}')!.n, -0)).toBe(true)
    expect(parse('{"n":9007199254740993}')!.n).toBe(JSON.parse('9007199254740993'))
    expect(parse('{"constructor":1}')).toEqual({ constructor: 1 })
    expect(parse('{"ñame":null,"flag":false}')).toEqual({ ñame: null, flag: false })
  })

  it('leaves escapes, nesting, unknown or repeated names, __proto__ and bad JSON to JSON.parse', () => {
    for (const text of [
      '{"text":"a\\nb"}',
      '{"te\\u0078t":"a"}',
      '{"text":{"a":1}}',
      '{"text":[1]}',
      '{"other":1}',
      '{"text":"a","text":"b"}',
      '{"__proto__":{"admin":true}}',
      '{"n":01}',
      '{"n":1,}',
      '{"n":1} x',
      '\ufeff{"n":1}',
      '[1]',
      '"text"',
      '{"text":"unterminated',
      '{"n":tru}',
    ]) {
      expect(parse(text), text).toBeUndefined()
    }
  })

  it('is made only for names it can match, and within the input limit', () => {
    expect(flatArgNames([])).toBeUndefined()
    expect(flatArgNames(['a"b'])).toBeUndefined()
    expect(flatArgNames(['a\\b'])).toBeUndefined()
    expect(flatArgNames(['__proto__'])).toBeUndefined()
    expect(flatArgNames(['a\nb'])).toBeUndefined()
    expect(flatArgNames(['a\u001fb'])).toBeUndefined()
    expect(flatArgNames(['a\u007fb', 'ünï'])).toBeDefined()
    expect(flatArgNames(['ok', '__proto__'])).toBeUndefined()
    expect(flatArgNames(Array.from({ length: 32 }, (_, i) => `k${i}`))).toBeUndefined()
    expect(flatArgNames(Array.from({ length: 31 }, (_, i) => `k${i}`))).toBeDefined()
    expect(flatArgNamesOf({ type: 'object', properties: { a: {}, b: {} } }, 3)).toBeDefined()
    expect(flatArgNamesOf({ type: 'object', properties: { a: {}, b: {} } }, 2)).toBeUndefined()
    expect(flatArgNamesOf({ type: 'object' }, 100)).toBeUndefined()
    const hostile = { get properties(): never { throw new Error('no') } }
    expect(flatArgNamesOf(hostile, 100)).toBeUndefined()
  })
})

describe('calls whose arguments the flat parser reads', () => {
  const schema = { type: 'object', properties: { text: { type: 'string' }, n: { type: 'integer' } }, required: ['text'], additionalProperties: false } as const

  it('behave as calls whose arguments JSON.parse reads', async () => {
    const tm = new ToolManager()
    const seen: unknown[] = []
    tm.register({ name: 'echo', description: 'd', inputSchema: schema, run: (input) => (seen.push(input), input) })
    const texts = ['{"text":"hi","n":3}', '{"text":"h\\u0069","n":3}', '{"text":"hi","n":3.5}', '{"text":1}', '{"text":"hi","x":1}', '{"text":"hi",', '{"n":-0,"text":""}']
    for (const text of texts) {
      const fast = await tm.callJson('echo', text)
      const many = (await tm.callMany([{ name: 'echo', args: text }]))[0]!
      const parsed = await tm.call('echo', (() => { try { return JSON.parse(text) } catch { return undefined } })())
      expect(fast.status, text).toBe(many.status)
      if (parsed.status === 'ok' || text.endsWith(',')) {
        // text JSON cannot parse is refused as not JSON; tm.call of undefined says something else
        expect({ ...fast, callId: '' }, text).toEqual({ ...many, callId: '' })
      }
      if (parsed.status === 'ok') expect({ ...fast, callId: '' }, text).toEqual({ ...parsed, callId: '' })
      else expect(fast.status, text).toBe('invalid')
    }
    expect(seen.every((input) => Object.getPrototypeOf(input) === Object.prototype)).toBe(true)
  })

  it('still refuse an input over the manager’s maxInputValues', async () => {
    const tm = new ToolManager({ maxInputValues: 2 })
    tm.register({ name: 'echo', description: 'd', inputSchema: schema, run: (input) => input })
    const r = await tm.callJson('echo', '{"text":"hi","n":3}')
    expect(r.status).toBe('invalid')
    expect(JSON.stringify(r)).toContain('more than 2 values')
  })
})
