/**
 * The start stages of a call's pipeline (pipeline.ts composes them): the in-flight gauge,
 * the `call_start` event and the call's span.
 */
import { CALL_ACCESS as access, type Call } from '../call.js'
import { principalRef } from '../../core/principal.js'
import { redact } from '../../core/redact.js'

/** Counts the call as started (in-flight gauge). */
export function metricsStart(c: Call): void {
  access.host(c).metrics.started(access.entry(c).metricsId)
}

/** The `call_start` event. */
export function callStart(c: Call): void {
  const host = access.host(c)
  if (host.hasListeners('call_start')) {
    const tool = access.entry(c).name
    const principal = access.options(c)?.principal
    host.emit('call_start', principal === undefined ? { callId: c.callId, tool } : { callId: c.callId, tool, principal: principalRef(principal) })
  }
}

/** Starts the call's span. */
export function spanStart(c: Call): void {
  const host = access.host(c)
  const entry = access.entry(c)
  const tracer = host.tracer
  try {
    if (tracer !== undefined) {
      const x = access.more(c)
      const options = access.options(c)
      x.spanParent = tracer.parentOf(options?.traceContext)
      x.span = tracer.start(entry.name, c.callId, entry.def.description, access.input(c), entry.sensitive, x.spanParent, options?.principal)
    }
  } catch (err) {
    // telemetry never stops a call
    host.reportError(c.callId, entry.name, err)
  }
}

/** While the tracer has no provider: asks now and then whether one was registered (then starts the span). */
export function spanProbe(c: Call): void {
  if (access.host(c).tracerReady(access.clock(c))) spanStart(c)
}

/** With an evidence store: the input as the call starts, redacted, for its record (a body may change its input in place). */
export function evidenceInput(c: Call): void {
  access.more(c).evidenceInput = redact(access.input(c), access.entry(c).sensitive)
}
