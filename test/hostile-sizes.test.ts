// Values too big to walk: a tool's return, a caller's input or a schema that holds more values
// than the runtime walks (counted along every path, so shared sub-objects cannot make the work
// exponential, and a sparse or typed array is measured before it is walked). Each is refused
// with a typed result or a SchemaError, and the call settles.
import { describe, expect, it } from 'vitest'
import { SchemaError, ToolManager, type JsonSchema } from '../src/index.js'
import { UnknownToolError } from '../src/mcp/server.js'
import { MAX_VALUES } from '../src/core/json.js'
import { MAX_INPUT_VALUES, MAX_SCHEMA_VALUES } from '../src/core/validate.js'

/** An object whose every level points twice at the one below: 2**levels paths to its bottom. */
function shared(levels: number): object {
  let x: object = {}
  for (let i = 0; i < levels; i++) x = { a: x, b: x }
  return x
}

describe('values too big to walk', () => {
  it('a tool returning a huge sparse array, a big typed array or a shared-structure value gets an error view', async () => {
    const tm = new ToolManager()
    const returns: Record<string, () => unknown> = {
      sparse: () => {
        const a: unknown[] = []
        a.length = 2 ** 32 - 1
        return a
      },
      typed: () => new Uint8Array(MAX_VALUES + 1),
      sharedArrays: () => {
        let x: unknown[] = []
        for (let i = 0; i < 40; i++) x = [x, x]
        return x
      },
      sharedObjects: () => shared(40),
    }
    for (const [name, run] of Object.entries(returns)) tm.register({ name, inputSchema: {}, run })
    for (const name of Object.keys(returns)) {
      expect(await tm.call(name, {}), name).toMatchObject({ status: 'error', kind: 'other', message: 'The tool returned a value JSON cannot carry.' })
    }
    tm.register({ name: 'fine', inputSchema: {}, run: () => new Uint8Array(3) })
    expect(await tm.call('fine', {})).toMatchObject({ status: 'ok', data: { 0: 0, 1: 0, 2: 0 } })
  })

  it('an input holding more values than are checked is invalid, on both validation routes, without being walked per path', async () => {
    const tm = new ToolManager()
    tm.register({ name: 'ajv', inputSchema: { type: 'object' }, run: () => 1 })
    tm.register({ name: 'core', inputSchema: { type: 'object', unevaluatedProperties: true }, run: () => 1 })
    const message = `holds more than ${MAX_INPUT_VALUES} values`
    for (const name of ['ajv', 'core']) {
      expect(await tm.call(name, shared(40)), name).toMatchObject({ status: 'invalid', issues: [{ path: '', message }] })
      const sparse: unknown[] = []
      sparse.length = 2 ** 32 - 1
      expect(await tm.call(name, { sparse }), name).toMatchObject({ status: 'invalid', issues: [{ path: '', message }] })
      expect(await tm.call(name, shared(8)), name).toMatchObject({ status: 'ok' })
    }
  })

  it('a schema holding more values than are read is a SchemaError at register, shared sub-schemas counted per path', () => {
    const tm = new ToolManager()
    const bigEnum = { type: 'object', properties: { x: { enum: Array.from({ length: MAX_SCHEMA_VALUES + 1 }, (_, i) => i) } } }
    let props: JsonSchema = { type: 'string' }
    for (let i = 0; i < 40; i++) props = { type: 'object', properties: { a: props, b: props } }
    for (const [name, inputSchema] of Object.entries({ bigEnum, sharedProps: props })) {
      expect(() => tm.register({ name, inputSchema, run: () => 1 }), name).toThrow(SchemaError)
      expect(() => tm.register({ name, inputSchema, run: () => 1 }), name).toThrow(`holds more than ${MAX_SCHEMA_VALUES} values`)
    }
    expect(tm.list()).toHaveLength(0)
  })

  it('an unknown tool name is quoted at most 100 characters long, in the view and over MCP', async () => {
    const tm = new ToolManager()
    const name = 'n'.repeat(5_000_000)
    const view = await tm.call(name, {})
    expect(view).toMatchObject({ status: 'refused', code: 'unknown_tool', message: `No tool named "${'n'.repeat(100)}…" is registered` })
    expect(new UnknownToolError(name).message).toBe(`Unknown tool: ${'n'.repeat(100)}…`)
  })

  it('a chain of sub-schemas each applied twice to one item is a SchemaError at register, on the ajv route too', () => {
    const chain = (length: number): JsonSchema => {
      const defs: Record<string, object> = {}
      for (let i = 0; i < length; i++) {
        const next = { $ref: `#/$defs/d${i + 1}` }
        defs[`d${i}`] = i === length - 1 ? { type: 'string' } : { prefixItems: [next], contains: next }
      }
      return { type: 'object', properties: { x: { $ref: '#/$defs/d0' } }, $defs: defs }
    }
    const tm = new ToolManager()
    // 2**24 evaluations of the last link: ajv ran out of memory on a matching 24-deep input
    expect(() => tm.register({ name: 'long', inputSchema: chain(24), run: () => 1 })).toThrow(/reached in \d+ ways/)
    tm.register({ name: 'short', inputSchema: chain(6), run: () => 1 })
    expect(tm.list().map((t) => t.name)).toEqual(['short'])
  })

  it('redaction (summaries, evidence, spans) of an input too big to walk shows it redacted as a whole, without walking it per path', async () => {
    const { redact } = await import('../src/core/redact.js')
    expect(redact(shared(40))).toBe('[redacted]')
    let deep: unknown = 1
    for (let i = 0; i < 200; i++) deep = [deep]
    expect(redact({ deep })).toBe('[redacted]')
    expect(redact({ password: 'x', ok: shared(3) })).toMatchObject({ password: '[redacted]', ok: { a: { a: { a: {} } } } })
    // the default confirmation summary of such an input
    const tm = new ToolManager()
    tm.register({ name: 'confirm', inputSchema: {}, needsConfirmation: true, run: () => 1 })
    const view = await tm.call('confirm', { password: 'hunter2', big: shared(40) })
    expect(view.status).not.toBe('needs_confirmation') // the input is refused before: it holds too many values
    expect(JSON.stringify(view)).not.toContain('hunter2')
  })
})
