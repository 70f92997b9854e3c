// A call's principal: validated, seen by the body and the permission hooks, its scopes checked
// against the tool's (or the manager's) before anything else runs.
import { afterAll, describe, expect, it } from 'vitest'
import type { ToolStore } from '../src/runtime/store/index.js'
import { storeKinds, storePair } from './stores.js'
import { ToolManager, type EvidenceRecord, canonicalOf, principalKey, readPrincipal, missingScopes, type Principal, type ToolContext } from '../src/index.js'

const alice: Principal = { subject: 'alice', issuer: 'https://id.example.com', clientId: 'app', scopes: ['files:read'] }

function manager(options: ConstructorParameters<typeof ToolManager>[0] = {}) {
  const tm = new ToolManager(options)
  const runs: ToolContext[] = []
  const hooks: unknown[] = []
  tm.register({
    name: 'write_file',
    inputSchema: { type: 'object' },
    scopes: ['files:write'],
    permission: (call) => {
      hooks.push(call)
      return true
    },
    run: (_input, ctx) => {
      runs.push(ctx)
      return 'written'
    },
  })
  tm.register({
    name: 'read_file',
    inputSchema: { type: 'object' },
    run: (_input, ctx) => {
      runs.push(ctx)
      return 'read'
    },
  })
  return { tm, runs, hooks }
}

describe('a call with a principal', () => {
  it('reaches the body and the permission hooks, frozen, without fields it does not know', async () => {
    const { tm, runs, hooks } = manager()
    const given = { ...alice, scopes: ['files:write', 'files:write'], token: 'secret' }
    const result = await tm.call('write_file', {}, { principal: given })
    expect(result.status).toBe('ok')
    const seen = runs[0]!.principal!
    expect(seen).toEqual({ subject: 'alice', issuer: 'https://id.example.com', clientId: 'app', scopes: ['files:write'] })
    expect(Object.isFrozen(seen) && Object.isFrozen(seen.scopes)).toBe(true)
    expect((hooks[0] as { principal: Principal }).principal).toBe(seen)
  })

  it('is absent for the operator, whose calls are not checked against scopes', async () => {
    const { tm, runs, hooks } = manager()
    expect((await tm.call('write_file', {})).status).toBe('ok')
    expect(runs[0]!.principal).toBeUndefined()
    expect(hooks[0]).not.toHaveProperty('principal')
  })

  it('is refused insufficient_scope, naming the missing scopes, before any hook or body runs', async () => {
    const { tm, runs, hooks } = manager()
    const result = await tm.call('write_file', {}, { principal: alice })
    expect(result).toMatchObject({ status: 'refused', code: 'insufficient_scope', message: 'This call needs the scope: files:write' })
    expect(canonicalOf(result)!.refusal()?.details).toEqual({ scopes: ['files:write'] })
    expect(runs).toHaveLength(0)
    expect(hooks).toHaveLength(0)
    // callJson and callMany take the same gate
    expect(await tm.callJson('write_file', '{}', { principal: alice })).toMatchObject({ status: 'refused', code: 'insufficient_scope' })
    const many = await tm.callMany([{ name: 'write_file', input: {}, options: { principal: alice } }, { name: 'read_file', input: {}, options: { principal: alice } }])
    expect(many.map((r) => r.status)).toEqual(['refused', 'ok'])
    expect(runs).toHaveLength(1)
  })

  it('passes through a scope that implies the one needed, followed transitively', async () => {
    const { tm } = manager({ impliedScopes: { 'files:admin': ['files:manage'], 'files:manage': ['files:write'] } })
    const admin = { ...alice, scopes: ['files:admin'] }
    expect((await tm.call('write_file', {}, { principal: admin })).status).toBe('ok')
    expect(tm.scopesMissing('write_file', ['files:admin'])).toEqual([])
    expect(tm.scopesMissing('write_file', ['files:read'])).toEqual(['files:write'])
    expect(tm.scopesMissing('nope', [])).toBeUndefined()
  })

  it("uses the manager's scopes for a tool that declares none, and lists every tool's scopes in the manifest", async () => {
    const { tm } = manager({ scopes: ['tools:use'] })
    expect(await tm.call('read_file', {}, { principal: alice })).toMatchObject({ status: 'refused', code: 'insufficient_scope', message: 'This call needs the scope: tools:use' })
    expect((await tm.call('read_file', {}, { principal: { ...alice, scopes: ['tools:use'] } })).status).toBe('ok')
    const manifest = Object.fromEntries(tm.manifest().map((t) => [t.name, t.scopes]))
    expect(manifest).toEqual({ write_file: ['files:write'], read_file: ['tools:use'] })
    expect(new ToolManager().register({ name: 'x', inputSchema: { type: 'object' }, run: () => 1 }).manifest()[0]).not.toHaveProperty('scopes')
  })

  it.each([
    ['not an object', 'alice', 'principal must be an object { subject, issuer, scopes }'],
    ['an empty subject', { subject: '', issuer: '', scopes: [] }, 'principal.subject must be well-formed text of 1 to 1024 characters'],
    ['a subject with a lone surrogate', { subject: 'a\ud800', issuer: '', scopes: [] }, 'principal.subject must be well-formed text of 1 to 1024 characters'],
    ['no issuer', { subject: 'a', scopes: [] }, 'principal.issuer must be well-formed text of at most 2048 characters'],
    ['scopes not a list', { subject: 'a', issuer: '', scopes: 'files:read' }, 'principal.scopes must be an array of at most 256 scopes'],
    ['a scope with a space', { subject: 'a', issuer: '', scopes: ['a b'] }, `principal.scopes must hold scope tokens of 1 to 256 visible ASCII characters (no space, '"' or '\\')`],
    ['an empty clientId', { subject: 'a', issuer: '', clientId: '', scopes: [] }, 'principal.clientId must be well-formed text of 1 to 1024 characters'],
  ])('with %s is refused invalid_options, and nothing runs', async (_what, principal, why) => {
    const { tm, runs } = manager()
    const result = await tm.call('read_file', {}, { principal: principal as Principal })
    expect(result).toMatchObject({ status: 'refused', code: 'invalid_options' })
    expect(result.status === 'refused' && result.message).toContain(why)
    expect(runs).toHaveLength(0)
  })

  it('that throws when read is refused invalid_options', async () => {
    const { tm, runs } = manager()
    const hostile = {
      get principal(): Principal {
        throw new Error('boom')
      },
    }
    expect(await tm.call('read_file', {}, hostile)).toMatchObject({ status: 'refused', code: 'invalid_options' })
    expect(runs).toHaveLength(0)
  })
})

