// Hostile schemas and inputs (issue 11, classes 1, 3, 6 and the issue cap of 8): a schema
// whose evaluation cannot end is a SchemaError at register, deep inputs are a typed
// `invalid`, issue messages never quote the input, patterns run in linear time, and the
// issues listed are capped. The process-killing cases also run in a child process.
import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { importMcpTools } from '../src/mcp/client.js'
import { SchemaError, ToolManager, modelTextOf, ok, toModel, type CallResult } from '../src/index.js'
import {
  MAX_COUNTED,
  MAX_DEPTH,
  MAX_INPUT_VALUES,
  MAX_ISSUES,
  MAX_LISTED_VALUES,
  STOPPED_AT_FIRST,
} from '../src/core/validate.js'
import { MAX_PATH_TOKEN } from '../src/core/json-form.js'
import { distIndex, ensureBuilt } from './fixtures/mcp/helpers.js'

const SECRET = 'hunter2-SECRET'

const LOOPS: Record<string, object> = {
  'self $ref beside unevaluatedProperties': { $ref: '#', unevaluatedProperties: false },
  'self $ref': { $ref: '#' },
  'self $ref in allOf': { allOf: [{ $ref: '#' }] },
  'a → b → a': { $ref: '#/$defs/a', $defs: { a: { $ref: '#/$defs/b' }, b: { $ref: '#/$defs/a' } } },
  '$dynamicRef loop': { $dynamicAnchor: 'x', $dynamicRef: '#x' },
  'draft-07 definitions loop': {
    $schema: 'http://json-schema.org/draft-07/schema#',
    definitions: { a: { $ref: '#/definitions/b' }, b: { $ref: '#/definitions/a' } },
    $ref: '#/definitions/a',
  },
  'loop across $id resources': {
    $id: 'https://example.com/root.json',
    $ref: 'a.json',
    $defs: { a: { $id: 'a.json', $ref: 'b.json' }, b: { $id: 'b.json', if: { $ref: 'a.json' } } },
  },
  'loop in a property schema': { type: 'object', properties: { p: { $ref: '#/$defs/a' } }, $defs: { a: { not: { $ref: '#/$defs/a' } } } },
}

function register(tm: ToolManager, inputSchema: unknown, name = 't'): void {
  tm.register({ name, inputSchema: inputSchema as never, run: () => ok(true) })
}

describe('schemas whose evaluation cannot end', () => {
  for (const [name, schema] of Object.entries(LOOPS)) {
    it(`${name}: a SchemaError at register`, () => {
      const tm = new ToolManager()
      let error: unknown
      try {
        register(tm, schema)
      } catch (err) {
        error = err
      }
      expect(error).toBeInstanceOf(SchemaError)
      expect((error as Error).message).toMatch(/never end/)
      expect((error as Error).message).toContain('tool "t" inputSchema')
    })
  }

  it('a loop through a given schema resource is a SchemaError too', () => {
    const tm = new ToolManager({ schemaResources: { 'http://localhost:1234/loop.json': { anyOf: [{ $ref: 'http://localhost:1234/loop.json' }] } } })
    expect(() => register(tm, { $ref: 'http://localhost:1234/loop.json' })).toThrow(/never end/)
  })

  it('a schema nesting deeper than the limit is a SchemaError, however deep', () => {
    let schema: object = { type: 'string' }
    for (let i = 0; i < 100_000; i++) schema = { not: schema }
    const tm = new ToolManager()
    expect(() => register(tm, schema)).toThrow(SchemaError)
    expect(() => register(tm, schema)).toThrow(/deeper than 100 levels/)
    const cyclic: Record<string, unknown> = { type: 'object' }
    cyclic.properties = { self: cyclic }
    expect(() => register(tm, cyclic, 'c')).toThrow(SchemaError)
  })

  it('recursion whose evaluations multiply at every input level is a SchemaError (a 30-deep input would take hours)', () => {
    const tm = new ToolManager()
    const doubling = { allOf: [{ $ref: '#/$defs/t' }, { $ref: '#/$defs/t' }], $defs: { t: { type: 'array', items: { $ref: '#' } } } }
    expect(() => register(tm, doubling)).toThrow(/multiply at every level/)
    expect(() => register(tm, { ...doubling, unevaluatedProperties: false }, 'core')).toThrow(/multiply at every level/)
    // a binary tree evaluates each child once
    register(tm, { type: 'object', properties: { left: { $ref: '#' }, right: { $ref: '#' } } }, 'binary')
  })

  it('a schema with no JSON form is a SchemaError, not a TypeError', () => {
    const tm = new ToolManager()
    expect(() => register(tm, { type: 'integer', const: 1n })).toThrow(SchemaError)
    expect(() => register(tm, { type: 'object', unevaluatedProperties: false, const: 1n }, 'core')).toThrow(SchemaError)
  })

  it('a long chain of in-place references is a SchemaError', () => {
    const $defs: Record<string, object> = {}
    for (let i = 0; i < 500; i++) $defs[`d${i}`] = { $ref: `#/$defs/d${i + 1}` }
    $defs.d500 = { type: 'string' }
    expect(() => register(new ToolManager(), { $ref: '#/$defs/d0', $defs })).toThrow(/chain/)
  })
})

