/**
 * Composes a tool's pipeline from the call's stage functions (stages/*.ts), when the tool is
 * registered and again when a listener that a stage serves is added or removed, as
 * Fastify compiles its routes. Every tool's pipeline is made of the same functions: a
 * tool that uses no gate, listener, tracer or evidence store gets only the stages it
 * needs (metrics at start and end, the body, parking a suspension).
 */
import type { Call } from './call.js'
import { breaker, concurrency, confirmation, permission, scopes, startQueued } from './stages/gates.js'
import { ledger, ledgerEnd, ledgerEndWithEvidence } from './stages/ledger.js'
import { breakerEnd, callEnd, evidence, metricsEnd, outputCheck, spanEnd } from './stages/settle.js'
import { callStart, evidenceInput, metricsStart, spanProbe, spanStart } from './stages/start.js'
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
  const start: Stage<Call>[] = [metricsStart]
  if (features.callStart) start.push(callStart)
  if (features.tracer) start.push(spanStart)
  else if (features.tracerProbe) start.push(spanProbe)
  if (features.evidence) start.push(evidenceInput)
  const gates: Stage<Call>[] = []
  if (entry.scopes.length !== 0) gates.push(scopes)
  if (entry.permissionHooks.length !== 0) gates.push(permission)
  const rule = entry.def.needsConfirmation
  if (rule !== undefined && rule !== false) gates.push(confirmation)
  const continueAt = gates.length
  if (entry.breaker !== undefined) gates.push(breaker)
  if (entry.limiter !== undefined) gates.push(concurrency)
  if (features.store) gates.push(ledger)
  const settle: Stage<Call>[] = [metricsEnd]
  // with a store and evidence, one stage settles the key and writes the record: in one commit
  // when the evidence store is the store's own and it has settleWithEvidence, else as the two stages
  const together = features.store && features.evidence
  if (together) settle.push(ledgerEndWithEvidence)
  else if (features.store) settle.push(ledgerEnd)
  if (entry.breaker !== undefined) settle.push(breakerEnd)
  if (features.tracer) settle.push(spanEnd)
  if (features.evidence && !together) settle.push(evidence)
  if (features.callEnd) settle.push(callEnd)
  return Object.freeze({
    start: Object.freeze(start),
    gates: Object.freeze(gates),
    continueAt,
    check: features.development && entry.validateOutput !== undefined ? outputCheck : undefined,
    settle: Object.freeze(settle),
    retry: entry.def.retry !== undefined,
  })
}

/** A limiter for a tool with a concurrency limit, whose queued calls start through the pipeline. */
export function limiterOf(limit: number, queueLimit: number): Limiter | undefined {
  if (limit === Infinity) return undefined
  return new Limiter(limit, queueLimit, startQueued as (item: object) => boolean)
}
