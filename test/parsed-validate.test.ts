import { describe, expect, it } from 'vitest'
import { ToolManager } from '../src/index.js'

// callJson checks an input parsed from a short text without walking its shape first
// (validate.ts `parsed`): what it answers must be exactly what `call` answers.
describe('callJson skips the shape walk only where it cannot matter', () => {
  const schema = {
    type: 'object',
    properties: { a: { type: 'string' }, b: { type: 'integer' }, c: { type: 'array', items: { type: 'number' } } },
    required: ['a', 'b'],
    additionalProperties: false,
  }
  const tm = new ToolManager({ development: false })
  tm.register({ name: 't', inputSchema: schema, run: (i: unknown) => i as never })

  it.each([
    '{"a":"x","b":1}',
    '{"a":1,"b":"y","c":["z",2,"w"],"d":0}',
    '{}',
    '[]',
    '7',
    `{"a":"x","b":1,"c":${'['.repeat(99)}${']'.repeat(99)}}`,
    `{"a":"x","b":1,"c":${'['.repeat(120)}${']'.repeat(120)}}`,
    `{"a":"x","b":1,"c":[${Array.from({ length: 150 }, () => '"s"').join(',')}]}`,
  ])('%s', async (text) => {
    const fromText = await tm.callJson('t', text)
    const fromValue = await tm.call('t', JSON.parse(text))
    const { callId: _a, ...a } = fromText
    const { callId: _b, ...b } = fromValue
    expect(a).toEqual(b)
  })

  it('a batch entry answers as callJson does', async () => {
    const text = '{"a":1,"b":"y","c":["z"]}'
    const [view] = await tm.callMany([{ name: 't', args: text }])
    const { callId: _a, ...a } = view!
    const { callId: _b, ...b } = await tm.call('t', JSON.parse(text))
    expect(a).toEqual(b)
  })
})
