/** fast-check arbitraries of the fuzzing harness's case descriptors (see cases.ts). */
import fc from 'fast-check'
import { neverSettles, type Body, type CallCase, type CallD, type DecodeCase, type FrameD, type HV, type Json, type McpCase, type SchemaCase, type SchemaD, type SchemaInput, type ToolD } from './cases.js'

const json: fc.Arbitrary<Json> = fc.jsonValue({ maxDepth: 3 }) as fc.Arbitrary<Json>

const leaf: fc.Arbitrary<HV> = fc.oneof(
  json.map((v) => ({ k: 'json', v }) as const),
  fc.constantFrom('undefined', 'null', 'nan', 'bigint', 'symbol', 'secretString', 'number', 'true', 'negzero').map((v) => ({ k: 'prim', v }) as const),
  fc.record({
    k: fc.constant('error' as const),
    ctor: fc.constantFrom('Error', 'TypeError', 'AggregateError', 'DOMException'),
    throwing: fc.option(fc.constantFrom('message', 'stack', 'name', 'cause', 'toString', 'kind'), { nil: undefined }),
  }).map((e) => (e.throwing === undefined ? { k: 'error' as const, ctor: e.ctor } : e)),
  fc.record({
    k: fc.constant('errorLike' as const),
    kind: fc.constantFrom('timeout', 'network', 'other', 'invalid_args', 'cancelled', 'nope', '__proto__'),
    secretIn: fc.constantFrom('message', 'details', 'code', 'retryable'),
  }),
  fc.constant({ k: 'nullProto' } as const),
  fc.record({
    k: fc.constant('proxy' as const),
    trap: fc.constantFrom('get', 'has', 'ownKeys', 'getPrototypeOf', 'getOwnPropertyDescriptor', 'all'),
    target: fc.constantFrom('object', 'array', 'function', 'error'),
  }),
  fc.record({ k: fc.constant('revoked' as const), target: fc.constantFrom('object', 'array', 'function') }),
  fc.constantFrom<HV>({ k: 'cycle' }, { k: 'date' }, { k: 'loneSurrogate' }, { k: 'function' }, { k: 'toJSONThrows' }, { k: 'forgedResult' }),
  fc.record({ k: fc.constant('deep' as const), depth: fc.constantFrom(50, 125, 126, 127, 200, 1000, 5000), arrays: fc.boolean() }),
  fc.record({ k: fc.constant('huge' as const), kb: fc.constantFrom(64, 1024, 4096) }),
  fc.record({ k: fc.constant('wide' as const), n: fc.constantFrom(1000, 20000) }),
  fc.record({ k: fc.constant('toolResult' as const), which: fc.constantFrom('bigintStructured', 'mutableStructured', 'hostileDetails', 'untrustedParts') }),
)

/** A hostile value, possibly nesting others. */
export const hvArb: fc.Arbitrary<HV> = fc.letrec<{ hv: HV }>((tie) => ({
  hv: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    { weight: 6, arbitrary: leaf },
    {
      weight: 1,
      arbitrary: fc.record({
        k: fc.constant('getterThrows' as const),
        keys: fc.subarray(['kind', 'output', 'isError', 'message', 'status', 'then', 'toJSON', 'data', 'metadata', 'parts', 'retryable'], { minLength: 1 }),
        thrown: tie('hv'),
      }),
    },
    {
      weight: 1,
      arbitrary: fc.record({
        k: fc.constant('thenable' as const),
        mode: fc.constantFrom('resolve', 'reject', 'resolveThenReject', 'rejectThenResolve', 'never', 'thenThrows', 'thenGetterThrows', 'late'),
        v: tie('hv'),
      }),
    },
    {
      weight: 2,
      arbitrary: fc.record({
        k: fc.constant('helper' as const),
        which: fc.constantFrom('ok', 'invalid', 'refuse', 'refuseNaN', 'cancelled', 'errorResult', 'pending'),
        payload: tie('hv'),
      }),
    },
    {
      weight: 2,
      arbitrary: fc.record({
        k: fc.constant('modelResult' as const),
        output: tie('hv'),
        isError: tie('hv'),
        parts: fc.constantFrom('none', 'badBase64', 'hostile', 'valid', 'notArray'),
        metadata: fc.option(tie('hv'), { nil: null }),
      }),
    },
  ),
})).hv

