// Type test (tsc -p test/tsconfig.json): run's input is inferred from a Standard Schema
// (zod 4, valibot, arktype) and from a JSON Schema literal written `as const`.
import type { StandardSchemaV1 as SpecStandardSchemaV1 } from '@standard-schema/spec'
import { type as ark } from 'arktype'
import * as v from 'valibot'
import { z } from 'zod'
import { defineTool, ToolManager, type FromJsonSchema, type InputOf, type StandardSchemaV1 } from '../../src/index.js'

type Assert<T extends true> = T
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false

// toolwire's copy of the Standard Schema interface is the spec's
export type _SpecIsOurs = Assert<[SpecStandardSchemaV1<{ a: string }, number>] extends [StandardSchemaV1<{ a: string }, number>] ? true : false>
export type _OursIsSpec = Assert<[StandardSchemaV1<{ a: string }, number>] extends [SpecStandardSchemaV1<{ a: string }, number>] ? true : false>

const tm = new ToolManager()

// zod 4: the schema's output type (a default makes the field present)
const zodSchema = z.object({ city: z.string(), days: z.number().int().default(3), units: z.enum(['c', 'f']).optional() })
export type _Zod = Assert<Equal<InputOf<typeof zodSchema>, { city: string; days: number; units?: 'c' | 'f' | undefined }>>
tm.register({
  name: 'forecast',
  inputSchema: zodSchema,
  run: (input) => {
    const city: string = input.city
    const days: number = input.days
    // @ts-expect-error not in the schema
    input.country
    return { city, days }
  },
  summarize: (input) => `Forecast for ${input.city}`,
})

// valibot
const valibotSchema = v.object({ id: v.pipe(v.string(), v.uuid()), tags: v.optional(v.array(v.string()), []) })
export type _Valibot = Assert<Equal<InputOf<typeof valibotSchema>, { id: string; tags: string[] }>>
tm.register({
  name: 'tag',
  inputSchema: valibotSchema,
  run: (input) => {
    const tags: string[] = input.tags
    // @ts-expect-error a string is not a number
    const n: number = input.id
    return { tags, n }
  },
})

// arktype
const arkSchema = ark({ city: 'string', 'days?': 'number.integer', word: ark('string').pipe((s) => s.length) })
export type _Ark = Assert<Equal<InputOf<typeof arkSchema>, { city: string; days?: number; word: number }>>
tm.register({
  name: 'trip',
  inputSchema: arkSchema,
  run: (input) => {
    const city: string = input.city
    const length: number = input.word
    // @ts-expect-error a number is not a string
    const s: string = input.days
    return { city, length, s }
  },
})

// a JSON Schema literal written `as const`
const jsonSchema = {
  type: 'object',
  properties: {
    text: { type: 'string' },
    n: { type: 'integer', default: 1 },
    mode: { enum: ['a', 'b'] },
    list: { type: 'array', items: { type: ['string', 'null'] } },
    nested: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] },
    either: { anyOf: [{ type: 'string' }, { type: 'number' }] },
    fixed: { const: 42 },
  },
  required: ['text'],
} as const
export type _Json = Assert<
  Equal<
    FromJsonSchema<typeof jsonSchema>,
    {
      text: string
      n: number
      mode?: 'a' | 'b'
      list?: (string | null)[]
      nested?: { ok: boolean }
      either?: string | number
      fixed?: 42
    }
  >
>
tm.register({
  name: 'echo',
  inputSchema: jsonSchema,
  run: (input) => {
    const text: string = input.text
    const n: number = input.n
    // @ts-expect-error optional: may be undefined
    const ok: boolean = input.nested.ok
    return { text, n, ok }
  },
})

// a JSON Schema not written `as const`: the input is `unknown`, as before
tm.register({
  name: 'loose',
  inputSchema: { type: 'object', properties: { a: { type: 'string' } } },
  run: (input) => {
    const same: unknown = input
    // @ts-expect-error unknown
    input.a
    return same
  },
})

// an annotated run still decides the type
tm.register({
  name: 'annotated',
  inputSchema: { type: 'object' },
  run: (input: { a?: string }) => input.a ?? '',
})

// the name rule's opt-out
tm.register({ name: 'dotted.name', inputSchema: { type: 'object' }, run: () => 1 }, { anyName: true })

// defineTool: the same inference apart from register, and the result registers
const defined = defineTool({
  name: 'defined',
  inputSchema: z.object({ q: z.string() }),
  run: (input) => {
    const q: string = input.q
    // @ts-expect-error not in the schema
    input.other
    return q
  },
})
tm.register(defined)
