/**
 * The types the runtime's modules share: the manager's events, a registered tool
 * (`ToolEntry`), its compiled pipeline, and the narrow host interface a call depends on
 * (`CallHost`), so that no runtime module imports the manager.
 */
import type { CircuitBreaker } from './breaker.js'
import type { Limiter } from './limiter.js'
import type { EvidenceApprover, EvidenceStore } from '../observe/evidence.js'
import type { MetricsBuffer } from '../observe/metrics.js'
import type { CallRecord } from '../observe/record.js'
import type { CallTracer } from '../observe/telemetry.js'
import type { OutcomeDiagnostics, OutcomeInvocation } from './outcome.js'
import type { CallOptions, PermissionHook, ToolContext, ToolDefinition, ToolLogLevel } from './tool.js'
import type { ToolResult } from '../core/result.js'
import type { Issue, Validator } from '../core/validate.js'
import type { FlatArgNames } from '../core/flat-args.js'
import type { CallResult } from '../core/view.js'
import type { JsonValue, PendingSchema } from '../core/types.js'
import type { ImpliedScopes, Principal, PrincipalRef } from '../core/principal.js'

/** Payloads of the manager's events. */
export interface ToolEvents {
  call_start: {
    readonly callId: string
    readonly tool: string
    /** Who called, when the call has a principal (its identity only, never its scopes or a token). */
    readonly principal?: PrincipalRef
  }
  call_end: {
    readonly callId: string
    readonly tool: string
    /** Who called, when the call has a principal (its identity only, never its scopes or a token). */
    readonly principal?: PrincipalRef
    readonly status: CallResult['status']
    readonly statusName: ReturnType<ToolResult['statusName']>
    readonly durationMs: number
    readonly result: ToolResult
    readonly view: CallResult
    /** The call's event record (`JSON.stringify(record)` gives the same bytes as the Rust core). */
    readonly record: CallRecord
    /**
     * `true` on the `call_end` of a `tm.undo` run (its `callId` and `tool` are the undone
     * call's; `record.undo_available` says whether it can be tried again). Absent on calls.
     */
    readonly undo?: true
  }
  error: { readonly callId: string; readonly tool: string; readonly message: string; readonly stack?: string; readonly error: unknown }
  output_invalid: { readonly callId: string; readonly tool: string; readonly issues: readonly Issue[] }
  confirmation: {
    readonly confirmId: string
    readonly callId: string
    readonly tool: string
    readonly approved: boolean
    readonly result: CallResult
    /** Who called, when the call has a principal (its identity only, never its scopes or a token). */
    readonly principal?: PrincipalRef
    /** Who answered the confirmation: a signed-in approver, or `{ link: true }`. */
    readonly approvedBy?: EvidenceApprover
  }
  progress: { readonly callId: string; readonly tool: string; readonly progress: number; readonly total?: number; readonly message?: string }
  /** `ctx.log` of a running call: `data` is a frozen JSON copy with sensitive fields redacted. */
  log: { readonly callId: string; readonly tool: string; readonly level: ToolLogLevel; readonly data: JsonValue }
  evidence_error: { readonly callId: string; readonly tool: string; readonly message: string; readonly error: unknown }
  late_report: { readonly callId: string; readonly tool: string; readonly message: string }
}

export type ToolEventName = keyof ToolEvents

/** @internal The kind of a parked call: waiting for a confirmation, or suspended by its body. */
export type ParkKind = 'confirmation' | 'suspension'

/**
 * @internal What a call needs of the manager that admitted it. Everything a call does
 * outside itself goes through here: events, errors, undo registrations, parking, the
 * in-flight index and the metrics buffer.
 */
