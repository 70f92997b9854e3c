/** JSON values, as JSON text can carry them. */
export type JsonValue = null | boolean | number | string | readonly JsonValue[] | { readonly [key: string]: JsonValue }

/** Why a call failed: the core's stable snake_case names. */
export type ToolErrorKind =
  | 'invalid_args'
  | 'timeout'
  | 'cancelled'
  | 'not_found'
  | 'permission_denied'
  | 'rate_limited'
  | 'provider'
  | 'network'
  | 'other'

/** The one disposition of a canonical result (its wire `status`). */
export type Disposition = 'success' | 'error' | 'refused' | 'skipped' | 'pending'

/** Stable telemetry names of the dispositions. */
export type StatusName = 'success' | 'error' | 'denied' | 'skipped' | 'pending'

/** A piece of non-text output: a MIME type and either base64 `data` or a `url`. */
export interface ContentPart {
  readonly type: 'image' | 'audio' | 'file'
  readonly mimeType: string
  readonly data?: string
  readonly url?: string
  readonly name?: string
}

/** What the model sees: text always, media parts in addition, and the structured value the text came from. */
export interface ToolOutput {
  readonly text: string
  readonly parts?: readonly ContentPart[]
  readonly structured?: JsonValue
}

/** A failed or refused call. `message` is public-safe; `details` are app-only. */
export interface ToolExecutionError {
  readonly kind: ToolErrorKind
  readonly message: string
  readonly code?: string
  readonly retryable: boolean
  readonly refusal: boolean
  readonly details?: JsonValue
}

/** One field a call would write or wrote; `before`/`after` absent means "no value". */
export interface FieldChange {
  readonly path: string
  readonly before?: JsonValue
  readonly after?: JsonValue
}

/** What a pending call waits for. */
export type PendingKind = 'input' | 'authorization' | 'confirmation'

/** A suspension: `id` is the correlation key for resuming the call. */
export interface PendingRequest {
  readonly id: string
  readonly kind: PendingKind
  readonly prompt?: string
  readonly url?: string
  readonly summary?: string
  readonly changes?: readonly FieldChange[]
  /**
   * The JSON Schema of the input the call waits for (kind `input` only): an MCP client is asked
   * for it as a form, and `tm.resume` checks the answer against it. A frozen JSON copy.
   */
  readonly schema?: PendingSchema
}

/** A pending request's JSON Schema: a JSON object. */
export type PendingSchema = { readonly [key: string]: JsonValue }

/** The JSON wire document of a canonical result (version 1). */
export interface WireDocument {
  readonly v: 1
  readonly status: Disposition
  readonly output: ToolOutput
  readonly error?: Omit<ToolExecutionError, 'refusal'>
  readonly refusal?: Omit<ToolExecutionError, 'refusal'>
  readonly skipReason?: string
  readonly pending?: PendingRequest
  readonly untrusted?: true
  readonly metadata?: { readonly [key: string]: JsonValue }
}
