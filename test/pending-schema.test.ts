/**
 * A pending request's `schema` (issue #22): a tool's `pending({ kind: 'input', schema })` keeps
 * the JSON Schema of the input it waits for, end to end: checked and frozen when made, on the
 * wire (version 1, optional), in the model view, in a durable store's parked row across a
 * restart, and `tm.resume` checks the answer against it. Also `confirmVia` at registration and
 * in the manifest.
 */
import { afterAll, describe, expect, it } from 'vitest'
import { ToolManager } from '../src/runtime/manager.js'
import { pending, pendingOf } from '../src/core/helpers.js'
import { ToolResult, ToolwireWireError } from '../src/core/result.js'
import { MAX_PENDING_SCHEMA_BYTES, MAX_PENDING_SCHEMA_DEPTH } from '../src/core/json.js'
import { toCanonical, toModel } from '../src/render/model.js'
import { toMcp } from '../src/render/mcp.js'
import { canonicalOf, type CallResult } from '../src/core/view.js'
import type { ToolStore } from '../src/runtime/store/index.js'
import { storeKinds, storePair } from './stores.js'

const SCHEMA = {
  type: 'object',
  properties: { env: { type: 'string', enum: ['staging', 'production'] }, dryRun: { type: 'boolean' } },
  required: ['env'],
} as const

/** A schema nested `levels` deep, the object itself level 1. */
function nested(levels: number): Record<string, unknown> {
  let s: Record<string, unknown> = {}
  for (let i = 1; i < levels; i++) s = { not: s }
  return s
}

/** A schema exactly `bytes` long as compact JSON. */
function sized(bytes: number): Record<string, unknown> {
  const base = JSON.stringify({ type: 'object', description: '' }).length
  return { type: 'object', description: 'd'.repeat(bytes - base) }
}

const wireOf = (schema: unknown): string =>
  JSON.stringify({ v: 1, status: 'pending', output: { text: 'x' }, pending: { id: 'a', kind: 'input', schema } })