export interface CallHost {
  readonly metrics: MetricsBuffer
  /** The manager's `impliedScopes`, followed when a call's scopes are checked. */
  readonly impliedScopes: ImpliedScopes | undefined
  readonly tracer: CallTracer | undefined
  /** Whether the tracer has a provider now (asked at most every 100 ms while it has none; pipelines are recomposed when it gets one). */
  tracerReady(now: number): boolean
  readonly evidence: EvidenceStore | undefined
  /** Whether a call's view waits for its evidence record (the evidence goes to the manager's durable store). */
  readonly awaitEvidence: boolean
  hasListeners(event: ToolEventName): boolean
  emit<E extends ToolEventName>(event: E, payload: ToolEvents[E]): void
  /** Emits `error` with what was thrown. Never throws. */
  reportError(callId: string, tool: string, error: unknown): void
  /** Registers a closure undo of the call, owned by the call's `principal` when it has one. */
  registerUndo(callId: string, restore: () => unknown, principal?: Principal): void
  /**
   * Registers a JSON payload for the tool's `undo(payload, ctx)`, owned by the call's `principal` when it has one:
   * in the store when there is one (resolves once the store holds it; never rejects).
   */
  registerUndoPayload(callId: string, entry: ToolEntry, payload: JsonValue, principal?: Principal): void | Promise<void>
  canUndo(callId: string): boolean
  /** The ids of a new confirmation: `id` to park it under, `handle` to hand out (a signed token with an `approvalSecret`). */
  newConfirmation(entry: ToolEntry, input: unknown, callId: string): { readonly id: string; readonly handle: string }
  /**
   * Parks a call under `id` until it is confirmed or resumed (the park points of the pipeline):
   * `true`, or `false` when a parked suspension holds the id (nothing was parked). With a store,
   * resolves once the store holds it (never rejects: a failure is reported). `extras`: what a
   * suspension keeps besides its call.
   */
  park(id: string, kind: ParkKind, entry: ToolEntry, input: unknown, callId: string, options: CallOptions | undefined, extras?: SuspensionExtras): boolean | Promise<boolean>
  /** Withdraws what `park` parked for `callId` under `id` (the call settled otherwise meanwhile). Never throws. */
  unpark(id: string, callId: string): void
  /** With a store: the ledger gate before the body (see durable/ledger.ts); an idempotency key is the call's `principal`'s own. */
  ledgerBegin(entry: ToolEntry, callId: string, input: unknown, idempotencyKey: string | undefined, principal?: Principal): Promise<LedgerGate>
  /** With a store: settles the call's ledger key with its result. Never rejects. */
  ledgerSettle(ticket: LedgerTicket, result: ToolResult, callId: string, tool: string): Promise<void>
  /** With a store: frees the call's ledger key, its body never ran. Never rejects. */
  ledgerRelease(ticket: LedgerTicket, callId: string, tool: string): Promise<void>
  /** Adds and removes a call from the in-flight index (`tm.cancel`). */
  track(call: ToolContext): void
  untrack(call: ToolContext): void
}

/** @internal What a parked suspension keeps besides its call. */
export interface SuspensionExtras {
  /** Its pending request's schema: the answer must match it. */
  readonly schema?: PendingSchema
  /**
   * Its pending request asks for a confirmation (`pending({ kind: 'confirmation' })` from the
   * body): `tm.confirm(id, { approve })` answers it too, through the tool's `resume` with `{ approve }`.
   */
  readonly confirmation?: true
  /** What the body kept for its `resume` (`keepForResume`): opaque JSON, never logged. */
  readonly resumeState?: JsonValue
}

/** @internal A ledger key a call holds while its body runs, settled with its result. */
export interface LedgerTicket {
  readonly key: string
  readonly token: string
  /** Whether the key is the caller's idempotency key (its whole result is recorded, for replays). */
  readonly keyed: boolean
}

/** @internal What the ledger gate decided: run the body (holding `ticket`, if any), or settle with `result`. */
export type LedgerGate =
  | { readonly run: true; readonly ticket: LedgerTicket | undefined }
  | { readonly run: false; readonly replayed: boolean; readonly result: ToolResult }

