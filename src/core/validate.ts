/**
 * JSON Schema validation: compiled once per tool at registration, with ajv (draft
 * 2020-12 by default, draft-07 when `$schema` says so). Schemas are never fetched:
 * a `$ref` to a resource that was not given is a registration error.
 *
 * Schemas and inputs may be hostile (an MCP server's tools come with its schemas):
 * - a schema nesting deeper than {@link MAX_DEPTH} levels, or whose evaluation cannot end
 *   (references that loop without descending into the input), is a SchemaError;
 * - an input nesting deeper than {@link MAX_DEPTH} levels is one issue, checked before
 *   any validator descends into it;
 * - schemas with `pattern` / `patternProperties` run on the core's linear-time regex
 *   engine; a pattern it cannot run (lookaround, backreferences) is a SchemaError;
 * - issue messages say what is wrong, never what the value was; an object key in an issue's
 *   path is clipped to {@link MAX_PATH_TOKEN} characters;
 * - at most {@link MAX_ISSUES} issues are listed, then one that counts the rest (on the
 *   core's route counting stops after {@link MAX_COUNTED} more, and says "at least"); on
 *   both routes every issue is collected only for an input of at most
 *   {@link MAX_LISTED_VALUES} values (fewer for a big schema), else checking stops at the
 *   first issue and says there may be more ({@link STOPPED_AT_FIRST});
 * - a validator never throws.
 */
import { createRequire } from 'node:module'
import type { Ajv as AjvCore, ErrorObject, ValidateFunction } from 'ajv'
import { BindingSchema } from './native.js'
import { holdsMoreValuesText } from './texts.js'

const require = createRequire(import.meta.url)
type AjvClass = new (options: object) => AjvCore
/** ajv loads when the first schema compiles, not when toolwire is imported (it costs ~100 ms). */
const ajvClass = (draft: '7' | '2020'): AjvClass =>
  (require(draft === '7' ? 'ajv' : 'ajv/dist/2020') as { default: AjvClass }).default
const addFormats = (ajv: AjvCore): void => (require('ajv-formats') as { default: (ajv: AjvCore) => void }).default(ajv)

/** One validation failure: a JSON Pointer into the input and a message. */
export interface Issue {
  readonly path: string
  readonly message: string
}

/** A compiled schema check. */
export type Validator = ((value: unknown) => readonly Issue[] | undefined) & {
  /**
   * The same check of a value `JSON.parse` made from a text of `textLength` characters: a
   * text shorter than `2 * MAX_DEPTH` holds fewer values and nests less deeply than the
   * limits allow, so the input's shape is not walked first (only when it fails is it
   * measured, for the issue list). Absent on validators without the shape walk.
   */
  readonly parsed?: (value: unknown, textLength: number) => readonly Issue[] | undefined
}

/** Options of the schema compiler. */
export interface SchemaOptions {
  /** Assert `format` (date-time, email, ...). JSON Schema 2020-12 treats it as an annotation by default. */
  readonly formats?: boolean
  /** Schemas that `$ref`s may point at, by URI. Nothing else is ever loaded. */
  readonly schemaResources?: Readonly<Record<string, object | boolean>>
  /**
   * The most values an input may hold (array items and object members, counted along every
   * path, plus one for the input itself) before it is one `invalid` issue, unchecked; a JSON
   * argument text is measured before it is parsed. A positive integer; default
   * {@link MAX_INPUT_VALUES} (100,000). Outputs keep their own limit (1,000,000).
   */
  readonly maxInputValues?: number
}

/** The deepest JSON nesting of a schema, or of an input, that is read (`{}` nests 1 level): the core's `MAX_VALUE_DEPTH`, owned by json.ts. */
export const MAX_DEPTH: number = MAX_VALUE_DEPTH
import { MAX_VALUE_DEPTH } from './json.js'
import { acceptedValues, holdsKeyword, needsCore, PATTERN_KEYWORDS, REF_KEYWORDS } from './schema-route.js'
import { escapePointer, escapesLoneSurrogate, illFormedAt, jsonFormDiffers, lonesAsReplacement, MAX_PATH_TOKEN, measure, surrogateEscapeIn } from './json-form.js'
/** How many issues are listed before one that counts the rest. */
export const MAX_ISSUES = 100
/** How many issues beyond those listed the core's validator counts before it stops ("at least N more"). */
export const MAX_COUNTED = 10_000
/**
 * Every issue is collected only when the input holds at most this many values (counted as
 * {@link shapeProblem} does), or this many times 100 / the schema's values when that is less;
 * a bigger input is checked up to its first issue, so an invalid input cannot make a validator
 * build an error object per value. The same rule on both routes (`toolwire::MAX_LISTED_VALUES`).
 */
