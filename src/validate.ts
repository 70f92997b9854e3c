/**
 * JSON Schema validation: compiled once per tool at registration, with ajv (draft
 * 2020-12 by default, draft-07 when `$schema` says so). Schemas are never fetched:
 * a `$ref` to a resource that was not given is a registration error.
 */
import { createRequire } from 'node:module'
import type { Ajv as AjvCore, ErrorObject, ValidateFunction } from 'ajv'
import { BindingSchema } from './native.js'

const require = createRequire(import.meta.url)
type AjvClass = new (options: object) => AjvCore
const Ajv2020 = (require('ajv/dist/2020') as { default: AjvClass }).default
const AjvDraft7 = (require('ajv') as { default: AjvClass }).default
const addFormats = (require('ajv-formats') as { default: (ajv: AjvCore) => void }).default

/** One validation failure: a JSON Pointer into the input and a message. */
export interface Issue {
  readonly path: string
  readonly message: string
}

/** A compiled schema check. */
export type Validator = (value: unknown) => readonly Issue[] | undefined

/** Options of the schema compiler. */
export interface SchemaOptions {
  /** Assert `format` (date-time, email, ...). JSON Schema 2020-12 treats it as an annotation by default. */
  readonly formats?: boolean
  /** Schemas that `$ref`s may point at, by URI. Nothing else is ever loaded. */
  readonly schemaResources?: Readonly<Record<string, object | boolean>>
}

const DRAFT7 = /^https?:\/\/json-schema\.org\/draft-07\/schema#?$/
const DRAFT2020 = /^https?:\/\/json-schema\.org\/draft\/2020-12\/schema#?$/

/** A registration-time schema problem. */
export class SchemaError extends Error {
  override name = 'SchemaError'
}

