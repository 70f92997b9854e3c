/**
 * The durable store (`toolwire/store`): ONE suite of cases run against each implementation —
 * in memory, SQLite (`better-sqlite3`, two `Database` handles on one file) and PostgreSQL
 * (`pg`, two pools on one database). Then what only the durable stores have (reopening, the
 * schema version), and the codec and approval tokens.
 *
 * The stores are opened by test/stores.ts (PostgreSQL with TOOLWIRE_PG_URL or DATABASE_URL, the
 * skip reasons, CI=true failing when PostgreSQL is absent).
 */
import { spawn } from 'node:child_process'
import { mkdirSync, symlinkSync } from 'node:fs'
import { join } from 'node:path'
import { build } from 'esbuild'
import { describe, expect, it } from 'vitest'
import {
  SCHEMA_VERSION,
  StoreConflictError,
  StoreDriverMissingError,
  StoreSchemaError,
  StoreUnavailableError,
  canonicalJson,
  evidenceOf,
  inputHash,
  openInput,
  randomId,
  sealInput,
  signApproval,
  verifyApproval,
  type ParkInput,
} from '../src/runtime/store/index.js'
import type { EvidenceRecord } from '../src/observe/evidence.js'
import { SCHEMA_5_COLUMNS, storeKinds, tempDir, withStores, type StoreKind } from './stores.js'

/** Each store kind of test/stores.ts: memory, SQLite, PostgreSQL. */
const impls = await storeKinds('store')
type Impl = StoreKind

/** `src/runtime/store` bundled for child processes, in node_modules/.cache so that the drivers resolve from it. */
let bundled: string | undefined
async function storeBundle(): Promise<string> {
  if (bundled !== undefined) return bundled
  const dir = join(import.meta.dirname, '..', 'node_modules', '.cache')
  mkdirSync(dir, { recursive: true })
  const out = tempDir('toolwire-store-', dir)
  await build({ entryPoints: { store: 'src/runtime/store/index.ts' }, outdir: out, outExtension: { '.js': '.mjs' }, bundle: true, format: 'esm', platform: 'node', packages: 'external', logLevel: 'silent' })
  return (bundled = join(out, 'store.mjs'))
}

/**
 * Runs `n` child processes that each open the store and, once all are open, claim every id
 * (all at once); resolves with each child's winning ids.
 */
async function raceClaims(impl: Impl, place: string, ids: readonly string[], n: number): Promise<string[][]> {
  const entry = await storeBundle()
  const source = `
    import * as store from ${JSON.stringify(entry)}
    const s = await ${impl.childOpen(place, 'store')}
    const ids = ${JSON.stringify(ids)}
    process.stdout.write('ready\\n')
    process.stdin.once('data', async () => {
      const results = await Promise.all(ids.map((id) => s.claim(id)))
      await s.close()
      process.stdout.write(JSON.stringify(ids.filter((_, i) => results[i].ok)) + '\\n')
      process.exit(0)
    })`
  const children = Array.from({ length: n }, () => spawn(process.execPath, ['--input-type=module', '-e', source], { stdio: ['pipe', 'pipe', 'inherit'] }))
  const lines = children.map((child) => {
    let buffered = ''
    const waiters: ((line: string) => void)[] = []
    child.stdout.setEncoding('utf8')
    child.stdout.on('data', (chunk: string) => {
      buffered += chunk
      let i: number
      while ((i = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, i)
        buffered = buffered.slice(i + 1)
        waiters.shift()?.(line)
      }
    })
    return () => new Promise<string>((resolve, reject) => {
      waiters.push(resolve)
      child.once('exit', (code) => reject(new Error(`a racing child exited with ${code}`)))
    })
  })
  const next = lines.map((f) => f())
  expect(await Promise.all(next.map((p) => p))).toEqual(children.map(() => 'ready'))
  const results = lines.map((f) => f())
  for (const child of children) child.stdin.write('go\n')
  return (await Promise.all(results)).map((line) => JSON.parse(line) as string[])
}

function parkInput(id: string, over: Partial<ParkInput> = {}): ParkInput {
  const input = { path: 'notes.txt', password: 'hunter2' }
  return {
    id,
    kind: 'confirmation',
    callId: `call-${id}`,
    tool: 'delete_file',
    input: sealInput(id, input),
    inputHash: inputHash(input),
    expiresAt: null,
    data: { summary: 'Delete notes.txt' },
    ...over,
  }
}

