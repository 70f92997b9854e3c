/**
 * Who an MCP request acts for: the one place every handler (tools/list, tools/call, MRTR
 * retries, the 2025 elicitation shim, tasks/get|update|cancel) reads it from. The HTTP gate
 * verifies the token and hands the principal down in the request's `AuthInfo`
 * (`ctx.http.authInfo`, auth/auth-info.ts); without one (stdio, the static-token and open
 * modes) the request acts as before, under the transport's fixed defaults. No SDK import at
 * run time (tasks.ts uses it).
 */
import { createHash } from 'node:crypto'
import type { ServerContext } from '@modelcontextprotocol/server'
import { principalRef, type Principal } from '../core/principal.js'
import type { ConfirmDecision } from '../runtime/manager.js'
import { principalOfAuthInfo } from './auth/auth-info.js'

/** What a transport fixes for requests that carry no principal. */
export interface PrincipalDefaults {
  /** The `requestState` principal of the bearer token (`principalOf(token)`; `''` without one). */
  readonly principal?: string
  /** `taskOwner` of the bearer token (`''` without one). */
  readonly owner?: string
  /**
   * `true` when every request must carry a principal (`serveHttp({ auth })`): one without is
   * refused with an internal error instead of acting as the operator.
   */
  readonly principalRequired?: boolean
}

/** Who a request acts for, as each handler needs it. */
export interface RequestIdentity {
  /** The caller, passed to every `tm.*` call; `undefined`: none (the operator, as before). */
  readonly principal: Principal | undefined
  /** What a sealed `requestState` binds: `principalKey` of the caller, else the defaults' principal. */
  readonly stateKey: string
  /** The owner of the tasks it makes and reads: {@link taskOwnerOf} the caller, else the defaults' owner. */
  readonly taskOwner: string
}

/** The message of the refusal of a request without a principal where one is required (it names nothing of the request). */
export const NO_PRINCIPAL_MESSAGE = 'Internal error: this request carries no principal'

/**
 * The owner of the tasks of the principal whose `principalKey` is `key`: a hex SHA-256 of it,
 * domain-separated from `taskOwner(token)`, so a newer token of the same subject owns the same tasks.
 */
export function taskOwnerOf(key: string): string {
  return createHash('sha256').update('toolwire task owner principal v1\u0000', 'utf8').update(key, 'utf8').digest('hex')
}

/**
 * Who the request of `ctx` acts for: its `AuthInfo`'s principal when the gate put one there,
 * else `defaults`. @throws Error {@link NO_PRINCIPAL_MESSAGE} (the SDK answers it `-32603`) when
 * `defaults.principalRequired` and there is none.
 */
export function identityOf(ctx: Pick<ServerContext, 'http'>, defaults: PrincipalDefaults): RequestIdentity {
  const found = principalOfAuthInfo(ctx.http?.authInfo)
  if (found !== undefined) return { principal: found.principal, stateKey: found.key, taskOwner: taskOwnerOf(found.key) }
  if (defaults.principalRequired === true) throw new Error(NO_PRINCIPAL_MESSAGE)
  return { principal: undefined, stateKey: defaults.principal ?? '', taskOwner: defaults.owner ?? '' }
}

/** `options` with `principal` set when there is one (the operator's calls stay as they were). */
export function withPrincipal<T extends object>(options: T, principal: Principal | undefined): T & { principal?: Principal } {
  return principal === undefined ? options : { ...options, principal }
}

/**
 * The decision `principal` gives a confirmation: its approval or denial, answered as it (only its
 * own calls are found) and recorded as who approved. None: the operator's decision, as before.
 */
export function confirmAs(approve: boolean, principal: Principal | undefined): ConfirmDecision {
  return principal === undefined ? { approve } : { approve, principal, approvedBy: principalRef(principal) }
}

/** The answering options of `tm.resume` / `tm.cancel` for `principal`: `undefined` for none (the operator, as before). */
export function answeredBy(principal: Principal | undefined): { readonly principal: Principal } | undefined {
  return principal === undefined ? undefined : { principal }
}
