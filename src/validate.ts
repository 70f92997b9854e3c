/**
 * JSON Schema validation: compiled once per tool at registration, with ajv (draft
 * 2020-12 by default, draft-07 when `$schema` says so). Schemas are never fetched:
 * a `$ref` to a resource that was not given is a registration error.
 */
import { createRequire } from 'node:module'
import type { Ajv as AjvCore, ErrorObject, ValidateFunction } from 'ajv'

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
  readonly resources?: Readonly<Record<string, object>>
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
      validateFormats: this.options.formats === true,
      // never fetch: a missing $ref fails compile()
      loadSchema: undefined,
    })
    if (this.options.formats === true) addFormats(ajv)
    for (const [uri, schema] of Object.entries(this.options.resources ?? {})) {
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
      return schema ? () => undefined : () => [Object.freeze({ path: '', message: 'no value is allowed (schema is false)' })]
    }
    if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) {
      throw new SchemaError(`${what} must be a JSON Schema object or boolean`)
    }
    const declared = (schema as { $schema?: unknown }).$schema
    let draft: '2020' | '7' = '2020'
    if (declared !== undefined) {
      if (typeof declared === 'string' && DRAFT7.test(declared)) draft = '7'
      else if (!(typeof declared === 'string' && DRAFT2020.test(declared))) {
        throw new SchemaError(`${what}: unsupported $schema ${JSON.stringify(declared)}; use draft 2020-12 or draft-07`)
      }
    }
    const ajv = this.instance(draft)
    let validate: ValidateFunction
    try {
      const id = (schema as { $id?: unknown }).$id
      if (typeof id === 'string' && ajv.getSchema(id) !== undefined) ajv.removeSchema(id)
      validate = ajv.compile(schema)
    } catch (err) {
      const message = (err as Error).message
      const remote = /can't resolve reference|missingRef|resolve/i.test(message)
      throw new SchemaError(
        remote
          ? `${what}: ${message}. Schemas are never fetched over the network; pass the referenced schema in the manager's schemaResources`
          : `${what} is not a valid JSON Schema: ${message}`,
        { cause: err },
      )
    }
    return (value) => (validate(value) ? undefined : Object.freeze((validate.errors ?? []).map(toIssue)))
  }
}
