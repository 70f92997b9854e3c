// The MRTR building blocks (src/mcp/mrtr.ts, request-state.ts, elicit-schema.ts), without HTTP:
// the sealed requestState (round trips, every refusal reason, rotation), the elicitation input
// requests of a confirmation and of a pending call's input, the mode a client gets, and what a
// retry's inputResponses mean. Every frame is validated against the 2026-07-28 schema.
import { describe, expect, it } from 'vitest'
import { ToolManager } from '../src/runtime/manager.js'
import {
  clientElicitation,
  confirmationInputRequest,
  expectedInputOf,
  MAX_FORM_SCHEMA_CHARS,
  confirmationMode,
  formSchemaOf,
  INVALID_REQUEST_STATE,
  inputKey,
  pendingInputRequest,
  principalOf,
  readInputAnswer,
  RequestStateCodec,
  RequestStateError,
  requestStateRefusalText,
  type ConfirmationView,
  type FormSchema,
  type RequestStateCall,
  type RequestStateInit,
  type RequestStateRefusal,
} from '../src/mcp/mrtr.js'
import { mcpSchemas } from './fixtures/mcp/schema.js'

const schemas = mcpSchemas('mcp-mrtr.test.ts')
const SECRET_A = 'secret-a-0123456789abcdef'
const SECRET_B = 'secret-b-0123456789abcdef'

/** Asserts `frame` is valid against `def` of the 2026-07-28 schema (when the schemas are here). */
function valid(def: string, frame: unknown): void {
  if (schemas === undefined) return
  expect(schemas.problems('2026-07-28', def, frame)).toEqual([])
}

const init: RequestStateInit = {
  kind: 'confirm',
  tool: 'delete_file',
  arguments: { path: 'notes.txt', force: true },
  callId: 'mcp_1a_2',
  id: 'tw1.confirm-id',
  principal: principalOf('bearer-token-1'),
}
const call: RequestStateCall = { tool: 'delete_file', arguments: { force: true, path: 'notes.txt' }, principal: principalOf('bearer-token-1') }

function refusal(codec: RequestStateCodec, token: unknown, with_: RequestStateCall | undefined = call): RequestStateRefusal | 'ok' {
  const opened = codec.open(token, with_)
  return opened.ok ? 'ok' : opened.reason
}

describe.skipIf(schemas === undefined)('the schema check', () => {
  it('finds what is wrong: it can fail', () => {
    expect(schemas!.problems('2026-07-28', 'ElicitRequest', { method: 'elicitation/create', params: { mode: 'url', message: 'x' } })).not.toEqual([])
    expect(schemas!.problems('2026-07-28', 'CallToolResultResponse', { jsonrpc: '2.0', id: 1, result: { inputRequests: {} } })).not.toEqual([])
  })
})

