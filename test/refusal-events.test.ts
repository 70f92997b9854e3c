/**
 * The events of a refused answer to a parked call (`tm.confirm`, `tm.resume`, `tm.undo`):
 * when the id matches a parked call (in memory, or a row of a durable store), the refusal's
 * `call_start`/`call_end`, its view and the tool's metrics carry that call's tool name and call
 * id — already used, denied, expired, a claim lost to another manager, a store failing after
 * the row was read, a signed token whose row is gone. A refusal that is not about that call (an
 * id of the other kind: a request id given to confirm; a token that does not match its row), and
 * an id that matches nothing, say tool `'unknown'` with a fresh call id (and an undo that names
 * no tool, `'undo'`).
 *
 * The stores are opened by test/stores.ts: memory, SQLite, PostgreSQL (TOOLWIRE_PG_URL).
 */
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest'
import { pending } from '../src/core/helpers.js'
import type { CallResult } from '../src/core/view.js'
import type { ToolMetrics } from '../src/observe/metrics.js'
import { ToolManager, type ToolContext, type ToolEvents } from '../src/runtime/manager.js'
import { signApproval } from '../src/runtime/store/approval.js'
import type { ToolStore } from '../src/runtime/store/index.js'
import { storeKinds, type Clock, type StoreKind } from './stores.js'

const kinds = await storeKinds('refusal_events')
const stores: ToolStore[] = []
afterAll(async () => {
  for (const s of stores) await s.close().catch(() => undefined)
})
afterEach(() => {
  vi.useRealTimers()
})

const anyObject = { type: 'object' } as const
const SECRET = 'an approval secret of enough bytes'

/** What a refusal's events said: `call_start` and `call_end` of one call, and its view. */
interface Seen {
  readonly start: ToolEvents['call_start']
  readonly end: { readonly tool: string; readonly callId: string; readonly code: string | undefined }
}

/** A manager with the test's tools, recording every `call_start` / `call_end`. */
function managed(options: ConstructorParameters<typeof ToolManager>[0] = {}): { tm: ToolManager; seen: Seen[]; runs: string[] } {
  const tm = new ToolManager(options)
  const runs: string[] = []
  tm.register({ name: 'pay', inputSchema: anyObject, needsConfirmation: true, run: (i: { id: string }) => (runs.push(`pay:${i.id}`), { paid: i.id }) })
  tm.register({
    name: 'deploy',
    inputSchema: anyObject,
    run: (i: { id: string }) => pending({ id: `req-${i.id}`, kind: 'input', prompt: 'Which environment?' }),
    resume: (answer: unknown, i: { id: string }) => (runs.push(`deploy:${i.id}:${String(answer)}`), { to: answer }),
  })
  tm.register({
    name: 'rename',
    inputSchema: anyObject,
    run: (i: { to: string }, ctx: ToolContext) => {
      ctx.registerUndo({ back: i.to })
      return { renamed: i.to }
    },
    undo: (payload) => (runs.push(`undo:${(payload as { back: string }).back}`), 'undone'),
  })
  const seen: Seen[] = []
  const starts = new Map<string, ToolEvents['call_start']>()
  tm.on('call_start', (e) => starts.set(e.callId, e))
  tm.on('call_end', (e) => {
    const start = starts.get(e.callId)!
    seen.push({ start, end: { tool: e.tool, callId: e.callId, code: e.view.status === 'refused' ? e.view.code : undefined } })
  })
  return { tm, seen, runs }
}

/** Answers with `answer` and gives its view and the one `call_end` it emitted. */
async function refusal(m: { seen: Seen[] }, answer: () => Promise<CallResult>): Promise<{ view: CallResult; seen: Seen }> {
  const before = m.seen.length
  const view = await answer()
  expect(view.status).toBe('refused')
  expect(m.seen.length).toBe(before + 1)
  const seen = m.seen[before]!
  expect(seen.start).toEqual({ tool: seen.end.tool, callId: seen.end.callId })
  expect(view.callId).toBe(seen.end.callId)
  return { view, seen }
}

/** Expects a refusal `code` whose events and view carry `tool` and `callId`. */
async function refusedAs(m: { seen: Seen[] }, answer: () => Promise<CallResult>, code: string, tool: string, callId: string): Promise<void> {
  const { seen } = await refusal(m, answer)
  expect(seen.end).toEqual({ tool, callId, code })
}

