/**
 * The parent side of the fuzzing harness: bundles a child entry from src/ with esbuild
 * (so the child runs the current sources, not a stale dist/), runs cases in that child
 * over IPC, and turns a dead child (signal, exit, hang, runaway memory) into a report.
 */
import { fork, type ChildProcess } from 'node:child_process'
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { build } from 'esbuild'
import type { Op, Report } from './cases.js'

export const repo = join(import.meta.dirname, '..', '..')

/**
 * Bundles `entry` (a file under test/fuzz) with its imports from src/ into
 * node_modules/.cache/toolwire-fuzz/, dependencies external. The native addon (or the
 * wasm fallback's files), its loader and package.json are copied beside it (an addon
 * rebuilt while the harness runs cannot pull the file from under a child), and `import.meta.url` is pinned to the
 * copy's dist/index.js so src/native.ts finds ../binding.cjs as the package does.
 */
export async function bundle(entry: string): Promise<string> {
  const outDir = join(repo, 'node_modules', '.cache', 'toolwire-fuzz', `${entry.replace(/\.ts$/, '')}-${process.pid}`)
  mkdirSync(join(outDir, 'dist'), { recursive: true })
  for (const file of readdirSync(repo)) {
    // the loader and what it may load: the native addon, or (NAPI_RS_FORCE_WASI) the wasm
    // fallback's loader, module and worker scripts
    const loaded = file.endsWith('.node') || file.endsWith('.wasm') || file === 'toolwire.wasi.cjs' || /^wasi-worker.*\.mjs$/.test(file)
    if (file === 'binding.cjs' || file === 'package.json' || loaded) copyFileSync(join(repo, file), join(outDir, file))
  }
  const outfile = join(outDir, 'dist', `${entry.replace(/\.ts$/, '')}.mjs`)
  await build({
    entryPoints: [join(repo, 'test', 'fuzz', entry)],
    outfile,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'esm',
    packages: 'external',
    logLevel: 'warning',
    define: { 'import.meta.url': JSON.stringify(pathToFileURL(join(outDir, 'dist', 'index.js')).href) },
  })
  return outfile
}

/** Removes what `bundle` wrote for `script`. */
export function removeBundle(script: string): void {
  rmSync(dirname(dirname(script)), { recursive: true, force: true })
}

/** Resident memory of a process, in MiB (Linux), or 0 when unknown. */
function rssMiB(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8')
    const m = /VmRSS:\s+(\d+) kB/.exec(status)
    return m ? Number(m[1]) / 1024 : 0
  } catch {
    return 0
  }
}

const PRLIMIT = '/usr/bin/prlimit'
/**
 * Under `npm run test:wasm` (NAPI_RS_FORCE_WASI) the child loads the wasm fallback, whose
 * shared WebAssembly.Memory makes V8 reserve 10 GiB of address space up front (a wasm32
 * memory's 4 GiB plus guard regions: reserved, not used). Under the limit alone it cannot be
 * created and the child exits before it is ready; the limit is raised by that reservation.
 */
const WASM_MEMORY_RESERVATION_BYTES = 10 * 1024 ** 3
const ADDRESS_SPACE_BYTES = 3 * 1024 ** 3 + (process.env.NAPI_RS_FORCE_WASI ? WASM_MEMORY_RESERVATION_BYTES : 0)

export interface RunnerOptions {
  /** A case that has not reported after this long is a hang (the child is killed). */
  readonly caseTimeoutMs?: number
  /** Resident memory above this is a runaway allocation (the child is killed). */
  readonly maxRssMiB?: number
}

/** Runs cases one at a time in a child process, restarting it after it dies. */
export class CaseRunner {
  private child: ChildProcess | undefined
  private ready: Promise<void> | undefined
  private seq = 0
  /** How many cases ran (shrinking included), and how many child processes died. */
  cases = 0
  deaths = 0

  constructor(
    private readonly script: string,
    private readonly options: RunnerOptions = {},
  ) {}

  /** A child started ahead of need, so a crash costs no start-up time. */
  private spare: { child: ChildProcess; ready: Promise<void> } | undefined