describe('requestState: sealed, bound, refused with a typed reason', () => {
  it('round-trips what it binds; the arguments in another key order are the same arguments', () => {
    const clock = { t: 1_000_000 }
    const codec = new RequestStateCodec({ secret: SECRET_A, ttlMs: 60_000, now: () => clock.t })
    const token = codec.seal({ ...init, round: 2, link: '/confirm/p1.abc' })
    expect(token).toMatch(/^twrs1\.[A-Za-z0-9_-]+$/)
    const opened = codec.open(token, call)
    expect(opened).toEqual({
      ok: true,
      state: {
        kind: 'confirm',
        tool: 'delete_file',
        argumentsHash: expect.stringMatching(/^[0-9a-f]{64}$/),
        callId: 'mcp_1a_2',
        id: 'tw1.confirm-id',
        principal: call.principal,
        round: 2,
        link: '/confirm/p1.abc',
        expiresAt: 1_060_000,
      },
    })
    // the verify hook gives the same state; round 1 and no link by default
    const first = codec.verify(codec.seal(init))
    expect(first.round).toBe(1)
    expect(first.link).toBeUndefined()
    expect(codec.check(first, call)).toBeUndefined()
  })

  it('holds nothing readable: the tool, the arguments and the ids are encrypted', () => {
    const codec = new RequestStateCodec({ secret: SECRET_A })
    const token = codec.seal({ ...init, arguments: { path: 'notes.txt', password: 'hunter2-very-secret' } })
    const raw = Buffer.from(token.slice('twrs1.'.length), 'base64url').toString('latin1')
    for (const clear of ['delete_file', 'notes.txt', 'hunter2', 'mcp_1a_2', 'confirm-id']) {
      expect(raw).not.toContain(clear)
      expect(token).not.toContain(clear)
    }
    // two seals of the same state differ (random IV)
    expect(codec.seal(init)).not.toBe(codec.seal(init))
  })

  it('tampered: a flip of any bit of any byte is refused, as another secret in the key id and as tampered after it', () => {
    const codec = new RequestStateCodec({ secret: SECRET_A })
    const token = codec.seal(init)
    const raw = Buffer.from(token.slice('twrs1.'.length), 'base64url')
    const seen = new Set<string>()
    for (let i = 0; i < raw.length; i++) {
      for (const bit of [0x01, 0x80]) {
        const bad = Buffer.from(raw)
        bad[i]! ^= bit
        const reason = refusal(codec, `twrs1.${bad.toString('base64url')}`)
        expect(reason, `byte ${i}`).toBe(i < 8 ? 'other_secret' : 'tampered')
        seen.add(reason)
      }
    }
    expect([...seen].sort()).toEqual(['other_secret', 'tampered'])
    // every character of the text, replaced: never opens
    for (let i = 0; i < token.length; i++) {
      const c = token[i] === 'A' ? 'B' : 'A'
      expect(refusal(codec, token.slice(0, i) + c + token.slice(i + 1)), `char ${i}`).not.toBe('ok')
    }
    // cut short or lengthened
    expect(refusal(codec, token.slice(0, -1))).not.toBe('ok')
    expect(refusal(codec, `${token}A`)).not.toBe('ok')
    expect(refusal(codec, token.slice(0, 30))).toBe('malformed')
  })

  it('expired: opens up to its expiry on a hand-moved clock, refused one ms after', () => {
    const clock = { t: 5_000 }
    const codec = new RequestStateCodec({ secret: SECRET_A, ttlMs: 10_000, now: () => clock.t })
    const token = codec.seal(init)
    clock.t += 10_000
    expect(refusal(codec, token)).toBe('ok')
    clock.t += 1
    expect(refusal(codec, token)).toBe('expired')
    expect(() => codec.verify(token)).toThrow(RequestStateError)
  })

  it('rotation: the newest secret seals, any listed one opens; a secret removed refuses as another secret', () => {
    const before = new RequestStateCodec({ secret: SECRET_A })
    const during = new RequestStateCodec({ secret: [SECRET_B, SECRET_A] })
    const after = new RequestStateCodec({ secret: SECRET_B })
    const old = before.seal(init)
    const fresh = during.seal(init)
    expect(refusal(during, old)).toBe('ok')
    expect(refusal(during, fresh)).toBe('ok')
    expect(refusal(after, fresh)).toBe('ok') // sealed under the newest
    expect(refusal(after, old)).toBe('other_secret') // SECRET_A removed
    expect(refusal(before, fresh)).toBe('other_secret')
  })

  it('without a secret: a random key of this process, shared by its codecs; a codec with a secret refuses it', () => {
    const one = new RequestStateCodec()
    const two = new RequestStateCodec()
    const token = one.seal(init)
    expect(refusal(two, token)).toBe('ok')
    expect(refusal(new RequestStateCodec({ secret: SECRET_A }), token)).toBe('other_secret')
    expect(refusal(one, new RequestStateCodec({ secret: SECRET_A }).seal(init))).toBe('other_secret')
  })

  it('malformed: anything that is not a state, whatever its type or size', () => {
    const codec = new RequestStateCodec({ secret: SECRET_A })
    for (const bad of [undefined, null, 42, {}, [], '', 'twrs1.', 'twrs1', 'tw1.abc.def', 'twrs1.a+b/c=', 'twrs1.####', `twrs1.${'A'.repeat(20_001)}`, 'TWRS1.AAAA']) {
      expect(refusal(codec, bad), String(bad).slice(0, 20)).toBe('malformed')
    }
  })

  it('bound to the call: another tool, other arguments or another principal is refused', () => {
    const codec = new RequestStateCodec({ secret: SECRET_A })
    const token = codec.seal(init)
    expect(refusal(codec, token, { ...call, tool: 'delete_files' })).toBe('wrong_tool')
    expect(refusal(codec, token, { ...call, arguments: { path: 'other.txt', force: true } })).toBe('wrong_arguments')
    expect(refusal(codec, token, { ...call, arguments: { path: 'notes.txt' } })).toBe('wrong_arguments')
    expect(refusal(codec, token, { ...call, arguments: { path: 'notes.txt', force: true, extra: 1 } })).toBe('wrong_arguments')
    expect(refusal(codec, token, { ...call, principal: principalOf('bearer-token-2') })).toBe('wrong_principal')
    expect(refusal(codec, token, { ...call, principal: '' })).toBe('wrong_principal')
    // arguments with no JSON form are other arguments, never a throw
    const cyclic: Record<string, unknown> = {}
    cyclic.self = cyclic
    expect(refusal(codec, token, { ...call, arguments: cyclic })).toBe('wrong_arguments')
    // a state without a principal (no token) is refused with one
    const anonymous = codec.seal({ ...init, principal: principalOf(undefined) })
    expect(refusal(codec, anonymous, { ...call, principal: '' })).toBe('ok')
    expect(refusal(codec, anonymous)).toBe('wrong_principal')
  })

  it('the reason is for logs and names no secret; the wire answer is the frozen -32602', () => {
    const codec = new RequestStateCodec({ secret: SECRET_A })
    const token = codec.seal(init)
    let thrown: unknown
    try {
      new RequestStateCodec({ secret: SECRET_B }).verify(token)
    } catch (err) {
      thrown = err
    }
    expect(thrown).toBeInstanceOf(RequestStateError)
    const error = thrown as RequestStateError
    expect(error.reason).toBe('other_secret')
    expect(error.message).toBe(`toolwire: ${requestStateRefusalText('other_secret')}`)
    for (const secret of [SECRET_A, SECRET_B, token, 'delete_file']) expect(error.message).not.toContain(secret)
    expect(INVALID_REQUEST_STATE).toEqual({ code: -32602, message: 'Invalid or expired requestState', data: { reason: 'invalid_request_state' } })
    valid('JSONRPCErrorResponse', { jsonrpc: '2.0', id: 2, error: INVALID_REQUEST_STATE })
  })

  it('principalOf: a digest of the bearer token, "" without one', () => {
    expect(principalOf(undefined)).toBe('')
    expect(principalOf('')).toBe('')
    expect(principalOf('tok')).toMatch(/^[0-9a-f]{64}$/)
    expect(principalOf('tok')).not.toBe(principalOf('tok2'))
  })

  it('an input state carries its form schema (bounded), so the retry checks the answer with no server memory', () => {
    const codec = new RequestStateCodec({ secret: SECRET_A })
    const fit = formSchemaOf(FITTING)
    if (!fit.ok) throw new Error('FITTING must fit')
    const input = { ...init, kind: 'input' as const, id: 'req-1', schema: fit.schema }
    const state = codec.verify(codec.seal(input))
    expect(state.schema).toEqual(FITTING)
    expect(expectedInputOf(state)).toEqual({ kind: 'input', schema: FITTING })
    expect(expectedInputOf(codec.verify(codec.seal(init)))).toEqual({ kind: 'confirm', mode: 'form' })
    expect(expectedInputOf(codec.verify(codec.seal({ ...init, link: '/confirm/x' })))).toEqual({ kind: 'confirm', mode: 'url' })
    expect(() => codec.seal({ ...init, kind: 'input' })).toThrow(/carries its form schema/)
    expect(() => codec.seal({ ...init, schema: fit.schema })).toThrow(/carries its form schema/)
    // the largest schema that fits form elicitation still makes a state that opens
    const properties: Record<string, unknown> = {}
    for (let i = 0; JSON.stringify(properties).length < MAX_FORM_SCHEMA_CHARS - 200; i++) properties[`p${i}`] = { type: 'string', enum: ['a'.repeat(60), 'b'.repeat(60)] }
    const big = formSchemaOf({ type: 'object', properties })
    expect(big.ok).toBe(true)
    const token = codec.seal({ ...input, schema: (big as { schema: FormSchema }).schema })
    expect(token.length).toBeLessThan(20_000)
    expect(codec.open(token, call).ok).toBe(true)
    properties.more = { type: 'string', description: 'x'.repeat(300) }
    expect(formSchemaOf({ type: 'object', properties })).toEqual({ ok: false, reason: 'too_large', at: '' })
  })

  it('refuses bad options with a TypeError that names no secret', () => {
    expect(() => new RequestStateCodec({ secret: 'short' })).toThrow(/approvalSecret must be at least 16 bytes/)
    expect(() => new RequestStateCodec({ secret: [SECRET_A, SECRET_A] })).toThrow(/approvalSecret\[1\] is the same as approvalSecret\[0\]/)
    expect(() => new RequestStateCodec({ ttlMs: 0 })).toThrow(TypeError)
    expect(() => new RequestStateCodec().seal({ ...init, round: 0 })).toThrow(TypeError)
  })
})

