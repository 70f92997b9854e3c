// A smoke test of one built binary on the platform it is for (natively, or under emulation such
// as qemu-user): every disposition, a call through tm.callJson, the provider adapters, metrics.
// Needs dist/ (npm run build:ts). Picks the binary the way users can:
//   node scripts/smoke.mjs                                      # whatever binding.cjs loads
//   NAPI_RS_NATIVE_LIBRARY_PATH=npm/linux-arm64-gnu/toolwire.linux-arm64-gnu.node node scripts/smoke.mjs
//   NAPI_RS_FORCE_WASI=error node scripts/smoke.mjs             # the WebAssembly fallback only
// Prints one JSON line and exits 0, or throws (exit 1) at the first check that fails.
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const binding = require('../binding.cjs')
const { ToolManager, ToolResult, refuse, cancelled, pending, canonicalOf } = await import('../dist/index.js')
const { toOpenAIChat, toAnthropic } = await import('../dist/adapters.js')

const tm = new ToolManager()
const object = (properties = {}, required = []) => ({ type: 'object', properties, required })
tm.register({ name: 'echo', inputSchema: object({ text: { type: 'string' } }, ['text']), run: ({ text }) => ({ text }) })
tm.register({ name: 'boom', inputSchema: object(), run: () => { throw new Error('internal detail') } })
tm.register({ name: 'deny', inputSchema: object(), run: () => refuse('read_only', 'the workspace is read-only') })
tm.register({ name: 'stop', inputSchema: object(), run: () => cancelled('policy') })
tm.register({ name: 'ask', inputSchema: object(), run: () => pending({ kind: 'input', prompt: 'Which region?' }) })

const calls = {
  ok: await tm.callJson('echo', '{"text":"hi"}'),
  invalid: await tm.callJson('echo', '{"text":1}'),
  error: await tm.callJson('boom', '{}'),
  refused: await tm.callJson('deny', '{}'),
  cancelled: await tm.callJson('stop', '{}'),
  pending: await tm.callJson('ask', '{}'),
}
for (const [status, result] of Object.entries(calls)) assert.equal(result.status, status === 'pending' ? 'pending' : status, `${status}: ${JSON.stringify(result)}`)
assert.deepEqual(calls.ok.data, { text: 'hi' })

// Each of the core's dispositions, as the core writes them on the wire.
const dispositions = Object.fromEntries(Object.entries(calls).map(([k, r]) => [k, JSON.parse(canonicalOf(r).toJSONText()).status]))
const skipped = ToolResult.skipped('not needed')
dispositions.skipped = JSON.parse(skipped.toJSONText()).status
assert.deepEqual(dispositions, { ok: 'success', invalid: 'error', error: 'error', refused: 'refused', cancelled: 'error', pending: 'pending', skipped: 'skipped' })
assert.equal(ToolResult.fromJSON(skipped.toJSONText()).toJSONText(), skipped.toJSONText())

// Provider wires.
const chat = toOpenAIChat(calls.invalid, { toolCallId: 'call_1' })
assert.equal(chat[0].tool_call_id, 'call_1')
const anthropic = toAnthropic(calls.error, { toolUseId: 'toolu_1' })
assert.equal(anthropic.is_error, true)
assert.ok(!JSON.stringify(anthropic).includes('internal detail'), 'an error detail leaked to the model')

// Metrics aggregated in the core.
const metrics = tm.metrics()
const count = (tool, status) => metrics.tools.find((t) => t.tool === tool)?.calls[status]
assert.deepEqual([count('echo', 'success'), count('echo', 'error'), count('boom', 'error'), count('deny', 'denied'), count('ask', 'pending')], [1, 1, 1, 1, 1])
assert.equal(metrics.tools.find((t) => t.tool === 'echo').errors.invalid_args, 1)
assert.match(tm.metrics({ format: 'prometheus' }), /echo/)

console.log(JSON.stringify({ platform: `${process.platform}-${process.arch}`, node: process.version, binding: binding.__napiBindingTarget, dispositions }))
