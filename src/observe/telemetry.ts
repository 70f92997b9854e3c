/**
 * OpenTelemetry spans, when `@opentelemetry/api` (an optional peer dependency) is
 * installed: one `execute_tool {tool}` span per call, following the GenAI semantic
 * conventions, with `error.type` set on every outcome but success, parented to the caller's
 * W3C trace context when it sent one (extracted, and injected for the body, here). Without the
 * peer dependency this module loads nothing and costs nothing per call.
 */
import { createRequire } from 'node:module'
import { redact } from '../core/redact.js'
import type { ToolResult } from '../core/result.js'
import { errorTypeOf } from '../core/status.js'
import { principalKey, type PrincipalRef } from '../core/principal.js'
import { baggageMembers, formatTraceparent, traceContextOf, type TraceContext } from './trace-context.js'

export { errorTypeOf }

type OtelApi = typeof import('@opentelemetry/api')
type Span = import('@opentelemetry/api').Span
type Tracer = import('@opentelemetry/api').Tracer
/** The OpenTelemetry context a call's span started under (opaque outside this module). */
export type SpanParent = import('@opentelemetry/api').Context

function loadOtel(): OtelApi | undefined {
  try {
    return createRequire(import.meta.url)('@opentelemetry/api') as OtelApi
  } catch {
    return undefined
  }
}

const otel = loadOtel()

/** Whether the registered global propagator writes `traceparent` (as the W3C one OpenTelemetry's NodeSDK registers does). */
function propagatorHandlesTraceparent(api: OtelApi): boolean {
  try {
    return api.propagation.fields().includes('traceparent')
  } catch {
    return false
  }
}

/**
 * The OpenTelemetry context a call's span starts under: `traceContext` extracted by the global
 * propagator when it handles `traceparent`, else built by hand (a remote span context, its
 * trace state, its baggage); without a trace context, the active context.
 */
function otelParentOf(api: OtelApi, traceContext: TraceContext | undefined): SpanParent {
  if (traceContext === undefined) return api.context.active()
  if (propagatorHandlesTraceparent(api)) return api.propagation.extract(api.ROOT_CONTEXT, traceContext)
  // the call's options hold it as `traceContextOf` wrote it (a version 00 traceparent): read by position
  const tp = traceContext.traceparent
  if (tp.length !== 55) return api.context.active()
  let ctx = api.trace.setSpanContext(api.ROOT_CONTEXT, {
    traceId: tp.slice(3, 35),
    spanId: tp.slice(36, 52),
    traceFlags: parseInt(tp.slice(53), 16),
    isRemote: true,
    ...(traceContext.tracestate === undefined ? {} : { traceState: api.createTraceState(traceContext.tracestate) }),
  })
  const members = baggageMembers(traceContext.baggage)
  if (members !== undefined) {
    const entries: Record<string, { value: string; metadata?: ReturnType<OtelApi['baggageEntryMetadataFromString']> }> = {}
    for (const m of members) entries[m.key] = m.properties === '' ? { value: m.value } : { value: m.value, metadata: api.baggageEntryMetadataFromString(m.properties) }
    ctx = api.propagation.setBaggage(ctx, api.propagation.createBaggage(entries))
  }
  return ctx
}

/**
 * The trace context to forward from inside a call whose span is `span` (started under
 * `parent`): what the global propagator injects when it handles `traceparent`, else the span's
 * `traceparent` and `tracestate` and the parent's baggage, written by hand. `undefined` when
 * the span's context is not valid.
 */
function traceContextOfSpan(api: OtelApi, span: Span, parent: SpanParent): TraceContext | undefined {
  const sc = span.spanContext()
  if (!api.isSpanContextValid(sc)) return undefined
  if (propagatorHandlesTraceparent(api)) {
    const carrier: Record<string, string> = {}
    api.propagation.inject(api.trace.setSpan(parent, span), carrier)
    return traceContextOf(carrier)
  }
  const out: { -readonly [K in keyof TraceContext]: TraceContext[K] } = { traceparent: formatTraceparent(sc.traceId, sc.spanId, sc.traceFlags) }
  const state = sc.traceState?.serialize()
  if (state !== undefined && state !== '') out.tracestate = state
  const entries = api.propagation.getBaggage(parent)?.getAllEntries() ?? []
  if (entries.length > 0) {
    out.baggage = entries
      .map(([key, entry]) => {
        const properties = entry.metadata?.toString() ?? ''
        return `${encodeURIComponent(key)}=${encodeURIComponent(entry.value)}${properties === '' ? '' : `;${properties}`}`
      })
      .join(',')
  }
  return traceContextOf(out)
}

/** Telemetry options of a manager. */
export interface TelemetryOptions {
  /** Emit spans (default: when `@opentelemetry/api` is installed). */
  readonly tracing?: boolean
  /** Record arguments and results on spans, sensitive fields redacted (default false). */
  readonly recordContent?: boolean
  /**
   * How a span names the caller of a call made with a principal. `'subject'` (the default) sets
   * `enduser.id` (the subject: personal data), `toolwire.principal.issuer` and, when known,
   * `toolwire.principal.client_id`. `'pseudonymous'` sets only `enduser.pseudo.id`: the
   * principal's key (a SHA-256 digest), stable per issuer and subject.
   */
  readonly principal?: 'subject' | 'pseudonymous'
}

