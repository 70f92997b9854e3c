// The demo toolset in process: sandbox containment, each tool, redaction and undo.
import { execFileSync } from 'node:child_process'
import { existsSync, linkSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createDemoTools, MAX_PATH_BYTES, Sandbox, SandboxError } from '../src/demo/index.js'
import { ToolManager } from '../src/runtime/manager.js'
import { toModel } from '../src/render/model.js'
import { canonicalOf } from '../src/core/view.js'
import { makeSandbox } from './fixtures/mcp/helpers.js'

let box: ReturnType<typeof makeSandbox>
let tm: ToolManager

beforeAll(async () => {
  box = makeSandbox()
  tm = new ToolManager()
  for (const tool of await createDemoTools({ root: box.root, maxTextBytes: 64 })) tm.register(tool)
})
afterAll(() => box.cleanup())

describe('Sandbox', () => {
  it('resolves paths inside the root and refuses every way out', async () => {
    const sb = await Sandbox.open(box.root)
    expect((await sb.resolve('sub/a.txt')).rel).toBe('sub/a.txt')
    expect((await sb.resolve('.')).rel).toBe('.')
    expect((await sb.resolve('sub/../notes.txt')).rel).toBe('notes.txt')
    expect((await sb.resolve('inside-link')).rel).toBe('notes.txt')
    expect((await sb.resolve('new/dir/file.txt', { mustExist: false })).rel).toBe('new/dir/file.txt')
    for (const path of ['../outside/secret.txt', '..', '/etc/passwd', 'escape-link', 'escape-dir/secret.txt', 'escape-dir/missing.txt', 'sub/../../x']) {
      const err = await sb.resolve(path, { mustExist: false }).catch((e: unknown) => e)
      expect(err, path).toBeInstanceOf(SandboxError)
      expect((err as SandboxError).code, path).toBe('not_allowed')
    }
    await expect(sb.resolve('missing.txt')).rejects.toMatchObject({ code: 'not_found' })
    await expect(sb.resolve('a\0b')).rejects.toMatchObject({ code: 'invalid_path' })
  })
  for (const checkDescriptors of [true, false]) {
    it(`opens through checked descriptors and refuses every way out (${checkDescriptors ? '/proc/self/fd' : 'portable fallback'})`, async () => {
      const sb = await Sandbox.open(box.root, { checkDescriptors })
      if (checkDescriptors && process.platform === 'linux') expect(sb.checksDescriptors).toBe(true)
      if (!checkDescriptors) expect(sb.checksDescriptors).toBe(false)
      const notes = await sb.openPath('inside-link')
      expect(notes).toMatchObject({ rel: 'notes.txt' })
      expect(notes.stats.isFile()).toBe(true)
      await notes.close()
      const sub = await sb.openPath('sub/../sub')
      expect(sub.rel).toBe('sub')
      expect((await sb.readdir(sub)).map((d) => d.name).sort()).toEqual(['a.txt', 'deeper'])
      const a = await sb.openChild(sub, 'a.txt')
      expect(a.rel).toBe('sub/a.txt')
      await a.close()
      await sub.close()
      for (const path of ['escape-link', 'escape-dir', 'escape-dir/secret.txt', '../outside/secret.txt', '/etc/passwd']) {
        await expect(sb.openPath(path), path).rejects.toMatchObject({ code: 'not_allowed' })
      }
      await expect(sb.openParent('escape-dir/settings.json')).rejects.toMatchObject({ code: 'not_allowed' })
      const { dir, name } = await sb.openParent('escape-link')
      expect([dir.rel, name]).toEqual(['.', 'escape-link'])
      // a final link is never followed by openChild, even one that stays inside
      await expect(sb.openChild(dir, 'escape-link')).rejects.toMatchObject({ code: 'not_allowed' })
      await expect(sb.openChild(dir, 'inside-link', { write: 'create' })).rejects.toMatchObject({ code: 'not_allowed' })
      await expect(sb.openChild(dir, 'escape-dir', { directory: true })).rejects.toMatchObject({ code: 'not_allowed' })
      await expect(sb.openChild(dir, '..')).rejects.toMatchObject({ code: 'invalid_path' })
      await expect(sb.openPath('missing.txt')).rejects.toMatchObject({ code: 'not_found' })
      await dir.close()
      // unlinkChild removes only the entry it was shown
      const doomed = `doomed-${checkDescriptors}.txt`
      writeFileSync(join(box.root, 'sub', doomed), 'x')
      const parent = await sb.openParent(`sub/${doomed}`)
      const file = await sb.openChild(parent.dir, parent.name)
      const other = await sb.openPath('notes.txt')
      await other.close()
      await expect(sb.unlinkChild(parent.dir, parent.name, other.stats)).rejects.toMatchObject({ code: 'not_found' })
      expect(existsSync(join(box.root, 'sub', doomed))).toBe(true)
      await sb.unlinkChild(parent.dir, parent.name, file.stats)
      expect(existsSync(join(box.root, 'sub', doomed))).toBe(false)
      await file.close()
      await parent.dir.close()
    })
  }

  it('refuses a 200 KB path as invalid_path and resolves long missing paths linearly', async () => {
    const sb = await Sandbox.open(box.root)
    const huge = 'nope/'.repeat(40_000) // 200 KB: the old ancestor walk took close to a minute here
    await expect(sb.resolve(huge, { mustExist: false })).rejects.toMatchObject({ code: 'invalid_path' })
    await expect(sb.openPath(huge)).rejects.toMatchObject({ code: 'invalid_path' })
    await expect(sb.openParent(huge)).rejects.toMatchObject({ code: 'invalid_path' })
    // 1,801 missing components: found missing at the first one, in one walk
    const deep = 'n/'.repeat(1800) + 'x'
    await expect(sb.resolve(deep)).rejects.toMatchObject({ code: 'not_found' })
    expect((await sb.resolve(deep, { mustExist: false })).rel).toBe(deep)
    await expect(sb.openPath(deep)).rejects.toMatchObject({ code: 'not_found' })
    // under the sandbox's limit but over the system's once joined to the root
    await expect(sb.openPath('n/'.repeat(2047) + 'x')).rejects.toMatchObject({ code: expect.stringMatching(/^(invalid_path|not_found)$/) })
    // multi-byte characters count in bytes
    await expect(sb.openPath('é'.repeat(MAX_PATH_BYTES / 2 + 1))).rejects.toMatchObject({ code: 'invalid_path' })
  })
})

