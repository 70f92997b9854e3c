// The model view and every wire adapter, checked against test/vectors/adapters/: the
// Rust crate (crates/toolwire/tests/adapters.rs) reads the same files and must give the
// same bytes. TOOLWIRE_WRITE_VECTORS=1 rewrites the expected texts from the core (the specification).
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js'
import { describe, expect, it } from 'vitest'
import { toAnthropic, toGemini, toMcp, toOpenAIChat, toOpenAIResponses } from '../src/render/index.js'
import { toModel } from '../src/render/model.js'
import { ToolResult } from '../src/core/result.js'
import { modelViewJson, renderWireJson } from '../src/core/native.js'

const vectors = join(import.meta.dirname, 'vectors')
const validDir = join(vectors, 'valid')
const adapterDir = join(vectors, 'adapters')
const WRITE = process.env.TOOLWIRE_WRITE_VECTORS === '1'
/** Inputs above this size (the 1 MiB vector) are covered by the wire vectors only. */
const MAX_INPUT_BYTES = 64 * 1024

interface Options {
  readonly toolCallId: string
  readonly toolUseId: string
  readonly name: string
  readonly id?: string
}

interface AdapterVector {
  readonly input: string
  readonly options: Options
  readonly model: string
  readonly openai_chat: string
  readonly openai_responses: string
  readonly anthropic: string
  readonly gemini: string
  readonly mcp: string
}

function render(result: ToolResult, o: Options): Omit<AdapterVector, 'input' | 'options'> {
  return {
    model: JSON.stringify(toModel(result)),
    openai_chat: JSON.stringify(toOpenAIChat(result, { toolCallId: o.toolCallId })),
    openai_responses: JSON.stringify(toOpenAIResponses(result, { callId: o.toolCallId })),
    anthropic: JSON.stringify(toAnthropic(result, { toolUseId: o.toolUseId })),
    gemini: JSON.stringify(toGemini(result, o.id === undefined ? { name: o.name } : { name: o.name, id: o.id })),
    mcp: JSON.stringify(toMcp(result)),
  }
}

function renderByCore(doc: string, o: Options): Omit<AdapterVector, 'input' | 'options'> {
  return {
    model: modelViewJson(doc),
    openai_chat: renderWireJson('openai_chat', doc, o.toolCallId),
    openai_responses: renderWireJson('openai_responses', doc, o.toolCallId),
    anthropic: renderWireJson('anthropic', doc, o.toolUseId),
    gemini: renderWireJson('gemini', doc, o.id, o.name),
    mcp: renderWireJson('mcp', doc),
  }
}

const inputs = readdirSync(validDir)
  .filter((f) => f.endsWith('.json'))
  .sort()
  .filter((f) => readFileSync(join(validDir, f)).length <= MAX_INPUT_BYTES)

describe('adapter vectors (shared with the Rust crate)', () => {
  it('cover every valid wire vector, at least 25, with each disposition, parts, untrusted content and non-ASCII text', () => {
    if (WRITE) {
      for (const input of inputs) {
        // a skipped call answers a Gemini call without an id; every other vector gives one
        const options: Options = input.startsWith('skipped')
          ? { toolCallId: 'call_1', toolUseId: 'toolu_1', name: 'lookup' }
          : { toolCallId: 'call_1', toolUseId: 'toolu_1', name: 'lookup', id: 'call_1' }
        // written from the core, the specification (docs/wire-format.md); this side must then match it
        const vector: AdapterVector = { input, options, ...renderByCore(readFileSync(join(validDir, input), 'utf8'), options) }
        writeFileSync(join(adapterDir, input), `${JSON.stringify(vector, null, 2)}\n`)
      }
    }
    const files = readdirSync(adapterDir).filter((f) => f.endsWith('.json'))
    expect(files.sort()).toEqual(inputs)
    expect(files.length).toBeGreaterThanOrEqual(25)
    for (const prefix of ['success', 'error', 'refused', 'skipped', 'pending']) {
      expect(files.some((f) => f.startsWith(prefix)), prefix).toBe(true)
    }
    const docs = files.map((f) => readFileSync(join(validDir, f), 'utf8'))
    expect(docs.some((d) => d.includes('"status":"error"') && d.includes('"type":"image"'))).toBe(true)
    expect(docs.some((d) => d.includes('"untrusted":true') && d.includes('"parts"'))).toBe(true)
    expect(docs.some((d) => /[^\x00-\x7f]/.test(d))).toBe(true)
  })

  for (const file of inputs) {
    it(file, () => {
      const path = join(adapterDir, file)
      expect(existsSync(path), `${path} exists (TOOLWIRE_WRITE_VECTORS=1 writes it)`).toBe(true)
      const vector = JSON.parse(readFileSync(path, 'utf8')) as AdapterVector
      const result = ToolResult.fromJSON(readFileSync(join(validDir, vector.input), 'utf8'))
      const actual = render(result, vector.options)
      expect(actual).toEqual({
        model: vector.model,
        openai_chat: vector.openai_chat,
        openai_responses: vector.openai_responses,
        anthropic: vector.anthropic,
        gemini: vector.gemini,
        mcp: vector.mcp,
      })
      // the MCP rendering is a valid CallToolResult by the SDK's own schema
      expect(CallToolResultSchema.safeParse(JSON.parse(vector.mcp)).success).toBe(true)
    })
  }
})