function evidence(i: number): EvidenceRecord {
  return {
    callId: `c${i}`,
    tool: 't',
    input: { i, password: '[redacted]' },
    result: { status: 'success', output: { text: `r${i}` } },
    status: 'success',
    startedAt: new Date(i * 1000).toISOString(),
    endedAt: new Date(i * 1000 + 5).toISOString(),
  }
}

/** Opens one store for a test and closes it (and any second one) at the end. */
for (const impl of impls) {
  describe.skipIf(impl.skip)(`${impl.name} store`, () => {
    it('parks a call, reads it back, and refuses a second park of its id', async () => {
      await withStores(impl, async (open) => {
        const s = await open()
        await s.park(parkInput('a'))
        await s.park(parkInput('b', { kind: 'suspension', expiresAt: 5_000_000 }))
        const a = await s.getParked('a')
        expect(a).toMatchObject({ id: 'a', kind: 'confirmation', callId: 'call-a', tool: 'delete_file', state: 'parked', fence: 0, expiresAt: null })
        expect(a!.input.input).toEqual({ path: 'notes.txt', password: '[redacted]' })
        expect(a!.input.redacted).toBe(true)
        expect(a!.input.sealed).toBeNull()
        expect(a!.data).toEqual({ summary: 'Delete notes.txt' })
        expect(a!.createdAt).toBe(1_000_000)
        expect((await s.getParked('b'))!.expiresAt).toBe(5_000_000)
        expect(await s.getParked('nope')).toBeUndefined()
        await expect(s.park(parkInput('a'))).rejects.toBeInstanceOf(StoreConflictError)
        expect((await s.listParked()).map((c) => c.id)).toEqual(['a', 'b'])
      })
    })

    it('claim is a compare-and-swap: parked → running once, with a fencing token', async () => {
      await withStores(impl, async (open, clock) => {
        const s = await open()
        await s.park(parkInput('a'))
        clock.t += 10
        const first = await s.claim('a')
        expect(first.ok).toBe(true)
        if (!first.ok) return
        expect(first.fence).toBe(1)
        expect(first.call).toMatchObject({ state: 'running', fence: 1, updatedAt: 1_000_010 })
        expect(await s.claim('a')).toEqual({ ok: false, reason: 'used', state: 'running' })
        expect(await s.claim('missing')).toEqual({ ok: false, reason: 'unknown' })
        expect(await s.finish('a', 2)).toBe(false) // not the holder's token
        expect(await s.finish('a', 1)).toBe(true)
        expect(await s.finish('a', 1)).toBe(false)
        expect(await s.claim('a')).toEqual({ ok: false, reason: 'used', state: 'done' })
        expect((await s.listParked('done')).map((c) => c.id)).toEqual(['a'])
        expect(await s.listParked()).toEqual([])
      })
    })

    it('a claim of the other kind is unknown; deny only takes a parked call', async () => {
      await withStores(impl, async (open) => {
        const s = await open()
        await s.park(parkInput('a'))
        await s.park(parkInput('b', { kind: 'suspension' }))
        expect(await s.claim('a', { kind: 'suspension' })).toEqual({ ok: false, reason: 'unknown' })
        expect((await s.claim('b', { kind: 'suspension' })).ok).toBe(true)
        expect(await s.deny('b')).toBe(false)
        expect(await s.deny('a')).toBe(true)
        expect(await s.deny('a')).toBe(false)
        expect(await s.claim('a')).toEqual({ ok: false, reason: 'used', state: 'denied' })
      })
    })

    it('a claim after the expiry answers expired, and the call stays expired', async () => {
      await withStores(impl, async (open, clock) => {
        const s = await open()
        await s.park(parkInput('a', { expiresAt: clock.t + 100 }))
        await s.park(parkInput('b', { expiresAt: clock.t + 100 }))
        clock.t += 99
        expect((await s.claim('b')).ok).toBe(true)
        clock.t += 1
        expect(await s.claim('a')).toEqual({ ok: false, reason: 'expired', state: 'expired' })
        expect((await s.getParked('a'))!.state).toBe('expired')
        clock.t -= 50 // a clock that steps back does not revive it
        expect(await s.claim('a')).toEqual({ ok: false, reason: 'expired', state: 'expired' })
      })
    })

    it('a claim whose lease runs out is swept once as outcome unknown; its holder can no longer finish', async () => {
      await withStores(impl, async (open, clock) => {
        const s = await open()
        await s.park(parkInput('a'))
        await s.park(parkInput('b'))
        const a = await s.claim('a', { leaseMs: 1000 })
        const b = await s.claim('b') // no lease: never swept
        clock.t += 999
        expect(await s.sweep()).toEqual({ keys: [], parked: [] })
        clock.t += 1
        const swept = await s.sweep()
        expect(swept.keys).toEqual([])
        expect(swept.parked.map((c) => [c.id, c.state])).toEqual([['a', 'unknown']])
        expect((await s.sweep()).parked).toEqual([])
        expect(a.ok && (await s.finish('a', a.fence))).toBe(false)
        expect(await s.claim('a')).toEqual({ ok: false, reason: 'used', state: 'unknown' })
        expect(b.ok && (await s.finish('b', b.fence))).toBe(true)
      })
    })

    it('undo entries: one per call, taken exactly once', async () => {
      await withStores(impl, async (open) => {
        const s = await open()
        await s.putUndo({ callId: 'c1', tool: 'rename', payload: { from: 'b', to: 'a', n: [1, 2.5, null, true] } })
        await expect(s.putUndo({ callId: 'c1', tool: 'rename', payload: {} })).rejects.toBeInstanceOf(StoreConflictError)
        const got = await s.takeUndo('c1')
        expect(got).toEqual({ callId: 'c1', tool: 'rename', payload: { from: 'b', to: 'a', n: [1, 2.5, null, true] }, createdAt: 1_000_000 })
        expect(await s.takeUndo('c1')).toBeUndefined()
        expect(await s.takeUndo('c2')).toBeUndefined()
      })
    })

    it('evidence records come back in the order appended, also through evidenceOf', async () => {
      await withStores(impl, async (open) => {
        const s = await open()
        for (let i = 0; i < 3; i++) await s.appendEvidence(evidence(i))
        const adapter = evidenceOf(s)
        void adapter.append(evidence(3))
        void adapter.append(evidence(4))
        await adapter.flush!()
        expect(await adapter.readAll()).toEqual([0, 1, 2, 3, 4].map(evidence))
      })
    })

    it('idempotency ledger: new, in flight, mismatch, settled with the recorded result', async () => {
      await withStores(impl, async (open) => {
        const s = await open()
        const h = inputHash({ to: 'a@b.c' })
        const first = await s.begin('k1', h, { callId: 'c1' })
        expect(first.state).toBe('new')
        expect(await s.begin('k1', h, { callId: 'c2' })).toEqual({ state: 'in_flight', callId: 'c1', startedAt: 1_000_000 })
        expect(await s.begin('k1', inputHash({ to: 'x@y.z' }), { callId: 'c3' })).toEqual({ state: 'mismatch', callId: 'c1' })
        if (first.state !== 'new') return
        const result = { status: 'success', output: { text: 'sent', structured: { id: 7 } } }
        expect(await s.settle('k1', 'not-the-token', result)).toBe(false)
        expect(await s.settle('k1', first.token, result)).toBe(true)
        expect(await s.settle('k1', first.token, { other: true })).toBe(false)
        expect(await s.begin('k1', h, { callId: 'c4' })).toEqual({ state: 'settled', callId: 'c1', result })
        expect(await s.begin('k1', inputHash({ to: 'x@y.z' }), { callId: 'c5' })).toEqual({ state: 'mismatch', callId: 'c1' })
      })
    })

    it('a run that began and never settled within its lease is outcome unknown, for good', async () => {
      await withStores(impl, async (open, clock) => {
        const s = await open()
        const h = inputHash({ amount: 10 })
        // the input (already redacted by the caller) is kept with the key: an unknown run says what to verify
        const input = { amount: 10, order: 'o-7', cardToken: '[redacted]' }
        const viaBegin = await s.begin('k1', h, { callId: 'c1', leaseMs: 500, input })
        const viaSweep = await s.begin('k2', h, { callId: 'c2', leaseMs: 500, input })
        await s.begin('k3', h, { callId: 'c3' }) // no lease: in flight until settled
        clock.t += 500
        // the begin that turns the key unknown says so (it reports the dead run); later ones do not
        expect(await s.begin('k1', h, { callId: 'r1' })).toEqual({ state: 'unknown', callId: 'c1', startedAt: 1_000_000, swept: true, input })
        expect(await s.begin('k1', h, { callId: 'r1b' })).toEqual({ state: 'unknown', callId: 'c1', startedAt: 1_000_000, swept: false, input })
        const swept = await s.sweep()
        expect(swept.keys).toEqual([{ key: 'k2', callId: 'c2', startedAt: 1_000_000, input }])
        expect((await s.sweep()).keys).toEqual([])
        // the late holder cannot turn "unknown" into a result someone else already reported otherwise
        expect(viaBegin.state === 'new' && (await s.settle('k1', viaBegin.token, null))).toBe(false)
        expect(viaSweep.state === 'new' && (await s.settle('k2', viaSweep.token, null))).toBe(false)
        expect(await s.begin('k2', h, { callId: 'r2' })).toEqual({ state: 'unknown', callId: 'c2', startedAt: 1_000_000, swept: false, input })
        expect((await s.begin('k3', h, { callId: 'r3' })).state).toBe('in_flight')
        // a key begun without an input is swept with input null
        clock.t += 1_000
        await s.begin('k4', h, { callId: 'c4', leaseMs: 500 })
        clock.t += 500
        expect((await s.sweep()).keys).toEqual([{ key: 'k4', callId: 'c4', startedAt: 1_001_500, input: null }])
      })
    })

    it('a call parked with ttlMs expires on the store clock, whatever the process clock says', async () => {
      await withStores(impl, async (open, clock) => {
        const s = await open()
        clock.t = Date.now() + 24 * 3600_000 // the store's clock runs a day ahead of Date.now
        await s.park(parkInput('a', { ttlMs: 1000 }))
        await s.park(parkInput('b', { ttlMs: 1000 }))
        expect((await s.getParked('a'))!.expiresAt).toBe(clock.t + 1000)
        clock.t += 999
        expect((await s.claim('a')).ok).toBe(true)
        clock.t += 1
        expect(await s.claim('b')).toEqual({ ok: false, reason: 'expired', state: 'expired' })
      })
    })

    it('unclaim gives a claim back to parked, only for the holder of its fence; it can be claimed again', async () => {
      await withStores(impl, async (open) => {
        const s = await open()
        await s.park(parkInput('a'))
        const first = await s.claim('a', { leaseMs: 1000 })
        if (!first.ok) throw new Error('claim failed')
        expect(await s.unclaim('a', first.fence + 1)).toBe(false)
        expect(await s.unclaim('a', first.fence)).toBe(true)
        expect(await s.unclaim('a', first.fence)).toBe(false) // parked now, not running
        expect((await s.getParked('a'))!.state).toBe('parked')
        const second = await s.claim('a')
        expect(second.ok && second.fence).toBe(first.fence + 1)
        expect(await s.unclaim('a', first.fence)).toBe(false) // the old claim's fence no longer holds it
        expect(await s.sweep()).toEqual({ keys: [], parked: [] }) // given back: no lease left to run out
      })
    })

    it('prune removes answered, lapsed and old rows before the cut-off, never a call that can still be answered nor a key in flight', async () => {
      await withStores(impl, async (open, clock) => {
        const s = await open()
        const t0 = clock.t
        // old rows, written at t0
        await s.park(parkInput('done'))
        await s.park(parkInput('denied'))
        await s.park(parkInput('open')) // never expires: can still be confirmed
        await s.park(parkInput('lapsed', { ttlMs: 100 })) // expires at t0 + 100, never claimed
        await s.park(parkInput('late', { ttlMs: 20_000 })) // still confirmable at the cut-off
        await s.park(parkInput('running'))
        const d = await s.claim('done')
        if (d.ok) await s.finish('done', d.fence)
        await s.deny('denied')
        await s.claim('running') // no lease: running until finished
        await s.putUndo({ callId: 'u-old', tool: 't', payload: 1 })
        await s.appendEvidence(evidence(1))
        const settled = await s.begin('k-settled', 'h', { callId: 'c1' })
        if (settled.state === 'new') await s.settle('k-settled', settled.token, { ok: true })
        await s.begin('k-unknown', 'h', { callId: 'c2', leaseMs: 10 })
        await s.begin('k-flight', 'h', { callId: 'c3' }) // in flight, no lease
        clock.t = t0 + 50
        await s.sweep() // k-unknown → unknown
        // new rows, written at t0 + 10 000
        clock.t = t0 + 10_000
        await s.park(parkInput('new-done'))
        const nd = await s.claim('new-done')
        if (nd.ok) await s.finish('new-done', nd.fence)
        await s.putUndo({ callId: 'u-new', tool: 't', payload: 2 })
        await s.appendEvidence(evidence(2))
        const fresh = await s.begin('k-new', 'h', { callId: 'c4' })
        if (fresh.state === 'new') await s.settle('k-new', fresh.token, { ok: true })
        clock.t = t0 + 15_000
        await expect(s.prune({ olderThanMs: -1 })).rejects.toThrow(/olderThanMs/)
        // cut-off t0 + 5 000: what was written or answered before it goes
        expect(await s.prune({ olderThanMs: 10_000 })).toEqual({ parked: 3, undo: 1, evidence: 1, ledger: 2 })
        const left = async (ids: string[]) => (await Promise.all(ids.map((id) => s.getParked(id)))).map((c) => c?.state ?? 'gone')
        expect(await left(['done', 'denied', 'lapsed', 'open', 'late', 'running', 'new-done'])).toEqual(['gone', 'gone', 'gone', 'parked', 'parked', 'running', 'done'])
        expect((await s.claim('open')).ok).toBe(true)
        expect((await s.claim('late')).ok).toBe(true)
        expect(await s.takeUndo('u-old')).toBeUndefined()
        expect(await s.takeUndo('u-new')).toMatchObject({ payload: 2 })
        expect(await s.readEvidence()).toEqual([evidence(2)])
        expect((await s.begin('k-flight', 'h', { callId: 'x' })).state).toBe('in_flight')
        expect((await s.begin('k-new', 'h', { callId: 'x' })).state).toBe('settled')
        // a pruned key is forgotten: it is new again
        expect((await s.begin('k-settled', 'h', { callId: 'x' })).state).toBe('new')
        expect((await s.begin('k-unknown', 'h', { callId: 'x' })).state).toBe('new')
        expect(await s.prune({ olderThanMs: 10_000 })).toEqual({ parked: 0, undo: 0, evidence: 0, ledger: 0 })
      })
    })

    it('a closed store rejects every method with StoreUnavailableError (code store_unavailable)', async () => {
      await withStores(impl, async (open) => {
        const s = await open()
        await s.park(parkInput('a'))
        await s.close()
        const calls: (() => Promise<unknown>)[] = [
          () => s.getParked('a'),
          () => s.listParked(),
          () => s.claim('a'),
          () => s.sweep(),
          () => s.readEvidence(),
          () => s.begin('k', 'h', { callId: 'c' }),
          () => s.takeUndo('c'),
          () => s.prune({ olderThanMs: 0 }),
        ]
        for (const call of calls) {
          const err = await call().then(
            () => undefined,
            (e: unknown) => e,
          )
          expect(err).toBeInstanceOf(StoreUnavailableError)
          expect(err).toMatchObject({ code: 'store_unavailable' })
        }
      })
    })

    it('a sealed input opens with the key; a redacted one is kept redacted', async () => {
      await withStores(impl, async (open) => {
        const s = await open()
        const key = randomId().padEnd(32, 'x').slice(0, 32)
        const keyBytes = Buffer.from(key, 'utf8')
        const input = { user: 'ann', password: 'hunter2', card: { 'cc-number': '4111' } }
        await s.park(parkInput('a', { input: sealInput('a', input, undefined, keyBytes) }))
        await s.park(parkInput('b', { input: sealInput('b', input) }))
        const a = (await s.getParked('a'))!
        expect(a.input.input).toEqual({ user: 'ann', password: '[redacted]', card: { 'cc-number': '[redacted]' } })
        expect(a.input.sealed).not.toContain('hunter2')
        expect(openInput('a', a.input, keyBytes)).toEqual(input)
        const b = (await s.getParked('b'))!
        expect(JSON.stringify(b)).not.toContain('hunter2')
        expect(openInput('b', b.input, keyBytes)).toBeUndefined()
      })
    })

    it(`concurrent claims of one id from two ${impl.durable ? 'connections' : 'callers'}: exactly one wins, for each of 200 ids`, async () => {
      await withStores(impl, async (open) => {
        const [s1, s2] = [await open(), await open()]
        const ids = Array.from({ length: 200 }, (_, i) => `p${i}`)
        for (const id of ids) await s1.park(parkInput(id))
        const attempts = ids.flatMap((id) => [s1.claim(id), s2.claim(id), s1.claim(id), s2.claim(id)])
        const results = await Promise.all(attempts)
        const wins = new Map<string, number>()
        results.forEach((r, i) => {
          if (r.ok) wins.set(ids[i >> 2]!, (wins.get(ids[i >> 2]!) ?? 0) + 1)
          else expect(r.reason).toBe('used')
        })
        console.log(`${impl.name}: ${results.length} claims attempted, ${results.filter((r) => r.ok).length} won over ${ids.length} ids`)
        expect(wins.size).toBe(200)
        expect([...wins.values()].every((n) => n === 1)).toBe(true)
        expect(await s2.listParked('running')).toHaveLength(200)
      })
    })

    it('concurrent begins of one key, and takes of one undo, from two stores: exactly one each', async () => {
      await withStores(impl, async (open) => {
        const [s1, s2] = [await open(), await open()]
        const keys = Array.from({ length: 100 }, (_, i) => `k${i}`)
        for (const k of keys) await s1.putUndo({ callId: k, tool: 't', payload: k })
        const begins = await Promise.all(keys.flatMap((k) => [s1, s2, s1, s2].map((s, j) => s.begin(k, 'h', { callId: `${k}-${j}` }))))
        expect(begins.filter((b) => b.state === 'new')).toHaveLength(100)
        expect(begins.filter((b) => b.state === 'in_flight')).toHaveLength(300)
        const takes = await Promise.all(keys.flatMap((k) => [s1.takeUndo(k), s2.takeUndo(k), s1.takeUndo(k), s2.takeUndo(k)]))
        const taken = takes.filter((t) => t !== undefined)
        expect(taken).toHaveLength(100)
        expect(new Set(taken.map((t) => t.callId)).size).toBe(100)
      })
    })

    it.runIf(impl.durable)('4 processes race to claim the same 200 ids: each id is won exactly once', async () => {
      await withStores(impl, async (open, _clock, place) => {
        const s = await open()
        const ids = Array.from({ length: 200 }, (_, i) => `x${i}`)
        for (const id of ids) await s.park(parkInput(id))
        const won = await raceClaims(impl, place, ids, 4)
        const all = won.flat()
        console.log(`${impl.name}: 4 processes, ${ids.length * 4} claims attempted, ${all.length} won (per process: ${won.map((w) => w.length).join(', ')})`)
        expect(all.sort()).toEqual([...ids].sort())
        expect(await s.listParked('running')).toHaveLength(200)
      })
    })

    it.runIf(impl.durable)('what was stored survives closing and reopening the store', async () => {
      await withStores(impl, async (open) => {
        const s = await open()
        await s.park(parkInput('a'))
        await s.putUndo({ callId: 'c1', tool: 't', payload: [1] })
        await s.appendEvidence(evidence(1))
        const b = await s.begin('k', 'h', { callId: 'c1' })
        if (b.state === 'new') await s.settle('k', b.token, { done: true })
        await s.close()
        const again = await open()
        expect((await again.getParked('a'))!.state).toBe('parked')
        expect((await again.claim('a')).ok).toBe(true)
        expect(await again.takeUndo('c1')).toMatchObject({ payload: [1] })
        expect(await again.readEvidence()).toEqual([evidence(1)])
        expect(await again.begin('k', 'h', { callId: 'c2' })).toEqual({ state: 'settled', callId: 'c1', result: { done: true } })
      })
    })

    it.runIf(impl.durable)('a version 1 store is migrated to the newest: its evidence rows are dated at the upgrade, so prune keeps them until they are old', async () => {
      await withStores(impl, async (open, clock, place) => {
        const s = await open()
        await s.appendEvidence(evidence(1))
        await s.close()
        // what schema 1 had: no created_at on evidence, no input in the ledger (schema 3), no owners (schema 5)
        await impl.exec(place, [
          ...SCHEMA_5_COLUMNS,
          'DROP TABLE toolwire_tasks',
          'DROP INDEX toolwire_evidence_created',
          'ALTER TABLE toolwire_evidence DROP COLUMN created_at',
          'ALTER TABLE toolwire_ledger DROP COLUMN input',
          `UPDATE toolwire_meta SET version = 1 WHERE name = 'schema'`,
        ])
        clock.t = Date.now()
        const again = await open()
        expect(await again.readEvidence()).toEqual([evidence(1)])
        expect((await again.prune({ olderThanMs: 3_600_000 })).evidence).toBe(0)
        await again.appendEvidence(evidence(2))
        clock.t += 2 * 3_600_000
        expect((await again.prune({ olderThanMs: 3_600_000 })).evidence).toBe(2)
        expect(await again.readEvidence()).toEqual([])
      })
    })

    it.runIf(impl.durable)(`opens its schema (version ${SCHEMA_VERSION}) again, and refuses one newer than it knows`, async () => {
      await withStores(impl, async (open, _clock, place) => {
        await (await open()).close()
        await (await open()).close() // migrations already applied: a no-op
        await impl.setVersion(place, SCHEMA_VERSION + 1)
        await expect(open()).rejects.toBeInstanceOf(StoreSchemaError)
        await expect(open()).rejects.toThrow(`schema is version ${SCHEMA_VERSION + 1}; this toolwire knows versions up to ${SCHEMA_VERSION}`)
      })
    })
  })
}

