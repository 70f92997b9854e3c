/**
 * Composes a tool's pipeline from the call's stage functions (call.ts), when the tool is
 * registered and again when a listener that a stage serves is added or removed, as
 * Fastify compiles its routes. Every tool's pipeline is made of the same functions: a
 * tool that uses no gate, listener, tracer or evidence store gets only the stages it
 * needs (metrics at start and end, the body, parking a suspension).
 */
import { STAGES, type Call } from './call.js'
import { Limiter } from './limiter.js'
import type { Pipeline, Stage, ToolEntry } from './types.js'

/** What the manager has that stages serve: listeners, a tracer, an evidence store, development mode. */
export interface PipelineFeatures {
  readonly callStart: boolean
  readonly callEnd: boolean
  /** Spans: a tracer with a registered provider. */
  readonly tracer: boolean
  /** A tracer without a provider yet: a probe stage asks now and then whether one was registered. */
  readonly tracerProbe: boolean
  readonly evidence: boolean
  readonly development: boolean
  /** A durable store: the ledger gate runs last, before the body, and its settlement after. */
  readonly store: boolean
}

/** The pipeline of `entry`'s calls given the manager's `features`. */
export function compose(entry: Omit<ToolEntry, 'pipeline'>, features: PipelineFeatures): Pipeline<Call> {
  const start: Stage<Call>[] = [STAGES.metricsStart]
  if (features.callStart) start.push(STAGES.callStart)
  if (features.tracer) start.push(STAGES.spanStart)
  else if (features.tracerProbe) start.push(STAGES.spanProbe)
  const gates: Stage<Call>[] = []
  if (entry.scopes.length !== 0) gates.push(STAGES.scopes)
  if (entry.permissionHooks.length !== 0) gates.push(STAGES.permission)
  const rule = entry.def.needsConfirmation
  if (rule !== undefined && rule !== false) gates.push(STAGES.confirmation)
  const continueAt = gates.length
  if (entry.breaker !== undefined) gates.push(STAGES.breaker)
  if (entry.limiter !== undefined) gates.push(STAGES.concurrency)
  if (features.store) gates.push(STAGES.ledger)
  const settle: Stage<Call>[] = [STAGES.metricsEnd]
  if (features.store) settle.push(STAGES.ledgerEnd)
  if (entry.breaker !== undefined) settle.push(STAGES.breakerEnd)
  if (features.tracer) settle.push(STAGES.spanEnd)
  if (features.evidence) settle.push(STAGES.evidence)
  if (features.callEnd) settle.push(STAGES.callEnd)
  return Object.freeze({
    start: Object.freeze(start),
    gates: Object.freeze(gates),
    continueAt,
    check: features.development && entry.validateOutput !== undefined ? STAGES.outputCheck : undefined,
    settle: Object.freeze(settle),
    retry: entry.def.retry !== undefined,
  })
}

/** A limiter for a tool with a concurrency limit, whose queued calls start through the pipeline. */
export function limiterOf(limit: number, queueLimit: number): Limiter | undefined {
  if (limit === Infinity) return undefined
  return new Limiter(limit, queueLimit, STAGES.startQueued as (item: object) => boolean)
}
