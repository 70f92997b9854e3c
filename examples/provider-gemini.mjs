// Run a Gemini tool loop with toolwire. A scripted fake model stands in for the API here;
// with the SDK, `model(body)` is `ai.models.generateContent(body)`.
// Run: node examples/provider-gemini.mjs
import assert from 'node:assert/strict'
import { ToolManager } from 'toolwire'
import { geminiTools, runGemini } from 'toolwire/providers'

const tm = new ToolManager()
tm.register({
  name: 'convert',
  description: 'Convert an amount between currencies',
  inputSchema: {
    type: 'object',
    $defs: { currency: { enum: ['EUR', 'USD', 'NOK'] } },
    properties: { amount: { type: 'number', exclusiveMinimum: 0 }, from: { $ref: '#/$defs/currency' }, to: { $ref: '#/$defs/currency' } },
    required: ['amount', 'from', 'to'],
  },
  run: ({ amount, from, to }) => ({ amount: from === to ? amount : amount * 11, currency: to }),
})

// The fake model: it calls `convert`, then answers. It checks what Gemini checks: one
// functionResponse per functionCall, with the call's name and id.
function model({ contents, config }) {
  const declared = config.tools[0].functionDeclarations[0]
  // the schema Gemini gets has no $defs or $ref: they were inlined
  assert.deepEqual(declared.parametersJsonSchema.properties.from, { enum: ['EUR', 'USD', 'NOK'] })
  const last = contents.at(-1)
  if (last.role === 'user' && last.parts[0].text !== undefined) {
    return { candidates: [{ content: { role: 'model', parts: [{ functionCall: { id: 'fc_1', name: 'convert', args: { amount: 10, from: 'EUR', to: 'NOK' } } }] } }] }
  }
  assert.deepEqual(last.parts.map((p) => [p.functionResponse.name, p.functionResponse.id]), [['convert', 'fc_1']])
  return { candidates: [{ content: { role: 'model', parts: [{ text: `10 EUR is ${JSON.parse(last.parts[0].functionResponse.response.output).amount} NOK.` }] } }] }
}

const contents = [{ role: 'user', parts: [{ text: 'How much is 10 EUR in NOK?' }] }]
for (;;) {
  const response = model({ model: 'gemini-2.5-flash', contents, config: { tools: geminiTools(tm) } })
  const turn = response.candidates[0].content
  contents.push(turn)
  if (!turn.parts.some((p) => p.functionCall)) break
  contents.push(await runGemini(tm, response))
}
console.log(contents.at(-1).parts[0].text)
console.log('gemini example ok')