describe('canonical input and sealing', () => {
  it('canonicalJson sorts keys at every level; inputHash depends on content only', () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: 'x' } })).toBe('{"a":{"c":"x","d":[3,{"y":2,"z":1}]},"b":1}')
    expect(inputHash({ a: 1, b: 2 })).toBe(inputHash({ b: 2, a: 1 }))
    expect(inputHash({ a: 1 })).not.toBe(inputHash({ a: 2 }))
    expect(inputHash({ a: 1 })).toMatch(/^[0-9a-f]{64}$/)
  })

  it('a sealed input does not open under another id, another key, or altered', () => {
    const key = Buffer.alloc(32, 7)
    const stored = sealInput('id1', { password: 'pw', x: 1 }, undefined, key)
    expect(openInput('id1', stored, key)).toEqual({ password: 'pw', x: 1 })
    expect(() => openInput('id2', stored, key)).toThrow()
    expect(() => openInput('id1', stored, Buffer.alloc(32, 8))).toThrow()
    const flipped = stored.sealed!.slice(0, -2) + (stored.sealed!.endsWith('A') ? 'BA' : 'AA')
    expect(() => openInput('id1', { ...stored, sealed: flipped }, key)).toThrow()
    expect(() => sealInput('id1', {}, undefined, Buffer.alloc(16))).toThrow(/32 bytes/)
    // hex and base64 text of the same 32 bytes are the same key
    expect(openInput('id1', stored, key.toString('hex'))).toEqual({ password: 'pw', x: 1 })
    expect(openInput('id1', stored, key.toString('base64'))).toEqual({ password: 'pw', x: 1 })
  })

  it('a declared sensitive field is redacted too; an input with nothing sensitive is not marked redacted', () => {
    const stored = sealInput('id', { token: 't', path: 'p' }, new Set(['token']))
    expect(stored).toEqual({ input: { token: '[redacted]', path: 'p' }, sealed: null, redacted: true })
    const plain = sealInput('id', { path: 'p' })
    expect(plain.redacted).toBe(false)
    expect(openInput('id', plain)).toEqual({ path: 'p' })
  })

  it('random ids carry 128 bits', () => {
    const ids = new Set(Array.from({ length: 1000 }, () => randomId('c_')))
    expect(ids.size).toBe(1000)
    for (const id of ids) expect(Buffer.from(id.slice(2), 'base64url')).toHaveLength(16)
  })
})

