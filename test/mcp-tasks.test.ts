/**
 * The MCP tasks extension's protocol logic (src/mcp/tasks.ts) end to end without HTTP, on the
 * memory, SQLite and PostgreSQL stores: a call that parks becomes a task in `input_required`;
 * `tasks/update` answers it and the call runs once, on whichever instance took the answer;
 * `tasks/get` shows the outcome; foreign and unknown ids are not found alike; a run whose
 * process died fails as outcome unknown and never runs again. Every frame is validated against
 * the 2026-07-28 MCP schema plus the SEP-2663 fixture (test/fixtures/mcp/tasks-sep-2663.schema.json).
 */
import { afterAll, describe, expect, it } from 'vitest'
import { ToolManager, type ToolContext } from '../src/runtime/manager.js'
import { pending } from '../src/core/helpers.js'
import { MemoryStore, StoreUnavailableError, taskOwner, tasksOf, type ToolStore } from '../src/runtime/store/index.js'
import { McpTasks, TASK_NOT_FOUND_MESSAGE, TaskRequestError, becomesTask, declaresTasks, longRunningOf, tasksNotDeclared, type CreateTaskResult } from '../src/mcp/tasks.js'
import { gate } from './support.js'
import { frameSchemas, type TaskDef } from './fixtures/mcp/frames.js'
import { storeKinds, storePair } from './stores.js'
import { failingTaskCreate } from './fixtures/mcp/instances.js'

const kinds = await storeKinds('mcp_tasks')
/** Every store the file opened, closed after its tests. */
const opened: ToolStore[] = []
afterAll(async () => {
  for (const s of opened) await s.close().catch(() => undefined)
})

// the official 2026-07-28 schema and the SEP-2663 fixture, through the one schema loader
const schemas = frameSchemas()

let frameId = 0
const METHODS: Record<string, string> = { GetTaskRequest: 'tasks/get', UpdateTaskRequest: 'tasks/update', CancelTaskRequest: 'tasks/cancel' }
/**
 * Checks `body` in the JSON-RPC frame it travels in: a result (`CreateTaskResult`,
 * `GetTaskResult`, `AckResult`), request params (`…Request`) or an error (`TaskErrorResponse`).
 * Without the reference schema this checks nothing (the reason was printed; CI=true fails).
 */
function valid(def: string, body: unknown): void {
  if (schemas === undefined) return
  const id = ++frameId
  const method = METHODS[def]
  const [ref, frame] =
    method !== undefined ? [def, { jsonrpc: '2.0', id, method, params: body }]
    : def === 'TaskErrorResponse' ? [def, { jsonrpc: '2.0', id, error: body }]
    : [`${def}Response`, { jsonrpc: '2.0', id, result: body }]
  expect(schemas.taskErrors(ref as TaskDef, frame), `${ref}: ${JSON.stringify(frame)}`).toEqual([])
}

const OWNER = taskOwner('alice-token')
const OTHER = taskOwner('mallory-token')
const TASKS_META = { 'io.modelcontextprotocol/clientCapabilities': { extensions: { 'io.modelcontextprotocol/tasks': {} } } }
/** The `_meta` of a 2026 request from a client that declared the extension. */
const REQUEST_META = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientInfo': { name: 'test', version: '1.0.0' }, ...TASKS_META }

/** A manager on `store` with a tool that needs confirmation and one that asks for input; `runs` records every body that ran. */
function manager(store: ToolStore, runs: string[]): ToolManager {
  const tm = new ToolManager({ store })
  tm.register({
    name: 'delete_file',
    inputSchema: { type: 'object' },
    needsConfirmation: true,
    run: (input: { path: string }) => {
      runs.push(`delete:${input.path}`)
      return { deleted: input.path }
    },
  })
  tm.register({
    name: 'deploy',
    inputSchema: { type: 'object' },
    run: (input: { id: string }) => pending({ id: `req-${input.id}`, kind: 'input', prompt: 'Which environment?' }),
    resume: (answer: unknown, input: { id: string }) => {
      runs.push(`deploy:${input.id}:${String(answer)}`)
      return { deployedTo: answer }
    },
  })
  return tm
}

