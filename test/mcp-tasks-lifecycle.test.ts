// The tasks extension through serveHttp (MCP 2026-07-28), beyond the happy path, with raw
// JSON-RPC frames checked against the 2026-07-28 schema and the SEP-2663 fixture:
// - tasks/cancel of a task waiting for input (its call never runs) and of a running one (its
//   run is aborted); both end `cancelled`, and a second cancel is acked (SEP-2663: an empty
//   result; only an unknown task is an error) and changes nothing;
// - owner separation: two instances on one store with different bearer tokens; a task made
//   under one token is "not found" for tasks/get, tasks/update and tasks/cancel under the other;
// - a restart: a new manager and server on the same SQLite file; a running task whose process
//   died is failed as outcome_unknown by the new instance's sweep, and never runs again;
// - a task store that fails when the task is written: a clear -32603, nothing runs.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it, vi } from 'vitest'
import { ToolManager, type ToolContext } from '../src/runtime/manager.js'
import { serveHttp, type HttpMcpServer } from '../src/mcp/http.js'
import { MemoryStore, openSqliteStore, StoreUnavailableError, type ToolStore } from '../src/runtime/store/index.js'
import { TASK_SWEEP_MS } from '../src/mcp/task-serving.js'
import { failingTaskCreate, payManager } from './fixtures/mcp/instances.js'
import { settledTask, taskMeta, taskRpc } from './fixtures/mcp/task-rpc.js'
import { gate } from './support.js'

const SECRET = 'tasks-lifecycle-approval-secret-0123'
const STORE_KEY = 'e'.repeat(64)
const NOT_FOUND = { code: -32602, message: 'Failed to retrieve task: Task not found' }
const APPROVE = { 'confirm-1': { action: 'accept', content: { approve: true } } }

const servers: HttpMcpServer[] = []
const cleanups: (() => unknown)[] = []
/** Run before the servers close (a close waits for the runs started there). */
const releases: (() => void)[] = []
afterAll(async () => {
  for (const r of releases) r()
  for (const s of servers) await s.close()
  for (const c of cleanups) await c()
})

/** `pay` (needs confirmation) and `hold` (longRunning: runs until aborted or released), both recorded in `runs`. */
function manager(store: ToolStore, runs: string[], name: string, release?: Promise<void>, started?: () => void): ToolManager {
  const tm = payManager(store, runs, name, SECRET, STORE_KEY)
  tm.register({
    name: 'hold',
    inputSchema: { type: 'object' },
    longRunning: true,
    run: async (_input: unknown, ctx: ToolContext) => {
      runs.push(`hold@${name}`)
      started?.()
      await new Promise<void>((resolve) => {
        ctx.signal.addEventListener('abort', () => (runs.push(`hold:aborted@${name}`), resolve()), { once: true })
        void release?.then(resolve)
      })
      return 'held'
    },
  })
  return tm
}

async function serve(tm: ToolManager, store: ToolStore, token?: string): Promise<HttpMcpServer> {
  const served = await serveHttp(tm, { store, approvalSecret: SECRET, ...(token === undefined ? {} : { token }) })
  servers.push(served)
  return served
}

const call = (url: string, name: string, token?: string) => taskRpc(url, 'tools/call', { name, arguments: name === 'pay' ? { invoice: 'INV-L' } : {}, _meta: taskMeta(true) }, name, token)
const get = (url: string, taskId: string, token?: string) => taskRpc(url, 'tasks/get', { taskId, _meta: taskMeta(true) }, taskId, token)
const update = (url: string, taskId: string, token?: string) => taskRpc(url, 'tasks/update', { taskId, inputResponses: APPROVE, _meta: taskMeta(true) }, taskId, token)
const cancel = (url: string, taskId: string, token?: string) => taskRpc(url, 'tasks/cancel', { taskId, _meta: taskMeta(true) }, taskId, token)