/** Expects a refusal `code` of an id that matches nothing: tool `label`, a fresh call id. */
async function refusedUnknown(m: { seen: Seen[] }, answer: () => Promise<CallResult>, code: string, label = 'unknown', notCallIds: readonly string[] = []): Promise<void> {
  const { seen } = await refusal(m, answer)
  expect(seen.end).toMatchObject({ tool: label, code })
  expect(notCallIds).not.toContain(seen.end.callId)
}

function confirmIdOf(view: CallResult): string {
  if (view.status !== 'needs_confirmation') throw new Error(`expected needs_confirmation, got ${JSON.stringify(view)}`)
  return view.confirmId
}

function requestIdOf(view: CallResult): string {
  if (view.status !== 'pending') throw new Error(`expected pending, got ${JSON.stringify(view)}`)
  return view.request.id
}

/** The refusals counted in `tool`'s metrics. */
function deniedOf(tm: ToolManager, tool: string): number {
  const snapshot = tm.metrics() as { readonly tools: readonly ToolMetrics[] }
  return snapshot.tools.find((t) => t.tool === tool)?.calls.denied ?? 0
}

describe('a manager without a store', () => {
  it('confirm refused used, after a denial, expired, or given a request id: the events and the view carry the parked tool and call id (not for the request id)', async () => {
    vi.useFakeTimers({ toFake: ['Date'] })
    const m = managed({ confirmTtlMs: 1000 })
    const { tm } = m
    const asked = await tm.call('pay', { id: 'p1' })
    const id = confirmIdOf(asked)
    expect(await tm.confirm(id, { approve: true })).toMatchObject({ status: 'ok', callId: asked.callId })
    const denied0 = deniedOf(tm, 'pay')
    await refusedAs(m, () => tm.confirm(id, { approve: true }), 'confirmation_used', 'pay', asked.callId!)
    await refusedAs(m, () => tm.confirm(id, { approve: false }), 'confirmation_used', 'pay', asked.callId!)
    expect(deniedOf(tm, 'pay')).toBe(denied0 + 2)

    const second = await tm.call('pay', { id: 'p2' })
    await refusedAs(m, () => tm.confirm(confirmIdOf(second), { approve: false }), 'confirmation_denied', 'pay', second.callId!)
    await refusedAs(m, () => tm.confirm(confirmIdOf(second), { approve: true }), 'confirmation_used', 'pay', second.callId!)

    const third = await tm.call('pay', { id: 'p3' })
    vi.setSystemTime(Date.now() + 5000)
    await refusedAs(m, () => tm.confirm(confirmIdOf(third), { approve: true }), 'confirmation_expired', 'pay', third.callId!)

    const suspended = await tm.call('deploy', { id: 's1' })
    // an id of another kind: the refusal is not about that call, and names none
    await refusedUnknown(m, () => tm.confirm(requestIdOf(suspended), { approve: true }), 'confirmation_unknown', 'unknown', [suspended.callId!])
    const callIds = [asked, second, third, suspended].map((v) => v.callId!)
    await refusedUnknown(m, () => tm.confirm('c_nothing', { approve: true }), 'confirmation_unknown', 'unknown', callIds)
    expect(m.runs).toEqual(['pay:p1'])
  })

  it('resume refused used, expired, or given a confirmation id: the events carry the parked tool and call id', async () => {
    vi.useFakeTimers({ toFake: ['Date'] })
    const m = managed({ confirmTtlMs: 1000 })
    const { tm } = m
    const s1 = await tm.call('deploy', { id: 's1' })
    expect(await tm.resume(requestIdOf(s1), 'prod')).toMatchObject({ status: 'ok', callId: s1.callId })
    await refusedAs(m, () => tm.resume(requestIdOf(s1), 'again'), 'request_used', 'deploy', s1.callId!)
    const s2 = await tm.call('deploy', { id: 's2' })
    vi.setSystemTime(Date.now() + 5000)
    await refusedAs(m, () => tm.resume(requestIdOf(s2), 'late'), 'request_expired', 'deploy', s2.callId!)
    const asked = await tm.call('pay', { id: 'p1' })
    await refusedUnknown(m, () => tm.resume(confirmIdOf(asked), 'x'), 'unknown_request', 'unknown', [asked.callId!])
    await refusedUnknown(m, () => tm.resume('req-nothing', 'x'), 'unknown_request', 'unknown', [s1, s2, asked].map((v) => v.callId!))
    expect(m.runs).toEqual(['deploy:s1:prod'])
  })

  it('an undo taken already names no tool: refused undo_unavailable as tool "undo"', async () => {
    const m = managed()
    const done = await m.tm.call('rename', { to: 'b' })
    expect(await m.tm.undo(done.callId!)).toMatchObject({ status: 'ok', data: 'undone' })
    await refusedUnknown(m, () => m.tm.undo(done.callId!), 'undo_unavailable', 'undo')
    expect(m.runs).toEqual(['undo:b'])
  })
})

