/**
 * The fuzzing harness (issue 11): fast-check properties over hostile tools, inputs,
 * schemas, wire documents and MCP frames. Every case runs in a child process (see
 * runner.ts) so that a crash, a hang or a runaway allocation is observed, not suffered.
 *
 * Budget: a fixed number of runs per property (FUZZ_RUNS scales it), each property also
 * stopped after a time limit, so the whole file stays well under two minutes on a loaded
 * two-core CI machine. A failure prints fast-check's seed and minimal counterexample.
 */
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { callCaseArb, decodeCaseArb, mcpCaseArb, schemaCaseArb, secretCaseArb } from './arbitraries.js'
import type { Op } from './cases.js'
import { bundle, CaseRunner, removeBundle, runWithBlockCheck } from './pool.js'

const SCALE = Number(process.env.FUZZ_RUNS ?? '1')
const SEED = process.env.FUZZ_SEED === undefined ? undefined : Number(process.env.FUZZ_SEED)
const TIME_LIMIT_MS = 12_000 * SCALE

let script: string | undefined
let runner: CaseRunner
let alone: CaseRunner
const tally: { property: string; runs: number; failed: boolean }[] = []

beforeAll(async () => {
  script = await bundle('runner.ts')
  runner = new CaseRunner(script, { caseTimeoutMs: 15_000 })
  alone = new CaseRunner(script, { caseTimeoutMs: 15_000 })
})

afterAll(() => {
  runner?.close()
  alone?.close()
  if (script !== undefined) removeBundle(script)
  const runs = tally.reduce((n, t) => n + t.runs, 0)
  const cases = (runner?.cases ?? 0) + (alone?.cases ?? 0)
  const lines = tally.map((t) => `  ${t.failed ? 'FAIL' : 'ok  '} ${t.property}: ${t.runs} generated cases${t.failed && OPEN_BUGS[t.property] !== undefined ? ` (open bug: ${OPEN_BUGS[t.property]})` : ''}`)
  console.log(
    `fuzz: ${tally.length} properties, ${runs} generated cases (${cases} executed with shrinking and isolated re-runs), ` +
      `${runner?.deaths ?? 0} runner process deaths\n${lines.join('\n')}`,
  )
})

/**
 * Properties that fail today because of an open bug (being fixed concurrently): they run
 * as `it.fails`, so they stay active, and turn red as soon as the fix lands (then remove
 * the entry). FUZZ_STRICT=1 runs every property as a plain test.
 */
const OPEN_BUGS: Readonly<Record<string, string>> = {
  'no secret in any output': 'issue 11 class 3: on the core validator route, issue messages quote the input value (e.g. a password under minLength)',
  'hostile schemas: no crash, hang, block or echoed secret': 'issue 11 class 1: self-referencing and $dynamicRef schemas crash the process (SIGSEGV); $ref cycles allocate without bound',
  'decoder: only ToolwireWireError, byte-identical round trip': 'the core parses floats lossily (8.048236610474516e-17 becomes …515e-17, then …514e-17): canonical text drifts one ULP per round trip',
}
const STRICT = process.env.FUZZ_STRICT === '1'

/** `it`, or `it.fails` for a property with an open bug (see OPEN_BUGS). */
function property(name: string): typeof it | typeof it.fails {
  return OPEN_BUGS[name] !== undefined && !STRICT ? it.fails : it
}

/** Violations in these categories fail the property. */
function only(violations: readonly string[], categories: readonly string[]): string[] {
  return violations.filter((v) => categories.some((c) => v.startsWith(`${c}:`)))
}

async function check<T>(property: string, arb: fc.Arbitrary<T>, toOp: (c: T) => Op, categories: readonly string[], numRuns: number, blockCheck = false): Promise<void> {
  const entry = { property, runs: 0, failed: true }
  tally.push(entry)
  await fc.assert(
    fc.asyncProperty(arb, async (c) => {
      entry.runs++
      const op = toOp(c)
      const report = blockCheck ? await runWithBlockCheck(runner, alone, op) : await runner.run(op)
      const broken = only(report.violations, categories)
      expect(broken, broken.some((v) => v.startsWith('crash:')) ? report.note : undefined).toEqual([])
    }),
    { numRuns: Math.round(numRuns * SCALE), interruptAfterTimeLimit: TIME_LIMIT_MS, ...(SEED === undefined ? {} : { seed: SEED }) },
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
  }, 60_000)
})

describe.skipIf(REPLAY !== undefined)('fuzz: tm.call / callJson / callMany with hostile tools, inputs and calls', () => {
  property('calls settle once, no leak, process survives')('every call settles exactly once, never throws or rejects, releases its slot and in-flight entry; the process survives', async () => {
    await check('calls settle once, no leak, process survives', callCaseArb, (c) => ({ op: 'call', c }), ['settle', 'leak', 'crash', 'view', 'setup', 'harness'], 200)
  }, 90_000)

  property('no secret in any output')('no secret (sensitive input fields, thrown values) reaches a view, the JSON text, the model text, a wire, a record or evidence', async () => {
    await check('no secret in any output', secretCaseArb, (c) => ({ op: 'call', c }), ['secret', 'render'], 200)
  }, 90_000)

  property('copied views render identically')('a JSON or structuredClone copy of a view renders byte-identically to the live view on every wire', async () => {
    await check('copied views render identically', callCaseArb, (c) => ({ op: 'call', c }), ['copy'], 150)
  }, 90_000)

  property('event loop never blocked > 100 ms (calls)')('no call blocks the event loop for more than 100 ms', async () => {
    await check('event loop never blocked > 100 ms (calls)', callCaseArb, (c) => ({ op: 'call', c }), ['block'], 150, true)
  }, 90_000)
})

describe.skipIf(REPLAY !== undefined)('fuzz: hostile schemas', () => {
  property('hostile schemas: no crash, hang, block or echoed secret')('registration rejects or bounds any schema; validation never crashes, hangs, blocks, or echoes an input value', async () => {
    await check('hostile schemas: no crash, hang, block or echoed secret', schemaCaseArb, (c) => ({ op: 'schema', c }), ['settle', 'crash', 'secret', 'render', 'block', 'size', 'harness'], 120, true)
  }, 90_000)
})

describe.skipIf(REPLAY !== undefined)('fuzz: the wire decoder', () => {
  property('decoder: only ToolwireWireError, byte-identical round trip')('ToolResult.fromJSON throws only ToolwireWireError; accepted documents round-trip byte-identically', async () => {
    await check('decoder: only ToolwireWireError, byte-identical round trip', decodeCaseArb, (c) => ({ op: 'decode', c }), ['decode', 'crash', 'block', 'harness'], 400, true)
  }, 90_000)
})

describe.skipIf(REPLAY !== undefined)('fuzz: the MCP server on generated frames', () => {
  property('MCP frames: one well-formed response each, server survives')('every request gets exactly one well-formed response, bad tools/call params get -32602, no secret leaves, the server survives', async () => {
    await check('MCP frames: one well-formed response each, server survives', mcpCaseArb, (c) => ({ op: 'mcp', c }), ['mcp', 'secret', 'crash', 'block', 'harness'], 80, true)
  }, 90_000)
})
