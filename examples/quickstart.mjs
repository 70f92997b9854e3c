// Register a tool, call it as a model would, and show the one result to each audience.
// Run: node examples/quickstart.mjs
import assert from 'node:assert/strict'
import { ToolManager, canonicalOf, toModel } from 'toolwire'
import { toAnthropic, toMcp, toOpenAIChat } from 'toolwire/adapters'

const tm = new ToolManager()
tm.register({
  name: 'echo',
  description: 'Repeat a text n times',
  inputSchema: {
    type: 'object',
    properties: { text: { type: 'string' }, n: { type: 'integer', minimum: 1 } },
    required: ['text', 'n'],
    additionalProperties: false,
  },
  run: ({ text, n }) => ({ echoed: text.repeat(n) }),
})

// the application view: a frozen union, never thrown
const ok = await tm.callJson('echo', '{"text":"hi","n":2}')
assert.deepEqual({ ...ok, callId: undefined }, { status: 'ok', data: { echoed: 'hihi' }, callId: undefined })
const bad = await tm.callJson('echo', '{"text":1}')
assert.equal(bad.status, 'invalid')
console.log(bad.issues) // [{ path: '/n', message: 'is required' }, { path: '/text', message: 'must be string' }]

// the canonical result behind it (the Rust core's wire format)
console.log(canonicalOf(ok).toJSONText())

// the model view and provider wires
console.log(toModel(bad))
console.log(JSON.stringify(toOpenAIChat(bad, { toolCallId: 'call_1' })))
console.log(JSON.stringify(toAnthropic(bad, { toolUseId: 'toolu_1' })))
console.log(JSON.stringify(toMcp(ok)))