describe.each(kinds)('two managers on one $name store', (kind: StoreKind) => {
  /** Two managers on one store place (two handles, or the one memory store), with the store clock. */
  async function two(options: { readonly approvalSecret?: string; readonly confirmTtlMs?: number } = {}) {
    const clock: Clock = { t: Date.now() }
    const place = kind.place()
    const a = await kind.open(place, clock)
    const b = await kind.open(place, clock)
    stores.push(a, b)
    return { A: managed({ store: a, ...options }), B: managed({ store: b, ...options }), a, b, clock }
  }

  it.skipIf(kind.skip)('confirm refused used (here and on the other manager), after a denial, expired, or given a request id: the events carry the parked tool and call id', async () => {
    const { A, B, clock } = await two({ confirmTtlMs: 1000 })
    const asked = await A.tm.call('pay', { id: 'p1' })
    const id = confirmIdOf(asked)
    expect(await B.tm.confirm(id, { approve: true })).toMatchObject({ status: 'ok', callId: asked.callId })
    const denied0 = deniedOf(A.tm, 'pay')
    await refusedAs(A, () => A.tm.confirm(id, { approve: true }), 'confirmation_used', 'pay', asked.callId!)
    await refusedAs(A, () => A.tm.confirm(id, { approve: false }), 'confirmation_used', 'pay', asked.callId!)
    await refusedAs(B, () => B.tm.confirm(id, { approve: true }), 'confirmation_used', 'pay', asked.callId!)
    expect(deniedOf(A.tm, 'pay')).toBe(denied0 + 2)

    const second = await A.tm.call('pay', { id: 'p2' })
    await refusedAs(B, () => B.tm.confirm(confirmIdOf(second), { approve: false }), 'confirmation_denied', 'pay', second.callId!)
    await refusedAs(A, () => A.tm.confirm(confirmIdOf(second), { approve: true }), 'confirmation_used', 'pay', second.callId!)
    await refusedAs(B, () => B.tm.confirm(confirmIdOf(second), { approve: false }), 'confirmation_used', 'pay', second.callId!)

    const third = await A.tm.call('pay', { id: 'p3' })
    clock.t += 5000
    await refusedAs(A, () => A.tm.confirm(confirmIdOf(third), { approve: true }), 'confirmation_expired', 'pay', third.callId!)
    await refusedAs(B, () => B.tm.confirm(confirmIdOf(third), { approve: true }), 'confirmation_expired', 'pay', third.callId!)

    const suspended = await A.tm.call('deploy', { id: 's1' })
    await refusedUnknown(A, () => A.tm.confirm(requestIdOf(suspended), { approve: true }), 'confirmation_unknown', 'unknown', [suspended.callId!])
    await refusedUnknown(B, () => B.tm.confirm(requestIdOf(suspended), { approve: false }), 'confirmation_unknown', 'unknown', [suspended.callId!])
    const callIds = [asked, second, third, suspended].map((v) => v.callId!)
    await refusedUnknown(B, () => B.tm.confirm('c_nothing0000000000000000', { approve: true }), 'confirmation_unknown', 'unknown', callIds)
    expect([...A.runs, ...B.runs]).toEqual(['pay:p1'])
  })

  it.skipIf(kind.skip)('racing confirmations: every refused one (claim lost, or found used) carries the tool and call id', async () => {
    const { A, B } = await two()
    const asked = await A.tm.call('pay', { id: 'r1' })
    const id = confirmIdOf(asked)
    const answers = await Promise.all([A, B, A, B].map((m) => m.tm.confirm(id, { approve: true })))
    expect(answers.filter((v) => v.status === 'ok')).toHaveLength(1)
    const refusedEnds = [...A.seen, ...B.seen].filter((s) => s.end.code !== undefined)
    expect(refusedEnds.map((s) => s.end)).toEqual([0, 1, 2].map(() => ({ tool: 'pay', callId: asked.callId, code: 'confirmation_used' })))
  })

  it.skipIf(kind.skip)('with approvalSecret: a token for another tool, a used token, and a signed token whose row is gone carry the call it names', async () => {
    const { A, B } = await two({ approvalSecret: SECRET })
    const asked = await A.tm.call('pay', { id: 't1' })
    const token = confirmIdOf(asked)
    const [confirmationId, callId, , inputHash] = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as string[]
    const forDeploy = signApproval(SECRET, { confirmationId: confirmationId!, callId: callId!, tool: 'deploy', inputHash: inputHash! })
    // a token that does not match its row names no call: the refusal is not about the parked one
    await refusedUnknown(A, () => A.tm.confirm(forDeploy, { approve: true }), 'approval_invalid', 'unknown', [asked.callId!])
    await refusedUnknown(B, () => B.tm.confirm(forDeploy, { approve: true }), 'approval_invalid', 'unknown', [asked.callId!])
    expect(await B.tm.confirm(token, { approve: true })).toMatchObject({ status: 'ok', callId: asked.callId })
    await refusedAs(A, () => A.tm.confirm(token, { approve: true }), 'confirmation_used', 'pay', asked.callId!)
    const gone = signApproval(SECRET, { confirmationId: 'c_neverparked0000000000', callId: 'call-gone', tool: 'pay', inputHash: 'h' })
    await refusedAs(B, () => B.tm.confirm(gone, { approve: true }), 'confirmation_unknown', 'pay', 'call-gone')
    expect([...A.runs, ...B.runs]).toEqual(['pay:t1'])
  })

  it.skipIf(kind.skip)('resume refused used, expired, or given a confirmation id: the events carry the parked tool and call id', async () => {
    const { A, B, clock } = await two({ confirmTtlMs: 1000 })
    const s1 = await A.tm.call('deploy', { id: 's1' })
    expect(await B.tm.resume(requestIdOf(s1), 'prod')).toMatchObject({ status: 'ok', callId: s1.callId })
    await refusedAs(A, () => A.tm.resume(requestIdOf(s1), 'again'), 'request_used', 'deploy', s1.callId!)
    await refusedAs(B, () => B.tm.resume(requestIdOf(s1), 'again'), 'request_used', 'deploy', s1.callId!)
    const s2 = await A.tm.call('deploy', { id: 's2' })
    clock.t += 5000
    await refusedAs(B, () => B.tm.resume(requestIdOf(s2), 'late'), 'request_expired', 'deploy', s2.callId!)
    const asked = await A.tm.call('pay', { id: 'p1' })
    await refusedUnknown(A, () => A.tm.resume(confirmIdOf(asked), 'x'), 'unknown_request', 'unknown', [asked.callId!])
    await refusedUnknown(B, () => B.tm.resume(confirmIdOf(asked), 'x'), 'unknown_request', 'unknown', [asked.callId!])
    await refusedUnknown(B, () => B.tm.resume('req-nothing', 'x'), 'unknown_request', 'unknown', [s1, s2, asked].map((v) => v.callId!))
    expect([...A.runs, ...B.runs]).toEqual(['deploy:s1:prod'])
  })

  it.skipIf(kind.skip)('a store failing after the parked row was read: refused store_unavailable with the tool and call id', async () => {
    const { a, B } = await two()
    const failing = new Proxy(a, {
      get(target, prop, receiver) {
        const v = Reflect.get(target, prop, receiver) as unknown
        if (typeof v !== 'function') return v
        if (prop === 'claim' || prop === 'deny') return () => Promise.reject(new Error('store down'))
        return (v as (...args: unknown[]) => unknown).bind(target)
      },
    })
    const C = managed({ store: failing })
    const asked = await B.tm.call('pay', { id: 'f1' })
    await refusedAs(C, () => C.tm.confirm(confirmIdOf(asked), { approve: true }), 'store_unavailable', 'pay', asked.callId!)
    await refusedAs(C, () => C.tm.confirm(confirmIdOf(asked), { approve: false }), 'store_unavailable', 'pay', asked.callId!)
    expect(await B.tm.confirm(confirmIdOf(asked), { approve: true })).toMatchObject({ status: 'ok' })
  })

  it.skipIf(kind.skip)('undo: one taken already names no tool ("undo"); one whose tool this manager lacks names the tool and call', async () => {
    const { A, b } = await two()
    const done = await A.tm.call('rename', { to: 'b' })
    expect(await A.tm.undo(done.callId!)).toMatchObject({ status: 'ok', data: 'undone' })
    await refusedUnknown(A, () => A.tm.undo(done.callId!), 'undo_unavailable', 'undo')
    // an undo written by another instance whose tool this manager does not have
    await b.putUndo({ callId: 'call-elsewhere', tool: 'rename', payload: { back: 'c' } })
    const bare = managed({ store: b })
    bare.tm.unregister('rename')
    await refusedAs(bare, () => bare.tm.undo('call-elsewhere'), 'undo_unavailable', 'rename', 'call-elsewhere')
    expect(A.runs).toEqual(['undo:b'])
  })
})
