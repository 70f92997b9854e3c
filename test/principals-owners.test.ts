/**
 * Owners (issue 23, S2): a parked call, an undo or an idempotency key made with a principal is
 * that principal's. Another principal's confirm, resume, cancel, undo or undoable finds nothing,
 * answered exactly as an unknown id; the operator (no principal) finds everything; a newer
 * principal object of the same subject and issuer (other scopes) owns the same records. A
 * continued run is the original caller's: it sees the principal of the call, scopes included,
 * on any manager of the store and after a restart. Store schema 5 keeps the owners.
 *
 * Run without a store, and on two managers over one store of each kind (test/stores.ts:
 * memory, SQLite, PostgreSQL with TOOLWIRE_PG_URL).
 */
import { afterAll, describe, expect, it } from 'vitest'
import { ToolManager, type ToolContext } from '../src/runtime/manager.js'
import type { Principal } from '../src/core/principal.js'
import { principalKey } from '../src/core/principal.js'
import { pending } from '../src/core/helpers.js'
import type { CallResult } from '../src/core/view.js'
import { inputHash, SCHEMA_VERSION, type ToolStore } from '../src/runtime/store/index.js'
import { SCHEMA_5_COLUMNS, storeKinds, storePair, withStores } from './stores.js'

const kinds = await storeKinds('owners')
const opened: ToolStore[] = []
afterAll(async () => {
  for (const s of opened) await s.close().catch(() => undefined)
})

const ISSUER = 'https://id.example.com'
const alice: Principal = Object.freeze({ subject: 'alice', issuer: ISSUER, clientId: 'app', scopes: Object.freeze(['files:write']) })
/** Alice again, from a refreshed token: other scopes, other client. */
const aliceLater: Principal = Object.freeze({ subject: 'alice', issuer: ISSUER, scopes: Object.freeze(['files:read']) })
const bob: Principal = Object.freeze({ subject: 'bob', issuer: ISSUER, scopes: Object.freeze(['files:write']) })

/** What each body, resume and undo saw: the tool and `ctx.principal`. */
type Seen = { readonly what: string; readonly principal: Principal | undefined }

function withTools(tm: ToolManager, seen: Seen[]): ToolManager {
  const see = (what: string, ctx: { readonly principal?: Principal }): void => {
    seen.push({ what, principal: ctx.principal })
  }
  tm.register({
    name: 'pay',
    inputSchema: { type: 'object' },
    needsConfirmation: true,
    run: (input: { id: string }, ctx: ToolContext) => {
      see(`pay:${input.id}`, ctx)
      return { paid: input.id }
    },
  })
  tm.register({
    name: 'deploy',
    inputSchema: { type: 'object' },
    run: (input: { id: string }) => pending({ id: `req-${input.id}`, kind: 'input', prompt: 'Which environment?' }),
    resume: (answer: unknown, input: { id: string }, ctx: ToolContext) => {
      see(`deploy:${input.id}:${String(answer)}`, ctx)
      return { deployedTo: answer }
    },
  })
  tm.register({
    name: 'approve_me',
    inputSchema: { type: 'object' },
    run: (input: { id: string }) => pending({ id: `ok-${input.id}`, kind: 'confirmation', prompt: 'Go?' }),
    resume: (answer: unknown, input: { id: string }, ctx: ToolContext) => {
      see(`approve_me:${input.id}:${JSON.stringify(answer)}`, ctx)
      return { answered: answer }
    },
  })
  tm.register({
    name: 'rename',
    inputSchema: { type: 'object' },
    run: (input: { to: string }, ctx: ToolContext) => {
      ctx.registerUndo({ to: input.to })
      return { renamed: input.to }
    },
    undo: (payload, ctx) => {
      see(`undo:${(payload as { to: string }).to}`, ctx)
      return { restored: true }
    },
  })
  tm.register({
    name: 'send',
    inputSchema: { type: 'object' },
    run: (input: { to: string }, ctx: ToolContext) => {
      see(`send:${input.to}`, ctx)
      return { sent: input.to, n: seen.length }
    },
  })
  tm.register({
    name: 'wait',
    inputSchema: { type: 'object' },
    run: (_input, ctx: ToolContext) =>
      new Promise((resolve) => {
        see('wait', ctx)
        ctx.registerUndo(() => see('closure-undo', ctx))
        ctx.signal.addEventListener('abort', () => resolve('stopped'))
      }),
  })
  return tm
}

