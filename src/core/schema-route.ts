/**
 * What a JSON Schema says before any input is checked: which validator must check it (ajv, or
 * the core's, for keywords ajv evaluates incompletely and for regex patterns, which run only on
 * the core's linear-time engine), and how many values at most a value it accepts holds.
 */

const CORE_KEYWORDS = new Set([
  '$dynamicRef',
  '$dynamicAnchor',
  '$recursiveRef',
  '$recursiveAnchor',
  'unevaluatedProperties',
  'unevaluatedItems',
  '$vocabulary',
  '__proto__',
  // untrusted patterns run on the core's linear-time regex engine, never on backtracking RegExp
  'pattern',
  'patternProperties',
])

/** The keywords of a regex pattern. */
export const PATTERN_KEYWORDS: ReadonlySet<string> = new Set(['pattern', 'patternProperties'])

/** The keywords that refer to another schema. */
export const REF_KEYWORDS: ReadonlySet<string> = new Set(['$ref', '$dynamicRef', '$recursiveRef'])

/**
 * Whether a schema needs the core's validator: keywords ajv evaluates incompletely
 * (dynamic scope, unevaluated*), a `__proto__` property name, (draft-07) a `$ref`
 * with sibling keywords, which draft-07 ignores and ajv does not, or a regex pattern
 * (ajv would run it on the backtracking RegExp engine).
 */
export function needsCore(schema: unknown, draft7: boolean): boolean {
  if (typeof schema !== 'object' || schema === null) return false
  if (Array.isArray(schema)) return schema.some((s) => needsCore(s, draft7))
  const keys = Object.keys(schema)
  if (draft7 && keys.includes('$ref') && keys.some((k) => k !== '$ref' && k !== '$schema' && k !== '$comment')) return true
  for (const key of keys) {
    if (CORE_KEYWORDS.has(key) || needsCore((schema as Record<string, unknown>)[key], draft7)) return true
  }
  return false
}

/**
 * Whether `schema` holds one of `keywords` as a key anywhere (a property of that name too: the
 * answer errs towards yes).
 *
 * ```ts
 * holdsKeyword({ properties: { a: { $ref: 'urn:x' } } }, REF_KEYWORDS) // true
 * ```
 */
export function holdsKeyword(schema: unknown, keywords: ReadonlySet<string>): boolean {
  if (typeof schema !== 'object' || schema === null) return false
  if (Array.isArray(schema)) return schema.some((s) => holdsKeyword(s, keywords))
  for (const [key, value] of Object.entries(schema)) {
    if (keywords.has(key) || holdsKeyword(value, keywords)) return true
  }
  return false
}

const SCALAR_TYPES = new Set(['string', 'number', 'integer', 'boolean', 'null'])

/**
 * How many values at most a value that `schema` accepts holds, when the schema bounds it: an
 * object (`type: "object"`) with `additionalProperties: false`, no `patternProperties`, and
 * a scalar `type` for every member it lists holds only those members, each a scalar. Every
 * other keyword of a schema narrows what it accepts, never widens it. `undefined` otherwise.
 *
 * ```ts
 * acceptedValues({ type: 'object', properties: { a: { type: 'string' } }, additionalProperties: false }) // 2
 * acceptedValues({ type: 'object', properties: { a: { type: 'object' } }, additionalProperties: false }) // undefined
 * ```
 */
export function acceptedValues(schema: unknown): number | undefined {
  if (typeof schema !== 'object' || schema === null) return undefined
  const s = schema as { type?: unknown; additionalProperties?: unknown; patternProperties?: unknown; properties?: unknown }
  if (s.type !== 'object' || s.additionalProperties !== false || s.patternProperties !== undefined) return undefined
  const properties = s.properties ?? {}
  if (typeof properties !== 'object' || properties === null || Array.isArray(properties)) return undefined
  const members = Object.values(properties)
  for (const member of members) {
    const type: unknown = typeof member === 'object' && member !== null ? (member as { type?: unknown }).type : undefined
    const types = Array.isArray(type) ? type : [type]
    if (types.length === 0 || !types.every((t) => typeof t === 'string' && SCALAR_TYPES.has(t))) return undefined
  }
  return 1 + members.length
}