describe('recursive schemas that descend into the input', () => {
  const trees = {
    'ajv route': { type: 'object', properties: { name: { type: 'string' }, children: { type: 'array', items: { $ref: '#' } } } },
    'core route': {
      type: 'object',
      properties: { name: { type: 'string' }, children: { type: 'array', items: { $ref: '#' } } },
      unevaluatedProperties: false,
    },
  }
  for (const [route, schema] of Object.entries(trees)) {
    it(`${route}: valid and invalid trees, and a deep one as a typed invalid`, async () => {
      const tm = new ToolManager()
      register(tm, schema)
      expect(await tm.call('t', { name: 'a', children: [{ name: 'b', children: [] }] })).toMatchObject({ status: 'ok' })
      const bad = await tm.call('t', { name: 'a', children: [{ name: 1 }] })
      expect(bad.status).toBe('invalid')
      if (bad.status === 'invalid') expect(bad.issues.map((i) => i.path)).toContain('/children/0/name')

      let fits: unknown = { name: 'leaf' }
      for (let i = 0; i < MAX_DEPTH / 2 - 1; i++) fits = { children: [fits] }
      expect(await tm.call('t', fits)).toMatchObject({ status: 'ok' })

      let deep: unknown = { name: 'leaf' }
      for (let i = 0; i < 50_000; i++) deep = { children: [deep] }
      const r = await tm.call('t', deep)
      expect(r.status).toBe('invalid')
      if (r.status === 'invalid') expect(r.issues).toEqual([{ path: '', message: `nests deeper than ${MAX_DEPTH} levels` }])
    })
  }

  it('a cyclic or throwing input is a typed invalid, never a throw', async () => {
    const tm = new ToolManager()
    register(tm, { type: 'object' }, 'ajv')
    register(tm, { type: 'object', unevaluatedProperties: false }, 'core')
    const cyclic: Record<string, unknown> = {}
    cyclic.self = cyclic
    const throwing = new Proxy({}, { ownKeys: () => { throw new Error('boom') } })
    for (const name of ['ajv', 'core']) {
      expect(await tm.call(name, cyclic)).toMatchObject({ status: 'invalid' })
      const r = await tm.call(name, throwing)
      expect(r.status).toBe('invalid')
    }
    expect(await tm.call('core', { big: 1n })).toMatchObject({ status: 'invalid' })
  })
})

