/**
 * Differential property test: TypeScript against the core (the specification, see
 * docs/wire-format.md, "Which language is the specification").
 *
 * Generated wire documents (valid and broken) and generated content parts go both ways:
 * - through the TypeScript constructors (`ToolResult.success/failed/skipped/pending`,
 *   `toolError`, `refusalError`, `withOutput`, `withUntrusted`, `withMetadata`), and
 * - through the core (`canonicalizeResult`, `checkContentPart`).
 * The two must agree on accept or reject; where both accept, TypeScript's wire text,
 * model view, every provider adapter and the call record must equal the core's byte for
 * byte (`modelViewJson`, `renderWireJson`, `callRecordJson`).
 *
 * The properties hold for every seed; fast-check picks a new one each run.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { ToolResult, refusalError, toolError, type ToolErrorOptions } from '../src/core/result.js'
import { canonicalizeResult, callRecordJson, checkContentPart, coreTables, modelViewJson, renderWireJson } from '../src/core/native.js'
import { toFrozenJson } from '../src/core/json.js'
import { redact } from '../src/core/redact.js'
import { MAX_DEPTH } from '../src/core/validate.js'
import {
  DISPOSITIONS,
  dispositionOfView,
  errorTypeOf,
  ERROR_KINDS,
  outcomeNamesOf,
  PENDING_KINDS,
  statusCodeOf,
  statusNameOf,
} from '../src/core/status.js'
import { pendingModelText, pendingOutputText } from '../src/core/texts.js'
import { viewOf } from '../src/core/view.js'
import { toModel } from '../src/render/model.js'
import { toAnthropic, toGemini, toMcp, toOpenAIChat, toOpenAIResponses } from '../src/render/index.js'
import { callRecord } from '../src/observe/record.js'
import type { JsonValue } from '../src/core/types.js'

/** Cases per property; the whole file runs about 10,000 generated cases. */
const RUNS = 2500

// ---------------------------------------------------------------- arbitraries

const SPECIAL_STRINGS = [
  '',
  ' ',
  'Error: already stated',
  'Pending: x',
  'Waiting for input',
  '<untrusted-content>',
  'a </untrusted-content> b',
  '< / UNTRUSTED-CONTENT',
  'naïve ☃ 𝄞 👩‍👩‍👧',
  '\u0000\u001f\u007f\u2028\u2029',
  '"\\/',
  'line\nbreak\r\ttab',
  'https://example.com/a b?x=é&y=1#z',
]
/** Well-formed strings (a lone surrogate has no UTF-8 form: JSON text carrying one is a different property, below). */
const str = fc.oneof(
  { weight: 3, arbitrary: fc.string({ maxLength: 12 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 8 }) },
  { weight: 2, arbitrary: fc.constantFrom(...SPECIAL_STRINGS) },
)
const KEYS = ['a', 'b', 'z', '', '1', '01', '-1', '10', '4294967295', '__proto__', 'constructor', 'toString', 'é', 'password', 'cc-number', 'pending']
const key = fc.oneof(fc.constantFrom(...KEYS), fc.string({ maxLength: 4 }))
const NUMBERS = [0, -0, 1, -1, 0.1, 1.5, 1e21, 1e-7, 1e-6, 123456789012345680000, 2 ** 53, -(2 ** 53) - 2, 5e-324, 1.7976931348623157e308, 7.724550086754665e-159]
const num = fc.oneof(fc.constantFrom(...NUMBERS), fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }))

/** JSON values with objects made by `Object.fromEntries` (so `__proto__` is an own key, as JSON.parse makes it). */
const { json } = fc.letrec<{ json: JsonValue }>((tie) => ({
  json: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constant(null),
    fc.boolean(),
    num,
    str,
    fc.array(tie('json'), { maxLength: 4 }),
    fc.array(fc.tuple(key, tie('json')), { maxLength: 4 }).map((entries) => Object.fromEntries(entries) as JsonValue),
  ),
}))

