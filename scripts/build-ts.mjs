// Builds dist/: an ES module and a CommonJS bundle of src/ (dependencies stay
// external), plus declarations from tsc.
import { build } from 'esbuild'
import { execFileSync } from 'node:child_process'
import { rmSync, readdirSync } from 'node:fs'

rmSync('dist', { recursive: true, force: true })
const entries = readdirSync('src').filter((f) => ['index.ts', 'cli.ts'].includes(f)).map((f) => `src/${f}`)
const common = { bundle: true, platform: 'node', target: 'node20', packages: 'external', sourcemap: true, logLevel: 'warning' }
await build({ ...common, entryPoints: entries, outdir: 'dist', format: 'esm', outExtension: { '.js': '.js' } })
await build({
  ...common,
  entryPoints: ['src/index.ts'],
  outfile: 'dist/index.cjs',
  format: 'cjs',
  define: { 'import.meta.url': '__toolwireModuleUrl' },
  banner: { js: "const __toolwireModuleUrl = require('node:url').pathToFileURL(__filename).href;" },
})
execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json'], { stdio: 'inherit' })
