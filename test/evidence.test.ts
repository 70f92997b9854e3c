/**
 * Durability you can wait for: `JsonlEvidenceStore.flush()` resolves once every record
 * appended so far is in the file, so nothing has to wait on a timer for a write.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { JsonlEvidenceStore, ToolManager, errorResult, type EvidenceRecord, type ToolEvents } from '../src/index.js'
import { evidenceApproverOf, evidenceIdentity } from '../src/observe/evidence.js'
import { principalRef } from '../src/core/principal.js'
import { evidenceOf } from '../src/runtime/store/index.js'
import { storeKinds, withStores } from './stores.js'

const tmpRoot = mkdtempSync(join(tmpdir(), 'toolwire-evidence-'))
afterAll(() => rmSync(tmpRoot, { recursive: true, force: true }))
let seq = 0
const tmpFile = () => join(tmpRoot, `run-${++seq}`, 'evidence.jsonl')
const linesIn = (path: string): EvidenceRecord[] =>
  readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as EvidenceRecord)

const record = (n: number): EvidenceRecord => ({
  callId: `call-${n}`,
  tool: 't',
  input: { n },
  result: null,
  status: 'succeeded',
  startedAt: new Date(0).toISOString(),
  endedAt: new Date(0).toISOString(),
})

describe('JsonlEvidenceStore.flush', () => {
  it("after a call settles, flush() resolves once that call's record is in the file (another reader sees it)", async () => {
    const path = tmpFile()
    const store = new JsonlEvidenceStore(path)
    const tm = new ToolManager({ evidence: store })
    tm.register({ name: 'echo', inputSchema: { type: 'object' }, run: (input: unknown) => input })
    tm.register({ name: 'fail', inputSchema: { type: 'object' }, run: () => errorResult('nope') })
    const many = await Promise.all(Array.from({ length: 20 }, (_, n) => tm.call('echo', { n })))
    const last = await tm.call('fail', { password: 'x' })
    await store.flush()
    // read synchronously, by a reader that knows nothing of this store's queue
    const records = linesIn(path)
    expect(records).toHaveLength(21)
    expect(records.at(-1)).toMatchObject({ callId: last.callId, tool: 'fail', input: { password: '[redacted]' }, status: 'failed' })
    expect(new Set(records.slice(0, 20).map((r) => r.callId))).toEqual(new Set(many.map((r) => r.callId)))
    expect(await new JsonlEvidenceStore(path).readAll()).toEqual(records)
  })

  it('records appended while a write is in flight are written in append order', async () => {
    const path = tmpFile()
    const store = new JsonlEvidenceStore(path)
    const appended = Array.from({ length: 200 }, (_, n) => store.append(record(n)))
    await store.flush()
    expect(linesIn(path).map((r) => r.input)).toEqual(Array.from({ length: 200 }, (_, n) => ({ n })))
    // every append's own promise has settled too
    await expect(Promise.all(appended)).resolves.toHaveLength(200)
    store.append(record(200))
    await store.flush()
    expect(linesIn(path)).toHaveLength(201)
  })

  it('flush() on a store with nothing appended resolves, and the file is not created', async () => {
    const path = tmpFile()
    const store = new JsonlEvidenceStore(path)
    await store.flush()
    expect(await store.readAll()).toEqual([])
  })

  it('a failed write rejects its append and the next flush() once; a later write tries the folder again', async () => {
    const dir = join(tmpRoot, `blocked-${++seq}`)
    writeFileSync(dir, 'a file where the folder should be')
    const store = new JsonlEvidenceStore(join(dir, 'evidence.jsonl'))
    const tm = new ToolManager({ evidence: store })
    let runs = 0
    tm.register({ name: 'charge', inputSchema: { type: 'object' }, run: () => ({ charged: ++runs }) })
    const errors: ToolEvents['evidence_error'][] = []
    tm.on('evidence_error', (e) => void errors.push(e))

    const charged = await tm.call('charge', {})
    expect(charged).toMatchObject({ status: 'ok', data: { charged: 1 } })
    const failure = await store.flush().then(
      () => undefined,
      (err: unknown) => err,
    )
    expect(failure).toMatchObject({ code: expect.stringMatching(/^(EEXIST|ENOTDIR)$/) })
    expect(errors).toEqual([expect.objectContaining({ callId: charged.callId, tool: 'charge' })])
    expect(runs).toBe(1)
    await store.flush() // reported once

    // two more failures are reported together
    await Promise.all([tm.call('charge', {}), tm.call('charge', {})])
    await expect(store.flush()).rejects.toThrow(/2 evidence records were not written/)
    expect(errors).toHaveLength(3)

    // the folder can be made now: the next write creates it and succeeds
    rmSync(dir)
    mkdirSync(dir)
    const later = await tm.call('charge', {})
    await store.flush()
    expect(linesIn(store.path)).toEqual([expect.objectContaining({ callId: later.callId, result: { charged: 4 } })])
  })
})

const kinds = await storeKinds('evidence')

/** A principal as the runtime holds one: scopes, and here a stray token, that evidence must not keep. */
const caller = { subject: 'ann "é" 😀', issuer: 'https://issuer.example/', clientId: 'cli\n1', scopes: ['files:write'], token: 'secret-token' }
const approver = { subject: 'bob', issuer: 'https://issuer.example/', clientId: 'approver-app', scopes: ['approve:transfer'] }
/** A record naming who called and who approved, as the manager will write it. */
const identified = (n: number, approvedBy = evidenceApproverOf(n % 2 === 0 ? approver : undefined)): EvidenceRecord => ({
  ...record(n),
  ...evidenceIdentity(caller, approvedBy),
})