export const MAX_LISTED_VALUES = 10_000
/** The summary issue when checking stopped at the first issue. */
export const STOPPED_AT_FIRST = 'checking stopped at the first issue; there may be more'

const DRAFT7 = /^https?:\/\/json-schema\.org\/draft-07\/schema#?$/
const DRAFT2020 = /^https?:\/\/json-schema\.org\/draft\/2020-12\/schema#?$/

/** A registration-time schema problem. */
export class SchemaError extends Error {
  override name = 'SchemaError'
}

/** A JSON Pointer from ajv with every token clipped as {@link escapePointer} does. */
function clipPath(pointer: string): string {
  if (pointer.length <= MAX_PATH_TOKEN) return pointer
  return pointer
    .split('/')
    .map((token, i) => (i === 0 || token.length <= MAX_PATH_TOKEN ? token : escapePointer(token.replace(/~1/g, '/').replace(/~0/g, '~'))))
    .join('/')
}

function toIssue(error: ErrorObject): Issue {
  const params = error.params as Record<string, unknown>
  let path = clipPath(error.instancePath)
  if (error.keyword === 'required' && typeof params.missingProperty === 'string') {
    path += `/${escapePointer(params.missingProperty)}`
  } else if (error.keyword === 'additionalProperties' && typeof params.additionalProperty === 'string') {
    path += `/${escapePointer(params.additionalProperty)}`
  } else if (error.keyword === 'unevaluatedProperties' && typeof params.unevaluatedProperty === 'string') {
    path += `/${escapePointer(params.unevaluatedProperty)}`
  }
  // ajv's own messages for these keywords name only what the schema says; any other
  // keyword gets a message of ours, so no input value is ever quoted
  let message = VALUE_FREE.has(error.keyword) && error.message !== undefined ? error.message : `fails ${error.keyword}`
  if (error.keyword === 'additionalProperties' || error.keyword === 'unevaluatedProperties') message = 'is not allowed'
  else if (error.keyword === 'required') message = 'is required'
  else if (error.keyword === 'propertyNames') message = 'has a property name that is not valid'
  return Object.freeze({ path, message })
}

const VALUE_FREE = new Set([
  'type', 'enum', 'const', 'pattern', 'format', 'minLength', 'maxLength', 'minimum', 'maximum',
  'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf', 'minItems', 'maxItems', 'uniqueItems',
  'minProperties', 'maxProperties', 'contains', 'minContains', 'maxContains', 'items',
  'additionalItems', 'unevaluatedItems', 'prefixItems', 'anyOf', 'oneOf', 'allOf', 'not', 'if',
  'dependencies', 'dependentRequired', 'false schema', 'formatMinimum', 'formatMaximum',
  'formatExclusiveMinimum', 'formatExclusiveMaximum',
])

/**
 * The most values an input may hold (counted along every path) before it is refused unchecked,
 * unless the manager's `maxInputValues` says otherwise. A model's tool call is at most about
 * 128,000 tokens: it cannot hold more. Checking an input this size keeps the event loop
 * blocked well under 100 ms.
 */
export const MAX_INPUT_VALUES = 100_000

/** `maxInputValues` as given, or a TypeError: a positive safe integer. */
export function inputValuesLimit(given: unknown): number {
  if (given === undefined) return MAX_INPUT_VALUES
  if (typeof given !== 'number' || !Number.isSafeInteger(given) || given < 1) {
    throw new TypeError('toolwire: maxInputValues must be a positive integer')
  }
  return given
}

