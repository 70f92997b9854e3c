// toolwire's tools in LangChain.js: one line (`langchainTools(tm)`), with a scripted fake chat
// model (fakeModel from @langchain/core/testing) so it runs offline. Run: node examples/langchain.mjs
import assert from 'node:assert/strict'
import { AIMessage, HumanMessage } from '@langchain/core/messages'
import { fakeModel } from '@langchain/core/testing'
import { ToolManager } from 'toolwire'
import { answerConfirmation, langchainTools } from 'toolwire/langchain'

const tm = new ToolManager()
const files = new Map([['notes.txt', 'Buy milk.']])
const path = { type: 'object', properties: { path: { type: 'string' } }, required: ['path'], additionalProperties: false }
tm.register({ name: 'read_file', description: 'Read a file', inputSchema: path, run: ({ path }) => files.get(path) ?? '(no such file)' })
tm.register({ name: 'delete_file', description: 'Delete a file', inputSchema: path, needsConfirmation: true, summarize: ({ path }) => `Delete ${path}`, run: ({ path }) => files.delete(path) })

const tools = langchainTools(tm) // the one line
const byName = Object.fromEntries(tools.map((t) => [t.name, t]))
const model = fakeModel()
  .respondWithTools([
    { name: 'read_file', args: { path: 42 }, id: 'call_1' },
    { name: 'delete_file', args: { path: 'notes.txt' }, id: 'call_2' },
  ])
  .respond(new AIMessage('done'))
const agent = model.bindTools(tools)

const messages = [new HumanMessage('Read notes.txt, then delete it.')]
const ai = await agent.invoke(messages)
messages.push(ai)
for (const call of ai.tool_calls) {
  let result = await byName[call.name].invoke(call) // a ToolMessage: status, content, artifact (the app view)
  console.log(`${call.name}: status ${result.status}, view ${result.artifact.status}: ${result.content}`)
  if (result.artifact.status === 'needs_confirmation') {
    console.log('approve?', result.artifact.summary)
    result = await answerConfirmation(tm, result, { approve: true }) // runs it once
    console.log(`${call.name} after approval: status ${result.status}: ${result.content}`)
  }
  messages.push(result)
}
assert.equal(files.has('notes.txt'), false)
const final = await agent.invoke(messages)
console.log('final answer:', final.content)
console.log('langchain example ok')
