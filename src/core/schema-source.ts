/**
 * Where a tool's schemas come from: a JSON Schema (compiled by the manager's schema
 * compiler, its `default` values applied to the input) or a Standard Schema (zod 4,
 * valibot, arktype, ...: validated by its own `~standard.validate`, advertised as the JSON
 * Schema its library's converter gives). Anything else is refused at registration, so no
 * call is ever accepted unchecked. Also the tool-name rule every provider accepts.
 *
 * The value a tool's `run` receives is the validated input with defaults applied (JSON
 * Schema) or the Standard Schema's output value; the caller's own object is never changed.
 */
import { MAX_DEPTH, SchemaError, type SchemaCompiler, type Validator } from './validate.js'
import { shapeProblem } from './json-form.js'
import { MAX_VALUES } from './json.js'
import type { JsonSchema, StandardSchemaV1 } from './schema-types.js'
import { isThenable } from './thenable.js'
import { applyDefaults, hasDefaults, setOwn } from './schema-defaults.js'
import { jsonSchemaOf, standardValidator } from './standard-schema.js'

export { applyDefaults, setOwn }

/** The rule for tool names every provider (OpenAI, Anthropic, Gemini) accepts. */
export const TOOL_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/

/**
 * Checks a tool name against {@link TOOL_NAME_PATTERN}.
 * @throws TypeError naming the rule and the opt-out, unless `anyName` is set.
 */
export function checkToolName(name: string, anyName: boolean | undefined): void {
  if (anyName === true || TOOL_NAME_PATTERN.test(name)) return
  const shown = name.length > 80 ? `${name.slice(0, 80)}…` : name
  throw new TypeError(
    `toolwire: tool name ${JSON.stringify(shown)} is not one every provider accepts (letters, digits, "_" and "-", 1 to 64 characters); rename it, or register it with { anyName: true }`,
  )
}

/**
 * Whether `value` is a Standard Schema (`~standard` with version 1 and a `validate` function).
 * What reading it throws is thrown: {@link prepareSchemas} reports such a schema as one that cannot be read.
 */
function isStandardSchema(value: unknown): value is StandardSchemaV1 {
  if ((typeof value !== 'object' && typeof value !== 'function') || value === null) return false
  const props = (value as { '~standard'?: unknown })['~standard']
  return typeof props === 'object' && props !== null && (props as { version?: unknown }).version === 1 && typeof (props as { validate?: unknown }).validate === 'function'
}

// ---- JSON Schema: what is one --------------------------------------------------------

/** Every keyword of JSON Schema drafts 4 to 2020-12 (core, applicators, validation, annotations, formats, content). */
const KEYWORDS = new Set([
  '$schema', '$id', 'id', '$ref', '$anchor', '$dynamicRef', '$dynamicAnchor', '$recursiveRef', '$recursiveAnchor',
  '$defs', 'definitions', '$comment', '$vocabulary',
  'type', 'enum', 'const', 'multipleOf', 'maximum', 'exclusiveMaximum', 'minimum', 'exclusiveMinimum',
  'maxLength', 'minLength', 'pattern', 'maxItems', 'minItems', 'uniqueItems', 'maxContains', 'minContains',
  'maxProperties', 'minProperties', 'required', 'dependentRequired', 'dependencies',
  'allOf', 'anyOf', 'oneOf', 'not', 'if', 'then', 'else', 'dependentSchemas',
  'prefixItems', 'items', 'additionalItems', 'contains', 'properties', 'patternProperties', 'additionalProperties',
  'propertyNames', 'unevaluatedItems', 'unevaluatedProperties',
  'title', 'description', 'default', 'deprecated', 'readOnly', 'writeOnly', 'examples', 'format',
  'contentEncoding', 'contentMediaType', 'contentSchema',
])

function isPlain(value: object): boolean {
  const proto = Object.getPrototypeOf(value)
  return proto === null || proto === Object.prototype || proto === Array.prototype || Object.getPrototypeOf(proto) === null
}