async function confirmationView(tm: ToolManager, name: string, input: Record<string, unknown>): Promise<ConfirmationView> {
  const view = await tm.call(name, input)
  if (view.status !== 'needs_confirmation') throw new Error(`expected needs_confirmation, got ${view.status}`)
  return view
}

function secretTool(tm: ToolManager, summary?: (input: Record<string, unknown>) => string, changes?: unknown[]): void {
  tm.register({
    name: 'rotate_password',
    inputSchema: { type: 'object', properties: { user: { type: 'string' }, password: { type: 'string' } }, required: ['user', 'password'] },
    needsConfirmation: true,
    ...(summary === undefined ? {} : { summarize: summary }),
    previewChanges: (input: Record<string, unknown>) =>
      (changes as never) ?? [
        { path: 'password', before: 'old-hunter2', after: input.password },
        { path: 'user', before: 'alice', after: input.user },
        { path: 'created' },
      ],
    run: () => 'done',
  })
}

describe('the input request of a confirmation', () => {
  it('form: the summary and the redacted changes, an approve boolean; a password never appears; the whole frame is valid', async () => {
    const tm = new ToolManager()
    secretTool(tm)
    const view = await confirmationView(tm, 'rotate_password', { user: 'bob', password: 'hunter2-new-secret' })
    const request = confirmationInputRequest(view, 'form')
    const text = JSON.stringify(request)
    expect(text).not.toContain('hunter2')
    expect(request).toEqual({
      method: 'elicitation/create',
      params: {
        mode: 'form',
        message: `Confirm: ${view.summary}\n\nChanges:\n- password: "[redacted]" → "[redacted]"\n- user: "alice" → "bob"\n- created: (none) → (none)`,
        requestedSchema: {
          type: 'object',
          properties: { approve: { type: 'boolean', title: 'Approve', description: view.summary, default: false } },
          required: ['approve'],
        },
      },
    })
    valid('ElicitRequest', request)

    const codec = new RequestStateCodec({ secret: SECRET_A })
    const args = { user: 'bob', password: 'hunter2-new-secret' }
    const requestState = codec.seal({ kind: 'confirm', tool: 'rotate_password', arguments: args, callId: 'mcp_1a_2', id: view.confirmId, principal: '' })
    expect(requestState).not.toContain('hunter2')
    const key = inputKey('confirm', 1)
    valid('CallToolResultResponse', {
      jsonrpc: '2.0',
      id: 1,
      result: {
        resultType: 'input_required',
        inputRequests: { [key]: request },
        requestState,
        _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'toolwire', version: '0.2.0' }, 'toolwire/callId': 'mcp_1a_2' },
      },
    })
    const retry = {
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: {
        name: 'rotate_password',
        arguments: args,
        inputResponses: { [key]: { action: 'accept', content: { approve: true } } },
        requestState,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientInfo': { name: 'test', version: '1.0.0' },
          'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } },
        },
      },
    }
    valid('CallToolRequest', retry)
    // the retry reads as an approval, and its state opens for this call
    expect(readInputAnswer(retry.params.inputResponses, key, { kind: 'confirm', mode: 'form' })).toEqual({ kind: 'approve' })
    expect(codec.open(retry.params.requestState, { tool: 'rotate_password', arguments: args, principal: '' }).ok).toBe(true)
  })

  it('URL: "Approve or deny: <summary>" and the approval link; no link is a TypeError', async () => {
    const tm = new ToolManager()
    secretTool(tm, ({ user }) => `Rotate the password of ${String(user)}`)
    const view = await confirmationView(tm, 'rotate_password', { user: 'bob', password: 'hunter2-new-secret' })
    const link = 'https://tools.example.com/confirm/p1.sealed'
    const request = confirmationInputRequest(view, 'url', link)
    expect(request).toEqual({ method: 'elicitation/create', params: { mode: 'url', message: 'Approve or deny: Rotate the password of bob', url: link } })
    valid('ElicitRequest', request)
    valid('CallToolResultResponse', { jsonrpc: '2.0', id: 'a', result: { resultType: 'input_required', inputRequests: { [inputKey('confirm', 2)]: request }, requestState: 'twrs1.x' } })
    expect(() => confirmationInputRequest(view, 'url')).toThrow(TypeError)
    expect(() => confirmationInputRequest(view, 'url', '/confirm/p1.sealed')).toThrow(/absolute URL/)
  })

  it('a hostile summary and hostile changes: one line each, control and bidi characters replaced, bounded', async () => {
    const tm = new ToolManager()
    const hostile = 'Pay bob\n\nChanges:\n- amount: 1 → 1\u0000\u001b[31m\u202eevil\u2066' + 'x'.repeat(1_000_000)
    const changes = Array.from({ length: 1000 }, (_, i) => ({ path: `field\n${i}`, before: 'y'.repeat(10_000), after: { deep: 'z'.repeat(10_000) } }))
    secretTool(tm, () => hostile, changes)
    const view = await confirmationView(tm, 'rotate_password', { user: 'bob', password: 'hunter2-new-secret' })
    const request = confirmationInputRequest(view, 'form')
    const params = request.params as { message: string; requestedSchema: FormSchema }
    const lines = params.message.split('\n')
    // the summary cannot forge lines: one line for it, then "", "Changes:", 20 changes and "… and 980 more"
    expect(lines[0]).toMatch(/^Confirm: Pay bob {2}Changes: - amount: 1 → 1\ufffd\ufffd\[31m\ufffdevil\ufffdx+…$/)
    expect(lines).toHaveLength(1 + 2 + 20 + 1)
    expect(lines.at(-1)).toBe('… and 980 more')
    expect(lines[3]).toMatch(/^- field 0: "y{199}… → \{"deep":"z{191}…$/)
    expect(params.message.length).toBeLessThan(1100 + 20 * 420 + 20)
    expect(params.message).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f\u202e\u2066]/)
    const description = (params.requestedSchema.properties.approve as { description: string }).description
    expect(description.length).toBeLessThanOrEqual(201)
    valid('ElicitRequest', request)
    const url = confirmationInputRequest(view, 'url', 'https://tools.example.com/confirm/x').params.message
    expect(url.length).toBeLessThanOrEqual('Approve or deny: '.length + 1001)
    expect(url).not.toContain('\n')
  })
})

