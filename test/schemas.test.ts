// Schemas people write: Standard Schemas (zod 4, valibot) validated by their own library and
// advertised as JSON Schema, objects that are neither refused, JSON Schema defaults applied,
// and the tool-name rule.
import { describe, expect, it } from 'vitest'
import { type as ark } from 'arktype'
import * as v from 'valibot'
import { z } from 'zod'
import { z as z3 } from 'zod/v3'
import * as zm from 'zod/mini'
import { defineTool, SchemaError, ToolManager, type Issue, type StandardSchemaV1 } from '../src/index.js'
import { applyDefaults, prepareSchemas } from '../src/core/schema-source.js'
import { SchemaCompiler } from '../src/core/validate.js'

const SECRET = 'hunter2-SECRET-value'

function echoTool(tm: ToolManager, name: string, inputSchema: unknown): ToolManager {
  return tm.register({ name, inputSchema: inputSchema as never, run: (input: unknown) => ({ got: input }) })
}

/** A hand-written Standard Schema (no library): `validate` as given, optionally Standard JSON Schema. */
function standard(validate: (value: unknown) => unknown, jsonSchema?: Record<string, unknown>): StandardSchemaV1 {
  const props: Record<string, unknown> = { version: 1, vendor: 'acme', validate }
  if (jsonSchema !== undefined) props.jsonSchema = { input: () => jsonSchema, output: () => jsonSchema }
  return { '~standard': props } as unknown as StandardSchemaV1
}

