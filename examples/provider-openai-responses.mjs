// Run an OpenAI Responses API tool loop with toolwire. A scripted fake model stands in for
// the API here; with the SDK, `model(body)` is `openai.responses.create(body)`.
// Run: node examples/provider-openai-responses.mjs
import assert from 'node:assert/strict'
import { ToolManager } from 'toolwire'
import { openAIResponsesTools, runOpenAIResponses } from 'toolwire/providers'

const tm = new ToolManager()
tm.register({
  name: 'add',
  description: 'Add two numbers',
  inputSchema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
  run: ({ a, b }) => ({ sum: a + b }),
})

// The fake model: it calls `add` twice (once with a string), then answers from the outputs.
function model({ input, tools }) {
  assert.equal(tools[0].name, 'add')
  const outputs = input.filter((item) => item.type === 'function_call_output')
  if (outputs.length === 0) {
    return {
      output: [
        { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'add', arguments: '{"a":2,"b":3}', status: 'completed' },
        { type: 'function_call', id: 'fc_2', call_id: 'call_2', name: 'add', arguments: '{"a":"2","b":3}', status: 'completed' },
      ],
    }
  }
  // every function_call is answered by its call_id
  const calls = input.filter((item) => item.type === 'function_call').map((c) => c.call_id)
  assert.deepEqual(outputs.map((o) => o.call_id), calls)
  return { output: [{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: `2 + 3 = ${JSON.parse(outputs[0].output).sum}` }] }] }
}

const input = [{ role: 'user', content: 'What is 2 + 3?' }]
for (;;) {
  const response = model({ model: 'gpt-5', input, tools: openAIResponsesTools(tm) })
  input.push(...response.output)
  const outputs = await runOpenAIResponses(tm, response)
  if (outputs.length === 0) break
  input.push(...outputs)
  console.log(outputs.map((o) => o.output).join('\n')) // {"sum":5} / Error: The arguments are not valid: ...
}
console.log(input.at(-1).content[0].text)
console.log('openai responses example ok')
