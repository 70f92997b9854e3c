// The cross-built linux-arm64-gnu binary, run where it is meant to run: an arm64 Node.js under
// qemu-user (scripts/emulate.mjs), through the smoke test (scripts/smoke.mjs). Skips, saying
// why, where the binary (npm run build:all) or the emulator is not there.
import { execFileSync, spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ensureBuilt } from './fixtures/mcp/helpers.js'

const root = join(import.meta.dirname, '..')
const check = spawnSync(process.execPath, [join(root, 'scripts', 'emulate.mjs'), '--check'], { encoding: 'utf8' })
const skip = check.status === 0 ? '' : check.stderr.trim() || `emulate.mjs --check exited ${check.status}`
if (skip) console.log(`test/emulated.test.ts skipped: ${skip}`)

describe.skipIf(skip !== '')('linux-arm64-gnu under qemu-user', () => {
  it('loads in an arm64 Node.js and passes the smoke test', { timeout: 300_000 }, () => {
    ensureBuilt()
    const out = execFileSync(process.execPath, [join(root, 'scripts', 'emulate.mjs')], { cwd: root, encoding: 'utf8' })
    const report = JSON.parse(out.trim().split('\n').pop() ?? '')
    expect(report).toMatchObject({
      platform: 'linux-arm64',
      binding: 'native',
      dispositions: { ok: 'success', invalid: 'error', error: 'error', refused: 'refused', cancelled: 'error', pending: 'pending', skipped: 'skipped' },
    })
  })
})
