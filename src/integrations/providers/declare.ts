/**
 * Declaration helpers: toolwire's tools (`tm.manifest()`) as each provider's tool
 * definitions. Gemini accepts only a subset of JSON Schema, so its schemas are converted.
 */
import type { ToolManager } from '../../runtime/manager.js'
import type { JsonSchema, ToolManifestEntry } from '../../runtime/tool.js'
import { StrictSchemaError, strictForm } from './strict.js'
import type { JsonSchemaObject } from '../../core/schema-types.js'
import { resolveLocalRef } from '../../core/json-pointer.js'

/** The part of a `ToolManager` a declaration helper uses. */
export type ToolDeclarer = Pick<ToolManager, 'manifest'>

export type { JsonSchemaObject }

/** A Chat Completions function tool (the SDK's `ChatCompletionFunctionTool`). */
export interface OpenAIChatTool {
  readonly type: 'function'
  readonly function: { readonly name: string; readonly description?: string; readonly parameters: JsonSchemaObject; readonly strict?: boolean }
}

/** A Responses API function tool (the SDK's `FunctionTool`). */
export interface OpenAIResponsesTool {
  readonly type: 'function'
  readonly name: string
  readonly description?: string
  readonly parameters: JsonSchemaObject
  readonly strict: boolean
}

/** An Anthropic client tool (the SDK's `Tool`). */
export interface AnthropicTool {
  readonly name: string
  readonly description?: string
  readonly input_schema: { type: 'object'; [key: string]: unknown }
}

/** A Gemini function declaration (the SDK's `FunctionDeclaration`), its schema in `parametersJsonSchema`. */
export interface GeminiFunctionDeclaration {
  readonly name: string
  readonly description?: string
  readonly parametersJsonSchema: JsonSchemaObject
}

/** A Gemini tool (the SDK's `Tool`) holding the function declarations. */
export interface GeminiTool {
  readonly functionDeclarations: GeminiFunctionDeclaration[]
}

/** The tool's input schema as an object schema (providers want `type: "object"` at the root); `$schema` left out. @internal */
export function objectSchema(schema: JsonSchema): JsonSchemaObject {
  if (typeof schema === 'boolean') return { type: 'object' }
  const { $schema: _drop, ...rest } = schema as JsonSchemaObject
  return rest.type === undefined ? { type: 'object', ...rest } : rest
}

/** Options of a declaration helper. */
export interface DeclareOptions {
  /** Declare only these tools (by name, in the manager's order); default: every registered tool. */
  readonly only?: readonly string[]
  /**
   * OpenAI helpers only: declare the tools in strict mode (`strict: true`), each schema in the
   * form strict mode accepts (`toOpenAIStrictSchema`: optional properties become nullable).
   * Run the calls with the runner's `strict: true` so the `null`s go back to absent. Throws a
   * `StrictSchemaError` naming the tool when a schema has no strict form.
   */
  readonly strict?: boolean
}

function entries(tm: ToolDeclarer, options: DeclareOptions | undefined): readonly ToolManifestEntry[] {
  const all = tm.manifest()
  const only = options?.only
  if (only === undefined) return all
  const wanted = new Set(only)
  return all.filter((e) => wanted.has(e.name))
}

function described(entry: ToolManifestEntry): { readonly description?: string } {
  return entry.description === undefined ? {} : { description: entry.description }
}

/** The tool's schema in strict form; a schema without one throws, naming the tool. @internal */
export function strictParameters(entry: ToolManifestEntry): JsonSchemaObject {
  try {
    return strictForm(entry.inputSchema).schema
  } catch (error) {
    if (error instanceof StrictSchemaError) throw new StrictSchemaError(`toolwire: tool ${JSON.stringify(entry.name)} cannot be declared strict: ${error.message}`)
    throw error
  }
}

/** The tools as Chat Completions `tools` (with `strict: true`, in strict mode). */
export function openAIChatTools(tm: ToolDeclarer, options?: DeclareOptions): OpenAIChatTool[] {
  const strict = options?.strict === true
  return entries(tm, options).map((e) => ({
    type: 'function',
    function: strict ? { name: e.name, ...described(e), parameters: strictParameters(e), strict: true } : { name: e.name, ...described(e), parameters: objectSchema(e.inputSchema) },
  }))
}

/** The tools as Responses API `tools`: `strict: false` (toolwire validates every call), or with `strict: true` in strict mode. */
export function openAIResponsesTools(tm: ToolDeclarer, options?: DeclareOptions): OpenAIResponsesTool[] {
  const strict = options?.strict === true
  return entries(tm, options).map((e) => ({ type: 'function', name: e.name, ...described(e), parameters: strict ? strictParameters(e) : objectSchema(e.inputSchema), strict }))
}

/** The tools as Anthropic `tools`. */
export function anthropicTools(tm: ToolDeclarer, options?: DeclareOptions): AnthropicTool[] {
  return entries(tm, options).map((e) => ({ name: e.name, ...described(e), input_schema: objectSchema(e.inputSchema) as AnthropicTool['input_schema'] }))
}

/**
 * The tools as Gemini `tools` (one tool holding every function declaration), each schema
 * converted to the subset Gemini accepts (`toGeminiSchema`).
 */
export function geminiTools(tm: ToolDeclarer, options?: DeclareOptions): GeminiTool[] {
  const functionDeclarations = entries(tm, options).map((e) => ({ name: e.name, ...described(e), parametersJsonSchema: toGeminiSchema(e.inputSchema) }))
  return [{ functionDeclarations }]
}