const bodyArb: fc.Arbitrary<Body> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ b: fc.constant('return' as const), v: hvArb, how: fc.constantFrom('sync', 'promise', 'later') }) },
  { weight: 3, arbitrary: fc.record({ b: fc.constant('throw' as const), v: hvArb }) },
  { weight: 3, arbitrary: fc.record({ b: fc.constant('reject' as const), v: hvArb, how: fc.constantFrom('promise', 'later') }) },
  { weight: 1, arbitrary: fc.record({ b: fc.constant('hangSignal' as const), then: fc.constantFrom('resolve', 'rejectReason', 'rejectHostile'), v: hvArb }) },
  { weight: 1, arbitrary: fc.constant({ b: 'hangForever' } as const) },
  { weight: 1, arbitrary: fc.record({ b: fc.constant('ctxAbuse' as const), what: fc.constantFrom('progressHostile', 'undoNotFunction', 'undoThrows', 'signalAfter'), v: hvArb }) },
)

const toolArb: fc.Arbitrary<ToolD> = fc.record({
  schema: fc.constantFrom('object', 'true', 'secretChecks', 'core'),
  sensitive: fc.boolean(),
  confirm: fc.constantFrom('none', 'none', 'none', 'true', 'fnThrows', 'fnRejects', 'fnHostile'),
  summarize: fc.constantFrom('none', 'none', 'throws', 'hostile'),
  preview: fc.constantFrom('none', 'none', 'sensitive', 'throws', 'hostile', 'rejects'),
  permission: fc.constantFrom('none', 'none', 'none', 'allow', 'throws', 'rejects', 'hostile'),
  untrusted: fc.boolean(),
  outputSchema: fc.boolean(),
  limit: fc.constantFrom(1, 1, 2),
})

const callArb: fc.Arbitrary<CallD> = fc.record({
  via: fc.constantFrom('call', 'call', 'callJson', 'callMany'),
  name: fc.constantFrom('registered', 'registered', 'registered', 'registered', 'unknown', 'throwingToString', 'proxy', 'symbol', 'object'),
  input: fc.constantFrom('secrets', 'secrets', 'secretToJSON', 'hostile', 'json'),
  inputHV: hvArb,
  options: fc.constantFrom('none', 'none', 'none', 'timeout', 'abort', 'preAborted', 'cancel', 'hostileOptions', 'proxyOptions', 'hostileSignal', 'badTimeout'),
  ms: fc.integer({ min: 1, max: 12 }),
  hostileEntry: fc.boolean(),
  observers: fc.constantFrom('all', 'all', 'none', 'throwing'),
  generatedId: fc.boolean(),
})

/** Whether a body never finishes by itself: then the call gets a timeout, a cancel or an abort. */
export function hangs(body: Body): boolean {
  return body.b === 'hangSignal' || neverSettles(body)
}

const ENDING = new Set<CallD['options']>(['timeout', 'abort', 'cancel'])

/** A hostile tool, body and call (a body that never finishes always gets a way to end). */
export const callCaseArb: fc.Arbitrary<CallCase> = fc
  .record({ tool: toolArb, body: bodyArb, call: callArb })
  .map((c) => (hangs(c.body) && !ENDING.has(c.call.options) ? { ...c, call: { ...c.call, options: 'timeout' as const } } : c))

