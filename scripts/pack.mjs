// Packs the release tarballs into a folder (default: ./pack), as napi-rs lays them out: one
// package per platform under npm/<platform>/ (holding that platform's compiled addon, or the
// WebAssembly fallback for npm/wasm32-wasi), and the main package, whose optionalDependencies
// name the platform packages.
//
// Usage: node scripts/pack.mjs [outDir] [--only=<platform>,...] [--all]
//   (default)  packs every platform package whose binary is present (`npm run build` makes the
//              host's, `npm run build:all` the rest); the main package lists every target in
//              package.json's napi.targets, as it is published.
//   --only=..  packs just these platform packages, and the main package lists only them, so the
//              tarballs install offline (the packed-install test uses it).
//   --all      fails unless every target's binary is present (the release workflow uses it).
// Prints the tarball paths, the main package's first.
import { execFileSync } from 'node:child_process'
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parseTriple } from '@napi-rs/cli'

const root = resolve(import.meta.dirname, '..')
const args = process.argv.slice(2)
const only = args.find((a) => a.startsWith('--only='))?.slice('--only='.length).split(',').filter(Boolean)
const requireAll = args.includes('--all')
const out = resolve(args.find((a) => !a.startsWith('--')) ?? join(root, 'pack'))
mkdirSync(out, { recursive: true })
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))

// Every configured target's platform package, e.g. x86_64-unknown-linux-musl -> npm/linux-x64-musl.
const platforms = pkg.napi.targets.map((triple) => {
  const dir = parseTriple(triple).platformArchABI
  const platformDir = join(root, 'npm', dir)
  if (!existsSync(join(platformDir, 'package.json'))) throw new Error(`target ${triple} has no npm/${dir}/package.json`)
  const platformPkg = JSON.parse(readFileSync(join(platformDir, 'package.json'), 'utf8'))
  if (platformPkg.name !== `${pkg.name}-${dir}`) throw new Error(`npm/${dir}/package.json is named ${platformPkg.name}, not ${pkg.name}-${dir}`)
  if (platformPkg.version !== pkg.version) throw new Error(`npm/${dir}/package.json version ${platformPkg.version} != ${pkg.version}`)
  // The compiled artifact: the .node addon, or the .wasm module of the WebAssembly fallback.
  const binary = platformPkg.files.find((f) => /\.(node|wasm)$/.test(f))
  return { dir, triple, platformDir, platformPkg, binary }
})
if (only) {
  const unknown = only.filter((dir) => !platforms.some((p) => p.dir === dir))
  if (unknown.length) throw new Error(`--only names no configured target: ${unknown.join(', ')}`)
}

const npm = (npmArgs, cwd) => execFileSync('npm', npmArgs, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim()
const packInto = (cwd) => join(out, npm(['pack', '--ignore-scripts', '--pack-destination', out], cwd).split('\n').pop())

const tarballs = []
const packed = []
const missing = []
for (const p of platforms) {
  if (only && !only.includes(p.dir)) continue
  // `napi build --platform` (npm run build) writes its artifacts to the repository root,
  // build:all into npm/<platform>/: the newer of the two is packed, from a staged copy.
  const source = (file) => {
    const [built, release] = [join(root, file), join(p.platformDir, file)]
    if (!existsSync(built)) return existsSync(release) ? release : undefined
    return existsSync(release) && statSync(release).mtimeMs >= statSync(built).mtimeMs ? release : built
  }
  if (!source(p.binary)) {
    missing.push(`${p.dir} (${p.triple}): no ${p.binary}`)
    continue
  }
  const absent = p.platformPkg.files.filter((f) => !source(f))
  if (absent.length) throw new Error(`npm/${p.dir} lacks ${absent.join(', ')}`)
  const stage = mkdtempSync(join(tmpdir(), `toolwire-pack-${p.dir}-`))
  for (const file of ['package.json', 'README.md']) copyFileSync(join(p.platformDir, file), join(stage, file))
  for (const file of p.platformPkg.files) copyFileSync(source(file), join(stage, file))
  tarballs.push(packInto(stage))
  rmSync(stage, { recursive: true, force: true })
  packed.push(p)
}
if (only && missing.length) throw new Error(`missing binaries: ${missing.join('; ')}. Run \`npm run build\` or \`npm run build:all\` first`)
if (requireAll && missing.length) throw new Error(`--all: missing binaries: ${missing.join('; ')}`)
if (missing.length) console.error(`pack: not packed (no binary here): ${missing.join('; ')}`)

// Stage the main package with its optionalDependencies, leaving the repo's package.json alone.
const listed = only ? packed : platforms
const stage = mkdtempSync(join(tmpdir(), 'toolwire-pack-'))
for (const entry of [...pkg.files, 'package.json']) {
  if (existsSync(join(root, entry))) cpSync(join(root, entry), join(stage, entry), { recursive: true })
}
const staged = { ...pkg, optionalDependencies: Object.fromEntries(listed.map((p) => [p.platformPkg.name, pkg.version])) }
delete staged.devDependencies
delete staged.scripts.prepare
writeFileSync(join(stage, 'package.json'), JSON.stringify(staged, null, 2) + '\n')
tarballs.unshift(packInto(stage))
rmSync(stage, { recursive: true, force: true })
console.log(tarballs.join('\n'))
