/**
 * toolwire: a tool-execution runtime for LLM agents. A Rust core owns every call's
 * canonical result; this package dispatches calls and shows that result to each audience.
 */
import './engine.js' // first: refuses a Node.js older than 20.17 before anything else loads
export { ToolManager, ToolCallError, TOOL_FAILED_MESSAGE } from './manager.js'
export type { BatchCall } from './manager.js'
export type {
  CallOptions,
  ConcurrencyOptions,
  JsonSchema,
  PermissionDecision,
  PermissionHook,
  ToolContext,
  ToolDefinition,
  ToolEventName,
  ToolEvents,
  ToolHints,
  ToolManagerOptions,
  ToolManifestEntry,
  RetryOptions,
} from './manager.js'
export { createOutcomeTool } from './outcome.js'
export type { OutcomeDiagnostics, OutcomeInvocation, OutcomeTool, OutcomeToolOptions, ToolExecutionOutcome } from './outcome.js'
export { createFormTool } from './form.js'
export type { FormFillResult, FormToolOptions } from './form.js'
export { JsonlEvidenceStore } from './evidence.js'
export type { EvidenceRecord, EvidenceStore } from './evidence.js'
export type { BreakerOptions, BreakerState } from './breaker.js'
export type { TelemetryOptions } from './telemetry.js'
export { REDACTED } from './redact.js'
export { ToolResult, ToolwireWireError, toolError, refusalError, isToolErrorKind, ERROR_KINDS, WIRE_VERSION } from './result.js'
export type { IntoResult, PendingRequestInit, ToolErrorOptions } from './result.js'
export { ok, invalid, refuse, cancelled, errorResult, pending, authRequired, pendingOf } from './helpers.js'
export type { HelperResult, ModelResult } from './helpers.js'
export { canonicalOf, modelTextOf, viewOf } from './view.js'
export type { CallResult, CallStatus, CancelledBy, ViewModelFields } from './view.js'
export { MAX_VALUE_DEPTH } from './json.js'
export { SchemaError } from './validate.js'
export type { Issue } from './validate.js'
export type * from './types.js'
export { toModel, toCanonical, wrapUntrusted, pendingText, UNTRUSTED_NOTE, UNTRUSTED_OPEN, UNTRUSTED_CLOSE } from './model.js'
export type { ModelView, ModelViewMetadata, ResultLike } from './model.js'
export { attach, partBytes, AttachError, DEFAULT_ATTACH_MAX_BYTES, detectMimeType, sniffMimeType } from './attach.js'
export type { AttachErrorCode, AttachOptions, AttachedPart } from './attach.js'
export * from './adapters/index.js'
export { callRecord } from './record.js'
export type { CallRecord } from './record.js'
export type { MetricsSnapshot, ToolMetrics } from './metrics.js'
export {
  createMcpServer,
  serveStdio,
  StdioLineTransport,
  mcpToolOf,
  loadToolModule,
  isServableManager,
  toolwireVersion,
  UnknownToolError,
  MCP_PROTOCOL_VERSION,
  MCP_UNTRUSTED_CONTENT_META_KEY,
  MCP_NEEDS_CONFIRMATION_META_KEY,
  MCP_CALL_ID_META_KEY,
  MCP_CONFIRMATION_META_KEY,
} from './mcp/server.js'
export type { McpServerOptions, ServeStdioOptions, ServableManager, StdioLineTransportOptions } from './mcp/server.js'
export { importMcpTools, fromMcp } from './mcp/client.js'
export type { ImportMcpToolsOptions, FromMcpOptions } from './mcp/client.js'
export { createDemoTools, Sandbox, SandboxError } from './demo/index.js'
export type { DemoToolsOptions, SandboxPath, SandboxErrorCode } from './demo/index.js'