/** A value an ordinary tool returns: data, helpers, model results with parts, ToolResults. */
const ordinaryValue: fc.Arbitrary<HV> = fc.oneof(
  { weight: 3, arbitrary: json.map((v) => ({ k: 'json', v }) as const) },
  { weight: 2, arbitrary: fc.record({ k: fc.constant('helper' as const), which: fc.constantFrom('ok', 'invalid', 'refuse', 'refuseNaN', 'cancelled', 'errorResult', 'pending'), payload: json.map((v) => ({ k: 'json', v }) as const) }) },
  { weight: 2, arbitrary: fc.record({ k: fc.constant('modelResult' as const), output: fc.string().map((v) => ({ k: 'json', v }) as const), isError: fc.boolean().map((v) => ({ k: 'json', v }) as const), parts: fc.constantFrom('none', 'valid', 'badBase64'), metadata: fc.constant(null) }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('toolResult' as const), which: fc.constantFrom('bigintStructured', 'mutableStructured', 'hostileDetails', 'untrustedParts') }) },
  { weight: 1, arbitrary: fc.constantFrom<HV>({ k: 'date' }, { k: 'loneSurrogate' }, { k: 'prim', v: 'negzero' }, { k: 'prim', v: 'nan' }, { k: 'deep', depth: 125, arrays: false }, { k: 'deep', depth: 127, arrays: true }) },
)

/** An ordinary tool and call (the common case views and copies must get right), with a few hostile ones mixed in. */
export const ordinaryCaseArb: fc.Arbitrary<CallCase> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      tool: fc.record({
        schema: fc.constantFrom('object', 'true'),
        sensitive: fc.boolean(),
        confirm: fc.constantFrom('none', 'none', 'none', 'true'),
        summarize: fc.constant('none'),
        preview: fc.constantFrom('none', 'none', 'sensitive'),
        permission: fc.constant('none'),
        untrusted: fc.boolean(),
        outputSchema: fc.boolean(),
        limit: fc.constant(1),
      }) as fc.Arbitrary<ToolD>,
      body: fc.oneof(
        { weight: 4, arbitrary: fc.record({ b: fc.constant('return' as const), v: ordinaryValue, how: fc.constantFrom('sync', 'promise') }) },
        { weight: 1, arbitrary: fc.record({ b: fc.constant('throw' as const), v: fc.constant<HV>({ k: 'error', ctor: 'Error' }) }) },
      ) as fc.Arbitrary<Body>,
      call: fc.record({
        via: fc.constantFrom('call', 'callJson', 'callMany'),
        name: fc.constant('registered'),
        input: fc.constant('secrets'),
        inputHV: fc.constant<HV>({ k: 'json', v: null }),
        options: fc.constantFrom('none', 'none', 'timeout', 'cancel'),
        ms: fc.integer({ min: 5, max: 12 }),
        hostileEntry: fc.constant(false),
        observers: fc.constantFrom('all', 'none'),
        generatedId: fc.boolean(),
      }) as fc.Arbitrary<CallD>,
    }),
  },
  { weight: 1, arbitrary: callCaseArb },
)

/**
 * Calls of the registered tool whose input holds secrets in sensitive fields only (a
 * hostile input's own fields are not secret: evidence records them), and whose tool
 * throws secret-bearing values: the secret property's focus.
 */
export const secretCaseArb: fc.Arbitrary<CallCase> = callCaseArb.map((c) => ({
  ...c,
  call: { ...c.call, name: 'registered' as const, input: c.call.input === 'secretToJSON' ? ('secretToJSON' as const) : ('secrets' as const) },
}))

// ------------------------------------------------------------------ schemas