function tasksFor(tm: ToolManager, store: ToolStore): McpTasks {
  const t = McpTasks.open(tm, store, { leaseMs: 60_000, onError: (e) => { throw e } })
  if (t === undefined) throw new Error('store without tasks')
  return t
}

/** A `tools/call` as the server would run it: tm.call, then a task when the call parked. */
async function callAsTask(tm: ToolManager, tasks: McpTasks, tool: string, input: unknown, callId: string, owner = OWNER): Promise<CreateTaskResult> {
  const view = await tm.call(tool, input, { callId })
  expect(becomesTask(view)).toBe(true)
  const handle = await tasks.taskFor(view, { tool, callId, owner })
  expect(handle).toBeDefined()
  valid('CreateTaskResult', handle)
  return handle!
}

async function expectNotFound(p: Promise<unknown>): Promise<void> {
  const err = await p.then(() => undefined, (e: unknown) => e)
  expect(err).toBeInstanceOf(TaskRequestError)
  const e = err as TaskRequestError
  expect({ code: e.code, message: e.message }).toEqual({ code: -32602, message: TASK_NOT_FOUND_MESSAGE })
  valid('TaskErrorResponse', { code: e.code, message: e.message })
}

const ACCEPT = { action: 'accept', content: { approve: true } }

describe.skipIf(schemas === undefined)('the SEP-2663 schema fixture', () => {
  it('refuses the frames SEP-2663 forbids, so a wrong frame fails the tests', () => {
    const task = { taskId: 'twt_x', status: 'input_required', createdAt: '2026-07-28T10:00:00.000Z', lastUpdatedAt: '2026-07-28T10:00:00.000Z', ttlMs: 1000, pollIntervalMs: 10 }
    const check = (ref: TaskDef, result: unknown): boolean => schemas!.taskErrors(ref, { jsonrpc: '2.0', id: 1, result }).length === 0
    expect(check('GetTaskResultResponse', { ...task, resultType: 'complete', inputRequests: {} })).toBe(true)
    expect(check('GetTaskResultResponse', { ...task, resultType: 'task', inputRequests: {} })).toBe(false)
    expect(check('GetTaskResultResponse', { ...task, resultType: 'complete' })).toBe(false)
    expect(check('GetTaskResultResponse', { ...task, status: 'completed', resultType: 'complete', result: { content: [] } })).toBe(false)
    expect(check('GetTaskResultResponse', { ...task, status: 'failed', resultType: 'complete', error: { message: 'no code' } })).toBe(false)
    expect(check('CreateTaskResultResponse', { ...task, resultType: 'complete' })).toBe(false)
    expect(check('CreateTaskResultResponse', { ...task, resultType: 'task', createdAt: 'yesterday' })).toBe(false)
  })
})

