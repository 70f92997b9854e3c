/**
 * The task table of the durable stores (the MCP tasks extension): ONE suite run against the
 * memory, SQLite and PostgreSQL stores (test/stores.ts opens them; PostgreSQL cases skip with
 * a printed reason without TOOLWIRE_PG_URL, and fail under CI=true). Clocks are moved by hand.
 */
import { describe, expect, it } from 'vitest'
import {
  MemoryStore,
  OUTCOME_UNKNOWN_TASK_ERROR,
  SCHEMA_VERSION,
  inputHash,
  isTaskIdShape,
  taskIdDigest,
  taskOwner,
  tasksOf,
  type TaskInput,
  type TaskStore,
  type ToolStore,
} from '../src/runtime/store/index.js'
import { NO_TASKS_SUPPORT } from '../src/runtime/store/tasks.js'
import { PG_URL, SCHEMA_5_COLUMNS, storeKinds, withStores, type StoreKind } from './stores.js'

const kinds = await storeKinds('store_tasks')

const ALICE = taskOwner('alice-token')
const MALLORY = taskOwner('mallory-token')

const confirmTask = (over: Partial<TaskInput> = {}): TaskInput => ({
  owner: ALICE,
  parkedId: 'cf_1',
  callId: 'call_1',
  tool: 'delete_file',
  status: 'input_required',
  statusMessage: 'Waiting for approval: Delete notes.txt',
  inputRequests: { 'confirm-1': { method: 'elicitation/create', params: { mode: 'form', message: 'Confirm', requestedSchema: { type: 'object', properties: {} } } } },
  ttlMs: 86_400_000,
  pollIntervalMs: 2000,
  ...over,
})

/** The store's task table (every toolwire store has one). */
function tasks(s: ToolStore): TaskStore {
  const t = tasksOf(s)
  if (t === undefined) throw new Error('no task table')
  return t
}

/** Every stored cell of the task table, as text (durable kinds). */
async function dumpTasks(kind: StoreKind, place: string): Promise<string> {
  if (kind.name === 'sqlite') {
    const { default: Database } = await import('better-sqlite3')
    const db = new Database(place)
    const rows = db.prepare('SELECT * FROM toolwire_tasks').all()
    db.close()
    return JSON.stringify(rows)
  }
  const { default: pg } = await import('pg')
  const client = new pg.Client({ connectionString: PG_URL, options: `-c search_path=${place}` })
  await client.connect()
  const { rows } = await client.query('SELECT * FROM toolwire_tasks')
  await client.end()
  return JSON.stringify(rows)
}