/** What makes `value` not a JSON Schema, or `undefined` when it is one (checked at the root and for every value inside). */
function notJsonSchema(schema: unknown): string | undefined {
  if (typeof schema === 'boolean') return undefined
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return 'is neither a JSON Schema (an object or a boolean) nor a Standard Schema'
  if (!isPlain(schema)) {
    const s = schema as { _def?: unknown; safeParse?: unknown }
    if (s._def !== undefined && typeof s.safeParse === 'function') {
      return 'looks like a zod 3 schema, which is neither a JSON Schema nor a Standard Schema toolwire can advertise: use zod 4 (`import { z } from "zod"` from zod 4, or "zod/v4")'
    }
    return `is an instance of ${(schema as object).constructor?.name ?? 'a class'}, neither a JSON Schema nor a Standard Schema`
  }
  const keys = Object.keys(schema)
  if (keys.length > 0 && !keys.some((k) => KEYWORDS.has(k))) {
    const shown = keys.slice(0, 5).map((k) => JSON.stringify(k.length > 40 ? `${k.slice(0, 40)}…` : k)).join(', ')
    return `has no JSON Schema keyword (only ${shown}${keys.length > 5 ? ', ...' : ''}), so it would check nothing`
  }
  // a schema inside must be JSON too: a Standard Schema, a class instance or a function there would check nothing
  const stack: [unknown, string][] = [[schema, '']]
  let seen = 0
  while (stack.length > 0 && seen++ < 200_000) {
    const [node, at] = stack.pop()!
    if (typeof node === 'function') return `holds a function at ${at || '/'}`
    if (typeof node !== 'object' || node === null) continue
    if (!isPlain(node)) return `holds ${isStandardSchema(node) ? 'a Standard Schema' : 'a class instance'} at ${at || '/'}: a schema is a JSON Schema or a Standard Schema as a whole`
    if (Object.hasOwn(node, '~standard')) return `holds a Standard Schema at ${at || '/'}: a schema is a JSON Schema or a Standard Schema as a whole`
    for (const [k, v] of Object.entries(node)) if (typeof v === 'object' || typeof v === 'function') stack.push([v, `${at}/${k}`])
  }
  return undefined
}

// ---- a tool's schemas ----------------------------------------------------------------

/** What registration makes of a tool's schemas. */
export interface PreparedSchemas<D> {
  /** The definition the manager keeps: the original, or a copy with JSON Schemas and with `run` (and the other input readers) given the validated value. */
  readonly def: D
  readonly validate: Validator
  readonly validateOutput: Validator | undefined
}

/** The input readers of a tool definition that receive the validated value. */
const READERS = ['run', 'summarize', 'previewChanges', 'needsConfirmation'] as const

/**
 * Compiles a tool's schemas: a Standard Schema validated by its own `~standard.validate`
 * and advertised as JSON Schema; a JSON Schema compiled by `compiler`, its defaults applied.
 * @throws SchemaError for a schema that is neither, or that gives no JSON Schema.
 */
export function prepareSchemas<D extends { readonly name: string; readonly inputSchema: unknown; readonly outputSchema?: unknown }>(
  tool: D,
  compiler: Pick<SchemaCompiler, 'compile' | 'maxInputValues'>,
): PreparedSchemas<D> {
  try {
    return prepare(tool, compiler)
  } catch (err) {
    // a getter or a Proxy trap in a schema that throws: the schema cannot be read
    if (err instanceof SchemaError) throw err
    throw new SchemaError(`tool "${String(tool.name)}" has a schema that cannot be read (reading it threw; the error is this one's cause)`, { cause: err })
  }
}