describe('when a tools/call becomes a task', () => {
  it('only a request that declares the extension in its own client capabilities', () => {
    expect(declaresTasks({ _: 1, ...TASKS_META })).toBe(true)
    expect(declaresTasks(undefined)).toBe(false)
    expect(declaresTasks({ 'io.modelcontextprotocol/clientCapabilities': { extensions: {} } })).toBe(false)
    expect(declaresTasks({ 'io.modelcontextprotocol/clientCapabilities': { extensions: { 'io.modelcontextprotocol/tasks': true } } })).toBe(false)
    expect(declaresTasks({ 'io.modelcontextprotocol/clientCapabilities': 'x' })).toBe(false)
  })

  it('tasks/* from a client that did not declare the extension: -32021 naming it', () => {
    const e = tasksNotDeclared()
    expect({ code: e.code, message: e.message, data: e.data }).toEqual({
      code: -32021,
      message: 'Missing required client capability',
      data: { requiredCapabilities: { extensions: { 'io.modelcontextprotocol/tasks': {} } } },
    })
    valid('TaskErrorResponse', { code: e.code, message: e.message, data: e.data })
  })

  it('longRunning is checked at register and shown in the manifest', () => {
    const tm = new ToolManager()
    tm.register({ name: 'a', inputSchema: { type: 'object' }, longRunning: true, run: () => 1 })
    tm.register({ name: 'b', inputSchema: { type: 'object' }, longRunning: { afterMs: 1500 }, run: () => 1 })
    tm.register({ name: 'c', inputSchema: { type: 'object' }, run: () => 1 })
    expect(tm.manifest().map((m) => m.longRunning)).toEqual([true, { afterMs: 1500 }, undefined])
    expect(longRunningOf(tm, 'b')).toEqual({ afterMs: 1500 })
    expect(longRunningOf(tm, 'c')).toBeUndefined()
    expect(longRunningOf(tm, 'nope')).toBeUndefined()
    for (const bad of [false, 1, {}, { afterMs: -1 }, { afterMs: Number.NaN }, { afterMs: 2 ** 31 }, null]) {
      expect(() => tm.register({ name: 'd', inputSchema: { type: 'object' }, longRunning: bad as never, run: () => 1 })).toThrow(
        'toolwire: tool "d" longRunning must be true or { afterMs } (a number of ms ≥ 0)',
      )
    }
  })

  it('a task that cannot be created: longRunning true rejects and nothing runs; { afterMs } answers the call\'s own view when it ends', async () => {
    const store = new MemoryStore()
    const runs: string[] = []
    const tm = new ToolManager({ store })
    const release = gate()
    tm.register({ name: 'now', inputSchema: { type: 'object' }, longRunning: true, run: () => { runs.push('now'); return 1 } })
    tm.register({ name: 'later', inputSchema: { type: 'object' }, longRunning: { afterMs: 0 }, run: async () => { await release.promise; runs.push('later'); return 2 } })
    let creates = 0
    const broken = failingTaskCreate(store, () => {
      // the second create is the one after afterMs: the slow call may finish now
      if (++creates === 2) release.release()
      throw new StoreUnavailableError('toolwire: the memory store failed: disk on fire')
    })
    const errors: unknown[] = []
    const tasks = McpTasks.open(tm, broken, { onError: (e) => errors.push(e) })!
    await expect(tasks.runLong({ tool: 'now', callId: 'c1', owner: OWNER }, true, () => tm.call('now', {}, { callId: 'c1' }))).rejects.toBeInstanceOf(StoreUnavailableError)
    expect(runs).toEqual([])
    const out = await tasks.runLong({ tool: 'later', callId: 'c2', owner: OWNER }, { afterMs: 0 }, () => tm.call('later', {}, { callId: 'c2' }))
    expect(out).toEqual({ view: expect.objectContaining({ status: 'ok', data: 2 }) })
    expect(runs).toEqual(['later'])
    // the first failure was the rejection; the second went to onError
    expect(errors).toHaveLength(1)
    expect(errors[0]).toBeInstanceOf(StoreUnavailableError)
  })

  it('a call that finished, failed or needs an authorization URL stays a plain result', async () => {
    const store = await kinds[0]!.open(kinds[0]!.place(), { t: Date.now() })
    opened.push(store)
    const tm = new ToolManager({ store })
    tm.register({ name: 'hello', inputSchema: { type: 'object' }, run: () => 'hi' })
    tm.register({ name: 'login', inputSchema: { type: 'object' }, run: () => pending({ kind: 'authorization', url: 'https://example.com/auth' }) })
    const tasks = tasksFor(tm, store)
    for (const tool of ['hello', 'login', 'nope']) {
      const view = await tm.call(tool, {})
      expect(becomesTask(view)).toBe(false)
      expect(await tasks.taskFor(view, { tool, callId: 'c', owner: OWNER })).toBeUndefined()
    }
  })

  it('a store of the app\'s own without tasks: McpTasks.open says there are none', () => {
    const own = { kind: 'own' } as unknown as ToolStore
    expect(tasksOf(own)).toBeUndefined()
    expect(McpTasks.open(new ToolManager(), own)).toBeUndefined()
  })
})