describe('zod 4', () => {
  const schema = z.object({ city: z.string().min(2), days: z.number().int().default(3), tags: z.array(z.string()).optional() })

  it('validates with zod, run gets zod\'s value (defaults applied), the manifest shows JSON Schema', async () => {
    const tm = echoTool(new ToolManager(), 'forecast', schema)
    expect(await tm.call('forecast', { city: 'Oslo' })).toMatchObject({ status: 'ok', data: { got: { city: 'Oslo', days: 3 } } })
    expect(await tm.callJson('forecast', '{"city":"Rome","days":5}')).toMatchObject({ status: 'ok', data: { got: { city: 'Rome', days: 5 } } })
    const bad = await tm.call('forecast', { city: 'X', days: 1.5, tags: [SECRET, 7] })
    expect(bad.status).toBe('invalid')
    const issues = (bad as { issues: readonly Issue[] }).issues
    expect(issues.map((i) => i.path)).toEqual(['/city', '/days', '/tags/1'])
    expect(JSON.stringify(bad)).not.toContain(SECRET)
    const [entry] = tm.manifest()
    expect(entry!.inputSchema).toEqual({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: { city: { type: 'string', minLength: 2 }, days: { type: 'integer', default: 3, minimum: expect.any(Number), maximum: expect.any(Number) }, tags: { type: 'array', items: { type: 'string' } } },
      required: ['city'],
    })
    expect(JSON.stringify(tm.manifest())).not.toMatch(/_zod|~standard|"def"/)
  })

  it('a missing field is "is required"; an unknown key in a strict object is "is not allowed" at its path', async () => {
    const tm = echoTool(new ToolManager(), 'strict', z.strictObject({ a: z.string() }))
    const view = await tm.call('strict', { [SECRET]: 1 })
    expect(view).toMatchObject({ status: 'invalid', issues: [{ path: '/a', message: 'is required' }, { path: `/${SECRET}`, message: 'is not allowed' }] })
  })

  it('transforms reach run, and so do the other input readers (summarize)', async () => {
    const tm = new ToolManager()
    const seen: unknown[] = []
    tm.register({
      name: 'upper',
      inputSchema: z.object({ word: z.string().transform((s) => s.toUpperCase()) }),
      needsConfirmation: true,
      summarize: (input) => `Shout ${input.word}`,
      run: (input) => {
        seen.push(input)
        return input.word
      },
    })
    const asked = await tm.call('upper', { word: 'hi' })
    expect(asked).toMatchObject({ status: 'needs_confirmation', summary: 'Shout HI' })
    const done = await tm.confirm((asked as { confirmId: string }).confirmId, { approve: true })
    expect(done).toMatchObject({ status: 'ok', data: 'HI' })
    expect(seen).toEqual([{ word: 'HI' }])
  })

  it('defineTool gives the definition back as written, for register', async () => {
    const def = { name: 'd', inputSchema: z.object({ n: z.number().default(2) }), run: (i: { n: number }) => i.n * 2 }
    expect(defineTool(def)).toBe(def)
    expect(await new ToolManager().register(defineTool(def)).call('d', {})).toMatchObject({ status: 'ok', data: 4 })
  })

  it('a tool written as a class keeps its methods', async () => {
    class Greeter {
      readonly name = 'greet'
      readonly inputSchema = z.object({ who: z.string().default('world') })
      prefix(): string {
        return 'hello'
      }
      run(input: { who: string }): string {
        return `${this.prefix()} ${input.who}`
      }
    }
    const tm = new ToolManager().register(new Greeter())
    expect(await tm.call('greet', {})).toMatchObject({ status: 'ok', data: 'hello world' })
  })

  it('zod mini is advertised through zod\'s own converter', async () => {
    const tm = echoTool(new ToolManager(), 'mini', zm.object({ a: zm.string() }))
    expect(tm.manifest()[0]!.inputSchema).toMatchObject({ type: 'object', properties: { a: { type: 'string' } }, required: ['a'] })
    expect(await tm.call('mini', { a: 1 })).toMatchObject({ status: 'invalid', issues: [{ path: '/a' }] })
  })

  it('an outputSchema is advertised in output mode and checks what the tool returns', async () => {
    const tm = new ToolManager({ development: true })
    const reports: (readonly Issue[])[] = []
    tm.on('output_invalid', (e) => void reports.push(e.issues))
    tm.register({ name: 'out', inputSchema: z.object({ bad: z.boolean() }), outputSchema: z.object({ n: z.number() }), run: (i) => ({ n: i.bad ? 'x' : 1 }) })
    expect(tm.manifest()[0]!.outputSchema).toMatchObject({ type: 'object', properties: { n: { type: 'number' } }, required: ['n'] })
    await tm.call('out', { bad: false })
    expect(reports).toEqual([])
    await tm.call('out', { bad: true })
    expect(reports).toEqual([[{ path: '/n', message: expect.stringContaining('expected number') }]])
  })

  it('a schema with no JSON Schema form (z.date()) is refused at registration', () => {
    expect(() => echoTool(new ToolManager(), 'when', z.object({ at: z.date() }))).toThrow(SchemaError)
    expect(() => echoTool(new ToolManager(), 'when', z.object({ at: z.date() }))).toThrow(/no JSON Schema can be produced.*Date/)
  })
})

describe('valibot', () => {
  const schema = v.object({ id: v.pipe(v.string(), v.minLength(3)), count: v.optional(v.number(), 1) })

  it('validates with valibot, run gets valibot\'s value, the manifest shows JSON Schema', async () => {
    const tm = echoTool(new ToolManager(), 'item', schema)
    expect(await tm.call('item', { id: 'abc' })).toMatchObject({ status: 'ok', data: { got: { id: 'abc', count: 1 } } })
    expect(tm.manifest()[0]!.inputSchema).toEqual({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: { id: { type: 'string', minLength: 3 }, count: { type: 'number', default: 1 } },
      required: ['id'],
    })
  })

  it('issue messages never show the value (valibot\'s say "but received <value>")', async () => {
    const tm = echoTool(new ToolManager(), 'item', schema)
    const view = await tm.call('item', { id: 'ab', count: SECRET })
    expect(view).toMatchObject({ status: 'invalid', issues: [{ path: '/id' }, { path: '/count' }] })
    expect(JSON.stringify(view)).not.toContain(SECRET)
    expect(JSON.stringify(view)).not.toContain('"ab"')
    expect((view as { issues: readonly Issue[] }).issues[1]!.message).toBe('Invalid type: Expected number')
  })
})

