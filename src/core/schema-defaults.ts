/**
 * JSON Schema `default` values applied to a tool's input: {@link applyDefaults} fills in every
 * missing property that has one (copy on write), {@link hasDefaults} tells whether a schema has
 * any, and {@link setOwn} sets a member without ever touching a prototype.
 */
import { resolveLocalRef } from './json-pointer.js'
import { MAX_DEPTH } from './validate.js'

function own(value: object, key: string): boolean {
  return Object.hasOwn(value, key)
}

/** Whether a property's schema anywhere in `schema` has a `default`. */
export function hasDefaults(schema: unknown, depth = 0): boolean {
  if (typeof schema !== 'object' || schema === null || depth > MAX_DEPTH) return false
  if (Array.isArray(schema)) return schema.some((s) => hasDefaults(s, depth + 1))
  const properties = (schema as { properties?: unknown }).properties
  if (typeof properties === 'object' && properties !== null) {
    for (const sub of Object.values(properties)) if (typeof sub === 'object' && sub !== null && own(sub, 'default')) return true
  }
  return Object.values(schema).some((s) => hasDefaults(s, depth + 1))
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
  if (typeof s.$ref === 'string' && refs < 32) out = fill(resolveLocalRef(root, s.$ref), out, root, refs + 1, budget)
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