describe('records name who called', () => {
  it('call_start and call_end carry the principal (never its scopes), the record its subject, the evidence its identity', async () => {
    const records: EvidenceRecord[] = []
    const { tm } = manager({ evidence: { append: (r) => void records.push(r), readAll: async () => records } })
    const events: Record<string, unknown>[] = []
    tm.on('call_start', (e) => void events.push({ ...e, event: 'start' }))
    tm.on('call_end', (e) => void events.push({ event: 'end', principal: e.principal, record: e.record }))
    await tm.call('read_file', {}, { principal: alice })
    await tm.call('write_file', {}, { principal: alice }) // refused before running: no evidence, but events and a record
    await tm.call('read_file', {})
    const who = { subject: 'alice', issuer: 'https://id.example.com', clientId: 'app' }
    expect(events[0]).toMatchObject({ event: 'start', principal: who })
    expect(events[1]).toMatchObject({ event: 'end', principal: who, record: { tool: 'read_file', subject: 'alice' } })
    expect(events[3]).toMatchObject({ event: 'end', principal: who, record: { tool: 'write_file', refusal_code: 'insufficient_scope', subject: 'alice' } })
    expect(events[4]).not.toHaveProperty('principal')
    expect(events[5]!.principal).toBeUndefined()
    expect(events[5]!.record).not.toHaveProperty('subject')
    // the subject is the record's last field, so records without one keep their bytes
    expect(Object.keys(events[1]!.record as object).at(-1)).toBe('subject')
    expect(records.map((r) => r.principal)).toEqual([who, undefined])
    expect(JSON.stringify(events)).not.toContain('files:read')
  })
})

describe('scope options', () => {
  it('refuse malformed scopes at construction and registration, naming the option', () => {
    expect(() => new ToolManager({ scopes: ['ok', 'not ok'] })).toThrow(/scopes must be an array of scopes/)
    expect(() => new ToolManager({ impliedScopes: { 'a b': ['c'] } })).toThrow(/impliedScopes key "a b" is not a scope/)
    expect(() => new ToolManager({ impliedScopes: { a: 'c' as unknown as string[] } })).toThrow(/impliedScopes\["a"\] must be an array of scopes/)
    expect(() => new ToolManager().register({ name: 't', inputSchema: { type: 'object' }, scopes: ['x"y'], run: () => 1 })).toThrow(/tool "t" scopes must be an array of scopes/)
  })
})

