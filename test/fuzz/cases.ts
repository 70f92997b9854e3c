/**
 * Case descriptors of the fuzzing harness: plain, structured-cloneable data that the
 * parent generates with fast-check (and prints as counterexamples) and the child
 * runner turns into hostile values (Proxies, getters that throw, thenables, cycles...).
 *
 * No import of fast-check here: this module is bundled into the child runner.
 */

/** The marker of a secret value: it must never appear in any output. */
export const SECRET = 'Zq9-SECRET-MARK'

/** A JSON value as fast-check generates it. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json }

/** A hostile value: what a tool may return, throw or reject with, or what a caller may pass. */
export type HV =
  | { readonly k: 'json'; readonly v: Json }
  | { readonly k: 'prim'; readonly v: 'undefined' | 'null' | 'nan' | 'bigint' | 'symbol' | 'secretString' | 'number' | 'true' | 'negzero' }
  | {
      readonly k: 'error'
      readonly ctor: 'Error' | 'TypeError' | 'AggregateError' | 'DOMException'
      /** a getter on the error that throws */
      readonly throwing?: 'message' | 'stack' | 'name' | 'cause' | 'toString' | 'kind'
    }
  | { readonly k: 'errorLike'; readonly kind: string; readonly secretIn: 'message' | 'details' | 'code' | 'retryable' }
  | { readonly k: 'nullProto' }
  | { readonly k: 'getterThrows'; readonly keys: readonly string[]; readonly thrown: HV }
  | {
      readonly k: 'proxy'
      readonly trap: 'get' | 'has' | 'ownKeys' | 'getPrototypeOf' | 'getOwnPropertyDescriptor' | 'all'
      readonly target: 'object' | 'array' | 'function' | 'error'
    }
  | { readonly k: 'revoked'; readonly target: 'object' | 'array' | 'function' }
  | {
      readonly k: 'thenable'
      readonly mode: 'resolve' | 'reject' | 'resolveThenReject' | 'rejectThenResolve' | 'never' | 'thenThrows' | 'thenGetterThrows' | 'late'
      readonly v: HV
    }
  | { readonly k: 'cycle' }
  | { readonly k: 'deep'; readonly depth: number; readonly arrays: boolean }
  | { readonly k: 'huge'; readonly kb: number }
  | { readonly k: 'wide'; readonly n: number }
  | { readonly k: 'date' }
  | { readonly k: 'loneSurrogate' }
  | { readonly k: 'function' }
  | { readonly k: 'toJSONThrows' }
  | { readonly k: 'helper'; readonly which: 'ok' | 'invalid' | 'refuse' | 'refuseNaN' | 'cancelled' | 'errorResult' | 'pending'; readonly payload: HV }
  | {
      readonly k: 'modelResult'
      readonly output: HV
      readonly isError: HV
      readonly parts: 'none' | 'badBase64' | 'hostile' | 'valid' | 'notArray'
      readonly metadata: HV | null
    }
  | { readonly k: 'forgedResult' }
  | { readonly k: 'toolResult'; readonly which: 'bigintStructured' | 'mutableStructured' | 'hostileDetails' | 'untrustedParts' }

/** What a tool body does. */
export type Body =
  | { readonly b: 'return'; readonly v: HV; readonly how: 'sync' | 'promise' | 'later' }
  | { readonly b: 'throw'; readonly v: HV }
  | { readonly b: 'reject'; readonly v: HV; readonly how: 'promise' | 'later' }
  | { readonly b: 'hangSignal'; readonly then: 'resolve' | 'rejectReason' | 'rejectHostile'; readonly v: HV }
  | { readonly b: 'hangForever' }
  | { readonly b: 'ctxAbuse'; readonly what: 'progressHostile' | 'undoNotFunction' | 'undoThrows' | 'signalAfter'; readonly v: HV }

/** Whether a returned value, once adopted as a promise, never settles. */
function adoptsNever(v: HV): boolean {
  if (v.k !== 'thenable') return false
  return v.mode === 'never' || ((v.mode === 'resolve' || v.mode === 'late' || v.mode === 'resolveThenReject') && adoptsNever(v.v))
}

/** Whether a body never settles, even when its signal aborts (it may hold its concurrency slot for good). */
export function neverSettles(body: Body): boolean {
  // `return`, `ctxAbuse` and a `hangSignal` that resolves on abort all settle with their value:
  // a never-settling thenable there holds the slot
  if (body.b === 'hangForever') return true
  if (body.b === 'return' || body.b === 'ctxAbuse' || (body.b === 'hangSignal' && body.then === 'resolve')) return adoptsNever(body.v)
  return false
}