describe('tasks/cancel over HTTP', () => {
  it('a task waiting for input: cancelled, its call never runs; a second cancel is acked and changes nothing', async () => {
    const store = new MemoryStore()
    const runs: string[] = []
    const served = await serve(manager(store, runs, 'A'), store)
    const taskId = (await call(served.url, 'pay')).result.taskId as string
    expect((await cancel(served.url, taskId)).result).toEqual({ resultType: 'complete', _meta: expect.any(Object) })
    expect((await get(served.url, taskId)).result).toMatchObject({ status: 'cancelled' })
    expect((await cancel(served.url, taskId)).result).toMatchObject({ resultType: 'complete' })
    // an approval after the cancel is acked and runs nothing
    expect((await update(served.url, taskId)).result).toMatchObject({ resultType: 'complete' })
    expect((await get(served.url, taskId)).result).toMatchObject({ status: 'cancelled' })
    expect(runs).toEqual([])
  })

  it('a running task: its run is aborted, the task ends cancelled; a second cancel is acked and changes nothing', async () => {
    const store = new MemoryStore()
    const runs: string[] = []
    const started = gate()
    const served = await serve(manager(store, runs, 'A', undefined, () => started.release()), store)
    const created = await call(served.url, 'hold')
    expect(created.result).toMatchObject({ resultType: 'task', status: 'working' })
    const taskId = created.result.taskId as string
    await started.promise
    expect((await cancel(served.url, taskId)).result).toMatchObject({ resultType: 'complete' })
    expect((await settledTask([served.url], taskId)).result).toMatchObject({ status: 'cancelled' })
    expect((await cancel(served.url, taskId)).result).toMatchObject({ resultType: 'complete' })
    expect((await get(served.url, taskId)).result).toMatchObject({ status: 'cancelled' })
    expect(runs).toEqual(['hold@A', 'hold:aborted@A'])
  })

  it('a running task whose tool ignores its signal: cancelled at once, as tm.cancel settles a call; the tool goes on to its end, its result dropped', async () => {
    const store = new MemoryStore()
    const effects: string[] = []
    const started = gate()
    const finish = gate()
    const tm = manager(store, [], 'A')
    tm.register({
      name: 'stubborn',
      inputSchema: { type: 'object' },
      longRunning: true,
      run: async () => {
        started.release()
        await finish.promise
        effects.push('done')
        return 'finished anyway'
      },
    })
    releases.push(() => finish.release())
    const served = await serve(tm, store)
    const created = await call(served.url, 'stubborn')
    const taskId = created.result.taskId as string
    await started.promise
    await cancel(served.url, taskId)
    expect((await settledTask([served.url], taskId)).result).toMatchObject({ status: 'cancelled' })
    finish.release()
    await expect.poll(() => effects).toEqual(['done'])
    const after = (await get(served.url, taskId)).result
    expect(after).toMatchObject({ status: 'cancelled' })
    expect(JSON.stringify(after)).not.toContain('finished anyway')
  })

  it('an unknown task: cancel answers "not found"', async () => {
    const store = new MemoryStore()
    const served = await serve(manager(store, [], 'A'), store)
    expect((await cancel(served.url, 'twt_' + 'x'.repeat(43))).error).toMatchObject(NOT_FOUND)
  })
})

describe('tasks/update with an answer that is not one to what was asked', () => {
  it.each([
    ['approve as a string', { action: 'accept', content: { approve: 'true' } }],
    ['accept without content', { action: 'accept' }],
    ['an unknown action', { action: 'maybe' }],
  ])('%s is ignored: the task stays input_required, nothing runs; a valid approval then runs it once', async (_label, response) => {
    const store = new MemoryStore()
    const runs: string[] = []
    const served = await serve(manager(store, runs, 'A'), store)
    const taskId = (await call(served.url, 'pay')).result.taskId as string
    const sent = await taskRpc(served.url, 'tasks/update', { taskId, inputResponses: { 'confirm-1': response }, _meta: taskMeta(true) }, taskId)
    expect(sent.result).toMatchObject({ resultType: 'complete' })
    expect((await get(served.url, taskId)).result).toMatchObject({ status: 'input_required', inputRequests: { 'confirm-1': expect.any(Object) } })
    expect(runs).toEqual([])
    await update(served.url, taskId)
    expect((await settledTask([served.url], taskId)).result).toMatchObject({ status: 'completed' })
    expect(runs).toHaveLength(1)
  })
})

