// toolwire's rows for `npm run bench` (see bench/README.md for the plug-in interface).
// Uses the built package (dist/), as an installed user would.
import { ToolManager, toModel, ToolCallError } from '../dist/index.js'
import { toOpenAIChat } from '../dist/adapters.js'

function manager(ctx, tag) {
  const tm = new ToolManager({ development: false })
  tm.register({ name: ctx.toolName, description: ctx.description, inputSchema: ctx.echoSchema, run: ctx.makeBody(tag) })
  return tm
}

function expectOk(result) {
  if (result.status !== 'ok') throw new ToolCallError(result)
  return result
}

export async function candidates(ctx) {
  const name = ctx.toolName
  switch (ctx.group) {
    case 1: {
      const a = manager(ctx, 'callJson')
      const b = manager(ctx, 'call')
      return [
        {
          name: 'toolwire tm.callJson',
          notes: 'JSON text → parse → compiled schema check → body → canonical ToolResult → frozen app view (no listeners)',
          run: () => a.callJson(name, ctx.argsText),
          check: async (text) => expectOk(await a.callJson(name, text)),
        },
        {
          name: 'toolwire tm.call',
          notes: 'same, with an object input (the model arguments already parsed)',
          run: () => b.call(name, JSON.parse(ctx.argsText)),
          check: async (text) => expectOk(await b.call(name, JSON.parse(text))),
        },
      ]
    }
    case 2: {
      const a = manager(ctx, 'batch')
      const m = manager(ctx, 'callMany')
      const s = manager(ctx, 'one at a time')
      const n = ctx.batchSize
      const turn = Array.from({ length: n }, () => ({ name, args: ctx.argsText }))
      return [
        {
          name: 'toolwire tm.callJson, one at a time',
          notes: `${n} tm.callJson awaited one after another: T1's call, timed in this process (T3 divides tm.callMany by it)`,
          run: async () => {
            for (let i = 0; i < n; i++) await s.callJson(name, ctx.argsText)
          },
          check: async (text) => expectOk(await s.callJson(name, text)),
        },
        {
          name: 'toolwire tm.callMany',
          notes: `one tm.callMany of ${n} calls (JSON text), views in order`,
          run: () => m.callMany(turn),
          check: async (text) => expectOk((await m.callMany([{ name, args: text }]))[0]),
        },
        {
          name: 'toolwire tm.callJson ×N',
          notes: `Promise.all of ${n} tm.callJson`,
          run: () => {
            const ps = new Array(n)
            for (let i = 0; i < n; i++) ps[i] = a.callJson(name, ctx.argsText)
            return Promise.all(ps)
          },
          check: async (text) => expectOk(await a.callJson(name, text)),
        },
      ]
    }
    case 3: {
      const a = manager(ctx, 'large-openai')
      const b = manager(ctx, 'large-model')
      return [
        {
          name: 'toolwire callJson → toOpenAIChat → JSON',
          notes: 'the OpenAI chat tool message, serialized for the request body',
          run: async () => JSON.stringify(toOpenAIChat(await a.callJson(name, ctx.argsText), { toolCallId: ctx.callId })[0]),
          check: async (text) => expectOk(await a.callJson(name, text)),
        },
        {
          name: 'toolwire callJson → toModel → JSON',
          notes: 'the model view { output, isError }, serialized',
          run: async () => JSON.stringify(toModel(await b.callJson(name, ctx.argsText))),
          check: async (text) => expectOk(await b.callJson(name, text)),
        },
      ]
    }
    case 4: {
      const a = manager(ctx, 'memory')
      const b = manager(ctx, 'memory call')
      return [
        { name: 'toolwire tm.callJson result', notes: 'the frozen app view the caller keeps', run: () => a.callJson(name, ctx.argsText) },
        { name: 'toolwire tm.call result', notes: 'the same, with an object input (the model arguments already parsed)', run: () => b.call(name, JSON.parse(ctx.argsText)) },
      ]
    }
  }
  return []
}
