// Installs the packed tarballs (main + this host's platform package) into an empty project
// with no cargo on PATH, then uses the library through `import` and `require`.
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { delimiter, join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ensureBuilt } from './fixtures/mcp/helpers.js'

const root = join(import.meta.dirname, '..')
const work = mkdtempSync(join(tmpdir(), 'toolwire-install-'))
const project = join(work, 'project')
// PATH without any directory that holds cargo or rustc; the consumer's own loader choices
// (npm run test:wasm forces the wasm build on this suite, not on the consumer).
const PATH = (process.env.PATH ?? '').split(delimiter).filter((d) => !/cargo|rustup/.test(d)).join(delimiter)
const { NAPI_RS_FORCE_WASI: _forced, ...inherited } = process.env
const env = { ...inherited, PATH }
// This host's platform package, named as napi-rs names it (linux-x64-gnu, darwin-arm64, ...).
const glibc = (process.report.getReport() as { header?: { glibcVersionRuntime?: string } }).header?.glibcVersionRuntime
const abi = process.platform === 'linux' ? (glibc ? '-gnu' : '-musl') : process.platform === 'win32' ? '-msvc' : ''
const host = `${process.platform}-${process.arch}${abi}`
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string; napi: { targets: string[] } }

function run(cmd: string, args: string[], cwd: string): string {
  return execFileSync(cmd, args, { cwd, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
}

const script = `
  const tm = new ToolManager()
  tm.register({ name: 'echo', inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] }, run: ({ text }) => ({ text }) })
  const ok = await tm.callJson('echo', '{"text":"hi"}')
  const bad = await tm.callJson('echo', '{"text":1}')
  const wire = ToolResult.fromJSON('{"v":1,"status":"skipped","output":{"text":"Skipped: x"},"skipReason":"x"}').toJSONText()
  console.log(JSON.stringify({ ok: ok.status, data: ok.data, bad: bad.status, wire }))
`

describe('packed install', () => {
  let tarballs: string[] = []
  beforeAll(() => {
    ensureBuilt()
    tarballs = run(process.execPath, [join(root, 'scripts/pack.mjs'), join(work, 'tarballs'), `--only=${host}`], root).trim().split('\n')
    run('mkdir', ['-p', project], work)
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'consumer', version: '1.0.0', private: true }))
    expect(() => run('sh', ['-c', 'command -v cargo'], project)).toThrow()
    run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', ...tarballs], project)
  })
  afterAll(() => rmSync(work, { recursive: true, force: true }))

  it(`produces a main and a ${host} package`, () => {
    expect(tarballs.map((t) => t.split('/').pop())).toEqual([`toolwire-${pkg.version}.tgz`, `toolwire-${host}-${pkg.version}.tgz`])
  })

  it('lists a platform package for every napi target, and each declares its os, cpu and libc', () => {
    const out = join(work, 'release')
    const main = run(process.execPath, [join(root, 'scripts/pack.mjs'), out], root).trim().split('\n')[0]
    expect(main).toMatch(/\.tgz$/)
    const manifest = JSON.parse(run('tar', ['-xOzf', main!, 'package/package.json'], root)) as { optionalDependencies: Record<string, string> }
    const dirs = readdirSync(join(root, 'npm')).sort()
    expect(Object.keys(manifest.optionalDependencies).sort()).toEqual(dirs.map((d) => `toolwire-${d}`))
    expect(Object.values(manifest.optionalDependencies).every((v) => v === pkg.version)).toBe(true)
    expect(dirs).toEqual(
      ['darwin-arm64', 'darwin-x64', 'linux-arm64-gnu', 'linux-arm64-musl', 'linux-x64-gnu', 'linux-x64-musl', 'wasm32-wasi', 'win32-arm64-msvc', 'win32-x64-msvc'],
    )
    expect(pkg.napi.targets).toHaveLength(dirs.length)
    for (const dir of dirs) {
      const p = JSON.parse(readFileSync(join(root, 'npm', dir, 'package.json'), 'utf8')) as { os?: string[]; cpu: string[]; libc?: string[]; version: string }
      const [os, cpu, libc] = dir.split('-')
      if (dir === 'wasm32-wasi') {
        expect({ version: p.version, cpu: p.cpu }).toEqual({ version: pkg.version, cpu: ['wasm32'] })
        continue
      }
      expect({ dir, version: p.version, cpu: p.cpu }).toEqual({ dir, version: pkg.version, cpu: [cpu] })
      expect({ dir, os: p.os }).toEqual({ dir, os: [os] })
      expect({ dir, libc: p.libc }).toEqual({ dir, libc: libc === 'gnu' ? ['glibc'] : libc === 'musl' ? ['musl'] : undefined })
    }
  })

  it('works without the optional OpenTelemetry peer dependency', () => {
    expect(() => run(process.execPath, ['-e', "require.resolve('@opentelemetry/api')"], project)).toThrow()
  })

  it('works through import', () => {
    writeFileSync(join(project, 'esm.mjs'), `import { ToolManager, ToolResult } from 'toolwire'\n${script}`)
    const out = JSON.parse(run(process.execPath, ['esm.mjs'], project))
    expect(out).toEqual({
      ok: 'ok',
      data: { text: 'hi' },
      bad: 'invalid',
      wire: '{"v":1,"status":"skipped","output":{"text":"Skipped: x"},"skipReason":"x"}',
    })
  })

  it('works through require', () => {
    writeFileSync(join(project, 'cjs.cjs'), `const { ToolManager, ToolResult } = require('toolwire');\n(async () => {${script}})()`)
    const out = JSON.parse(run(process.execPath, ['cjs.cjs'], project))
    expect(out.ok).toBe('ok')
    expect(out.bad).toBe('invalid')
  })

  it('installs the toolwire command (the MCP server and CLI)', () => {
    const out = JSON.parse(run(join(project, 'node_modules', '.bin', 'toolwire'), ['tools', '--json'], project))
    expect(out.map((t: { name: string }) => t.name)).toEqual(expect.arrayContaining(['read_file', 'list_dir', 'search_text', 'edit_settings', 'delete_file']))
  })

  it('names the platform and the fix when no binary is installed', () => {
    rmSync(join(project, 'node_modules', `toolwire-${host}`), { recursive: true, force: true })
    let stderr = ''
    try {
      run(process.execPath, ['-e', "require('toolwire')"], project)
    } catch (err) {
      stderr = String((err as { stderr?: string }).stderr)
    }
    expect(stderr).toContain(`no native binary for ${process.platform}-${process.arch}`)
    expect(stderr).toContain(`toolwire-${host}`)
  })
})

