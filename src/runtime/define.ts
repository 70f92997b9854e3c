/** `defineTool`: a tool definition written apart from `register`, its input typed from its schema. */
import type { InputOf, ToolSchema } from '../core/schema-types.js'
import type { ToolDefinition } from './tool.js'

/**
 * Returns `tool` as it is, typed as `register` would type it: `run`'s input is inferred from
 * `inputSchema` (a Standard Schema's output type, or a JSON Schema literal written `as const`).
 * For tools defined in one module and registered in another, or listed for `toolwire serve`.
 *
 * @example
 * export const forecast = defineTool({
 *   name: 'forecast',
 *   inputSchema: z.object({ city: z.string() }),
 *   run: ({ city }) => weather(city), // city: string
 * })
 */
export function defineTool<S extends ToolSchema, I = InputOf<S>>(tool: ToolDefinition<I, S>): ToolDefinition<I, S> {
  return tool
}
