/**
 * A remote server's `InputRequiredResult` (MCP 2026-07-28, multi-round-trip requests) as a local
 * suspension of an imported tool, and the `inputResponses` of the retry that answers it. Pure:
 * no SDK import, no I/O. The remote `requestState` is opaque: it travels back byte for byte, and
 * is kept only in the parked call's resume state (never in a result, an event or a log).
 */
import type { JsonValue, PendingSchema } from '../../core/types.js'

/** How many input rounds one imported call answers before it fails (the SDK's default `maxRounds`). */
export const REMOTE_INPUT_MAX_ROUNDS = 10

/** The longest summary or prompt kept from a remote elicitation message. */
const MESSAGE_MAX = 500

/** What an imported call's suspension keeps for its retry (the parked call's resume state). */
export interface RemoteInputState {
  readonly v: 1
  /** The `inputRequests` key the answer goes under. */
  readonly key: string
  /** What was asked: a confirmation form (its one boolean field), a URL confirmation, or form input; or nothing (`task`: a remote task still working). */
  readonly ask: 'confirm-form' | 'confirm-url' | 'input' | 'task'
  /** The boolean field of a confirmation form (`approve` on a toolwire server). */
  readonly field?: string
  /** The remote's `requestState`, echoed byte for byte on the retry. */
  readonly requestState?: string
  /** The summary of a confirmation, for the declined result. */
  readonly summary?: string
  /** The round this state answers (1 first). */
  readonly round: number
  /** The remote task the input was asked in (answered by `tasks/update`), or that is still working. */
  readonly taskId?: string
}

/** What a remote `input_required` becomes locally. */
export type RemoteAsk =
  | { readonly kind: 'confirmation'; readonly summary: string; readonly url?: string; readonly state: RemoteInputState }
  | { readonly kind: 'input'; readonly prompt: string; readonly schema: PendingSchema; readonly state: RemoteInputState }
  /** Nothing importMcpTools can ask a user for (sampling, roots, several requests at once, a malformed request). */
  | { readonly kind: 'unsupported'; readonly what: string }

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

function cut(text: string): string {
  return text.length > MESSAGE_MAX ? `${text.slice(0, MESSAGE_MAX)}…` : text
}

/** An http(s) URL as its normalized href, else `undefined`. */
export function httpUrl(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined
  try {
    const parsed = new URL(value)
    return parsed.protocol === 'https:' || parsed.protocol === 'http:' ? parsed.href : undefined
  } catch {
    return undefined
  }
}

/** The one boolean property of a form schema (a confirmation form), or `undefined`. */
function confirmField(schema: Record<string, unknown>): string | undefined {
  const props = schema.properties
  if (!isObject(props)) return undefined
  const names = Object.keys(props)
  if (names.length !== 1) return undefined
  const prop = props[names[0]!]
  return isObject(prop) && prop.type === 'boolean' ? names[0] : undefined
}

/**
 * What the remote asks for, from an `input_required` result (untrusted: never throws). One
 * `elicitation/create` request is answered: a URL one, or a form whose only field is a boolean
 * (toolwire's `approve` form), is a confirmation whose summary is the message; any other form is
 * input for its `requestedSchema`. Anything else is `unsupported`.
 */
export function remoteAsk(result: { readonly inputRequests?: unknown; readonly requestState?: unknown }, round: number): RemoteAsk {
  const requests = isObject(result.inputRequests) ? result.inputRequests : {}
  const keys = Object.keys(requests)
  if (keys.length !== 1) return { kind: 'unsupported', what: keys.length === 0 ? 'no input request' : `${keys.length} input requests at once` }
  const key = keys[0]!
  const request = requests[key]
  const method = isObject(request) && typeof request.method === 'string' ? request.method : 'a malformed request'
  if (method !== 'elicitation/create' || !isObject(request) || !isObject(request.params)) return { kind: 'unsupported', what: method }
  const params = request.params
  const message = cut(typeof params.message === 'string' && params.message !== '' ? params.message : 'a call of a remote tool')
  const base = { v: 1 as const, key, round, ...(typeof result.requestState === 'string' ? { requestState: result.requestState } : {}) }
  if (params.mode === 'url') {
    const url = httpUrl(params.url)
    const state: RemoteInputState = { ...base, ask: 'confirm-url', summary: message }
    return url === undefined ? { kind: 'confirmation', summary: message, state } : { kind: 'confirmation', summary: message, url, state }
  }
  const schema = params.requestedSchema
  if ((params.mode !== undefined && params.mode !== 'form') || !isObject(schema)) return { kind: 'unsupported', what: 'an elicitation without a form schema' }
  const field = confirmField(schema)
  if (field !== undefined) return { kind: 'confirmation', summary: message, state: { ...base, ask: 'confirm-form', field, summary: message } }
  return { kind: 'input', prompt: message, schema: schema as PendingSchema, state: { ...base, ask: 'input' } }
}

/** A resume state this module wrote, read back from the parked call (untrusted JSON), or `undefined`. */
export function remoteInputStateOf(value: JsonValue | undefined): RemoteInputState | undefined {
  if (!isObject(value) || value.v !== 1 || typeof value.key !== 'string' || !Number.isSafeInteger(value.round)) return undefined
  if (value.ask !== 'confirm-form' && value.ask !== 'confirm-url' && value.ask !== 'input' && value.ask !== 'task') return undefined
  if (value.taskId !== undefined && typeof value.taskId !== 'string') return undefined
  if (value.requestState !== undefined && typeof value.requestState !== 'string') return undefined
  if (value.ask === 'confirm-form' && typeof value.field !== 'string') return undefined
  return value as unknown as RemoteInputState
}

/** An elicitation result, as the retry's `inputResponses` carries it. */
export type RemoteInputResponse = { readonly action: 'accept'; readonly content?: { readonly [key: string]: JsonValue } } | { readonly action: 'decline' }

/** What a local answer (`tm.confirm`'s `{ approve }`, or `tm.resume`'s answer) sends back. */
export type RemoteReply =
  | { readonly ok: true; readonly response: RemoteInputResponse; readonly declined: boolean }
  | { readonly ok: false; readonly problem: string }

/**
 * The retry's response to `state` for `answer`: a confirmation takes `{ approve: boolean }`
 * (accept with the form's field `true`, or accept for URL mode; `false` declines); input takes
 * the answer object as the form's content (the manager checked it against the schema).
 */
export function remoteReply(state: RemoteInputState, answer: unknown): RemoteReply {
  if (state.ask === 'task') return { ok: false, problem: 'a working task takes no answer' }
  if (state.ask === 'input') {
    if (!isObject(answer)) return { ok: false, problem: 'the answer must be an object of the requested fields' }
    return { ok: true, declined: false, response: { action: 'accept', content: answer as { [key: string]: JsonValue } } }
  }
  const approve = isObject(answer) ? answer.approve : undefined
  if (typeof approve !== 'boolean') return { ok: false, problem: 'the answer must be { approve: true } or { approve: false }' }
  if (!approve) return { ok: true, declined: true, response: { action: 'decline' } }
  return { ok: true, declined: false, response: state.ask === 'confirm-url' ? { action: 'accept' } : { action: 'accept', content: { [state.field!]: true } } }
}
