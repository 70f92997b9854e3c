/**
 * The soak run (issue 11): 100,000 mixed calls (call, callJson, callMany) with
 * concurrency limits, timeouts, cancels, abort signals and hostile tools, driven 512 at
 * a time. Bundled from src/ by test/fuzz/pool.ts and run with `node --expose-gc`; prints
 * one JSON line of figures:
 *
 * - issued / settled / lost (issued − settled; must be 0) / settledTwice (must be 0);
 * - inFlight: the manager's in-flight gauge summed over tools once everything settled (must be 0);
 * - maxRunning / limit: the most bodies of the limited tool running at once (a body whose
 *   call timed out or was cancelled runs until it notices its signal);
 * - forgedCancels / wronglyCancelled: `tm.cancel` with ids that look like a live generated id
 *   (`prefix0x1f`, `prefix01f`...) must stop nothing (both must be 0);
 * - crashes: unhandled rejections and uncaught exceptions (each would end a production process);
 * - heapGrowthMiB: heap used after a full GC at the end minus after a full GC before the run.
 */
import { ToolManager, type CallResult, type ToolContext } from '../../src/index.js'

const TOTAL = Number(process.env.SOAK_CALLS ?? 100_000)
const WINDOW = 512
const LIMIT = 8
/** A call not settled this long after it was made counts as lost (the longest timeout in the run is 5 ms). */
const LOST_AFTER_MS = 2000

let crashes = 0
const crashKinds = new Set<string>()
process.on('unhandledRejection', (reason) => {
  crashes++
  crashKinds.add(`unhandled rejection: ${reason instanceof Error ? reason.message.slice(0, 80) : typeof reason}`)
})
process.on('uncaughtException', (error) => {
  crashes++
  crashKinds.add(`uncaught exception: ${error.message.slice(0, 80)}`)
})

// a small deterministic generator: the run is the same every time
let state = 0x9e3779b9
function rand(n: number): number {
  state ^= state << 13
  state ^= state >>> 17
  state ^= state << 5
  return (state >>> 0) % n
}

const gc = (globalThis as { gc?: () => void }).gc
const heapAfterGc = (): number => {
  gc?.()
  gc?.()
  return process.memoryUsage().heapUsed / 2 ** 20
}

/** Hostile values a tool throws or rejects with. */
function hostile(i: number): unknown {
  switch (i % 7) {
    case 0: {
      const { proxy, revoke } = Proxy.revocable({}, {})
      revoke()
      return proxy
    }
    case 1:
      return Object.defineProperty(new Error('x'), 'message', {
        get() {
          throw new Error('getter')
        },
      })
    case 2:
      return Object.create(null) as object
    case 3:
      return {
        get kind() {
          throw new Error('kind')
        },
      }
    case 4:
      return new Proxy({}, { get: () => { throw new Error('trap') }, getPrototypeOf: () => { throw new Error('trap') } })
    case 5:
      return 10n
    default:
      return new Error('plain')
  }
}

const tm = new ToolManager({ development: false })
let running = 0
let maxRunning = 0
tm.register({ name: 'fast', inputSchema: { type: 'object' }, run: (input: unknown) => input })
tm.register({ name: 'async', inputSchema: { type: 'object' }, run: async () => ({ ok: true }) })
tm.register({
  name: 'limited',
  inputSchema: { type: 'object' },
  concurrency: { limit: LIMIT, queue: 10_000 },
  run: (_input: unknown, ctx: ToolContext) => {
    running++
    if (running > maxRunning) maxRunning = running
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        running--
        resolve('done')
      }, rand(3))
      ctx.signal.addEventListener('abort', () => {
        clearTimeout(timer)
        // cleanup takes a moment after the signal, as real bodies do
        setTimeout(() => {
          running--
          reject(ctx.signal.reason)
        }, 1)
      })
    })
  },
})
tm.register({
  name: 'hang',
  inputSchema: { type: 'object' },
  run: () => new Promise(() => undefined),
})
tm.register({
  name: 'throws',
  inputSchema: { type: 'object' },
  run: (input: { i?: number }) => {
    throw hostile(input.i ?? 0)
  },
})
tm.register({
  name: 'rejects',
  inputSchema: { type: 'object' },
  run: async (input: { i?: number }) => {
    await null
    throw hostile(input.i ?? 0)
  },
})
tm.register({
  name: 'returns',
  inputSchema: { type: 'object' },
  run: (input: { i?: number }) => {
    const i = input.i ?? 0
    if (i % 3 === 0) return { output: hostile(i), isError: hostile(i + 1) }
    if (i % 3 === 1) return { n: 1n }
    const o: Record<string, unknown> = {}
    o.self = o
    return o
  },
})
tm.register({
  name: 'guarded',
  inputSchema: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] },
  permission: ({ input }) => (input as { n?: number }).n !== 13,
  run: (input: { n: number }) => input.n * 2,
})

tm.register({
  name: 'victim',
  inputSchema: { type: 'object' },
  run: () => new Promise((resolve) => setTimeout(() => resolve('done'), 1 + rand(3))),
})

