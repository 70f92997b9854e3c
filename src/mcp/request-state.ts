/**
 * The `requestState` of toolwire's multi-round-trip requests (MCP 2026-07-28, basic/patterns/mrtr):
 * what a `tools/call` answered with `input_required` needs to continue on the client's retry,
 * on any instance, with no server memory. The state is sealed (AES-256-GCM under a key derived
 * with HKDF-SHA256 from the approval secret) and binds the tool, the SHA-256 of the canonical
 * arguments, the call id, the confirmation or pending request id, the kind, the principal (the
 * caller's `principalKey` when the request carries a verified principal, so a newer token of the
 * same subject opens it and another subject's is `wrong_principal`; else a digest of the static
 * bearer token, or `''`), the round and an expiry. With several secrets (rotation,
 * newest first) the first seals and any listed one opens. Without a secret (stdio, a manager
 * without a store) the key is random per process: a state opens only in the process that made it.
 *
 * The wire form is `twrs1.<base64url(key id | IV | ciphertext | tag)>`. The key id (8 bytes
 * derived from the key, authenticated as associated data) tells a state sealed under a secret
 * no longer listed from an altered one; it reveals nothing of the secret. Opening never throws
 * for a bad state: it answers a typed {@link RequestStateRefusal} that names no secret, for logs.
 * A refused state is answered on the wire with the SDK's frozen {@link INVALID_REQUEST_STATE}
 * error, whatever the reason, and nothing runs. No MCP SDK import.
 */
import { createHash, hkdfSync, randomBytes } from 'node:crypto'
import { approvalSecretList, type ApprovalSecrets } from '../runtime/store/approval.js'
import { inputHash } from '../runtime/store/codec.js'
import { openBytes, sealBytes, SEALED_MIN_BYTES } from './seal.js'
import type { FormSchema } from './elicit-schema.js'

/** What a state continues: a confirmation (`needs_confirmation`) or a tool's `pending({ kind: 'input' })`. */
export type RequestStateKind = 'confirm' | 'input'

/** What {@link RequestStateCodec.seal} binds. */
export interface RequestStateInit {
  readonly kind: RequestStateKind
  readonly tool: string
  /** The call's arguments, as the request carried them (hashed: the state holds their SHA-256 only). */
  readonly arguments: unknown
  readonly callId: string
  /** The `confirmId` of a confirmation, the pending request's id of an input. */
  readonly id: string
  /** The caller's `principalKey` (a verified principal), else {@link principalOf} the request's bearer token (`''` without one). */
  readonly principal: string
  /** The round of input requests this state answers (1 first): it names the expected key (`inputKey`). Default 1. */
  readonly round?: number
  /** The confirmation page's link path, for a URL-mode confirmation whose decision the retry waits for. */
  readonly link?: string
  /**
   * The form schema an input request asked for (required for `kind: 'input'`, refused for
   * `'confirm'`): the retry checks the answer against it with no server memory. `formSchemaOf`
   * bounds it, so a state stays under 20,000 characters.
   */
  readonly schema?: FormSchema
}

/** An opened state: what was sealed, with the arguments' hash and the expiry. */
export interface RequestState {
  readonly kind: RequestStateKind
  readonly tool: string
  /** Lowercase hex SHA-256 of the canonical JSON of the arguments (`inputHash`). */
  readonly argumentsHash: string
  readonly callId: string
  readonly id: string
  readonly principal: string
  readonly round: number
  readonly link?: string
  /** The form schema of an input request (`kind: 'input'` only). */
  readonly schema?: FormSchema
  /** When the state stops opening, in ms since the epoch (on the codec's clock). */
  readonly expiresAt: number
}

/**
 * Why a state was refused. `malformed`: not a state toolwire makes; `tampered`: made under a
 * listed secret and altered; `other_secret`: made under a secret not listed (removed by rotation,
 * another deployment, or another process's random key); `expired`; `wrong_tool`,
 * `wrong_arguments`, `wrong_principal`: a good state sent with another call or by someone else.
 */
export type RequestStateRefusal = 'malformed' | 'tampered' | 'other_secret' | 'expired' | 'wrong_tool' | 'wrong_arguments' | 'wrong_principal'

/** What {@link RequestStateCodec.open} answers. */
export type OpenedRequestState = { readonly ok: true; readonly state: RequestState } | { readonly ok: false; readonly reason: RequestStateRefusal }

/** The call a state is presented with: it must be the call it was sealed for. */
export interface RequestStateCall {
  readonly tool: string
  readonly arguments: unknown
  readonly principal: string
}

