// The framework examples run as written (built package, through its own name, against scripted
// fake models), and the root entry loads no framework.
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { ensureBuilt } from './fixtures/mcp/helpers.js'

const root = join(import.meta.dirname, '..')
const run = (file: string): string => execFileSync(process.execPath, [join(root, 'examples', file)], { cwd: root, encoding: 'utf8' })
const FRAMEWORKS = ['ai', '@ai-sdk/provider-utils', '@openai/agents', '@openai/agents-core', '@langchain/core']

/** The bare package names a built module imports, following its relative imports (chunks). */
function importsOf(file: string, seen = new Set<string>()): Set<string> {
  const packages = new Set<string>()
  if (seen.has(file)) return packages
  seen.add(file)
  const text = readFileSync(file, 'utf8')
  for (const m of text.matchAll(/(?:from|import)\s*\(?\s*["']([^"']+)["']/g)) {
    const spec = m[1]!
    if (spec.startsWith('.')) for (const p of importsOf(join(dirname(file), spec), seen)) packages.add(p)
    else packages.add(spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!)
  }
  return packages
}

describe('framework integration examples', () => {
  beforeAll(() => ensureBuilt(), 300_000)

  it('the root entry and toolwire/adapters load no framework', () => {
    for (const entry of ['index.js', 'adapters.js']) {
      const loaded = importsOf(join(root, 'dist', entry))
      for (const framework of FRAMEWORKS) expect(loaded.has(framework), `${entry} loads ${framework}`).toBe(false)
    }
  })

  it('each integration entry loads its own framework only', () => {
    expect([...importsOf(join(root, 'dist', 'ai-sdk.js'))].filter((p) => FRAMEWORKS.includes(p))).toEqual(['ai'])
    expect([...importsOf(join(root, 'dist', 'langchain.js'))].filter((p) => FRAMEWORKS.includes(p))).toEqual(['@langchain/core'])
    expect([...importsOf(join(root, 'dist', 'openai-agents.js'))].filter((p) => FRAMEWORKS.includes(p))).toEqual(['@openai/agents'])
  })

  it('ai-sdk.mjs', () => {
    const out = run('ai-sdk.mjs')
    expect(out).toContain('<untrusted-content>\\nBuy milk.')
    expect(out).toContain('bad call: tool-error invalid - Invalid arguments: /path: must be string')
    expect(out).toContain('approve? Delete notes.txt')
    expect(out).toContain('ai-sdk example ok')
  })

  it('langchain.mjs', () => {
    const out = run('langchain.mjs')
    expect(out).toContain('read_file: status error, view invalid: Invalid arguments: /path: must be string')
    expect(out).toContain('approve? Delete notes.txt')
    expect(out).toContain('delete_file after approval: status success: true')
    expect(out).toContain('langchain example ok')
  })

  it('openai-agents.mjs', () => {
    const out = run('openai-agents.mjs')
    expect(out).toContain('approve? Delete notes.txt')
    expect(out).toContain('model saw screenshot: [{"type":"input_text","text":"The screen"},{"type":"input_image"')
    expect(out).toContain('delete_file: view ok')
    expect(out).toContain('openai-agents example ok')
  })
})
