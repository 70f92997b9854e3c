/**
 * The gates of a call's pipeline (pipeline.ts composes them), in order: scopes (issue #23),
 * permission hooks, the confirmation rule (deferred mode: parks the call), the circuit
 * breaker and the concurrency limiter; and `startQueued`, the limiter's way back in. Each
 * gate either settles the call or lets it through (`proceed`), at once or later.
 */
import { CALL_ACCESS as access, type Call } from '../call.js'
import { ADMITTED_BY_BREAKER, RUNNING, SETTLED } from '../call-access.js'
import { isHelperResult } from '../../core/helpers.js'
import { redact, redactChanges } from '../../core/redact.js'
import { refusalError, ToolResult } from '../../core/result.js'
import { circuitOpenText, concurrencyLimitText, INSUFFICIENT_SCOPE, insufficientScopeText, REFUSALS } from '../../core/texts.js'
import type { FieldChange } from '../../core/types.js'
import { fromHelper, when } from '../normalize.js'
import { missingScopes } from '../../core/principal.js'
import type { PermissionDecision, ToolContext, ToolDefinition } from '../tool.js'

/** The scope gate: a call with a principal lacking a scope the tool needs is refused; the operator's calls pass. */
export function scopes(c: Call): void {
  const principal = access.options(c)?.principal
  if (principal !== undefined) {
    const missing = missingScopes(principal.scopes, access.entry(c).scopes, access.host(c).impliedScopes)
    if (missing.length !== 0) {
      return access.finish(c, ToolResult.failed(refusalError(INSUFFICIENT_SCOPE, insufficientScopeText(missing), { scopes: [...missing] })))
    }
  }
  access.proceed(c)
}

/** The permission gate: the tool's hooks in order; the first that does not allow settles the call as refused. */
export function permission(c: Call): void {
  const entry = access.entry(c)
  const hooks = entry.permissionHooks
  const input = access.input(c)
  const principal = access.options(c)?.principal
  const request = Object.freeze(
    principal === undefined ? { tool: entry.name, input, callId: c.callId } : { tool: entry.name, input, callId: c.callId, principal },
  )
  const step = (i: number): void => {
    if ((access.flags(c) & SETTLED) !== 0) return
    if (i === hooks.length) return access.proceed(c)
    let decision: PermissionDecision | Promise<PermissionDecision>
    try {
      decision = hooks[i]!(request)
    } catch (err) {
      return denyOnError(c, err)
    }
    when(
      decision,
      (d) =>
        access.guarded(c, () => {
          let allowed: boolean
          try {
            allowed = applyDecision(c, d as PermissionDecision)
          } catch (err) {
            // a decision that cannot be read denies
            return denyOnError(c, err)
          }
          if (allowed) step(i + 1)
        }),
      (err) => access.guarded(c, () => denyOnError(c, err)),
    )
  }
  step(0)
}

function denyOnError(c: Call, err: unknown): void {
  access.host(c).reportError(c.callId, access.entry(c).name, err)
  access.finish(c, ToolResult.failed(refusalError(REFUSALS.permissionCheckFailed.code, REFUSALS.permissionCheckFailed.message)))
}

/** Returns true to allow; otherwise settles the call as refused. */
function applyDecision(c: Call, d: PermissionDecision): boolean {
  if ((access.flags(c) & SETTLED) !== 0) return false
  if (d === undefined || d === true) return true
  if (d === false) {
    access.finish(c, ToolResult.failed(refusalError(REFUSALS.permissionDenied.code, REFUSALS.permissionDenied.message)))
    return false
  }
  if (isHelperResult(d)) {
    if (d.status === 'ok') return true
    access.finish(c, d.status === 'refused' ? fromHelper(d) : ToolResult.failed(refusalError(REFUSALS.permissionDenied.code, REFUSALS.permissionDenied.message)))
    return false
  }
  const obj = d as { allow?: unknown; code?: unknown; message?: unknown }
  if (obj.allow === true) return true
  access.finish(
    c,
    ToolResult.failed(
      refusalError(
        typeof obj.code === 'string' ? obj.code : REFUSALS.permissionDenied.code,
        typeof obj.message === 'string' ? obj.message : REFUSALS.permissionDenied.message,
      ),
    ),
  )
  return false
}