describe('other Standard Schemas', () => {
  it('Standard JSON Schema is used where the library offers it', async () => {
    const schema = standard((value) => (typeof value === 'object' && value !== null && 'q' in value ? { value } : { issues: [{ message: 'needs q', path: [{ key: 'q' }] }] }), {
      type: 'object',
      properties: { q: { type: 'string' } },
    })
    const tm = echoTool(new ToolManager(), 'search', schema)
    expect(tm.manifest()[0]!.inputSchema).toEqual({ type: 'object', properties: { q: { type: 'string' } } })
    expect(await tm.call('search', {})).toMatchObject({ status: 'invalid', issues: [{ path: '/q', message: 'needs q' }] })
    expect(await tm.call('search', { q: 'x' })).toMatchObject({ status: 'ok' })
  })

  it('a message that shows the value is replaced by one that does not', async () => {
    const schema = standard((value) => ({ issues: [{ message: `bad token ${(value as { t: string }).t}`, path: ['t'], code: 'custom' }] }), { type: 'object' })
    const tm = echoTool(new ToolManager(), 'tok', schema)
    const view = await tm.call('tok', { t: SECRET })
    expect(view).toMatchObject({ status: 'invalid', issues: [{ path: '/t', message: 'is not valid (custom)' }] })
  })

  it('a message that quotes the value as JSON (escaped) is replaced too', async () => {
    const schema = standard((value) => ({ issues: [{ message: `bad ${JSON.stringify((value as { p: string }).p)}`, path: ['p'], code: 'custom' }] }), { type: 'object' })
    const tm = echoTool(new ToolManager(), 'pw', schema)
    for (const p of ['sec"ret\\value', 'line\nbreak', 'tab\there', 'a"b']) {
      const view = await tm.call('pw', { p })
      expect(view).toMatchObject({ status: 'invalid', issues: [{ path: '/p', message: 'is not valid (custom)' }] })
    }
    const long = `"${'x'.repeat(40)}`
    const clipped = standard((value) => ({ issues: [{ message: `bad ${JSON.stringify((value as { p: string }).p).slice(0, 14)}`, path: ['p'], code: 'custom' }] }), { type: 'object' })
    const tm2 = echoTool(new ToolManager(), 'pw2', clipped)
    expect(await tm2.call('pw2', { p: long })).toMatchObject({ status: 'invalid', issues: [{ path: '/p', message: 'is not valid (custom)' }] })
  })

  it('a validate that throws is an issue, never a throw or an acceptance', async () => {
    const schema = standard(() => {
      throw new Error(SECRET)
    }, { type: 'object' })
    const tm = echoTool(new ToolManager(), 'boom', schema)
    const view = await tm.call('boom', {})
    expect(view).toMatchObject({ status: 'invalid', issues: [{ path: '', message: expect.stringContaining('could not be checked') }] })
    expect(JSON.stringify(view)).not.toContain(SECRET)
  })

  it('an async validate gives a thenable of the issues, and the value for run', async () => {
    const schema = standard(async (value) => ((value as { n?: unknown }).n === 1 ? { value: { n: 2 } } : { issues: [{ message: 'must be 1', path: ['n'] }] }), { type: 'object' })
    const seen: unknown[] = []
    const prepared = prepareSchemas({ name: 'a', inputSchema: schema, run: (i: unknown) => seen.push(i) }, new SchemaCompiler())
    const good = { n: 1 }
    const bad = { n: 3 }
    expect(await prepared.validate(bad)).toEqual([{ path: '/n', message: 'must be 1' }])
    expect(await prepared.validate(good)).toBeUndefined()
    ;(prepared.def.run as (i: unknown) => unknown)(good)
    expect(seen).toEqual([{ n: 2 }])
  })

  it('an async validate is awaited by the manager before the call runs (zod with an async refinement)', async () => {
    const tm = new ToolManager()
    let runs = 0
    tm.register({
      name: 'slow',
      inputSchema: z.object({ user: z.string().refine(async (u) => u !== 'admin', 'is not available') }),
      run: (input) => {
        runs++
        return input.user
      },
    })
    expect(await tm.call('slow', { user: 'admin' })).toMatchObject({ status: 'invalid', issues: [{ path: '/user', message: 'is not available' }] })
    expect(runs).toBe(0)
    expect(await tm.callJson('slow', '{"user":"free"}')).toMatchObject({ status: 'ok', data: 'free' })
    expect(await tm.callMany([{ name: 'slow', input: { user: 'admin' } }, { name: 'slow', input: { user: 'b' } }])).toMatchObject([
      { status: 'invalid' },
      { status: 'ok', data: 'b' },
    ])
    expect(runs).toBe(2)
  })

  it('an async output schema reports output_invalid when its check settles; the call does not wait for it or change', async () => {
    const tm = new ToolManager({ development: true })
    const reported = new Promise<{ callId: string; issues: unknown }>((resolve) => tm.on('output_invalid', (e) => resolve({ callId: e.callId, issues: e.issues })))
    let release!: () => void
    const checked = new Promise<void>((r) => (release = r))
    tm.register({
      name: 'o',
      inputSchema: {},
      outputSchema: standard(async () => {
        await checked
        return { issues: [{ message: 'must be even', path: ['n'] }] }
      }, { type: 'object' }),
      run: () => ({ n: 1 }),
    })
    const view = await tm.call('o', {})
    expect(view).toMatchObject({ status: 'ok', data: { n: 1 } })
    release()
    expect(await reported).toEqual({ callId: view.callId, issues: [{ path: '/n', message: 'must be even' }] })
    // a valid output reports nothing
    const quiet: unknown[] = []
    const tm2 = new ToolManager({ development: true })
    tm2.on('output_invalid', (e) => void quiet.push(e))
    tm2.register({ name: 'o', inputSchema: {}, outputSchema: standard(async (v) => ({ value: v }), { type: 'object' }), run: () => ({ n: 2 }) })
    expect(await tm2.call('o', {})).toMatchObject({ status: 'ok' })
    await new Promise((r) => setTimeout(r, 0))
    expect(quiet).toEqual([])
  })

  it('a Standard Schema with no JSON Schema converter is refused at registration', () => {
    expect(() => echoTool(new ToolManager(), 'x', standard(() => ({ value: 1 })))).toThrow(/acme Standard Schema, but no JSON Schema can be produced/)
  })
})

