/**
 * Approval tokens: the `confirmId` a confirmation hands out, bound to its call.
 *
 * With an `approvalSecret`, a token is `tw1.<claims>.<mac>`: the claims (confirmation id,
 * call id, tool, canonical input hash) as base64url JSON, and an HMAC-SHA256 over the
 * version and the claims. `verifyApproval` checks the MAC with a timing-safe compare before
 * anything is looked up, so a forged or altered token costs no store read; the app then
 * checks that the parked call it finds has the same call id, tool and input hash.
 *
 * With several secrets (rotation, newest first), the first signs and any verifies.
 *
 * Without a secret, the id itself is the capability: {@link randomId} gives 128 random bits.
 */
import { createHmac, timingSafeEqual } from 'node:crypto'
import { distinct } from './codec.js'

/** What an approval token binds. */
export interface ApprovalClaims {
  /** The parked confirmation's id in the store. */
  readonly confirmationId: string
  readonly callId: string
  readonly tool: string
  /** {@link inputHash} of the call's input. */
  readonly inputHash: string
}

const VERSION = 'tw1'
/** Secrets shorter than this are refused: an HMAC key should carry at least 128 bits. */
const MIN_SECRET_BYTES = 16
/** Tokens longer than this are refused unread. */
const MAX_TOKEN = 4096

/** An approval secret: at least 16 bytes, or a string whose UTF-8 is. */
export type ApprovalSecret = string | Uint8Array

/**
 * One approval secret, or several newest first (rotation): the first signs, every one
 * verifies. See docs/store.md, "Rotating secrets".
 */
export type ApprovalSecrets = ApprovalSecret | readonly ApprovalSecret[]

function secretBytes(secret: ApprovalSecret, what = 'approvalSecret'): Buffer {
  let bytes: Buffer
  if (typeof secret === 'string') bytes = Buffer.from(secret, 'utf8')
  else if (secret instanceof Uint8Array) bytes = Buffer.from(secret)
  // no Buffer.from here: Node's own message would print the value
  else throw new TypeError(`toolwire: ${what} must be a string or a Uint8Array`)
  if (bytes.length < MIN_SECRET_BYTES) throw new TypeError(`toolwire: ${what} must be at least ${MIN_SECRET_BYTES} bytes`)
  return bytes
}

/**
 * The bytes of each secret of `secrets` (one, or a non-empty list newest first), each checked
 * as one is: the first signs, all verify.
 * @throws TypeError for a secret shorter than 16 bytes, an empty list or a secret listed twice;
 * the message names the secret's place (`approvalSecret[1]`), never the secret.
 */
export function approvalSecretList(secrets: ApprovalSecrets, option = 'approvalSecret'): readonly Buffer[] {
  if (!Array.isArray(secrets)) return [secretBytes(secrets as ApprovalSecret, option)]
  return distinct(
    (secrets as readonly ApprovalSecret[]).map((secret, i) => secretBytes(secret, `${option}[${i}]`)),
    option,
    'give at least one secret, newest first',
  )
}

function mac(secret: Buffer, body: string): Buffer {
  return createHmac('sha256', secret).update(`${VERSION}.${body}`, 'utf8').digest()
}

/**
 * The signed token for a confirmation, under `secret` (the first of a list).
 * @throws TypeError when a secret is shorter than 16 bytes ({@link approvalSecretList}).
 */
export function signApproval(secret: ApprovalSecrets, claims: ApprovalClaims): string {
  const { confirmationId, callId, tool, inputHash } = claims
  const body = Buffer.from(JSON.stringify([confirmationId, callId, tool, inputHash]), 'utf8').toString('base64url')
  return `${VERSION}.${body}.${mac(approvalSecretList(secret)[0]!, body).toString('base64url')}`
}

/**
 * The claims of a token whose MAC checks out under `secret` (any secret of a list: the token
 * does not say which signed it, so each is tried); `undefined` for anything else (forged,
 * altered, truncated, signed with a secret not given, not a token at all). Never throws for a
 * bad token. @throws TypeError when a secret given is malformed ({@link approvalSecretList}).
 */
export function verifyApproval(secret: ApprovalSecrets, token: unknown): ApprovalClaims | undefined {
  const secrets = approvalSecretList(secret)
  if (typeof token !== 'string' || token.length > MAX_TOKEN) return undefined
  const parts = token.split('.')
  if (parts.length !== 3 || parts[0] !== VERSION) return undefined
  const body = parts[1]!
  const given = Buffer.from(parts[2]!, 'base64url')
  // base64url decoding drops stray characters: only the canonical spelling of the MAC is accepted
  if (given.length !== 32 || given.toString('base64url') !== parts[2]) return undefined
  if (!secrets.some((s) => timingSafeEqual(given, mac(s, body)))) return undefined
  let claims: unknown
  try {
    claims = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'))
  } catch {
    return undefined
  }
  if (!Array.isArray(claims) || claims.length !== 4 || !claims.every((c) => typeof c === 'string')) return undefined
  const [confirmationId, callId, tool, inputHash] = claims as [string, string, string, string]
  return Object.freeze({ confirmationId, callId, tool, inputHash })
}
