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
import { createRequire } from 'node:module'
import { MAX_DEPTH, MAX_ISSUES, SchemaError, shapeProblem, tooLargeIssues, type Issue, type SchemaCompiler, type Validator } from './validate.js'
import { MAX_VALUES } from './json.js'
import type { JsonSchema, StandardSchemaV1 } from './schema-types.js'
import { isThenable, when } from './thenable.js'

const require = createRequire(import.meta.url)

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

/** Whether `value` is a Standard Schema (`~standard` with version 1 and a `validate` function). */
export function isStandardSchema(value: unknown): value is StandardSchemaV1 {
  if ((typeof value !== 'object' && typeof value !== 'function') || value === null) return false
  try {
    const props = (value as { '~standard'?: unknown })['~standard']
    return typeof props === 'object' && props !== null && (props as { version?: unknown }).version === 1 && typeof (props as { validate?: unknown }).validate === 'function'
  } catch {
    return false
  }
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

// ---- JSON Schema defaults ------------------------------------------------------------

function own(value: object, key: string): boolean {
  return Object.hasOwn(value, key)
}

function hasDefaults(schema: unknown, depth = 0): boolean {
  if (typeof schema !== 'object' || schema === null || depth > MAX_DEPTH) return false
  if (Array.isArray(schema)) return schema.some((s) => hasDefaults(s, depth + 1))
  const properties = (schema as { properties?: unknown }).properties
  if (typeof properties === 'object' && properties !== null) {
    for (const sub of Object.values(properties)) if (typeof sub === 'object' && sub !== null && own(sub, 'default')) return true
  }
  return Object.values(schema).some((s) => hasDefaults(s, depth + 1))
}

function resolveLocal(root: unknown, ref: string): unknown {
  if (ref === '#') return root
  if (!ref.startsWith('#/')) return undefined
  let node: unknown = root
  for (const raw of ref.slice(2).split('/')) {
    let key: string
    try {
      key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~')
    } catch {
      return undefined
    }
    if (typeof node !== 'object' || node === null || !own(node, key)) return undefined
    node = (node as Record<string, unknown>)[key]
  }
  return node
}

/** A copy of a default (a JSON value: the schema is JSON), so a tool changing it changes no other call. */
function copyOf(value: unknown): unknown {
  return typeof value === 'object' && value !== null ? JSON.parse(JSON.stringify(value)) : value
}

/** Sets `target[key]` as an own data property: a key named `__proto__` is a member, never the prototype. */
export function setOwn<T extends object>(target: T, key: string | number, value: unknown): T {
  // `__proto__` as an own data property, never the prototype
  if (key === '__proto__') Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true })
  else (target as Record<string | number, unknown>)[key] = value
  return target
}

/**
 * `value` with the `default` of every property missing from an object filled in, where the
 * property's schema in `properties` has one: through `properties`, `items`, `prefixItems`,
 * `allOf` and local `$ref`s (as ajv's `useDefaults` does; not inside `anyOf`, `oneOf`, `not`,
 * `if`/`then`/`else`, `additionalProperties` or `patternProperties`). Copy on write: `value`
 * is never changed; unchanged parts are shared.
 */
export function applyDefaults(schema: unknown, value: unknown, root: unknown = schema): unknown {
  const budget = { steps: MAX_DEFAULT_STEPS }
  try {
    return fill(schema, value, root, 0, budget)
  } catch (err) {
    if (err === OUT_OF_STEPS) return value // too much work (a schema reaching one subschema many ways): no defaults
    throw err
  }
}

/** How many (subschema, value) visits filling defaults may take for one input. */
const MAX_DEFAULT_STEPS = 1_000_000
const OUT_OF_STEPS = Symbol('out of steps')

function fill(schema: unknown, value: unknown, root: unknown, refs: number, budget: { steps: number }): unknown {
  if (--budget.steps < 0) throw OUT_OF_STEPS
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return value
  const s = schema as Record<string, unknown>
  let out = value
  if (typeof s.$ref === 'string' && refs < 32) out = fill(resolveLocal(root, s.$ref), out, root, refs + 1, budget)
  if (Array.isArray(s.allOf)) for (const part of s.allOf) out = fill(part, out, root, refs + 1, budget)
  if (typeof out !== 'object' || out === null) return out
  if (Array.isArray(out)) {
    const tuple = Array.isArray(s.prefixItems) ? s.prefixItems : Array.isArray(s.items) ? s.items : undefined
    const rest = Array.isArray(s.items) ? undefined : s.prefixItems !== undefined || typeof s.items === 'object' ? s.items : undefined
    let copy: unknown[] | undefined
    for (let i = 0; i < out.length; i++) {
      const sub = tuple !== undefined && i < tuple.length ? tuple[i] : rest
      if (sub === undefined) continue
      const item = (copy ?? out)[i]
      const next = fill(sub, item, root, 0, budget)
      if (next !== item) (copy ??= out.slice())[i] = next
    }
    return copy ?? out
  }
  const properties = s.properties
  if (typeof properties !== 'object' || properties === null) return out
  let copy: Record<string, unknown> | undefined
  for (const [key, sub] of Object.entries(properties)) {
    if (typeof sub !== 'object' || sub === null) continue
    const current = (copy ?? out) as Record<string, unknown>
    if (!own(current, key)) {
      if (own(sub, 'default')) copy = setOwn(copy ?? { ...current }, key, copyOf((sub as { default: unknown }).default))
    } else {
      const item = current[key]
      const next = fill(sub, item, root, 0, budget)
      if (next !== item) copy = setOwn(copy ?? { ...current }, key, next)
    }
  }
  return copy ?? out
}

