// What a tool returns is a result too: its sensitive fields (declared, and the default names
// `password` and `cc-…`) are redacted in the view, the model text, every wire, call_end and the
// recorded replay; the application still gets the tool's own value from tm.execute.
import { describe, expect, it } from 'vitest'
import { ok, refusalError, toModel, toolError, ToolManager, ToolResult } from '../src/index.js'
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

describe('every user-supplied field of a returned result is redacted (found in review #21 item 5)', () => {
  const PW = 'pw-IN-metadata-77'
  const TOKEN = 'tok-IN-details-42'
  const secrets = { password: PW, nested: [{ 'cc-number': '4000000000000002', apiToken: TOKEN }] }
  const returns: [string, () => unknown][] = [
    ['a model result’s metadata', () => ({ output: 'x', isError: false, metadata: secrets })],
    ['a failed model result’s metadata', () => ({ output: 'x', isError: true, metadata: secrets })],
    ['a pending model result’s other metadata', () => ({ output: 'x', isError: true, metadata: { ...secrets, pending: { kind: 'input', id: 'p1', prompt: 'name?' } } })],
    ['a ToolResult’s data', () => ToolResult.fromData(secrets)],
    ['a ToolResult’s structured output (its text given as that JSON)', () => ToolResult.success({ text: JSON.stringify(secrets), structured: secrets })],
    ['a ToolResult’s metadata', () => ToolResult.success('x').withMetadata(secrets)],
    ['a ToolResult error’s details', () => ToolResult.failed(toolError('network', 'down', { details: secrets }))],
    ['a ToolResult refusal’s details', () => ToolResult.failed(refusalError('nope', 'no', secrets))],
    ['a ToolResult from the wire', () => ToolResult.fromJSON(JSON.stringify({ v: 1, status: 'success', output: { text: 'x', structured: secrets }, metadata: secrets }))],
  ]
  it.each(returns)('%s: redacted in the view, toModel, every wire, the canonical JSON and call_end', async (_what, run) => {
    const tm = new ToolManager()
    tm.register({ name: 't', inputSchema: { type: 'object' }, sensitive: ['apiToken'], run })
    const ends: string[] = []
    tm.on('call_end', (e) => ends.push(JSON.stringify({ record: e.record, view: e.view, result: e.result.toJSONText() })))
    const view = await tm.call('t', {})
    const outputs = [
      JSON.stringify(view),
      JSON.stringify(toModel(view)),
      JSON.stringify(toOpenAIChat(view, { toolCallId: 'c1' })),
      JSON.stringify(toAnthropic(view, { toolUseId: 'c1' })),
      JSON.stringify(toMcp(view)),
      ...ends,
    ]
    expect(ends).toHaveLength(1)
    expect(ends[0]).toContain('[redacted]')
    for (const text of outputs) {
      expect(text).not.toContain(PW)
      expect(text).not.toContain(TOKEN)
      expect(text).not.toContain('4000000000000002')
    }
  })

  it('a result with nothing sensitive is kept as it was returned', async () => {
    const tm = new ToolManager()
    const result = ToolResult.success('x').withMetadata({ note: 'n' })
    tm.register({ name: 't', inputSchema: { type: 'object' }, run: () => result })
    let seen: unknown
    tm.on('call_end', (e) => (seen = e.result))
    await tm.call('t', {})
    expect(seen).toBe(result)
  })
})
