// Every provider declaration and the OpenAI Agents tools give the same parameters: an object
// schema without `$schema` (found by a new-user trial: the Agents tools kept it).
import { describe, expect, it } from 'vitest'
import { ToolManager } from '../src/index.js'
import { openAIResponsesTools } from '../src/integrations/providers/index.js'
import { openaiAgentTools } from '../src/integrations/openai-agents.js'

describe('tool declarations', () => {
  it('drop $schema, the same for the provider helpers and the OpenAI Agents tools', () => {
    const tm = new ToolManager()
    tm.register({
      name: 'lookup',
      description: 'Look a key up',
      inputSchema: { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object', properties: { key: { type: 'string' } }, required: ['key'] },
      run: () => 'v',
    })
    const [agentTool] = openaiAgentTools(tm)
    const [declared] = openAIResponsesTools(tm)
    expect(agentTool?.type).toBe('function')
    const parameters = (agentTool as { parameters: object }).parameters
    expect(parameters).not.toHaveProperty('$schema')
    expect(parameters).toEqual({ type: 'object', properties: { key: { type: 'string' } }, required: ['key'] })
    expect(parameters).toEqual((declared as { parameters: object }).parameters)
  })
})
