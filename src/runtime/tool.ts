/**
 * The shape of a tool and of what its body receives: the public types of registration
 * and calling.
 */
import type { BreakerOptions } from './breaker.js'
import type { HelperResult } from '../core/helpers.js'
import type { FieldChange, JsonValue } from '../core/types.js'
import type { TraceContext } from '../observe/trace-context.js'
import type { Principal } from '../core/principal.js'

/** What a tool declares about itself. `untrustedContent` marks results as data, not instructions. */
export interface ToolHints {
  readonly untrustedContent?: boolean
  readonly readOnly?: boolean
  readonly destructive?: boolean
  readonly idempotent?: boolean
}

/** What a tool's body receives besides its input. */
export interface ToolContext {
  readonly callId: string
  readonly toolName: string
  /** Aborted when the call is cancelled or times out. Created on first read. */
  readonly signal: AbortSignal
  /** 1 for the first attempt; higher when an idempotent tool is retried. */
  readonly attempt: number
  /**
   * Registers how to undo what this call did; `tm.undo(callId)` runs it once. A function is
   * kept in this process's memory; a JSON payload (for a tool that declares `undo(payload, ctx)`)
   * goes to the manager's store, so the undo outlives a restart and runs on any instance.
   */
  registerUndo(restore: (() => unknown) | JsonValue): void
  /** Reports progress (MCP `notifications/progress` when the client asked for it). */
  reportProgress(progress: number, total?: number, message?: string): void
  /**
   * The W3C trace context to forward to what the body calls (as headers, or MCP `_meta`): the
   * call's `execute_tool` span when it has one, else the trace context the call was called with;
   * `undefined` when neither.
   */
  readonly traceContext?: TraceContext
  /**
   * Logs about this call: a `log` event with `data`'s JSON form, sensitive fields redacted
   * (MCP `notifications/message` to a 2026-07-28 client whose request set a `logLevel` at or
   * below `level`). An unknown level, or a call already settled, logs nothing.
   */
  log(level: ToolLogLevel, data: unknown): void
  /** Who called: the principal given to `tm.call` (from a verified access token over MCP); `undefined` for the operator. */
  readonly principal?: Principal
}

/** The severities of `ctx.log` (RFC 5424, as MCP's `notifications/message` names them), least severe first. */
export const TOOL_LOG_LEVELS = Object.freeze(['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'] as const)

/** A severity of `ctx.log`. */
export type ToolLogLevel = (typeof TOOL_LOG_LEVELS)[number]

/** A permission decision: allow with `true`/`undefined`, deny with `false`, `refuse(...)` or `{ allow: false, code?, message? }`. */
export type PermissionDecision =
  | boolean
  | undefined
  | void
  | HelperResult
  | { readonly allow: boolean; readonly code?: string; readonly message?: string }

/** Runs before the body; nothing the tool does can waive its denial. */
export type PermissionHook = (
  call: { readonly tool: string; readonly input: unknown; readonly callId: string; readonly principal?: Principal },
) => PermissionDecision | Promise<PermissionDecision>

import type { JsonSchema, ToolSchema } from '../core/schema-types.js'
export type { FromJsonSchema, InputOf, JsonSchema, StandardSchemaV1, ToolSchema } from '../core/schema-types.js'

/**
 * Per-tool concurrency: at most `limit` bodies run at once; up to `queue` more wait. A body
 * runs until it returns or its promise settles, even after its call settled (cancelled or
 * timed out): it keeps its slot until then, so a body that ignores its signal and never
 * settles holds its slot for good (calls behind it wait, and end by their own timeout).
 */
export interface ConcurrencyOptions {
  readonly limit: number
  readonly queue?: number
}

/**
 * A tool: a name, an input schema and a body. Each schema is a JSON Schema or a Standard
 * Schema (zod 4, valibot, arktype, ...); `run` receives the validated input (JSON Schema
 * defaults applied; a Standard Schema's output value), typed from the schema at `register`.
 */