describe('the mode of a confirmation', () => {
  const table: [string, unknown, 'form' | 'url' | undefined, boolean, 'form' | 'url' | 'none'][] = [
    ['no capabilities', {}, undefined, true, 'none'],
    ['capabilities not an object', 'elicitation', undefined, true, 'none'],
    ['elicitation not an object', { elicitation: true }, undefined, true, 'none'],
    ['elicitation a list', { elicitation: [] }, undefined, true, 'none'],
    ['bare elicitation (2025)', { elicitation: {} }, undefined, true, 'form'],
    ['form', { elicitation: { form: {} } }, undefined, false, 'form'],
    ['form and url', { elicitation: { form: {}, url: {} } }, undefined, true, 'form'],
    ['url only, a link', { elicitation: { url: {} } }, undefined, true, 'url'],
    ['url only, no link (stdio)', { elicitation: { url: {} } }, undefined, false, 'none'],
    ['form and url, the tool asks for url', { elicitation: { form: {}, url: {} } }, 'url', true, 'url'],
    ['form only, the tool asks for url', { elicitation: { form: {} } }, 'url', true, 'none'],
    ['form and url, the tool asks for url, no link', { elicitation: { form: {}, url: {} } }, 'url', false, 'none'],
    ['form only, the tool asks for form', { elicitation: { form: {} } }, 'form', true, 'form'],
    ['form: true (not an object)', { elicitation: { form: true } }, undefined, true, 'none'],
  ]
  for (const [what, capabilities, confirmVia, linkAvailable, mode] of table) {
    it(`${what} → ${mode}`, () => {
      expect(confirmationMode({ capabilities, ...(confirmVia === undefined ? {} : { confirmVia }), linkAvailable })).toBe(mode)
    })
  }

  it('clientElicitation reads both modes', () => {
    expect(clientElicitation({ elicitation: { form: {}, url: {} } })).toEqual({ form: true, url: true })
    expect(clientElicitation(null)).toEqual({ form: false, url: false })
  })

  it('input keys are unique per round', () => {
    expect([inputKey('confirm', 1), inputKey('confirm', 2), inputKey('input', 1), inputKey('input', 3)]).toEqual([
      'toolwire.confirm',
      'toolwire.confirm.2',
      'toolwire.input',
      'toolwire.input.3',
    ])
  })
})