describe('a pending request schema', () => {
  it('is kept as a frozen copy, written on the wire after the other fields, and read back', () => {
    const given = { ...SCHEMA, properties: { ...SCHEMA.properties } }
    const r = ToolResult.pending({ id: 'ask-1', kind: 'input', prompt: 'Which environment?', schema: given })
    const schema = r.pendingRequest()!.schema!
    expect(schema).toEqual(SCHEMA)
    expect(schema).not.toBe(given)
    expect(Object.isFrozen(schema) && Object.isFrozen(schema.properties)).toBe(true)
    given.properties = {} as never
    expect(r.pendingRequest()!.schema).toEqual(SCHEMA)
    const text = r.toJSONText()
    expect(text).toBe(
      `{"v":1,"status":"pending","output":{"text":"Waiting for input: Which environment?"},"pending":{"id":"ask-1","kind":"input","prompt":"Which environment?","schema":${JSON.stringify(SCHEMA)}}}`,
    )
    expect(JSON.stringify(r)).toBe(text)
    expect(ToolResult.fromJSON(text).pendingRequest()!.schema).toEqual(SCHEMA)
  })

  it('is optional: a version 1 document without one still reads, and writes no schema', () => {
    const old = '{"v":1,"status":"pending","output":{"text":"Waiting for input"},"pending":{"id":"p","kind":"input"}}'
    const r = ToolResult.fromJSON(old)
    expect(r.pendingRequest()!.schema).toBeUndefined()
    expect(r.toJSONText()).toBe(old)
  })

  it('is for kind input only: another kind with a schema is a TypeError, never dropped', () => {
    for (const kind of ['confirmation', 'authorization'] as const) {
      expect(() => ToolResult.pending({ kind, schema: SCHEMA })).toThrow(new TypeError(`toolwire: a pending request schema is only for kind "input", not "${kind}"`))
      expect(() => pending({ kind, schema: SCHEMA })).toThrow(TypeError)
    }
  })

  it('must be a plain JSON object', () => {
    for (const bad of [[], 'object', 1, null, true]) {
      expect(() => ToolResult.pending({ kind: 'input', schema: bad as never })).toThrow(/a pending request schema must be a JSON Schema object/)
    }
    const cyclic: Record<string, unknown> = { type: 'object' }
    cyclic.self = cyclic
    expect(() => ToolResult.pending({ kind: 'input', schema: cyclic })).toThrow(/a pending request schema must be JSON/)
    expect(() => ToolResult.pending({ kind: 'input', schema: { n: 1n } })).toThrow(/a pending request schema must be JSON/)
  })

  it('is bounded in depth and size, at the same limits as the core reads documents', () => {
    expect(MAX_PENDING_SCHEMA_DEPTH).toBe(32)
    expect(MAX_PENDING_SCHEMA_BYTES).toBe(65_536)
    const deepest = nested(MAX_PENDING_SCHEMA_DEPTH)
    expect(ToolResult.pending({ kind: 'input', schema: deepest }).pendingRequest()!.schema).toEqual(deepest)
    expect(() => ToolResult.fromJSON(wireOf(deepest))).not.toThrow()
    expect(() => ToolResult.pending({ kind: 'input', schema: nested(MAX_PENDING_SCHEMA_DEPTH + 1) })).toThrow(
      'toolwire: a pending request schema is nested deeper than 32 levels',
    )
    expect(() => ToolResult.fromJSON(wireOf(nested(MAX_PENDING_SCHEMA_DEPTH + 1)))).toThrow(ToolwireWireError)

    const largest = sized(MAX_PENDING_SCHEMA_BYTES)
    expect(ToolResult.pending({ kind: 'input', schema: largest }).toJSONText()).toContain(largest.description as string)
    expect(() => ToolResult.fromJSON(wireOf(largest))).not.toThrow()
    expect(() => ToolResult.pending({ kind: 'input', schema: sized(MAX_PENDING_SCHEMA_BYTES + 1) })).toThrow(
      'toolwire: a pending request schema is longer than 65536 bytes as JSON',
    )
    expect(() => ToolResult.fromJSON(wireOf(sized(MAX_PENDING_SCHEMA_BYTES + 1)))).toThrow(/longer than 65536 bytes/)
    // bytes, not UTF-16 units: 'é' is two bytes
    const wide = { type: 'object', description: 'é'.repeat((MAX_PENDING_SCHEMA_BYTES - 40) / 2 + 20) }
    expect(() => ToolResult.pending({ kind: 'input', schema: wide })).toThrow(/longer than 65536 bytes/)
  })

  it('pending() checks and freezes the request; pendingOf and the model view keep the schema', () => {
    const m = pending({ id: 'ask-2', kind: 'input', prompt: 'Which?', schema: SCHEMA })
    const req = pendingOf(m)!
    expect(req).toEqual({ id: 'ask-2', kind: 'input', prompt: 'Which?', schema: SCHEMA })
    expect(Object.isFrozen(req.schema)).toBe(true)
    const view = toModel(ToolResult.pending(req))
    expect((view.metadata?.pending as { schema?: unknown }).schema).toEqual(SCHEMA)
  })

  it('survives a copied view (a JSON round trip of the call view), and MCP still shows the request as isError text only', async () => {
    const tm = withAsk(new ToolManager(), [])
    const live = await tm.call('ask', { id: 'v1' })
    const copied = JSON.parse(JSON.stringify(live)) as CallResult
    expect(toCanonical(copied).pendingRequest()!.schema).toEqual(SCHEMA)
    expect((toModel(copied).metadata?.pending as { schema?: unknown }).schema).toEqual(SCHEMA)
    const bare = toMcp(ToolResult.pending({ id: 'req-v1', kind: 'input', prompt: 'Which environment?' }))
    expect(toMcp(live)).toEqual(bare)
    expect(bare.isError).toBe(true)
  })
})

/** A manager with `ask`, a tool that waits for input matching SCHEMA, resumed with the answer. */
function withAsk(tm: ToolManager, runs: string[], kind: 'input' | 'confirmation' = 'input'): ToolManager {
  return tm.register({
    name: 'ask',
    inputSchema: { type: 'object' },
    run: (i: { id: string }) => pending({ id: `req-${i.id}`, kind, prompt: 'Which environment?', schema: SCHEMA }),
    resume: (answer: unknown) => {
      runs.push(JSON.stringify(answer))
      return { deployed: (answer as { env: string }).env }
    },
  })
}

/** The view of an answer refused by the request's schema: `invalid` with the issues; its canonical result says `invalid_answer`. */
function expectInvalidAnswer(view: CallResult, path: string): void {
  expect(view.status).toBe('invalid')
  const issues = (view as { issues: readonly { path: string }[] }).issues
  expect(issues.length).toBeGreaterThan(0)
  expect(issues[0]!.path).toBe(path)
  const error = canonicalOf(view)!.error()!
  expect(error).toMatchObject({ kind: 'invalid_args', code: 'invalid_answer', retryable: false })
  expect(error.message).toMatch(/^The answer does not match the requested input: /)
  expect((error.details as { issues: unknown[] }).issues).toEqual(issues)
}

