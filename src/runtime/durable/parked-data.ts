/**
 * What a parked call's row keeps in its `data` besides its input: written at park
 * ({@link parkedData}: the timeout, the idempotency key, the caller's principal and a
 * suspension's extras) and read back when it is answered.
 */
import type { JsonValue, PendingSchema } from '../../core/types.js'
import type { ParkedCall } from '../store/types.js'
import type { SuspensionExtras } from '../types.js'
import { principalKey, readPrincipal, type Principal } from '../../core/principal.js'

/**
 * What a parked call keeps of its options (the timeout, the idempotency key and the caller's
 * principal, when it has them), and a suspension's extras.
 */
export function parkedData(timeoutMs: number | undefined, idempotencyKey: string | undefined, extras: SuspensionExtras, principal: Principal | undefined): JsonValue {
  const { schema, confirmation, resumeState } = extras
  if (timeoutMs === undefined && idempotencyKey === undefined && schema === undefined && confirmation === undefined && resumeState === undefined && principal === undefined) {
    return null
  }
  return {
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
    ...(idempotencyKey === undefined ? {} : { idempotencyKey }),
    ...(schema === undefined ? {} : { schema }),
    ...(confirmation === undefined ? {} : { confirmation }),
    ...(resumeState === undefined ? {} : { resumeState }),
    ...(principal === undefined ? {} : { principal: principalData(principal) }),
  }
}

/** A principal as a parked row's data keeps it: the whole of it, scopes included (the continued run's `ctx.principal`). */
function principalData(principal: Principal): JsonValue {
  const { subject, issuer, clientId, scopes } = principal
  return clientId === undefined ? { subject, issuer, scopes: [...scopes] } : { subject, issuer, clientId, scopes: [...scopes] }
}

/**
 * The principal whose call a parked row is (from its data), `undefined` for a row without an
 * owner, or `false` when the row does not hold the principal its owner names (it was altered).
 */
export function principalOf(call: ParkedCall): Principal | undefined | false {
  const kept = dataField(call, 'principal')
  const owner = call.owner ?? null
  if (kept === undefined) return owner === null ? undefined : false
  const principal = readPrincipal(kept)
  return typeof principal !== 'string' && principalKey(principal) === owner ? principal : false
}

/** A field of a parked row's data (a JSON object), or `undefined`. */
export function dataField(call: ParkedCall, name: string): JsonValue | undefined {
  const data = call.data
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return undefined
  return Object.hasOwn(data, name) ? (data as { readonly [key: string]: JsonValue })[name] : undefined
}

/** The pending request schema a suspension's row keeps, if any (a JSON object). */
export function schemaOf(call: ParkedCall): PendingSchema | undefined {
  const data = call.data
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return undefined
  const s = (data as { schema?: JsonValue }).schema
  return typeof s === 'object' && s !== null && !Array.isArray(s) ? (s as PendingSchema) : undefined
}

/** The idempotency key a parked row keeps, if any. */
export function keyOf(call: ParkedCall): string | undefined {
  const data = call.data
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return undefined
  const k = (data as { idempotencyKey?: JsonValue }).idempotencyKey
  return typeof k === 'string' ? k : undefined
}

/** The timeout (ms, positive) a parked row keeps, if any. */
export function timeoutOf(call: ParkedCall): number | undefined {
  const data = call.data
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return undefined
  const t = (data as { timeoutMs?: JsonValue }).timeoutMs
  return typeof t === 'number' && t > 0 ? t : undefined
}