function nested(depth: number): JsonValue {
  let v: JsonValue = 1
  for (let i = 0; i < depth; i++) v = i % 2 === 0 ? [v] : { k: v }
  return v
}
/** Mostly ordinary values, sometimes nested right at or past the core's depth limit. */
const value = fc.oneof({ weight: 8, arbitrary: json }, { weight: 1, arbitrary: fc.constantFrom(98, 99, 100, 101).map(nested) })

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=='
const MIMES = [
  'image/png',
  'image/jpeg',
  'image/gif',
  'image/webp',
  'IMAGE/PNG',
  'image/png; charset=x',
  ' image/png',
  'image/svg+xml',
  'image',
  'image/',
  '/png',
  '',
  'audio/mpeg',
  'audio/wav',
  'application/pdf',
  'application/octet-stream',
  'text/plain',
  'text/plain;charset=utf-8',
  'video/mp4',
  'x/y',
  'image/png/x',
  'image/p ng',
]
const base64 = fc.oneof(
  fc.uint8Array({ maxLength: 20 }).map((b) => Buffer.from(b).toString('base64')),
  fc.constantFrom(PNG, '', 'AAAA', 'AAA', 'AA==', 'A===', '====', 'AA=A', 'A-_B', 'AA AA', 'AAAA\n', 'QQ==\n', 'not base64!', 'AAAAAA=='),
)
const URLS = ['https://example.com/a.png', 'https://example.com/a b?x=é', 'http://x', 'data:image/png;base64,AAAA', 'not a url', '', 'ftp://x/y.pdf', 'gs://bucket/f.mp3']
const url = fc.oneof(fc.constantFrom(...URLS), str)

type Doc = Record<string, unknown>

const part = fc.record(
  {
    type: fc.constantFrom('image', 'audio', 'file', 'video'),
    mimeType: fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...MIMES) }, { weight: 1, arbitrary: str }),
    data: base64,
    url,
    name: str,
  },
  { requiredKeys: ['type', 'mimeType'] },
)

const output = fc.record(
  { text: str, parts: fc.array(part, { maxLength: 3 }), structured: value },
  { requiredKeys: ['text'] },
)

const errorBody = (refusal: boolean) =>
  fc.record(
    {
      kind: refusal ? fc.constantFrom('permission_denied', 'permission_denied', 'other') : fc.constantFrom(...ERROR_KINDS, 'bogus'),
      message: str,
      code: str,
      retryable: refusal ? fc.constantFrom(false, false, true) : fc.boolean(),
      details: value,
    },
    { requiredKeys: refusal ? ['kind', 'message', 'retryable'] : ['kind', 'message', 'retryable'] },
  )

const change = fc.record({ path: str, before: value, after: value }, { requiredKeys: ['path'] })
const pending = fc.record(
  {
    id: str,
    kind: fc.constantFrom(...PENDING_KINDS, 'bogus'),
    prompt: str,
    url,
    summary: str,
    changes: fc.array(change, { maxLength: 3 }),
  },
  { requiredKeys: ['id', 'kind'] },
)

const metadata = fc.array(fc.tuple(key, value), { maxLength: 3 }).map((e) => Object.fromEntries(e) as Record<string, JsonValue>)

/** A wire document: mostly well-formed, with field values that may break the core's rules. */
const doc: fc.Arbitrary<Doc> = fc
  .record(
    {
      status: fc.constantFrom(...DISPOSITIONS),
      output,
      error: errorBody(false),
      refusal: errorBody(true),
      skipReason: str,
      pending,
      untrusted: fc.boolean(),
      metadata,
    },
    { requiredKeys: ['status', 'output'] },
  )
  .map((d) => {
    // the one body the status needs (the core's structural rules are covered by its own tests)
    const { status, output, untrusted, metadata } = d
    const out: Doc = { v: 1, status, output }
    const body = { error: 'error', refused: 'refusal', skipped: 'skipReason', pending: 'pending' }[status as string]
    if (body !== undefined) {
      const given = (d as Doc)[body]
      out[body] = given ?? (status === 'skipped' ? 'policy' : status === 'pending' ? { id: 'p', kind: 'input' } : { kind: 'permission_denied', message: 'm', retryable: false })
    }
    if (untrusted !== undefined) out.untrusted = untrusted
    if (metadata !== undefined) out.metadata = metadata
    return out
  })

// ---------------------------------------------------------------- the two sides