describe('objects that are neither a JSON Schema nor a Standard Schema are refused', () => {
  const cases: [string, unknown, RegExp][] = [
    ['a zod 3 schema', z3.object({ a: z3.string() }), /zod 3/],
    ['a class instance', new (class Shape { type = 'object' })(), /instance of Shape/],
    ['an object of unknown keywords', { foo: { type: 'string' }, bar: 1 }, /no JSON Schema keyword \(only "foo", "bar"\)/],
    ['a zod schema inside a JSON Schema', { type: 'object', properties: { a: z.string() } }, /\/properties\/a/],
    ['a valibot schema inside a JSON Schema', { type: 'object', properties: { a: v.string() } }, /Standard Schema at \/properties\/a/],
    ['a function inside a JSON Schema', { type: 'object', properties: { a: () => true } }, /function at \/properties\/a/],
    ['an array', [{ type: 'string' }], /neither a JSON Schema/],
  ]
  for (const [what, schema, message] of cases) {
    it(what, () => {
      expect(() => echoTool(new ToolManager(), 't', schema)).toThrow(SchemaError)
      expect(() => echoTool(new ToolManager(), 't', schema)).toThrow(message)
    })
  }
  it('as outputSchema too', () => {
    expect(() => new ToolManager().register({ name: 't', inputSchema: {}, outputSchema: z3.string() as never, run: () => 1 })).toThrow(/outputSchema .*zod 3/)
  })
  it('an empty schema, a boolean schema and annotation-only schemas are JSON Schemas', async () => {
    const tm = new ToolManager()
    for (const [name, schema] of [['any', {}], ['yes', true], ['titled', { title: 'T', description: 'd' }]] as const) echoTool(tm, name, schema)
    expect(await tm.call('any', { a: 1 })).toMatchObject({ status: 'ok' })
  })
})