describe('issue messages never quote the input', () => {
  const schemas: Record<string, object> = {
    minLength: { type: 'object', properties: { password: { type: 'string', minLength: 40 } } },
    maxLength: { type: 'object', properties: { password: { type: 'string', maxLength: 3 } } },
    enum: { type: 'object', properties: { password: { enum: ['a', 'b'] } } },
    const: { type: 'object', properties: { password: { const: 'a' } } },
    type: { type: 'object', properties: { password: { type: 'integer' } } },
    pattern: { type: 'object', properties: { password: { type: 'string', pattern: '^[0-9]+$' } } },
    not: { type: 'object', properties: { password: { not: { type: 'string' } } } },
    anyOf: { type: 'object', properties: { password: { anyOf: [{ type: 'integer' }, { minLength: 99 }] } } },
    oneOf: { type: 'object', properties: { password: { oneOf: [{ type: 'string' }, { minLength: 1 }] } } },
    propertyNames: { type: 'object', propertyNames: { maxLength: 3 } },
    additionalProperties: { type: 'object', additionalProperties: false },
    uniqueItems: { type: 'object', properties: { list: { uniqueItems: true } } },
    'core route minLength': { type: 'object', properties: { password: { minLength: 40 } }, unevaluatedProperties: false },
    'core route enum': { type: 'object', properties: { password: { enum: ['x'] } }, unevaluatedProperties: false },
    'core route propertyNames': { type: 'object', propertyNames: { maxLength: 3 }, unevaluatedProperties: false },
  }
  for (const formats of [false, true]) {
    for (const [name, schema] of Object.entries(schemas)) {
      it(`${name}${formats ? ' (formats on)' : ''}: not in the view, the model text, toJSONText or call_end`, async () => {
        const tm = new ToolManager({ formats })
        register(tm, { ...schema, ...(formats ? { properties: { ...(schema as { properties?: object }).properties, email: { format: 'email' } } } : {}) })
        const ends: string[] = []
        tm.on('call_end', (e) => ends.push(JSON.stringify(e.view), JSON.stringify(e.record), e.result.toJSONText()))
        const input = { password: SECRET, list: [SECRET, SECRET], email: SECRET, extra: SECRET }
        const r: CallResult = await tm.call('t', input)
        expect(r.status).toBe('invalid')
        const outputs = [JSON.stringify(r), modelTextOf(r), JSON.stringify(toModel(r)), ...ends]
        expect(ends.length).toBeGreaterThan(0)
        for (const text of outputs) expect(text).not.toContain('hunter2')
      })
    }
  }

  it('a key of the input appears in a path (where), never in a message (what)', async () => {
    const tm = new ToolManager()
    register(tm, schemas.additionalProperties!, 'ajv')
    register(tm, schemas['core route propertyNames']!, 'core')
    for (const name of ['ajv', 'core']) {
      const r = await tm.call(name, { [SECRET]: 1 })
      expect(r.status).toBe('invalid')
      if (r.status === 'invalid') for (const issue of r.issues) expect(issue.message).not.toContain('hunter2')
    }
  })

  it('callJson text that is not JSON: the message gives a position, not the text', async () => {
    const tm = new ToolManager()
    register(tm, { type: 'object', unevaluatedProperties: false })
    const r = await tm.callJson('t', `{"password": "${SECRET}" oops}`)
    expect(r.status).toBe('invalid')
    expect(JSON.stringify(r)).not.toContain('hunter2')
  })
})

