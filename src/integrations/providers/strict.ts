/**
 * OpenAI strict mode (structured outputs for function calls): a tool's JSON Schema converted
 * to the subset strict mode accepts, and the way back for the arguments a strict model sends.
 *
 * Strict mode wants every object closed (`additionalProperties: false`) and every property
 * required; an optional property is declared nullable instead, and the model sends `null`
 * for it. `strictArguments` turns those `null`s back into absent properties, so the tool's own
 * schema (which toolwire validates every call against) sees the input it was written for.
 */
import { setOwn } from '../../core/schema-source.js'
import type { JsonSchema } from '../../runtime/tool.js'
import type { JsonSchemaObject } from '../../core/schema-types.js'

/** A tool's schema strict mode cannot express. */
export class StrictSchemaError extends TypeError {
  override name = 'StrictSchemaError'
}

/** Keywords strict mode reads (besides those handled one by one below). */
const KEPT = new Set(['type', 'description', 'title', 'enum', 'const', 'pattern', 'format', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf', 'minItems', 'maxItems'])
/** Keywords that only constrain values: left out (toolwire still checks them against the tool's own schema). */
const DROPPED = new Set(['$schema', '$id', '$comment', 'default', 'examples', 'deprecated', 'readOnly', 'writeOnly', 'minLength', 'maxLength', 'uniqueItems', 'minProperties', 'maxProperties', 'contentEncoding', 'contentMediaType'])

/** How the `null`s of converted-optional properties go back to absent, per schema node. */
type Unnull = (value: unknown) => unknown

interface Converted {
  readonly schema: JsonSchemaObject
  readonly unnull: Unnull | undefined
}

const keep: Unnull = (v) => v

class Converter {
  private readonly refs = new Map<string, { unnull: Unnull | undefined }>()
  constructor(private readonly root: JsonSchemaObject) {}

  node(value: unknown, path: string, depth: number): Converted {
    if (depth > 64) throw new StrictSchemaError(`${path}: nested too deep for strict mode`)
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw new StrictSchemaError(`${path}: a schema that accepts any value has no strict form`)
    }
    const s = value as JsonSchemaObject
    if (typeof s.$ref === 'string') return this.ref(s, path, depth)
    const out: JsonSchemaObject = {}
    let unnull: Unnull | undefined
    for (const [key, v] of Object.entries(s)) {
      if (KEPT.has(key)) out[key] = v
      else if (DROPPED.has(key) || key === '$defs' || key === 'definitions' || key === 'required' || key === 'additionalProperties') continue
      else if (key === 'properties') continue
      else if (key === 'items') {
        if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new StrictSchemaError(`${path}/items: strict mode wants one schema for every item`)
        const items = this.node(v, `${path}/items`, depth + 1)
        out.items = items.schema
        if (items.unnull !== undefined) {
          const inner = items.unnull
          unnull = (a) => (Array.isArray(a) ? a.map(inner) : a)
        }
      } else if (key === 'anyOf' || key === 'oneOf') {
        // oneOf as anyOf only loosens what the model is told: toolwire still checks the tool's schema
        if (!Array.isArray(v)) throw new StrictSchemaError(`${path}/${key}: not a list`)
        out.anyOf = v.map((branch, i) => {
          const c = this.node(branch, `${path}/${key}/${i}`, depth + 1)
          if (c.unnull !== undefined) throw new StrictSchemaError(`${path}/${key}/${i}: optional properties inside a union have no strict form`)
          return c.schema
        })
      } else {
        throw new StrictSchemaError(`${path}: strict mode does not support ${JSON.stringify(key)}`)
      }
    }
    const isObject = s.type === 'object' || (Array.isArray(s.type) && s.type.includes('object')) || s.properties !== undefined
    if (isObject) {
      const object = this.object(s, path, depth)
      Object.assign(out, object.schema)
      out.type ??= 'object'
      unnull = object.unnull
    }
    if (out.type === undefined && out.anyOf === undefined && out.enum === undefined && out.const === undefined) {
      throw new StrictSchemaError(`${path}: a schema without a type has no strict form`)
    }
    return { schema: out, unnull }
  }

  private object(s: JsonSchemaObject, path: string, depth: number): Converted {
    if (s.additionalProperties !== undefined && s.additionalProperties !== false) {
      throw new StrictSchemaError(`${path}: strict mode wants additionalProperties: false (this object allows other properties)`)
    }
    const props = (typeof s.properties === 'object' && s.properties !== null ? s.properties : {}) as JsonSchemaObject
    const required = new Set(Array.isArray(s.required) ? s.required : [])
    const properties: JsonSchemaObject = {}
    const inner = new Map<string, Unnull>()
    const optional = new Set<string>()
    for (const [name, sub] of Object.entries(props)) {
      const c = this.node(sub, `${path}/properties/${name}`, depth + 1)
      if (c.unnull !== undefined) inner.set(name, c.unnull)
      // setOwn: a property named `__proto__` is a member, never the prototype
      if (required.has(name)) setOwn(properties, name, c.schema)
      else {
        setOwn(properties, name, nullable(c.schema))
        optional.add(name)
      }
    }
    const schema: JsonSchemaObject = { properties, required: Object.keys(properties), additionalProperties: false }
    if (optional.size === 0 && inner.size === 0) return { schema, unnull: undefined }
    return {
      schema,
      unnull: (value) => {
        if (typeof value !== 'object' || value === null || Array.isArray(value)) return value
        const out: Record<string, unknown> = {}
        for (const [k, v] of Object.entries(value)) {
          if (v === null && optional.has(k)) continue
          setOwn(out, k, inner.get(k)?.(v) ?? v)
        }
        return out
      },
    }
  }

  private ref(s: JsonSchemaObject, path: string, depth: number): Converted {
    const { $ref: ref, ...siblings } = s
    if (Object.keys(siblings).some((k) => k !== 'description' && k !== 'title')) throw new StrictSchemaError(`${path}: keywords beside $ref have no strict form`)
    if (typeof ref !== 'string' || !(ref === '#' || ref.startsWith('#/$defs/') || ref.startsWith('#/definitions/'))) {
      throw new StrictSchemaError(`${path}: strict mode supports only local references (#/$defs/…)`)
    }
    let entry = this.refs.get(ref)
    if (entry === undefined) {
      // a recursive reference reads the entry while it is being filled: its mapper is looked up when it runs
      entry = { unnull: undefined }
      this.refs.set(ref, entry)
      entry.unnull = this.node(resolve(this.root, ref, path), ref, depth + 1).unnull
    }
    const target = entry
    return { schema: { ...s }, unnull: (v) => (target.unnull ?? keep)(v) }
  }

  defs(key: '$defs' | 'definitions', depth: number): JsonSchemaObject | undefined {
    const defs = this.root[key]
    if (typeof defs !== 'object' || defs === null) return undefined
    return Object.fromEntries(Object.entries(defs).map(([name, def]) => [name, this.node(def, `#/${key}/${name}`, depth + 1).schema]))
  }
}

function resolve(root: JsonSchemaObject, ref: string, path: string): unknown {
  if (ref === '#') return root
  let node: unknown = root
  for (const raw of ref.slice(2).split('/')) {
    const key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~')
    if (typeof node !== 'object' || node === null || !Object.hasOwn(node, key)) throw new StrictSchemaError(`${path}: ${ref} resolves to nothing`)
    node = (node as Record<string, unknown>)[key]
  }
  return node
}

/** `schema` that also accepts `null` (an optional property under strict mode). */
function nullable(schema: JsonSchemaObject): JsonSchemaObject {
  const type = schema.type
  if (typeof type === 'string' && schema.anyOf === undefined) {
    const out: JsonSchemaObject = { ...schema, type: [type, 'null'] }
    if (Array.isArray(schema.enum) && !schema.enum.includes(null)) out.enum = [...schema.enum, null]
    return out
  }
  if (Array.isArray(type) && schema.anyOf === undefined) {
    return type.includes('null') ? schema : { ...schema, type: [...type, 'null'], ...(Array.isArray(schema.enum) ? { enum: [...schema.enum, null] } : {}) }
  }
  return { anyOf: [schema, { type: 'null' }] }
}

/** A tool's schema in strict form, and how the arguments of a strict call go back to the tool's form. @internal */
export interface StrictForm {
  readonly schema: JsonSchemaObject
  /** The arguments with each `null` of a converted-optional property removed. */
  readonly toToolInput: (args: unknown) => unknown
}

const FORMS = new WeakMap<object, StrictForm>()

/**
 * The strict form of a tool's input schema (cached per schema object).
 * @throws StrictSchemaError saying where and why, when strict mode cannot express the schema.
 * @internal
 */
export function strictForm(schema: JsonSchema): StrictForm {
  if (typeof schema === 'boolean') throw new StrictSchemaError('#: a boolean schema has no strict form')
  const cached = FORMS.get(schema)
  if (cached !== undefined) return cached
  const root = schema as JsonSchemaObject
  const converter = new Converter(root)
  const { $schema: _s, $defs: _d, definitions: _o, ...body } = root
  const top = converter.node(body.type === undefined ? { type: 'object', ...body } : body, '#', 0)
  if (top.schema.type !== 'object' || top.schema.properties === undefined) throw new StrictSchemaError('#: strict mode wants an object at the root')
  const $defs = converter.defs('$defs', 0)
  const definitions = converter.defs('definitions', 0)
  const form: StrictForm = {
    schema: { ...top.schema, ...($defs === undefined ? {} : { $defs }), ...(definitions === undefined ? {} : { definitions }) },
    toToolInput: top.unnull ?? keep,
  }
  FORMS.set(schema, form)
  return form
}

/**
 * The JSON argument text of a strict call in the tool's own form: `null` for a property the
 * tool has as optional is left out. Text that is not JSON is returned as is (toolwire answers
 * it `invalid`).
 * @internal
 */
export function strictArguments(form: StrictForm, text: string): string {
  if (!text.includes('null')) return text
  try {
    return JSON.stringify(form.toToolInput(JSON.parse(text))) ?? text
  } catch {
    return text
  }
}

/**
 * A JSON Schema in the form OpenAI strict mode accepts: every object closed
 * (`additionalProperties: false`, which a schema that allows other properties cannot be), every
 * property required and each optional one nullable (`type: [T, "null"]`, or an `anyOf` with
 * `{ type: "null" }`), `oneOf` as `anyOf`, and keywords that only constrain values and that strict
 * mode does not read (`minLength`, `maxLength`, `uniqueItems`, `default`, ...) left out.
 *
 * @throws StrictSchemaError (a `TypeError`) naming the place and the reason, for what strict
 *   mode cannot express: `allOf`, `not`, `if`/`then`/`else`, `patternProperties`, an open object,
 *   a tuple, a schema without a type, a reference that is not local, optional properties inside
 *   a union.
 */
export function toOpenAIStrictSchema(schema: JsonSchema): JsonSchemaObject {
  return strictForm(schema).schema
}
