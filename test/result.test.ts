import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ToolResult, ToolwireWireError, ERROR_KINDS, refusalError, toolError, WIRE_VERSION } from '../src/index.js'

const dir = join(import.meta.dirname, 'vectors')
const validFiles = readdirSync(join(dir, 'valid')).filter((f) => f.endsWith('.json'))
const invalidFiles = readdirSync(join(dir, 'invalid')).filter((f) => f.endsWith('.json') && f !== 'expected.json')
const expected = JSON.parse(readFileSync(join(dir, 'invalid', 'expected.json'), 'utf8')) as Record<string, string>

describe('shared vectors', () => {
  it('has at least 30 documents, 10 of them invalid', () => {
    expect(validFiles.length + invalidFiles.length).toBeGreaterThanOrEqual(30)
    expect(invalidFiles.length).toBeGreaterThanOrEqual(10)
  })

  it.each(validFiles)('valid/%s round-trips to identical bytes', (file) => {
    const text = readFileSync(join(dir, 'valid', file), 'utf8')
    const result = ToolResult.fromJSON(text)
    expect(result.toJSONText()).toBe(text)
    // the JS-side document has the canonical key order too
    expect(JSON.stringify(result)).toBe(text)
  })

  it.each(invalidFiles)('invalid/%s is rejected with a clear error', (file) => {
    const text = readFileSync(join(dir, 'invalid', file), 'utf8')
    expect(expected[file], `${file} is listed in expected.json`).toBeTypeOf('string')
    let caught: unknown
    try {
      ToolResult.fromJSON(text)
    } catch (err) {
      caught = err
    }
    expect(caught).toBeInstanceOf(ToolwireWireError)
    expect((caught as Error).message).toContain(expected[file])
  })
})

describe('ToolResult', () => {
  it('has exactly one disposition per constructor', () => {
    const cases = [
      [ToolResult.success('done'), 'success', 'success'],
      [ToolResult.failed(toolError('timeout', 'slow')), 'error', 'error'],
      [ToolResult.failed(refusalError('not_allowed', 'Owners only')), 'refused', 'denied'],
      [ToolResult.skipped('dry run'), 'skipped', 'skipped'],
      [ToolResult.pending({ kind: 'input', prompt: 'Which env?' }), 'pending', 'pending'],
    ] as const
    for (const [result, disposition, statusName] of cases) {
      expect(result.disposition()).toBe(disposition)
      expect(result.statusName()).toBe(statusName)
      const flags = [result.isSuccess(), result.isError(), result.isRefused(), result.isSkipped(), result.isPending()]
      expect(flags.filter(Boolean)).toHaveLength(1)
    }
  })

  it('keeps error and refusal apart', () => {
    const refused = ToolResult.failed(refusalError('not_allowed', 'Owners only'))
    expect(refused.error()).toBeUndefined()
    expect(refused.refusal()?.code).toBe('not_allowed')
    expect(refused.isErrorKind('permission_denied')).toBe(false)
    const denied = ToolResult.failed(toolError('permission_denied', 'no token'))
    expect(denied.isErrorKind('permission_denied')).toBe(true)
    expect(denied.refusal()).toBeUndefined()
  })

  it('replaces output but keeps the disposition', () => {
    const r = ToolResult.failed(toolError('not_found', 'missing')).withOutput('No such file. Try list_dir.')
    expect(r.isErrorKind('not_found')).toBe(true)
    expect(r.output().text).toBe('No such file. Try list_dir.')
    expect(r.error()?.message).toBe('missing')
  })

  it('converts into a result like Rust into_result', () => {
    expect(ToolResult.skipped('x').intoResult()).toEqual({ ok: true, output: { text: 'Skipped: x' } })
    const pending = ToolResult.pending({ kind: 'authorization', url: 'https://e.com' }).intoResult()
    expect(pending.ok).toBe(false)
    expect(!pending.ok && pending.error.code).toBe('pending')
  })

  it('uses the core tables for kinds and retryability', () => {
    expect(WIRE_VERSION).toBe(1)
    expect(ERROR_KINDS).toEqual([
      'invalid_args', 'timeout', 'cancelled', 'not_found', 'permission_denied', 'rate_limited', 'provider', 'network', 'other',
    ])
    expect(toolError('network', 'x').retryable).toBe(true)
    expect(toolError('invalid_args', 'x').retryable).toBe(false)
    expect(toolError('invalid_args', 'x', { retryable: true }).retryable).toBe(true)
    expect(() => toolError('timeout', 'x', { retryable: 'no' as never })).toThrow(TypeError)
    expect(() => toolError('timeout', 'x', { retryable: 'no' as never })).toThrow("an error's retryable must be a boolean")
  })

  it('writes the same text as the core for constructed results', () => {
    const r = ToolResult.pending({ id: 'req-1', kind: 'confirmation', summary: 'Delete a.txt', changes: [{ path: '/a', before: 1 }] })
    expect(r.toJSONText()).toBe(
      '{"v":1,"status":"pending","output":{"text":"Waiting for confirmation: Delete a.txt"},"pending":{"id":"req-1","kind":"confirmation","summary":"Delete a.txt","changes":[{"path":"/a","before":1}]}}',
    )
    expect(ToolResult.skipped('dry run').toJSONText()).toBe(
      '{"v":1,"status":"skipped","output":{"text":"Skipped: dry run"},"skipReason":"dry run"}',
    )
  })

  it('generates pending ids', () => {
    const a = ToolResult.pending({ kind: 'input' }).pendingRequest()!
    const b = ToolResult.pending({ kind: 'input' }).pendingRequest()!
    expect(a.id).toMatch(/^[A-Za-z0-9_-]{22}$/) // 128 random bits, base64url
    expect(a.id).not.toBe(b.id)
  })

  it('throws TypeError with a clear message for wrong argument types', () => {
    // programming errors throw; outcomes never do
    expect(() => ToolResult.success(42 as never)).toThrow(TypeError)
    expect(() => ToolResult.success(42 as never)).toThrow(/output must be a string or \{ text, parts\? \}/)
    expect(() => ToolResult.failed('boom' as never)).toThrow(/toolError\(\) or refusalError\(\)/)
    expect(() => ToolResult.skipped(undefined as never)).toThrow(/skip reason must be a string/)
    expect(() => ToolResult.pending({ kind: 'later' } as never)).toThrow(/kind must be one of input, authorization, confirmation/)
    expect(() => toolError('boom' as never, 'x')).toThrow(/unknown error kind "boom"/)
    expect(() => ToolResult.success({ text: 'x', parts: [{ type: 'image', mimeType: 'image/png' }] } as never)).toThrow(
      /exactly one of data \(base64\) or url/,
    )
    expect(() => ToolResult.fromJSON(3 as never)).toThrow(TypeError)
  })

  it('is structured-cloneable as JSON', () => {
    const r = ToolResult.success({ text: 'pic', parts: [{ type: 'image', mimeType: 'image/png', data: 'iVBORw0KGgo=' }] })
    expect(structuredClone(r.toJSON())).toEqual(JSON.parse(r.toJSONText()))
  })
})
