// What a tool returns is a result too: its sensitive fields (declared, and the default names
// `password` and `cc-…`) are redacted in the view, the model text, every wire, call_end and the
// recorded replay; the application still gets the tool's own value from tm.execute.
import { describe, expect, it } from 'vitest'
import { ok, toModel, ToolManager } from '../src/index.js'
import { toAnthropic, toMcp, toOpenAIChat } from '../src/render/index.js'
import { MemoryStore } from '../src/runtime/store/index.js'
import { isSensitive } from '../src/core/redact.js'

const SECRET = 'sk-LIVE-9f8e7d'
const returned = () => ({ user: 'ann', apiToken: SECRET, Password: 'hunter2', cards: [{ 'CC-number': '4111111111111111', last4: '1111' }] })

function manager(): ToolManager {
  const tm = new ToolManager()
  const def = { inputSchema: { type: 'object' }, sensitive: ['apiToken'] } as const
  tm.register({ ...def, name: 'plain', run: returned })
  tm.register({ ...def, name: 'async_plain', run: async () => returned() })
  tm.register({ ...def, name: 'helper', run: () => ok(returned()) })
  tm.register({ ...def, name: 'untrusted', hints: { untrustedContent: true }, run: returned })
  return tm
}

describe('a tool’s returned data', () => {
  it.each(['plain', 'async_plain', 'helper', 'untrusted'])('%s: sensitive fields are redacted everywhere the result goes', async (name) => {
    const tm = manager()
    const ends: string[] = []
    tm.on('call_end', (e) => ends.push(JSON.stringify({ record: e.record, view: e.view, result: e.result.toJSONText() })))
    const view = await tm.call(name, {})
    expect(view).toMatchObject({
      status: 'ok',
      data: { user: 'ann', apiToken: '[redacted]', Password: '[redacted]', cards: [{ 'CC-number': '[redacted]', last4: '1111' }] },
    })
    const outputs = [
      JSON.stringify(view),
      toModel(view).output,
      JSON.stringify(toOpenAIChat(view, { toolCallId: 'c1' })),
      JSON.stringify(toAnthropic(view, { toolUseId: 'c1' })),
      JSON.stringify(toMcp(view)),
      ...ends,
    ]
    for (const text of outputs) {
      expect(text).not.toContain(SECRET)
      expect(text).not.toContain('hunter2')
      expect(text).not.toContain('4111111111111111')
    }
    expect(ends).toHaveLength(1)
  })

  it('the application still gets the tool’s own value from tm.execute', async () => {
    expect(await manager().execute('plain', {})).toEqual(returned())
  })

  it('a recorded result replayed for an idempotency key is the redacted one', async () => {
    const tm = new ToolManager({ store: new MemoryStore() })
    let runs = 0
    tm.register({ name: 'mint', inputSchema: { type: 'object' }, hints: { idempotent: true }, run: () => (runs++, { password: 'generated-Pw-1' }) })
    const first = await tm.call('mint', {}, { idempotencyKey: 'k1' })
    const again = await tm.call('mint', {}, { idempotencyKey: 'k1' })
    expect(runs).toBe(1)
    expect(first).toMatchObject({ status: 'ok', data: { password: '[redacted]' } })
    expect(again).toMatchObject({ status: 'ok', data: { password: '[redacted]' }, replayed: true })
  })
})

describe('isSensitive (no lower-case copy of each key)', () => {
  it('matches the default names in any case, the declared names exactly, and nothing else', () => {
    const declared = new Set(['apiToken'])
    for (const name of ['password', 'PASSWORD', 'PassWord', 'cc-', 'cc-number', 'CC-Number', 'Cc-x', 'apiToken']) expect(isSensitive(name, declared)).toBe(true)
    for (const name of ['passwords', 'passwor', 'my-password', 'cc', 'ccnumber', 'c-c', 'cd-x', 'apitoken', '', 'pässword', 'İcc-']) {
      expect(isSensitive(name, declared)).toBe(false)
    }
  })
})