/** A view without its call id (a refusal of an unknown id is given a fresh one): what must be byte-identical. */
function shape(view: CallResult): string {
  const { callId: _callId, ...rest } = view as CallResult & { callId: string }
  return JSON.stringify(rest)
}

function confirmIdOf(view: CallResult): string {
  if (view.status !== 'needs_confirmation') throw new Error(`expected needs_confirmation, got ${JSON.stringify(view)}`)
  return view.confirmId
}

/** Two managers over one state: without a store, one manager; with one, two managers on two handles of it (two instances). */
interface Setup {
  readonly name: string
  readonly skip: boolean
  readonly store: boolean
  make(): Promise<{ readonly a: ToolManager; readonly b: ToolManager; readonly seen: Seen[] }>
}

const setups: Setup[] = [
  {
    name: 'no store',
    skip: false,
    store: false,
    async make() {
      const seen: Seen[] = []
      const tm = withTools(new ToolManager(), seen)
      return { a: tm, b: tm, seen }
    },
  },
  ...kinds.map(
    (kind): Setup => ({
      name: `a ${kind.name} store`,
      skip: kind.skip,
      store: true,
      async make() {
        const { a, b } = await storePair(kind, opened)
        const seen: Seen[] = []
        return { a: withTools(new ToolManager({ store: a }), seen), b: withTools(new ToolManager({ store: b }), seen), seen }
      },
    }),
  ),
]

