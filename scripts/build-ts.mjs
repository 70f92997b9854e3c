// Builds dist/ from src/: one ES module per public entry (`toolwire`, `toolwire/adapters`,
// `toolwire/mcp`, `toolwire/demo`, the CLI) over shared chunks, so every entry uses the same
// classes; the same files converted to CommonJS in dist/cjs/ (a folder whose package.json
// says "commonjs"); declarations from tsc (internal members stripped). Dependencies stay
// external.
import { build, transform } from 'esbuild'
import { execFileSync } from 'node:child_process'
import { mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'

/** Public entry points: output name → source. package.json's "exports" maps each subpath here. */
export const ENTRIES = {
  index: 'src/index.ts',
  adapters: 'src/render/index.ts',
  mcp: 'src/mcp/index.ts',
  demo: 'src/demo/index.ts',
  providers: 'src/integrations/providers/index.ts',
  'ai-sdk': 'src/integrations/ai-sdk.ts',
  'openai-agents': 'src/integrations/openai-agents.ts',
  langchain: 'src/integrations/langchain.ts',
  store: 'src/runtime/store/index.ts',
  cli: 'src/cli.ts',
}

rmSync('dist', { recursive: true, force: true })
await build({
  entryPoints: ENTRIES,
  outdir: 'dist',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  packages: 'external',
  chunkNames: 'chunks/[name]-[hash]',
  sourcemap: true,
  logLevel: 'warning',
})

// CommonJS: the same modules, file for file, so require('toolwire') and require('toolwire/mcp')
// share one copy of each class too. The CLI is ES-module only.
const files = (dir) => readdirSync(dir).flatMap((f) => (statSync(join(dir, f)).isDirectory() ? files(join(dir, f)) : [join(dir, f)]))
for (const file of files('dist').filter((f) => f.endsWith('.js') && !f.endsWith('cli.js'))) {
  const out = join('dist', 'cjs', relative('dist', file))
  const { code } = await transform(readFileSync(file, 'utf8'), {
    format: 'cjs',
    platform: 'node',
    target: 'node20',
    define: { 'import.meta.url': '__toolwireModuleUrl' },
    banner: "const __toolwireModuleUrl = require('node:url').pathToFileURL(__filename).href;",
    logLevel: 'warning',
  })
  mkdirSync(dirname(out), { recursive: true })
  writeFileSync(out, code)
}
writeFileSync('dist/cjs/package.json', '{ "type": "commonjs" }\n')
execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json'], { stdio: 'inherit' })
// The same declarations beside the CommonJS files: under dist/cjs/ (a "commonjs" folder) they
// describe CommonJS modules, so a TypeScript project compiled to CommonJS can import toolwire.
for (const file of files('dist').filter((f) => f.endsWith('.d.ts') && !f.startsWith(join('dist', 'cjs')))) {
  const out = join('dist', 'cjs', relative('dist', file))
  mkdirSync(dirname(out), { recursive: true })
  writeFileSync(out, readFileSync(file))
}
