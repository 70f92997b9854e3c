#!/usr/bin/env node
// Overhead per call of each framework integration (toolwire/ai-sdk, toolwire/openai-agents,
// toolwire/langchain) against calling the same framework's own tool directly. Part of `npm run bench`.
//
//   node bench/integrations.mjs            → bench/results/integrations.json
//   node bench/integrations.mjs --quick    (a smoke test: fewer rounds)
//
// Each pair runs the same body ({ sum: a + b }) with the same JSON Schema, one awaited call at a
// time, the two candidates interleaved round by round; a row is the median ns per call over the
// rounds. What a call does:
// - AI SDK: `execute(input, { toolCallId, messages })` then the model output (native: the SDK's
//   default `{ type: 'json', value }`; toolwire: the tool's `toModelOutput`).
// - OpenAI Agents: `invoke(runContext, argsJson, { toolCall })` (native: the SDK's `tool()`).
// - LangChain: `invoke(toolCall)` → ToolMessage (native: a DynamicStructuredTool, which validates
//   the input with LangChain's JSON Schema validator).
// Uses the built package (dist/), as an installed user would: run `npm run build:ts` first.
import { mkdirSync, writeFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { performance } from 'node:perf_hooks'
import { jsonSchema, tool as aiTool } from 'ai'
import { RunContext, setTracingDisabled, tool as agentsTool } from '@openai/agents'
import { DynamicStructuredTool } from '@langchain/core/tools'
import { ToolManager } from '../dist/index.js'
import { aiSdkTools } from '../dist/ai-sdk.js'
import { openaiAgentTools } from '../dist/openai-agents.js'
import { langchainTools } from '../dist/langchain.js'

const HERE = dirname(fileURLToPath(import.meta.url))
const quick = process.argv.includes('--quick')
const ROUNDS = quick ? 3 : 25
const SAMPLE_MS = quick ? 20 : 60
const WARMUP_MS = quick ? 200 : 1000
setTracingDisabled(true)

const schema = {
  type: 'object',
  properties: { a: { type: 'number' }, b: { type: 'number' } },
  required: ['a', 'b'],
  additionalProperties: false,
}
const body = ({ a, b }) => ({ sum: a + b })
const input = { a: 1, b: 2 }
const args = JSON.stringify(input)

const tm = new ToolManager({ development: false })
tm.register({ name: 'add', description: 'Add two numbers', inputSchema: schema, run: body })

let seq = 0
const id = () => `call_${++seq}`
function expect(ok, what) {
  if (!ok) throw new Error(`bench check failed: ${what}`)
}

// ---- AI SDK
const aiNative = aiTool({ description: 'Add two numbers', inputSchema: jsonSchema(schema), execute: async (i) => body(i) })
const aiToolwire = aiSdkTools(tm).add
async function aiCall(t) {
  const toolCallId = id()
  const output = await t.execute(input, { toolCallId, messages: [] })
  return t.toModelOutput ? t.toModelOutput({ toolCallId, input, output }) : { type: 'json', value: output }
}

// ---- OpenAI Agents
const runContext = new RunContext()
const agNative = agentsTool({ name: 'add', description: 'Add two numbers', parameters: schema, strict: false, execute: async (i) => body(i) })
const [agToolwire] = openaiAgentTools(tm)
const agCall = (t) => {
  const callId = id()
  return t.invoke(runContext, args, { toolCall: { type: 'function_call', callId, name: 'add', arguments: args, status: 'completed' } })
}

// ---- LangChain
const lcNative = new DynamicStructuredTool({ name: 'add', description: 'Add two numbers', schema, func: async (i) => JSON.stringify(body(i)) })
const [lcToolwire] = langchainTools(tm)
const lcCall = (t) => t.invoke({ name: 'add', args: input, id: id(), type: 'tool_call' })

const PAIRS = [
  {
    framework: 'AI SDK 6',
    native: () => aiCall(aiNative),
    toolwire: () => aiCall(aiToolwire),
    check: async () => {
      expect(JSON.stringify(await aiCall(aiToolwire)) === '{"type":"json","value":{"sum":3}}', 'ai-sdk output')
      expect(JSON.stringify(await aiCall(aiNative)) === '{"type":"json","value":{"sum":3}}', 'ai-sdk native output')
    },
  },
  {
    framework: 'OpenAI Agents',
    native: () => agCall(agNative),
    toolwire: () => agCall(agToolwire),
    check: async () => {
      expect((await agCall(agToolwire)) === '{"sum":3}', 'agents output')
      expect(JSON.stringify(await agCall(agNative)) === '{"sum":3}', 'agents native output')
    },
  },
  {
    framework: 'LangChain',
    native: () => lcCall(lcNative),
    toolwire: () => lcCall(lcToolwire),
    check: async () => {
      const [a, b] = [await lcCall(lcToolwire), await lcCall(lcNative)]
      expect(a.content === '{"sum":3}' && a.status === 'success', 'langchain output')
      expect(b.content === '{"sum":3}', 'langchain native output')
    },
  },
]

/** ns per call of `fn` over one sample of about SAMPLE_MS (the count calibrated once). */
async function sample(fn, n) {
  const t0 = performance.now()
  for (let i = 0; i < n; i++) await fn()
  return ((performance.now() - t0) * 1e6) / n
}

/** Warms `fn` up (about WARMUP_MS), then returns how many calls make one sample. */
async function calibrate(fn) {
  const until = performance.now() + WARMUP_MS
  while (performance.now() < until) for (let i = 0; i < 100; i++) await fn()
  let n = 10
  for (;;) {
    const t0 = performance.now()
    for (let i = 0; i < n; i++) await fn()
    const ms = performance.now() - t0
    if (ms > SAMPLE_MS / 4) return Math.max(10, Math.round((n * SAMPLE_MS) / ms))
    n *= 4
  }
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2
}

const rows = []
const tmCall = () => tm.call('add', input, { callId: id() })
const tmN = await calibrate(tmCall)
const tmTimes = []
for (const pair of PAIRS) {
  await pair.check()
  const nN = await calibrate(pair.native)
  const nT = await calibrate(pair.toolwire)
  const native = []
  const wired = []
  for (let r = 0; r < ROUNDS; r++) {
    // alternate the order each round so neither always runs warm after the other
    if (r % 2 === 0) {
      native.push(await sample(pair.native, nN))
      wired.push(await sample(pair.toolwire, nT))
    } else {
      wired.push(await sample(pair.toolwire, nT))
      native.push(await sample(pair.native, nN))
    }
    tmTimes.push(await sample(tmCall, tmN))
  }
  const n = median(native)
  const t = median(wired)
  rows.push({ framework: pair.framework, nativeNs: Math.round(n), toolwireNs: Math.round(t), overheadNs: Math.round(t - n), ratio: Number((t / n).toFixed(2)) })
}
const tmNs = Math.round(median(tmTimes))

const us = (ns) => (ns / 1000).toFixed(1).padStart(7)
console.log(`\n=== Framework integrations: µs per call, median of ${ROUNDS} rounds (node ${process.version})`)
console.log('framework       framework tool  toolwire tool  overhead  ratio')
for (const r of rows) console.log(`${r.framework.padEnd(15)} ${us(r.nativeNs)}         ${us(r.toolwireNs)}       ${us(r.overheadNs)}    ${r.ratio.toFixed(2)}×`)
console.log(`(tm.call alone, the same tool: ${us(tmNs).trim()} µs; the framework tools do not validate the input except LangChain's)`)

const out = join(HERE, 'results', quick ? 'integrations-quick.json' : 'integrations.json')
mkdirSync(dirname(out), { recursive: true })
writeFileSync(out, `${JSON.stringify({ date: new Date().toISOString(), node: process.version, rounds: ROUNDS, tmCallNs: tmNs, rows }, null, 2)}\n`)
console.log(`wrote ${relative(resolve(HERE, '..'), out)}`)
process.exit(0)