/** Who made a call, for its span: the principal and its key (`principalKey(principal)`). */

const PRINCIPAL_MODES: ReadonlySet<unknown> = new Set(['subject', 'pseudonymous'])

/** Starts and ends the span of each call. */
export class CallTracer {
  private tracer: Tracer | undefined

  private constructor(
    private readonly api: OtelApi,
    private readonly recordContent: boolean,
    private readonly pseudonymous: boolean,
  ) {}

  /**
   * The tracer of the registered provider, or `undefined` while none is registered:
   * then a call pays one property read instead of a no-op span.
   */
  private resolve(): Tracer | undefined {
    if (this.tracer !== undefined) return this.tracer
    const provider = this.api.trace.getTracerProvider() as { getDelegateTracer?: (name: string, version?: string) => Tracer | undefined }
    this.tracer =
      typeof provider.getDelegateTracer === 'function'
        ? provider.getDelegateTracer('toolwire', '0.1.0')
        : this.api.trace.getTracer('toolwire', '0.1.0')
    return this.tracer
  }

  /** Whether spans are made now: a tracer provider is registered (once one is, the tracer is kept). Never throws. */
  ready(): boolean {
    try {
      return this.resolve() !== undefined
    } catch {
      return false
    }
  }

  /**
   * A tracer, or `undefined` when tracing is off or the peer dependency is absent.
   * @throws TypeError for an unknown `principal` mode (with or without the peer dependency).
   */
  static create(options: TelemetryOptions | undefined): CallTracer | undefined {
    const principal = options?.principal
    if (principal !== undefined && !PRINCIPAL_MODES.has(principal)) {
      throw new TypeError("toolwire: telemetry.principal must be 'subject' or 'pseudonymous'")
    }
    if (otel === undefined || options?.tracing === false) return undefined
    return new CallTracer(otel, options?.recordContent === true, principal === 'pseudonymous')
  }

  /** The context a call's span starts under: the caller's trace context when it sent one, else the active context. */
  parentOf(traceContext: TraceContext | undefined): SpanParent {
    return otelParentOf(this.api, traceContext)
  }

  /** The trace context a call's body forwards: its span's, or `undefined` when the span's context is not valid. */
  traceContextOf(span: Span, parent: SpanParent): TraceContext | undefined {
    return traceContextOfSpan(this.api, span, parent)
  }

  /**
   * Starts a call's span under `parent` (from {@link parentOf}; default: the active context),
   * naming its `caller` when the call has a principal (see {@link TelemetryOptions.principal}).
   */
  start(
    tool: string,
    callId: string,
    description: string | undefined,
    input: unknown,
    sensitive: ReadonlySet<string> | undefined,
    parent?: SpanParent,
    caller?: PrincipalRef,
  ): Span | undefined {
    const tracer = this.resolve()
    if (tracer === undefined) return undefined
    const span = tracer.startSpan(`execute_tool ${tool}`, { kind: this.api.SpanKind.INTERNAL }, parent)
    if (!span.isRecording()) return span
    span.setAttribute('gen_ai.operation.name', 'execute_tool')
    span.setAttribute('gen_ai.tool.name', tool)
    span.setAttribute('gen_ai.tool.call.id', callId)
    span.setAttribute('gen_ai.tool.type', 'function')
    if (description !== undefined) span.setAttribute('gen_ai.tool.description', description)
    if (this.recordContent && input !== undefined) {
      span.setAttribute('gen_ai.tool.call.arguments', JSON.stringify(redact(input, sensitive)))
    }
    if (caller !== undefined) this.nameCaller(span, caller)
    return span
  }

  /** Sets the attributes that name who called (OpenTelemetry's `enduser.*`). */
  private nameCaller(span: Span, principal: PrincipalRef): void {
    if (this.pseudonymous) {
      span.setAttribute('enduser.pseudo.id', principalKey(principal))
      return
    }
    span.setAttribute('enduser.id', principal.subject)
    span.setAttribute('toolwire.principal.issuer', principal.issuer)
    if (principal.clientId !== undefined) span.setAttribute('toolwire.principal.client_id', principal.clientId)
  }

  end(span: Span, result: ToolResult, sensitive: ReadonlySet<string> | undefined): void {
    if (span.isRecording()) {
      span.setAttribute('toolwire.status', result.statusName())
      const errorType = errorTypeOf(result)
      if (errorType !== undefined) {
        span.setAttribute('error.type', errorType)
        const message = (result.error() ?? result.refusal())?.message ?? result.text()
        span.setStatus({ code: this.api.SpanStatusCode.ERROR, message })
      }
      if (this.recordContent) {
        const data = result.data()
        span.setAttribute('gen_ai.tool.call.result', data === undefined ? result.text() : JSON.stringify(redact(data, sensitive)))
      }
    }
    span.end()
  }
}