/** @internal A registered tool, compiled. Immutable but for its pipeline, recomposed when listeners change. */
export interface ToolEntry {
  readonly def: ToolDefinition<never>
  readonly name: string
  readonly validate: Validator
  /** The names the usual argument text (a flat object of the schema's members) is read with, without `JSON.parse` (flat-args.ts); `undefined`: every text takes `JSON.parse`. */
  readonly flatArgs: FlatArgNames | undefined
  readonly validateOutput: Validator | undefined
  readonly untrusted: boolean
  /** The tool's timeout, else the manager's. */
  readonly timeoutMs: number | undefined
  /** The manager's and the tool's permission hooks, in order (empty: none). */
  readonly permissionHooks: readonly PermissionHook[]
  /** The scopes a caller's principal needs: the tool's, else the manager's (empty: none). */
  readonly scopes: readonly string[]
  /** The tool's own concurrency limiter; `undefined` without a limit. */
  readonly limiter: Limiter | undefined
  readonly breaker: CircuitBreaker | undefined
  readonly outcome: ((args: never, invocation: OutcomeInvocation) => unknown) | undefined
  readonly sensitive: ReadonlySet<string> | undefined
  /** Whether a key names a sensitive field (the default names and `sensitive`): redacted in the tool's returned data. */
  readonly sensitiveKey: (key: string) => boolean
  readonly metricsId: number
  /** The stages this tool's calls run, composed at registration (see pipeline.ts). */
  pipeline: Pipeline
}

/** @internal A pipeline stage: runs on a call; stages never throw (each settles the call on a failure). */
export type Stage<C> = (call: C) => void

/**
 * @internal The stages of one tool's calls, composed from the same stage functions for
 * every tool: only the stages a tool uses are in it.
 */
export interface Pipeline<C = never> {
  /** At the start of a call (metrics, `call_start`, span). */
  readonly start: readonly Stage<C>[]
  /** The gates, in order (permission, confirmation, breaker, concurrency); the body follows. */
  readonly gates: readonly Stage<C>[]
  /** Where a continued call (confirmed, resumed) enters the gates: after the scope check, permission and confirmation. */
  readonly continueAt: number
  /** After a successful body, before settling (the output check in development). */
  readonly check: Stage<C> | undefined
  /** The settlement fan-out, in order (metrics, breaker, parking, span, evidence, `call_end`). */
  readonly settle: readonly Stage<C>[]
  /** Whether the body may be retried. */
  readonly retry: boolean
}

/** @internal The settled outcome of a call in `settlement` mode (the raw contract). */
export interface Settlement {
  readonly view: CallResult
  readonly result: ToolResult
  readonly raw: unknown
  readonly ran: boolean
  readonly reported: string | undefined
  readonly diagnostics: OutcomeDiagnostics
}

/** @internal How a call ends: resolving its promise, or placing its view into a batch. */
export type CallMode = 'view' | 'settlement'

/** @internal What a continued call runs instead of the tool's body. */
export type ContinuationBody = (ctx: ToolContext) => unknown

/**
 * @internal The options of a continued run of a parked call: the original call's (its principal
 * included: the run is the caller's), and who approved a confirmation (`tm.confirm`'s
 * `approvedBy`), for its evidence and events.
 */
export interface ContinuedOptions extends CallOptions {
  readonly approvedBy?: PrincipalRef
}

/** @internal The manager's event listeners as its modules use them (events.ts). */
export interface ManagerEvents {
  readonly listeners: { readonly [E in ToolEventName]: readonly unknown[] | undefined }
  emit<E extends ToolEventName>(event: E, payload: ToolEvents[E]): void
  /** Emits `error` with what was thrown. Never throws. */
  reportError(callId: string, tool: string, error: unknown): void
}

/** @internal What the manager's modules share of it (manager.ts builds it), so that none imports manager.ts. */
export interface ManagerState {
  /** The registered tools by name. */
  readonly tools: ReadonlyMap<string, ToolEntry>
  readonly events: ManagerEvents
  readonly tracer: CallTracer | undefined
  readonly metrics: MetricsBuffer
  /** A new generated call id (for a call settled early without one). */
  nextCallId(): string
  /** Whether a closure undo is registered in this process under `callId`. */
  hasUndo(callId: string): boolean
}