function escapePointer(token: string): string {
  return token.replace(/~/g, '~0').replace(/\//g, '~1')
}

function toIssue(error: ErrorObject): Issue {
  const params = error.params as Record<string, unknown>
  let path = error.instancePath
  if (error.keyword === 'required' && typeof params.missingProperty === 'string') {
    path += `/${escapePointer(params.missingProperty)}`
  } else if (error.keyword === 'additionalProperties' && typeof params.additionalProperty === 'string') {
    path += `/${escapePointer(params.additionalProperty)}`
  } else if (error.keyword === 'unevaluatedProperties' && typeof params.unevaluatedProperty === 'string') {
    path += `/${escapePointer(params.unevaluatedProperty)}`
  }
  let message = error.message ?? `fails ${error.keyword}`
  if (error.keyword === 'additionalProperties' || error.keyword === 'unevaluatedProperties') message = 'is not allowed'
  else if (error.keyword === 'required') message = 'is required'
  return Object.freeze({ path, message })
}

const CORE_KEYWORDS = new Set([
  '$dynamicRef',
  '$dynamicAnchor',
  '$recursiveRef',
  '$recursiveAnchor',
  'unevaluatedProperties',
  'unevaluatedItems',
  '$vocabulary',
  '__proto__',
])

/**
 * Whether a schema needs the core's validator: keywords ajv evaluates incompletely
 * (dynamic scope, unevaluated*), a `__proto__` property name, or (draft-07) a `$ref`
 * with sibling keywords, which draft-07 ignores and ajv does not.
 */
function needsCore(schema: unknown, draft7: boolean): boolean {
  if (typeof schema !== 'object' || schema === null) return false
  if (Array.isArray(schema)) return schema.some((s) => needsCore(s, draft7))
  const keys = Object.keys(schema)
  if (draft7 && keys.includes('$ref') && keys.some((k) => k !== '$ref' && k !== '$schema' && k !== '$comment')) return true
  for (const key of keys) {
    if (CORE_KEYWORDS.has(key) || needsCore((schema as Record<string, unknown>)[key], draft7)) return true
  }
  return false
}

/** Compiles schemas for one tool manager. */
export class SchemaCompiler {
  private draft2020: AjvCore | undefined
  private draft7: AjvCore | undefined

  constructor(private readonly options: SchemaOptions = {}) {}

  private instance(draft: '2020' | '7'): AjvCore {
    const existing = draft === '7' ? this.draft7 : this.draft2020
    if (existing) return existing
    const Ctor = draft === '7' ? AjvDraft7 : Ajv2020
    const ajv = new Ctor({
      allErrors: true,
      strict: false,
      ownProperties: true,
      validateFormats: this.options.formats === true,
      // never fetch: a missing $ref fails compile()
      loadSchema: undefined,
    })
    if (this.options.formats === true) addFormats(ajv)
    for (const [uri, schema] of Object.entries(this.options.schemaResources ?? {})) {
      const sid = (schema as { $schema?: unknown }).$schema
      const isOther = typeof sid === 'string' && (draft === '7' ? DRAFT2020.test(sid) : DRAFT7.test(sid))
      if (!isOther && ajv.getSchema(uri) === undefined) {
        try {
          ajv.addSchema(schema, uri)
        } catch {
          // a resource this draft cannot read is left out of it
        }
      }
    }
    if (draft === '7') this.draft7 = ajv
    else this.draft2020 = ajv
    return ajv
  }

  /**
   * Compiles `schema` into a validator.
   * @throws SchemaError for an invalid schema, an unsupported `$schema`, or an unresolvable `$ref`.
   */
  compile(schema: unknown, what: string): Validator {
    if (typeof schema === 'boolean') {
      const none = Object.freeze([Object.freeze({ path: '', message: 'no value is allowed (schema is false)' })])
      return schema ? () => undefined : () => none
    }
    if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) {
      throw new SchemaError(`${what} must be a JSON Schema object or boolean`)
    }
    const declared = (schema as { $schema?: unknown }).$schema
    let draft: '2020' | '7' = '2020'
    if (declared !== undefined) {
      if (typeof declared === 'string' && DRAFT7.test(declared)) draft = '7'
      else if (typeof declared === 'string' && this.options.schemaResources?.[declared.replace(/#$/, '')] !== undefined) {
        // a custom meta-schema given as a resource: the core reads its $vocabulary
        return this.compileInCore(schema, what)
      } else if (!(typeof declared === 'string' && DRAFT2020.test(declared))) {
        throw new SchemaError(`${what}: unsupported $schema ${JSON.stringify(declared)}; use draft 2020-12 or draft-07`)
      }
    }
    if (needsCore(schema, draft === '7')) return this.compileInCore(schema, what)
    const ajv = this.instance(draft)
    let validate: ValidateFunction
    try {
      const id = (schema as { $id?: unknown }).$id
      if (typeof id === 'string' && ajv.getSchema(id) !== undefined) ajv.removeSchema(id)
      validate = ajv.compile(schema)
    } catch {
      // ajv cannot read this schema (e.g. an empty enum, a relative $id): the core's validator can
      return this.compileInCore(schema, what)
    }
    let core: Validator | undefined
    return (value) => {
      try {
        return validate(value) ? undefined : Object.freeze((validate.errors ?? []).map(toIssue))
      } catch {
        // ajv threw on this value: the core validates it (compiled once, on first need)
        core ??= this.compileInCore(schema, what)
        return core(value)
      }
    }
  }

  /** Compiles with the core's validator (full 2020-12 dynamic scope and annotation support). */
  private compileInCore(schema: object, what: string): Validator {
    let compiled: InstanceType<typeof BindingSchema>
    try {
      compiled = BindingSchema.compile(JSON.stringify(schema), JSON.stringify(this.options.schemaResources ?? {}))
    } catch (err) {
      const message = (err as Error).message
      const remote = /resolve|retriev|unknown scheme|reference/i.test(message)
      throw new SchemaError(
        remote
          ? `${what}: ${message}. Schemas are never fetched over the network; pass the referenced schema in the manager's schemaResources`
          : `${what} is not a valid JSON Schema: ${message}`,
        { cause: err },
      )
    }
    return (value) => {
      const issues = compiled.validateJson(JSON.stringify(value) ?? 'null')
      return issues === null ? undefined : Object.freeze(issues.map((i) => Object.freeze({ path: i.path, message: i.message })))
    }
  }
}
