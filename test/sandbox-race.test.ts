// The demo sandbox against a second local process that swaps files and a directory inside
// the root for symbolic links pointing outside it (test/fixtures/race/flipper.mjs), while
// every demo tool runs. Each result is checked for content from outside the root, and
// the outside files for writes, deletions and creations. Outside accesses must be 0.
//
// TOOLWIRE_RACE_CALLS sets the number of tool calls (default 8,000; the full
// run is TOOLWIRE_RACE_CALLS=100000). Linux only: other platforms have no
// /proc/self/fd to bind the check to the use (see the README's Security section).
import { spawn, type ChildProcess } from 'node:child_process'
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { constants } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createDemoTools } from '../src/demo/index.js'
import { ToolManager } from '../src/runtime/manager.js'

const CALLS = Number(process.env.TOOLWIRE_RACE_CALLS ?? 8_000)
const WORKERS = 8
const MARKER = 'OUTSIDE-MARKER'
const hasProcFd = process.platform === 'linux' && existsSync('/proc/self/fd')

let dir: string
let root: string
let outside: string
let flipper: ChildProcess | undefined
/** The real inside `flipdir`, whatever name it has at the moment (the flipper renames it). */
let flipdirFd: number

const outsideFiles: Record<string, string> = {
  'secret.txt': `${MARKER} secret\n`,
  'settings.json': `{\n  "language": "zz",\n  "note": "${MARKER}"\n}\n`,
  'outdir/a.txt': `${MARKER} a\n`,
  'outdir/settings.json': `{\n  "language": "zz",\n  "note": "${MARKER}"\n}\n`,
  'outdir/doomed.txt': `${MARKER} doomed\n`,
  [`outdir/${MARKER}-ENTRY`]: `${MARKER} entry\n`,
}

function setUp(): void {
  dir = mkdtempSync(join(tmpdir(), 'toolwire-race-'))
  root = join(dir, 'root')
  outside = join(dir, 'outside')
  mkdirSync(join(root, 'flipdir'), { recursive: true })
  mkdirSync(join(outside, 'outdir'), { recursive: true })
  for (const [name, content] of Object.entries(outsideFiles)) writeFileSync(join(outside, name), content)
  writeFileSync(join(root, 'flip.txt'), 'inside text\n')
  writeFileSync(join(root, 'flipset.json'), '{\n  "language": "en"\n}\n')
  writeFileSync(join(root, 'flipdir', 'a.txt'), 'inside a\n')
  writeFileSync(join(root, 'flipdir', 'settings.json'), '{\n  "language": "en"\n}\n')
  writeFileSync(join(root, 'flipdir', 'doomed.txt'), 'inside doomed\n')
  flipdirFd = openSync(join(root, 'flipdir'), constants.O_RDONLY | constants.O_DIRECTORY)
}

/** Counts (and repairs) every change to the files outside the root. */
function outsideWrites(): number {
  let changed = 0
  for (const [name, content] of Object.entries(outsideFiles)) {
    let now: string | undefined
    try {
      now = readFileSync(join(outside, name), 'utf8')
    } catch {
      now = undefined
    }
    if (now !== content) {
      changed++
      writeFileSync(join(outside, name), content)
    }
  }
  for (const d of ['', 'outdir']) {
    const expected = Object.keys(outsideFiles)
      .filter((n) => (d === '' ? !n.includes('/') : n.startsWith(`${d}/`)))
      .map((n) => n.slice(d === '' ? 0 : d.length + 1))
    for (const name of readdirSync(join(outside, d))) {
      if (name === 'outdir' || expected.includes(name)) continue
      changed++
      rmSync(join(outside, d, name), { force: true, recursive: true })
    }
  }
  return changed
}

async function startFlipper(): Promise<ChildProcess> {
  const child = spawn(process.execPath, [join(import.meta.dirname, 'fixtures', 'race', 'flipper.mjs'), root, outside], {
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const lines = createInterface({ input: child.stdout! })
  await new Promise<void>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`flipper exited early (${code})`)))
    lines.once('line', (line) => (line === 'ready' ? resolve() : reject(new Error(`flipper said ${line}`))))
  })
  return child
}

async function stopFlipper(child: ChildProcess): Promise<number> {
  const lines = createInterface({ input: child.stdout! })
  const rounds = new Promise<number>((resolve) => {
    lines.on('line', (line) => {
      const m = /^rounds (\d+)$/.exec(line)
      if (m) resolve(Number(m[1]))
    })
    child.once('exit', () => resolve(-1))
  })
  child.kill('SIGTERM')
  return rounds
}

beforeAll(() => {
  if (hasProcFd) setUp()
})
afterAll(() => {
  if (flipper && flipper.exitCode === null) flipper.kill('SIGKILL')
  if (hasProcFd) {
    closeSync(flipdirFd)
    rmSync(dir, { recursive: true, force: true })
  }
})

interface Tally {
  calls: number
  outsideReads: number
  outsideListings: number
  outsideWrites: number
  byTool: Record<string, number>
  /** Calls that did their work inside the root, by tool: the tools still work under the race. */
  insideOk: Record<string, number>
}