/** The confirmation gate (deferred mode): parks the call when the tool's rule asks for confirmation. */
export function confirmation(c: Call): void {
  const rule = access.entry(c).def.needsConfirmation
  if (rule === undefined || rule === false) return access.proceed(c)
  let needed: boolean | Promise<boolean>
  try {
    needed = rule === true ? true : (rule as (i: unknown, c: ToolContext) => boolean | Promise<boolean>)(access.input(c), c)
  } catch (err) {
    return access.fail(c, err)
  }
  when(
    needed,
    (n) => access.guarded(c, () => (n ? askConfirmation(c) : access.proceed(c))),
    (err) => access.guarded(c, () => access.fail(c, err)),
  )
}

function askConfirmation(c: Call): void {
  if ((access.flags(c) & SETTLED) !== 0) return
  const entry = access.entry(c)
  const input = access.input(c)
  const def = entry.def as ToolDefinition<unknown>
  let summarized: unknown
  let changes: unknown
  try {
    // a custom summary is written from the input with its sensitive fields redacted, so it cannot show them
    summarized = def.summarize?.(def.summarize === undefined ? undefined : redact(input, entry.sensitive))
    changes = def.previewChanges?.(input)
  } catch (err) {
    return access.fail(c, err)
  }
  let summary: unknown
  const park = (list: unknown): void => {
    if ((access.flags(c) & SETTLED) !== 0) return
    const host = access.host(c)
    const { id, handle: confirmId } = host.newConfirmation(entry, input, c.callId)
    let result: ToolResult
    try {
      // previewed changes are shown as a frozen copy, sensitive fields redacted
      const redacted: readonly FieldChange[] | undefined = list === undefined ? undefined : redactChanges(list, entry.sensitive)
      result = ToolResult.pending(
        redacted === undefined
          ? { id: confirmId, kind: 'confirmation', summary: summary as string }
          : { id: confirmId, kind: 'confirmation', summary: summary as string, changes: redacted },
      )
    } catch (err) {
      return access.fail(c, err)
    }
    // the park point: the call continues (or not) with tm.confirm; with a store, once the store holds it
    const parked = host.park(id, 'confirmation', entry, input, c.callId, access.options(c))
    if (typeof parked === 'boolean') access.finish(c, result)
    else {
      access.more(c).wait = parked.then((ok) =>
        access.guarded(c, () => {
          // a call that settled while the store parked it (its timeout) is withdrawn: no one may confirm it now
          if ((access.flags(c) & SETTLED) !== 0) {
            if (ok) host.unpark(id, c.callId)
            return
          }
          access.finish(c, result)
        }),
      )
    }
  }
  // either may be async; a rejection of either fails the call (and is never left unhandled)
  let failed = false
  const fail = (err: unknown): void => {
    if (failed) return
    failed = true
    access.guarded(c, () => access.fail(c, err))
  }
  when(
    summarized,
    (s) =>
      access.guarded(c, () => {
        // the default summary shows the input's JSON form (after toJSON), redacted
        summary = s ?? `Run ${entry.name} with ${JSON.stringify(redact(input, entry.sensitive))}`
        when(changes, (list) => (failed ? undefined : access.guarded(c, () => park(list))), fail)
      }),
    (err) => {
      fail(err)
      // the changes are not needed any more, but their rejection is still handled
      when(changes, () => undefined, () => undefined)
    },
  )
}

/** The circuit breaker gate: an open breaker refuses the call. */
export function breaker(c: Call): void {
  const entry = access.entry(c)
  if (!entry.breaker!.admit()) {
    access.finish(c, ToolResult.failed(refusalError('circuit_open', circuitOpenText(entry.name))))
    return
  }
  access.addFlags(c, ADMITTED_BY_BREAKER)
  access.proceed(c)
}

/** The concurrency gate: takes one of the tool's slots, waits in its queue, or is refused when the queue is full. */
export function concurrency(c: Call): void {
  const entry = access.entry(c)
  switch (entry.limiter!.acquire(c)) {
    case 'run':
      access.addFlags(c, RUNNING)
      access.proceed(c)
      return
    case 'queued':
      return
    case 'full':
      access.finish(c, ToolResult.failed(refusalError('concurrency_limit', concurrencyLimitText(entry.name))))
  }
}

/** Starts a call the limiter dequeued; false when it settled while it waited. */
export function startQueued(c: Call): boolean {
  if ((access.flags(c) & SETTLED) !== 0) return false
  access.addFlags(c, RUNNING)
  access.proceed(c)
  return true
}