describe('tm.resume with a pending request schema', () => {
  it('answers an invalid_args error coded invalid_answer for an answer that does not match, and the call can still be answered', async () => {
    const runs: string[] = []
    const tm = withAsk(new ToolManager(), runs)
    const asked = await tm.call('ask', { id: 'm1' })
    expect(asked).toMatchObject({ status: 'pending', request: { id: 'req-m1', kind: 'input', schema: SCHEMA } })
    const wrong = await tm.resume('req-m1', { env: 'moon' })
    expectInvalidAnswer(wrong, '/env')
    expectInvalidAnswer(await tm.resume('req-m1', 'production'), '')
    expect(runs).toEqual([])
    expect(await tm.resume('req-m1', { env: 'staging' })).toMatchObject({ status: 'ok', data: { deployed: 'staging' } })
    expect(runs).toEqual(['{"env":"staging"}'])
    expect(await tm.resume('req-m1', { env: 'staging' })).toMatchObject({ status: 'refused', code: 'request_used' })
  })

  it('takes any answer when the request has no schema', async () => {
    const tm = new ToolManager().register({
      name: 'free',
      inputSchema: { type: 'object' },
      run: () => pending({ id: 'req-free', kind: 'input' }),
      resume: (answer: unknown) => ({ got: answer as string }),
    })
    await tm.call('free', {})
    expect(await tm.resume('req-free', 42)).toMatchObject({ status: 'ok', data: { got: 42 } })
  })

  it('a tool that returns a schema on a confirmation settles as an error, it does not throw', async () => {
    const tm = withAsk(new ToolManager(), [], 'confirmation')
    const view = await tm.call('ask', { id: 'c1' })
    expect(view.status).toBe('error')
  })
})

const stores: ToolStore[] = []
afterAll(async () => {
  for (const s of stores) await s.close().catch(() => undefined)
})
const kinds = (await storeKinds('pending_schema')).filter((k) => k.durable)

describe.each(kinds.map((k) => [k.name, k] as const))('a parked suspension with a schema on %s', (_, kind) => {
  it.skipIf(kind.skip)('keeps its schema in the store across a restart: the new manager checks the answer against it', async () => {
    const { a, b } = await storePair(kind, stores)
    const runs: string[] = []
    const before = withAsk(new ToolManager({ store: a }), runs)
    expect(await before.call('ask', { id: 'r1' })).toMatchObject({ status: 'pending', request: { schema: SCHEMA } })
    const row = await b.getParked('req-r1')
    expect((row?.data as { schema?: unknown }).schema).toEqual(SCHEMA)
    // the manager that parked it checks its local copy's schema
    expectInvalidAnswer(await before.resume('req-r1', { env: 'venus' }), '/env')
    // the process that parked it is gone; another one on the same store answers
    const after = withAsk(new ToolManager({ store: b }), runs)
    expectInvalidAnswer(await after.resume('req-r1', { env: 'mars' }), '/env')
    expect((await b.getParked('req-r1'))?.state).toBe('parked')
    expect(await after.resume('req-r1', { env: 'production', dryRun: false })).toMatchObject({ status: 'ok', data: { deployed: 'production' } })
    expect(runs).toEqual(['{"env":"production","dryRun":false}'])
  })

  it.skipIf(kind.skip)('a suspension without a schema parks as before (no schema in its row)', async () => {
    const { a } = await storePair(kind, stores)
    const tm = new ToolManager({ store: a }).register({
      name: 'free',
      inputSchema: { type: 'object' },
      run: () => pending({ id: 'req-free', kind: 'input' }),
      resume: (answer: unknown) => ({ got: answer as string }),
    })
    await tm.call('free', {})
    expect((await a.getParked('req-free'))?.data).toBeNull()
    expect(await tm.resume('req-free', 'anything')).toMatchObject({ status: 'ok', data: { got: 'anything' } })
  })
})

describe('confirmVia', () => {
  const base = { inputSchema: { type: 'object' }, needsConfirmation: true, run: () => 'ok' } as const

  it('register refuses any value other than form or url', () => {
    for (const bad of ['email', '', 'FORM', 1, null]) {
      expect(() => new ToolManager().register({ ...base, name: 'pay', confirmVia: bad as never })).toThrow(
        new TypeError(`toolwire: tool "pay" confirmVia must be 'form' or 'url'`),
      )
    }
  })

  it('is in the manifest entry when set, absent otherwise', () => {
    const tm = new ToolManager()
      .register({ ...base, name: 'by_url', confirmVia: 'url' })
      .register({ ...base, name: 'by_form', confirmVia: 'form' })
      .register({ ...base, name: 'plain' })
    const byName = Object.fromEntries(tm.manifest().map((e) => [e.name, e]))
    expect(byName.by_url!.confirmVia).toBe('url')
    expect(byName.by_form!.confirmVia).toBe('form')
    expect('confirmVia' in byName.plain!).toBe(false)
  })
})