/** Every property shape the 2026 revision's PrimitiveSchemaDefinition allows (the conformance scenarios use these). */
const FITTING = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  properties: {
    name: { type: 'string', title: 'Name', description: 'Your name', minLength: 1, maxLength: 50, default: 'John Doe' },
    email: { type: 'string', format: 'email' },
    age: { type: 'integer', minimum: 0, maximum: 150, default: 30 },
    score: { type: 'number', default: 95.5 },
    verified: { type: 'boolean', default: true },
    status: { type: 'string', enum: ['active', 'inactive'], default: 'active' },
    titled: { type: 'string', oneOf: [{ const: 'a', title: 'Option A' }, { const: 'b', title: 'Option B' }] },
    legacy: { type: 'string', enum: ['x', 'y'], enumNames: ['Ex', 'Why'] },
    tags: { type: 'array', items: { type: 'string', enum: ['red', 'green'] }, minItems: 1, maxItems: 2 },
    titledTags: { type: 'array', items: { anyOf: [{ const: 'r', title: 'Red' }] } },
  },
  required: ['name', 'age'],
}

describe('the input request of a pending call', () => {
  it('a flat schema of primitives and enums becomes a form elicitation with that schema', () => {
    const answer = pendingInputRequest({ id: 'req-1', kind: 'input', prompt: 'Tell us about you', schema: FITTING })
    expect(answer.fits).toBe(true)
    if (!answer.fits) return
    expect(answer.request).toEqual({ method: 'elicitation/create', params: { mode: 'form', message: 'Tell us about you', requestedSchema: FITTING } })
    valid('ElicitRequest', answer.request)
    valid('CallToolResultResponse', { jsonrpc: '2.0', id: 1, result: { resultType: 'input_required', inputRequests: { [inputKey('input', 1)]: answer.request }, requestState: 'twrs1.x' } })
    // the wire copy is a copy: the tool's schema is not shared
    expect(answer.schema.properties).not.toBe(FITTING.properties)
  })

  it('title, description and additionalProperties are accepted and not sent; a summary is the message without a prompt', () => {
    const answer = pendingInputRequest({ id: 'r', kind: 'input', summary: 'Pick one', schema: { type: 'object', title: 'T', description: 'D', additionalProperties: false, properties: { a: { type: 'boolean' } } } })
    expect(answer.fits && answer.request.params).toEqual({ mode: 'form', message: 'Pick one', requestedSchema: { type: 'object', properties: { a: { type: 'boolean' } } } })
  })

  const misfits: [string, unknown, string, string][] = [
    ['not an object schema', { type: 'string' }, 'not_an_object_schema', ''],
    ['no properties', { type: 'object' }, 'not_an_object_schema', ''],
    ['a nested object', { type: 'object', properties: { address: { type: 'object', properties: {} } } }, 'nested', '/properties/address'],
    ['an array of objects', { type: 'object', properties: { list: { type: 'array', items: { type: 'object' } } } }, 'nested', '/properties/list'],
    ['an array of free strings', { type: 'object', properties: { list: { type: 'array', items: { type: 'string' } } } }, 'nested', '/properties/list'],
    ['a pattern', { type: 'object', properties: { code: { type: 'string', pattern: '^[0-9]+$' } } }, 'unsupported_keyword', '/properties/code/pattern'],
    ['a $ref', { type: 'object', properties: { a: { $ref: '#/$defs/a' } }, $defs: {} }, 'unsupported_keyword', '/$defs'],
    ['a property without type', { type: 'object', properties: { a: {} } }, 'bad_value', '/properties/a'],
    ['a null type', { type: 'object', properties: { a: { type: 'null' } } }, 'bad_value', '/properties/a'],
    ['an unknown format', { type: 'object', properties: { a: { type: 'string', format: 'ipv4' } } }, 'bad_value', '/properties/a'],
    ['a default of the wrong type', { type: 'object', properties: { a: { type: 'boolean', default: 'yes' } } }, 'bad_value', '/properties/a'],
    ['required naming no property', { type: 'object', properties: { a: { type: 'boolean' } }, required: ['b'] }, 'bad_value', '/required'],
    ['an allOf at the top', { type: 'object', properties: {}, allOf: [] }, 'unsupported_keyword', '/allOf'],
    ['a / in a name', { type: 'object', properties: { 'a/b': { type: 'string', pattern: 'x' } } }, 'unsupported_keyword', '/properties/a~1b/pattern'],
  ]
  for (const [what, schema, reason, at] of misfits) {
    it(`does not fit: ${what} (${reason} at "${at}")`, () => {
      expect(pendingInputRequest({ id: 'r', kind: 'input', schema })).toEqual({ fits: false, reason, at })
    })
  }

  it('not an input request, or no schema: does not fit, so the caller answers today\'s isError result', () => {
    expect(pendingInputRequest({ id: 'r', kind: 'authorization', url: 'https://x', schema: FITTING })).toEqual({ fits: false, reason: 'not_input' })
    expect(pendingInputRequest({ id: 'r', kind: 'input', prompt: 'Name?' })).toEqual({ fits: false, reason: 'no_schema' })
    expect(formSchemaOf(null)).toEqual({ ok: false, reason: 'not_an_object_schema', at: '' })
  })

  it('a hostile prompt is one bounded line', () => {
    const answer = pendingInputRequest({ id: 'r', kind: 'input', prompt: `a\nb\u0007${'c'.repeat(5000)}`, schema: { type: 'object', properties: {} } })
    expect(answer.fits && answer.request.params.message).toMatch(/^a b\ufffdc{996}…$/)
  })
})

