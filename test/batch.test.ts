import { describe, expect, it } from 'vitest'
import { ToolManager, errorResult } from '../src/index.js'

const schema = { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'], additionalProperties: false }

function manager(): ToolManager {
  const tm = new ToolManager()
  tm.register({ name: 'double', inputSchema: schema, run: async ({ n }: { n: number }) => n * 2 })
  tm.register({ name: 'fail', inputSchema: { type: 'object' }, run: () => errorResult('nope') })
  tm.register({ name: 'throws', inputSchema: { type: 'object' }, run: () => { throw new Error('secret') } })
  tm.register({ name: 'hang', inputSchema: { type: 'object' }, run: (_i, ctx) => new Promise((r) => ctx.signal.addEventListener('abort', r)) })
  return tm
}

describe('tm.callMany', () => {
  it('runs a turn of calls and resolves once with views in order', async () => {
    const tm = manager()
    const views = await tm.callMany([
      { name: 'double', args: '{"n":2}' },
      { name: 'double', input: { n: 5 } },
      { name: 'double', args: '{"n":"x"}' },
      { name: 'double', args: '{bad' },
      { name: 'nope', args: '{}' },
      { name: 'fail', input: {} },
      { name: 'throws', input: {} },
    ])
    expect(views.map((v) => v.status)).toEqual(['ok', 'ok', 'invalid', 'invalid', 'refused', 'error', 'error'])
    expect(views[0]).toMatchObject({ status: 'ok', data: 4 })
    expect(views[1]).toMatchObject({ status: 'ok', data: 10 })
    expect(JSON.stringify(views[6])).not.toContain('secret')
    expect(Object.isFrozen(views)).toBe(true)
    expect(new Set(views.map((v) => v.callId)).size).toBe(7)
    expect(structuredClone(views)).toEqual(JSON.parse(JSON.stringify(views)))
  })

  it('an unreadable entry is refused invalid_call, a nameless one unknown_tool, and the others run (docs/calling.md)', async () => {
    const tm = manager()
    const unreadable = new Proxy({}, { get() { throw new Error('boom') } })
    const views = await tm.callMany([null as never, { name: 'double', input: { n: 1 } }, unreadable as never, { name: 'double', args: '{"n":3}' }])
    expect(views.map((v) => (v.status === 'refused' ? v.code : v.status))).toEqual(['unknown_tool', 'ok', 'invalid_call', 'ok'])
    expect(views[3]).toMatchObject({ status: 'ok', data: 6 })
  })

  it('settles each call exactly as tm.call would, including cancellation', async () => {
    const tm = manager()
    const pending = tm.callMany([
      { name: 'hang', input: {}, options: { callId: 'h1' } },
      { name: 'double', input: { n: 1 } },
      { name: 'hang', input: {}, options: { timeoutMs: 5 } },
    ])
    setTimeout(() => tm.cancel('h1'), 5)
    const views = await pending
    expect(views[0]).toMatchObject({ status: 'cancelled', by: 'operator', callId: 'h1' })
    expect(views[1]).toMatchObject({ status: 'ok', data: 2 })
    expect(views[2]).toMatchObject({ status: 'error', kind: 'timeout' })
  })

  it('resolves an empty batch and never rejects on bad input', async () => {
    const tm = manager()
    const errors: string[] = []
    tm.on('error', (e) => void errors.push(e.message))
    expect(await tm.callMany([])).toEqual([])
    expect(errors).toEqual([])
    for (const notAList of ['nope', undefined, 5, {}, new Set([{ name: 'double', input: { n: 1 } }])]) {
      expect(await tm.callMany(notAList as never)).toEqual([])
    }
    expect(errors).toEqual(Array(5).fill('toolwire: tm.callMany takes an array of calls ({ name, input | args, options? }); it got none, and ran nothing'))
    const [both] = await tm.callMany([{ name: 'double', args: '{"n":2}', input: { n: 5 } } as never])
    expect(both).toMatchObject({ status: 'ok', data: 4 })
    const [v] = await tm.callMany([undefined as never])
    expect(v!.status).toBe('refused')
    const [w] = await tm.callMany([{ name: 'double', args: 42 as never }])
    expect(w!.status).toBe('invalid')
  })

  it('answers one view per entry of a sparse list up to maxInputValues entries; a longer list runs nothing, answers [] and says why in an error event (docs/calling.md)', async () => {
    const tm = new ToolManager({ maxInputValues: 1000 })
    tm.register({ name: 'double', inputSchema: schema, run: async ({ n }: { n: number }) => n * 2 })
    const errors: string[] = []
    tm.on('error', (e) => errors.push(e.message))
    const holes: unknown[] = []
    holes.length = 1000
    holes[999] = { name: 'double', input: { n: 4 } }
    const views = await tm.callMany(holes as never)
    expect(views).toHaveLength(1000)
    expect(views[0]).toMatchObject({ status: 'refused', code: 'unknown_tool' })
    expect(views[999]).toMatchObject({ status: 'ok', data: 8 })
    expect(errors).toEqual([])
    let ran = 0
    tm.register({ name: 'count', inputSchema: { type: 'object' }, run: () => ++ran })
    const long = Array.from({ length: 1001 }, () => ({ name: 'count', input: {} }))
    expect(await tm.callMany(long)).toEqual([])
    const huge: unknown[] = []
    huge.length = 2 ** 32 - 1
    const answer = await tm.callMany(huge as never)
    expect(answer).toEqual([])
    expect(Object.isFrozen(answer)).toBe(true)
    expect(ran).toBe(0)
    expect(errors).toEqual([
      'toolwire: callMany got 1001 entries, more than maxInputValues (1000); none ran and the answer is an empty list',
      `toolwire: callMany got ${2 ** 32 - 1} entries, more than maxInputValues (1000); none ran and the answer is an empty list`,
    ])
  })

  it('counts batch calls in the core metrics like single calls', async () => {
    const tm = manager()
    await tm.callMany(Array.from({ length: 100 }, (_, n) => ({ name: 'double', input: { n } })))
    expect(tm.metrics().tools.find((t) => t.tool === 'double')!.calls.success).toBe(100)
  })
})
