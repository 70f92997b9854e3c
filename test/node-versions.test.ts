// The tooling that runs the suite and the benchmark on each supported Node.js major.
import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { SUPPORTED_NODE, nodeSupport } from '../src/core/engine.js'
// @ts-expect-error: plain .mjs scripts, no declarations
import { compare } from '../bench/versions.mjs'
// @ts-expect-error: plain .mjs scripts, no declarations
import { formatTargets, targetsOf } from '../bench/targets.mjs'
// @ts-expect-error: plain .mjs scripts, no declarations
import { MAJORS, PINNED, nodeFor, runEnv, root } from '../scripts/node-matrix.mjs'

interface Pin {
  version: string
  integrity: string
}

describe('scripts/node-matrix.mjs', () => {
  it('pins one build for each supported major, and each is supported', () => {
    expect(MAJORS).toEqual([20, 22, 24])
    for (const [major, pin] of Object.entries(PINNED as Record<string, Pin>)) {
      expect(pin.version.split('.')[0]).toBe(major)
      expect(nodeSupport(pin.version)).toBe('supported')
      expect(pin.integrity).toMatch(/^sha512-[A-Za-z0-9+/]{86}==$/)
    }
    expect(SUPPORTED_NODE.split(' || ').map((r) => Number(r.slice(1).split('.')[0]))).toEqual(MAJORS)
  })

  it("uses this machine's node for its own major", () => {
    const own = Number(process.versions.node.split('.')[0])
    expect(nodeFor(own)).toEqual({ major: own, bin: process.execPath, version: process.version, v8: process.versions.v8, own: true })
  })

  // The SQLite store's cases run on every major: better-sqlite3 compiled for each other one, loaded
  // in the matrix's runs (and the processes they start) through the same `import 'better-sqlite3'`.
  // Checked from the Node.js that installed it (a matrix run on another major is one of those runs).
  const own = Number(process.versions.node.split('.')[0])
  const inMatrixRun = process.env.TOOLWIRE_SQLITE_ADDON !== undefined
  for (const major of MAJORS.filter((m: number) => m !== own)) {
    it.skipIf(inMatrixRun)(`loads better-sqlite3 on Node.js ${major} in a matrix run, and not without it`, () => {
      if (!existsSync(join(root, '.cache', `node-${major}`, 'bin', 'node'))) {
        const reason = `Node.js ${major} is not installed in .cache/ (npm run test:node-matrix -- --install-only)`
        if (process.env.CI === 'true') throw new Error(`${reason}; CI=true requires it`)
        console.warn(`SKIP: ${reason}`)
        return
      }
      const node = nodeFor(major) as { bin: string; sqlite: string | Error }
      expect(node.sqlite).toBeTypeOf('string')
      const script = "const { default: D } = await import('better-sqlite3'); const db = new D(':memory:'); console.log(db.prepare('select 6 * 7 as n').get().n)"
      const open = (env: NodeJS.ProcessEnv) => spawnSync(node.bin, ['--input-type=module', '-e', script], { cwd: root, env, encoding: 'utf8' })
      // a process the run starts inherits the preload: `node` by name, another process's child
      const matrix = open(runEnv(node) as NodeJS.ProcessEnv)
      expect({ out: matrix.stdout.trim(), err: matrix.stderr }).toEqual({ out: '42', err: '' })
      const { NODE_OPTIONS: _preload, TOOLWIRE_SQLITE_ADDON: _addon, ...plain } = process.env
      expect(open(plain).stderr).toContain('NODE_MODULE_VERSION')
    }, 300_000)
  }
})

describe('bench/versions.mjs compare', () => {
  const run = (callJson: number, ratio: number, heap: number) => ({
    groups: [
      {
        tables: [
          {
            key: 'single',
            baselines: [{ role: 'ajv', label: 'ajv' }],
            rows: [
              { name: 'hand-written', role: 'ajv', status: 'ok', median: callJson / ratio, ratios: { ajv: 1 } },
              // the median of per-round ratios is what is compared; the ratio of medians only without it
              { name: 'toolwire tm.callJson', role: null, status: 'ok', median: callJson, ratios: { ajv: 99 }, pairedRatios: { ajv: ratio } },
              { name: 'peer that does not validate', role: null, status: 'not-validating' },
            ],
          },
        ],
      },
      { memory: [{ name: 'toolwire views', role: null, status: 'ok', retained: { heapBytesPerResult: heap, externalBytesPerResult: 0, ratioToPlain: heap / 96 } }] },
    ],
  })

  it("puts each version's ratio to the baseline side by side, and each later version's against the first", () => {
    const node = (major: number) => ({ major, version: `v${major}.0.0`, v8: 'x' })
    const { table, markdown } = compare([
      { node: node(20), result: run(2600, 2.6, 240) },
      { node: node(24), result: run(2000, 2.0, 192) },
    ])
    expect(table).toEqual([
      { table: 'single', row: 'toolwire tm.callJson', base: 'ajv', unit: 'ns', ratios: [2.6, 2.0], medians: [2600, 2000], vsFirst: [2.0 / 2.6] },
      { table: 'memory', row: 'toolwire views', base: 'plain', unit: 'B', ratios: [240 / 96, 2], medians: [240, 192], vsFirst: [2 / 2.5] },
    ])
    expect(markdown.split('\n')).toEqual([
      '| table | row | Node 20 × base | Node 24 × base | 24 vs 20 (× base) | Node 20 median | Node 24 median |',
      '|---|---|---:|---:|---:|---:|---:|',
      '| single | toolwire tm.callJson | 2.60× | 2.00× | 0.77× | 2,600 ns | 2,000 ns |',
      '| memory | toolwire views | 2.50× | 2.00× | 0.80× | 240 B | 192 B |',
    ])
  })
})

