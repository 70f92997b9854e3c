// normalizeReturn redacts a body's returned data with the key test it is given: the tool
// entry's precomputed `sensitiveKey` (no closure made per call). The end-to-end redaction of
// returned data is in test/output-redaction.test.ts and test/summary-redaction.test.ts.
import { describe, expect, it } from 'vitest'
import { ok } from '../src/core/helpers.js'
import { sensitiveKeys } from '../src/core/redact.js'
import { normalizeReturn } from '../src/runtime/normalize.js'

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
