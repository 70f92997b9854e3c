// Confirmations, suspensions, undo, outcome-reporting tools, breakers, evidence, form fills.
// Run: node examples/lifecycle.mjs
import assert from 'node:assert/strict'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  JsonlEvidenceStore,
  ToolManager,
  authRequired,
  createFormTool,
  createOutcomeTool,
  errorResult,
  pending,
  pendingOf,
} from 'toolwire'

const evidence = new JsonlEvidenceStore(join(mkdtempSync(join(tmpdir(), 'toolwire-')), 'evidence.jsonl'))
const tm = new ToolManager({ evidence, confirmTtlMs: 60_000 })
const object = { type: 'object' }

// 1. Confirmations (deferred mode): the tool does not run until approved.
const files = new Set(['notes.txt'])
tm.register({
  name: 'delete_file',
  inputSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
  hints: { destructive: true },
  needsConfirmation: true,
  summarize: ({ path }) => `Delete ${path}`,
  run: ({ path }) => files.delete(path),
})
const asked = await tm.call('delete_file', { path: 'notes.txt' })
assert.equal(asked.status, 'needs_confirmation')
assert.equal(asked.summary, 'Delete notes.txt')
assert.equal(files.size, 1)
const done = await tm.confirm(asked.confirmId, { approve: true })
assert.deepEqual([done.status, files.size], ['ok', 0])
assert.equal((await tm.confirm(asked.confirmId, { approve: true })).code, 'confirmation_used')

// 2. Suspensions: the call parks until resumed with an answer.
tm.register({
  name: 'deploy',
  inputSchema: object,
  run: () => pending({ kind: 'input', prompt: 'Which environment?' }),
  resume: (answer) => ({ deployedTo: answer }),
})
const parked = await tm.call('deploy', {})
assert.equal(parked.status, 'pending')
assert.equal(pendingOf(authRequired('https://example.com/login')).kind, 'authorization')
assert.deepEqual((await tm.resume(parked.request.id, 'staging')).data, { deployedTo: 'staging' })

// 3. Form fills with redaction and automatic undo.
let settings = { theme: 'light', password: 'old-secret' }
tm.register(
  createFormTool({
    name: 'edit_settings',
    fields: { type: 'object', properties: { theme: { type: 'string' }, password: { type: 'string' } } },
    read: () => settings,
    write: (values) => {
      settings = values
    },
  }),
)
const filled = await tm.call('edit_settings', { theme: 'dark', password: 'new-secret' })
assert.deepEqual(filled.data.changes, [
  { path: '/theme', before: 'light', after: 'dark' },
  { path: '/password', before: '[redacted]', after: '[redacted]' },
])
assert.equal((await tm.undo(filled.callId)).status, 'ok')
assert.deepEqual(settings, { theme: 'light', password: 'old-secret' })
assert.equal((await tm.undo(filled.callId)).code, 'undo_unavailable')

// 4. Outcome-reporting tools: a recovered failure is reported, the raw value is kept.
const lookup = createOutcomeTool({
  definition: { type: 'function', function: { name: 'lookup', parameters: object } },
  execute: async (_args, invocation) => {
    invocation.reportFailure(new Error('Record lookup is unavailable'))
    return { success: false, record: null }
  },
})
tm.register({ ...lookup, breaker: { failures: 2, cooldownMs: 1000 } })
const report = await tm.executeWithOutcome('lookup', {})
assert.deepEqual(report.result, { success: false, record: null })
assert.equal(report.outcome.status, 'failed')

// 5. The circuit breaker counts reported failures too: after 2, calls are refused without running.
await tm.call('lookup', {})
assert.equal((await tm.call('lookup', {})).code, 'circuit_open')

// 6. Evidence: every call, input redacted, readable after a restart.
//    A call settles before its record is written; flush() waits for every record so far.
tm.register({ name: 'fail', inputSchema: object, run: () => errorResult('nope') })
const failed = await tm.call('fail', { password: 'x' })
await evidence.flush()
const records = await new JsonlEvidenceStore(evidence.path).readAll()
const last = records.at(-1)
assert.deepEqual([last.callId, last.input], [failed.callId, { password: '[redacted]' }])

// 7. The manifest (MCP / WebMCP / bridge description) carries hints such as untrustedContent.
console.log(JSON.stringify(tm.manifest().map((t) => [t.name, t.hints])))
console.log('lifecycle example ok')
