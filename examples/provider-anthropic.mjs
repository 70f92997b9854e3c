// Run an Anthropic Messages tool loop with toolwire. A scripted fake model stands in for the
// API here; with the SDK, `model(body)` is `anthropic.messages.create(body)`.
// Run: node examples/provider-anthropic.mjs
import assert from 'node:assert/strict'
import { ToolManager } from 'toolwire'
import { anthropicTools, runAnthropic } from 'toolwire/providers'

const tm = new ToolManager()
tm.register({
  name: 'lookup_order',
  description: 'Find an order by id',
  inputSchema: { type: 'object', properties: { id: { type: 'string', pattern: '^[0-9]+$' } }, required: ['id'] },
  run: ({ id }) => ({ id, status: 'shipped' }),
})

// The fake model: it looks two orders up (one id is not valid), then answers. It checks what
// Anthropic checks: the next user message starts with a tool_result for every tool_use.
function model({ messages, tools }) {
  assert.equal(tools[0].input_schema.type, 'object')
  const last = messages.at(-1)
  if (typeof last.content === 'string') {
    return {
      role: 'assistant',
      stop_reason: 'tool_use',
      content: [
        { type: 'text', text: 'Looking those up.' },
        { type: 'tool_use', id: 'toolu_1', name: 'lookup_order', input: { id: '42' } },
        { type: 'tool_use', id: 'toolu_2', name: 'lookup_order', input: { id: 'abc' } },
      ],
    }
  }
  const asked = messages.at(-2).content.filter((b) => b.type === 'tool_use').map((b) => b.id)
  assert.deepEqual(last.content.map((b) => b.tool_use_id), asked)
  assert.deepEqual(last.content.map((b) => b.is_error), [false, true])
  return { role: 'assistant', stop_reason: 'end_turn', content: [{ type: 'text', text: 'Order 42 has shipped; "abc" is not an order id.' }] }
}

const messages = [{ role: 'user', content: 'Where are orders 42 and abc?' }]
for (;;) {
  const message = model({ model: 'claude-sonnet-4-5', max_tokens: 1024, messages, tools: anthropicTools(tm) })
  messages.push({ role: 'assistant', content: message.content })
  if (message.stop_reason !== 'tool_use') break
  messages.push(await runAnthropic(tm, message))
}
console.log(messages.at(-1).content[0].text)
console.log('anthropic example ok')