describe('JSON Schema defaults', () => {
  it('are applied to the input run gets; the caller\'s object is not changed', async () => {
    const tm = echoTool(new ToolManager(), 'cfg', {
      type: 'object',
      $defs: { level: { type: 'object', properties: { n: { type: 'integer', default: 1 } } } },
      properties: {
        mode: { type: 'string', default: 'fast' },
        opts: { type: 'object', properties: { retries: { type: 'integer', default: 2 }, list: { type: 'array', default: [] } } },
        level: { $ref: '#/$defs/level' },
        items: { type: 'array', items: { type: 'object', properties: { on: { type: 'boolean', default: true } } } },
        label: { type: 'string', pattern: '^[a-z]+$' }, // a pattern: the core's route, defaults applied there too
      },
      allOf: [{ properties: { extra: { default: 'x' } } }],
      required: ['mode'],
    })
    const input = Object.freeze({ opts: Object.freeze({}), level: {}, items: [{}, { on: false }], label: 'abc' })
    const view = await tm.call('cfg', input)
    expect(view).toMatchObject({
      status: 'ok',
      data: { got: { mode: 'fast', opts: { retries: 2, list: [] }, level: { n: 1 }, items: [{ on: true }, { on: false }], label: 'abc', extra: 'x' } },
    })
    expect(input).toEqual({ opts: {}, level: {}, items: [{}, { on: false }], label: 'abc' })
  })

  it('are not applied inside anyOf, oneOf or if/then/else', () => {
    const schema = { anyOf: [{ properties: { a: { default: 1 } } }], if: { properties: { b: { default: 2 } } }, then: { properties: { c: { default: 3 } } } }
    expect(applyDefaults(schema, {})).toEqual({})
  })

  it('a default that would make the input invalid is not applied, and the input is checked as given', async () => {
    const tm = echoTool(new ToolManager(), 'd', { type: 'object', properties: { n: { type: 'integer', maximum: 3, default: 5 } } })
    expect(await tm.call('d', {})).toMatchObject({ status: 'ok', data: { got: {} } })
    expect(await tm.call('d', { n: 9 })).toMatchObject({ status: 'invalid', issues: [{ path: '/n' }] })
  })

  it('a required property with a default may be left out', async () => {
    const tm = echoTool(new ToolManager(), 'r', { type: 'object', properties: { n: { type: 'integer', default: 1 } }, required: ['n'], additionalProperties: false })
    expect(await tm.callJson('r', '{}')).toMatchObject({ status: 'ok', data: { got: { n: 1 } } })
    expect(await tm.call('r', { m: 1 })).toMatchObject({ status: 'invalid' })
  })

  it('a default is copied for each call, so a tool changing it changes nothing else', async () => {
    const tm = new ToolManager()
    tm.register({
      name: 'push',
      inputSchema: { type: 'object', properties: { list: { type: 'array', default: [] } } },
      run: (input: { list: number[] }) => {
        input.list.push(1)
        return input.list.length
      },
    })
    expect(await tm.call('push', {})).toMatchObject({ data: 1 })
    expect(await tm.call('push', {})).toMatchObject({ data: 1 })
    expect(tm.manifest()[0]!.inputSchema).toEqual({ type: 'object', properties: { list: { type: 'array', default: [] } } })
  })
})

describe('tool names', () => {
  it('are checked against the rule every provider accepts', () => {
    const tm = new ToolManager()
    for (const bad of ['a.b', 'has space', 'x'.repeat(65), 'ünïcode', 'a/b']) {
      expect(() => tm.register({ name: bad, inputSchema: {}, run: () => 1 })).toThrow(/not one every provider accepts.*anyName: true/)
    }
    for (const good of ['a', 'get_weather', 'a-b_C9', 'x'.repeat(64)]) tm.register({ name: good, inputSchema: {}, run: () => 1 })
    expect(tm.manifest()).toHaveLength(4)
  })
  it('with { anyName: true } any non-empty name registers', async () => {
    const tm = new ToolManager()
    tm.register({ name: 'files.read', inputSchema: {}, run: () => 1 }, { anyName: true })
    expect(await tm.call('files.read', {})).toMatchObject({ status: 'ok', data: 1 })
  })
})