describe.each(setups)('owners with $name', (setup) => {
  it.skipIf(setup.skip)("another principal cannot confirm or deny a call: answered exactly as an unknown id, and the call stays parked", async () => {
    const { a, b, seen } = await setup.make()
    const confirmId = confirmIdOf(await a.call('pay', { id: 'p1' }, { principal: alice }))
    const unknown = await b.confirm('c_nosuchconfirmation0000', { approve: true, principal: bob })
    expect(unknown).toMatchObject({ status: 'refused', code: 'confirmation_unknown' })
    for (const approve of [true, false]) {
      const refused = await b.confirm(confirmId, { approve, principal: bob })
      expect(shape(refused)).toBe(shape(unknown))
    }
    expect(seen).toEqual([])
    // the owner, with a refreshed token (other scopes): found; the run is the caller's, with the scopes it called with
    expect(await b.confirm(confirmId, { approve: true, principal: aliceLater })).toMatchObject({ status: 'ok', data: { paid: 'p1' } })
    expect(seen).toEqual([{ what: 'pay:p1', principal: alice }])
  })

  it.skipIf(setup.skip)('the operator (no principal) confirms any call; the continued run keeps the caller\'s principal', async () => {
    const { a, b, seen } = await setup.make()
    const confirmId = confirmIdOf(await a.call('pay', { id: 'p2' }, { principal: alice }))
    expect(await b.confirm(confirmId, { approve: true })).toMatchObject({ status: 'ok' })
    expect(seen).toEqual([{ what: 'pay:p2', principal: alice }])
    // on the manager that parked it (its local copy): the same
    const local = confirmIdOf(await a.call('pay', { id: 'p2b' }, { principal: alice }))
    expect(shape(await a.confirm(local, { approve: true, principal: bob }))).toBe(shape(await a.confirm('c_nosuchconfirmation0000', { approve: true, principal: bob })))
    expect(await a.confirm(local, { approve: true, principal: aliceLater })).toMatchObject({ status: 'ok' })
    expect(seen[1]).toEqual({ what: 'pay:p2b', principal: alice })
  })

  it.skipIf(setup.skip)('a call made without a principal has no owner: anyone finds it, and its run has no principal', async () => {
    const { a, b, seen } = await setup.make()
    const confirmId = confirmIdOf(await a.call('pay', { id: 'p3' }))
    expect(await b.confirm(confirmId, { approve: true, principal: bob })).toMatchObject({ status: 'ok' })
    expect(seen).toEqual([{ what: 'pay:p3', principal: undefined }])
    const suspended = await a.call('deploy', { id: 'd0' })
    expect(suspended).toMatchObject({ status: 'pending' })
    expect(await b.resume('req-d0', 'prod', { principal: bob })).toMatchObject({ status: 'ok' })
  })

  it.skipIf(setup.skip)('another principal cannot resume a suspension, nor answer a confirmation a body asked for', async () => {
    const { a, b, seen } = await setup.make()
    expect(await a.call('deploy', { id: 'd1' }, { principal: alice })).toMatchObject({ status: 'pending', request: { id: 'req-d1' } })
    const unknown = await b.resume('req-nosuchrequest', 'prod', { principal: bob })
    expect(unknown).toMatchObject({ status: 'refused', code: 'unknown_request' })
    expect(shape(await b.resume('req-d1', 'prod', { principal: bob }))).toBe(shape(unknown))
    expect(await b.resume('req-d1', 'prod', { principal: aliceLater })).toMatchObject({ status: 'ok', data: { deployedTo: 'prod' } })
    expect(seen).toEqual([{ what: 'deploy:d1:prod', principal: alice }])

    expect(await a.call('approve_me', { id: 'x' }, { principal: alice })).toMatchObject({ status: 'needs_confirmation', confirmId: 'ok-x' })
    const unknownConfirmation = await b.confirm('c_nosuchconfirmation0000', { approve: true, principal: bob })
    expect(shape(await b.confirm('ok-x', { approve: true, principal: bob }))).toBe(shape(unknownConfirmation))
    expect(await b.confirm('ok-x', { approve: true })).toMatchObject({ status: 'ok' })
    expect(seen[1]).toEqual({ what: 'approve_me:x:{"approve":true}', principal: alice })
  })

  it.skipIf(setup.skip)('another principal cannot undo a call, nor see its undo; the owner and the operator can', async () => {
    const { a, b, seen } = await setup.make()
    const renamed = { callId: (await a.call('rename', { to: 'b.txt' }, { principal: alice })).callId! }
    const unknown = await b.undo('call_nosuchcall', { principal: bob })
    expect(unknown).toMatchObject({ status: 'refused', code: 'undo_unavailable' })
    expect(shape(await b.undo(renamed.callId, { principal: bob }))).toBe(shape(unknown))
    expect(await b.undoable(renamed.callId, { principal: bob })).toBe(false)
    expect(a.canUndo(renamed.callId, { principal: bob })).toBe(false)
    expect(await b.undoable(renamed.callId, { principal: aliceLater })).toBe(true)
    expect(await b.undoable(renamed.callId)).toBe(true)
    expect(a.canUndo(renamed.callId, { principal: aliceLater })).toBe(true)
    // the undo's context names the undoer
    expect(await b.undo(renamed.callId, { principal: aliceLater })).toMatchObject({ status: 'ok' })
    expect(seen).toEqual([{ what: 'undo:b.txt', principal: aliceLater }])
    expect(await b.undoable(renamed.callId)).toBe(false)

    const again = await a.call('rename', { to: 'c.txt' }, { principal: alice })
    expect(await b.undo(again.callId!)).toMatchObject({ status: 'ok' })
    expect(seen[1]).toEqual({ what: 'undo:c.txt', principal: undefined })
  })

  it.skipIf(setup.skip)('another principal cannot cancel a call in flight, nor undo its closure; the owner and the operator can', async () => {
    const { a, seen } = await setup.make()
    const mine = a.call('wait', {}, { principal: alice, callId: 'w1' })
    const theirs = a.call('wait', {}, { principal: alice, callId: 'w2' })
    // both bodies run (with a store, after the ledger's answer)
    while (seen.length < 2) await new Promise((resolve) => setTimeout(resolve, 5))
    expect(a.cancel('w1', { principal: bob })).toBe(false)
    expect(a.cancel('nosuchcall', { principal: bob })).toBe(false)
    expect(a.cancel('w1', { principal: aliceLater })).toBe(true)
    expect(a.cancel('w2')).toBe(true)
    expect(await mine).toMatchObject({ status: 'cancelled' })
    expect(await theirs).toMatchObject({ status: 'cancelled' })
    // the closure undo each registered is its caller's
    expect(a.canUndo('w1', { principal: bob })).toBe(false)
    expect(await a.undo('w1', { principal: bob })).toMatchObject({ status: 'refused', code: 'undo_unavailable' })
    expect(await a.undo('w1', { principal: alice })).toMatchObject({ status: 'ok' })
  })

  it.skipIf(setup.skip)('a malformed answering principal is refused invalid_options, never taken for the operator', async () => {
    const { a, seen } = await setup.make()
    const confirmId = confirmIdOf(await a.call('pay', { id: 'p4' }, { principal: alice }))
    const malformed = { subject: 'alice' } as unknown as Principal
    expect(await a.confirm(confirmId, { approve: true, principal: malformed })).toMatchObject({ status: 'refused', code: 'invalid_options' })
    expect(a.cancel('anything', { principal: malformed })).toBe(false)
    const badApprover = { subject: 1 } as unknown as Principal
    expect(await a.confirm(confirmId, { approve: true, approvedBy: badApprover })).toMatchObject({ status: 'refused', code: 'invalid_options' })
    expect(seen).toEqual([])
    expect(await a.confirm(confirmId, { approve: true, principal: alice })).toMatchObject({ status: 'ok' })
  })

  it.skipIf(setup.skip || !setup.store)('idempotency keys are per principal: another principal runs afresh, the owner replays', async () => {
    const { a, b, seen } = await setup.make()
    const first = await a.call('send', { to: 'x' }, { principal: alice, idempotencyKey: 'k1' })
    expect(first).toMatchObject({ status: 'ok', data: { sent: 'x', n: 1 } })
    // bob's k1 is another key: neither a replay of alice's result nor a mismatch
    expect(await b.call('send', { to: 'y' }, { principal: bob, idempotencyKey: 'k1' })).toMatchObject({ status: 'ok', data: { sent: 'y', n: 2 } })
    // without a principal: an unowned key, not alice's
    expect(await b.call('send', { to: 'z' }, { idempotencyKey: 'k1' })).toMatchObject({ status: 'ok', data: { sent: 'z', n: 3 } })
    const replay = await b.call('send', { to: 'x' }, { principal: aliceLater, idempotencyKey: 'k1' })
    expect(replay).toMatchObject({ status: 'ok', data: { sent: 'x', n: 1 }, replayed: true })
    expect(await a.call('send', { to: 'z' }, { idempotencyKey: 'k1' })).toMatchObject({ replayed: true, data: { n: 3 } })
    expect(seen.map((s) => s.what)).toEqual(['send:x', 'send:y', 'send:z'])
  })
})