describe('owner separation over HTTP', () => {
  it('a task made under one bearer token is "not found" under another, for get, update and cancel; untouched', async () => {
    const store = new MemoryStore()
    const runs: string[] = []
    const alice = await serve(manager(store, runs, 'A'), store, 'alice-token-0123')
    const mallory = await serve(manager(store, runs, 'M'), store, 'mallory-token-0123')
    const taskId = (await call(alice.url, 'pay', 'alice-token-0123')).result.taskId as string
    // the same store, another token: the same answer as an unknown id
    expect((await get(mallory.url, taskId, 'mallory-token-0123')).error).toMatchObject(NOT_FOUND)
    expect((await update(mallory.url, taskId, 'mallory-token-0123')).error).toMatchObject(NOT_FOUND)
    expect((await cancel(mallory.url, taskId, 'mallory-token-0123')).error).toMatchObject(NOT_FOUND)
    expect((await get(mallory.url, 'twt_' + 'y'.repeat(43), 'mallory-token-0123')).error).toMatchObject(NOT_FOUND)
    expect(runs).toEqual([])
    expect((await get(alice.url, taskId, 'alice-token-0123')).result).toMatchObject({ status: 'input_required' })
    await update(alice.url, taskId, 'alice-token-0123')
    expect((await settledTask([alice.url], taskId, 'alice-token-0123')).result).toMatchObject({ status: 'completed' })
    expect(runs).toEqual(['INV-L@A'])
  })
})

describe('a restart on the same SQLite file', () => {
  it('a running task whose process died: the new instance fails it as outcome_unknown, and it never runs again', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tw-tasks-restart-'))
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
    const clock = { t: Date.UTC(2026, 6, 28) }
    const now = (): number => clock.t
    const runs: string[] = []
    const release = gate()
    const started = gate()
    const first = await openSqliteStore({ path: join(dir, 'tw.db'), now })
    cleanups.push(() => first.close())
    // the first instance "dies": its run never finishes (until the end of the test), and nothing of it sweeps
    const dead = await serve(manager(first, runs, 'A', release.promise, () => started.release()), first)
    const taskId = (await call(dead.url, 'hold')).result.taskId as string
    await started.promise
    releases.push(() => release.release())
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] })
    try {
      const second = await openSqliteStore({ path: join(dir, 'tw.db'), now })
      cleanups.push(() => second.close())
      const restarted = await serve(manager(second, runs, 'B'), second)
      expect((await get(restarted.url, taskId)).result).toMatchObject({ status: 'working' })
      clock.t += 10 * 60_000 + 1 // the lease ran out
      vi.advanceTimersByTime(TASK_SWEEP_MS) // the restarted instance's sweep
      const failed = await settledTask([restarted.url], taskId)
      expect(failed.result).toMatchObject({ status: 'failed', error: { code: -32603, data: { toolwire: { status: 'outcome_unknown' } } } })
      // nothing runs it again: not an answer, not another sweep
      await update(restarted.url, taskId)
      vi.advanceTimersByTime(TASK_SWEEP_MS)
      expect((await get(restarted.url, taskId)).result).toMatchObject({ status: 'failed' })
      expect(runs).toEqual(['hold@A'])
    } finally {
      vi.useRealTimers()
    }
  })
})

describe('a task store that fails when the task is written', () => {
  it('the client gets a clear -32603, the call does not run, nothing is left unhandled', async () => {
    const store = new MemoryStore()
    const broken = failingTaskCreate(store, () => {
      throw new StoreUnavailableError('toolwire: the memory store failed: disk at /secret/path on fire')
    })
    const runs: string[] = []
    const served = await serve(manager(broken, runs, 'A'), broken)
    for (const tool of ['pay', 'hold']) {
      const answered = await call(served.url, tool)
      expect(answered.error).toEqual({ code: -32603, message: 'Internal error: the task store is unavailable; the call did not run' })
    }
    expect(runs).toEqual([])
  })
})