describe('approval tokens', () => {
  const secret = 'a secret of at least sixteen bytes'
  const claims = { confirmationId: randomId(), callId: 'call-1', tool: 'delete_file', inputHash: inputHash({ path: 'x' }) }

  it('a signed token verifies to its claims', () => {
    const token = signApproval(secret, claims)
    expect(token.startsWith('tw1.')).toBe(true)
    expect(verifyApproval(secret, token)).toEqual(claims)
  })

  it('a forged, altered or foreign token is refused', () => {
    const token = signApproval(secret, claims)
    const [v, body, mac] = token.split('.') as [string, string, string]
    const otherBody = Buffer.from(JSON.stringify([claims.confirmationId, claims.callId, 'drop_table', claims.inputHash])).toString('base64url')
    expect(verifyApproval(secret, `${v}.${otherBody}.${mac}`)).toBeUndefined()
    expect(verifyApproval(secret, `${v}.${body}.${mac.slice(0, -1)}${mac.endsWith('A') ? 'B' : 'A'}`)).toBeUndefined()
    expect(verifyApproval(secret, `${v}.${body}.${mac}=`)).toBeUndefined()
    expect(verifyApproval(secret, `tw2.${body}.${mac}`)).toBeUndefined()
    expect(verifyApproval('another secret, sixteen bytes+', token)).toBeUndefined()
    expect(verifyApproval(secret, signApproval('another secret, sixteen bytes+', claims))).toBeUndefined()
    expect(verifyApproval(secret, claims.confirmationId)).toBeUndefined()
    expect(verifyApproval(secret, 42)).toBeUndefined()
    expect(verifyApproval(secret, 'x'.repeat(5000))).toBeUndefined()
  })

  it('a secret shorter than 16 bytes is refused', () => {
    expect(() => signApproval('short', claims)).toThrow(/16 bytes/)
  })
})

