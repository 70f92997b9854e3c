// Builds every release target this machine can build, one after the other, and names each one
// it cannot build with the reason. Usage:
//
//   npm run build:all                       # every target in package.json's napi.targets
//   npm run build:all -- --only=linux-arm64-gnu,wasm32-wasi
//
// It installs the toolchains it needs (rustup targets; zig and cargo-zigbuild from PyPI), so a
// fresh Linux or macOS machine with Rust, Node and Python can run it. Each binary lands in its
// platform package, npm/<platform>/ (the wasm fallback also at the repository root, where the
// loader binding.cjs looks for it), and its file format and architecture are checked before it
// counts as built. The committed loader (binding.cjs / binding.d.ts) is not touched: that is
// `npm run build:native`'s job.
//
// Exit status: 0 when every target either built or is named as not buildable here for a reason
// outside this machine (a vendor SDK that cannot be downloaded); 1 when a target that should
// build failed, a toolchain could not be installed, or a binary has the wrong format. napi-rs
// only warns in those cases; this script fails loudly.
//
// Cross builds are slow (minutes each): they share one target dir, target/cross, and honour
// CARGO_BUILD_JOBS. On a shared machine run: CARGO_BUILD_JOBS=1 nice -n 19 npm run build:all
import { execFileSync, spawnSync } from 'node:child_process'
import { copyFileSync, existsSync, readFileSync, statSync, utimesSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { parseTriple } from '@napi-rs/cli'

const root = resolve(import.meta.dirname, '..')
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
const crossDir = join(root, 'target', 'cross')
const napiCli = join(root, 'node_modules', '@napi-rs', 'cli', 'dist', 'cli.js')
const args = process.argv.slice(2)
const only = args.find((a) => a.startsWith('--only='))?.slice('--only='.length).split(',').filter(Boolean)
// Tool versions known to build every non-MSVC target here.
const PIP_TOOLS = ['ziglang==0.17.1', 'cargo-zigbuild==0.24.1']

class Fatal extends Error {}

function sh(cmd, cmdArgs, opts = {}) {
  console.log(`$ ${cmd} ${cmdArgs.join(' ')}`)
  const r = spawnSync(cmd, cmdArgs, { cwd: root, stdio: 'inherit', ...opts, env: { ...process.env, ...opts.env } })
  if (r.error) throw new Fatal(`${cmd}: ${r.error.message}`)
  if (r.status !== 0) throw new Fatal(`${cmd} ${cmdArgs.slice(0, 3).join(' ')} exited with ${r.status ?? r.signal}`)
}
function quiet(cmd, cmdArgs) {
  try {
    return execFileSync(cmd, cmdArgs, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim()
  } catch {
    return null
  }
}

const hostTriple = quiet('rustc', ['-vV'])?.match(/^host: (.+)$/m)?.[1]
if (!hostTriple) {
  console.error('build:all: rustc not found: install Rust (https://rustup.rs) first')
  process.exit(1)
}

// What each binary must be: file format, and the machine its header names.
const ARCH = { x86_64: 'x86_64', aarch64: 'arm64', wasm32: 'wasm32' }
function inspect(file) {
  const b = readFileSync(file)
  if (b.readUInt32BE(0) === 0x7f454c46) {
    const machine = b.readUInt16LE(18)
    return { format: 'ELF', arch: { 0x3e: 'x86_64', 0xb7: 'arm64' }[machine] ?? `machine 0x${machine.toString(16)}` }
  }
  if (b.readUInt32LE(0) === 0xfeedfacf) {
    const cpu = b.readUInt32LE(4)
    return { format: 'Mach-O', arch: { 0x01000007: 'x86_64', 0x0100000c: 'arm64' }[cpu] ?? `cputype 0x${cpu.toString(16)}` }
  }
  if (b.toString('latin1', 0, 2) === 'MZ') {
    const pe = b.readUInt32LE(0x3c)
    const machine = b.readUInt16LE(pe + 4)
    return { format: 'PE', arch: { 0x8664: 'x86_64', 0xaa64: 'arm64' }[machine] ?? `machine 0x${machine.toString(16)}` }
  }
  if (b.readUInt32BE(0) === 0x0061736d) return { format: 'wasm', arch: 'wasm32' }
  return { format: 'unknown', arch: 'unknown' }
}
const expectedFormat = (t) => (t.wasm ? 'wasm' : t.os === 'darwin' ? 'Mach-O' : t.os === 'win32' ? 'PE' : 'ELF')

// Microsoft's CRT and Windows SDK, which cargo-xwin downloads for the MSVC targets.
async function msvcSdkReachable() {
  try {
    const res = await fetch('https://aka.ms/vs/17/release/channel', { method: 'HEAD', redirect: 'follow', signal: AbortSignal.timeout(15000) })
    return res.ok ? null : `HTTP ${res.status}`
  } catch (err) {
    return String(err.cause?.code ?? err.cause?.message ?? err.message)
  }
}

const targets = pkg.napi.targets.map((triple) => {
  const t = parseTriple(triple)
  const wasm = triple.startsWith('wasm32')
  // Linux targets always go through zig, host included, so every glibc binary needs no newer
  // glibc than 2.17 whatever the build machine's is. macOS and Windows targets build natively on
  // their own OS (the release workflow's runners); from elsewhere, macOS goes through zig and
  // Windows MSVC through cargo-xwin.
  const sameOs = (t.platform === 'darwin' && process.platform === 'darwin') || (t.platform === 'win32' && process.platform === 'win32')
  const how = wasm ? 'wasm' : t.platform === 'linux' ? 'zig' : sameOs ? 'native' : t.platform === 'win32' ? 'xwin' : 'zig'
  return { triple, dir: t.platformArchABI, os: t.platform, arch: ARCH[triple.split('-')[0]], wasm, how }
})
const selected = only ? targets.filter((t) => only.includes(t.dir) || only.includes(t.triple)) : targets
if (only && selected.length !== only.length) {
  console.error(`build:all: --only names an unknown target; known: ${targets.map((t) => t.dir).join(', ')}`)
  process.exit(1)
}

const results = []
const outcome = (t, status, detail) => results.push({ t, status, detail })

// ---- toolchains: install what is missing; failing to is fatal -------------------------------
try {
  sh('rustup', ['target', 'add', ...selected.map((t) => t.triple)])
  if (selected.some((t) => t.how === 'zig')) {
    const zigOk = () => quiet('cargo-zigbuild', ['--version']) && (quiet('zig', ['version']) ?? quiet('python3', ['-m', 'ziglang', 'version']))
    if (!zigOk()) sh('python3', ['-m', 'pip', 'install', ...PIP_TOOLS])
    if (!zigOk()) throw new Fatal(`cargo-zigbuild or zig still missing after 'pip install ${PIP_TOOLS.join(' ')}' (is pip's bin dir on PATH?)`)
  }
  if (!existsSync(napiCli) || (selected.some((t) => t.wasm) && !existsSync(join(root, 'node_modules', 'emnapi', 'package.json')))) {
    throw new Fatal("@napi-rs/cli and emnapi come from node_modules: run 'npm install' first")
  }
} catch (err) {
  console.error(`build:all: toolchain setup failed: ${err.message}`)
  process.exit(1)
}

// ---- builds, one at a time --------------------------------------------------------------------
const ZIG_RUSTFLAGS = {
  // A cdylib cannot be linked statically against musl; Node loads it into its own musl process.
  'x86_64-unknown-linux-musl': '-C target-feature=-crt-static',
  'aarch64-unknown-linux-musl': '-C target-feature=-crt-static',
}
const cdylib = (t) => (t.os === 'darwin' ? 'libtoolwire_node.dylib' : t.os === 'win32' ? 'toolwire_node.dll' : 'libtoolwire_node.so')
const started = Date.now()

for (const t of selected) {
  const nodeFile = `toolwire.${t.dir}.node`
  const dest = join(root, 'npm', t.dir, t.wasm ? 'toolwire.wasm32-wasi.wasm' : nodeFile)
  console.log(`\n== ${t.dir} (${t.triple}) via ${t.how}`)
  const t0 = Date.now()
  try {
    if (t.how === 'native') {
      // The OS's own toolchain (Xcode, MSVC); the committed loader files are left alone.
      sh(process.execPath, [napiCli, 'build', '--platform', '--release', '--target', t.triple, '--target-dir', crossDir, '--no-js', '--dts', 'target/napi-native-binding.d.ts'])
      copyFileSync(join(root, nodeFile), dest)
    } else if (t.how === 'wasm') {
      // Writes toolwire.wasm32-wasi.wasm, toolwire.wasi.cjs and the worker scripts at the root.
      sh(process.execPath, [napiCli, 'build', '--platform', '--release', '--target', t.triple, '--target-dir', crossDir, '--no-js', '--dts', 'target/napi-wasm-binding.d.ts'])
      for (const f of JSON.parse(readFileSync(join(root, 'npm', t.dir, 'package.json'), 'utf8')).files) {
        if (!existsSync(join(root, f))) throw new Fatal(`napi build wrote no ${f}`)
        copyFileSync(join(root, f), join(root, 'npm', t.dir, f))
      }
      // napi writes the unoptimized toolwire.wasm32-wasi.debug.wasm a moment before the .wasm: one
      // this build wrote is dated with it, so that test:wasm's check (a debug .wasm older than the
      // .wasm is a stale leftover the loader would prefer) does not refuse this build's own
      const debugWasm = join(root, 'toolwire.wasm32-wasi.debug.wasm')
      if (existsSync(debugWasm) && statSync(debugWasm).mtimeMs >= t0) {
        const built = statSync(join(root, 'toolwire.wasm32-wasi.wasm'))
        utimesSync(debugWasm, built.atime, built.mtime)
      }
    } else if (t.how === 'xwin') {
      const unreachable = await msvcSdkReachable()
      if (unreachable) {
        outcome(t, 'not buildable here', `needs Microsoft's MSVC CRT and Windows SDK, which cargo-xwin downloads from aka.ms / download.visualstudio.microsoft.com: unreachable (${unreachable}); the release workflow builds it on windows-latest`)
        continue
      }
      if (!quiet('cargo', ['xwin', '--version'])) sh('python3', ['-m', 'pip', 'install', 'cargo-xwin'])
      sh('cargo', ['xwin', 'build', '--release', '--lib', '-p', 'toolwire-node', '--target', t.triple, '--target-dir', crossDir])
      copyFileSync(join(crossDir, t.triple, 'release', cdylib(t)), dest)
    } else {
      // glibc targets are pinned to glibc 2.17, the floor napi-rs's own prebuilt binaries use.
      const zigTarget = t.triple.endsWith('-linux-gnu') ? `${t.triple}.2.17` : t.triple
      const envName = `CARGO_TARGET_${t.triple.toUpperCase().replaceAll('-', '_')}_RUSTFLAGS`
      const env = ZIG_RUSTFLAGS[t.triple] ? { [envName]: ZIG_RUSTFLAGS[t.triple] } : {}
      // Without an SDK, zig would stamp the newest macOS as the minimum, and older ones refuse the
      // binary: ask for the oldest each CPU supports (10.13 as napi-rs's template; arm64 began at 11).
      if (t.os === 'darwin') env.MACOSX_DEPLOYMENT_TARGET = process.env.MACOSX_DEPLOYMENT_TARGET ?? (t.arch === 'arm64' ? '11.0' : '10.13')
      sh('cargo', ['zigbuild', '--release', '--lib', '-p', 'toolwire-node', '--target', zigTarget, '--target-dir', crossDir], { env })
      copyFileSync(join(crossDir, t.triple, 'release', cdylib(t)), dest)
    }
    const got = inspect(dest)
    if (got.format !== expectedFormat(t) || got.arch !== t.arch) {
      throw new Fatal(`${dest} is ${got.format} ${got.arch}, expected ${expectedFormat(t)} ${t.arch}`)
    }
    outcome(t, 'built', `${got.format} ${got.arch}, ${(statSync(dest).size / 1024).toFixed(0)} KiB, ${((Date.now() - t0) / 1000).toFixed(0)} s`)
  } catch (err) {
    if (!(err instanceof Fatal)) throw err
    outcome(t, 'FAILED', err.message)
  }
}

console.log(`\n== build:all (${((Date.now() - started) / 60000).toFixed(1)} min, host ${hostTriple})`)
for (const { t, status, detail } of results) console.log(`${t.dir.padEnd(18)} ${status.padEnd(19)} ${detail}`)
const failed = results.filter((r) => r.status === 'FAILED')
if (failed.length) {
  console.error(`build:all: ${failed.length} target(s) failed: ${failed.map((r) => r.t.dir).join(', ')}`)
  process.exit(1)
}
