/**
 * A tool's Standard Schema (zod 4, valibot, arktype, ...): the validator that runs its own
 * `~standard.validate` ({@link standardValidator}) and the JSON Schema its library's converter
 * gives, to advertise ({@link jsonSchemaOf}).
 */
import { createRequire } from 'node:module'
import { MAX_DEPTH, refuseLoneSurrogates, SchemaError, tooLargeIssues, type Issue, type Validator } from './validate.js'
import { shapeProblem } from './json-form.js'
import type { JsonSchema, StandardSchemaV1 } from './schema-types.js'
import { isThenable, when } from './thenable.js'
import { issuesOf } from './standard-issues.js'

const require = createRequire(import.meta.url)

const TOO_DEEP: readonly Issue[] = Object.freeze([Object.freeze({ path: '', message: `nests deeper than ${MAX_DEPTH} levels` })])
const UNCHECKED: readonly Issue[] = Object.freeze([Object.freeze({ path: '', message: 'could not be checked: the schema failed while validating it' })])

/**
 * The validator of a Standard Schema; success records the schema's output value for `input`
 * in `outputs`. An asynchronous validation gives a thenable of the issues: the manager awaits
 * it for an input, and reports an output's issues when it settles (`outputs` undefined).
 */
export function standardValidator(schema: StandardSchemaV1, outputs: WeakMap<object, unknown> | undefined, maxValues: number): Validator {
  const validate = schema['~standard'].validate
  const tooLarge = tooLargeIssues(maxValues)
  // a result is a success only with an own-or-inherited `value` and no `issues`; anything else
  // the validator returned (null, neither member, a throwing getter, a Proxy) could not be checked
  const settle = (input: unknown, result: unknown): readonly Issue[] | undefined => {
    try {
      if (typeof result !== 'object' || result === null) return UNCHECKED
      const issues: unknown = (result as { issues?: unknown }).issues
      if (issues !== undefined && issues !== null && issues !== false) return issuesOf(Array.isArray(issues) ? (issues as StandardSchemaV1.Issue[]) : [], input)
      if (!('value' in result)) return UNCHECKED
      const value: unknown = (result as { value?: unknown }).value
      if (outputs !== undefined && typeof input === 'object' && input !== null) outputs.set(input, value)
      return undefined
    } catch {
      return UNCHECKED
    }
  }
  return ((input: unknown) => {
    try {
      const problem = shapeProblem(input, MAX_DEPTH, maxValues)
      if (problem !== undefined) return problem === 'deep' ? TOO_DEEP : tooLarge
      const result: unknown = validate(input)
      if (!isThenable(result)) return settle(input, result)
      // any thenable, read through `when`: one that calls back twice is heard once, one that
      // resolves to itself for ever gives up; one that never settles is cut by the call's timeout or signal
      return new Promise<readonly Issue[] | undefined>((resolve) =>
        when(
          result,
          (r) => resolve(settle(input, r)),
          () => resolve(UNCHECKED),
        ),
      )
    } catch {
      return UNCHECKED
    }
  }) as Validator
}

/** Which side of a Standard Schema is advertised: what it takes, or what it gives. */
export type Mode = 'input' | 'output'

/** The JSON Schema a Standard Schema's library gives, or a SchemaError saying why there is none. */
export function jsonSchemaOf(schema: StandardSchemaV1, mode: Mode, what: string): JsonSchema {
  const props = schema['~standard'] as StandardSchemaV1.Props & { jsonSchema?: { input?: unknown; output?: unknown } }
  const vendor = typeof props.vendor === 'string' ? props.vendor : 'unknown'
  let produced: unknown
  try {
    const converter = props.jsonSchema?.[mode]
    if (typeof converter === 'function') {
      // Standard JSON Schema (zod 4.2+, arktype, ...)
      try {
        produced = converter({ target: 'draft-2020-12' })
      } catch {
        produced = converter({ target: 'draft-07' })
      }
    } else if (vendor === 'valibot') {
      const valibot = loadOptional('@valibot/to-json-schema', what) as { toJsonSchema: (s: unknown, o: object) => unknown }
      produced = valibot.toJsonSchema(schema, { target: 'draft-2020-12', typeMode: mode, errorMode: 'throw' })
    } else if (typeof (schema as { toJSONSchema?: unknown }).toJSONSchema === 'function') {
      // zod 4 before Standard JSON Schema: the schema's own method
      produced = (schema as unknown as { toJSONSchema: (o: object) => unknown }).toJSONSchema({ io: mode })
    } else if (vendor === 'zod' && (schema as { _zod?: { version?: { major?: unknown } } })._zod?.version?.major === 4) {
      // zod 4 mini: zod's own converter, loaded from the zod installed beside toolwire
      const core = loadOptional('zod/v4/core', what) as { toJSONSchema: (s: unknown, o: object) => unknown }
      produced = core.toJSONSchema(schema, { io: mode })
    } else if (typeof (schema as { toJsonSchema?: unknown }).toJsonSchema === 'function') {
      // arktype
      produced = (schema as unknown as { toJsonSchema: () => unknown }).toJsonSchema()
    } else {
      const hint = vendor === 'zod' ? ' (zod 3 has none: use zod 4)' : ''
      throw new SchemaError(
        `${what} is a ${vendor} Standard Schema, but no JSON Schema can be produced from it${hint}: its library offers no converter toolwire knows (Standard JSON Schema, zod 4, @valibot/to-json-schema, arktype)`,
      )
    }
  } catch (err) {
    if (err instanceof SchemaError) throw err
    throw new SchemaError(`${what}: no JSON Schema can be produced from this ${vendor} schema: ${(err as Error)?.message ?? String(err)}`, { cause: err })
  }
  let json: unknown
  let text: string
  try {
    text = JSON.stringify(produced) ?? 'null'
    json = JSON.parse(text)
  } catch (err) {
    throw new SchemaError(`${what}: the JSON Schema its library produced is not JSON`, { cause: err })
  }
  // advertised to models and over MCP as UTF-8, as a JSON Schema given as such is checked
  refuseLoneSurrogates(json, what, text)
  if (typeof json !== 'boolean' && (typeof json !== 'object' || json === null || Array.isArray(json))) {
    throw new SchemaError(`${what}: its library produced no JSON Schema`)
  }
  return deepFreeze(json) as JsonSchema
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    for (const v of Object.values(value)) deepFreeze(v)
    Object.freeze(value)
  }
  return value
}

function loadOptional(name: string, what: string): unknown {
  try {
    return require(name)
  } catch (err) {
    throw new SchemaError(`${what}: install ${name} so toolwire can advertise this schema as JSON Schema`, { cause: err })
  }
}