describe('filling defaults is bounded', () => {
  it('a schema reaching one subschema in very many ways gives up on defaults (at 1,000,000 steps) instead of running on', () => {
    // 15 links, each applying the next twice: 2^15 ways to the last, which sets a default and nests the chain again
    const $defs: Record<string, unknown> = { l15: { properties: { a: { default: 1 }, c: { $ref: '#/$defs/l0' } } } }
    for (let i = 0; i < 15; i++) $defs[`l${i}`] = { allOf: [{ $ref: `#/$defs/l${i + 1}` }, { $ref: `#/$defs/l${i + 1}` }] }
    const schema = { $defs, $ref: '#/$defs/l0' }
    const nest = (levels: number): Record<string, unknown> => (levels === 0 ? {} : { c: nest(levels - 1) })
    // one object: about 130,000 steps, the default is applied
    expect(applyDefaults(schema, {})).toEqual({ a: 1 })
    // each level multiplies the work by 2^15 (about 10^13 steps for 3 levels): the input comes back as given
    const deep = nest(3)
    expect(applyDefaults(schema, deep)).toBe(deep)
  })
})

describe('defaults and __proto__', () => {
  it('a property named __proto__ with a default is an own property, never the prototype', () => {
    const schema = JSON.parse('{"type":"object","properties":{"__proto__":{"type":"object","default":{"polluted":true}}}}')
    const filled = applyDefaults(schema, {}) as Record<string, unknown>
    expect(Object.getPrototypeOf(filled)).toBe(Object.prototype)
    expect(Object.hasOwn(filled, '__proto__')).toBe(true)
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
  })
})

describe('tool names from an MCP server', () => {
  it('a dotted name fails the import with a clear error, and imports with { anyName: true }', async () => {
    const { McpServer } = await import('@modelcontextprotocol/sdk/server/mcp.js')
    const { Client } = await import('@modelcontextprotocol/sdk/client/index.js')
    const { InMemoryTransport } = await import('@modelcontextprotocol/sdk/inMemory.js')
    const { importMcpTools } = await import('../src/mcp/client.js')
    const server = new McpServer({ name: 'peer', version: '1.0.0' })
    server.registerTool('files.read', { inputSchema: {} }, () => ({ content: [{ type: 'text', text: 'read' }] }))
    const [a, b] = InMemoryTransport.createLinkedPair()
    await server.connect(a)
    const client = new Client({ name: 'importer', version: '1.0.0' })
    await client.connect(b)
    await expect(importMcpTools(client, new ToolManager())).rejects.toThrow(/"files\.read" is not one every provider accepts/)
    const tm = new ToolManager()
    await importMcpTools(client, tm, { anyName: true })
    expect(await tm.call('files.read', {})).toMatchObject({ status: 'ok', data: 'read' })
    await client.close()
  })
})

