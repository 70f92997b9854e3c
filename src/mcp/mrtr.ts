/**
 * Confirmations and tool input as multi-round-trip requests (MCP 2026-07-28,
 * basic/patterns/mrtr), without the SDK: which elicitation mode a client gets, the
 * `elicitation/create` input requests for a confirmation or a pending call's input, the keys
 * they travel under, and what a retry's `inputResponses` answer. The sealed `requestState`
 * is request-state.ts; the form schema subset is elicit-schema.ts.
 *
 * The `tools/call` handler wires them: a call that needs confirmation answers
 * `{ resultType: 'input_required', inputRequests: { [inputKey('confirm', 1)]: confirmationInputRequest(…) }, requestState: codec.seal(…) }`;
 * the retry's state is opened (`codec.verify`, then `codec.check` against the request) and its
 * answer read with `readInputAnswer`. In the 2025 era the SDK's legacy shim carries the same
 * input requests as `elicitation/create` requests. No MCP SDK import.
 */
import type { CallResult } from '../core/view.js'
import type { PendingRequest } from '../core/types.js'
import { mcpConfirmationFormMessage, mcpConfirmationUrlMessage, mcpInputMessage, dialogLine } from '../core/texts.js'
import { formContentOf, formSchemaOf, type FormSchema, type FormSchemaMisfit } from './elicit-schema.js'
import type { RequestState, RequestStateKind } from './request-state.js'

export * from './request-state.js'
export { formContentOf, formSchemaOf, MAX_FORM_SCHEMA_CHARS, type FormPropertySchema, type FormSchema, type FormSchemaMisfit, type FormContent } from './elicit-schema.js'

/** A call waiting for confirmation, as `tm.call` answers it. */
export type ConfirmationView = Extract<CallResult, { status: 'needs_confirmation' }>

/** A form-mode `elicitation/create` request's params. */
export interface ElicitFormParams {
  readonly mode: 'form'
  readonly message: string
  readonly requestedSchema: FormSchema
}

/** A URL-mode `elicitation/create` request's params (no `elicitationId` in 2026-07-28; the legacy shim adds one). */
export interface ElicitUrlParams {
  readonly mode: 'url'
  readonly message: string
  readonly url: string
}

/** An `elicitation/create` input request, as `InputRequiredResult.inputRequests` carries it. */
export interface ElicitationInputRequest {
  readonly method: 'elicitation/create'
  readonly params: ElicitFormParams | ElicitUrlParams
}

/** How a confirmation reaches the user: a form in the client, the approval page by URL, or neither (today's `isError` answer). */
export type ConfirmationMode = 'form' | 'url' | 'none'

/** The input key of a confirmation's first round; later rounds are `toolwire.confirm.2`, … */
export const CONFIRM_INPUT_KEY = 'toolwire.confirm'
/** The input key of a pending call's input, first round; later rounds are `toolwire.input.2`, … */
export const INPUT_INPUT_KEY = 'toolwire.input'

/** The characters of a summary the `approve` field's description carries. */
const APPROVE_DESCRIPTION_CHARS = 200

/**
 * The key an input request of `kind` travels under in round `round` (1 first): unique per round,
 * so a client's answer to an earlier round is never read as one to this round.
 */
export function inputKey(kind: RequestStateKind, round: number): string {
  const base = kind === 'confirm' ? CONFIRM_INPUT_KEY : INPUT_INPUT_KEY
  return round <= 1 ? base : `${base}.${round}`
}

/** Which elicitation modes a client declared: `elicitation: {}` (the 2025-11-25 spelling) is form. */
export interface ClientElicitation {
  readonly form: boolean
  readonly url: boolean
}

/**
 * The elicitation modes in a client's capabilities (the 2026 envelope's `clientCapabilities`,
 * or the 2025 `initialize` capabilities). Untrusted: anything malformed reads as none.
 */
export function clientElicitation(capabilities: unknown): ClientElicitation {
  const e = typeof capabilities === 'object' && capabilities !== null ? (capabilities as { elicitation?: unknown }).elicitation : undefined
  if (typeof e !== 'object' || e === null || Array.isArray(e)) return { form: false, url: false }
  const { form, url } = e as { form?: unknown; url?: unknown }
  const declared = (v: unknown): boolean => typeof v === 'object' && v !== null
  // a bare `elicitation: {}` is form, as in 2025-11-25
  return { form: declared(form) || (form === undefined && url === undefined), url: declared(url) }
}

/** What decides a confirmation's mode. */
export interface ConfirmationModeInput {
  /** The client's capabilities (see {@link clientElicitation}). */
  readonly capabilities: unknown
  /** The tool's `confirmVia` (`'url'`: only ever the approval page). */
  readonly confirmVia?: 'form' | 'url'
  /** Whether an approval page can give this call a link (`serveHttp`). */
  readonly linkAvailable: boolean
}

/**
 * The mode of a confirmation: `'url'` when the client declared URL elicitation and a link can be
 * made, and either the client did not declare form or the tool asks for `confirmVia: 'url'`;
 * `'form'` when the client declared form (or a bare `elicitation: {}`) and the tool does not ask
 * for URL; otherwise `'none'`: the call gets today's `isError` answer naming the confirmation
 * (and the link, when there is one). A tool asking for URL is never confirmed in a form.
 */
export function confirmationMode({ capabilities, confirmVia, linkAvailable }: ConfirmationModeInput): ConfirmationMode {
  const client = clientElicitation(capabilities)
  if (client.url && linkAvailable && (confirmVia === 'url' || !client.form)) return 'url'
  if (client.form && confirmVia !== 'url') return 'form'
  return 'none'
}

