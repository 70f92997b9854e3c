/**
 * The fuzzing harness (issue 11): fast-check properties over hostile tools, inputs,
 * schemas, wire documents and MCP frames. Every case runs in a child process (see
 * runner.ts) so that a crash, a hang or a runaway allocation is observed, not suffered.
 *
 * Budget: a fixed number of runs per property (FUZZ_RUNS scales it), each property also
 * stops running cases after 6 s (once it ran 5), so the whole file stays well under two
 * minutes on a loaded two-core CI machine. A failure prints fast-check's seed and minimal
 * counterexample; the summary printed at the end gives the properties and case counts.
 *
 *   npm run fuzz                              the CI budget
 *   FUZZ_RUNS=5 npm run fuzz                  a deeper run
 *   FUZZ_SEED=123 npm run fuzz                the cases of a printed seed again
 *   FUZZ_STRICT=1 npm run fuzz                known open bugs (KNOWN) fail too
 *   FUZZ_REPLAY='{"op":"call","c":…}' npm run fuzz   one counterexample, its report printed
 */
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { callCaseArb, decodeCaseArb, mcpCaseArb, ordinaryCaseArb, schemaCaseArb, secretCaseArb } from './arbitraries.js'
import type { Op, Report } from './cases.js'
import { bundle, CaseRunner, confirmBlock, removeBundle } from './pool.js'

const SCALE = Number(process.env.FUZZ_RUNS ?? '1')
/** One seed for every property: properties over the same arbitrary see the same cases, run once (see `reports`). */
const SEED = process.env.FUZZ_SEED === undefined ? Math.floor(Math.random() * 2 ** 31) : Number(process.env.FUZZ_SEED)
const TIME_LIMIT_MS = 6_000 * SCALE
/** Cases run at least this many times per property, even past the time budget. */
const MIN_RUNS = 5
const STRICT = process.env.FUZZ_STRICT === '1'

let script: string | undefined
let runner: CaseRunner
let alone: CaseRunner
const tally: { property: string; runs: number; failed: boolean; known: Map<string, number> }[] = []
/** Reports by case: the properties that judge the same case from different angles run it once. */
const reports = new Map<string, Report>()
const confirmed = new Map<string, Report>()

beforeAll(async () => {
  script = await bundle('runner.ts')
  runner = new CaseRunner(script, { caseTimeoutMs: 8_000 })
  alone = new CaseRunner(script, { caseTimeoutMs: 8_000 })
})

afterAll(() => {
  runner?.close()
  alone?.close()
  if (script !== undefined) removeBundle(script)
  const runs = tally.reduce((n, t) => n + t.runs, 0)
  const executed = (runner?.cases ?? 0) + (alone?.cases ?? 0)
  const lines = tally.map((t) => {
    const known = [...t.known].map(([bug, n]) => `\n       known open bug seen in ${n} case(s): ${bug}`).join('')
    return `  ${t.failed ? 'FAIL' : 'ok  '} ${t.property}: ${t.runs} generated cases${known}`
  })
  console.log(
    `fuzz (seed ${SEED}${STRICT ? ', strict' : ''}): ${tally.length} properties, ${runs} generated cases checked, ` +
      `${executed} cases executed in child processes (shared between properties, shrinking and block re-runs included), ` +
      `${runner?.deaths ?? 0} child process deaths\n${lines.join('\n')}`,
  )
})

/**
 * Known limits the harness can reach. A violation that matches one is counted and printed,
 * not failed, so that the property stays active and still fails on anything else;
 * FUZZ_STRICT=1 fails on these too. Remove an entry once its fix lands.
 */
interface KnownBug {
  readonly bug: string
  readonly matches: (op: Op, violation: string) => boolean
}
const KNOWN: readonly KnownBug[] = [
  {
    // linear work, not a runaway: the canonical JSON of a result holding a 4 MiB value is an
    // 8 MiB document (the data, and the model text that is its JSON), read and written again
    // by the core: 95-135 ms on this machine (docs/security.md, "What remains"); anything
    // slower than linear still fails
    bug: 'toJSONText of a result holding 4 MiB costs about 100 ms (linear in its size)',
    matches: (op, violation) => {
      const ms = /^block: the event loop was blocked for (\d+) ms/.exec(violation)?.[1]
      return ms !== undefined && Number(ms) <= 300 && JSON.stringify(op).includes('"kb":4096')
    },
  },
]

/** Violations in these categories fail the property. */
function only(violations: readonly string[], categories: readonly string[]): string[] {
  return violations.filter((v) => categories.some((c) => v.startsWith(`${c}:`)))
}

async function reportOf(op: Op, blockCheck: boolean): Promise<Report> {
  const key = JSON.stringify(op)
  let report = reports.get(key)
  if (report === undefined) {
    report = await runner.run(op)
    reports.set(key, report)
  }
  if (!blockCheck) return report
  let checked = confirmed.get(key)
  if (checked === undefined) {
    checked = await confirmBlock(report, alone, op)
    confirmed.set(key, checked)
  }
  return checked
}