describe('loading', () => {
  it('a driver that is not installed is a StoreDriverMissingError saying what to install, not a bare ERR_MODULE_NOT_FOUND', async () => {
    // the store entry bundled into a folder with no node_modules above it: `better-sqlite3` and `pg` really do not resolve there
    const out = tempDir('toolwire-nodriver-')
    await build({ entryPoints: { store: 'src/runtime/store/index.ts' }, outdir: out, outExtension: { '.js': '.mjs' }, bundle: true, format: 'esm', platform: 'node', packages: 'external', logLevel: 'silent' })
    symlinkSync(join(import.meta.dirname, '..', 'binding.cjs'), join(out, 'binding.cjs')) // toolwire's own native addon, found beside the bundle
    const source = `
      import * as store from ${JSON.stringify(join(out, 'store.mjs'))}
      const report = (err) => ({ name: err.name, code: err.code, driver: err.driver, message: err.message, cause: err.cause?.code, isClass: err instanceof store.StoreDriverMissingError })
      const results = []
      for (const open of [() => store.openSqliteStore({ path: ':memory:' }), () => store.openPostgresStore({ connectionString: 'postgres://127.0.0.1:1/none' })]) {
        results.push(await open().then(() => 'opened', report))
      }
      process.stdout.write(JSON.stringify(results))`
    const child = spawn(process.execPath, ['--input-type=module', '-e', source], { cwd: out, stdio: ['ignore', 'pipe', 'inherit'] })
    let text = ''
    child.stdout.setEncoding('utf8').on('data', (c: string) => (text += c))
    await new Promise((resolve) => child.once('exit', resolve))
    expect(JSON.parse(text)).toEqual([
      {
        name: 'StoreDriverMissingError',
        code: 'store_driver_missing',
        driver: 'better-sqlite3',
        message: "toolwire: the SQLite store needs the 'better-sqlite3' package, which is not installed: npm install better-sqlite3",
        cause: 'ERR_MODULE_NOT_FOUND',
        isClass: true,
      },
      {
        name: 'StoreDriverMissingError',
        code: 'store_driver_missing',
        driver: 'pg',
        message: "toolwire: the PostgreSQL store needs the 'pg' package, which is not installed: npm install pg",
        cause: 'ERR_MODULE_NOT_FOUND',
        isClass: true,
      },
    ])
    expect(new StoreDriverMissingError('pg')).toBeInstanceOf(Error)
  })

  it('the root entry reaches no store implementation nor a driver; the store entry loads its drivers only on open', async () => {
    const meta = async (entry: string) =>
      (await build({ entryPoints: [entry], bundle: true, write: false, metafile: true, platform: 'node', format: 'esm', packages: 'external', logLevel: 'silent' })).metafile!
    const root = await meta('src/index.ts')
    // the manager uses a store it is given: only the codec, the approval tokens and the evidence adapter (node:crypto)
    expect(Object.keys(root.inputs).filter((f) => f.includes('runtime/store')).sort()).toEqual([
      'src/runtime/store/approval.ts',
      'src/runtime/store/codec.ts',
      'src/runtime/store/evidence.ts',
      'src/runtime/store/types.ts', // the error classes (StoreUnavailableError); no driver
    ])
    const rootImports = Object.values(root.outputs).flatMap((o) => o.imports.map((i) => i.path))
    expect(rootImports.filter((p) => p === 'better-sqlite3' || p === 'pg')).toEqual([])
    const store = await meta('src/runtime/store/index.ts')
    const drivers = Object.values(store.outputs)
      .flatMap((o) => o.imports)
      .filter((i) => i.path === 'better-sqlite3' || i.path === 'pg')
    expect(drivers.map((i) => [i.path, i.kind]).sort()).toEqual([
      ['better-sqlite3', 'dynamic-import'],
      ['pg', 'dynamic-import'],
    ])
  })
})
