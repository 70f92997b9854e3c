// Type test (tsc -p test/tsconfig.json): aiSdkTools gives a typed tool set, so generateText's
// tool calls and results are typed, not `any` (found in review #21 item 9).
import { generateText, type LanguageModel } from 'ai'
import { expectTypeOf } from 'vitest'
import { ToolManager, type CallResult } from '../../src/index.js'
import { aiSdkTools } from '../../src/integrations/ai-sdk.js'

export async function typedResults(model: LanguageModel): Promise<void> {
  const result = await generateText({ model, tools: aiSdkTools(new ToolManager()), prompt: 'go' })
  const [call] = result.toolCalls
  const [output] = result.toolResults
  // a static (not `dynamic`) tool's call and result are typed: the input unknown (toolwire validates it), the output the success view
  if (call !== undefined && call.dynamic !== true) expectTypeOf(call.input).toEqualTypeOf<unknown>()
  if (output !== undefined && output.dynamic !== true) {
    expectTypeOf(output.output).toEqualTypeOf<Extract<CallResult, { readonly status: 'ok' }>>()
    expectTypeOf(output.output.status).toEqualTypeOf<'ok'>()
  }
}
