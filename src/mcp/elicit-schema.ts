/**
 * The restricted schema of MCP form elicitation (2026-07-28 `ElicitRequestFormParams.requestedSchema`):
 * a flat object whose properties are each a `PrimitiveSchemaDefinition` (a string, a number or
 * integer, a boolean, or a single- or multi-select enum of strings). `formSchemaOf` says whether a
 * tool's input schema fits, and gives the wire copy; `formContentOf` checks a client's answer
 * against it. No MCP SDK import.
 */
import type { JsonValue } from '../core/types.js'

/** One property of a form: a `PrimitiveSchemaDefinition`, as the wire carries it. */
export type FormPropertySchema = { readonly [key: string]: JsonValue }

/** A schema that fits form elicitation, as the wire carries it (only the keywords the revision defines). */
export interface FormSchema {
  readonly type: 'object'
  readonly properties: { readonly [name: string]: FormPropertySchema }
  readonly required?: readonly string[]
  readonly $schema?: string
}

/** Why a schema does not fit form elicitation, with the JSON Pointer of the place. */
export interface FormSchemaMisfit {
  readonly reason: 'not_an_object_schema' | 'nested' | 'unsupported_keyword' | 'bad_value' | 'too_large'
  readonly at: string
}

/** What {@link formContentOf} answers: the content (only the schema's properties), or why it does not fit. */
export type FormContent = { readonly ok: true; readonly content: { readonly [name: string]: JsonValue } } | { readonly ok: false; readonly problem: string }

const STRING_FORMATS: ReadonlySet<unknown> = new Set(['date', 'date-time', 'email', 'uri'])
const TOP_KEYWORDS: ReadonlySet<string> = new Set(['type', 'properties', 'required', '$schema', 'title', 'description', 'additionalProperties'])
const COMMON: readonly string[] = ['type', 'title', 'description', 'default']
const KEYWORDS: Readonly<Record<string, ReadonlySet<string>>> = {
  string: new Set([...COMMON, 'minLength', 'maxLength', 'format']),
  enum: new Set([...COMMON, 'enum', 'enumNames']),
  oneOf: new Set([...COMMON, 'oneOf']),
  number: new Set([...COMMON, 'minimum', 'maximum']),
  boolean: new Set(COMMON),
  array: new Set([...COMMON, 'items', 'minItems', 'maxItems']),
}
/** The most properties a form may have (a form a person fills in). */
const MAX_PROPERTIES = 100
/** The most characters of a form schema's JSON: it travels sealed in the `requestState`, which stays under 20,000 characters. */
export const MAX_FORM_SCHEMA_CHARS = 8192

type Obj = { readonly [key: string]: unknown }

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v)
const isStrings = (v: unknown): v is readonly string[] => Array.isArray(v) && v.every((s) => typeof s === 'string')
const isCount = (v: unknown): boolean => Number.isSafeInteger(v) && (v as number) >= 0
const isTitledOptions = (v: unknown): v is readonly { const: string; title: string }[] =>
  Array.isArray(v) && v.length > 0 && v.every((o) => isObj(o) && typeof o.const === 'string' && typeof o.title === 'string' && Object.keys(o).length === 2)
const pointer = (name: string): string => `/properties/${name.replace(/~/g, '~0').replace(/\//g, '~1')}`

/** The shape of one property (the key set its keywords come from), or a misfit reason. */
function shapeOf(p: Obj): keyof typeof KEYWORDS | FormSchemaMisfit['reason'] {
  switch (p.type) {
    case 'string':
      if (p.enum !== undefined) return isStrings(p.enum) && p.enum.length > 0 && (p.enumNames === undefined || isStrings(p.enumNames)) ? 'enum' : 'bad_value'
      if (p.oneOf !== undefined) return isTitledOptions(p.oneOf) ? 'oneOf' : 'bad_value'
      return 'string'
    case 'number':
    case 'integer':
      return 'number'
    case 'boolean':
      return 'boolean'
    case 'array': {
      const items = p.items
      if (!isObj(items)) return 'nested'
      const single = items.type === 'string' && isStrings(items.enum) && items.enum.length > 0 && Object.keys(items).length === 2
      const titled = isTitledOptions(items.anyOf) && Object.keys(items).length === 1
      return single || titled ? 'array' : 'nested'
    }
    case 'object':
      return 'nested'
    default:
      return 'bad_value'
  }
}

/** Whether the keyword values of a property are of the types the revision gives them. */
function valuesFit(shape: keyof typeof KEYWORDS, p: Obj): boolean {
  for (const key of ['title', 'description'] as const) if (p[key] !== undefined && typeof p[key] !== 'string') return false
  for (const key of ['minLength', 'maxLength', 'minItems', 'maxItems'] as const) if (p[key] !== undefined && !isCount(p[key])) return false
  for (const key of ['minimum', 'maximum'] as const) if (p[key] !== undefined && typeof p[key] !== 'number') return false
  if (p.format !== undefined && !STRING_FORMATS.has(p.format)) return false
  const d = p.default
  if (d === undefined) return true
  switch (shape) {
    case 'number':
      return typeof d === 'number'
    case 'boolean':
      return typeof d === 'boolean'
    case 'array':
      return isStrings(d)
    default:
      return typeof d === 'string'
  }
}

