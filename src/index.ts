/**
 * toolwire: a tool-execution runtime for LLM agents. A Rust core owns every call's
 * canonical result; this package dispatches calls and shows that result to each audience.
 *
 * This entry is the manager, the results and their views. The rest is in subpaths:
 * `toolwire/adapters` (provider wires), `toolwire/mcp` (MCP server and client, loads the MCP
 * SDK), `toolwire/demo` (the demo tools the CLI serves).
 */
import './core/engine.js' // first: refuses a Node.js older than 20.17 before anything else loads
export { ToolManager, ToolCallError, TOOL_FAILED_MESSAGE } from './runtime/manager.js'
export type { BatchCall } from './runtime/manager.js'
export type {
  CallOptions,
  ConcurrencyOptions,
  FromJsonSchema,
  InputOf,
  JsonSchema,
  RegisterOptions,
  StandardSchemaV1,
  ToolSchema,
  PermissionDecision,
  PermissionHook,
  ToolContext,
  ToolDefinition,
  ToolEventName,
  ToolEvents,
  ToolHints,
  ToolLogLevel,
  ToolManagerOptions,
  ToolManifestEntry,
  RetryOptions,
  AnswerOptions,
  ConfirmDecision,
} from './runtime/manager.js'
export { principalKey, readPrincipal, missingScopes } from './core/principal.js'
export type { Principal, PrincipalRef, ImpliedScopes } from './core/principal.js'
export { createOutcomeTool } from './runtime/outcome.js'
export type { OutcomeDiagnostics, OutcomeInvocation, OutcomeTool, OutcomeToolOptions, ToolExecutionOutcome } from './runtime/outcome.js'
export { createFormTool } from './runtime/form.js'
export type { FormFillResult, FormToolOptions } from './runtime/form.js'
export { JsonlEvidenceStore } from './observe/evidence.js'
export type { EvidenceApprover, EvidenceRecord, EvidenceStore } from './observe/evidence.js'
export type { BreakerOptions } from './runtime/breaker.js'
export type { BreakerState } from './observe/metrics.js'
export type { TelemetryOptions } from './observe/telemetry.js'
export type { TraceContext } from './observe/trace-context.js'
export { REDACTED } from './core/redact.js'
export { ToolResult, ToolwireWireError, toolError, refusalError, isToolErrorKind, ERROR_KINDS, WIRE_VERSION } from './core/result.js'
export type { IntoResult, PendingRequestInit, ToolErrorOptions } from './core/result.js'
export { ok, invalid, refuse, cancelled, errorResult, pending, authRequired, pendingOf } from './core/helpers.js'
export type { HelperResult, ModelResult } from './core/helpers.js'
export { canonicalOf, modelTextOf, viewOf } from './core/view.js'
export type { CallResult, CallStatus, CancelledBy, ViewModelFields } from './core/view.js'
export { MAX_VALUE_DEPTH } from './core/json.js'
export { SchemaError } from './core/validate.js'
export { TOOL_NAME_PATTERN } from './core/schema-source.js'
export { defineTool } from './runtime/define.js'
export type { Issue } from './core/validate.js'
export type * from './core/types.js'
export { toModel, toCanonical, wrapUntrusted, pendingText, UNTRUSTED_NOTE, UNTRUSTED_OPEN, UNTRUSTED_CLOSE } from './render/model.js'
export type { ModelView, ModelViewMetadata, ResultLike } from './render/model.js'
export { attach, partBytes, AttachError, DEFAULT_ATTACH_MAX_BYTES, detectMimeType, sniffMimeType } from './core/attach.js'
export type { AttachErrorCode, AttachOptions, AttachedPart } from './core/attach.js'
export { callRecord } from './observe/record.js'
export type { CallRecord } from './observe/record.js'
export type { MetricsSnapshot, ToolMetrics } from './observe/metrics.js'
