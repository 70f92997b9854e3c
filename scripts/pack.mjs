// Packs the release tarballs into a folder (default: ./pack): the platform package
// npm/linux-x64-gnu (holding the compiled addon) and the main package, whose
// optionalDependencies name the platform package, as napi-rs lays them out.
// Usage: node scripts/pack.mjs [outDir]. Needs `npm run build` first.
import { execFileSync } from 'node:child_process'
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'

const root = resolve(import.meta.dirname, '..')
const out = resolve(process.argv[2] ?? join(root, 'pack'))
mkdirSync(out, { recursive: true })
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
const platforms = [{ dir: 'linux-x64-gnu', node: 'toolwire.linux-x64-gnu.node' }]

const npm = (args, cwd) => execFileSync('npm', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim()
const tarballs = []
for (const { dir, node } of platforms) {
  const src = join(root, node)
  if (!existsSync(src)) throw new Error(`missing ${node}: run \`npm run build\` first`)
  const platformDir = join(root, 'npm', dir)
  copyFileSync(src, join(platformDir, node))
  const platformPkg = JSON.parse(readFileSync(join(platformDir, 'package.json'), 'utf8'))
  if (platformPkg.version !== pkg.version) throw new Error(`npm/${dir}/package.json version ${platformPkg.version} != ${pkg.version}`)
  tarballs.push(join(out, npm(['pack', '--ignore-scripts', '--pack-destination', out], platformDir).split('\n').pop()))
}

// Stage the main package with its optionalDependencies, leaving the repo's package.json alone.
const stage = mkdtempSync(join(tmpdir(), 'toolwire-pack-'))
for (const entry of [...pkg.files, 'package.json']) {
  if (existsSync(join(root, entry))) cpSync(join(root, entry), join(stage, entry), { recursive: true })
}
const staged = { ...pkg, optionalDependencies: Object.fromEntries(platforms.map(({ dir }) => [`toolwire-${dir}`, pkg.version])) }
delete staged.devDependencies
delete staged.scripts.prepare
writeFileSync(join(stage, 'package.json'), JSON.stringify(staged, null, 2) + '\n')
tarballs.unshift(join(out, npm(['pack', '--ignore-scripts', '--pack-destination', out], stage).split('\n').pop()))
rmSync(stage, { recursive: true, force: true })
console.log(tarballs.join('\n'))