/** Keywords Gemini reads in a function's JSON Schema; every other keyword is left out. */
const GEMINI_KEYWORDS = new Set([
  'type', 'title', 'description', 'enum', 'format', 'nullable', 'default',
  'minimum', 'maximum', 'minLength', 'maxLength', 'pattern',
  'items', 'prefixItems', 'minItems', 'maxItems',
  'properties', 'required', 'additionalProperties', 'minProperties', 'maxProperties', 'propertyOrdering',
  'anyOf',
])

/** How many `$ref`s deep a recursive schema is inlined before the rest is cut. */
const MAX_REF_DEPTH = 8

/**
 * How many schema nodes `toGeminiSchema` converts before it stops inlining `$ref`s: the
 * output of a schema with many recursive fields (or definitions referring to each other
 * many ways) stays about this size instead of growing exponentially.
 */
const MAX_INLINED_NODES = 2_000

/** The description of the permissive leaf a `$ref` becomes where `toGeminiSchema` stops inlining. */
export const GEMINI_CUT_DESCRIPTION = 'Any value of the schema referred to here (too deep or too large to spell out; checked when the tool is called).'

/**
 * A JSON Schema converted to the subset Gemini accepts, for its `parametersJsonSchema`:
 * local `$ref`s inlined (at most 8 levels deep, and only while the output has fewer than
 * 2,000 nodes; past either, a `$ref` and what is left of an inlined one become the permissive
 * leaf `{ description: GEMINI_CUT_DESCRIPTION }`), `oneOf` as `anyOf`, an `allOf` of object
 * schemas merged, `const` as a one-value `enum`, `exclusiveMinimum`/`exclusiveMaximum` as
 * `minimum`/`maximum`, a type list with `"null"` as `nullable`, and keywords Gemini does not
 * read (`not`, `if`, `patternProperties`, `uniqueItems`, `$defs`, ...) left out. The result only
 * ever loosens what the model is told: toolwire still validates every call against the tool's
 * own schema.
 */
export function toGeminiSchema(schema: JsonSchema): JsonSchemaObject {
  const root = typeof schema === 'boolean' ? {} : (schema as JsonSchemaObject)
  const converted = convert(root, { root, nodes: 0 }, 0, 0)
  return converted.type === undefined && converted.anyOf === undefined ? { type: 'object', ...converted } : converted
}

/** One conversion's root (for `$ref`s) and how many nodes it has converted. */
interface Conversion {
  readonly root: JsonSchemaObject
  nodes: number
}

const cut = (): JsonSchemaObject => ({ description: GEMINI_CUT_DESCRIPTION })

function convert(node: unknown, c: Conversion, refs: number, depth: number): JsonSchemaObject {
  if (typeof node !== 'object' || node === null || Array.isArray(node) || depth > 64) return {}
  // the tool's own schema is converted whole; what `$ref`s inline stops at the node budget
  if (++c.nodes > MAX_INLINED_NODES && refs > 0) return cut()
  const s = node as JsonSchemaObject
  if (typeof s.$ref !== 'string') return pick(s, c, refs, depth)
  // a local reference inlined (its sibling keywords apply too); one not local is left open, one too deep or past the budget cut
  const { $ref: ref, ...siblings } = s
  const target = refs >= MAX_REF_DEPTH || c.nodes > MAX_INLINED_NODES ? cut() : convert(resolveLocalRef(c.root, ref as string), c, refs + 1, depth + 1)
  return { ...target, ...pick(siblings, c, refs, depth) }
}

function pick(s: JsonSchemaObject, c: Conversion, refs: number, depth: number): JsonSchemaObject {
  const sub = (v: unknown): JsonSchemaObject => convert(v, c, refs, depth + 1)
  const out: JsonSchemaObject = {}
  for (const [key, value] of Object.entries(s)) {
    if (key === 'oneOf' || key === 'anyOf') {
      if (Array.isArray(value)) out.anyOf = value.map(sub)
    } else if (key === 'const') {
      out.enum = [value]
    } else if (key === 'exclusiveMinimum' && typeof value === 'number') {
      out.minimum = value
    } else if (key === 'exclusiveMaximum' && typeof value === 'number') {
      out.maximum = value
    } else if (key === 'type' && Array.isArray(value)) {
      const types = value.filter((t) => t !== 'null')
      if (types.length < value.length) out.nullable = true
      if (types.length === 1) out.type = types[0]
      else if (types.length > 1) out.anyOf = types.map((type) => ({ type }))
    } else if (key === 'properties' && typeof value === 'object' && value !== null) {
      out.properties = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, sub(v)]))
    } else if (key === 'items' || key === 'additionalProperties') {
      if (typeof value === 'boolean') out[key] = value
      else if (Array.isArray(value)) out.prefixItems = value.map(sub) // draft-07 tuple
      else if (typeof value === 'object' && value !== null) out[key] = sub(value)
    } else if (key === 'prefixItems' && Array.isArray(value)) {
      out.prefixItems = value.map(sub)
    } else if (GEMINI_KEYWORDS.has(key) && key !== 'prefixItems') {
      out[key] = value
    }
  }
  if (!Array.isArray(s.allOf)) return out
  let all: JsonSchemaObject = out
  for (const part of s.allOf) all = merge(all, sub(part))
  return all
}

/** Two converted schemas as one (an `allOf` of objects): properties and `required` joined, the rest first wins. */
function merge(a: JsonSchemaObject, b: JsonSchemaObject): JsonSchemaObject {
  const out: JsonSchemaObject = { ...b, ...a }
  if (a.properties !== undefined || b.properties !== undefined) {
    out.properties = { ...(b.properties as object | undefined), ...(a.properties as object | undefined) }
  }
  if (Array.isArray(a.required) || Array.isArray(b.required)) {
    out.required = [...new Set([...((a.required as unknown[]) ?? []), ...((b.required as unknown[]) ?? [])])]
  }
  return out
}