/** A tool's hostile declaration. */
export interface ToolD {
  readonly schema: 'object' | 'true' | 'secretChecks' | 'core'
  readonly sensitive: boolean
  readonly confirm: 'none' | 'true' | 'fnThrows' | 'fnRejects' | 'fnHostile'
  readonly summarize: 'none' | 'throws' | 'hostile'
  readonly preview: 'none' | 'sensitive' | 'throws' | 'hostile' | 'rejects'
  readonly permission: 'none' | 'allow' | 'throws' | 'rejects' | 'hostile'
  readonly untrusted: boolean
  readonly outputSchema: boolean
  readonly limit: number
}

/** How a call is made. */
export interface CallD {
  readonly via: 'call' | 'callJson' | 'callMany'
  readonly name: 'registered' | 'unknown' | 'throwingToString' | 'proxy' | 'symbol' | 'object'
  readonly input: 'secrets' | 'secretToJSON' | 'hostile' | 'json'
  readonly inputHV: HV
  readonly options: 'none' | 'timeout' | 'abort' | 'preAborted' | 'cancel' | 'hostileOptions' | 'proxyOptions' | 'hostileSignal' | 'badTimeout'
  readonly ms: number
  /** callMany only: a throwing entry beside the call */
  readonly hostileEntry: boolean
  /**
   * What watches the manager: `all` (call_end and error listeners, an evidence store),
   * `none` (the fast path: nothing to notify), or `throwing` (listeners that read every
   * field of their event and throw, an evidence store that throws).
   */
  readonly observers: 'all' | 'none' | 'throwing'
  /** Leave the call id to the manager (generated ids, the fast path) instead of passing one. */
  readonly generatedId: boolean
}

/** One case of the call properties. */
export interface CallCase {
  readonly tool: ToolD
  readonly body: Body
  readonly call: CallD
}

/** A hostile schema, as a tree the child builds. */
export type SchemaD =
  | { readonly s: 'refRoot'; readonly sibling: 'unevaluatedProperties' | 'properties' | 'allOf' | 'none' }
  | { readonly s: 'refCycle'; readonly len: number; readonly via: 'ref' | 'allOf' | 'items' | 'properties'; readonly unevaluated: boolean }
  | { readonly s: 'dynamic' }
  | { readonly s: 'deep'; readonly depth: number; readonly via: 'allOf' | 'properties' | 'items' | 'not' }
  | { readonly s: 'redos'; readonly pattern: string; readonly core: boolean }
  | { readonly s: 'secretChecks'; readonly core: boolean }
  | { readonly s: 'bigEnum'; readonly n: number }
  | { readonly s: 'plain'; readonly v: Json }

/** An input for a schema case. */
export type SchemaInput =
  | { readonly i: 'json'; readonly v: Json }
  | { readonly i: 'deep'; readonly depth: number; readonly arrays: boolean }
  | { readonly i: 'redos'; readonly n: number }
  | { readonly i: 'secret' }
  | { readonly i: 'wideArray'; readonly n: number }

export interface SchemaCase {
  readonly schema: SchemaD
  readonly inputs: readonly SchemaInput[]
}

/** One case of the decoder property: the wire text given to `ToolResult.fromJSON`. */
export interface DecodeCase {
  readonly text: string
  /** Built in canonical key order from valid parts: the core must accept it and write it back byte-identically. */
  readonly canonical: boolean
}

/** One MCP frame: a line written to the server's input. */
export type FrameD =
  | { readonly f: 'request'; readonly method: string; readonly params: Json | undefined; readonly idKind: 'int' | 'string' }
  | { readonly f: 'call'; readonly tool: string; readonly args: Json | undefined; readonly paramsShape: 'ok' | 'noName' | 'nameNumber' | 'argsArray' | 'argsString' | 'argsNull' | 'paramsArray' | 'noParams' }
  | { readonly f: 'cancel'; readonly target: number }
  | { readonly f: 'notification'; readonly method: string }
  | { readonly f: 'response'; readonly id: Json }
  | { readonly f: 'badId'; readonly id: Json }
  | { readonly f: 'raw'; readonly line: string }

export interface McpCase {
  readonly frames: readonly FrameD[]
  readonly initialize: boolean
}

/** A report from the child runner: violations by category, and how long the event loop was blocked. */
export interface Report {
  readonly violations: readonly string[]
  readonly maxGapMs: number
  readonly note?: string
}

export type Op =
  | { readonly op: 'call'; readonly c: CallCase }
  | { readonly op: 'schema'; readonly c: SchemaCase }
  | { readonly op: 'decode'; readonly c: DecodeCase }
  | { readonly op: 'mcp'; readonly c: McpCase }
