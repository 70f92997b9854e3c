// Type-checks toolwire's published declarations as a user's project sees them: every public
// entry imported from an ES-module project (module nodenext) and from a CommonJS one (module
// node16), with skipLibCheck off. Errors inside other packages' declarations (optional peers
// that are not ours) are listed but do not fail the check; errors in toolwire's own do.
// Run after the build: `node scripts/check-consumer-types.mjs`.
import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const root = join(import.meta.dirname, '..')
const { exports } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
const entries = Object.keys(exports)
  .filter((k) => k !== './package.json')
  .map((k) => (k === '.' ? 'toolwire' : `toolwire/${k.slice(2)}`))
const source = `${entries.map((e, i) => `import * as e${i} from '${e}'`).join('\n')}\nexport const all = [${entries.map((_, i) => `e${i}`).join(', ')}]\n`

const work = mkdtempSync(join(tmpdir(), 'toolwire-types-'))
let failed = false
try {
  for (const [kind, type, module] of [['ES module', 'module', 'nodenext'], ['CommonJS', 'commonjs', 'node16']]) {
    const dir = join(work, type)
    mkdirSync(join(dir, 'node_modules'), { recursive: true })
    symlinkSync(root, join(dir, 'node_modules', 'toolwire'), 'dir')
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: `consumer-${type}`, private: true, type }))
    writeFileSync(join(dir, 'entries.ts'), source)
    const compilerOptions = { module, moduleResolution: module, target: 'es2022', strict: true, noEmit: true, skipLibCheck: false, types: ['node'], typeRoots: [join(root, 'node_modules', '@types')] }
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: ['entries.ts'] }))
    let out = ''
    try {
      execFileSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', dir], { encoding: 'utf8', stdio: 'pipe' })
    } catch (err) {
      out = String(err.stdout ?? '') + String(err.stderr ?? '')
    }
    const errors = out.split('\n').filter((l) => /error TS\d+/.test(l))
    // tsc names a file by its real path: toolwire's own are under the repository, not under node_modules/
    const ours = errors.filter((l) => !l.split('(')[0].includes('node_modules/'))
    const theirs = errors.filter((l) => !ours.includes(l))
    console.log(`${kind} project: ${entries.length} entries, ${ours.length} error(s) in toolwire's declarations, ${theirs.length} in other packages'`)
    for (const l of theirs) console.log(`  (other package) ${l.replace(/^.*node_modules\//, '')}`)
    for (const l of ours) console.error(`  ${l}`)
    if (ours.length > 0) failed = true
  }
} finally {
  rmSync(work, { recursive: true, force: true })
}
if (failed) process.exit(1)
