/**
 * Who is calling. `serveHttp` makes a principal from each verified access token; your own code
 * passes one with `tm.call(name, input, { principal })`. A record made with a principal (a
 * parked call, an undo, a task, an idempotency key) is found only by the same subject of the
 * same issuer: for anyone else it does not exist.
 *
 * ```ts
 * const alice = { subject: 'alice', issuer: 'https://id.example.com', scopes: ['files:write'] }
 * await tm.call('write_file', { path: 'a.txt' }, { principal: alice })
 * ```
 */
import { createHash } from 'node:crypto'

/** Who is calling: from a verified access token (`serveHttp`), or given by your code. */
export interface Principal {
  /** The token's `sub`: 1 to 1024 characters of well-formed text. */
  readonly subject: string
  /** The token's `iss`, exactly as the issuer wrote it (`''` for a principal your code makes without one). */
  readonly issuer: string
  /** The OAuth client the token was issued to (`client_id`, else `azp`), when it says. */
  readonly clientId?: string
  /** The granted scopes, without duplicates: at most 256, each 1 to 256 visible ASCII characters other than `"` and `\`. */
  readonly scopes: readonly string[]
}

/** Scopes that imply others: `{ 'files:admin': ['files:write', 'files:read'] }` (one level per entry; chains are followed). */
export type ImpliedScopes = Readonly<Record<string, readonly string[]>>

const MAX_SUBJECT = 1024
const MAX_ISSUER = 2048
const MAX_CLIENT_ID = 1024
const MAX_SCOPES = 256
const MAX_SCOPE = 256
/** A lone surrogate: text that is not well-formed Unicode (records would differ between TS and Rust). */
const LONE_SURROGATE = /\p{Cs}/u
/** RFC 6749 §3.3 scope-token: visible ASCII except space, `"` and `\`. */
const SCOPE_TOKEN = /^[\x21\x23-\x5B\x5D-\x7E]+$/

/** Whether `value` is a scope token (RFC 6749 §3.3) of at most 256 characters. */
export function isScopeToken(value: unknown): value is string {
  return typeof value === 'string' && value.length <= MAX_SCOPE && SCOPE_TOKEN.test(value)
}

/**
 * A frozen copy of `value` when it is a principal, else a sentence saying what is wrong
 * (for an `invalid_options` refusal). Unknown fields are dropped.
 */
export function readPrincipal(value: unknown): Principal | string {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'principal must be an object { subject, issuer, scopes }'
  const { subject, issuer, clientId, scopes } = value as Record<string, unknown>
  if (typeof subject !== 'string' || subject.length === 0 || subject.length > MAX_SUBJECT || LONE_SURROGATE.test(subject)) {
    return `principal.subject must be well-formed text of 1 to ${MAX_SUBJECT} characters`
  }
  if (typeof issuer !== 'string' || issuer.length > MAX_ISSUER || LONE_SURROGATE.test(issuer)) return `principal.issuer must be well-formed text of at most ${MAX_ISSUER} characters`
  if (clientId !== undefined && (typeof clientId !== 'string' || clientId.length === 0 || clientId.length > MAX_CLIENT_ID || LONE_SURROGATE.test(clientId))) {
    return `principal.clientId must be well-formed text of 1 to ${MAX_CLIENT_ID} characters`
  }
  if (!Array.isArray(scopes) || scopes.length > MAX_SCOPES) return `principal.scopes must be an array of at most ${MAX_SCOPES} scopes`
  const unique = new Set<string>()
  for (const scope of scopes) {
    if (!isScopeToken(scope)) return `principal.scopes must hold scope tokens of 1 to ${MAX_SCOPE} visible ASCII characters (no space, '"' or '\\')`
    unique.add(scope)
  }
  const principal: { subject: string; issuer: string; clientId?: string; scopes: readonly string[] } = {
    subject,
    issuer,
    scopes: Object.freeze([...unique]),
  }
  if (clientId !== undefined) principal.clientId = clientId
  return Object.freeze(principal)
}

/**
 * The principal's owner key: a hex SHA-256 of its issuer and subject, domain-separated. Owner
 * columns, idempotency keys, task owners and sealed request state compare this key, so a newer
 * token of the same subject (other scopes, other client) owns the same records.
 */
export function principalKey(principal: Pick<Principal, 'subject' | 'issuer'>): string {
  // JSON keeps the two apart whatever characters they hold
  return createHash('sha256').update('toolwire principal v1\u0000', 'utf8').update(JSON.stringify([principal.issuer, principal.subject]), 'utf8').digest('hex')
}

/**
 * The scopes of `required` that `granted` lacks, in `required`'s order; `[]` when every one is
 * granted, directly or through `implied` (followed transitively, cycles ignored).
 */
export function missingScopes(granted: readonly string[], required: readonly string[], implied?: ImpliedScopes): readonly string[] {
  if (required.length === 0) return []
  const held = new Set(granted)
  if (implied !== undefined) {
    const pending = [...granted]
    for (let scope = pending.pop(); scope !== undefined; scope = pending.pop()) {
      const more = Object.hasOwn(implied, scope) ? implied[scope] : undefined
      for (const next of more ?? []) {
        if (!held.has(next)) {
          held.add(next)
          pending.push(next)
        }
      }
    }
  }
  return required.filter((scope) => !held.has(scope))
}

/** Who began a run or approved it, as records name them: the subject, the issuer and the client, never the scopes. */
export interface PrincipalRef {
  readonly subject: string
  readonly issuer: string
  readonly clientId?: string
}

/** The frozen {@link PrincipalRef} of `principal`. */
export function principalRef(principal: Principal | PrincipalRef): PrincipalRef {
  const ref: { subject: string; issuer: string; clientId?: string } = { subject: principal.subject, issuer: principal.issuer }
  if (principal.clientId !== undefined) ref.clientId = principal.clientId
  return Object.freeze(ref)
}

/**
 * The principal an answer (`tm.confirm`, `resume`, `cancel`, `undo`...) is given with: a frozen
 * copy, `undefined` for none (the operator), or what is wrong with it (never read as the operator).
 */
export function answererOf(options: { readonly principal?: unknown } | undefined): Principal | undefined | string {
  let value: unknown
  try {
    value = options?.principal
  } catch {
    return 'principal'
  }
  return value === undefined ? undefined : readPrincipal(value)
}

/** `decision.approvedBy` as records keep it (frozen), `undefined` for none, or what is wrong with it. */
export function approverOf(decision: { readonly approvedBy?: unknown } | undefined): PrincipalRef | undefined | string {
  const value: unknown = decision?.approvedBy
  if (value === undefined) return undefined
  const { subject, issuer, clientId } = (typeof value === 'object' && value !== null ? value : {}) as Record<string, unknown>
  if (typeof subject !== 'string' || subject.length === 0 || typeof issuer !== 'string' || (clientId !== undefined && typeof clientId !== 'string')) {
    return 'approvedBy must be { subject, issuer, clientId? }'
  }
  return principalRef(clientId === undefined ? { subject, issuer } : { subject, issuer, clientId })
}
