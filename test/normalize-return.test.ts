// normalizeReturn redacts a body's returned data with the key test it is given: the tool
// entry's precomputed `sensitiveKey` (no closure made per call). The end-to-end redaction of
// returned data is in test/output-redaction.test.ts and test/summary-redaction.test.ts.
import { describe, expect, it } from 'vitest'
import { ok } from '../src/core/helpers.js'
import { sensitiveKeys } from '../src/core/redact.js'
import { normalizeReturn } from '../src/runtime/normalize.js'
import { toModel, ToolManager } from '../src/index.js'

const returned = () => ({ user: 'ann', apiToken: 'sk-1', password: 'hunter2', note: 'n' })
/** A key test that is not `sensitiveKeys(set)` of any set: `note` only. */
const onlyNote = (key: string): boolean => key === 'note'

describe('normalizeReturn', () => {
  it('redacts plain data and a helper result’s data with the given key test, not one built from the set', () => {
    const sensitive = new Set(['apiToken'])
    for (const value of [returned(), ok(returned())]) {
      const data = normalizeReturn(value, false, sensitive, onlyNote).data()
      expect(data).toEqual({ user: 'ann', apiToken: 'sk-1', password: 'hunter2', note: '[redacted]' })
    }
  })

  it('with the entry’s test (`sensitiveKeys(sensitive)`) redacts the declared and the default names, keeps untrusted', () => {
    const sensitive = new Set(['apiToken'])
    const result = normalizeReturn(ok(returned()), true, sensitive, sensitiveKeys(sensitive))
    expect(result.data()).toEqual({ user: 'ann', apiToken: '[redacted]', password: '[redacted]', note: 'n' })
    expect(result.isUntrusted()).toBe(true)
  })
})

describe('a model result without isError (found in review #21 item 11)', () => {
  const image = { type: 'image', mimeType: 'image/png', data: 'iVBORw0KGgo=' } as const
  const key = sensitiveKeys(undefined)

  it('{ output, parts } is the model result it plainly is: a success whose image stays a part, never JSON text', async () => {
    const result = normalizeReturn({ output: 'the chart', parts: [image] }, false, undefined, key)
    expect(result.isSuccess()).toBe(true)
    expect(result.text()).toBe('the chart')
    expect(result.parts()).toEqual([image])
    expect(result.data()).toBeUndefined()
    const tm = new ToolManager()
    tm.register({ name: 'chart', inputSchema: { type: 'object' }, run: () => ({ output: 'the chart', parts: [image], metadata: { password: 'pw-1', rows: 3 } }) })
    const model = toModel(await tm.call('chart', {}))
    expect(model).toMatchObject({ output: 'the chart', isError: false, parts: [image], metadata: { password: '[redacted]', rows: 3 } })
    expect(model.output).not.toContain('iVBORw0KGgo=')
  })

  it('plain data that merely has output and parts members stays data', () => {
    for (const value of [
      { output: 'x', parts: ['a', 'b'] },
      { output: 'x', parts: [] },
      { output: 'x', parts: [{ type: 'image' }] },
      { output: 'x', parts: [image], other: 1 },
      { output: 'x', isError: 'no', parts: [image] },
      { output: 'x' },
    ]) {
      expect(normalizeReturn(value, false, undefined, key).data()).toEqual(value)
    }
  })
})