const schemaArb: fc.Arbitrary<SchemaD> = fc.oneof(
  fc.record({ s: fc.constant('refRoot' as const), sibling: fc.constantFrom('unevaluatedProperties', 'properties', 'allOf', 'none') }),
  fc.record({ s: fc.constant('refCycle' as const), len: fc.integer({ min: 1, max: 4 }), via: fc.constantFrom('ref', 'allOf', 'items', 'properties'), unevaluated: fc.boolean() }),
  fc.constant({ s: 'dynamic' } as const),
  fc.record({ s: fc.constant('deep' as const), depth: fc.constantFrom(10, 100, 1000, 5000, 20000), via: fc.constantFrom('allOf', 'properties', 'items', 'not') }),
  fc.record({ s: fc.constant('redos' as const), pattern: fc.constantFrom('^(a+)+$', '^(a|aa)+$', '^(a|a?)+$', '(x+x+)+y', '^([a-z]+)*$'), core: fc.boolean() }),
  fc.record({ s: fc.constant('secretChecks' as const), core: fc.boolean() }),
  fc.record({ s: fc.constant('bigEnum' as const), n: fc.constantFrom(10, 10000) }),
  json.map((v) => ({ s: 'plain', v }) as const),
)

const schemaInputArb: fc.Arbitrary<SchemaInput> = fc.oneof(
  json.map((v) => ({ i: 'json', v }) as const),
  fc.record({ i: fc.constant('deep' as const), depth: fc.constantFrom(20, 125, 126, 500, 3000), arrays: fc.boolean() }),
  // 22 characters: a backtracking matcher takes about a second, a linear one microseconds
  fc.record({ i: fc.constant('redos' as const), n: fc.constantFrom(12, 22) }),
  fc.constant({ i: 'secret' } as const),
  fc.record({ i: fc.constant('wideArray' as const), n: fc.constantFrom(3, 5000, 200000) }),
)

/** A hostile schema with the inputs to call it with. */
export const schemaCaseArb: fc.Arbitrary<SchemaCase> = fc.record({ schema: schemaArb, inputs: fc.array(schemaInputArb, { minLength: 1, maxLength: 3 }) })

// ------------------------------------------------------------------ wire documents

const safeJson: fc.Arbitrary<Json> = fc.letrec<{ v: Json }>((tie) => ({
  v: fc.oneof(
    { depthSize: 'small' },
    fc.constant(null),
    fc.boolean(),
    fc.integer({ min: -1_000_000, max: 1_000_000 }),
    fc.string({ unit: 'grapheme', maxLength: 8 }),
    fc.array(tie('v'), { maxLength: 3 }),
    fc.dictionary(fc.string({ maxLength: 5 }), tie('v'), { maxKeys: 3 }),
  ),
})).v

const kindArb = fc.constantFrom('invalid_args', 'timeout', 'cancelled', 'not_found', 'permission_denied', 'rate_limited', 'provider', 'network', 'other')
const textArb = fc.string({ unit: 'grapheme', maxLength: 12 })

const MIME = { image: 'image/png', audio: 'audio/wav', file: 'application/pdf' } as const

/** A valid wire document, keys in canonical order. */
const canonicalDocArb: fc.Arbitrary<Record<string, unknown>> = fc
  .record({
    status: fc.constantFrom('success', 'error', 'refused', 'skipped', 'pending'),
    text: textArb,
    parts: fc.option(
      fc.array(
        fc.record({ type: fc.constantFrom('image', 'audio', 'file'), data: fc.constantFrom('iVBORw0KGgo=', 'AAAA'), name: fc.option(textArb, { nil: undefined }) }, { requiredKeys: ['type', 'data'] }).map((p) => ({ ...p, mimeType: MIME[p.type] })),
        { minLength: 1, maxLength: 2 },
      ),
      { nil: undefined },
    ),
    structured: fc.option(safeJson, { nil: undefined }),
    kind: kindArb,
    code: fc.option(textArb, { nil: undefined }),
    retryable: fc.boolean(),
    details: fc.option(safeJson, { nil: undefined }),
    pendingKind: fc.constantFrom('input', 'authorization', 'confirmation'),
    id: fc.string({ minLength: 1, maxLength: 8 }),
    untrusted: fc.boolean(),
    metadata: fc.option(fc.dictionary(fc.string({ maxLength: 5 }), safeJson, { maxKeys: 3 }), { nil: undefined }),
  })
  .map((r) => {
    const output: Record<string, unknown> = { text: r.text }
    if (r.parts !== undefined) output.parts = r.parts.map((p) => (p.name === undefined ? { type: p.type, mimeType: p.mimeType, data: p.data } : { type: p.type, mimeType: p.mimeType, data: p.data, name: p.name }))
    if (r.structured !== undefined) output.structured = r.structured
    const doc: Record<string, unknown> = { v: 1, status: r.status, output }
    const error: Record<string, unknown> = { kind: r.status === 'refused' ? 'permission_denied' : r.kind, message: r.text }
    if (r.code !== undefined) error.code = r.code
    error.retryable = r.status === 'refused' ? false : r.retryable
    if (r.details !== undefined) error.details = r.details
    if (r.status === 'error') doc.error = error
    if (r.status === 'refused') doc.refusal = error
    if (r.status === 'skipped') doc.skipReason = r.text
    if (r.status === 'pending') doc.pending = { id: r.id, kind: r.pendingKind }
    if (r.untrusted) doc.untrusted = true
    if (r.metadata !== undefined) doc.metadata = r.metadata
    return doc
  })