describe.each(kinds.filter((k) => k.durable))('schema 5 on a $name store', (kind) => {
  it.skipIf(kind.skip)('a populated schema 4 store is migrated: its rows have no owner and answer as before; new rows keep theirs', async () => {
    await withStores(kind, async (open, _clock, place) => {
      await (await open()).close()
      await kind.exec(place, [
        ...SCHEMA_5_COLUMNS,
        `UPDATE toolwire_meta SET version = 4 WHERE name = 'schema'`,
        `INSERT INTO toolwire_parked (id, kind, call_id, tool, input, sealed, redacted, input_hash, data, state, fence, expires_at, created_at, updated_at)
         VALUES ('old', 'confirmation', 'c-old', 'pay', '{"id":"o"}', NULL, 0, '${inputHash({ id: 'o' })}', 'null', 'parked', 0, NULL, 1000000, 1000000)`,
        `INSERT INTO toolwire_undo (call_id, tool, payload, created_at) VALUES ('c-old', 'rename', '{"to":"o"}', 1000000)`,
        `INSERT INTO toolwire_ledger (key, input_hash, call_id, state, token, lease_until, started_at, result, input)
         VALUES ('${JSON.stringify(['k', 'send', 'k-old'])}', 'h', 'c-old', 'settled', 't', NULL, 1000000, '{"status":"success"}', NULL)`,
      ])
      const s = await open()
      expect(s.principals).toBe(true)
      const parked = await s.getParked('old')
      expect(parked).toMatchObject({ id: 'old', state: 'parked', callId: 'c-old' })
      expect(parked).not.toHaveProperty('owner')
      // an unowned undo is found by any owner
      expect(await s.takeUndo('c-old', principalKey(bob))).toMatchObject({ tool: 'rename', payload: { to: 'o' } })
      expect(await s.begin(JSON.stringify(['k', 'send', 'k-old']), 'h', { callId: 'c-new' })).toMatchObject({ state: 'settled', callId: 'c-old' })
      // new rows keep their owners and principals
      await s.park({ id: 'new', kind: 'confirmation', callId: 'c-new', tool: 'pay', input: { input: {}, sealed: null, redacted: false }, inputHash: 'h', expiresAt: null, owner: principalKey(alice) })
      expect((await s.getParked('new'))?.owner).toBe(principalKey(alice))
      await s.appendEvidence({ callId: 'c-new', tool: 'pay', input: {}, result: null, status: 'ok', startedAt: 'a', endedAt: 'b', principal: { subject: 'alice', issuer: ISSUER } } as never)
      expect(await s.readEvidence()).toHaveLength(1)
    })
  })

  it.skipIf(kind.skip)('a parked row whose owner was rewritten does not run for the new owner: its data names another principal', async () => {
    await withStores(kind, async (open, _clock, place) => {
      const seen: Seen[] = []
      const tm = withTools(new ToolManager({ store: await open() }), seen)
      const confirmId = confirmIdOf(await tm.call('pay', { id: 'p9' }, { principal: alice }))
      await kind.exec(place, [`UPDATE toolwire_parked SET owner = '${principalKey(bob)}' WHERE id = '${confirmId}'`])
      const other = withTools(new ToolManager({ store: await open() }), seen)
      expect(await other.confirm(confirmId, { approve: true, principal: bob })).toMatchObject({ status: 'refused', code: 'input_unavailable' })
      expect(seen).toEqual([])
    })
  })

  it.skipIf(kind.skip)('with signed confirmation ids and a store key: another principal\'s token is an unknown confirmation; the owner\'s runs on another instance', async () => {
    await withStores(kind, async (open) => {
      const seen: Seen[] = []
      const options = { approvalSecret: 'an approval secret of enough bytes', storeKey: 'b'.repeat(64) }
      const a = withTools(new ToolManager({ store: await open(), ...options }), seen)
      const b = withTools(new ToolManager({ store: await open(), ...options }), seen)
      const confirmId = confirmIdOf(await a.call('pay', { id: 'p8' }, { principal: alice }))
      expect(confirmId.startsWith('tw1.')).toBe(true)
      expect(await b.confirm(confirmId, { approve: false, principal: bob })).toMatchObject({ status: 'refused', code: 'confirmation_unknown' })
      expect(await a.confirm(confirmId, { approve: true, principal: bob })).toMatchObject({ status: 'refused', code: 'confirmation_unknown' })
      expect(await b.confirm(confirmId, { approve: true, principal: aliceLater })).toMatchObject({ status: 'ok', data: { paid: 'p8' } })
      expect(seen).toEqual([{ what: 'pay:p8', principal: alice }])
    })
  })

  it.skipIf(kind.skip)('a run a crash left unknown is reported with the principal that began it (identity only)', async () => {
    await withStores(kind, async (open, clock) => {
      const store = await open()
      const tm = new ToolManager({ store, leaseMs: 1000 })
      let started = false
      tm.register({
        name: 'hang',
        inputSchema: { type: 'object' },
        run: () => {
          started = true
          return new Promise(() => undefined)
        },
      })
      void tm.call('hang', {}, { principal: alice, idempotencyKey: 'k-crash', callId: 'crash-1' })
      // the body runs once its key is recorded as in flight
      while (!started) await new Promise((resolve) => setTimeout(resolve, 5))
      clock.t += 2000
      const other = new ToolManager({ store: await open() })
      // its own first sweep (on the next turn) reports the run; a sweep asked for runs after it
      await other.recover()
      const evidence = await store.readEvidence()
      expect(evidence).toMatchObject([{ callId: 'crash-1', tool: 'hang', status: 'failed', principal: { subject: 'alice', issuer: ISSUER, clientId: 'app' } }])
      expect(evidence[0]!.principal).not.toHaveProperty('scopes')
    })
  })

  it.skipIf(kind.skip || kind.name !== 'sqlite')('evidence rows name their subject in the indexed column', async () => {
    await withStores(kind, async (open, _clock, place) => {
      const s = await open()
      const record = { callId: 'c1', tool: 'pay', input: {}, result: null, status: 'ok', startedAt: 'a', endedAt: 'b' }
      await s.appendEvidence({ ...record, principal: { subject: 'alice', issuer: ISSUER } } as never)
      await s.appendEvidence(record)
      const { default: Database } = await import('better-sqlite3')
      const db = new Database(place, { readonly: true })
      const rows = db.prepare('SELECT subject FROM toolwire_evidence ORDER BY seq').all()
      db.close()
      expect(rows).toEqual([{ subject: 'alice' }, { subject: null }])
      expect(SCHEMA_VERSION).toBe(5)
    })
  })
})