describe('untrusted patterns run in linear time', () => {
  it('^(a+)+$ on a 31-character input settles at once (ajv would backtrack for minutes)', async () => {
    const tm = new ToolManager()
    register(tm, { type: 'object', properties: { s: { type: 'string', pattern: '^(a+)+$' } } })
    register(tm, { type: 'object', patternProperties: { '^(a|aa)+$': { type: 'integer' } } }, 'keys')
    const r = await tm.call('t', { s: `${'a'.repeat(31)}!` })
    expect(r.status).toBe('invalid')
    if (r.status === 'invalid') expect(r.issues[0]).toEqual({ path: '/s', message: 'must match pattern "^(a+)+$"' })
    expect(await tm.call('t', { s: 'aaaa' })).toMatchObject({ status: 'ok' })
    expect(await tm.call('keys', { [`${'a'.repeat(31)}!`]: 'x', aaa: 'x' })).toMatchObject({ status: 'invalid' })
  })

  it('a pattern the linear engine cannot run is a clear SchemaError', () => {
    const tm = new ToolManager()
    for (const pattern of ['^(?=a)a+$', '(a)\\1', '(?<!x)y']) {
      expect(() => register(tm, { type: 'string', pattern })).toThrow(/linear-time regex engine/)
      expect(() => register(tm, { type: 'object', patternProperties: { [pattern]: true } })).toThrow(SchemaError)
    }
  })
})

describe('the issues listed are capped, and counting stops at a bound', () => {
  const ROUTES = {
    'ajv route': { type: 'array', items: { type: 'string' } },
    'core route': { type: 'array', items: { type: 'string' }, unevaluatedItems: false },
  }
  for (const [route, schema] of Object.entries(ROUTES)) {
    it(`${route}: a few thousand invalid items give ${MAX_ISSUES} issues and the exact count of the rest`, async () => {
      const tm = new ToolManager()
      register(tm, schema)
      const items = MAX_LISTED_VALUES / 2
      const r = await tm.call('t', new Array(items).fill(0))
      expect(r.status).toBe('invalid')
      if (r.status !== 'invalid') return
      expect(r.issues).toHaveLength(MAX_ISSUES + 1)
      expect(r.issues[MAX_ISSUES - 1]).toEqual({ path: `/${MAX_ISSUES - 1}`, message: 'must be string' })
      expect(r.issues[MAX_ISSUES]).toEqual({ path: '', message: `${items - MAX_ISSUES} more issues not listed` })
    })
  }

  it('core route: past the counting bound, the count says "at least"', async () => {
    const tm = new ToolManager()
    // each item fails three keywords: more than MAX_ISSUES + MAX_COUNTED issues within MAX_LISTED_VALUES values
    register(tm, { type: 'array', items: { minimum: 5, maximum: 1, multipleOf: 2 }, unevaluatedItems: false })
    const r = await tm.call('t', new Array(MAX_LISTED_VALUES - 1).fill(3))
    expect(r.status).toBe('invalid')
    if (r.status !== 'invalid') return
    expect(r.issues).toHaveLength(MAX_ISSUES + 1)
    expect(r.issues[MAX_ISSUES]).toEqual({ path: '', message: `at least ${MAX_COUNTED} more issues not listed` })
  })

  for (const [route, schema] of Object.entries(ROUTES)) {
    it(`${route}: an input of more than MAX_LISTED_VALUES values (up to the 1,000,000 an input may hold) is checked up to its first issue, and says there may be more`, async () => {
      const tm = new ToolManager()
      register(tm, schema)
      for (const items of [MAX_LISTED_VALUES, MAX_INPUT_VALUES - 1]) {
        const r = await tm.call('t', new Array(items).fill(0)) // the array itself is the one more value
        expect(r).toMatchObject({ status: 'invalid' })
        if (r.status !== 'invalid') return
        // early exit: the validator built one error, not one per item
        expect(r.issues).toEqual([
          { path: '/0', message: 'must be string' },
          { path: '', message: STOPPED_AT_FIRST },
        ])
        expect(modelTextOf(r)).toContain(STOPPED_AT_FIRST)
      }
      expect(await tm.call('t', new Array(MAX_INPUT_VALUES - 1).fill('s'))).toMatchObject({ status: 'ok' })
    })
  }

  it('a big schema lists every issue only for a proportionally smaller input, on both routes', async () => {
    const tm = new ToolManager()
    const $defs = Object.fromEntries(Array.from({ length: 2_000 }, (_, i) => [`d${i}`, { type: 'string' }]))
    register(tm, { type: 'array', items: { type: 'string' }, $defs }, 'ajv') // 4,006 values: every issue is listed for at most 249
    register(tm, { type: 'array', items: { type: 'string' }, unevaluatedItems: false, $defs }, 'core')
    for (const name of ['ajv', 'core']) {
      const r = await tm.call(name, new Array(300).fill(0))
      expect(r, name).toMatchObject({ status: 'invalid', issues: [{ path: '/0' }, { path: '', message: STOPPED_AT_FIRST }] })
      const small = await tm.call(name, [0, 0])
      expect(small, name).toMatchObject({ status: 'invalid', issues: [{ path: '/0' }, { path: '/1' }] })
    }
  })

  it('99,999 keys that are not allowed: checked up to the first issue, at most the cap listed, on both routes', async () => {
    const tm = new ToolManager()
    register(tm, { type: 'object', properties: { a: {} }, additionalProperties: false }, 'ajv')
    register(tm, { type: 'object', properties: { a: {} }, unevaluatedProperties: false }, 'core')
    const input = Object.fromEntries(Array.from({ length: MAX_INPUT_VALUES - 1 }, (_, i) => [`k${i}`, 1]))
    for (const name of ['ajv', 'core']) {
      const r = await tm.call(name, input)
      expect(r.status, name).toBe('invalid')
      if (r.status !== 'invalid') return
      // the core's first error names every unexpected key: up to the cap of them are listed
      expect(r.issues.length, name).toBeLessThanOrEqual(MAX_ISSUES + 1)
      expect(r.issues[0], name).toEqual({ path: '/k0', message: 'is not allowed' })
      expect(r.issues.at(-1), name).toEqual({ path: '', message: STOPPED_AT_FIRST })
    }
  })
})