// ---- Standard Schema -----------------------------------------------------------------

const TOO_DEEP: readonly Issue[] = Object.freeze([Object.freeze({ path: '', message: `nests deeper than ${MAX_DEPTH} levels` })])
const UNCHECKED: readonly Issue[] = Object.freeze([Object.freeze({ path: '', message: 'could not be checked: the schema failed while validating it' })])

/** The most characters of an object key an issue's path quotes. */
const MAX_PATH_TOKEN = 64

function pointerToken(key: unknown): string {
  let token = typeof key === 'symbol' ? (key.description ?? '') : String(key)
  if (token.length > MAX_PATH_TOKEN) token = `${[...token].slice(0, MAX_PATH_TOKEN).join('')}…`
  return token.replace(/~/g, '~0').replace(/\//g, '~1')
}

function segmentKey(segment: unknown): unknown {
  return typeof segment === 'object' && segment !== null ? (segment as { key?: unknown }).key : segment
}

/** The value at `keys` inside `input`, and whether it is there. */
function at(input: unknown, keys: readonly unknown[]): { readonly found: boolean; readonly value: unknown } {
  let node = input
  for (const key of keys) {
    if (typeof node !== 'object' || node === null || (typeof key !== 'string' && typeof key !== 'number') || !Object.hasOwn(node, key)) {
      return { found: false, value: undefined }
    }
    node = (node as Record<string, unknown>)[key]
  }
  return { found: true, value: node }
}

/** The shortest text of a value a message is checked for: one or two characters appear in messages by chance ("expected number"); they hide nothing. */
const MIN_ECHO = 3
/** How many of an input's values a failing validation collects to check its messages against. */
const MAX_ECHO_VALUES = 10_000
/** Of a long string, the first characters are also looked for (a library may quote a value clipped). */
const ECHO_PREFIX = 12

/**
 * The texts of `input` a message must not contain: every string and number inside it (3
 * characters or more; of a long string, also its first 12 characters), up to 10,000 values.
 */
function valueTexts(input: unknown): Set<string> {
  const texts = new Set<string>()
  const stack: unknown[] = [input]
  let seen = 0
  while (stack.length > 0 && seen++ < MAX_ECHO_VALUES) {
    const node = stack.pop()
    if (typeof node === 'string') {
      if (node.length >= MIN_ECHO) texts.add(node)
      if (node.length > ECHO_PREFIX) texts.add(node.slice(0, ECHO_PREFIX))
    } else if (typeof node === 'number' || typeof node === 'bigint') {
      const text = String(node)
      if (text.length >= MIN_ECHO) texts.add(text)
    } else if (typeof node === 'object' && node !== null) {
      try {
        for (const v of Object.values(node)) stack.push(v)
      } catch {
        // a value that cannot be read shows nothing
      }
    }
  }
  return texts
}

/** The JSON form of the object an issue is about (a message may print it whole), `undefined` when it has none or is `{}`/`[]`. */
function jsonOf(value: object): string | undefined {
  try {
    const json = JSON.stringify(value)
    return json !== undefined && json.length > 2 ? json : undefined
  } catch {
    return undefined
  }
}

/** Whether `message` shows any of the input's texts. */
function echoes(message: string, texts: ReadonlySet<string>): boolean {
  for (const text of texts) if (message.includes(text)) return true
  return false
}

/** What the library says it received (valibot's `received`, arktype's `actual`), cut from its message. */
function withoutReceived(message: string, extra: { readonly received?: unknown; readonly actual?: unknown }): string {
  let out = message
  if (typeof extra.received === 'string' && extra.received !== '') {
    out = out.split(` but received ${extra.received}`).join('').split(`, received ${extra.received}`).join('').split(`received ${extra.received}`).join('')
  }
  if (typeof extra.actual === 'string' && extra.actual !== '') out = out.split(` (was ${extra.actual})`).join('')
  return out
}

/**
 * A hint that names what is wrong without any number or text from the input or the schema,
 * by the library's issue code (zod 4, valibot, arktype): the message when the library's own
 * shows the value.
 */
function hintOf(extra: { readonly code?: unknown; readonly type?: unknown; readonly origin?: unknown; readonly kind?: unknown }): string | undefined {
  const origin = extra.origin
  const code = typeof extra.code === 'string' ? extra.code : typeof extra.type === 'string' ? extra.type : undefined
  switch (code) {
    case 'too_small':
      return origin === 'string' ? 'is too short' : origin === 'array' || origin === 'set' ? 'has too few items' : 'is too small'
    case 'too_big':
      return origin === 'string' ? 'is too long' : origin === 'array' || origin === 'set' ? 'has too many items' : 'is too big'
    case 'min_length':
    case 'minLength':
      return 'is too short'
    case 'max_length':
    case 'maxLength':
      return 'is too long'
    case 'min_value':
    case 'min':
    case 'after':
      return 'is too small'
    case 'max_value':
    case 'max':
    case 'before':
      return 'is too big'
    case 'invalid_type':
    case 'domain':
    case 'proto':
      return 'has the wrong type'
    case 'invalid_value':
    case 'picklist':
    case 'enum':
    case 'literal':
    case 'unit':
    case 'union':
      return 'is not one of the allowed values'
    case 'invalid_format':
    case 'regex':
    case 'pattern':
    case 'email':
    case 'url':
    case 'uuid':
      return 'does not have the expected format'
    case 'not_multiple_of':
    case 'multiple_of':
    case 'divisor':
      return 'is not an allowed multiple'
    default:
      if (extra.kind === 'schema') return 'has the wrong type'
      return code === undefined ? undefined : `is not valid (${code})`
  }
}

/**
 * One library issue as toolwire's `{ path, message }`: the path a JSON Pointer (keys clipped
 * to 64 characters); the library's message kept when it shows nothing of the input (valibot's
 * "but received <value>" and arktype's "(was <value>)" cut first); a message that still
 * shows a value of the input becomes a hint naming what is wrong (`is too short`, `has the
 * wrong type`, ...), never with the value.
 */
function toIssues(raw: StandardSchemaV1.Issue, input: unknown, texts: () => ReadonlySet<string>): Issue[] {
  const keys = Array.isArray(raw.path) ? raw.path.map(segmentKey) : []
  const path = keys.map((k) => `/${pointerToken(k)}`).join('')
  const extra = raw as { code?: unknown; keys?: unknown; received?: unknown; actual?: unknown; type?: unknown; kind?: unknown; origin?: unknown }
  // zod's unknown keys: one issue per key, as ajv gives them
  if (extra.code === 'unrecognized_keys' && Array.isArray(extra.keys)) {
    return extra.keys.map((k) => Object.freeze({ path: `${path}/${pointerToken(k)}`, message: 'is not allowed' }))
  }
  const { found, value } = at(input, keys)
  const parentHas = keys.length === 0 || at(input, keys.slice(0, -1)).found
  if (!found && parentHas && keys.length > 0 && (extra.code === 'invalid_type' || extra.code === 'required' || extra.kind === 'schema')) {
    return [Object.freeze({ path, message: 'is required' })]
  }
  // the value the library checked, which a transform may have changed: valibot's `input`, arktype's `data`
  const checked = typeof extra.kind === 'string' ? valueTexts((raw as { input?: unknown }).input) : (raw as { ' arkKind'?: unknown })[' arkKind'] === 'error' ? valueTexts((raw as { data?: unknown }).data) : undefined
  const json = found && typeof value === 'object' && value !== null ? jsonOf(value) : undefined
  const shows = (text: string): boolean => echoes(text, texts()) || (checked !== undefined && echoes(text, checked)) || (json !== undefined && text.includes(json))
  let message = typeof raw.message === 'string' ? withoutReceived(raw.message, extra) : 'is not valid'
  if (shows(message)) {
    const hint = hintOf(extra)
    message = hint !== undefined && !shows(hint) ? hint : 'is not valid'
  }
  return [Object.freeze({ path, message })]
}

function issuesOf(raw: readonly StandardSchemaV1.Issue[], input: unknown): readonly Issue[] {
  const issues: Issue[] = []
  let total = 0
  let collected: Set<string> | undefined
  const texts = (): ReadonlySet<string> => (collected ??= valueTexts(input))
  for (const issue of raw) {
    for (const mapped of toIssues(issue, input, texts)) {
      if (total++ < MAX_ISSUES) issues.push(mapped)
    }
  }
  if (issues.length === 0) issues.push(Object.freeze({ path: '', message: 'is not valid' }))
  if (total > MAX_ISSUES) issues.push(Object.freeze({ path: '', message: `${total - MAX_ISSUES} more issues not listed` }))
  return Object.freeze(issues)
}

/**
 * The validator of a Standard Schema; success records the schema's output value for `input`
 * in `outputs`. An asynchronous validation gives a thenable of the issues: the manager awaits
 * it for an input, and reports an output's issues when it settles (`outputs` undefined).
 */
function standardValidator(schema: StandardSchemaV1, outputs: WeakMap<object, unknown> | undefined, maxValues: number): Validator {
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

type Mode = 'input' | 'output'

/** The JSON Schema a Standard Schema's library gives, or a SchemaError saying why there is none. */
function jsonSchemaOf(schema: StandardSchemaV1, mode: Mode, what: string): JsonSchema {
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
  try {
    json = JSON.parse(JSON.stringify(produced) ?? 'null')
  } catch (err) {
    throw new SchemaError(`${what}: the JSON Schema its library produced is not JSON`, { cause: err })
  }
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