const TOOLS = ['fast', 'async', 'limited', 'limited', 'limited', 'hang', 'throws', 'rejects', 'returns', 'guarded', 'victim'] as const

/** The id of the call started last (call_start is emitted synchronously by tm.call). */
let lastStarted = ''
tm.on('call_start', (e) => {
  lastStarted = e.callId
})

/** Ids that look like a live generated id without being it: none may cancel anything. */
function forgedIds(id: string): string[] {
  const cut = id.lastIndexOf('_') + 1
  const prefix = id.slice(0, cut)
  const seq = id.slice(cut)
  const n = Number(seq)
  if (cut === 0 || !Number.isInteger(n)) return []
  return [`${prefix}0x${n.toString(16)}`, `${prefix}0${seq}`, `${prefix}${seq}.0`, `${prefix}+${seq}`, `${prefix} ${seq}`, `${prefix}${n + 4096}`]
}
let forgedCancels = 0
let wronglyCancelled = 0

let issued = 0
let settled = 0
let settledTwice = 0
const statuses = new Map<string, number>()

function record(view: CallResult | undefined): void {
  const status = view === undefined ? 'undefined' : String(view.status)
  statuses.set(status, (statuses.get(status) ?? 0) + 1)
}

/** One call: a tool, a way of calling, and a way of ending it. */
function oneCall(i: number): Promise<void> {
  const tool = TOOLS[rand(TOOLS.length)]!
  const input = tool === 'guarded' ? (rand(4) === 0 ? { n: 'x' } : { n: rand(20) }) : { i }
  // half the calls use generated ids (the manager's fast path), half the caller's
  const generated = tool === 'victim' || rand(2) === 0
  let callId = `soak-${i}`
  const ending = tool === 'victim' ? 0 : tool === 'hang' ? 1 + rand(3) : rand(8)
  const options: { callId?: string; timeoutMs?: number; signal?: AbortSignal } = generated ? {} : { callId }
  let ac: AbortController | undefined
  if (ending === 1) options.timeoutMs = 1 + rand(5)
  if (ending === 2 || ending === 4) {
    ac = new AbortController()
    options.signal = ac.signal
    if (ending === 4) ac.abort()
    else setTimeout(() => ac!.abort(), rand(4))
  }
  const how = tool === 'victim' ? 2 : rand(10)
  issued++
  let seen = 0
  const done = (): void => {
    if (++seen === 1) settled++
    else settledTwice++
  }
  const p =
    how === 0
      ? tm.callMany([{ name: tool, input, options }]).then((views) => views[0])
      : how === 1
        ? tm.callJson(tool, JSON.stringify(input), options)
        : tm.call(tool, input, options)
  if (generated) callId = lastStarted
  if (ending === 3) setTimeout(() => tm.cancel(callId), rand(4))
  if (tool === 'victim') for (const forged of forgedIds(callId)) if (tm.cancel(forged)) forgedCancels++
  return p.then((view) => {
    if (tool === 'victim' && view?.status === 'cancelled') wronglyCancelled++
    record(view)
    done()
  })
}

async function main(): Promise<void> {
  // warm up, then measure the heap
  for (let i = 0; i < 2000; i++) await tm.call('fast', { i })
  const heapBefore = heapAfterGc()
  const started = performance.now()
  let next = 0
  // a lost call holds its worker for LOST_AFTER_MS at most, so the run still issues every call
  const worker = async (): Promise<void> => {
    while (next < TOTAL) {
      let timer: ReturnType<typeof setTimeout> | undefined
      await Promise.race([oneCall(next++), new Promise<void>((r) => (timer = setTimeout(r, LOST_AFTER_MS)))])
      clearTimeout(timer)
    }
  }
  const deadline = new Promise<'deadline'>((r) => setTimeout(() => r('deadline'), 45_000))
  const outcome = await Promise.race([Promise.all(Array.from({ length: WINDOW }, worker)), deadline])
  const elapsedMs = performance.now() - started
  // late timers, aborts and body settlements
  await new Promise((r) => setTimeout(r, 50))
  const inFlight = tm.metrics().tools.reduce((n, t) => n + t.in_flight, 0)
  const heapAfter = heapAfterGc()
  const figures = {
    calls: TOTAL,
    issued,
    settled,
    lost: issued - settled,
    settledTwice,
    inFlight,
    maxRunning,
    limit: LIMIT,
    forgedCancels,
    wronglyCancelled,
    crashes,
    crashKinds: [...crashKinds].slice(0, 10),
    heapBeforeMiB: Math.round(heapBefore * 10) / 10,
    heapAfterMiB: Math.round(heapAfter * 10) / 10,
    heapGrowthMiB: Math.round((heapAfter - heapBefore) * 10) / 10,
    gc: gc !== undefined,
    elapsedMs: Math.round(elapsedMs),
    finished: outcome !== 'deadline',
    statuses: Object.fromEntries([...statuses].sort()),
  }
  process.stdout.write(`${JSON.stringify(figures)}\n`)
  process.exit(0)
}

void main()