describe('demo tools', () => {
  it('read_file returns text, truncates long text and marks it untrusted', async () => {
    const r = await tm.call('read_file', { path: 'notes.txt' })
    expect(r).toMatchObject({ status: 'ok', data: 'hello world\nthe needle is here\n' })
    expect(toModel(r).output).toContain('<untrusted-content>')
    writeFileSync(join(box.root, 'long.txt'), 'x'.repeat(200))
    const long = await tm.call('read_file', { path: 'long.txt' })
    expect(long.status === 'ok' && long.data).toContain('[truncated: showing the first 64 of 200 bytes]')
  })

  it('read_file attaches images and PDFs as content parts', async () => {
    const png = await tm.call('read_file', { path: 'chart.png' })
    const size = readFileSync(join(box.root, 'chart.png')).length
    expect(png).toMatchObject({ status: 'ok', data: `chart.png (image/png, ${size} bytes)` })
    const parts = canonicalOf(png)!.parts()!
    expect(parts).toEqual([{ type: 'image', mimeType: 'image/png', data: readFileSync(join(box.root, 'chart.png')).toString('base64'), name: 'chart.png' }])
    const pdf = await tm.call('read_file', { path: 'report.pdf' })
    expect(canonicalOf(pdf)!.parts()![0]).toMatchObject({ type: 'file', mimeType: 'application/pdf' })
  })

  it('read_file refuses binary files, directories and escapes; a missing file is not_found', async () => {
    expect(await tm.call('read_file', { path: 'blob.bin' })).toMatchObject({ status: 'refused', code: 'unsupported_file' })
    expect(await tm.call('read_file', { path: 'sub' })).toMatchObject({ status: 'refused', code: 'not_a_file' })
    expect(await tm.call('read_file', { path: '../outside/secret.txt' })).toMatchObject({ status: 'refused', code: 'not_allowed' })
    expect(await tm.call('read_file', { path: 'escape-link' })).toMatchObject({ status: 'refused', code: 'not_allowed' })
    expect(await tm.call('read_file', { path: 'nope.txt' })).toMatchObject({ status: 'error', kind: 'not_found' })
    expect(await tm.call('read_file', { path: 1 })).toMatchObject({ status: 'invalid' })
  })

  it('list_dir lists entries with type and size', async () => {
    const r = await tm.call('list_dir', { path: 'sub' })
    expect(r).toEqual(expect.objectContaining({ status: 'ok', data: { path: 'sub', entries: [{ name: 'a.txt', type: 'file', size: 31 }, { name: 'deeper', type: 'dir' }] } }))
    const top = await tm.call('list_dir', {})
    expect(top.status === 'ok' && (top.data as { entries: { name: string; type: string }[] }).entries).toContainEqual({ name: 'escape-dir', type: 'symlink' })
    expect(await tm.call('list_dir', { path: 'escape-dir' })).toMatchObject({ status: 'refused', code: 'not_allowed' })
  })

  it('search_text skips binary files, node_modules and .git, never follows links out, and bounds its output', async () => {
    const r = await tm.call('search_text', { query: 'needle' })
    if (r.status !== 'ok') throw new Error(`expected ok, got ${JSON.stringify(r)}`)
    const data = r.data as { matches: { path: string; line: number }[]; truncated: boolean }
    expect(data.matches.map((m) => `${m.path}:${m.line}`)).toEqual(['notes.txt:2', 'sub/a.txt:1', 'sub/a.txt:3', 'sub/deeper/b.md:1'])
    expect(data.truncated).toBe(false)
    const bounded = await tm.call('search_text', { query: 'needle', maxMatches: 2 })
    expect(bounded).toMatchObject({ status: 'ok', data: { truncated: true, matches: [{ path: 'notes.txt' }, { path: 'sub/a.txt' }] } })
    const cased = await tm.call('search_text', { query: 'NEEDLE', caseSensitive: true, path: 'sub' })
    expect(cased).toMatchObject({ status: 'ok', data: { matches: [{ path: 'sub/a.txt', line: 3, text: 'NEEDLE two' }] } })
    expect(await tm.call('search_text', { query: 'x', path: '../outside' })).toMatchObject({ status: 'refused', code: 'not_allowed' })
    expect(await tm.call('search_text', { query: 'x', maxMatches: 0 })).toMatchObject({ status: 'invalid' })
  })

  it('edit_settings fills the form, redacts sensitive fields and can be undone', async () => {
    const path = join(box.root, 'settings.json')
    const before = readFileSync(path, 'utf8')
    const r = await tm.call('edit_settings', { theme: 'dark', language: 'en', password: 'new-password', api_key: 'sk-123' })
    expect(r).toMatchObject({
      status: 'ok',
      data: {
        changes: [
          { path: '/theme', before: 'light', after: 'dark' },
          { path: '/password', before: '[redacted]', after: '[redacted]' },
          { path: '/api_key', after: '[redacted]' },
        ],
        skipped: ['language'],
      },
    })
    expect(JSON.stringify(r)).not.toMatch(/new-password|old-password|sk-123/)
    expect(JSON.parse(readFileSync(path, 'utf8'))).toEqual({ theme: 'dark', language: 'en', password: 'new-password', api_key: 'sk-123' })
    expect((await tm.undo(r.callId!)).status).toBe('ok')
    expect(JSON.parse(readFileSync(path, 'utf8'))).toEqual(JSON.parse(before))
    expect(await tm.call('edit_settings', { theme: 'blue' })).toMatchObject({ status: 'invalid' })
    expect(await tm.call('edit_settings', { colour: 'red' })).toMatchObject({ status: 'invalid' })
  })

  it('edit_settings refuses a settings file that escapes the sandbox', async () => {
    const other = new ToolManager()
    for (const tool of await createDemoTools({ root: box.root, settingsFile: 'escape-dir/settings.json' })) other.register(tool)
    expect(await other.call('edit_settings', { theme: 'dark' })).toMatchObject({ status: 'refused', code: 'not_allowed' })
    expect(existsSync(join(box.outside, 'settings.json'))).toBe(false)
  })

  it('edit_settings refuses to write through a dangling symlink, whether the file or a directory on the way', async () => {
    symlinkSync(join(box.outside, 'pwned.json'), join(box.root, 'dangling-settings.json'))
    symlinkSync(join(box.outside, 'no-such-dir'), join(box.root, 'dangling-dir'))
    for (const settingsFile of ['dangling-settings.json', 'dangling-dir/settings.json']) {
      const other = new ToolManager()
      for (const tool of await createDemoTools({ root: box.root, settingsFile })) other.register(tool)
      expect(await other.call('edit_settings', { theme: 'dark' }), settingsFile).toMatchObject({ status: 'refused', code: 'not_allowed' })
    }
    expect(existsSync(join(box.outside, 'pwned.json'))).toBe(false)
    expect(existsSync(join(box.outside, 'no-such-dir'))).toBe(false)
  })

  it('delete_file needs confirmation, deletes on approval and can be undone', async () => {
    const path = join(box.root, 'doomed.txt')
    writeFileSync(path, 'bye')
    const asked = await tm.call('delete_file', { path: 'doomed.txt' })
    expect(asked).toMatchObject({ status: 'needs_confirmation', summary: 'Delete doomed.txt' })
    expect(existsSync(path)).toBe(true)
    expect(tm.manifest().find((t) => t.name === 'delete_file')).toMatchObject({ hints: { destructive: true }, needsConfirmation: true })
    if (asked.status !== 'needs_confirmation') throw new Error('unreachable')
    const done = await tm.confirm(asked.confirmId, { approve: true })
    expect(done).toMatchObject({ status: 'ok', data: { deleted: 'doomed.txt', bytes: 3 } })
    expect(existsSync(path)).toBe(false)
    expect((await tm.undo(done.callId!)).status).toBe('ok')
    expect(readFileSync(path, 'utf8')).toBe('bye')
  })

  it('delete_file refuses escapes even after approval', async () => {
    symlinkSync(join(box.outside, 'secret.txt'), join(box.root, 'another-link'))
    for (const path of ['../outside/secret.txt', 'another-link', 'escape-dir/secret.txt']) {
      const asked = await tm.call('delete_file', { path })
      if (asked.status !== 'needs_confirmation') throw new Error(`expected a confirmation for ${path}`)
      expect(await tm.confirm(asked.confirmId, { approve: true })).toMatchObject({ status: 'refused', code: 'not_allowed' })
    }
    expect(readFileSync(join(box.outside, 'secret.txt'), 'utf8')).toBe('top secret needle\n')
  })
})