for (const kind of kinds) {
  describe.skipIf(kind.skip)(`${kind.name} store: tasks`, () => {
    it('create returns a twt_ id of 256 bits; get finds the task by it, for its owner only; an unknown or foreign id is not found alike', async () => {
      await withStores(kind, async (open, clock) => {
        const t = tasks(await open())
        const { taskId, task } = await t.create(confirmTask())
        expect(isTaskIdShape(taskId)).toBe(true)
        expect(Buffer.from(taskId.slice(4), 'base64url')).toHaveLength(32)
        expect(task.idDigest).toBe(taskIdDigest(taskId))
        expect(JSON.stringify(task)).not.toContain(taskId)
        const got = await t.get(taskId, ALICE)
        expect(got).toEqual(task)
        expect(got).toMatchObject({ status: 'input_required', createdAt: clock.t, updatedAt: clock.t, version: 1, ttlMs: 86_400_000, pollIntervalMs: 2000, responses: {} })
        expect(await t.get(taskId, MALLORY)).toBeUndefined()
        expect(await t.get(taskId, '')).toBeUndefined()
        expect(await t.get('twt_' + 'A'.repeat(43), ALICE)).toBeUndefined()
        expect(await t.get(42 as unknown as string, ALICE)).toBeUndefined()
        // a foreign owner can neither change nor answer it
        expect(await t.update(taskId, MALLORY, 1, { status: 'cancelled' })).toBeUndefined()
        expect(await t.respond(taskId, MALLORY, { 'confirm-1': { action: 'accept', content: { approve: true } } })).toBeUndefined()
        expect(await t.get(taskId, ALICE)).toEqual(task)
        // two tasks never share an id
        const other = await t.create(confirmTask())
        expect(other.taskId).not.toBe(taskId)
      })
    })

    it('update is a compare-and-swap on the version; a terminal task never changes', async () => {
      await withStores(kind, async (open, clock) => {
        const t = tasks(await open())
        const { taskId } = await t.create(confirmTask({ status: 'working', inputRequests: null, parkedId: null }))
        clock.t += 5
        const a = await t.update(taskId, ALICE, 1, { statusMessage: 'half way', pollIntervalMs: 500 })
        expect(a).toMatchObject({ version: 2, statusMessage: 'half way', pollIntervalMs: 500, status: 'working', updatedAt: clock.t, createdAt: clock.t - 5 })
        // the loser of a race (it read version 1) changes nothing
        expect(await t.update(taskId, ALICE, 1, { status: 'cancelled' })).toBeUndefined()
        const done = await t.update(taskId, ALICE, 2, { status: 'completed', result: { resultType: 'complete', content: [] } })
        expect(done).toMatchObject({ status: 'completed', version: 3, result: { resultType: 'complete', content: [] }, statusMessage: 'half way' })
        expect(await t.update(taskId, ALICE, 3, { status: 'failed', error: { code: -32603, message: 'x' } })).toBeUndefined()
        expect((await t.get(taskId, ALICE))?.status).toBe('completed')
      })
    })

    it('respond records answers for outstanding keys only, each for one caller; the last one makes the task working under a lease', async () => {
      await withStores(kind, async (open, clock) => {
        const t = tasks(await open())
        const two = { 'confirm-1': { method: 'elicitation/create', params: {} }, 'confirm-2': { method: 'elicitation/create', params: {} } }
        const { taskId } = await t.create(confirmTask({ inputRequests: two }))
        const yes = { action: 'accept', content: { approve: true } }
        const first = await t.respond(taskId, ALICE, { 'confirm-1': yes, 'never-issued': yes }, 60_000)
        expect(first?.accepted).toEqual({ 'confirm-1': yes })
        expect(first?.task).toMatchObject({ status: 'input_required', responses: { 'confirm-1': yes }, leaseUntil: null })
        const racing = await Promise.all([t.respond(taskId, ALICE, { 'confirm-2': yes }, 60_000), t.respond(taskId, ALICE, { 'confirm-2': yes }, 60_000)])
        expect(racing.map((r) => Object.keys(r!.accepted).length).sort()).toEqual([0, 1])
        const after = await t.get(taskId, ALICE)
        expect(after).toMatchObject({ status: 'working', statusMessage: null, leaseUntil: clock.t + 60_000, responses: { 'confirm-1': yes, 'confirm-2': yes } })
        // an answered key is not outstanding any more
        expect((await t.respond(taskId, ALICE, { 'confirm-1': yes }))?.accepted).toEqual({})
        expect(await t.respond('twt_' + 'B'.repeat(43), ALICE, { 'confirm-1': yes })).toBeUndefined()
      })
    })

    it('a second handle on the same store sees the task and its changes', async () => {
      await withStores(kind, async (open) => {
        const a = tasks(await open())
        const b = tasks(await open())
        const { taskId } = await a.create(confirmTask())
        expect((await b.get(taskId, ALICE))?.status).toBe('input_required')
        await b.respond(taskId, ALICE, { 'confirm-1': { action: 'decline' } })
        expect((await a.get(taskId, ALICE))?.status).toBe('working')
      })
    })

    it('sweep fails a working task whose lease ran out, once, as outcome unknown; it does not touch an input_required one', async () => {
      await withStores(kind, async (open, clock) => {
        const t = tasks(await open())
        const running = await t.create(confirmTask({ status: 'working', inputRequests: null, parkedId: null, leaseMs: 1000 }))
        const waiting = await t.create(confirmTask())
        expect((await t.sweep()).failed).toEqual([])
        clock.t += 1000
        const swept = await t.sweep()
        expect(swept.failed.map((r) => r.idDigest)).toEqual([running.task.idDigest])
        const failed = await t.get(running.taskId, ALICE)
        expect(failed).toMatchObject({ status: 'failed', error: OUTCOME_UNKNOWN_TASK_ERROR, leaseUntil: null })
        expect(failed?.statusMessage).toMatch(/^outcome_unknown: /)
        expect((await t.sweep()).failed).toEqual([])
        expect((await t.get(waiting.taskId, ALICE))?.status).toBe('input_required')
      })
    })

    it("sweep fails a working task whose parked call the store's lease sweep marked unknown (its process died mid-run)", async () => {
      await withStores(kind, async (open, clock) => {
        const s = await open()
        const t = tasks(s)
        await s.park({ id: 'cf_9', kind: 'confirmation', callId: 'call_9', tool: 'delete_file', input: { input: {}, sealed: null, redacted: false }, inputHash: inputHash({}), expiresAt: null })
        const { taskId } = await t.create(confirmTask({ parkedId: 'cf_9', status: 'working', inputRequests: null }))
        const claim = await s.claim('cf_9', { leaseMs: 500 })
        expect(claim.ok).toBe(true)
        expect((await t.sweep()).failed).toEqual([])
        clock.t += 500
        expect((await s.sweep()).parked.map((p) => p.id)).toEqual(['cf_9'])
        expect((await t.sweep()).failed).toHaveLength(1)
        expect(await t.get(taskId, ALICE)).toMatchObject({ status: 'failed', error: OUTCOME_UNKNOWN_TASK_ERROR })
      })
    })

    it('an expired task is not found, and sweep deletes it; a task with ttl null stays', async () => {
      await withStores(kind, async (open, clock) => {
        const t = tasks(await open())
        const short = await t.create(confirmTask({ ttlMs: 1000 }))
        const forever = await t.create(confirmTask({ ttlMs: null }))
        clock.t += 999
        expect(await t.get(short.taskId, ALICE)).toBeDefined()
        clock.t += 1
        expect(await t.get(short.taskId, ALICE)).toBeUndefined()
        expect(await t.update(short.taskId, ALICE, 1, { status: 'cancelled' })).toBeUndefined()
        expect((await t.sweep()).expired).toBe(1)
        clock.t += 10 * 365 * 86_400_000
        expect((await t.get(forever.taskId, ALICE))?.ttlMs).toBeNull()
      })
    })

    it.runIf(kind.durable)('a task outlives the store being closed and reopened (a restart); the table holds only the digest of its id', async () => {
      await withStores(kind, async (open, _clock, place) => {
        const s = await open()
        const { taskId, task } = await tasks(s).create(confirmTask())
        await s.close()
        const again = tasks(await open())
        expect(await again.get(taskId, ALICE)).toEqual(task)
        const dump = await dumpTasks(kind, place)
        expect(dump).toContain(taskIdDigest(taskId))
        expect(dump).not.toContain(taskId.slice(4))
      })
    })

    it.runIf(kind.durable)(`a version 3 store (no task table) is migrated to version ${SCHEMA_VERSION} and keeps its rows`, async () => {
      await withStores(kind, async (open, _clock, place) => {
        const s = await open()
        await s.putUndo({ callId: 'c1', tool: 't', payload: { before: 1 } })
        await s.close()
        await kind.exec(place, [...SCHEMA_5_COLUMNS, 'DROP TABLE toolwire_tasks', `UPDATE toolwire_meta SET version = 3 WHERE name = 'schema'`])
        const again = await open()
        expect((await again.getUndo!('c1'))?.payload).toEqual({ before: 1 })
        const { taskId } = await tasks(again).create(confirmTask())
        expect((await tasks(again).get(taskId, ALICE))?.tool).toBe('delete_file')
      })
    })
  })
}

describe('stores without tasks', () => {
  it('a store of the app\'s own without `tasks` is detected, and serving has a sentence for it', () => {
    const own = { kind: 'own' } as unknown as ToolStore
    expect(tasksOf(own)).toBeUndefined()
    expect(tasksOf(undefined)).toBeUndefined()
    expect(tasksOf({ tasks: {} } as unknown as ToolStore)).toBeUndefined()
    expect(tasksOf(new MemoryStore())).toBeDefined()
    expect(NO_TASKS_SUPPORT).toBe('this store has no tasks support: tasks are off')
  })

  it('owners: a token digest, domain-separated; no token is the empty owner', () => {
    expect(taskOwner(undefined)).toBe('')
    expect(taskOwner('')).toBe('')
    expect(taskOwner('t')).toMatch(/^[0-9a-f]{64}$/)
    expect(taskOwner('t')).not.toBe(taskIdDigest('t'))
  })
})