describe.skipIf(!hasProcFd)('sandbox race', () => {
  it(`no access outside the root while a second process flips symlinks (${CALLS} calls)`, async () => {
    const tm = new ToolManager()
    for (const tool of await createDemoTools({ root, settingsFile: 'flipdir/settings.json' })) tm.register(tool)
    const direct = new ToolManager()
    for (const tool of await createDemoTools({ root, settingsFile: 'flipset.json' })) if (tool.name === 'edit_settings') direct.register(tool)

    const tally: Tally = { calls: 0, outsideReads: 0, outsideListings: 0, outsideWrites: 0, byTool: {}, insideOk: {} }
    const worked = (tool: string): void => {
      tally.insideOk[tool] = (tally.insideOk[tool] ?? 0) + 1
    }
    const outsideHit = (tool: string, kind: 'outsideReads' | 'outsideListings' | 'outsideWrites', n = 1): void => {
      if (n === 0) return
      tally[kind] += n
      tally.byTool[tool] = (tally.byTool[tool] ?? 0) + n
    }
    const shows = (value: unknown): boolean => JSON.stringify(value).includes(MARKER)
    let language = 0
    /** A fresh language tag each time, so every edit_settings call writes. */
    const nextLanguage = (): string => {
      const n = language++
      const letter = (k: number): string => String.fromCharCode(97 + (k % 26))
      return `${letter(n)}${letter(Math.floor(n / 26))}-${letter(Math.floor(n / 676)).toUpperCase()}${letter(Math.floor(n / 17576)).toUpperCase()}`
    }

    const steps: (() => Promise<void>)[] = [
      async () => {
        tally.calls++
        const r = await tm.call('read_file', { path: 'flip.txt' })
        if (shows(r)) outsideHit('read_file', 'outsideReads')
        else if (r.status === 'ok' && r.data === 'inside text\n') worked('read_file')
      },
      async () => {
        tally.calls++
        const r = await tm.call('read_file', { path: 'flipdir/a.txt' })
        if (shows(r)) outsideHit('read_file', 'outsideReads')
        else if (r.status === 'ok' && r.data === 'inside a\n') worked('read_file flipdir')
      },
      async () => {
        tally.calls++
        const r = await tm.call('list_dir', { path: 'flipdir' })
        if (shows(r)) outsideHit('list_dir', 'outsideListings')
        else if (r.status === 'ok' && JSON.stringify(r.data).includes('"a.txt"')) worked('list_dir')
      },
      async () => {
        tally.calls++
        const r = await tm.call('search_text', { query: 'a', path: 'flipdir' })
        if (shows(r)) outsideHit('search_text', 'outsideReads')
        else if (r.status === 'ok' && JSON.stringify(r.data).includes('inside a')) worked('search_text')
        tally.calls++
        const f = await tm.call('search_text', { query: 'e', path: 'flip.txt' })
        if (shows(f)) outsideHit('search_text', 'outsideReads')
      },
      async () => {
        for (const [m, name] of [
          [tm, 'flipdir/settings.json'],
          [direct, 'flipset.json'],
        ] as const) {
          tally.calls++
          const r = await m.call('edit_settings', { language: nextLanguage() })
          // the before-value of a file outside the root is "zz"
          if (JSON.stringify(r).includes('"before":"zz"')) outsideHit(`edit_settings ${name}`, 'outsideReads')
          else if (r.status === 'ok' && JSON.stringify(r.data).includes('"/language"')) worked(`edit_settings ${name}`)
          outsideHit(`edit_settings ${name}`, 'outsideWrites', outsideWrites())
        }
      },
      async () => {
        tally.calls++
        const asked = await tm.call('delete_file', { path: 'flipdir/doomed.txt' })
        if (asked.status === 'needs_confirmation') {
          tally.calls++
          const done = await tm.confirm(asked.confirmId, { approve: true })
          if (done.status === 'ok') {
            worked('delete_file')
            tally.calls++
            if ((await tm.undo(done.callId!)).status === 'ok') worked('delete_file undo')
          }
        }
        outsideHit('delete_file', 'outsideWrites', outsideWrites())
        // put the inside file back if the undo could not (written through the real directory)
        try {
          writeFileSync(`/proc/self/fd/${flipdirFd}/doomed.txt`, 'inside doomed\n', { flag: 'wx' })
        } catch {
          // still there
        }
      },
    ]

    flipper = await startFlipper()
    const started = performance.now()
    let next = 0
    const worker = async (offset: number): Promise<void> => {
      let i = offset
      while (tally.calls < CALLS) {
        await steps[(i++ + next++) % steps.length]!()
      }
    }
    await Promise.all(Array.from({ length: WORKERS }, (_, k) => worker(k)))
    const seconds = (performance.now() - started) / 1000
    const rounds = await stopFlipper(flipper)
    outsideHit('final check', 'outsideWrites', outsideWrites())
    const outsideAccesses = tally.outsideReads + tally.outsideListings + tally.outsideWrites
    console.log(
      `sandbox race: ${tally.calls} calls in ${seconds.toFixed(1)} s, ${rounds} flipper rounds, ` +
        `outside accesses ${outsideAccesses} (reads ${tally.outsideReads}, listings ${tally.outsideListings}, writes ${tally.outsideWrites}) ` +
        `${JSON.stringify(tally.byTool)}; done inside ${JSON.stringify(tally.insideOk)}`,
    )
    expect(rounds).toBeGreaterThan(0)
    expect(tally.calls).toBeGreaterThanOrEqual(CALLS)
    expect(tally.byTool).toEqual({})
    for (const tool of ['read_file', 'read_file flipdir', 'list_dir', 'search_text', 'edit_settings flipdir/settings.json', 'edit_settings flipset.json', 'delete_file', 'delete_file undo']) {
      expect(tally.insideOk[tool] ?? 0, tool).toBeGreaterThan(0)
    }
    expect(outsideAccesses).toBe(0)
  }, 600_000)
})
