// The README's examples run as written (against the built package, through its own name).
import { execFileSync } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { ensureBuilt } from './fixtures/mcp/helpers.js'

const root = join(import.meta.dirname, '..')
const run = (file: string): string => execFileSync(process.execPath, [join(root, 'examples', file)], { cwd: root, encoding: 'utf8' })

describe('examples', () => {
  beforeAll(() => ensureBuilt(), 120_000)

  it('quickstart.mjs', () => {
    const out = run('quickstart.mjs')
    expect(out).toContain('"status":"success"')
    expect(out).toContain('"is_error":true')
  })
  it('lifecycle.mjs', () => {
    expect(run('lifecycle.mjs')).toContain('lifecycle example ok')
  })
  it('no example waits on a timer for something to happen', () => {
    for (const file of readdirSync(join(root, 'examples')).filter((f) => f.endsWith('.mjs'))) {
      expect(readFileSync(join(root, 'examples', file), 'utf8'), file).not.toMatch(/setTimeout|setInterval|timers\/promises|\bsleep\(/)
    }
  })
  it('telemetry.mjs', () => {
    const out = run('telemetry.mjs')
    expect(out).toContain('"error.type":"other"')
    expect(out).toContain('toolwire_tool_calls_total{tool="search",status="error"} 1')
    expect(out).toMatch(/record: \{"call_id":"call_42","tool":"search","status":"error","error_kind":"other"/)
  })
})