describe('issue paths clip long keys', () => {
  const HUGE = `${'é'.repeat(MAX_PATH_TOKEN - 2)}/~${'x'.repeat(1_000_000)}`
  const CLIPPED = `/${'é'.repeat(MAX_PATH_TOKEN - 2)}~1~0…`
  const SCHEMAS = {
    ajv: { type: 'object', properties: { a: { type: 'object', additionalProperties: { type: 'string' } } }, additionalProperties: false },
    core: { type: 'object', properties: { a: { type: 'object', additionalProperties: { type: 'string' } } }, unevaluatedProperties: false },
  }
  for (const [route, schema] of Object.entries(SCHEMAS)) {
    it(`${route} route: a key of a million characters is quoted as its first ${MAX_PATH_TOKEN} characters and …`, async () => {
      const tm = new ToolManager()
      register(tm, schema)
      const r = await tm.call('t', { [HUGE]: 1, a: { [HUGE]: 2 } })
      expect(r.status).toBe('invalid')
      if (r.status !== 'invalid') return
      expect(r.issues.map((i) => i.path).sort()).toEqual([CLIPPED, `/a${CLIPPED}`].sort())
      expect(modelTextOf(r).length).toBeLessThan(1_000)
      expect(JSON.stringify(r).length).toBeLessThan(2_000)
    })
  }

  it('a key of exactly MAX_PATH_TOKEN characters (astral ones count once) is quoted whole, on both routes', async () => {
    const tm = new ToolManager()
    register(tm, SCHEMAS.ajv, 'ajv')
    register(tm, SCHEMAS.core, 'core')
    const key = '😀'.repeat(MAX_PATH_TOKEN)
    for (const name of ['ajv', 'core']) {
      expect(await tm.call(name, { [key]: 1 }), name).toMatchObject({ status: 'invalid', issues: [{ path: `/${key}` }] })
      expect(await tm.call(name, { [key + 'x']: 1 }), name).toMatchObject({ status: 'invalid', issues: [{ path: `/${key}…` }] })
    }
  })

  it('a required key the schema names is clipped the same way', async () => {
    const tm = new ToolManager()
    register(tm, { type: 'object', required: [HUGE] }, 'ajv')
    register(tm, { type: 'object', required: [HUGE], unevaluatedProperties: false }, 'core')
    for (const name of ['ajv', 'core']) {
      expect(await tm.call(name, {}), name).toMatchObject({ status: 'invalid', issues: [{ path: CLIPPED, message: 'is required' }] })
    }
  })
})