/**
 * The wire copy of `schema` when it fits form elicitation: `type: "object"`, flat `properties`
 * each a primitive or a string enum (with only the keywords the revision defines for it),
 * `required` naming some of them, and optionally `$schema`, `title`, `description` and
 * `additionalProperties` (the last three are not sent), at most 8,192 characters of JSON;
 * otherwise where and why it does not fit.
 */
export function formSchemaOf(schema: unknown): { readonly ok: true; readonly schema: FormSchema } | ({ readonly ok: false } & FormSchemaMisfit) {
  const misfit = (reason: FormSchemaMisfit['reason'], at: string) => ({ ok: false as const, reason, at })
  if (!isObj(schema) || schema.type !== 'object' || !isObj(schema.properties)) return misfit('not_an_object_schema', '')
  for (const key of Object.keys(schema)) if (!TOP_KEYWORDS.has(key)) return misfit('unsupported_keyword', `/${key}`)
  const names = Object.keys(schema.properties)
  if (names.length > MAX_PROPERTIES) return misfit('bad_value', '/properties')
  if (schema.$schema !== undefined && typeof schema.$schema !== 'string') return misfit('bad_value', '/$schema')
  if (schema.required !== undefined && !(isStrings(schema.required) && schema.required.every((r) => names.includes(r)))) return misfit('bad_value', '/required')
  const properties: Record<string, FormPropertySchema> = {}
  for (const name of names) {
    const p = schema.properties[name]
    if (!isObj(p)) return misfit('bad_value', pointer(name))
    const shape = shapeOf(p)
    if (!(shape in KEYWORDS)) return misfit(shape as FormSchemaMisfit['reason'], pointer(name))
    const allowed = KEYWORDS[shape]!
    for (const key of Object.keys(p)) if (!allowed.has(key)) return misfit('unsupported_keyword', `${pointer(name)}/${key}`)
    if (!valuesFit(shape as keyof typeof KEYWORDS, p)) return misfit('bad_value', pointer(name))
    properties[name] = structuredClone(p) as FormPropertySchema
  }
  const out: { -readonly [K in keyof FormSchema]: FormSchema[K] } = { type: 'object', properties }
  if (schema.required !== undefined) out.required = [...(schema.required as readonly string[])]
  if (schema.$schema !== undefined) out.$schema = schema.$schema as string
  if (JSON.stringify(out).length > MAX_FORM_SCHEMA_CHARS) return misfit('too_large', '')
  return { ok: true, schema: out }
}

/** Why `value` does not fit property `p`, or `undefined` when it does. */
function valueProblem(p: FormPropertySchema, value: unknown): string | undefined {
  switch (p.type) {
    case 'boolean':
      return typeof value === 'boolean' ? undefined : 'must be a boolean'
    case 'number':
    case 'integer': {
      if (typeof value !== 'number' || !Number.isFinite(value)) return 'must be a number'
      if (p.type === 'integer' && !Number.isInteger(value)) return 'must be an integer'
      if (typeof p.minimum === 'number' && value < p.minimum) return `must be at least ${p.minimum}`
      if (typeof p.maximum === 'number' && value > p.maximum) return `must be at most ${p.maximum}`
      return undefined
    }
    case 'array': {
      if (!isStrings(value)) return 'must be a list of strings'
      const items = p.items as Obj
      const options = Array.isArray(items.enum) ? (items.enum as string[]) : (items.anyOf as { const: string }[]).map((o) => o.const)
      if (!value.every((v) => options.includes(v))) return 'holds a value that is not one of the options'
      if (typeof p.minItems === 'number' && value.length < p.minItems) return `must hold at least ${p.minItems}`
      if (typeof p.maxItems === 'number' && value.length > p.maxItems) return `must hold at most ${p.maxItems}`
      return undefined
    }
    default: {
      if (typeof value !== 'string') return 'must be a string'
      const options = Array.isArray(p.enum) ? (p.enum as string[]) : Array.isArray(p.oneOf) ? (p.oneOf as { const: string }[]).map((o) => o.const) : undefined
      if (options !== undefined && !options.includes(value)) return 'is not one of the options'
      // lengths in code points, as JSON Schema counts them
      const length = [...value].length
      if (typeof p.minLength === 'number' && length < p.minLength) return `must be at least ${p.minLength} characters`
      if (typeof p.maxLength === 'number' && length > p.maxLength) return `must be at most ${p.maxLength} characters`
      return undefined
    }
  }
}

/**
 * The accepted `content` of a form elicitation checked against `schema`: its properties' values
 * (keys the schema does not name are dropped, as the revision says to ignore what is not
 * recognised), or the first problem found. The client's answer is untrusted: never throws.
 */
export function formContentOf(schema: FormSchema, content: unknown): FormContent {
  if (!isObj(content)) return { ok: false, problem: 'the answer has no content object' }
  const out: Record<string, JsonValue> = {}
  for (const name of schema.required ?? []) if (!Object.hasOwn(content, name)) return { ok: false, problem: `"${name}" is required` }
  for (const [name, p] of Object.entries(schema.properties)) {
    if (!Object.hasOwn(content, name)) continue
    const problem = valueProblem(p, content[name])
    if (problem !== undefined) return { ok: false, problem: `"${name}" ${problem}` }
    out[name] = structuredClone(content[name]) as JsonValue
  }
  return { ok: true, content: out }
}