/** The document built with the TypeScript constructors; throws where TypeScript rejects it. */
function build(d: Doc): ToolResult {
  const output = d.output as { text: string; parts?: unknown[]; structured?: JsonValue }
  let result: ToolResult
  switch (d.status) {
    case 'success':
      result = ToolResult.success(output as never)
      break
    case 'error': {
      const e = d.error as { kind: never; message: string; code?: string; retryable: boolean; details?: JsonValue }
      const options: { -readonly [K in keyof ToolErrorOptions]: ToolErrorOptions[K] } = { retryable: e.retryable }
      if (e.code !== undefined) options.code = e.code
      if (e.details !== undefined) options.details = e.details
      result = ToolResult.failed(toolError(e.kind, e.message, options)).withOutput(output as never)
      break
    }
    case 'refused': {
      const e = d.refusal as { kind: string; message: string; code?: string; retryable: boolean; details?: JsonValue }
      // an error object marked as a refusal: TypeScript's own check decides (refusalError makes these)
      result = ToolResult.failed({ ...e, refusal: true } as never).withOutput(output as never)
      break
    }
    case 'skipped':
      result = ToolResult.skipped(d.skipReason as string).withOutput(output as never)
      break
    default:
      result = ToolResult.pending(d.pending as never).withOutput(output as never)
  }
  if (d.untrusted !== undefined) result = result.withUntrusted(d.untrusted as boolean)
  if (d.metadata !== undefined) result = result.withMetadata(d.metadata as never)
  return result
}

function attempt<T>(f: () => T): { ok: true; value: T } | { ok: false; error: string } {
  try {
    return { ok: true, value: f() }
  } catch (err) {
    return { ok: false, error: (err as Error).message }
  }
}

const WIRES = ['openai_chat', 'openai_responses', 'anthropic', 'gemini', 'mcp'] as const

/** Every rendering TypeScript makes of `result`, as JSON text. */
function tsRender(result: ToolResult, id: string | undefined): Record<string, string> {
  return {
    model: JSON.stringify(toModel(result)),
    openai_chat: JSON.stringify(toOpenAIChat(result, { toolCallId: id ?? '' })),
    openai_responses: JSON.stringify(toOpenAIResponses(result, { callId: id ?? '' })),
    anthropic: JSON.stringify(toAnthropic(result, { toolUseId: id ?? '' })),
    gemini: JSON.stringify(toGemini(result, id === undefined ? { name: 'lookup' } : { name: 'lookup', id })),
    mcp: JSON.stringify(toMcp(result)),
  }
}

/** The same renderings made by the core from the wire text. */
function coreRender(text: string, id: string | undefined): Record<string, string> {
  const out: Record<string, string> = { model: modelViewJson(text) }
  for (const wire of WIRES) out[wire] = renderWireJson(wire, text, id ?? (wire === 'gemini' ? undefined : ''), 'lookup')
  return out
}

const callId = fc.option(fc.oneof(fc.constantFrom('call_1', 'toolu_1'), str), { nil: undefined })

// ---------------------------------------------------------------- properties