describe('formats: true asserts format on both routes', () => {
  const SCHEMAS = {
    ajv: { type: 'object', properties: { to: { type: 'string', format: 'email' } } },
    // a pattern routes the schema to the core's validator
    core: { type: 'object', properties: { to: { type: 'string', format: 'email' }, id: { type: 'string', pattern: '^[a-z]+$' } } },
  }
  for (const [route, schema] of Object.entries(SCHEMAS)) {
    it(`${route} route`, async () => {
      const strict = new ToolManager({ formats: true })
      const lax = new ToolManager()
      register(strict, schema)
      register(lax, schema)
      expect(await strict.call('t', { to: 'nobody' })).toMatchObject({ status: 'invalid', issues: [{ path: '/to', message: 'must match format "email"' }] })
      expect(await strict.call('t', { to: 'a@example.com' })).toMatchObject({ status: 'ok' })
      expect(await lax.call('t', { to: 'nobody' })).toMatchObject({ status: 'ok' })
    })
  }
})

describe('a hostile MCP server', () => {
  async function connect(tools: readonly object[]): Promise<Client> {
    const remote = new Server({ name: 'remote', version: '1' }, { capabilities: { tools: {} } })
    remote.setRequestHandler(ListToolsRequestSchema, () => ({ tools }) as never)
    remote.setRequestHandler(CallToolRequestSchema, () => ({ content: [{ type: 'text', text: 'ran' }] }))
    const [a, b] = InMemoryTransport.createLinkedPair()
    await remote.connect(a)
    const client = new Client({ name: 'local', version: '1' })
    await client.connect(b)
    return client
  }

  it('a looping inputSchema makes importMcpTools reject with a SchemaError naming the tool', async () => {
    const client = await connect([
      { name: 'fine', inputSchema: { type: 'object' } },
      { name: 'loop', inputSchema: { type: 'object', $ref: '#', unevaluatedProperties: false } },
    ])
    const tm = new ToolManager()
    const error = await importMcpTools(client, tm).then(() => undefined, (err: unknown) => err)
    expect(error).toBeInstanceOf(SchemaError)
    expect((error as Error).message).toMatch(/tool "loop" inputSchema .*never end/)
    await client.close()
  })

  it('a backtracking pattern from the server runs in linear time', async () => {
    const client = await connect([{ name: 're', inputSchema: { type: 'object', properties: { s: { type: 'string', pattern: '^(a+)+$' } } } }])
    const tm = new ToolManager()
    await importMcpTools(client, tm)
    expect(await tm.call('re', { s: `${'a'.repeat(31)}!` })).toMatchObject({ status: 'invalid' })
    expect(await tm.call('re', { s: 'aaa' })).toMatchObject({ status: 'ok' })
    await client.close()
  })
})

