// `npm run test:wasm`: the whole vitest suite on the WebAssembly fallback. NAPI_RS_FORCE_WASI=error
// (set by vitest.wasm.config.ts in the test processes) makes the generated loader (binding.cjs) load toolwire.wasm32-wasi.wasm through
// @napi-rs/wasm-runtime and never fall back to the native addon; test/wasm.test.ts checks that
// the suite really ran on it. Extra arguments go to vitest (e.g. a test file).
// Needs the wasm build: npm run build:all -- --only=wasm32-wasi.
import { spawnSync } from 'node:child_process'
import { existsSync, statSync } from 'node:fs'
import { join, resolve } from 'node:path'

const root = resolve(import.meta.dirname, '..')
for (const file of ['toolwire.wasm32-wasi.wasm', 'toolwire.wasi.cjs', 'wasi-worker.mjs']) {
  if (!existsSync(join(root, file))) {
    console.error(`test:wasm: no ${file}: run 'npm run build:all -- --only=wasm32-wasi' first`)
    process.exit(1)
  }
}
// The generated loader prefers toolwire.wasm32-wasi.debug.wasm when it exists: a leftover from
// an older build would be tested instead of the current one. A build writes both, the debug one a
// moment first (build-all.mjs then dates it with the .wasm, to the millisecond): only one older by
// more than a second is another build's.
const debug = join(root, 'toolwire.wasm32-wasi.debug.wasm')
if (existsSync(debug) && statSync(debug).mtimeMs < statSync(join(root, 'toolwire.wasm32-wasi.wasm')).mtimeMs - 1000) {
  console.error('test:wasm: toolwire.wasm32-wasi.debug.wasm is older than toolwire.wasm32-wasi.wasm and the loader would pick it: delete it or rebuild')
  process.exit(1)
}
const vitest = join(root, 'node_modules', 'vitest', 'vitest.mjs')
// vitest.wasm.config.ts sets NAPI_RS_FORCE_WASI for the test processes only.
const r = spawnSync(process.execPath, [vitest, 'run', '--config', 'vitest.wasm.config.ts', ...process.argv.slice(2)], { cwd: root, stdio: 'inherit' })
process.exit(r.status ?? 1)
