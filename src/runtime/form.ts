/**
 * Form fills: a tool whose input is the values to fill into a form. Filling returns
 * `{ changes, skipped }`, redacts sensitive fields and registers an undo that
 * restores the before-values.
 */
import { isDeepStrictEqual } from 'node:util'
import { ok } from '../core/helpers.js'
import type { JsonSchema, ToolContext, ToolDefinition, ToolHints } from './tool.js'
import { toFrozenJson } from '../core/json.js'
import { isSensitive, REDACTED } from '../core/redact.js'
import type { FieldChange, JsonValue } from '../core/types.js'

/** Options of `createFormTool`. */
export interface FormToolOptions {
  readonly name: string
  readonly description?: string
  /** A JSON Schema object (`type: 'object'`, `properties`) of the form's fields. */
  readonly fields: { readonly type?: 'object'; readonly properties: { readonly [field: string]: JsonSchema }; readonly [key: string]: unknown }
  /** Returns the current values. */
  read(): Record<string, JsonValue> | Promise<Record<string, JsonValue>>
  /** Stores new values (the whole form). */
  write(values: Record<string, JsonValue>): void | Promise<void>
  /** Field names to redact besides `password` and `cc-*`. */
  readonly sensitive?: readonly string[]
  readonly hints?: ToolHints
}

/** What a fill returns: the fields it wrote and the fields it left alone. */
export interface FormFillResult {
  readonly changes: readonly FieldChange[]
  readonly skipped: readonly string[]
}

function pointer(field: string): string {
  return '/' + field.replace(/~/g, '~0').replace(/\//g, '~1')
}

/** Makes a form-fill tool. Sensitive fields appear as `'[redacted]'` in changes. */
export function createFormTool(options: FormToolOptions): ToolDefinition<Record<string, JsonValue>> & { readonly sensitive: readonly string[] } {
  const properties = options.fields?.properties
  if (typeof properties !== 'object' || properties === null) throw new TypeError('toolwire: createFormTool needs fields: { properties }')
  const extra = new Set(options.sensitive ?? [])
  const { required: _required, ...rest } = options.fields as { required?: unknown; [key: string]: unknown }
  /** What filling `values` into `before` changes, redacted, and what it leaves alone. */
  const diff = (before: Record<string, JsonValue>, values: Record<string, JsonValue>) => {
    const next: Record<string, JsonValue> = { ...before }
    const changes: FieldChange[] = []
    const skipped: string[] = []
    for (const field of Object.keys(values)) {
      const value = values[field] as JsonValue
      if (!(field in properties) || isDeepStrictEqual(before[field], value)) {
        skipped.push(field)
        continue
      }
      const hidden = isSensitive(field, extra)
      // changes hold frozen copies: neither the store's live objects nor the caller's input
      const change: { path: string; before?: JsonValue; after?: JsonValue } = { path: pointer(field) }
      if (Object.hasOwn(before, field)) change.before = hidden ? REDACTED : toFrozenJson(before[field])
      change.after = hidden ? REDACTED : toFrozenJson(value)
      changes.push(Object.freeze(change))
      // the store gets its own (mutable) copy, not the caller's object
      next[field] = structuredClone(toFrozenJson(value))
    }
    return { next, changes: Object.freeze(changes) as readonly FieldChange[], skipped }
  }
  return {
    name: options.name,
    description: options.description ?? `Fill in the ${options.name} form`,
    inputSchema: { type: 'object', additionalProperties: false, ...rest },
    hints: { idempotent: true, ...options.hints },
    sensitive: [...extra],
    // with needsConfirmation, the confirmation shows the same changes the fill would make,
    // as a deeply frozen copy (mutating it cannot reach the store)
    async previewChanges(values: Record<string, JsonValue>) {
      return diff({ ...(await options.read()) }, values).changes
    },
    async run(values: Record<string, JsonValue>, ctx: ToolContext & { registerUndo?: (restore: () => unknown) => void }) {
      const before = { ...(await options.read()) }
      const { next, changes, skipped } = diff(before, values)
      if (changes.length > 0) {
        await options.write(next)
        ctx.registerUndo?.(() => options.write(before))
      }
      return ok<FormFillResult>({ changes, skipped })
    },
  }
}