describe('in a child process', () => {
  let dir: string
  beforeAll(() => {
    ensureBuilt()
    dir = mkdtempSync(join(tmpdir(), 'toolwire-hostile-'))
  })
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  it('hostile schemas and inputs neither crash nor hang the process', async () => {
    const script = join(dir, 'hostile.mjs')
    writeFileSync(
      script,
      `import { ToolManager, ok } from ${JSON.stringify(pathToFileURL(distIndex).href)}
const loops = ${JSON.stringify(Object.values(LOOPS))}
const out = []
for (const schema of loops) {
  const tm = new ToolManager()
  try { tm.register({ name: 't', inputSchema: schema, run: () => ok(1) }); out.push('registered') }
  catch (err) { out.push(err.name) }
  out.push((await tm.call('t', {})).status)
}
const tm = new ToolManager()
tm.register({ name: 'tree', inputSchema: { type: 'object', properties: { c: { items: { $ref: '#' } } }, unevaluatedProperties: false }, run: () => ok(1) })
let deep = {}
for (let i = 0; i < 200000; i++) deep = { c: [deep] }
out.push((await tm.call('tree', deep)).status)
tm.register({ name: 're', inputSchema: { type: 'string', pattern: '^(a+)+$' }, run: () => ok(1) })
out.push((await tm.call('re', 'a'.repeat(31) + '!')).status)
process.stdout.write(JSON.stringify(out))
`,
    )
    const { code, stdout } = await new Promise<{ code: number | null; stdout: string }>((resolve) => {
      const child = execFile(process.execPath, [script], { encoding: 'utf8', timeout: 60_000 }, (_err, out) =>
        resolve({ code: child.exitCode, stdout: out }),
      )
    })
    expect(code).toBe(0)
    const expected = Object.values(LOOPS).flatMap(() => ['SchemaError', 'refused'])
    expect(JSON.parse(stdout)).toEqual([...expected, 'invalid', 'invalid'])
  })
})

// UTF-8, which the core reads schemas in, cannot carry a lone surrogate: the SchemaError says so and where
describe('a schema holding a lone surrogate', () => {
  const register = (schema: object, tm = new ToolManager()) => () => tm.register({ name: 't', inputSchema: schema as Record<string, unknown>, run: () => 1 })

  it.each([
    ['a property name', { type: 'object', properties: { 'a\ud800': { type: 'string' } } }, '/properties/a\ufffd'],
    ['a const', { type: 'object', properties: { a: { const: 'x\udc00y' } } }, '/properties/a/const'],
    ['a pattern (the core route)', { type: 'object', properties: { a: { type: 'string', pattern: '\ud800' } } }, '/properties/a/pattern'],
    ['an enum item', { enum: ['ok', 'b\udfff'] }, '/enum/1'],
    ['a description', { description: '\ud83d', type: 'string' }, '/description'],
  ])('in %s is a SchemaError naming where', (_what, schema, at) => {
    expect(register(schema)).toThrow(SchemaError)
    expect(register(schema)).toThrow(`tool "t" inputSchema is not usable: it holds text that is not well-formed Unicode (a lone surrogate) at ${at}`)
  })

  it('in a schema resource is a SchemaError too', () => {
    const tm = new ToolManager({ schemaResources: { 'urn:x': { type: 'string', const: '\ud800' } } })
    expect(register({ $ref: 'urn:x' }, tm)).toThrow('schemaResources is not usable: it holds text that is not well-formed Unicode (a lone surrogate) at /urn:x/const')
  })

  it('in the JSON Schema a Standard Schema gives (zod) is a SchemaError too', async () => {
    const { z } = await import('zod')
    const tm = new ToolManager()
    const at = (schema: unknown) => () => tm.register({ name: 'z', inputSchema: schema as never, run: () => 1 })
    expect(at(z.object({ a: z.literal('\ud800') }))).toThrow('tool "z" inputSchema is not usable: it holds text that is not well-formed Unicode (a lone surrogate) at /properties/a/const')
    expect(at(z.object({ a: z.string() }).describe('x\udfff'))).toThrow('at /description')
    expect(() => tm.register({ name: 'z', inputSchema: z.object({}), outputSchema: z.object({ b: z.literal('\udc00') }), run: () => ({ b: 'x' }) as never })).toThrow(
      'tool "z" outputSchema is not usable: it holds text that is not well-formed Unicode (a lone surrogate) at /properties/b/const',
    )
    expect(at(z.object({ a: z.literal('😀') }))).not.toThrow()
  })

  it('a well-formed pair, and an escaped backslash before "ud800", are fine', () => {
    const tm = new ToolManager()
    expect(register({ type: 'object', properties: { '😀': { const: 'a\ud83d\ude00' }, b: { const: '\\ud800' } } }, tm)).not.toThrow()
  })
})