/** The one issue of an input holding more than `limit` values. */
export function tooLargeIssues(limit: number): readonly Issue[] {
  return limit === MAX_INPUT_VALUES ? TOO_LARGE : Object.freeze([Object.freeze({ path: '', message: holdsMoreValuesText(limit) })])
}
/** The most values a schema may hold (counted along every path). */
export const MAX_SCHEMA_VALUES = 100_000

const TOO_DEEP: readonly Issue[] = Object.freeze([
  Object.freeze({ path: '', message: `nests deeper than ${MAX_DEPTH} levels` }),
])
const TOO_LARGE: readonly Issue[] = Object.freeze([Object.freeze({ path: '', message: holdsMoreValuesText(MAX_INPUT_VALUES) })])
const NOT_JSON: readonly Issue[] = Object.freeze([
  Object.freeze({ path: '', message: 'is not a JSON value that can be checked' }),
])

/** The first {@link MAX_ISSUES} issues, then one that says how many more there were. */
function capped<T>(items: readonly T[], toIssue: (item: T) => Issue): readonly Issue[] {
  const issues = items.slice(0, MAX_ISSUES).map(toIssue)
  if (items.length > MAX_ISSUES) {
    issues.push(Object.freeze({ path: '', message: `${items.length - MAX_ISSUES} more issues not listed` }))
  }
  return Object.freeze(issues)
}

/** The issues of an early-exit validation, then one that says checking stopped there. */
function stoppedAtFirst(errors: readonly ErrorObject[]): readonly Issue[] {
  return Object.freeze([...errors.slice(0, MAX_ISSUES).map(toIssue), Object.freeze({ path: '', message: STOPPED_AT_FIRST })])
}

/**
 * A compiled check, given the input and how many values it holds. `bound`: every value it
 * accepts holds at most this many values and nests one level (see `acceptedValues`).
 */
type Check = ((value: unknown, values: number) => readonly Issue[] | undefined) & { readonly bound?: number }

/** A validator that checks the input's depth and size (at most `limit` values) first and never throws. */
function guarded(check: Check, limit: number): Validator {
  const tooLarge = tooLargeIssues(limit)
  // a schema that bounds what it accepts within the limits: a value it accepts needs no count
  // first (only a failing one is measured, and checked again, as `parsed` below does)
  const bounded = check.bound !== undefined && check.bound <= limit
  const full = (value: unknown): readonly Issue[] | undefined => {
    if (bounded) {
      try {
        if (check(value, Infinity) === undefined) return undefined
      } catch {
        // measured and checked below
      }
    }
    try {
      const values = measure(value, MAX_DEPTH, limit)
      if (typeof values !== 'number') return values === 'deep' ? TOO_DEEP : tooLarge
      return check(value, values)
    } catch {
      // a getter or Proxy in the input threw, or it holds what JSON cannot carry
      return NOT_JSON
    }
  }
  // a text of L characters holds at most (L + 1) / 2 values and nests at most L / 2 deep: a
  // short one is within the limits, and a valid value needs no count (only a failing one is
  // measured, and checked again, so that its issues are exactly those of `full`)
  const short = 2 * Math.min(MAX_DEPTH, limit)
  const parsed = (value: unknown, textLength: number): readonly Issue[] | undefined => {
    if (textLength < short) {
      try {
        if (check(value, Infinity) === undefined) return undefined
      } catch {
        // `full` says what is wrong
      }
    }
    return full(value)
  }
  return Object.assign(full, { parsed })
}

/**
 * The schema as JSON text; a SchemaError when it has no JSON form (a BigInt, a throwing getter)
 * or holds text that is not well-formed Unicode (a lone surrogate: UTF-8, which the core reads,
 * cannot carry it).
 */
function schemaText(schema: object, what: string): string {
  let text: string
  try {
    text = JSON.stringify(schema)
  } catch (err) {
    throw new SchemaError(`${what} is not a JSON value`, { cause: err })
  }
  refuseLoneSurrogates(schema, what, text)
  return text
}

/**
 * Throws a SchemaError naming where `schema` holds a key or a string that is not well-formed
 * Unicode (a lone surrogate), given its JSON text; a schema converted from a Standard Schema is
 * checked with it too.
 */
