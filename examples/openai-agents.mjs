// toolwire's tools in the OpenAI Agents SDK: one line (`openaiAgentTools(tm)`), with a scripted
// fake Model so it runs offline. Run: node examples/openai-agents.mjs
import assert from 'node:assert/strict'
import { Agent, run, setTracingDisabled, Usage } from '@openai/agents'
import { ToolManager } from 'toolwire'
import { openaiAgentTools, pendingApproval } from 'toolwire/openai-agents'

setTracingDisabled(true) // offline
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=='
const tm = new ToolManager()
const files = new Map([['notes.txt', 'Buy milk.']])
const path = { type: 'object', properties: { path: { type: 'string' } }, required: ['path'], additionalProperties: false }
tm.register({ name: 'screenshot', description: 'Take a screenshot', inputSchema: { type: 'object' }, run: () => ({ output: 'The screen', isError: false, parts: [{ type: 'image', mimeType: 'image/png', data: PNG }] }) })
tm.register({ name: 'delete_file', description: 'Delete a file', inputSchema: path, needsConfirmation: true, summarize: ({ path }) => `Delete ${path}`, run: ({ path }) => files.delete(path) })

// A scripted model: the first turn calls both tools; after the tool results it answers.
const model = {
  async getResponse({ input }) {
    if (input.at(-1)?.type === 'function_call_result') {
      for (const item of input.filter((i) => i.type === 'function_call_result')) console.log(`model saw ${item.name}:`, JSON.stringify(item.output).slice(0, 120))
      return { usage: new Usage(), output: [{ type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'done' }] }] }
    }
    const call = (callId, name, args) => ({ type: 'function_call', callId, name, arguments: JSON.stringify(args), status: 'completed' })
    return { usage: new Usage(), output: [call('call_1', 'screenshot', {}), call('call_2', 'delete_file', { path: 'notes.txt' })] }
  },
  async *getStreamedResponse() {
    throw new Error('not scripted')
  },
}

const agent = new Agent({ name: 'Assistant', instructions: 'Help.', model, tools: openaiAgentTools(tm) }) // the one line
let result = await run(agent, 'Take a screenshot, then delete notes.txt.')
for (const item of result.interruptions) {
  console.log('approve?', pendingApproval(tm, item.rawItem.callId).summary)
  result.state.approve(item) // the SDK's approval runs the call once: no tm.confirm
}
assert.equal(files.has('notes.txt'), true)
result = await run(agent, result.state)
assert.equal(files.has('notes.txt'), false)
for (const item of result.newItems.filter((i) => i.type === 'tool_call_output_item')) console.log(`${item.rawItem.name}: view ${item.customData.toolwire.status}`)
console.log('final answer:', result.finalOutput)
console.log('openai-agents example ok')