describe('issue messages: the library\'s hint kept, the value never shown', () => {
  async function messageOf(schema: unknown, input: Record<string, unknown>): Promise<string> {
    const tm = echoTool(new ToolManager(), 'm', schema)
    const view = await tm.call('m', input)
    expect(view.status).toBe('invalid')
    const issues = (view as { issues: readonly Issue[] }).issues
    expect(issues).toHaveLength(1)
    return issues[0]!.message
  }

  it('zod 4: too_small, too_big, invalid_type, enum and regex keep zod\'s own message', async () => {
    expect(await messageOf(z.object({ s: z.string().min(3) }), { s: 'ab' })).toBe('Too small: expected string to have >=3 characters')
    expect(await messageOf(z.object({ n: z.number().max(10) }), { n: 11 })).toBe('Too big: expected number to be <=10')
    expect(await messageOf(z.object({ n: z.number() }), { n: 'hello' })).toBe('Invalid input: expected number, received string')
    expect(await messageOf(z.object({ e: z.enum(['red', 'green']) }), { e: 'blue' })).toBe('Invalid option: expected one of "red"|"green"')
    expect(await messageOf(z.object({ s: z.string().regex(/^a+$/) }), { s: 'bbb' })).toBe('Invalid string: must match pattern /^a+$/')
  })

  it('zod 4: a message that happens to contain the value becomes a hint without it, not a bare code', async () => {
    // the value "characters" is in zod's message; "1000" is both the value and the limit
    expect(await messageOf(z.object({ s: z.string().min(12) }), { s: 'characters' })).toBe('is too short')
    expect(await messageOf(z.object({ n: z.number().lt(1000) }), { n: 1000 })).toBe('is too big')
    expect(await messageOf(z.object({ a: z.array(z.string()).max(1) }), { a: ['array', 'b'] })).toBe('has too many items')
    expect(await messageOf(z.object({ n: z.number() }), { n: 'string' })).toBe('has the wrong type')
  })

  it('valibot: too_small, too_big, invalid_type, enum and regex keep valibot\'s message, "but received <value>" cut', async () => {
    expect(await messageOf(v.object({ s: v.pipe(v.string(), v.minLength(3)) }), { s: 'ab' })).toBe('Invalid length: Expected >=3')
    expect(await messageOf(v.object({ n: v.pipe(v.number(), v.maxValue(10)) }), { n: 11123 })).toBe('Invalid value: Expected <=10')
    expect(await messageOf(v.object({ n: v.number() }), { n: 'hello' })).toBe('Invalid type: Expected number')
    expect(await messageOf(v.object({ e: v.picklist(['red', 'green']) }), { e: 'blue-x' })).toBe('Invalid type: Expected ("red" | "green")')
    expect(await messageOf(v.object({ s: v.pipe(v.string(), v.regex(/^a+$/)) }), { s: 'bbbb' })).toBe('Invalid format: Expected /^a+$/')
  })

  it('arktype: its messages keep their hint, "(was <value>)" cut', async () => {
    expect(await messageOf(ark({ s: 'string >= 3' }), { s: 'ab' })).toBe('s must be at least length 3')
    expect(await messageOf(ark({ n: 'number <= 10' }), { n: 11123 })).toBe('n must be at most 10')
    expect(await messageOf(ark({ n: 'number' }), { n: 'hello' })).toBe('n must be a number')
    expect(await messageOf(ark({ e: "'red' | 'green'" }), { e: 'blue-x' })).toBe('e must be "green" or "red"')
    expect(await messageOf(ark({ s: /^a+$/ }), { s: 'bbbb' })).toBe('s must be matched by ^a+$')
    expect(await messageOf(ark({ s: 'string' }), {})).toBe('is required')
  })

  it('a value never appears in any issue, whatever the library, the check or the field', async () => {
    const secrets = ['hunter2-SECRET', 'Too small: expected string', '1000', 'is too short', 'must be at least length 3']
    const schemas: [string, unknown][] = [
      ['zod min', z.object({ s: z.string().min(40) })],
      ['zod max', z.object({ s: z.string().max(2) })],
      ['zod number', z.object({ s: z.number().lt(1000) })],
      ['zod enum', z.object({ s: z.enum(['a', 'b']) })],
      ['zod regex', z.object({ s: z.string().regex(/^x$/) })],
      ['zod refine', z.object({ s: z.string().refine((x) => x === 'ok', { error: (i) => `bad ${String(i.input)}` }) })],
      ['valibot min', v.object({ s: v.pipe(v.string(), v.minLength(40)) })],
      ['valibot max', v.object({ s: v.pipe(v.string(), v.maxLength(2)) })],
      ['valibot number', v.object({ s: v.pipe(v.number(), v.maxValue(999)) })],
      ['valibot enum', v.object({ s: v.picklist(['a', 'b']) })],
      ['valibot regex', v.object({ s: v.pipe(v.string(), v.regex(/^x$/)) })],
      ['arktype min', ark({ s: 'string >= 40' })],
      ['arktype max', ark({ s: 'string <= 2' })],
      ['arktype number', ark({ s: 'number < 1000' })],
      ['arktype enum', ark({ s: "'a' | 'b'" })],
      ['arktype regex', ark({ s: /^x$/ })],
    ]
    for (const [label, schema] of schemas) {
      const tm = echoTool(new ToolManager(), 'm', schema)
      for (const secret of secrets) {
        for (const value of [secret, Number(secret), { deep: secret }]) {
          if (typeof value === 'number' && Number.isNaN(value)) continue
          const view = await tm.call('m', { s: value, other: secret })
          expect(view.status, `${label} ${secret}`).toBe('invalid')
          const shown = JSON.stringify(view)
          expect(shown, `${label} ${String(secret)}`).not.toContain(secret)
          expect(shown, label).not.toContain(secret.toUpperCase())
        }
      }
    }
  })
})