/**
 * The `elicitation/create` input request of a call waiting for confirmation. Form: the message
 * is `Confirm: <summary>` and the redacted changes, one line each (bounded: see
 * `mcpConfirmationFormMessage`), and the schema a required boolean `approve` (default `false`).
 * URL: `Approve or deny: <summary>` and the approval page's absolute `link`.
 * @throws TypeError for URL mode without a link that is an absolute URL.
 */
export function confirmationInputRequest(view: ConfirmationView, mode: 'form' | 'url', link?: string): ElicitationInputRequest {
  if (mode === 'url') {
    if (typeof link !== 'string' || !URL.canParse(link)) throw new TypeError('toolwire: a URL-mode confirmation needs the approval link as an absolute URL')
    return { method: 'elicitation/create', params: { mode: 'url', message: mcpConfirmationUrlMessage(view.summary), url: link } }
  }
  return {
    method: 'elicitation/create',
    params: {
      mode: 'form',
      message: mcpConfirmationFormMessage(view.summary, view.changes),
      requestedSchema: {
        type: 'object',
        properties: { approve: { type: 'boolean', title: 'Approve', description: dialogLine(view.summary, APPROVE_DESCRIPTION_CHARS), default: false } },
        required: ['approve'],
      },
    },
  }
}

/** A pending request as a tool's `pending({ kind: 'input', schema })` makes it (`PendingRequest.schema`), or one whose `schema` is not checked yet. */
export type PendingInput = Omit<PendingRequest, 'schema'> & { readonly schema?: unknown }

/** Why a pending request cannot become a form elicitation: the caller answers today's `isError` result. */
export type PendingInputMisfit = { readonly reason: 'not_input' | 'no_schema' } | FormSchemaMisfit

/** What {@link pendingInputRequest} answers. */
export type PendingInputRequest =
  | { readonly fits: true; readonly request: ElicitationInputRequest & { readonly params: ElicitFormParams }; readonly schema: FormSchema }
  | ({ readonly fits: false } & PendingInputMisfit)

/**
 * The form elicitation of a pending call's input: its prompt (or summary) as the message and its
 * `schema` as the requested schema, when that schema fits form elicitation's restricted subset
 * (a flat object of primitive or string-enum properties, `formSchemaOf`); otherwise why it does not.
 */
export function pendingInputRequest(request: PendingInput): PendingInputRequest {
  if (request.kind !== 'input') return { fits: false, reason: 'not_input' }
  if (request.schema === undefined) return { fits: false, reason: 'no_schema' }
  const fit = formSchemaOf(request.schema)
  if (!fit.ok) return { fits: false, reason: fit.reason, at: fit.at }
  return {
    fits: true,
    request: { method: 'elicitation/create', params: { mode: 'form', message: mcpInputMessage(request), requestedSchema: fit.schema } },
    schema: fit.schema,
  }
}

/** What a retry's answer under the expected key means. */
export type InputAnswer =
  /** No usable answer under the key: ask the same again (the revision says so, not an error). */
  | { readonly kind: 'missing' }
  /** The confirmation form was accepted with `approve: true`. */
  | { readonly kind: 'approve' }
  /** Declined, cancelled, or accepted with `approve: false`: the call is denied. */
  | { readonly kind: 'decline'; readonly action: 'decline' | 'cancel' | 'accept' }
  /** The user agreed to open the approval page: wait for the page's decision. */
  | { readonly kind: 'url_accept' }
  /** The input form's content, checked against its schema (only its properties). */
  | { readonly kind: 'input'; readonly content: { readonly [name: string]: import('../core/types.js').JsonValue } }
  /** An accepted answer that does not fit what was asked: ask again; `problem` is for logs. */
  | { readonly kind: 'invalid'; readonly problem: string }

/** What was asked under the key: a confirmation in a mode, or input for a form schema. */
export type ExpectedInput = { readonly kind: 'confirm'; readonly mode: 'form' | 'url' } | { readonly kind: 'input'; readonly schema: FormSchema }

/** What an opened state asked for: a confirmation by URL when it carries a link, else in a form; or input for its schema. */
export function expectedInputOf(state: RequestState): ExpectedInput {
  if (state.kind === 'input') return { kind: 'input', schema: state.schema! }
  return { kind: 'confirm', mode: state.link === undefined ? 'form' : 'url' }
}

/**
 * Reads the answer under `key` of a retry's `inputResponses` (untrusted: never throws). A missing
 * key, or an entry that is not an elicitation result, is `missing`. `decline` and `cancel` deny.
 * Confirmation form: `accept` with `approve: true` approves, `approve: false` denies, anything else
 * is `invalid`. URL: `accept` is `url_accept`. Input: `accept` with content that fits the schema
 * is `input`, else `invalid`.
 */
export function readInputAnswer(responses: unknown, key: string, expected: ExpectedInput): InputAnswer {
  if (typeof responses !== 'object' || responses === null || !Object.hasOwn(responses, key)) return { kind: 'missing' }
  const entry = (responses as Record<string, unknown>)[key]
  if (typeof entry !== 'object' || entry === null) return { kind: 'missing' }
  const { action, content } = entry as { action?: unknown; content?: unknown }
  if (action === 'decline' || action === 'cancel') return { kind: 'decline', action }
  if (action !== 'accept') return { kind: 'missing' }
  if (expected.kind === 'confirm') {
    if (expected.mode === 'url') return { kind: 'url_accept' }
    const approve = typeof content === 'object' && content !== null ? (content as { approve?: unknown }).approve : undefined
    if (approve === true) return { kind: 'approve' }
    if (approve === false) return { kind: 'decline', action: 'accept' }
    return { kind: 'invalid', problem: '"approve" must be a boolean' }
  }
  const checked = formContentOf(expected.schema, content)
  return checked.ok ? { kind: 'input', content: checked.content } : { kind: 'invalid', problem: checked.problem }
}