describe('who called and who approved', () => {
  it('evidence keeps only the subject, issuer and client of a principal, frozen', () => {
    const kept = principalRef(caller)
    expect(kept).toEqual({ subject: caller.subject, issuer: caller.issuer, clientId: caller.clientId })
    expect(Object.isFrozen(kept)).toBe(true)
    expect(Object.keys(principalRef({ subject: 's', issuer: '' }))).toEqual(['subject', 'issuer'])
    expect(JSON.stringify(identified(0))).not.toMatch(/secret-token|scopes|files:write|approve:transfer|approver-app/)
  })

  it('the approver is the signed-in subject and issuer, or the link', () => {
    expect(evidenceApproverOf(approver)).toEqual({ subject: 'bob', issuer: 'https://issuer.example/' })
    expect(evidenceApproverOf(undefined)).toEqual({ link: true })
    expect(evidenceApproverOf({ link: true })).toBe(evidenceApproverOf(undefined))
    expect(Object.isFrozen(evidenceApproverOf(approver))).toBe(true)
    expect(Object.isFrozen(evidenceApproverOf(undefined))).toBe(true)
  })

  it('a record without a principal or an approval has neither field, so its bytes are unchanged', () => {
    expect(evidenceIdentity(undefined)).toEqual({})
    expect(Object.keys(evidenceIdentity(caller))).toEqual(['principal'])
    const plain = record(1)
    expect(JSON.stringify({ ...plain, ...evidenceIdentity(undefined, undefined) })).toBe(JSON.stringify(plain))
  })

  it('JsonlEvidenceStore gives principal and approvedBy back, in another process too', async () => {
    const path = tmpFile()
    const store = new JsonlEvidenceStore(path)
    const records = [identified(0), identified(1), record(2)]
    for (const r of records) void store.append(r)
    await store.flush()
    expect(await store.readAll()).toEqual(records)
    const reread = await new JsonlEvidenceStore(path).readAll()
    expect(reread).toEqual(records)
    expect(reread[0]).toMatchObject({ principal: { subject: caller.subject }, approvedBy: { subject: 'bob' } })
    expect(reread[1]).toMatchObject({ approvedBy: { link: true } })
    expect(reread[2]).not.toHaveProperty('principal')
  })

  describe.each(kinds)('the $name store', (kind) => {
    it.skipIf(kind.skip)('keeps principal and approvedBy in its record column, through evidenceOf and on reopening', async () => {
      const records = [identified(0), identified(1), record(2)]
      await withStores(kind, async (open) => {
        const adapter = evidenceOf(await open())
        // one after the other: appends made at the same time may be written in any order (docs/store.md)
        for (const r of records) await adapter.append(r)
        await adapter.flush!()
        expect(await adapter.readAll()).toEqual(records)
        expect(await (await open()).readEvidence()).toEqual(records)
      })
    })
  })
})

describe('the input an evidence record keeps', () => {
  it('is the input as the model sent it, redacted, even when the body changes its input in place', async () => {
    const records: EvidenceRecord[] = []
    const tm = new ToolManager({ evidence: { append: (r) => void records.push(r), readAll: async () => records } })
    tm.register({
      name: 'normalize',
      description: 'lower-cases an email in place',
      inputSchema: { type: 'object', properties: { email: { type: 'string' }, password: { type: 'string' }, tags: { type: 'array' } } },
      run: (input: { email: string; password?: string; tags?: string[] }) => {
        input.email = input.email.toLowerCase()
        input.password = 'changed'
        input.tags?.push('added')
        return 'done'
      },
    })
    await tm.callJson('normalize', '{"email":"A@B.C","password":"hunter2","tags":["x"]}')
    await tm.call('normalize', { email: 'D@E.F', tags: [] })
    await new Promise((resolve) => setImmediate(resolve))
    expect(records.map((r) => r.input)).toEqual([
      { email: 'A@B.C', password: '[redacted]', tags: ['x'] },
      { email: 'D@E.F', tags: [] },
    ])
  })

  describe.each(kinds)('with the $name store, whose record is written with the settled key', (kind) => {
    it.skipIf(kind.skip)('is the same', async () => {
      await withStores(kind, async (open) => {
        const tm = new ToolManager({ store: await open() })
        tm.register({
          name: 'normalize',
          description: 'lower-cases an email in place',
          inputSchema: { type: 'object', properties: { email: { type: 'string' } } },
          run: (input: { email: string }) => {
            input.email = input.email.toLowerCase()
            return 'done'
          },
        })
        const view = await tm.callJson('normalize', '{"email":"A@B.C"}', { idempotencyKey: 'k1' })
        expect(view.status).toBe('ok')
        const mine = (await (await open()).readEvidence()).filter((r) => r.callId === view.callId)
        expect(mine.map((r) => r.input)).toEqual([{ email: 'A@B.C' }])
      })
    })
  })
})
