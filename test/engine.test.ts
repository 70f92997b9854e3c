// Supported Node.js versions: 20.17+, 22 and 24. Older ones are refused when the package
// loads; untested ones (odd majors, 26+) load with one warning.
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { SUPPORTED_NODE, nodeSupport } from '../src/core/engine.js'
import { distIndex, ensureBuilt, repo } from './fixtures/mcp/helpers.js'
import { withoutWasiWarning } from './fixtures/wasi-warning.js'

describe('nodeSupport', () => {
  it('20.17+, 22 and 24 are supported; older is too old; other majors are untested', () => {
    const cases: [string, string][] = [
      ['18.20.4', 'too_old'],
      ['20.0.0', 'too_old'],
      ['20.16.9', 'too_old'],
      ['v20.17.0', 'supported'],
      ['20.20.2', 'supported'],
      ['21.7.3', 'untested'],
      ['22.0.0', 'supported'],
      ['22.23.5', 'supported'],
      ['23.11.1', 'untested'],
      ['24.22.3', 'supported'],
      ['25.0.0', 'untested'],
      ['26.12.1', 'untested'],
    ]
    expect(cases.map(([v]) => [v, nodeSupport(v)])).toEqual(cases)
  })

  it('states the same range as package.json engines', async () => {
    const pkg = (await import('../package.json', { with: { type: 'json' } })).default as { engines: { node: string } }
    expect(pkg.engines.node).toBe(SUPPORTED_NODE)
  })
})

describe('loading the built package on a given Node.js version', () => {
  const dir = mkdtempSync(join(tmpdir(), 'toolwire-engine-'))
  const preload = join(dir, 'fake-version.cjs')
  afterAll(() => rmSync(dir, { recursive: true, force: true }))
  beforeAll(() => {
    ensureBuilt()
    // what process.versions.node says is what the package checks
    writeFileSync(preload, "if (process.env.FAKE_NODE) Object.defineProperty(process.versions, 'node', { value: process.env.FAKE_NODE })\n")
  }, 120_000)

  const load = (fake: string | undefined, how: 'import' | 'require') => {
    const code =
      how === 'import'
        ? `const { ToolManager } = await import(${JSON.stringify(pathToFileURL(distIndex).href)}); new ToolManager(); console.log('loaded')`
        : `const { ToolManager } = require(${JSON.stringify(join(repo, 'dist', 'cjs', 'index.js'))}); new ToolManager(); console.log('loaded')`
    return spawnSync(process.execPath, ['--require', preload, ...(how === 'import' ? ['--input-type=module'] : []), '-e', code], {
      cwd: repo,
      encoding: 'utf8',
      env: { ...process.env, FAKE_NODE: fake ?? '', NODE_OPTIONS: '' },
    })
  }

  it.each(['import', 'require'] as const)('%s: older than 20.17 is refused with ERR_TOOLWIRE_NODE_VERSION', (how) => {
    const r = load('18.20.4', how)
    expect(r.status).not.toBe(0)
    expect(r.stdout).not.toContain('loaded')
    expect(r.stderr).toContain('ERR_TOOLWIRE_NODE_VERSION')
    expect(r.stderr).toContain('toolwire requires Node.js 20.17 or later (supported: 20, 22 and 24); this is Node.js 18.20.4')
  })

  it.each(['import', 'require'] as const)('%s: an untested version loads and works, with one warning', (how) => {
    const r = load('26.12.1', how)
    expect(r.status).toBe(0)
    expect(r.stdout.trim()).toBe('loaded')
    expect(r.stderr.match(/\[TOOLWIRE_UNTESTED_NODE\]/g)).toHaveLength(1)
    expect(r.stderr).toContain('toolwire is tested on Node.js 20, 22 and 24; Node.js 26.12.1 is not one of them')
  })

  it('the version running this suite loads without a word', () => {
    const r = load(undefined, 'import')
    expect(nodeSupport(process.versions.node)).toBe('supported')
    expect([r.status, r.stdout.trim(), withoutWasiWarning(r.stderr)]).toEqual([0, 'loaded', ''])
  })
})
