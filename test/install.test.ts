// What `npm install` in a clone says (npm 11): no package with an install script left unreviewed,
// and the EBADENGINE warnings npm prints on Node.js 20 explained by the install itself.
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
// @ts-expect-error: plain .mjs scripts, no declarations
import { devEngineMisses, installNote } from '../scripts/install-note.mjs'
// @ts-expect-error: plain .mjs scripts, no declarations
import { PINNED } from '../scripts/node-matrix.mjs'

interface LockEntry {
  version?: string
  dev?: boolean
  optional?: boolean
  hasInstallScript?: boolean
  engines?: { node?: string }
}
const root = join(import.meta.dirname, '..')
// npm's own range check (semver, here through @napi-rs/cli), as scripts/install-note.mjs uses it
const { satisfies } = createRequire(import.meta.url)('semver') as { satisfies: (version: string, range: string, options?: { includePrerelease?: boolean }) => boolean }
const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as { packages: Record<string, LockEntry> }
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { allowScripts?: Record<string, boolean>; scripts: Record<string, string> }
const name = (path: string): string => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length)
const supported = Object.values(PINNED as Record<string, { version: string }>).map((p) => p.version)

describe('npm install in a clone', () => {
  it("allowScripts reviews every package with an install script (npm 11 lists the others as 'not yet covered')", () => {
    const withScripts = Object.entries(lock.packages).filter(([path, e]) => path !== '' && e.hasInstallScript)
    const reviewed = pkg.allowScripts ?? {}
    const covers = (path: string, e: LockEntry): boolean => `${name(path)}@${e.version}` in reviewed || name(path) in reviewed
    expect(withScripts.filter(([path, e]) => !covers(path, e)).map(([path]) => name(path))).toEqual([])
    // and names nothing that is not installed
    const installed = new Set(withScripts.flatMap(([path, e]) => [name(path), `${name(path)}@${e.version}`]))
    expect(Object.keys(reviewed).filter((k) => !installed.has(k))).toEqual([])
    // the ones whose script builds what the package needs run it; protobufjs's only checks its dependents' version ranges.
    // By name: npm matches `name@version` against a lock entry's `resolved` URL, which this lock file does not record.
    expect(reviewed).toEqual({ 'better-sqlite3': true, esbuild: true, protobufjs: false })
  })

  it('no dependency a user installs leaves out a supported Node.js: only development ones do', () => {
    const runtime = Object.entries(lock.packages).filter(([path, e]) => path !== '' && !e.dev && !e.optional && e.engines?.node !== undefined)
    for (const version of supported) {
      const misses = runtime.filter(([, e]) => !satisfies(version, e.engines!.node!, { includePrerelease: true })).map(([path]) => name(path))
      expect({ version, misses }).toEqual({ version, misses: [] })
    }
  })

  it('the install names the development dependencies npm warns EBADENGINE about on Node.js 20, and says nothing is to be done; on 22 and 24 it says nothing', () => {
    const [on20, on22, on24] = supported.map((v) => devEngineMisses(lock, v, satisfies) as string[])
    expect(on20).toEqual(['@google/genai@3.3.0', '@napi-rs/lzma@1.5.3', 'content-type@3.1.1', 'openai@7.59.0'])
    expect(installNote(on20, 'v20.20.2')).toMatch(/^toolwire: the EBADENGINE warnings above are for development dependencies .*: @google\/genai@3\.3\.0, .*openai@7\.59\.0\. Nothing to do/)
    expect([on22, on24]).toEqual([[], []])
    expect(installNote([], 'v22.23.5')).toBeUndefined()
    expect(pkg.scripts.prepare).toMatch(/^node scripts\/install-note\.mjs && /)
  })

  it("the note is this Node.js's (run as the prepare script runs it)", () => {
    const out = execFileSync(process.execPath, [join(root, 'scripts', 'install-note.mjs')], { cwd: root, encoding: 'utf8' })
    const misses = devEngineMisses(lock, process.versions.node, satisfies) as string[]
    expect(out).toBe(misses.length === 0 ? '' : `${installNote(misses, process.version)}\n`)
  })
})