export interface ToolDefinition<I = Record<string, unknown>, S extends ToolSchema = ToolSchema> {
  /** Letters, digits, `_` and `-`, 1 to 64 characters (what every provider accepts), unless registered with `{ anyName: true }`. */
  readonly name: string
  readonly description?: string
  readonly inputSchema: S
  readonly outputSchema?: ToolSchema
  readonly hints?: ToolHints
  readonly timeoutMs?: number
  readonly concurrency?: number | ConcurrencyOptions
  readonly permission?: PermissionHook
  /**
   * The scopes a caller's principal must hold to call this tool (default: the manager's
   * `scopes`). A call with a principal lacking one is refused `insufficient_scope` and nothing
   * runs; a call without a principal (your own code, the operator) is not checked.
   */
  readonly scopes?: readonly string[]
  /** Deferred mode: the call does not run until `tm.confirm(confirmId, { approve: true })`. */
  readonly needsConfirmation?: boolean | ((input: I, ctx: ToolContext) => boolean | Promise<boolean>)
  /**
   * The human summary of a confirmation (default: "Run <name> with <input's JSON form>"). It is given the
   * input's JSON form with sensitive fields redacted (`'[redacted]'`), so no summary can show them.
   */
  summarize?(input: I): string | Promise<string>
  /**
   * How an MCP client is asked to confirm (with `needsConfirmation`): `'form'` (default) in the
   * client's own dialog when it supports form elicitation, else at the approval page; `'url'`
   * only ever at the approval page (`serveHttp`), never in a form the client fills in.
   */
  readonly confirmVia?: 'form' | 'url'
  /** The changes a confirmed call would make, when known. Shown as a frozen copy, values under sensitive paths redacted. */
  previewChanges?(input: I): readonly FieldChange[] | Promise<readonly FieldChange[]>
  /** Undoes a call that registered `ctx.registerUndo(payload)`: run once by `tm.undo(callId)`, on any instance sharing the store. */
  undo?(payload: JsonValue, ctx: UndoContext): unknown
  /** Continues a suspended call: gets the answer given to `tm.resume(requestId, answer)`. */
  resume?(answer: unknown, input: I, ctx: ToolContext): unknown
  /** Opt-in circuit breaker. */
  readonly breaker?: BreakerOptions
  /** Opt-in retries of retryable error kinds, for tools marked `idempotent` only. */
  readonly retry?: RetryOptions
  /** Field names to redact (besides `password` and `cc-*`) in evidence. */
  readonly sensitive?: readonly string[]
  /**
   * A call that may take long: served over MCP to a client that declared the tasks extension,
   * `true` answers a task handle at once and runs the call detached; `{ afterMs }` runs it
   * inline and answers a task handle only if it has not finished after `afterMs` ms. Elsewhere
   * (`tm.call`, other clients) it changes nothing. Shown in `tm.manifest()`.
   */
  readonly longRunning?: true | { readonly afterMs: number }
  /** Returns a helper result, a `{ output, isError, parts?, metadata? }`, a `ToolResult`, or any value (taken as `ok(value)`). */
  run(input: I, ctx: ToolContext): unknown
}

/** Retries with exponential backoff and full jitter, never past the call's timeout or signal. */
export interface RetryOptions {
  /** Total attempts, the first included (default 3). */
  readonly attempts?: number
  /** The first backoff in ms (default 100); doubles each retry. */
  readonly baseMs?: number
  /** The largest backoff in ms (default 5000). */
  readonly maxMs?: number
}

/**
 * Options of one call. They are read once, when the call is made; options that throw when
 * read, or that are malformed, refuse the call with code `invalid_options`.
 */
export interface CallOptions {
  readonly signal?: AbortSignal
  /** The call's id (default: generated). `tm.cancel` matches it exactly. */
  readonly callId?: string
  /** A positive number of milliseconds; one beyond 2^31 - 1 (what a timer can hold) never fires. */
  readonly timeoutMs?: number
  /**
   * With a store: the call's idempotency key (1 to 1024 characters, scoped by tool). A call
   * with a key settled before with the same input answers that result (`replayed: true`)
   * without running; see docs/store.md.
   */
  readonly idempotencyKey?: string
  /**
   * The caller's W3C trace context (`traceparent`, optionally `tracestate` and `baggage`): the
   * call's `execute_tool` span becomes a child of that trace. An invalid `traceparent` is
   * ignored (the span starts under the active context), never an error.
   */
  readonly traceContext?: TraceContext
  /**
   * Who is calling (see docs/auth.md): the tool's scopes are checked against its `scopes`, the
   * body and permission hooks see it, records name its subject, and what the call leaves behind
   * (a parked call, an undo, an idempotency key) belongs to it. Without one, the call is the
   * operator's, as before.
   */
  readonly principal?: Principal
}

/** Who answers a parked call, undoes or cancels a call: the principal that made it, or none (the operator, who may answer any). */
export interface AnswerOptions {
  readonly principal?: Principal
}

/** What a tool's `undo(payload, ctx)` receives besides the payload. */
export interface UndoContext {
  /** The call being undone. */
  readonly callId: string
  readonly toolName: string
  /** Who asked for the undo, when a principal did. */
  readonly principal?: Principal
}

/** One tool in `tm.manifest()`. */
export interface ToolManifestEntry {
  readonly name: string
  readonly description?: string
  readonly inputSchema: JsonSchema
  readonly outputSchema?: JsonSchema
  readonly hints: ToolHints
  readonly needsConfirmation?: true
  /** The tool's `longRunning` rule, when it has one. */
  readonly longRunning?: true | { readonly afterMs: number }
  /** The tool's `confirmVia`, when it sets one: how an MCP client is asked to confirm. */
  readonly confirmVia?: 'form' | 'url'
  /** The scopes a caller needs (the tool's `scopes`, else the manager's), when there are any. */
  readonly scopes?: readonly string[]
}

/** Options of `tm.register`. */
export interface RegisterOptions {
  /** Replace a tool of the same name (calls already admitted finish with the old one). */
  readonly replace?: boolean
  /** Skip the tool-name rule (`^[a-zA-Z0-9_-]{1,64}$`, what every provider accepts). */
  readonly anyName?: boolean
}
