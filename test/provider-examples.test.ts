// The provider runners' examples run as written (against the built package, through its own
// name), each against a scripted fake model that checks the provider's rules.
import { execFileSync } from 'node:child_process'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { ensureBuilt } from './fixtures/mcp/helpers.js'

describe('provider runner examples', () => {
  const root = join(import.meta.dirname, '..')
  const run = (file: string): string => execFileSync(process.execPath, [join(root, 'examples', file)], { cwd: root, encoding: 'utf8' })
  beforeAll(() => ensureBuilt(), 120_000)

  it('provider-openai-chat.mjs', () => {
    const out = run('provider-openai-chat.mjs')
    expect(out).toContain('ok ok invalid')
    expect(out).toContain('openai chat example ok')
  })
  it('provider-openai-responses.mjs', () => {
    const out = run('provider-openai-responses.mjs')
    expect(out).toContain('{"sum":5}')
    expect(out).toMatch(/Error: .*\/a/)
    expect(out).toContain('openai responses example ok')
  })
  it('provider-anthropic.mjs', () => {
    expect(run('provider-anthropic.mjs')).toContain('anthropic example ok')
  })
  it('provider-gemini.mjs', () => {
    expect(run('provider-gemini.mjs')).toContain('10 EUR is 110 NOK.\ngemini example ok')
  })
})
