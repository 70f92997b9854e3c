/**
 * What a tool body does through its `ctx` beyond reading it: the trace context it forwards,
 * undo registration, progress and log events. `Call`'s `ToolContext` members delegate here
 * with `CALL_ACCESS` (call.ts), so the call's state stays `#private`.
 */
import { toFrozenJson } from '../core/json.js'
import { redact } from '../core/redact.js'
import type { JsonValue } from '../core/types.js'
import type { TraceContext } from '../observe/trace-context.js'
import { SETTLED, waitFor, type CallAccess } from './call-access.js'
import { TOOL_LOG_LEVELS, type ToolContext, type ToolLogLevel } from './tool.js'
import type { ToolEvents } from './types.js'

/** The trace context the body forwards: its span's when the call has one, else the one the call received. */
export function traceContextOf<C extends ToolContext>(access: CallAccess<C>, c: C): TraceContext | undefined {
  const received = access.options(c)?.traceContext
  const x = access.extras(c)
  if (x?.span === undefined || x.spanParent === undefined) return received
  const host = access.host(c)
  try {
    return host.tracer!.traceContextOf(x.span, x.spanParent) ?? received
  } catch (err) {
    // telemetry never fails a call
    host.reportError(c.callId, access.entry(c).name, err)
    return received
  }
}

/** `ctx.registerUndo`: a function kept in memory, or a JSON payload for the tool's `undo` (with a store, the call answers once it is written). */
export function registerUndo<C extends ToolContext>(access: CallAccess<C>, c: C, restore: (() => unknown) | JsonValue): void {
  const host = access.host(c)
  const entry = access.entry(c)
  if (typeof restore === 'function') return host.registerUndo(c.callId, restore as () => unknown, access.options(c)?.principal)
  if (typeof entry.def.undo !== 'function') {
    throw new TypeError('toolwire: registerUndo takes a function, or a JSON payload when the tool declares undo(payload, ctx)')
  }
  const written = host.registerUndoPayload(c.callId, entry, toFrozenJson(restore), access.options(c)?.principal)
  // with a store: the call answers once the payload is written, so that tm.undo on any instance finds it
  if (written !== undefined) waitFor(access.more(c), written)
}

/** `ctx.reportProgress`: a `progress` event while the call runs. */
export function reportProgress<C extends ToolContext>(access: CallAccess<C>, c: C, progress: number, total?: number, message?: string): void {
  const host = access.host(c)
  if ((access.flags(c) & SETTLED) !== 0 || !host.hasListeners('progress')) return
  // what reaches listeners (and the MCP wire) is a finite number and a string, nothing else the tool made
  if (typeof progress !== 'number' || !Number.isFinite(progress)) return
  const event: { -readonly [K in keyof ToolEvents['progress']]: ToolEvents['progress'][K] } = { callId: c.callId, tool: c.toolName, progress }
  if (typeof total === 'number' && Number.isFinite(total)) event.total = total
  if (typeof message === 'string') event.message = message
  host.emit('progress', event)
}

/** `ctx.log`: a `log` event while the call runs, sensitive fields redacted. */
export function log<C extends ToolContext>(access: CallAccess<C>, c: C, level: ToolLogLevel, data: unknown): void {
  const host = access.host(c)
  if ((access.flags(c) & SETTLED) !== 0 || !host.hasListeners('log') || !TOOL_LOG_LEVELS.includes(level)) return
  host.emit('log', { callId: c.callId, tool: c.toolName, level, data: redact(data, access.entry(c).sensitive) })
}