describe('principal helpers', () => {
  it('principalKey depends on issuer and subject only, with no ambiguity between them', () => {
    const k = principalKey(alice)
    expect(k).toMatch(/^[0-9a-f]{64}$/)
    expect(principalKey({ ...alice, clientId: 'other' } as Principal)).toBe(k)
    expect(principalKey({ subject: 'alice', issuer: 'https://id.example.com/' })).not.toBe(k)
    expect(principalKey({ subject: 'b\u0000c', issuer: 'a' })).not.toBe(principalKey({ subject: 'c', issuer: 'a\u0000b' }))
  })

  it('readPrincipal drops duplicates and unknown fields; missingScopes keeps the order of the required list and ignores cycles', () => {
    expect(readPrincipal({ subject: 's', issuer: 'i', scopes: ['a', 'a', 'b'], extra: 1 })).toEqual({ subject: 's', issuer: 'i', scopes: ['a', 'b'] })
    expect(missingScopes(['a'], ['c', 'b', 'a'], { a: ['b'], b: ['a'] })).toEqual(['c'])
    expect(missingScopes([], [])).toEqual([])
  })
})

const kinds = await storeKinds('principals')
const opened: ToolStore[] = []
afterAll(async () => {
  for (const s of opened) await s.close().catch(() => undefined)
})

describe('who approved', () => {
  const approver = { subject: 'carol', issuer: 'https://id.example.com', clientId: 'console' }

  it.each([{ name: 'no store' } as const, ...kinds.filter((k) => !k.skip).map((kind) => ({ name: kind.name, kind }))])('the confirmation event and the evidence name the caller and the approver ($name)', async (c) => {
    const store = 'kind' in c ? (await storePair(c.kind, opened)).a : undefined
    const records: EvidenceRecord[] = []
    const tm = new ToolManager({ store, evidence: { append: (r) => void records.push(r), readAll: async () => records } })
    tm.register({ name: 'pay', inputSchema: { type: 'object' }, needsConfirmation: true, run: () => 'paid' })
    const events: unknown[] = []
    tm.on('confirmation', (e) => void events.push({ principal: e.principal, approvedBy: e.approvedBy, approved: e.approved }))
    const parked = await tm.call('pay', {}, { principal: alice })
    expect(parked.status).toBe('needs_confirmation')
    const confirmId = (parked as { confirmId: string }).confirmId
    // the approver's clientId and anything else given are not kept: who approved is an issuer and a subject
    expect((await tm.confirm(confirmId, { approve: true, approvedBy: { ...approver, scopes: ['x'] } as never })).status).toBe('ok')
    const who = { subject: 'alice', issuer: 'https://id.example.com', clientId: 'app' }
    expect(events).toEqual([{ principal: who, approvedBy: { subject: 'carol', issuer: 'https://id.example.com' }, approved: true }])
    expect(records.map((r) => [r.principal, r.approvedBy])).toEqual([[who, { subject: 'carol', issuer: 'https://id.example.com' }]])
    // denied without an approver: the event names the caller only, nothing runs, no evidence
    const other = (await tm.call('pay', {}, { principal: alice })) as { confirmId: string }
    await tm.confirm(other.confirmId, { approve: false })
    expect(events[1]).toEqual({ principal: who, approvedBy: undefined, approved: false })
    expect(records).toHaveLength(1)
  })

  it('a principal answers for itself: approvedBy naming someone else is refused invalid_options, and the call stays parked', async () => {
    const tm = new ToolManager()
    let runs = 0
    tm.register({ name: 'pay', inputSchema: { type: 'object' }, needsConfirmation: true, run: () => ++runs })
    const { confirmId } = (await tm.call('pay', {}, { principal: alice })) as { confirmId: string }
    const forged = await tm.confirm(confirmId, { approve: true, principal: alice, approvedBy: { subject: 'mallory', issuer: alice.issuer } })
    expect(forged).toMatchObject({ status: 'refused', code: 'invalid_options', message: expect.stringContaining('approvedBy must name the answering principal') })
    expect(runs).toBe(0)
    expect((await tm.confirm(confirmId, { approve: true, principal: alice, approvedBy: { subject: 'alice', issuer: alice.issuer } })).status).toBe('ok')
    expect(runs).toBe(1)
  })

  it('a store of your own without principals: true refuses a call with a principal, and nothing runs', async () => {
    const { a } = await storePair(kinds[0]!, opened)
    const ownStore = new Proxy(a, { get: (target, key) => (key === 'principals' ? undefined : Reflect.get(target, key, target)) })
    const tm = new ToolManager({ store: ownStore })
    let runs = 0
    tm.register({ name: 't', inputSchema: { type: 'object' }, run: () => ++runs })
    const refused = await tm.call('t', {}, { principal: alice })
    expect(refused).toMatchObject({ status: 'refused', code: 'invalid_options', message: expect.stringContaining('this store cannot keep principals') })
    expect((await tm.call('t', {})).status).toBe('ok')
    expect(runs).toBe(1)
  })
})
