/**
 * What a tool body keeps with its suspension for the run that continues it (the MCP client's
 * remote state, for one): kept with the parked call and handed to the continued run.
 */
import type { JsonValue } from '../core/types.js'
import { Call } from './call.js'
import type { ToolContext } from './tool.js'

/**
 * @internal Keeps `state` (JSON, frozen copy) with the suspension the tool body is about to
 * return (`pending(…)`): it is parked with the call (in the store's row when there is a store,
 * so any instance can continue it) and given to the continued run (`resumeStateOf(ctx)` in
 * `resume`). Opaque to toolwire, never logged. Throws a TypeError when `ctx` is not a call's
 * context or `state` has no JSON form.
 */
export function keepForResume(ctx: ToolContext, state: JsonValue): void {
  if (!(ctx instanceof Call)) throw new TypeError('toolwire: keepForResume takes the ctx a tool body received')
  Call.keep(ctx, state)
}

/** @internal What the suspension a `resume` continues kept with {@link keepForResume}, or `undefined`. */
export function resumeStateOf(ctx: ToolContext): JsonValue | undefined {
  return ctx instanceof Call ? Call.resumed(ctx) : undefined
}