export function refuseLoneSurrogates(schema: unknown, what: string, text: string): void {
  if (escapesLoneSurrogate(text)) {
    const at = illFormedAt(schema)
    const where = at === undefined ? '' : at === '' ? ' (the schema itself)' : ` at ${at}`
    throw new SchemaError(`${what} is not usable: it holds text that is not well-formed Unicode (a lone surrogate)${where}`)
  }
}

/** Compiles schemas for one tool manager. */
export class SchemaCompiler {
  /** ajv instances by draft and mode: early exit (`first`) or every error (`all`). */
  private readonly ajvs = new Map<string, AjvCore>()
  private resourcesJson: string | undefined
  private resourcePatterns: boolean | undefined
  /** The most values an input may hold (`maxInputValues`). */
  readonly maxInputValues: number

  /** @throws TypeError when `maxInputValues` is not a positive integer. */
  constructor(private readonly options: SchemaOptions = {}) {
    this.maxInputValues = inputValuesLimit(options.maxInputValues)
  }

  private instance(draft: '2020' | '7', mode: 'first' | 'all'): AjvCore {
    const existing = this.ajvs.get(draft + mode)
    if (existing) return existing
    const Ctor = ajvClass(draft)
    const ajv = new Ctor({
      allErrors: mode === 'all',
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
    this.ajvs.set(draft + mode, ajv)
    return ajv
  }

  /** `schema` compiled by `ajv`; throws what ajv throws. */
  private static ajvCompile(ajv: AjvCore, schema: object): ValidateFunction {
    const id = (schema as { $id?: unknown }).$id
    if (typeof id === 'string' && ajv.getSchema(id) !== undefined) ajv.removeSchema(id)
    return ajv.compile(schema)
  }

  /**
   * Compiles `schema` into a validator of values holding at most `maxValues` values (default:
   * this compiler's `maxInputValues`).
   * @throws SchemaError for an invalid schema, an unsupported `$schema`, or an unresolvable `$ref`.
   */
  compile(schema: unknown, what: string, maxValues: number = this.maxInputValues): Validator {
    return guarded(this.compileUnguarded(schema, what), maxValues)
  }

  /**
   * The issues of `value` against `schema`, compiled for this one check and then dropped from
   * ajv's cache (a schema seen once, such as a pending request's, would otherwise stay in it).
   * @throws SchemaError as {@link compile} does.
   */
  checkOnce(schema: unknown, what: string, value: unknown): readonly Issue[] | undefined {
    try {
      return this.compile(schema, what)(value)
    } finally {
      if (typeof schema === 'object' && schema !== null) {
        for (const ajv of this.ajvs.values()) {
          try {
            ajv.removeSchema(schema)
          } catch {
            // not in this instance's cache
          }
        }
      }
    }
  }

  /**
   * Whether a schema resource (`schemaResources`) holds a `pattern` or `patternProperties`: ajv
   * would run it on the backtracking RegExp engine when a schema refers to it.
   */
  private resourcesHoldPatterns(): boolean {
    this.resourcePatterns ??= Object.values(this.options.schemaResources ?? {}).some((resource) => holdsKeyword(resource, PATTERN_KEYWORDS))
    return this.resourcePatterns
  }

  private resources(): string {
    this.resourcesJson ??= schemaText(this.options.schemaResources ?? {}, 'schemaResources')
    return this.resourcesJson
  }

  private compileUnguarded(schema: unknown, what: string): Check {
    if (typeof schema === 'boolean') {
      const none = Object.freeze([Object.freeze({ path: '', message: 'no value is allowed (schema is false)' })])
      return schema ? () => undefined : () => none
    }
    if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) {
      throw new SchemaError(`${what} must be a JSON Schema object or boolean`)
    }
    const schemaValues = measure(schema, MAX_DEPTH, MAX_SCHEMA_VALUES)
    const problem = typeof schemaValues === 'number' ? undefined : schemaValues
    if (problem === 'deep') throw new SchemaError(`${what} is not usable: it nests deeper than ${MAX_DEPTH} levels`)
    if (problem === 'large') throw new SchemaError(`${what} is not usable: it holds more than ${MAX_SCHEMA_VALUES} values`)
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
    // a schema that refers to a resource the core must check (a `pattern` there) goes to the core too
    if (needsCore(schema, draft === '7') || (this.resourcesHoldPatterns() && holdsKeyword(schema, REF_KEYWORDS))) return this.compileInCore(schema, what)
    // ajv would recurse without end on a schema whose references loop in place: the core checks the shape
    const shape = BindingSchema.check(schemaText(schema, what), this.resources())
    if (shape !== null) throw new SchemaError(`${what} is not usable: ${shape.replace(/^the schema (is not usable: )?/, '')}`)
    let first: ValidateFunction
    try {
      first = SchemaCompiler.ajvCompile(this.instance(draft, 'first'), schema)
    } catch {
      // ajv cannot read this schema (e.g. an empty enum, a relative $id): the core's validator can
      return this.compileInCore(schema, what)
    }
    // every error only where ajv's error objects stay few: a small input, scaled down for a big schema
    const listed = Math.floor((MAX_LISTED_VALUES * 100) / Math.max(100, typeof schemaValues === 'number' ? schemaValues : 0))
    let all: ValidateFunction | undefined
    let core: Check | undefined
    const check: Check = (value, values) => {
      try {
        if (first(value)) return undefined
        if (values > listed) return stoppedAtFirst(first.errors ?? [])
        const firstErrors = first.errors ?? []
        all ??= SchemaCompiler.ajvCompile(this.instance(draft, 'all'), schema)
        return capped(all(value) ? firstErrors : (all.errors ?? []), toIssue)
      } catch {
        // ajv threw on this value: the core validates it (compiled once, on first need)
        core ??= this.compileInCore(schema, what)
        return core(value, values)
      }
    }
    const bound = acceptedValues(schema)
    return bound === undefined ? check : Object.assign(check, { bound })
  }

  /** Compiles with the core's validator (full 2020-12 dynamic scope and annotation support). */
  private compileInCore(schema: object, what: string): Check {
    const text = schemaText(schema, what)
    let compiled: InstanceType<typeof BindingSchema>
    try {
      compiled = BindingSchema.compile(text, this.resources(), this.options.formats === true)
    } catch (err) {
      const message = (err as Error).message
      if (message.includes('linear-time regex engine')) {
        const own = surrogateEscapeIn(schema)
        const escaped = own ?? surrogateEscapeIn(this.options.schemaResources ?? {})
        if (escaped !== undefined) {
          throw new SchemaError(
            `${own === undefined ? 'schemaResources' : what} is not usable: the pattern at ${escaped.at} writes UTF-16 surrogate escapes (${escaped.escape}), which the core's regex engine cannot read (it reads Unicode code points): write the character itself or \\u{...}`,
            { cause: err },
          )
        }
      }
      if (message.startsWith('the schema ') || message.includes('linear-time regex engine')) {
        throw new SchemaError(`${what} is not usable: ${message.replace(/^the schema (is not usable: )?/, '')}`, { cause: err })
      }
      const remote = /resolve|retriev|unknown scheme|reference/i.test(message)
      throw new SchemaError(
        remote
          ? `${what}: ${message}. Schemas are never fetched over the network; pass the referenced schema in the manager's schemaResources`
          : `${what} is not a valid JSON Schema: ${message}`,
        { cause: err },
      )
    }
    return (value) => {
      // the core checks the value's JSON form: one that is not what the tool would get is not checked
      const differs = jsonFormDiffers(value)
      if (differs !== undefined) return Object.freeze([Object.freeze({ path: differs, message: NOT_JSON[0]!.message })])
      const text = JSON.stringify(value) ?? 'null'
      // UTF-8 cannot carry a lone surrogate: the core checks U+FFFD in its place (the tool gets the string as given)
      const issues = compiled.validateJson(lonesAsReplacement(text))
      // the core lists at most MAX_ISSUES, then one that counts the rest
      return issues === null ? undefined : Object.freeze(issues.map((i) => Object.freeze({ path: i.path, message: i.message })))
    }
  }
}