// the core's regex engine reads Unicode code points: a pattern written with UTF-16 surrogate
// escapes is a SchemaError that says so, where, and what to write instead
describe('a pattern with surrogate escapes', () => {
  const register = (schema: Record<string, unknown>) => () => new ToolManager().register({ name: 't', inputSchema: schema, run: () => 1 })
  const message = (at: string, escape: string) =>
    `tool "t" inputSchema is not usable: the pattern at ${at} writes UTF-16 surrogate escapes (${escape}), which the core's regex engine cannot read (it reads Unicode code points): write the character itself or \\u{...}`

  it.each([
    [{ type: 'string', pattern: '^\\ud83d\\ude00$' }, '/pattern', '\\ud83d\\ude00'],
    [{ type: 'object', properties: { a: { type: 'string', pattern: 'x\\uD800' } } }, '/properties/a/pattern', '\\uD800'],
    [{ type: 'object', patternProperties: { '^[\\ud83c-\\udbff]': {} } }, '/patternProperties/^[\\ud83c-\\udbff]', '\\ud83c'],
  ])('%j', (schema, at, escape) => {
    expect(register(schema)).toThrow(SchemaError)
    expect(register(schema)).toThrow(message(at, escape))
  })

  it('the character itself, \\u{...}, and an escaped backslash before "ud800" work', async () => {
    const tm = new ToolManager()
    tm.register({ name: 'a', inputSchema: { type: 'string', pattern: '^\\u{1F600}😀$' }, run: () => 1 })
    tm.register({ name: 'b', inputSchema: { type: 'string', pattern: '^\\\\ud800$' }, run: () => 1 })
    expect(await tm.call('a', '😀😀')).toMatchObject({ status: 'ok' })
    expect(await tm.call('b', '\\ud800')).toMatchObject({ status: 'ok' })
  })
})

describe('a schema that cannot be read', () => {
  const secret = new Error(`boom ${SECRET}`)
  const revocable = Proxy.revocable({}, {})
  revocable.revoke()
  it.each([
    ['a throwing getter', { type: 'object', get properties(): never { throw secret } }],
    ['a deep throwing getter', { type: 'object', properties: { a: { get type(): never { throw secret } } } }],
    ['a Proxy whose trap throws', new Proxy({ type: 'object' }, { ownKeys: () => { throw secret } })],
    ['a revoked Proxy', revocable.proxy],
    ['a Standard Schema whose ~standard getter throws', { get '~standard'(): never { throw secret } }],
    ['a Standard Schema whose ~standard.version getter throws', { '~standard': { get version(): never { throw secret }, validate: () => ({ value: 1 }) } }],
    ['a zod-like instance whose ~standard getter throws', new (class Z { get '~standard'(): never { throw secret } })()],
  ])('%s is a SchemaError with the thrown error as its cause, never its message', (_what, schema) => {
    let caught: unknown
    try {
      new ToolManager().register({ name: 't', inputSchema: schema as Record<string, unknown>, run: () => 1 })
    } catch (err) {
      caught = err
    }
    expect(caught).toBeInstanceOf(SchemaError)
    expect((caught as Error).message).toBe("tool \"t\" has a schema that cannot be read (reading it threw; the error is this one's cause)")
    expect((caught as Error).message).not.toContain(SECRET)
    expect((caught as Error).cause).toBeDefined()
  })

  it('an outputSchema too', () => {
    const register = () => new ToolManager().register({ name: 't', inputSchema: { type: 'object' }, outputSchema: { get type(): never { throw secret } }, run: () => 1 })
    expect(register).toThrow(SchemaError)
  })
})