describe.each(kinds)('owners in the $name store', (kind) => {
  it.skipIf(kind.skip)('undo: takeUndo with an owner takes only its own or an unowned entry; without, any (the operator)', async () => {
    await withStores(kind, async (open) => {
      const s = await open()
      const a = principalKey(alice)
      const b = principalKey(bob)
      await s.putUndo({ callId: 'u1', tool: 't', payload: 1, owner: a })
      await s.putUndo({ callId: 'u2', tool: 't', payload: 2, owner: a })
      await s.putUndo({ callId: 'u3', tool: 't', payload: 3 })
      expect(await s.getUndo!('u1')).toMatchObject({ owner: a })
      expect(await s.getUndo!('u3')).not.toHaveProperty('owner')
      expect(await s.takeUndo('u1', b)).toBeUndefined()
      expect(await s.getUndo!('u1')).toBeDefined()
      expect(await s.takeUndo('u1', a)).toMatchObject({ payload: 1, owner: a })
      expect(await s.takeUndo('u2')).toMatchObject({ payload: 2, owner: a })
      expect(await s.takeUndo('u3', b)).toMatchObject({ payload: 3 })
    })
  })

  it.skipIf(kind.skip)('ledger: the principal that began a run comes back with an unknown outcome (begin and sweep)', async () => {
    await withStores(kind, async (open, clock) => {
      const s = await open()
      const by = { subject: 'alice', issuer: ISSUER, clientId: 'app' }
      await s.begin('k1', 'h', { callId: 'c1', leaseMs: 10, principal: by })
      await s.begin('k2', 'h', { callId: 'c2', leaseMs: 10, principal: by })
      await s.begin('k3', 'h', { callId: 'c3', leaseMs: 10 })
      clock.t += 10
      expect(await s.begin('k1', 'h', { callId: 'r1' })).toMatchObject({ state: 'unknown', swept: true, principal: by })
      const swept = await s.sweep()
      expect(swept.keys.find((k) => k.key === 'k2')).toMatchObject({ principal: by })
      expect(swept.keys.find((k) => k.key === 'k3')).not.toHaveProperty('principal')
    })
  })
})