describe('what a retry answers', () => {
  const form = { kind: 'confirm', mode: 'form' } as const
  const url = { kind: 'confirm', mode: 'url' } as const
  const key = 'toolwire.confirm'
  const cases: [string, unknown, typeof form | typeof url, unknown][] = [
    ['no inputResponses', undefined, form, { kind: 'missing' }],
    ['inputResponses not an object', 'accept', form, { kind: 'missing' }],
    ['another key only (an earlier round)', { 'toolwire.confirm.2': { action: 'accept', content: { approve: true } } }, form, { kind: 'missing' }],
    ['the key inherited, not own', Object.create({ [key]: { action: 'accept', content: { approve: true } } }), form, { kind: 'missing' }],
    ['an entry that is not an elicitation result', { [key]: { roots: [] } }, form, { kind: 'missing' }],
    ['an entry that is null', { [key]: null }, form, { kind: 'missing' }],
    ['accept, approve true', { [key]: { action: 'accept', content: { approve: true } } }, form, { kind: 'approve' }],
    ['accept, approve false', { [key]: { action: 'accept', content: { approve: false } } }, form, { kind: 'decline', action: 'accept' }],
    ['accept, approve "true" (a string)', { [key]: { action: 'accept', content: { approve: 'true' } } }, form, { kind: 'invalid', problem: '"approve" must be a boolean' }],
    ['accept without content', { [key]: { action: 'accept' } }, form, { kind: 'invalid', problem: '"approve" must be a boolean' }],
    ['decline', { [key]: { action: 'decline' } }, form, { kind: 'decline', action: 'decline' }],
    ['cancel', { [key]: { action: 'cancel' } }, form, { kind: 'decline', action: 'cancel' }],
    ['url: accept', { [key]: { action: 'accept' } }, url, { kind: 'url_accept' }],
    ['url: decline', { [key]: { action: 'decline' } }, url, { kind: 'decline', action: 'decline' }],
  ]
  for (const [what, responses, expected, answer] of cases) {
    it(`${what} → ${(answer as { kind: string }).kind}`, () => {
      expect(readInputAnswer(responses, key, expected)).toEqual(answer)
    })
  }

  it('input: the content checked against the schema, keys it does not name dropped', () => {
    const fit = formSchemaOf(FITTING)
    if (!fit.ok) throw new Error('FITTING must fit')
    const expected = { kind: 'input', schema: fit.schema } as const
    const k = inputKey('input', 1)
    const read = (content: unknown) => readInputAnswer({ [k]: { action: 'accept', content } }, k, expected)
    const good = { name: 'Ann', age: 30, email: 'a@b.c', status: 'inactive', tags: ['red'], titled: 'b', legacy: 'y', verified: false, score: 2, extra: 'dropped' }
    const { extra: _dropped, ...kept } = good
    expect(read(good)).toEqual({ kind: 'input', content: kept })
    valid('ElicitResult', { action: 'accept', content: kept })
    for (const [content, problem] of [
      [{ age: 30 }, '"name" is required'],
      [{ name: 'Ann', age: 30.5 }, '"age" must be an integer'],
      [{ name: 'Ann', age: 151 }, '"age" must be at most 150'],
      [{ name: '', age: 3 }, '"name" must be at least 1 characters'],
      [{ name: 'Ann', age: 3, status: 'gone' }, '"status" is not one of the options'],
      [{ name: 'Ann', age: 3, titled: 'c' }, '"titled" is not one of the options'],
      [{ name: 'Ann', age: 3, tags: ['blue'] }, '"tags" holds a value that is not one of the options'],
      [{ name: 'Ann', age: 3, tags: [] }, '"tags" must hold at least 1'],
      [{ name: 'Ann', age: 3, verified: 'yes' }, '"verified" must be a boolean'],
      [{ name: 'Ann', age: '3' }, '"age" must be a number'],
      ['a string', 'the answer has no content object'],
    ] as const) {
      expect(read(content)).toEqual({ kind: 'invalid', problem })
    }
    expect(readInputAnswer({ [k]: { action: 'decline' } }, k, expected)).toEqual({ kind: 'decline', action: 'decline' })
    expect(readInputAnswer({}, k, expected)).toEqual({ kind: 'missing' })
  })
})