async function check<T>(property: string, arb: fc.Arbitrary<T>, toOp: (c: T) => Op, categories: readonly string[], numRuns: number, blockCheck = false): Promise<void> {
  const entry = { property, runs: 0, failed: true, known: new Map<string, number>() }
  tally.push(entry)
  const deadline = Date.now() + TIME_LIMIT_MS
  await fc.assert(
    fc.asyncProperty(arb, async (c) => {
      // past the budget (and the minimum), the remaining runs (and shrinking) stop
      if (entry.runs >= MIN_RUNS && Date.now() > deadline) return
      entry.runs++
      const op = toOp(c)
      const report = await reportOf(op, blockCheck)
      const seen = new Set<string>()
      const broken = only(report.violations, categories).filter((v) => {
        const known = STRICT ? undefined : KNOWN.find((k) => k.matches(op, v))
        if (known !== undefined) seen.add(known.bug)
        return known === undefined
      })
      for (const bug of seen) entry.known.set(bug, (entry.known.get(bug) ?? 0) + 1)
      expect(broken, broken.some((v) => v.startsWith('crash:')) ? report.note : undefined).toEqual([])
    }),
    { numRuns: Math.round(numRuns * SCALE), seed: SEED },
  )
  entry.failed = false
}

/** FUZZ_REPLAY='<op as JSON>' runs one case (a printed counterexample wrapped as { op, c }) and prints its report. */
const REPLAY = process.env.FUZZ_REPLAY

describe.runIf(REPLAY !== undefined)('fuzz: replay', () => {
  it('replays one case', async () => {
    const op = JSON.parse(REPLAY!) as Op
    const report = await runner.run(op)
    console.log(JSON.stringify(report, null, 2))
  }, 90_000)
})

describe.skipIf(REPLAY !== undefined)('fuzz: tm.call / callJson / callMany with hostile tools, inputs and calls', () => {
  it('every call settles exactly once, never throws or rejects, releases its slot and in-flight entry; the process survives', async () => {
    await check('calls settle once, no leak, process survives', callCaseArb, (c) => ({ op: 'call', c }), ['settle', 'leak', 'crash', 'setup', 'harness'], 150)
  }, 90_000)

  it('every view has a status, is deeply frozen, and is unchanged by JSON and structuredClone', async () => {
    await check('views well-formed', ordinaryCaseArb, (c) => ({ op: 'call', c }), ['view'], 150)
  }, 90_000)

  it('every view renders as JSON text, model text and on every wire without throwing; records and evidence serialize', async () => {
    await check('every view renders on every output', ordinaryCaseArb, (c) => ({ op: 'call', c }), ['render'], 150)
  }, 90_000)

  it('no secret (sensitive input fields, thrown values) reaches a view, the JSON text, the model text, a wire, a record or evidence', async () => {
    await check('no secret in any output', secretCaseArb, (c) => ({ op: 'call', c }), ['secret'], 150)
  }, 90_000)

  it('a JSON or structuredClone copy of a view renders byte-identically to the live view on every wire', async () => {
    await check('copied views render identically', ordinaryCaseArb, (c) => ({ op: 'call', c }), ['copy'], 150)
  }, 90_000)

  it('no call blocks the event loop for more than 100 ms', async () => {
    await check('event loop never blocked > 100 ms (calls)', callCaseArb, (c) => ({ op: 'call', c }), ['block'], 150, true)
  }, 90_000)
})

describe.skipIf(REPLAY !== undefined)('fuzz: hostile schemas', () => {
  it('registration rejects or bounds any schema; validation never crashes the process, hangs, or runs away with memory', async () => {
    await check('schemas: no crash or hang', schemaCaseArb, (c) => ({ op: 'schema', c }), ['settle', 'crash', 'harness'], 80)
  }, 90_000)

  it('no issue message quotes an input value, on either validator route', async () => {
    await check('schemas: no echoed input value', schemaCaseArb, (c) => ({ op: 'schema', c }), ['secret', 'render'], 80)
  }, 90_000)

  it('a huge invalid input gives a capped issue list and a bounded model message', async () => {
    await check('schemas: bounded issue lists', schemaCaseArb, (c) => ({ op: 'schema', c }), ['size'], 80)
  }, 90_000)

  it('no schema or input blocks the event loop for more than 100 ms (no catastrophic backtracking)', async () => {
    await check('event loop never blocked > 100 ms (schemas)', schemaCaseArb, (c) => ({ op: 'schema', c }), ['block'], 80, true)
  }, 90_000)
})

describe.skipIf(REPLAY !== undefined)('fuzz: the wire decoder', () => {
  it('ToolResult.fromJSON throws only ToolwireWireError; accepted documents round-trip byte-identically; the process survives and the loop is not blocked', async () => {
    await check('decoder: only ToolwireWireError, byte-identical round trip', decodeCaseArb, (c) => ({ op: 'decode', c }), ['decode', 'crash', 'block', 'harness'], 300, true)
  }, 90_000)
})

describe.skipIf(REPLAY !== undefined)('fuzz: the MCP server on generated frames', () => {
  it('every request gets exactly one well-formed response, bad tools/call params get -32602, no secret leaves, the server survives', async () => {
    await check('MCP frames: one well-formed response each, server survives', mcpCaseArb, (c) => ({ op: 'mcp', c }), ['mcp', 'secret', 'crash', 'block', 'harness'], 60, true)
  }, 90_000)
})