describe('bench/targets.mjs targetsOf', () => {
  const row = (name: string, family: string, samples: number[], extra: Record<string, unknown> = {}) => ({
    name,
    family,
    role: null,
    status: 'ok',
    validation: 'ok (rejects {"text":1})',
    median: [...samples].sort((a, b) => a - b)[samples.length >> 1],
    samples,
    ...extra,
  })
  const result = {
    groups: [
      {
        group: 1,
        tables: [
          {
            key: 'single',
            rows: [
              row('hand-written + result guarantees (floor)', 'baseline', [1000, 2000, 1000]),
              // per round: 1.4, 1.6, 1.3 -> median 1.4 (the ratio of medians would be 1.6/1.0 = 1.6)
              row('toolwire tm.callJson', 'toolwire', [1400, 3200, 1300]),
              row('toolwire tm.call', 'toolwire', [1600, 3400, 1700]),
              // the fastest validating peer; a faster one that does not validate does not count
              row('ai: jsonSchema + ajv validate', 'ai', [2100, 3300, 1700]),
              row('ai: jsonSchema() without validate', 'ai', [100, 100, 100], { status: 'not-validating' }),
              row('mcp (a): tools/call handler', 'mcp', [9000, 9000, 9000]),
            ],
          },
        ],
      },
      {
        group: 2,
        tables: [
          {
            key: 'batch100',
            rows: [
              // per round against T1's call in the same process: 0.5, 0.4, 0.9 -> median 0.5 (the ratio of medians would be 800/1400)
              row('toolwire tm.callMany', 'toolwire', [700, 800, 900]),
              row('toolwire tm.callJson, one at a time', 'toolwire', [1400, 2000, 1000]),
              // per round: 0.9, 1.0, 1.1 -> median 1.0, printed beside T3 and not judged
              row('hand-written (JSON.parse + ajv)', 'baseline', [900, 1000, 1100]),
              row('hand-written, one at a time', 'baseline', [1000, 1000, 1000]),
            ],
          },
        ],
      },
    ],
  }

  it('gives T1 and T2 as medians of per-round ratios to the floor and to the fastest validating peer, and T3 against T1 in its own process', () => {
    const [t1, t2, t3] = targetsOf(result)
    expect(t1).toMatchObject({ id: 'T1', overFloor: 1.4, peer: 'ai: jsonSchema + ajv validate', met: true })
    expect(t1.peerOverTw).toBeCloseTo(1.3077, 3) // 1.5, 1.03, 1.31
    expect(t2).toMatchObject({ id: 'T2', met: false }) // 1.6, 1.7, 1.7 over the floor
    expect(t2.overFloor).toBeCloseTo(1.7, 5)
    expect(t3).toMatchObject({ id: 'T3', met: true })
    expect(t3.ratio).toBeCloseTo(0.5, 5)
    // the two processes' ratio is shown beside it, not judged
    expect(t3.measured).toContain("group 2's median over group 1's 0.57×")
    expect(t3.measured).toContain("the hand-written path's Promise.all of 100 1.00× its calls one at a time")
    expect(formatTargets([t1, t2, t3]).split('\n').slice(1, 3)).toEqual(['Targets (issue #24)', '| # | target | measured | met? |'])
  })

  it("gives no T3 when group 2 lacks T1's call timed beside tm.callMany", () => {
    const without = { groups: [result.groups[0]!, { group: 2, tables: [{ key: 'batch100', rows: [row('toolwire tm.callMany', 'toolwire', [700, 800, 900])] }] }] }
    expect(targetsOf(without).map((t: { id: string }) => t.id)).toEqual(['T1', 'T2'])
  })
})