describe('demo tools at the edges of the sandbox', () => {
  it('list_dir and read_file of a 200 KB path return invalid at once (schema and sandbox)', async () => {
    const huge = 'nope/'.repeat(40_000)
    for (const tool of ['list_dir', 'read_file', 'search_text', 'delete_file']) {
      const r = await tm.call(tool, tool === 'search_text' ? { query: 'x', path: huge } : { path: huge })
      expect(r, tool).toMatchObject({ status: 'invalid' })
    }
    // past the schema (a caller running the tool directly): the sandbox refuses it too
    const tools = await createDemoTools({ root: box.root })
    const listDir = tools.find((t) => t.name === 'list_dir')!
    const r = await (listDir.run as (input: { path: string }) => Promise<unknown>)({ path: huge })
    expect(JSON.stringify(r)).toContain(`longer than ${MAX_PATH_BYTES} bytes`)
  })

  it('read_file refuses a FIFO without blocking on it (the open comes before the type check)', async () => {
    const fifo = join(box.root, 'pipe')
    try {
      execFileSync('mkfifo', [fifo])
    } catch {
      return // no mkfifo on this platform
    }
    expect(await tm.call('read_file', { path: 'pipe' })).toMatchObject({ status: 'refused', code: 'not_a_file' })
    const search = await tm.call('search_text', { query: 'needle', path: '.' })
    expect(search).toMatchObject({ status: 'ok' })
  })

  it('edit_settings refuses a settings file with a second name (a hard link to a file outside)', async () => {
    const outsideSettings = join(box.outside, 'linked-settings.json')
    writeFileSync(outsideSettings, '{"theme":"light"}\n')
    linkSync(outsideSettings, join(box.root, 'hard-settings.json'))
    const other = new ToolManager()
    for (const tool of await createDemoTools({ root: box.root, settingsFile: 'hard-settings.json' })) other.register(tool)
    expect(await other.call('edit_settings', { theme: 'dark' })).toMatchObject({ status: 'refused', code: 'not_allowed' })
    expect(readFileSync(outsideSettings, 'utf8')).toBe('{"theme":"light"}\n')
  })

  it('edit_settings creates a missing settings file; a missing directory is not_found', async () => {
    mkdirSync(join(box.root, 'conf'))
    const other = new ToolManager()
    for (const tool of await createDemoTools({ root: box.root, settingsFile: 'conf/new.json' })) other.register(tool)
    expect(await other.call('edit_settings', { theme: 'dark' })).toMatchObject({ status: 'ok' })
    expect(JSON.parse(readFileSync(join(box.root, 'conf', 'new.json'), 'utf8'))).toEqual({ theme: 'dark' })
    const missing = new ToolManager()
    for (const tool of await createDemoTools({ root: box.root, settingsFile: 'no-dir/new.json' })) missing.register(tool)
    expect(await missing.call('edit_settings', { theme: 'dark' })).toMatchObject({ status: 'error', kind: 'not_found' })
  })

  it('delete_file removes neither a link inside the root nor its target', async () => {
    const asked = await tm.call('delete_file', { path: 'inside-link' })
    if (asked.status !== 'needs_confirmation') throw new Error('expected a confirmation')
    expect(await tm.confirm(asked.confirmId, { approve: true })).toMatchObject({ status: 'refused', code: 'not_allowed' })
    expect(readFileSync(join(box.root, 'notes.txt'), 'utf8')).toBe('hello world\nthe needle is here\n')
    expect(readFileSync(join(box.root, 'inside-link'), 'utf8')).toBe('hello world\nthe needle is here\n')
  })
})