/**
 * The JSON-RPC error every refused state is answered with: the SDK's frozen text (its
 * `requestState.verify` seam answers the same), whatever the reason, which goes to logs only.
 */
export const INVALID_REQUEST_STATE = Object.freeze({
  code: -32602,
  message: 'Invalid or expired requestState',
  data: Object.freeze({ reason: 'invalid_request_state' }),
})

const REFUSAL_TEXT: Readonly<Record<RequestStateRefusal, string>> = Object.freeze({
  malformed: 'not a requestState this server makes',
  tampered: 'altered after it was sealed',
  other_secret: 'sealed under a secret this server does not list (rotated out, another deployment, or another process)',
  expired: 'expired',
  wrong_tool: 'sealed for another tool',
  wrong_arguments: 'sealed for other arguments',
  wrong_principal: 'sealed for another principal',
})

/** The log text of a refusal (no secret, no state): `requestState refused: expired`. */
export function requestStateRefusalText(reason: RequestStateRefusal): string {
  return `requestState refused: ${REFUSAL_TEXT[reason]}`
}

/** A refused state, thrown by {@link RequestStateCodec.verify} (the SDK's hook): `reason` is for logs; the message names no secret. */
export class RequestStateError extends Error {
  constructor(readonly reason: RequestStateRefusal) {
    super(`toolwire: ${requestStateRefusalText(reason)}`)
    this.name = 'RequestStateError'
  }
}

/**
 * The principal a state binds for a request without a verified principal (the static-token and
 * open modes): lowercase hex SHA-256 of the bearer token, `''` without one. Domain-separated from
 * `principalKey`, which a request with a principal binds instead.
 */
export function principalOf(token: string | undefined): string {
  return token === undefined || token === '' ? '' : createHash('sha256').update(`toolwire principal\u0000${token}`, 'utf8').digest('hex')
}

/** Options of {@link RequestStateCodec}. */
export interface RequestStateCodecOptions {
  /** The approval secret, or several newest first (rotation). Absent: a random key of this process. */
  readonly secret?: ApprovalSecrets
  /** How long a state opens, in ms (default 10 minutes, the manager's default `confirmTtlMs`). */
  readonly ttlMs?: number
  /** The clock expiries are dated with (default `Date.now`). */
  readonly now?: () => number
}

const PREFIX = 'twrs1.'
const VERSION = 1
const KEY_ID_BYTES = 8
/** The longest state opened: a URL-mode state carries a shared link path (about 2 KB, at most 12 KB). */
const MAX_STATE_CHARS = 20_000
const STATE_SHAPE = /^twrs1\.[A-Za-z0-9_-]+$/
const KINDS: ReadonlySet<unknown> = new Set(['confirm', 'input'])

interface StateKey {
  readonly id: Buffer
  readonly key: Buffer
}

function stateKey(secret: Buffer): StateKey {
  const derive = (info: string, bytes: number): Buffer => Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), info, bytes))
  return { key: derive('toolwire mcp requestState v1', 32), id: derive('toolwire mcp requestState key id v1', KEY_ID_BYTES) }
}

let processSecret: Buffer | undefined
/** The random secret of this process, for codecs without an approval secret (one per process, so every server of it shares it). */
function processKey(): Buffer {
  return (processSecret ??= randomBytes(32))
}

function associatedData(keyId: Buffer): Buffer {
  return Buffer.concat([Buffer.from(PREFIX, 'latin1'), keyId])
}

/** The state a decrypted payload holds; `undefined` when it is not one this version writes. */
function unpack(plain: Buffer): RequestState | undefined {
  let fields: unknown
  try {
    fields = JSON.parse(plain.toString('utf8'))
  } catch {
    return undefined
  }
  if (!Array.isArray(fields) || fields.length !== 11) return undefined
  const [v, kind, tool, argumentsHash, callId, id, principal, round, expiresAt, link, schema] = fields as unknown[]
  const strings = [tool, argumentsHash, callId, id, principal]
  if (v !== VERSION || !KINDS.has(kind) || !strings.every((s) => typeof s === 'string')) return undefined
  if (!Number.isSafeInteger(round) || (round as number) < 1 || typeof expiresAt !== 'number' || !(link === null || typeof link === 'string')) return undefined
  // an input state carries its form schema, a confirmation none
  if ((kind === 'input') !== (typeof schema === 'object' && schema !== null && !Array.isArray(schema))) return undefined
  const state = { kind, tool, argumentsHash, callId, id, principal, round, expiresAt } as { -readonly [K in keyof RequestState]: RequestState[K] }
  if (typeof link === 'string') state.link = link
  if (kind === 'input') state.schema = schema as FormSchema
  return Object.freeze(state)
}