for (const kind of kinds) {
  describe.skipIf(kind.skip)(`${kind.name} store: tasks end to end`, () => {
    const pair = async () => storePair(kind, opened)

    it('input_required → tasks/update(accept) → completed; the tool runs once; a second answer is ignored', async () => {
      const { a } = await pair()
      const runs: string[] = []
      const tm = manager(a, runs)
      const tasks = tasksFor(tm, a)
      const handle = await callAsTask(tm, tasks, 'delete_file', { path: 'notes.txt' }, 'mcp_t_1')
      expect(handle).toMatchObject({ resultType: 'task', status: 'input_required', ttlMs: 86_400_000, pollIntervalMs: 2000, _meta: { 'toolwire/callId': 'mcp_t_1' } })
      expect(handle.taskId).toMatch(/^twt_[A-Za-z0-9_-]{43}$/)
      const waiting = await tasks.get({ taskId: handle.taskId }, OWNER)
      valid('GetTaskResult', waiting)
      expect(waiting).toMatchObject({ resultType: 'complete', status: 'input_required', statusMessage: expect.stringContaining('notes.txt') })
      expect(Object.keys(waiting.inputRequests!)).toEqual(['confirm-1'])
      expect(waiting.inputRequests!['confirm-1']).toMatchObject({ method: 'elicitation/create', params: { mode: 'form', requestedSchema: { required: ['approve'] } } })
      expect(runs).toEqual([])

      const update = { taskId: handle.taskId, inputResponses: { 'confirm-1': ACCEPT }, _meta: REQUEST_META }
      valid('UpdateTaskRequest', update)
      valid('GetTaskRequest', { taskId: handle.taskId, _meta: REQUEST_META })
      const ack = await tasks.update(update, OWNER)
      valid('AckResult', ack)
      expect(ack).toEqual({ resultType: 'complete' })
      // answered again (a retry, a second tab): acked, ignored
      expect(await tasks.update(update, OWNER)).toEqual({ resultType: 'complete' })
      await tasks.idle()
      const done = await tasks.get({ taskId: handle.taskId }, OWNER)
      valid('GetTaskResult', done)
      expect(done).toMatchObject({ status: 'completed', result: { resultType: 'complete', isError: false, structuredContent: { deleted: 'notes.txt' }, _meta: { 'toolwire/callId': 'mcp_t_1' } } })
      expect(done.inputRequests).toBeUndefined()
      expect(runs).toEqual(['delete:notes.txt'])
      // a finished task does not change any more
      expect(await tasks.cancel({ taskId: handle.taskId }, OWNER)).toEqual({ resultType: 'complete' })
      expect((await tasks.get({ taskId: handle.taskId }, OWNER)).status).toBe('completed')
    })

    it('decline: the call never runs, the task completes with an isError result', async () => {
      const { a } = await pair()
      const runs: string[] = []
      const tm = manager(a, runs)
      const tasks = tasksFor(tm, a)
      const handle = await callAsTask(tm, tasks, 'delete_file', { path: 'x' }, 'mcp_t_2')
      await tasks.update({ taskId: handle.taskId, inputResponses: { 'confirm-1': { action: 'decline' } } }, OWNER)
      await tasks.idle()
      const done = await tasks.get({ taskId: handle.taskId }, OWNER)
      valid('GetTaskResult', done)
      expect(done).toMatchObject({ status: 'completed', result: { isError: true } })
      expect(JSON.stringify(done.result)).toContain('denied')
      // an accept with approve false is a decline too
      const again = await callAsTask(tm, tasks, 'delete_file', { path: 'y' }, 'mcp_t_3')
      await tasks.update({ taskId: again.taskId, inputResponses: { 'confirm-1': { action: 'accept', content: { approve: false } } } }, OWNER)
      await tasks.idle()
      expect((await tasks.get({ taskId: again.taskId }, OWNER)).result).toMatchObject({ isError: true })
      expect(runs).toEqual([])
    })

    it("an answer after the manager's confirmTtlMs: the confirmation has expired, nothing runs, the task completes with that refusal", async () => {
      const { a, clock } = await pair()
      const runs: string[] = []
      const tm = manager(a, runs)
      const tasks = tasksFor(tm, a)
      const handle = await callAsTask(tm, tasks, 'delete_file', { path: 'old' }, 'mcp_t_17')
      clock.t += 10 * 60_000 + 1 // the manager's default confirmTtlMs, on the store's clock
      await tasks.update({ taskId: handle.taskId, inputResponses: { 'confirm-1': ACCEPT } }, OWNER)
      await tasks.idle()
      const done = await tasks.get({ taskId: handle.taskId }, OWNER)
      valid('GetTaskResult', done)
      expect(done).toMatchObject({ status: 'completed', result: { isError: true } })
      expect(JSON.stringify(done.result)).toContain('expired')
      expect(runs).toEqual([])
    })

    it('owner binding: another owner, an unknown id and a malformed one are the same "not found"; the task is untouched', async () => {
      const { a } = await pair()
      const runs: string[] = []
      const tm = manager(a, runs)
      const tasks = tasksFor(tm, a)
      const handle = await callAsTask(tm, tasks, 'delete_file', { path: 'z' }, 'mcp_t_4')
      await expectNotFound(tasks.get({ taskId: handle.taskId }, OTHER))
      await expectNotFound(tasks.update({ taskId: handle.taskId, inputResponses: { 'confirm-1': ACCEPT } }, OTHER))
      await expectNotFound(tasks.cancel({ taskId: handle.taskId }, OTHER))
      await expectNotFound(tasks.get({ taskId: handle.taskId }, ''))
      await expectNotFound(tasks.get({ taskId: 'twt_' + 'x'.repeat(43) }, OWNER))
      await expectNotFound(tasks.get({ taskId: 'nope' }, OWNER))
      await expectNotFound(tasks.get({}, OWNER))
      await expectNotFound(tasks.get(null, OWNER))
      await expect(tasks.update({ taskId: handle.taskId }, OWNER)).rejects.toMatchObject({ code: -32602 })
      await tasks.idle()
      expect(runs).toEqual([])
      expect((await tasks.get({ taskId: handle.taskId }, OWNER)).status).toBe('input_required')
    })

    it('tasks/cancel of a task waiting for input: cancelled, its confirmation denied, nothing runs', async () => {
      const { a } = await pair()
      const runs: string[] = []
      const tm = manager(a, runs)
      const tasks = tasksFor(tm, a)
      const view = await tm.call('delete_file', { path: 'c' }, { callId: 'mcp_t_5' })
      const handle = (await tasks.taskFor(view, { tool: 'delete_file', callId: 'mcp_t_5', owner: OWNER }))!
      const cancel = { taskId: handle.taskId, _meta: REQUEST_META }
      valid('CancelTaskRequest', cancel)
      expect(await tasks.cancel(cancel, OWNER)).toEqual({ resultType: 'complete' })
      const got = await tasks.get({ taskId: handle.taskId }, OWNER)
      valid('GetTaskResult', got)
      expect(got.status).toBe('cancelled')
      await tasks.update({ taskId: handle.taskId, inputResponses: { 'confirm-1': ACCEPT } }, OWNER)
      await tasks.idle()
      expect((await tm.confirm((view as { confirmId: string }).confirmId, { approve: true })).status).toBe('refused')
      expect(runs).toEqual([])
    })

    it('a suspended call asks for input (input-1); the answer resumes it once', async () => {
      const { a } = await pair()
      const runs: string[] = []
      const tm = manager(a, runs)
      const tasks = tasksFor(tm, a)
      const handle = await callAsTask(tm, tasks, 'deploy', { id: 'd1' }, 'mcp_t_6')
      const waiting = await tasks.get({ taskId: handle.taskId }, OWNER)
      expect(Object.keys(waiting.inputRequests!)).toEqual(['input-1'])
      await tasks.update({ taskId: handle.taskId, inputResponses: { 'input-1': { action: 'accept', content: { answer: 'staging' } } } }, OWNER)
      await tasks.idle()
      const done = await tasks.get({ taskId: handle.taskId }, OWNER)
      valid('GetTaskResult', done)
      expect(done).toMatchObject({ status: 'completed', result: { structuredContent: { deployedTo: 'staging' } } })
      expect(runs).toEqual(['deploy:d1:staging'])
    })

    it('two managers on one store: the task made on one is answered on the other, and the call runs once', async () => {
      const { a, b } = await pair()
      const runs: string[] = []
      const tmA = manager(a, runs)
      const tmB = manager(b, runs)
      const tasksA = tasksFor(tmA, a)
      const tasksB = tasksFor(tmB, b)
      const handle = await callAsTask(tmA, tasksA, 'delete_file', { path: 'shared.txt' }, 'mcp_t_7')
      expect((await tasksB.get({ taskId: handle.taskId }, OWNER)).status).toBe('input_required')
      // both instances get the answer at once (a client retry through a load balancer)
      const update = { taskId: handle.taskId, inputResponses: { 'confirm-1': ACCEPT } }
      await Promise.all([tasksA.update(update, OWNER), tasksB.update(update, OWNER)])
      await Promise.all([tasksA.idle(), tasksB.idle()])
      const done = await tasksA.get({ taskId: handle.taskId }, OWNER)
      valid('GetTaskResult', done)
      expect(done).toMatchObject({ status: 'completed', result: { structuredContent: { deleted: 'shared.txt' } } })
      expect(runs).toEqual(['delete:shared.txt'])
    })

    it('a run whose process died: the sweep fails the task as outcome unknown, and the call is never run again', async () => {
      const { a, b, clock } = await pair()
      const runs: string[] = []
      const tm = manager(a, runs)
      const tasks = tasksFor(tm, a)
      const handle = await callAsTask(tm, tasks, 'delete_file', { path: 'boom' }, 'mcp_t_8')
      const parkedId = (await tasksOf(a)!.get(handle.taskId, OWNER))!.parkedId!
      // the "dead process" (on the second handle): it took the answer and claimed the call, then stopped
      await tasksOf(b)!.respond(handle.taskId, OWNER, { 'confirm-1': ACCEPT }, 60_000)
      expect((await b.claim(parkedId, { kind: 'confirmation', leaseMs: 60_000 })).ok).toBe(true)
      expect((await tasks.sweep()).failed).toEqual([])
      expect((await tasks.get({ taskId: handle.taskId }, OWNER)).status).toBe('working')
      clock.t += 60_000
      const swept = await tasks.sweep()
      expect(swept.failed).toHaveLength(1)
      const failed = await tasks.get({ taskId: handle.taskId }, OWNER)
      valid('GetTaskResult', failed)
      expect(failed).toMatchObject({ status: 'failed', error: { code: -32603, data: { toolwire: { status: 'outcome_unknown' } } } })
      expect(failed.statusMessage).toMatch(/^outcome_unknown/)
      // nothing runs it again: not an answer, not a confirmation, not another sweep
      await tasks.update({ taskId: handle.taskId, inputResponses: { 'confirm-1': ACCEPT } }, OWNER)
      await tasks.idle()
      expect((await tm.confirm(parkedId, { approve: true })).status).toBe('refused')
      expect((await tasks.sweep()).failed).toEqual([])
      expect(runs).toEqual([])
    })

    it('a confirmed call that parks again asks anew under a new key (input-2); keys are never reused', async () => {
      const { a } = await pair()
      const runs: string[] = []
      const tm = manager(a, runs)
      tm.register({
        name: 'migrate',
        inputSchema: { type: 'object' },
        needsConfirmation: true,
        run: () => pending({ id: 'req-migrate', kind: 'input', prompt: 'Which database?' }),
        resume: (answer: unknown) => {
          runs.push(`migrate:${String(answer)}`)
          return { migrated: answer }
        },
      })
      const tasks = tasksFor(tm, a)
      const handle = await callAsTask(tm, tasks, 'migrate', {}, 'mcp_t_10')
      await tasks.update({ taskId: handle.taskId, inputResponses: { 'confirm-1': ACCEPT } }, OWNER)
      await tasks.idle()
      const asking = await tasks.get({ taskId: handle.taskId }, OWNER)
      valid('GetTaskResult', asking)
      expect(asking.status).toBe('input_required')
      expect(Object.keys(asking.inputRequests!)).toEqual(['input-2'])
      // the old key is not outstanding any more: answering it again does nothing
      await tasks.update({ taskId: handle.taskId, inputResponses: { 'confirm-1': ACCEPT } }, OWNER)
      await tasks.idle()
      expect((await tasks.get({ taskId: handle.taskId }, OWNER)).status).toBe('input_required')
      await tasks.update({ taskId: handle.taskId, inputResponses: { 'input-2': { action: 'accept', content: { answer: 'orders' } } } }, OWNER)
      await tasks.idle()
      expect(await tasks.get({ taskId: handle.taskId }, OWNER)).toMatchObject({ status: 'completed', result: { structuredContent: { migrated: 'orders' } } })
      expect(runs).toEqual(['migrate:orders'])
    })

    it('a sensitive field never reaches the task row: not in its input request, not in its result', async () => {
      const { a } = await pair()
      const runs: string[] = []
      const tm = manager(a, runs)
      tm.register({
        name: 'pay',
        inputSchema: { type: 'object' },
        needsConfirmation: true,
        sensitive: ['cardToken'],
        run: (input: { id: string; cardToken: string }) => {
          runs.push(`pay:${input.cardToken}`)
          return { paid: input.id, cardToken: input.cardToken }
        },
      })
      const tasks = tasksFor(tm, a)
      const handle = await callAsTask(tm, tasks, 'pay', { id: 'p1', cardToken: 'tok_SECRET_42' }, 'mcp_t_12')
      await tasks.update({ taskId: handle.taskId, inputResponses: { 'confirm-1': ACCEPT } }, OWNER)
      await tasks.idle()
      const done = await tasks.get({ taskId: handle.taskId }, OWNER)
      expect(done).toMatchObject({ status: 'completed', result: { structuredContent: { paid: 'p1' } } })
      expect(runs).toEqual(['pay:tok_SECRET_42'])
      expect(JSON.stringify(done)).not.toContain('tok_SECRET_42')
      expect(JSON.stringify(await tasksOf(a)!.get(handle.taskId, OWNER))).not.toContain('tok_SECRET_42')
    })

    it('tasks/cancel of a task running here interrupts its run (cooperative): the task ends cancelled', async () => {
      const { a } = await pair()
      const runs: string[] = []
      const tm = manager(a, runs)
      const started = gate()
      tm.register({
        name: 'slow_delete',
        inputSchema: { type: 'object' },
        needsConfirmation: true,
        run: async (_input: unknown, ctx: ToolContext) => {
          runs.push('slow:start')
          started.release()
          await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve, { once: true }))
          return 'stopped'
        },
      })
      const tasks = tasksFor(tm, a)
      const handle = await callAsTask(tm, tasks, 'slow_delete', {}, 'mcp_t_11')
      await tasks.update({ taskId: handle.taskId, inputResponses: { 'confirm-1': ACCEPT } }, OWNER)
      await started.promise
      expect((await tasks.get({ taskId: handle.taskId }, OWNER)).status).toBe('working')
      expect(await tasks.cancel({ taskId: handle.taskId }, OWNER)).toEqual({ resultType: 'complete' })
      await tasks.idle()
      const got = await tasks.get({ taskId: handle.taskId }, OWNER)
      valid('GetTaskResult', got)
      expect(got.status).toBe('cancelled')
      expect(runs).toEqual(['slow:start'])
    })

    it('longRunning: true: the task is committed before the call starts; the call runs detached, once, and completes the task', async () => {
      const { a, b } = await pair()
      const runs: string[] = []
      const tm = manager(a, runs)
      const release = gate()
      tm.register({
        name: 'build',
        inputSchema: { type: 'object' },
        longRunning: true,
        run: async () => {
          runs.push('build:start')
          await release.promise
          return { built: true }
        },
      })
      const tasks = tasksFor(tm, a)
      const rule = longRunningOf(tm, 'build')
      expect(rule).toBe(true)
      const out = await tasks.runLong({ tool: 'build', callId: 'mcp_t_13', owner: OWNER }, rule!, () => tm.call('build', {}, { callId: 'mcp_t_13' }))
      expect('task' in out).toBe(true)
      const handle = (out as { task: CreateTaskResult }).task
      // committed: the other handle on the store finds it
      expect((await tasksOf(b)!.get(handle.taskId, OWNER))?.status).toBe('working')
      valid('CreateTaskResult', handle)
      expect(handle).toMatchObject({ resultType: 'task', status: 'working', _meta: { 'toolwire/callId': 'mcp_t_13' } })
      const working = await tasks.get({ taskId: handle.taskId }, OWNER)
      valid('GetTaskResult', working)
      expect(working.status).toBe('working')
      release.release()
      await tasks.idle()
      const done = await tasks.get({ taskId: handle.taskId }, OWNER)
      valid('GetTaskResult', done)
      expect(done).toMatchObject({ status: 'completed', result: { structuredContent: { built: true } } })
      expect(runs).toEqual(['build:start'])
    })

    it('longRunning: { afterMs }: a call that finishes in time answers its own result; one that does not becomes a task', async () => {
      const { a } = await pair()
      const runs: string[] = []
      const tm = manager(a, runs)
      const release = gate()
      tm.register({ name: 'quick', inputSchema: { type: 'object' }, longRunning: { afterMs: 2 ** 31 - 1 }, run: () => 'fast' })
      tm.register({
        name: 'slow',
        inputSchema: { type: 'object' },
        longRunning: { afterMs: 0 },
        run: async () => {
          await release.promise
          runs.push('slow:done')
          return 'late'
        },
      })
      const tasks = tasksFor(tm, a)
      const quick = await tasks.runLong({ tool: 'quick', callId: 'mcp_t_14', owner: OWNER }, longRunningOf(tm, 'quick')!, () => tm.call('quick', {}, { callId: 'mcp_t_14' }))
      expect(quick).toEqual({ view: expect.objectContaining({ status: 'ok', data: 'fast' }) })
      const slow = await tasks.runLong({ tool: 'slow', callId: 'mcp_t_15', owner: OWNER }, longRunningOf(tm, 'slow')!, () => tm.call('slow', {}, { callId: 'mcp_t_15' }))
      const handle = (slow as { task: CreateTaskResult }).task
      valid('CreateTaskResult', handle)
      expect(handle.status).toBe('working')
      release.release()
      await tasks.idle()
      expect(await tasks.get({ taskId: handle.taskId }, OWNER)).toMatchObject({ status: 'completed', result: { isError: false, content: [{ type: 'text', text: 'late' }] } })
      expect(runs).toEqual(['slow:done'])
    })

    it('longRunning whose process died mid-run: the sweep (on another instance) fails the task; the run finishing later changes nothing', async () => {
      const { a, b, clock } = await pair()
      const runs: string[] = []
      const tm = manager(a, runs)
      const release = gate()
      tm.register({ name: 'hang', inputSchema: { type: 'object' }, longRunning: true, run: async () => { await release.promise; runs.push('hang:done'); return 1 } })
      const tasks = tasksFor(tm, a)
      const out = await tasks.runLong({ tool: 'hang', callId: 'mcp_t_16', owner: OWNER }, true, () => tm.call('hang', {}, { callId: 'mcp_t_16' }))
      const handle = (out as { task: CreateTaskResult }).task
      const other = tasksFor(manager(b, runs), b)
      clock.t += 60_000 // the lease (tasksFor: 60 s) ran out: the instance running it is taken for dead
      expect((await other.sweep()).failed).toHaveLength(1)
      const failed = await other.get({ taskId: handle.taskId }, OWNER)
      valid('GetTaskResult', failed)
      expect(failed).toMatchObject({ status: 'failed', error: { data: { toolwire: { status: 'outcome_unknown' } } } })
      release.release()
      await tasks.idle()
      expect((await tasks.get({ taskId: handle.taskId }, OWNER)).status).toBe('failed')
    })

    it.runIf(kind.durable)('a task survives a restart: a new store handle and manager find it and finish it', async () => {
      const { a, place, clock } = await pair()
      const runs: string[] = []
      const tm = manager(a, runs)
      const handle = await callAsTask(tm, tasksFor(tm, a), 'delete_file', { path: 'later.txt' }, 'mcp_t_9')
      await a.close()
      const reopened = await kind.open(place, clock)
      opened.push(reopened)
      const tm2 = manager(reopened, runs)
      const tasks2 = tasksFor(tm2, reopened)
      expect((await tasks2.get({ taskId: handle.taskId }, OWNER)).status).toBe('input_required')
      await tasks2.update({ taskId: handle.taskId, inputResponses: { 'confirm-1': ACCEPT } }, OWNER)
      await tasks2.idle()
      expect(await tasks2.get({ taskId: handle.taskId }, OWNER)).toMatchObject({ status: 'completed', result: { structuredContent: { deleted: 'later.txt' } } })
      expect(runs).toEqual(['delete:later.txt'])
    })
  })
}
