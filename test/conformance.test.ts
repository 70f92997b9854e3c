/**
 * JSON Schema Test Suite conformance of `tm.call` input validation: every required
 * test of draft2020-12 and draft7 (not `optional/`) goes through a tool whose
 * `inputSchema` is the test group's schema. A `valid: true` test must resolve `ok`,
 * a `valid: false` test `invalid`. Known gaps are listed, with reasons, in
 * `json-schema-expected-failures.json`; the list must stay honest (every entry still
 * fails) and each draft must pass at least 99% of its tests.
 *
 * Set TOOLWIRE_CONFORMANCE_DUMP=<file> to write the current failures as JSON.
 */
import { readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { SchemaError, ToolManager, ok } from '../src/index.js'
import { referencePath } from './support.js'

const here = dirname(fileURLToPath(import.meta.url))
/** Absent on a fresh clone with nothing beside it: the suite's tests then skip (see referencePath). */
const SUITE = referencePath('json-schema-test-suite')
const DRAFTS = ['draft2020-12', 'draft7'] as const
type Draft = (typeof DRAFTS)[number]
const DRAFT7_URI = 'http://json-schema.org/draft-07/schema#'
const MIN_PASS_RATE = 0.99

const expectedFailures = JSON.parse(
  readFileSync(join(here, 'json-schema-expected-failures.json'), 'utf8'),
) as Record<string, string>

function walk(dir: string): string[] {
  const out: string[] = []
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name)
    if (statSync(p).isDirectory()) out.push(...walk(p))
    else if (name.endsWith('.json')) out.push(p)
  }
  return out
}

/** The suite serves `remotes/` at http://localhost:1234/ (draft7 remotes live under remotes/draft7/). */
const schemaResources: Record<string, object> = {}
const remotesDir = SUITE === undefined ? undefined : join(SUITE, 'remotes')
for (const file of remotesDir === undefined ? [] : walk(remotesDir)) {
  const uri = `http://localhost:1234/${relative(remotesDir!, file).split('\\').join('/')}`
  schemaResources[uri] = JSON.parse(readFileSync(file, 'utf8')) as object
}

interface SuiteTest {
  readonly description: string
  readonly data: unknown
  readonly valid: boolean
}
interface SuiteGroup {
  readonly description: string
  readonly schema: unknown
  readonly tests: readonly SuiteTest[]
}

interface Outcome {
  readonly key: string
  readonly passed: boolean
  readonly detail: string
}

function schemaFor(draft: Draft, schema: unknown): unknown {
  if (draft !== 'draft7') return schema
  if (typeof schema === 'object' && schema !== null && !Array.isArray(schema) && !('$schema' in schema)) {
    return { $schema: DRAFT7_URI, ...schema }
  }
  return schema
}

async function runGroup(draft: Draft, file: string, group: SuiteGroup): Promise<Outcome[]> {
  const tm = new ToolManager({ schemaResources })
  let registerError: string | undefined
  try {
    tm.register({ name: 't', inputSchema: schemaFor(draft, group.schema) as never, run: () => ok(true) })
  } catch (err) {
    registerError = (err as Error).message
  }
  const outcomes: Outcome[] = []
  for (const test of group.tests) {
    const key = `${draft}/${file}#${group.description}#${test.description}`
    const result = await tm.call('t', test.data)
    const want = test.valid ? 'ok' : 'invalid'
    const passed = registerError === undefined && result.status === want
    const detail =
      registerError !== undefined
        ? `register threw: ${registerError}`
        : `expected ${want}, got ${result.status}${result.status === 'invalid' ? ` ${JSON.stringify(result.issues)}` : ''}`
    outcomes.push({ key, passed, detail })
  }
  return outcomes
}

const totals = new Map<Draft, { passed: number; total: number }>()
const allFailures: Record<string, string> = {}
const seenKeys = new Set<string>()

for (const draft of SUITE === undefined ? [] : DRAFTS) {
  const dir = join(SUITE!, 'tests', draft)
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.json') && statSync(join(dir, f)).isFile())
    .sort()

  describe(`JSON Schema Test Suite ${draft}`, () => {
    for (const file of files) {
      it(file, async () => {
        const groups = JSON.parse(readFileSync(join(dir, file), 'utf8')) as SuiteGroup[]
        const unexpected: string[] = []
        const fixed: string[] = []
        let passed = 0
        let total = 0
        for (const group of groups) {
          for (const o of await runGroup(draft, file, group)) {
            expect(seenKeys.has(o.key), `duplicate test key ${o.key}`).toBe(false)
            seenKeys.add(o.key)
            total++
            if (o.passed) passed++
            else allFailures[o.key] = o.detail
            const listed = Object.hasOwn(expectedFailures, o.key)
            if (!o.passed && !listed) unexpected.push(`  ${o.key}\n    ${o.detail}`)
            if (o.passed && listed) fixed.push(`  ${o.key}`)
          }
        }
        const t = totals.get(draft) ?? { passed: 0, total: 0 }
        totals.set(draft, { passed: t.passed + passed, total: t.total + total })
        const problems: string[] = []
        if (unexpected.length > 0) {
          problems.push(`${unexpected.length} test(s) failed that are not in json-schema-expected-failures.json:\n${unexpected.join('\n')}`)
        }
        if (fixed.length > 0) {
          problems.push(`${fixed.length} test(s) now pass; remove them from json-schema-expected-failures.json:\n${fixed.join('\n')}`)
        }
        expect(problems.join('\n\n'), problems.join('\n\n')).toBe('')
      })
    }

    it(`passes at least ${MIN_PASS_RATE * 100}% of ${draft}`, () => {
      const t = totals.get(draft)
      expect(t, 'the per-file tests must run first').toBeDefined()
      const rate = t!.passed / t!.total
      expect(
        rate,
        `${draft}: ${t!.passed}/${t!.total} passed (${(rate * 100).toFixed(2)}%), below ${MIN_PASS_RATE * 100}%`,
      ).toBeGreaterThanOrEqual(MIN_PASS_RATE)
      console.log(`${draft}: ${t!.passed}/${t!.total} passed (${(rate * 100).toFixed(2)}%)`)
    })
  })
}

describe.skipIf(SUITE === undefined)('expected-failures list', () => {
  it('names only tests that exist in the suite', () => {
    const unknown = Object.keys(expectedFailures).filter((k) => !seenKeys.has(k))
    expect(unknown, `entries naming no suite test:\n${unknown.join('\n')}`).toEqual([])
  })

  it('gives every entry a reason', () => {
    const bare = Object.entries(expectedFailures).filter(([, reason]) => typeof reason !== 'string' || reason.trim().length < 10)
    expect(bare.map(([k]) => k)).toEqual([])
  })
})

describe('remote references', () => {
  it('a $ref to a schema that was not supplied fails registration; schemas are never fetched', () => {
    const tm = new ToolManager()
    let caught: unknown
    try {
      tm.register({
        name: 'remote',
        inputSchema: { type: 'object', properties: { x: { $ref: 'https://example.com/x.json' } } },
        run: () => ok(true),
      })
    } catch (err) {
      caught = err
    }
    expect(caught).toBeInstanceOf(SchemaError)
    expect((caught as Error).message).toMatch(/never fetched/)
    expect((caught as Error).message).toContain('https://example.com/x.json')
    expect(tm.list()).toHaveLength(0)
  })
})

afterAll(() => {
  const dump = process.env.TOOLWIRE_CONFORMANCE_DUMP
  if (dump) writeFileSync(dump, `${JSON.stringify(allFailures, null, 2)}\n`)
})