/**
 * Seals and opens `requestState`. Make one per server factory (it derives its keys once) and
 * share it across the per-request servers: `verify` is the SDK's `ServerOptions.requestState.verify`
 * hook; `check` then binds the opened state to the request in the `tools/call` handler.
 */
export class RequestStateCodec {
  /** Newest first: the first seals, any opens. */
  private readonly keys: readonly StateKey[]
  private readonly ttlMs: number
  private readonly now: () => number

  /** @throws TypeError for a malformed secret or list (the message names its place, never the secret), or a `ttlMs` that is not a positive number. */
  constructor(options: RequestStateCodecOptions = {}) {
    const secrets = options.secret === undefined ? [processKey()] : approvalSecretList(options.secret)
    this.keys = secrets.map(stateKey)
    const ttlMs = options.ttlMs ?? 10 * 60_000
    if (typeof ttlMs !== 'number' || !(ttlMs > 0)) throw new TypeError('toolwire: requestState ttlMs must be a positive number of ms')
    this.ttlMs = ttlMs
    this.now = options.now ?? Date.now
  }

  /**
   * A sealed state for `init`, opening until `ttlMs` from now.
   * @throws TypeError when the arguments have no JSON form, the round is not a positive integer,
   * or the schema is missing from an input state or given to a confirmation.
   */
  seal(init: RequestStateInit): string {
    const round = init.round ?? 1
    if (!Number.isSafeInteger(round) || round < 1) throw new TypeError('toolwire: a requestState round is a positive integer')
    if ((init.kind === 'input') !== (init.schema !== undefined)) throw new TypeError('toolwire: an input requestState carries its form schema, a confirmation none')
    const fields = [VERSION, init.kind, init.tool, inputHash(init.arguments), init.callId, init.id, init.principal, round, this.now() + this.ttlMs, init.link ?? null, init.schema ?? null]
    const { id, key } = this.keys[0]!
    const sealed = sealBytes(key, associatedData(id), Buffer.from(JSON.stringify(fields), 'utf8'))
    return PREFIX + Buffer.concat([id, sealed]).toString('base64url')
  }

  /**
   * The state `token` seals, when it was sealed under a listed secret, is unaltered and has
   * not expired, and, given `call`, was sealed for that tool, those arguments and that
   * principal; otherwise the reason it is refused. Never throws.
   */
  open(token: unknown, call?: RequestStateCall): OpenedRequestState {
    const reason = (r: RequestStateRefusal): OpenedRequestState => ({ ok: false, reason: r })
    if (typeof token !== 'string' || token.length > MAX_STATE_CHARS || !STATE_SHAPE.test(token)) return reason('malformed')
    const body = token.slice(PREFIX.length)
    const raw = Buffer.from(body, 'base64url')
    // base64url decoding drops stray bits: only the canonical spelling opens
    if (raw.length < KEY_ID_BYTES + SEALED_MIN_BYTES || raw.toString('base64url') !== body) return reason('malformed')
    const keyId = raw.subarray(0, KEY_ID_BYTES)
    const key = this.keys.find((k) => k.id.equals(keyId))
    if (key === undefined) return reason('other_secret')
    const plain = openBytes(key.key, associatedData(key.id), raw.subarray(KEY_ID_BYTES))
    if (plain === undefined) return reason('tampered')
    const state = unpack(plain)
    if (state === undefined) return reason('malformed')
    if (this.now() > state.expiresAt) return reason('expired')
    const wrong = call === undefined ? undefined : this.check(state, call)
    return wrong === undefined ? { ok: true, state } : reason(wrong)
  }

  /**
   * The SDK's `ServerOptions.requestState.verify` hook: the opened state (what
   * `ctx.mcpReq.requestState()` then returns). @throws RequestStateError for a refused state.
   */
  readonly verify = (token: string): RequestState => {
    const opened = this.open(token)
    if (!opened.ok) throw new RequestStateError(opened.reason)
    return opened.state
  }

  /** Why `state` (opened) does not belong to `call`, or `undefined` when it does. Never throws. */
  check(state: RequestState, call: RequestStateCall): RequestStateRefusal | undefined {
    if (state.tool !== call.tool) return 'wrong_tool'
    let hash: string
    try {
      hash = inputHash(call.arguments)
    } catch {
      return 'wrong_arguments'
    }
    if (hash !== state.argumentsHash) return 'wrong_arguments'
    if (state.principal !== call.principal) return 'wrong_principal'
    return undefined
  }
}