function prepare<D extends { readonly name: string; readonly inputSchema: unknown; readonly outputSchema?: unknown }>(
  tool: D,
  compiler: Pick<SchemaCompiler, 'compile' | 'maxInputValues'>,
): PreparedSchemas<D> {
  const name = tool.name
  const outputs = new WeakMap<object, unknown>()
  const input = tool.inputSchema
  let valueOf: ((input: unknown) => unknown) | undefined
  let inputJson: JsonSchema | undefined
  let validate: Validator
  if (isStandardSchema(input)) {
    inputJson = jsonSchemaOf(input, 'input', `tool "${name}" inputSchema`)
    validate = standardValidator(input, outputs, compiler.maxInputValues)
    valueOf = (value) => {
      if (typeof value === 'object' && value !== null && outputs.has(value)) return outputs.get(value)
      // a primitive input: validated again to get the schema's value
      try {
        const r: unknown = input['~standard'].validate(value)
        if (isThenable(r) || typeof r !== 'object' || r === null || (r as { issues?: unknown }).issues || !('value' in r)) return value
        return (r as StandardSchemaV1.SuccessResult<unknown>).value
      } catch {
        return value
      }
    }
  } else {
    const problem = notJsonSchema(input)
    if (problem !== undefined) throw new SchemaError(`tool "${name}" inputSchema ${problem}`)
    const check = compiler.compile(input, `tool "${name}" inputSchema`)
    if (hasDefaults(input)) {
      // run gets the defaults filled in again (deterministic, and cheaper than remembering the
      // filled copy per input); only an input whose defaults were not applied is remembered
      const asGiven = new WeakSet<object>()
      const fillOf = (value: unknown): unknown => {
        try {
          return shapeProblem(value, MAX_DEPTH, compiler.maxInputValues) === undefined ? applyDefaults(input, value) : value
        } catch {
          return value
        }
      }
      validate = (value) => {
        const filled = fillOf(value)
        if (filled === value) return check(value)
        // the defaults are used when the input with them is valid; else the input is checked as given
        // (a default is an annotation: one that would make the input invalid is not applied)
        if (check(filled) === undefined) return undefined
        const issues = check(value)
        if (issues === undefined && typeof value === 'object' && value !== null) asGiven.add(value)
        return issues
      }
      valueOf = (value) => (typeof value === 'object' && value !== null && asGiven.has(value) ? value : fillOf(value))
    } else {
      validate = check
    }
  }
  const output = tool.outputSchema
  let outputJson: JsonSchema | undefined
  let validateOutput: Validator | undefined
  if (output !== undefined) {
    if (isStandardSchema(output)) {
      outputJson = jsonSchemaOf(output, 'output', `tool "${name}" outputSchema`)
      validateOutput = standardValidator(output, undefined, MAX_VALUES)
    } else {
      const problem = notJsonSchema(output)
      if (problem !== undefined) throw new SchemaError(`tool "${name}" outputSchema ${problem}`)
      validateOutput = compiler.compile(output, `tool "${name}" outputSchema`, MAX_VALUES)
    }
  }
  if (inputJson === undefined && outputJson === undefined && valueOf === undefined) return { def: tool, validate, validateOutput }
  // a copy that keeps the definition's prototype (a tool written as a class keeps its methods)
  const def: Record<string, unknown> = Object.assign(Object.create(Object.getPrototypeOf(tool) as object | null) as object, tool)
  if (inputJson !== undefined) def.inputSchema = inputJson
  if (outputJson !== undefined) def.outputSchema = outputJson
  if (valueOf !== undefined) {
    const map = valueOf
    for (const key of READERS) {
      const fn = def[key]
      if (typeof fn === 'function') def[key] = (value: unknown, ...rest: unknown[]) => (fn as (...a: unknown[]) => unknown).call(tool, map(value), ...rest)
    }
    const resume = def.resume
    if (typeof resume === 'function') {
      def.resume = (answer: unknown, value: unknown, ...rest: unknown[]) => (resume as (...a: unknown[]) => unknown).call(tool, answer, map(value), ...rest)
    }
  }
  return { def: def as unknown as D, validate, validateOutput }
}