// A platform with no native package: npm installs the WebAssembly fallback when asked for it
// (`npm install --cpu=wasm32 toolwire`, as for any napi-rs package), and the loader runs it.
// The consumer's overrides point the optional dependency at the packed tarball.
const wasmBuilt = ['toolwire.wasm32-wasi.wasm', 'npm/wasm32-wasi/toolwire.wasm32-wasi.wasm'].some((f) => existsSync(join(root, f)))
if (!wasmBuilt) console.log('test/pack.test.ts: the wasm install is skipped: no wasm build (npm run build:all -- --only=wasm32-wasi)')

describe.skipIf(!wasmBuilt)('packed install of the WebAssembly fallback', () => {
  const wasmProject = join(work, 'wasm-project')
  let installed: string[] = []
  beforeAll(() => {
    ensureBuilt()
    const [main, wasm] = run(process.execPath, [join(root, 'scripts/pack.mjs'), join(work, 'wasm-tarballs'), '--only=wasm32-wasi'], root).trim().split('\n')
    expect(main).toMatch(/\.tgz$/)
    mkdirSync(wasmProject, { recursive: true })
    const consumer = { name: 'consumer', version: '1.0.0', private: true, overrides: { 'toolwire-wasm32-wasi': `file:${wasm}` } }
    writeFileSync(join(wasmProject, 'package.json'), JSON.stringify(consumer))
    run('npm', ['install', '--cpu=wasm32', '--prefer-offline', '--no-audit', '--no-fund', main!], wasmProject)
    installed = readdirSync(join(wasmProject, 'node_modules')).filter((d) => d.startsWith('toolwire'))
  })
  afterAll(() => rmSync(work, { recursive: true, force: true }))

  it('installs the main package and toolwire-wasm32-wasi, no native one', () => {
    expect(installed.sort()).toEqual(['toolwire', 'toolwire-wasm32-wasi'])
  })

  it('runs on it', () => {
    writeFileSync(join(wasmProject, 'esm.mjs'), `import { ToolManager, ToolResult } from 'toolwire'\n${script}`)
    const out = JSON.parse(run(process.execPath, ['esm.mjs'], wasmProject))
    expect(out).toMatchObject({ ok: 'ok', data: { text: 'hi' }, bad: 'invalid' })
    const target = run(process.execPath, ['-e', "console.log(require('toolwire/package.json') && require(require.resolve('toolwire').replace(/dist.cjs.index\\.js$/, 'binding.cjs')).__napiBindingTarget)"], wasmProject)
    expect(target.trim()).toBe('wasm32-wasi')
  })
})