describe('differential: TypeScript and the core agree', () => {
  it('on every content part: accept or reject (TypeScript constructors vs checkContentPart and the wire decoder)', () => {
    fc.assert(
      fc.property(part, (p) => {
        const ts = attempt(() => ToolResult.success({ text: '', parts: [p as never] }))
        const text = JSON.stringify({ v: 1, status: 'success', output: { text: '', parts: [p] } })
        const core = attempt(() => canonicalizeResult(text))
        expect(ts.ok, `${text}\nTS: ${ts.ok ? 'accepts' : ts.error}\ncore: ${core.ok ? 'accepts' : core.error}`).toBe(core.ok)
        if (ts.ok && core.ok) expect(ts.value.toJSONText()).toBe(core.value)
        const checked = checkContentPart(p.type, p.mimeType, p.data ?? null, p.url ?? null)
        // the decoder checks the fields as checkContentPart does (and the name is any string)
        if (p.data === undefined || p.url === undefined) expect(checked === null).toBe(core.ok)
      }),
      { numRuns: RUNS },
    )
  })

  it('on every wire document: accept or reject, and the canonical text byte for byte', () => {
    fc.assert(
      fc.property(doc, (d) => {
        const text = JSON.stringify(d)
        const core = attempt(() => canonicalizeResult(text))
        const ts = attempt(() => build(d))
        expect(ts.ok, `${text}\nTS: ${ts.ok ? 'accepts' : ts.error}\ncore: ${core.ok ? 'accepts' : core.error}`).toBe(core.ok)
        if (!ts.ok || !core.ok) return
        // TypeScript's own serialization is the canonical text, and it says what the document says
        expect(JSON.stringify(ts.value)).toBe(core.value)
        expect(ts.value.toJSONText()).toBe(core.value)
        // and the document read back through the core gives the same result again
        expect(JSON.stringify(ToolResult.fromJSON(text))).toBe(core.value)
      }),
      { numRuns: RUNS },
    )
  })

  it('on the model view and every adapter, byte for byte, for a result and for its application view', () => {
    fc.assert(
      fc.property(doc, callId, (d, id) => {
        const text = JSON.stringify(d)
        const core = attempt(() => canonicalizeResult(text))
        fc.pre(core.ok)
        const result = ToolResult.fromJSON(text)
        const expected = coreRender(text, id)
        expect(tsRender(result, id)).toEqual(expected)
        // a copied application view renders as the result does (its app-only error details aside)
        const copy = JSON.parse(JSON.stringify(viewOf(result, 'c1'))) as never
        expect(JSON.stringify(toOpenAIResponses(copy, { callId: id ?? '' }))).toBe(expected.openai_responses)
        expect(JSON.stringify(toMcp(copy))).toBe(expected.mcp)
      }),
      { numRuns: RUNS },
    )
  })

  it('on the call record (with and without a subject), byte for byte, and on which timestamps a record can have', () => {
    const ms = fc.oneof(
      fc.integer({ min: -8.64e15, max: 8.64e15 }),
      fc.integer({ min: 0, max: 4102444800000 }),
      fc.constantFrom(0, -1, 8.64e15, -8.64e15, 8.64e15 + 1, -8.64e15 - 1, 1.5, -0.5, 1e20),
    )
    fc.assert(
      fc.property(doc, str, str, ms, ms, fc.integer({ min: 1, max: 2 ** 31 }), fc.boolean(), fc.option(str, { nil: undefined }), (d, id, tool, started, ended, n, undo, subject) => {
        const text = JSON.stringify(d)
        fc.pre(attempt(() => canonicalizeResult(text)).ok)
        const result = ToolResult.fromJSON(text)
        const ts = attempt(() => JSON.stringify(callRecord(id, tool, result, started, ended, n, undo, subject)))
        const core = attempt(() => callRecordJson(id, tool, text, started, ended, n, undo, subject))
        expect(ts.ok, `TS: ${ts.ok ? 'accepts' : ts.error}\ncore: ${core.ok ? 'accepts' : core.error}`).toBe(core.ok)
        if (ts.ok && core.ok) expect(ts.value).toBe(core.value)
      }),
      { numRuns: RUNS },
    )
  })

  it('a lone surrogate anywhere becomes U+FFFD in TypeScript, so the core accepts what TypeScript made', () => {
    const broken = fc.string({ unit: 'binary', maxLength: 8 }).map((s) => `${s}\ud800`)
    fc.assert(
      fc.property(broken, broken, broken, (a, b, c) => {
        const result = ToolResult.failed(toolError('other', a, { code: b, details: { [c]: [a] } }))
          .withOutput({ text: b, structured: { [a]: c } })
          .withMetadata({ [b]: a })
        const wire = result.toJSONText()
        expect(wire).not.toMatch(/\\ud8/)
        expect(modelViewJson(wire)).toBe(JSON.stringify(toModel(result)))
      }),
      { numRuns: 500 },
    )
  })
})

describe('disagreements the differential test found (each failed before its fix)', () => {
  it('a refusal without a code: the core keeps it without one, and so does TypeScript (it used to add code "refused")', () => {
    const text = '{"v":1,"status":"refused","output":{"text":""},"refusal":{"kind":"permission_denied","message":"m","retryable":false}}'
    expect(canonicalizeResult(text)).toBe(text)
    const built = ToolResult.failed({ kind: 'permission_denied', message: 'm', retryable: false, refusal: true }).withOutput('')
    expect(built.toJSONText()).toBe(text)
    expect(JSON.stringify(built)).toBe(text)
  })

  it('numbers: the core writes them as JSON.stringify does (it wrote 1e-6, 1.0, 1e21 and exact integers beyond 2^53)', () => {
    const doc = (n: string) => `{"v":1,"status":"success","output":{"text":"","structured":${n}}}`
    for (const [given, js] of [
      ['0.000001', '0.000001'],
      ['1e-6', '0.000001'],
      ['1.0', '1'],
      ['1e21', '1e+21'],
      ['1E+300', '1e+300'],
      ['123456789012345680000', '123456789012345680000'],
      ['9007199254740993', '9007199254740992'],
      ['-217462534417106.625', '-217462534417106.62'],
      ['0.1', '0.1'],
    ] as const) {
      expect(canonicalizeResult(doc(given))).toBe(doc(js))
      expect(JSON.stringify(ToolResult.fromJSON(doc(given)))).toBe(doc(js))
      expect(modelViewJson(doc(given))).toBe(JSON.stringify(toModel(ToolResult.fromJSON(doc(given)))))
    }
  })

  it('a record over more than 2^53 ms: the core writes the duration as JavaScript does', () => {
    const text = '{"v":1,"status":"success","output":{"text":""}}'
    const result = ToolResult.fromJSON(text)
    const [started, ended] = [-2173919926743523, 8640000000000000]
    expect(callRecordJson('c', 't', text, started, ended, 1, false)).toBe(JSON.stringify(callRecord('c', 't', result, started, ended, 1, false)))
  })
})

