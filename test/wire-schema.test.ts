// schema/tool-result.v1.json describes what the core reads (docs/wire-format.md): every
// conformance vector the core accepts is valid against it, and so is each field the core
// reads (a pending input's schema included); a document with an unknown field is not.
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { Ajv2020 } from 'ajv/dist/2020.js'
import { describe, expect, it } from 'vitest'
import { ToolResult } from '../src/core/result.js'

const root = join(import.meta.dirname, '..')
const schema = JSON.parse(readFileSync(join(root, 'schema', 'tool-result.v1.json'), 'utf8')) as object
const validate = new Ajv2020({ strict: false }).compile(schema)
const valid = join(root, 'test', 'vectors', 'valid')

describe('schema/tool-result.v1.json', () => {
  it.each(readdirSync(valid).filter((f) => f.endsWith('.json')))('accepts the valid vector %s', (file) => {
    const text = readFileSync(join(valid, file), 'utf8').trim()
    expect(() => ToolResult.fromJSON(text)).not.toThrow()
    expect(validate(JSON.parse(text)), JSON.stringify(validate.errors)).toBe(true)
  })

  it('accepts a pending input request with the schema of its answer, as the core does', () => {
    const doc = { v: 1, status: 'pending', output: { text: 'Waiting' }, pending: { id: 'r', kind: 'input', prompt: 'Which?', schema: { type: 'object' } } }
    expect(() => ToolResult.fromJSON(JSON.stringify(doc))).not.toThrow()
    expect(validate(doc), JSON.stringify(validate.errors)).toBe(true)
  })

  it('refuses what the core refuses by shape: an unknown field, a refusal of another kind', () => {
    const unknown = { v: 1, status: 'success', output: { text: 'x' }, extra: 1 }
    expect(() => ToolResult.fromJSON(JSON.stringify(unknown))).toThrow()
    expect(validate(unknown)).toBe(false)
    const refusal = { v: 1, status: 'denied', output: { text: 'no' }, refusal: { kind: 'timeout', message: 'no', retryable: false } }
    expect(() => ToolResult.fromJSON(JSON.stringify(refusal))).toThrow()
  })
})
