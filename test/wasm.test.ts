// The WebAssembly fallback (wasm32-wasip1-threads, loaded through @napi-rs/wasm-runtime): it
// passes the smoke test when forced, and under `npm run test:wasm` the suite itself runs on it.
// Skips, saying why, where the wasm build (npm run build:all -- --only=wasm32-wasi) is absent.
import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ensureBuilt } from './fixtures/mcp/helpers.js'

const root = join(import.meta.dirname, '..')
const built = ['toolwire.wasm32-wasi.wasm', 'toolwire.wasi.cjs', 'wasi-worker.mjs'].every((f) => existsSync(join(root, f)))
if (!built) console.log("test/wasm.test.ts skipped: no wasm build at the repository root (npm run build:all -- --only=wasm32-wasi)")
const forced = process.env.NAPI_RS_FORCE_WASI === 'error' || process.env.NAPI_RS_FORCE_WASI === 'true'

describe.skipIf(!built)('wasm32-wasi fallback', () => {
  it('passes the smoke test when forced, and never loads the native addon', { timeout: 120_000 }, () => {
    ensureBuilt()
    const out = execFileSync(process.execPath, [join(root, 'scripts', 'smoke.mjs')], {
      cwd: root,
      encoding: 'utf8',
      env: { ...process.env, NAPI_RS_FORCE_WASI: 'error', NAPI_RS_NATIVE_LIBRARY_PATH: '/nonexistent/toolwire.node', NODE_NO_WARNINGS: '1' },
    })
    expect(JSON.parse(out.trim().split('\n').pop() ?? '')).toMatchObject({
      binding: 'wasm32-wasi',
      dispositions: { ok: 'success', invalid: 'error', error: 'error', refused: 'refused', cancelled: 'error', pending: 'pending', skipped: 'skipped' },
    })
  })

  it.skipIf(!forced)('is what this suite runs on under npm run test:wasm', () => {
    const binding = createRequire(import.meta.url)('../binding.cjs') as { __napiBindingTarget: string }
    expect(binding.__napiBindingTarget).toBe('wasm32-wasi')
  })
})