/** A change to a document: most make it malformed, some keep it valid in another spelling. */
const mutationArb = fc.oneof(
  fc.record({ m: fc.constant('drop' as const), key: fc.constantFrom('v', 'status', 'output', 'text', 'error', 'kind', 'pending', 'id') }),
  fc.record({ m: fc.constant('set' as const), key: fc.constantFrom('v', 'status', 'output', 'text', 'error', 'kind', 'retryable', 'untrusted', 'metadata', 'parts', 'structured', 'extra', '__proto__'), value: fc.jsonValue({ maxDepth: 2 }) }),
  fc.record({ m: fc.constant('text' as const), how: fc.constantFrom('truncate', 'spaces', 'dupKey', 'loneSurrogate', 'escapedSurrogate', 'bom', 'trailing', 'bigNumber', 'deep', 'nul') }),
)

type Mutation = { readonly m: 'drop'; readonly key: string } | { readonly m: 'set'; readonly key: string; readonly value: unknown } | { readonly m: 'text'; readonly how: string }

function mutate(doc: Record<string, unknown>, m: Mutation, seed: number): string {
  const clone = JSON.parse(JSON.stringify(doc)) as Record<string, unknown>
  const find = (o: unknown, key: string): Record<string, unknown> | undefined => {
    if (typeof o !== 'object' || o === null) return undefined
    if (Object.hasOwn(o, key)) return o as Record<string, unknown>
    for (const v of Object.values(o)) {
      const f = find(v, key)
      if (f) return f
    }
    return undefined
  }
  if (m.m === 'drop') {
    const owner = find(clone, m.key)
    if (owner) delete owner[m.key]
    return JSON.stringify(clone)
  }
  if (m.m === 'set') {
    const owner = find(clone, m.key) ?? clone
    Object.defineProperty(owner, m.key, { value: m.value, enumerable: true, writable: true, configurable: true })
    return JSON.stringify(clone)
  }
  const text = JSON.stringify(clone)
  switch (m.how) {
    case 'truncate':
      return text.slice(0, seed % text.length)
    case 'spaces':
      return JSON.stringify(clone, null, 2)
    case 'dupKey':
      return text.replace('{"v":1,', '{"v":1,"v":1,')
    case 'loneSurrogate':
      return text.replace('"text":"', '"text":"\uD800')
    case 'escapedSurrogate':
      return text.replace('"text":"', '"text":"\\ud800')
    case 'bom':
      return `\uFEFF${text}`
    case 'trailing':
      return `${text} x`
    case 'bigNumber':
      return text.replace('{"v":1,', '{"v":1.0000000000000000000001e0,')
    case 'deep':
      return text.replace('"text":', `"structured":${'['.repeat(5000)}${']'.repeat(5000)},"text":`)
    default:
      return text.replace('"text":"', '"text":"\u0000')
  }
}

