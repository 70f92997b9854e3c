/**
 * Approval tokens: the `confirmId` a confirmation hands out, bound to its call.
 *
 * With an `approvalSecret`, a token is `tw1.<claims>.<mac>`: the claims (confirmation id,
 * call id, tool, canonical input hash) as base64url JSON, and an HMAC-SHA256 over the
 * version and the claims. `verifyApproval` checks the MAC with a timing-safe compare before
 * anything is looked up, so a forged or altered token costs no store read; the app then
 * checks that the parked call it finds has the same call id, tool and input hash.
 *
 * Without a secret, the id itself is the capability: {@link randomId} gives 128 random bits.
 */
import { createHmac, timingSafeEqual } from 'node:crypto'

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

function secretBytes(secret: string | Uint8Array): Buffer {
  const bytes = typeof secret === 'string' ? Buffer.from(secret, 'utf8') : Buffer.from(secret)
  if (bytes.length < MIN_SECRET_BYTES) throw new TypeError(`toolwire: approvalSecret must be at least ${MIN_SECRET_BYTES} bytes`)
  return bytes
}

function mac(secret: Buffer, body: string): Buffer {
  return createHmac('sha256', secret).update(`${VERSION}.${body}`, 'utf8').digest()
}

/** The signed token for a confirmation. @throws TypeError when the secret is shorter than 16 bytes. */
export function signApproval(secret: string | Uint8Array, claims: ApprovalClaims): string {
  const { confirmationId, callId, tool, inputHash } = claims
  const body = Buffer.from(JSON.stringify([confirmationId, callId, tool, inputHash]), 'utf8').toString('base64url')
  return `${VERSION}.${body}.${mac(secretBytes(secret), body).toString('base64url')}`
}

/**
 * The claims of a token whose MAC checks out under `secret`; `undefined` for anything else
 * (forged, altered, truncated, another secret, not a token at all). Never throws for a bad token.
 */
export function verifyApproval(secret: string | Uint8Array, token: unknown): ApprovalClaims | undefined {
  if (typeof token !== 'string' || token.length > MAX_TOKEN) return undefined
  const parts = token.split('.')
  if (parts.length !== 3 || parts[0] !== VERSION) return undefined
  const body = parts[1]!
  const given = Buffer.from(parts[2]!, 'base64url')
  const expected = mac(secretBytes(secret), body)
  // base64url decoding drops stray characters: only the canonical spelling of the MAC is accepted
  if (given.length !== expected.length || given.toString('base64url') !== parts[2]) return undefined
  if (!timingSafeEqual(given, expected)) return undefined
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
