// Run an OpenAI Chat Completions tool loop with toolwire: declare the tools, run the model's
// tool calls, send the answers back. A scripted fake model stands in for the API here; with
// the SDK, `model(body)` is `openai.chat.completions.create(body)`.
// Run: node examples/provider-openai-chat.mjs
import assert from 'node:assert/strict'
import { ToolManager } from 'toolwire'
import { openAIChatTools, runOpenAIChat } from 'toolwire/providers'

const PIXEL = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=='
const tm = new ToolManager()
tm.register({
  name: 'weather',
  description: 'The weather in a city',
  inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  run: ({ city }) => ({ city, celsius: 21 }),
})
tm.register({
  name: 'radar',
  description: 'A radar image of a city',
  inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  run: ({ city }) => ({ output: `Radar for ${city}`, isError: false, parts: [{ type: 'image', mimeType: 'image/png', data: PIXEL }] }),
})

// The fake model: first it calls three tools (one with broken arguments), then it answers.
// It checks what OpenAI checks: every tool call answered, and no user message between tool messages.
function model({ messages, tools }) {
  assert.deepEqual(tools.map((t) => t.function.name), ['weather', 'radar'])
  const last = messages.at(-1)
  if (last.role === 'user' && typeof last.content === 'string') {
    const tool_calls = [
      { id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } },
      { id: 'call_2', type: 'function', function: { name: 'radar', arguments: '{"city":"Oslo"}' } },
      { id: 'call_3', type: 'function', function: { name: 'weather', arguments: '{"city":' } },
    ]
    return { choices: [{ message: { role: 'assistant', content: null, refusal: null, tool_calls } }] }
  }
  const asked = messages.findLast((m) => m.role === 'assistant').tool_calls.map((c) => c.id)
  const after = messages.slice(messages.findLastIndex((m) => m.role === 'assistant') + 1)
  assert.deepEqual(after.filter((m) => m.role === 'tool').map((m) => m.tool_call_id), asked)
  assert.deepEqual(after.map((m) => m.role), ['tool', 'tool', 'tool', 'user'], 'tool messages first, then the media')
  return { choices: [{ message: { role: 'assistant', content: 'Oslo: 21 °C, radar attached.', refusal: null } }] }
}

const messages = [{ role: 'user', content: 'Weather in Oslo, with the radar?' }]
for (;;) {
  const { message } = model({ model: 'gpt-5', messages, tools: openAIChatTools(tm) }).choices[0]
  messages.push(message)
  if (!message.tool_calls) break
  const answers = await runOpenAIChat(tm, message)
  messages.push(...answers)
  console.log(answers.results.map((r) => r.status).join(' ')) // ok ok invalid
}
console.log(messages.at(-1).content)
console.log('openai chat example ok')