  private start(): { child: ChildProcess; ready: Promise<void> } {
    // an address-space limit makes a runaway allocation fail in the child, before the RSS watch or the kernel's OOM killer
    const limit = existsSync(PRLIMIT) ? { execPath: PRLIMIT, execArgv: [`--as=${ADDRESS_SPACE_BYTES}`, process.execPath] } : {}
    const child = fork(this.script, [], { stdio: ['ignore', 'ignore', 'pipe', 'ipc'], serialization: 'advanced', ...limit })
    child.stderr?.resume()
    const ready = new Promise<void>((resolve, reject) => {
      const onMessage = (m: { ready?: boolean }): void => {
        if (m.ready === true) {
          child.off('message', onMessage)
          resolve()
        }
      }
      child.on('message', onMessage)
      child.once('exit', (code, signal) => reject(new Error(`the fuzz runner exited before it was ready (code ${code}, signal ${signal})`)))
    })
    ready.catch(() => undefined)
    return { child, ready }
  }

  private spawn(): Promise<void> {
    const next = this.spare ?? this.start()
    this.spare = this.start()
    this.child = next.child
    this.ready = next.ready
    return this.ready
  }

  /** The cases the current child ran before, newest last (a crash note names them). */
  private history: Op[] = []

  /** Runs one case; a dead or stuck child gives a `crash:` violation. */
  async run(op: Op): Promise<Report> {
    this.cases++
    if (this.child === undefined || this.child.exitCode !== null || this.child.signalCode !== null) {
      this.history = []
      await this.spawn()
    } else await this.ready
    const before = this.history.slice(-3)
    this.history.push(op)
    if (this.history.length > 3) this.history.shift()
    const note = before.length === 0 ? 'the first case of a fresh process' : `the process ran before it: ${before.map((o) => JSON.stringify(o)).join(' | ').slice(0, 3000)}`
    const child = this.child!
    const id = ++this.seq
    const timeoutMs = this.options.caseTimeoutMs ?? 10_000
    const maxRss = this.options.maxRssMiB ?? 1024
    return new Promise<Report>((resolve) => {
      let done = false
      const finish = (report: Report, kill: boolean): void => {
        if (done) return
        done = true
        clearTimeout(timer)
        clearInterval(watch)
        child.off('message', onMessage)
        child.off('exit', onExit)
        if (kill) {
          this.deaths++
          child.kill('SIGKILL')
          this.child = undefined
        }
        resolve(report)
      }
      const onMessage = (m: { id?: number; report?: Report }): void => {
        if (m.id === id && m.report !== undefined) finish(m.report, false)
      }
      const onExit = (code: number | null, signal: NodeJS.Signals | null): void => {
        this.deaths++
        this.child = undefined
        finish({ violations: [`crash: the process died (exit code ${code}, signal ${signal})`], maxGapMs: 0, note }, false)
      }
      const timer = setTimeout(() => finish({ violations: [`crash: the case did not finish within ${timeoutMs} ms (hung or blocked)`], maxGapMs: timeoutMs, note }, true), timeoutMs)
      const watch = setInterval(() => {
        const rss = rssMiB(child.pid!)
        if (rss > maxRss) finish({ violations: [`crash: memory grew without bound (RSS ${Math.round(rss)} MiB > ${maxRss} MiB)`], maxGapMs: 0, note }, true)
      }, 20)
      child.on('message', onMessage)
      child.once('exit', onExit)
      child.send({ id, op })
    })
  }

  close(): void {
    this.child?.kill('SIGKILL')
    this.spare?.child.kill('SIGKILL')
    this.child = undefined
    this.spare = undefined
  }
}

/** The event-loop budget of one case, in ms. */
export const BLOCK_LIMIT_MS = 100

/**
 * Confirms a block a case's report shows: runs the case again alone in another process
 * (once to warm that code path, once measured), and keeps the block only when it happens
 * again: a loaded CI machine or a one-time compilation is not a blocked event loop.
 */
export async function confirmBlock(report: Report, alone: CaseRunner, op: Op): Promise<Report> {
  if (report.maxGapMs <= BLOCK_LIMIT_MS || report.violations.some((v) => v.startsWith('crash:'))) return report
  // a warm-up run, then up to three measured runs alone: a real block (synchronous work in
  // toolwire) shows in every run, a loaded machine's noise (CPU time counts GC threads) rarely
  // three times more
  await alone.run(op)
  let ms = report.maxGapMs
  for (let i = 0; i < 3; i++) {
    const again = await alone.run(op)
    if (again.maxGapMs <= BLOCK_LIMIT_MS) return { ...report, maxGapMs: again.maxGapMs }
    ms = Math.min(ms, again.maxGapMs)
  }
  return { ...report, violations: [...report.violations, `block: the event loop was blocked for ${Math.round(ms)} ms (four times; budget ${BLOCK_LIMIT_MS} ms)`] }
}