describe('one owner per concept', () => {
  it('every vocabulary of an outcome comes from status.ts, and the core gives the dispositions and their names', () => {
    const tables = coreTables()
    expect(DISPOSITIONS).toEqual(tables.dispositions.map((d) => d.status))
    for (const [i, d] of tables.dispositions.entries()) {
      expect(statusNameOf(d.status as never)).toBe(d.statusName)
      expect(statusCodeOf(d.status as never)).toBe(i)
    }
    // result → [disposition, view status, outcome status, helper status, status name, error.type]
    const table: [ToolResult, readonly unknown[]][] = [
      [ToolResult.success('x'), ['success', 'ok', 'succeeded', 'ok', 'success', undefined]],
      [ToolResult.failed(toolError('timeout', 't')), ['error', 'error', 'timed_out', 'error', 'error', 'timeout']],
      [ToolResult.failed(toolError('network', 'n')), ['error', 'error', 'failed', 'error', 'error', 'network']],
      [ToolResult.failed(toolError('invalid_args', 'i')), ['error', 'invalid', 'invalid', 'invalid', 'error', 'invalid_args']],
      [ToolResult.failed(toolError('cancelled', 'c')), ['error', 'cancelled', 'cancelled', 'cancelled', 'error', 'cancelled']],
      [ToolResult.failed(refusalError('no', 'n')), ['refused', 'refused', 'denied', 'refused', 'denied', 'denied']],
      [ToolResult.skipped('s'), ['skipped', 'refused', 'skipped', undefined, 'skipped', 'skipped']],
      [ToolResult.pending({ kind: 'confirmation', summary: 's' }), ['pending', 'needs_confirmation', 'pending', undefined, 'pending', 'pending']],
      [ToolResult.pending({ kind: 'input' }), ['pending', 'pending', 'pending', undefined, 'pending', 'pending']],
    ]
    for (const [result, expected] of table) {
      const names = outcomeNamesOf(result)
      expect([names.disposition, names.view, names.outcome, names.helper, result.statusName(), errorTypeOf(result)]).toEqual(expected)
      const view = viewOf(result, undefined)
      expect(view.status).toBe(names.view)
      expect(dispositionOfView(view)).toBe(names.disposition)
      expect(dispositionOfView(JSON.parse(JSON.stringify(view)) as never)).toBe(names.disposition)
    }
  })

  it('the pending texts are the core’s: the output text a pending result is made with, and the text a model reads', () => {
    fc.assert(
      fc.property(pending, (p) => {
        fc.pre(PENDING_KINDS.includes(p.kind as never))
        const result = ToolResult.pending({ ...p, changes: undefined } as never)
        const request = { kind: p.kind as never, prompt: p.prompt, summary: p.summary }
        expect(result.text()).toBe(pendingOutputText(request))
        const model = JSON.parse(modelViewJson(result.toJSONText())) as { output: string }
        expect(model.output).toBe(pendingModelText(request))
      }),
      { numRuns: 500 },
    )
  })

  it('one depth limit: inputs, values in results and redaction all stop at the core’s MAX_VALUE_DEPTH', () => {
    expect(MAX_DEPTH).toBe(coreTables().maxValueDepth)
    expect(() => toFrozenJson(nested(100))).not.toThrow()
    expect(() => toFrozenJson(nested(101))).toThrow(/deeper than 100/)
    expect(redact(nested(100))).toEqual(nested(100))
    expect(redact(nested(101))).toBe('[redacted]')
  })

  it('redaction walks as toFrozenJson walks: the same JSON form, sensitive values replaced', () => {
    fc.assert(
      fc.property(json, (v) => {
        const hidden = (x: JsonValue): JsonValue =>
          Array.isArray(x)
            ? x.map(hidden)
            : typeof x === 'object' && x !== null
              ? Object.fromEntries(Object.entries(x).map(([k, y]) => [k, k === 'password' || k === 'cc-number' ? '[redacted]' : hidden(y)]))
              : x
        expect(JSON.stringify(redact(v))).toBe(JSON.stringify(hidden(toFrozenJson(v))))
      }),
      { numRuns: 1000 },
    )
  })
})