/** Wire texts: valid canonical documents, mutated ones, and arbitrary text. */
export const decodeCaseArb: fc.Arbitrary<DecodeCase> = fc.oneof(
  { weight: 3, arbitrary: canonicalDocArb.map((d) => ({ text: JSON.stringify(d), canonical: true })) },
  { weight: 4, arbitrary: fc.tuple(canonicalDocArb, mutationArb, fc.nat()).map(([d, m, seed]) => ({ text: mutate(d, m, seed + 1), canonical: false })) },
  {
    // numbers JSON can carry: JavaScript and the core must write each one the same way
    weight: 2,
    arbitrary: fc
      .array(fc.double({ noNaN: true, noDefaultInfinity: true }), { minLength: 1, maxLength: 6 })
      .map((structured) => ({ text: JSON.stringify({ v: 1, status: 'success', output: { text: '', structured } }), canonical: false })),
  },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }).map((text) => ({ text, canonical: false })) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((v) => ({ text: JSON.stringify(v), canonical: false })) },
)

// ------------------------------------------------------------------ MCP frames

/**
 * A number that is not a valid JSON-RPC id: not integer-valued (MCP takes any integer, 1e21
 * included, since #21; NaN and the infinities are written as null).
 */
const fractional: fc.Arbitrary<Json> = fc.double({ noNaN: true, noDefaultInfinity: true }).filter((d) => !Number.isInteger(d))

const frameArb: fc.Arbitrary<FrameD> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ f: fc.constant('call' as const), tool: fc.constantFrom('echo', 'fails', 'secret_input', 'slow', 'confirm', 'image', 'nope'), args: fc.option(fc.oneof(fc.constant({ password: 'Zq9-SECRET-MARK-pw' }), fc.dictionary(fc.string({ maxLength: 5 }), json, { maxKeys: 3 })), { nil: undefined }), paramsShape: fc.constantFrom('ok', 'ok', 'ok', 'noName', 'nameNumber', 'argsArray', 'argsString', 'argsNull', 'paramsArray', 'noParams') }) },
  { weight: 2, arbitrary: fc.record({ f: fc.constant('request' as const), method: fc.constantFrom('ping', 'tools/list', 'initialize', 'resources/list', 'no/such', ''), params: fc.option(json, { nil: undefined }), idKind: fc.constantFrom('int', 'string') }) },
  { weight: 1, arbitrary: fc.record({ f: fc.constant('cancel' as const), target: fc.nat(20) }) },
  { weight: 1, arbitrary: fc.record({ f: fc.constant('notification' as const), method: fc.constantFrom('notifications/initialized', 'notifications/progress', 'x') }) },
  { weight: 1, arbitrary: fc.record({ f: fc.constant('response' as const), id: json }) },
  { weight: 1, arbitrary: fc.record({ f: fc.constant('badId' as const), id: fc.oneof(fc.constant<Json>(null), fractional, fc.boolean(), fc.constant<Json>({}), fc.constant<Json>([])) }) },
  {
    weight: 2,
    arbitrary: fc.oneof(
      fc.string({ maxLength: 30 }),
      fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)),
      fc.constantFrom('[]', '[{"jsonrpc":"2.0","id":1,"method":"ping"}]', '{"jsonrpc":"1.0","id":1,"method":"ping"}', '{"jsonrpc":"2.0","id":1}', `${'['.repeat(100000)}${']'.repeat(100000)}`, '{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"echo","arguments":{"text":"\\ud800"}}}'),
    ).map((line) => ({ f: 'raw', line: line.replace(/\n/g, ' ') }) as const),
  },
)

/** A session of frames. */
export const mcpCaseArb: fc.Arbitrary<McpCase> = fc.record({ frames: fc.array(frameArb, { minLength: 1, maxLength: 12 }), initialize: fc.boolean() })
