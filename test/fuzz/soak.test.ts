/**
 * The soak test (issue 11): 100,000 mixed calls with concurrency limits, timeouts,
 * cancels, signals and hostile tools, in a child process run with --expose-gc (see
 * soak.ts). It prints its figures; it fails when a call was lost, settled twice, is
 * still in flight at the end, a limited tool ran more bodies at once than its limit,
 * or a hostile tool made the process crash.
 */
import { execFile } from 'node:child_process'
import { beforeAll, describe, expect, it } from 'vitest'
import { bundle, removeBundle } from './pool.js'

interface Figures {
  readonly calls: number
  readonly issued: number
  readonly settled: number
  readonly lost: number
  readonly settledTwice: number
  readonly inFlight: number
  readonly maxRunning: number
  readonly limit: number
  readonly forgedCancels: number
  readonly wronglyCancelled: number
  readonly crashes: number
  readonly crashKinds: readonly string[]
  readonly heapGrowthMiB: number
  readonly gc: boolean
  readonly elapsedMs: number
  readonly finished: boolean
  readonly statuses: Record<string, number>
}

let figures: Figures

beforeAll(async () => {
  const script = await bundle('soak.ts')
  const stdout = await new Promise<string>((resolve, reject) => {
    execFile(process.execPath, ['--expose-gc', script], { timeout: 120_000, maxBuffer: 1 << 20 }, (error, out, err) => {
      if (error) reject(new Error(`the soak process failed: ${error.message}\n${err.slice(-2000)}`))
      else resolve(out)
    })
  }).finally(() => removeBundle(script))
  figures = JSON.parse(stdout.trim().split('\n').pop()!) as Figures
  console.log(`soak: ${JSON.stringify(figures)}`)
}, 180_000)

describe('soak: 100,000 mixed calls', () => {
  it('every call settles exactly once: nothing lost, nothing settled twice, the run finished', () => {
    expect(figures.gc, 'run with --expose-gc').toBe(true)
    expect(figures.issued).toBe(figures.calls)
    expect({ lost: figures.lost, settledTwice: figures.settledTwice, finished: figures.finished }).toEqual({ lost: 0, settledTwice: 0, finished: true })
  })

  it('nothing is in flight at the end', () => {
    expect(figures.inFlight).toBe(0)
  })

  it('no hostile tool crashed the process (no unhandled rejection or uncaught exception)', () => {
    expect(figures.crashKinds).toEqual([])
    expect(figures.crashes).toBe(0)
  })

  it('tm.cancel of an id that only looks like a live generated id (0x…, leading zeros, 1.0) stops nothing', () => {
    expect({ forgedCancels: figures.forgedCancels, wronglyCancelled: figures.wronglyCancelled }).toEqual({ forgedCancels: 0, wronglyCancelled: 0 })
  })

  it('a concurrency limit bounds the bodies running at once, after timeouts and cancels too', () => {
    expect(figures.maxRunning).toBeLessThanOrEqual(figures.limit)
  })
})