describe('a message quoting another field of the input', () => {
  it('is scrubbed too (a refinement over the whole object naming a sibling value)', async () => {
    const schema = z
      .object({ user: z.string(), password: z.string() })
      .refine((o) => !o.password.includes(o.user), { path: ['password'], error: (i) => `must not contain ${(i.input as { user: string }).user}` })
    const tm = echoTool(new ToolManager(), 'signup', schema)
    const view = await tm.call('signup', { user: 'alice-SECRET', password: 'xx-alice-SECRET-xx' })
    expect(view).toMatchObject({ status: 'invalid', issues: [{ path: '/password', message: 'is not valid (custom)' }] })
    expect(JSON.stringify(view)).not.toContain('alice')
  })
})

describe('a message printing an object value', () => {
  it('is scrubbed, even when each of its leaves is too short to look for', async () => {
    const schema = standard((value) => ({ issues: [{ message: `bad pin ${JSON.stringify((value as { pin: unknown }).pin)}`, path: ['pin'], code: 'custom' }] }), { type: 'object' })
    const tm = echoTool(new ToolManager(), 'pin', schema)
    const view = await tm.call('pin', { pin: { a: 1, b: 2 } })
    expect(view).toMatchObject({ status: 'invalid', issues: [{ path: '/pin', message: 'is not valid (custom)' }] })
  })
})

describe('arktype', () => {
  const schema = ark({ city: 'string >= 2', 'days?': 'number.integer', tags: 'string[]' })

  it('validates as a Standard Schema, run gets arktype\'s value, the manifest shows its own JSON Schema', async () => {
    const tm = echoTool(new ToolManager(), 'trip', schema)
    expect(await tm.call('trip', { city: 'Oslo', tags: [] })).toMatchObject({ status: 'ok', data: { got: { city: 'Oslo', tags: [] } } })
    const bad = await tm.call('trip', { city: 'X', days: 1.5, tags: [SECRET, 7] })
    expect(bad.status).toBe('invalid')
    expect((bad as { issues: readonly Issue[] }).issues.map((i) => i.path).sort()).toEqual(['/city', '/days', '/tags/1'])
    expect(JSON.stringify(bad)).not.toContain(SECRET)
    expect(tm.manifest()[0]!.inputSchema).toEqual(schema.toJsonSchema())
    expect(tm.manifest()[0]!.inputSchema).toMatchObject({
      type: 'object',
      properties: { city: { type: 'string', minLength: 2 }, days: { type: 'integer' }, tags: { type: 'array', items: { type: 'string' } } },
      required: ['city', 'tags'],
    })
  })

  it('a morph reaches run as arktype\'s output', async () => {
    const tm = new ToolManager()
    const seen: unknown[] = []
    tm.register({ name: 'up', inputSchema: ark({ word: ark('string').pipe((s) => s.toUpperCase()) }), run: (input) => (seen.push(input.word), { ok: true }) })
    expect(await tm.call('up', { word: 'hi' })).toMatchObject({ status: 'ok' })
    expect(seen).toEqual(['HI'])
  })

  it('where arktype advertises a looser JSON Schema (a Date shows as {}), arktype still validates', async () => {
    const tm = echoTool(new ToolManager(), 'when', ark({ at: 'Date' }))
    expect(tm.manifest()[0]!.inputSchema).toMatchObject({ properties: { at: {} }, required: ['at'] })
    expect(await tm.call('when', { at: '2026-01-01' })).toMatchObject({ status: 'invalid', issues: [{ path: '/at', message: 'at must be a Date' }] })
  })
})

