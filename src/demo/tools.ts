/**
 * The built-in demo toolset `toolwire serve` runs without a module: five file tools
 * confined to one sandbox directory (`read_file`, `list_dir`, `search_text`,
 * `edit_settings`, `delete_file`).
 */
import { ftruncate, read, write } from 'node:fs'
import { promisify } from 'node:util'
import { detectMimeType, sniffMimeType, type AttachedPart } from '../core/attach.js'
import { createFormTool } from '../runtime/form.js'
import { errorResult, invalid, ok, refuse, type ModelResult } from '../core/helpers.js'
import type { ToolContext, ToolDefinition } from '../runtime/manager.js'
import { toolError, ToolResult } from '../core/result.js'
import type { JsonValue } from '../core/types.js'
import { MAX_PATH_BYTES, Sandbox, SandboxError, type SandboxHandle } from './sandbox.js'

const pRead = promisify(read)
const pWrite = promisify(write)
const pFtruncate = promisify(ftruncate)

const SCHEMA = 'https://json-schema.org/draft/2020-12/schema'

/** Options of `createDemoTools`. */
export interface DemoToolsOptions {
  /** The sandbox directory (default: the current directory). */
  readonly root?: string
  /** The settings file `edit_settings` fills, relative to the root (default `settings.json`). */
  readonly settingsFile?: string
  /** The largest text `read_file` returns, in bytes (default 256 KiB; longer files are truncated). */
  readonly maxTextBytes?: number
  /** The largest media file `read_file` attaches, in bytes (default 10 MiB). */
  readonly maxMediaBytes?: number
}

/** Directories `search_text` never enters. */
export const SEARCH_SKIP_DIRS: ReadonlySet<string> = new Set(['node_modules', '.git'])
const SEARCH_MAX_FILE_BYTES = 2 * 1024 * 1024
const SEARCH_MAX_FILES = 10_000
const SEARCH_MAX_LINE = 240
const SETTINGS_MAX_BYTES = 1024 * 1024
const UNDO_MAX_BYTES = 10 * 1024 * 1024

/** A refusal or a not-found result for a sandbox error. */
function sandboxFailure(err: unknown): unknown {
  if (err instanceof SandboxError) {
    if (err.code === 'not_found') return ToolResult.failed(toolError('not_found', err.message))
    if (err.code === 'invalid_path') return invalid([{ path: '/path', message: err.message }])
    return refuse('not_allowed', err.message)
  }
  throw err
}

/** A `path` input: relative to the sandbox root, at most MAX_PATH_BYTES long. */
const pathSchema = (description: string, extra: Record<string, unknown> = {}) =>
  ({ type: 'string', minLength: 1, maxLength: MAX_PATH_BYTES, ...extra, description }) as const

/** The input of the tools that take one file: `{ path }`, relative to the sandbox root. */
const FILE_PATH_SCHEMA = {
  $schema: SCHEMA,
  type: 'object',
  properties: { path: pathSchema('The file, relative to the sandbox root') },
  required: ['path'],
  additionalProperties: false,
} as const

/**
 * Opens what a tool's `path` names inside the sandbox (checked on the open descriptor)
 * and, when `kind` is given, checks that it is a regular file or a directory. A failure
 * is returned as the tool's result; otherwise the caller closes the handle.
 */
async function openIn(sandbox: Sandbox, path: string, kind?: 'file' | 'directory'): Promise<{ handle: SandboxHandle } | { failure: unknown }> {
  let handle: SandboxHandle
  try {
    handle = await sandbox.openPath(path)
  } catch (err) {
    return { failure: sandboxFailure(err) }
  }
  const { stats, rel } = handle
  let failure: unknown
  if (kind === 'file' && !stats.isFile()) failure = refuse('not_a_file', `${rel} is not a regular file`)
  if (kind === 'directory' && !stats.isDirectory()) failure = refuse('not_a_directory', `${rel} is not a directory`)
  if (failure === undefined) return { handle }
  await handle.close()
  return { failure }
}

/** Whether `bytes` look like text: no NUL byte and valid UTF-8. */
function looksLikeText(bytes: Uint8Array): boolean {
  if (bytes.includes(0)) return false
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes)
    return true
  } catch {
    // a multi-byte sequence cut at the end of a prefix is still text
    return bytes.length > 4 && looksLikeText(bytes.subarray(0, bytes.length - 4)) && !bytes.subarray(bytes.length - 4).includes(0)
  }
}

/** Reads at most `max` bytes from the start of the open file `fd`. */
async function readAt(fd: number | undefined, max: number): Promise<Buffer> {
  if (fd === undefined) throw new Error('not an open file')
  const buffer = Buffer.alloc(max)
  let length = 0
  while (length < buffer.length) {
    const { bytesRead } = await pRead(fd, buffer, length, buffer.length - length, length)
    if (bytesRead === 0) break
    length += bytesRead
  }
  return buffer.subarray(0, length)
}

/** Replaces the content of the open file `fd` with `bytes`. */
async function writeAll(fd: number | undefined, bytes: Uint8Array): Promise<void> {
  if (fd === undefined) throw new Error('not an open file')
  await pFtruncate(fd, 0)
  let done = 0
  while (done < bytes.length) {
    const { bytesWritten } = await pWrite(fd, bytes, done, bytes.length - done, done)
    done += bytesWritten
  }
}

/** A file written by a tool must be one regular file with one name (a hard link could reach outside). */
function checkWritable(handle: SandboxHandle): void {
  if (!handle.stats.isFile()) throw new SandboxError('not_allowed', `not_allowed: ${handle.rel} is not a regular file`, handle.rel)
  if (handle.stats.nlink > 1) {
    throw new SandboxError('not_allowed', `not_allowed: ${handle.rel} has more than one name (a hard link); the demo tools do not write to it`, handle.rel)
  }
}

/** Opens the entry `path` names without following a final link; the caller closes both handles. */
async function openEntry(
  sandbox: Sandbox,
  path: string,
  write: 'create' | 'exclusive' | false,
): Promise<{ dir: SandboxHandle; file: SandboxHandle; name: string }> {
  const { dir, name } = await sandbox.openParent(path)
  try {
    return { dir, file: await sandbox.openChild(dir, name, { write }), name }
  } catch (err) {
    await dir.close()
    throw err
  }
}

function mediaPart(bytes: Buffer, name: string): AttachedPart {
  const mimeType = detectMimeType(bytes, name)
  const type = mimeType.startsWith('image/') ? 'image' : mimeType.startsWith('audio/') ? 'audio' : 'file'
  return Object.freeze({ type, mimeType, data: bytes.toString('base64'), name })
}

const isMedia = (mime: string | undefined): mime is string =>
  mime !== undefined && (mime.startsWith('image/') || mime.startsWith('audio/') || mime === 'application/pdf')

const byName = (a: { name: string }, b: { name: string }): number => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)

/**
 * The demo tools over the sandbox at `options.root`. Every file and directory is read,
 * listed or written through a descriptor whose place was checked after it was opened,
 * so a concurrent swap of a path for a symbolic link cannot lead a tool outside the root.
 *
 * @example
 * const tm = new ToolManager()
 * for (const tool of await createDemoTools({ root: '/tmp/work' })) tm.register(tool)
 */
export async function createDemoTools(options: DemoToolsOptions = {}): Promise<ToolDefinition<never>[]> {
  const sandbox = await Sandbox.open(options.root ?? process.cwd())
  const maxText = options.maxTextBytes ?? 256 * 1024
  const maxMedia = options.maxMediaBytes ?? 10 * 1024 * 1024
  const settingsFile = options.settingsFile ?? 'settings.json'

  const readFileTool: ToolDefinition<{ path: string }> = {
    name: 'read_file',
    description:
      'Read a file inside the sandbox. Text files come back as text (long files truncated); images, audio and PDF files come back as attached content.',
    inputSchema: FILE_PATH_SCHEMA,
    hints: { readOnly: true, idempotent: true, untrustedContent: true },
    async run({ path }) {
      const opened = await openIn(sandbox, path, 'file')
      if ('failure' in opened) return opened.failure
      const { handle } = opened
      try {
        const { rel, fd } = handle
        const size = handle.stats.size
        const bytes = await readAt(fd, Math.min(size, Math.max(maxText, 64)))
        const sniffed = sniffMimeType(bytes)
        if (isMedia(sniffed)) {
          if (size > maxMedia) return refuse('too_large', `${rel} is ${size} bytes, over the ${maxMedia}-byte limit for media`)
          // the same descriptor: at most maxMedia + 1 bytes, so a file that grew is refused
          const all = await readAt(fd, maxMedia + 1)
          if (all.length > maxMedia) return refuse('too_large', `${rel} is over the ${maxMedia}-byte limit for media`)
          const part = mediaPart(all, rel.slice(rel.lastIndexOf('/') + 1))
          const result: ModelResult = { output: `${part.name} (${part.mimeType}, ${all.length} bytes)`, isError: false, parts: [part] }
          return result
        }
        if (!looksLikeText(bytes)) {
          return refuse('unsupported_file', `${rel} is a binary file (${size} bytes); only text, image, audio and PDF files can be read`)
        }
        let text = bytes.subarray(0, Math.min(bytes.length, maxText)).toString('utf8')
        if (size > maxText) text = text.replace(/\uFFFD$/, '') + `\n[truncated: showing the first ${maxText} of ${size} bytes]`
        const result: ModelResult = { output: text, isError: false }
        return result
      } finally {
        await handle.close()
      }
    },
  }

  const listDirTool: ToolDefinition<{ path?: string }> = {
    name: 'list_dir',
    description: 'List a directory inside the sandbox: each entry with its type and size in bytes.',
    inputSchema: {
      $schema: SCHEMA,
      type: 'object',
      properties: { path: pathSchema('The directory, relative to the sandbox root (default: the root)', { default: '.' }) },
      additionalProperties: false,
    },
    outputSchema: {
      $schema: SCHEMA,
      type: 'object',
      properties: {
        path: { type: 'string' },
        entries: { type: 'array', items: { $ref: '#/$defs/entry' } },
      },
      required: ['path', 'entries'],
      $defs: {
        entry: {
          type: 'object',
          properties: {
            name: { type: 'string' },
            type: { enum: ['file', 'dir', 'symlink', 'other'] },
            size: { type: 'integer', minimum: 0 },
          },
          required: ['name', 'type'],
          additionalProperties: false,
        },
      },
      additionalProperties: false,
    },
    hints: { readOnly: true, idempotent: true },
    async run({ path = '.' }) {
      const opened = await openIn(sandbox, path, 'directory')
      if ('failure' in opened) return opened.failure
      const { handle } = opened
      try {
        const dirents = (await sandbox.readdir(handle)).sort(byName)
        const entries: { name: string; type: string; size?: number }[] = []
        for (const d of dirents) {
          const type = d.isFile() ? 'file' : d.isDirectory() ? 'dir' : d.isSymbolicLink() ? 'symlink' : 'other'
          const entry: { name: string; type: string; size?: number } = { name: d.name, type }
          if (type === 'file') {
            try {
              entry.size = (await sandbox.lstatChild(handle, d.name)).size
            } catch {
              // removed meanwhile
            }
          }
          entries.push(entry)
        }
        return ok({ path: handle.rel, entries })
      } finally {
        await handle.close()
      }
    },
  }

  const searchTool: ToolDefinition<{ query: string; path?: string; maxMatches?: number; caseSensitive?: boolean }> = {
    name: 'search_text',
    description:
      'Find a text across the files of a directory inside the sandbox (recursively; binary files, node_modules and .git are skipped). Returns at most maxMatches matching lines.',
    inputSchema: {
      $schema: SCHEMA,
      type: 'object',
      properties: {
        query: { type: 'string', minLength: 1, description: 'The text to find (not a regular expression)' },
        path: pathSchema('Where to search, relative to the sandbox root', { default: '.' }),
        maxMatches: { type: 'integer', minimum: 1, maximum: 1000, default: 100 },
        caseSensitive: { type: 'boolean', default: false },
      },
      required: ['query'],
      additionalProperties: false,
    },
    hints: { readOnly: true, idempotent: true, untrustedContent: true },
    async run({ query, path = '.', maxMatches = 100, caseSensitive = false }, ctx: ToolContext) {
      const opened = await openIn(sandbox, path)
      if ('failure' in opened) return opened.failure
      const top = opened.handle
      const needle = caseSensitive ? query : query.toLowerCase()
      const matches: { path: string; line: number; text: string }[] = []
      let truncated = false
      let filesSearched = 0
      const searchFile = async (file: SandboxHandle): Promise<void> => {
        if (!file.stats.isFile() || file.stats.size > SEARCH_MAX_FILE_BYTES) return
        const bytes = await readAt(file.fd, Math.min(file.stats.size, SEARCH_MAX_FILE_BYTES))
        if (!looksLikeText(bytes.subarray(0, 8192)) || sniffMimeType(bytes) !== undefined) return
        filesSearched++
        const lines = bytes.toString('utf8').split(/\r?\n/)
        for (let i = 0; i < lines.length; i++) {
          const line = lines[i]!
          if ((caseSensitive ? line : line.toLowerCase()).includes(needle)) {
            if (matches.length === maxMatches) {
              truncated = true
              return
            }
            const text = line.length > SEARCH_MAX_LINE ? line.slice(0, SEARCH_MAX_LINE) + '…' : line
            matches.push({ path: file.rel, line: i + 1, text })
          }
        }
      }
      // each entry is opened inside its checked directory without following a link,
      // so the walk cannot leave the sandbox
      const walk = async (dir: SandboxHandle): Promise<void> => {
        const dirents = (await sandbox.readdir(dir)).sort(byName)
        for (const d of dirents) {
          if (truncated || ctx.signal.aborted) return
          if (filesSearched >= SEARCH_MAX_FILES) {
            truncated = true
            return
          }
          if (d.isDirectory() ? SEARCH_SKIP_DIRS.has(d.name) : !d.isFile()) continue
          let child: SandboxHandle
          try {
            child = await sandbox.openChild(dir, d.name, { directory: d.isDirectory() })
          } catch {
            continue // removed, replaced by a link, or unreadable meanwhile
          }
          try {
            if (child.stats.isDirectory()) await walk(child)
            else await searchFile(child).catch(() => undefined)
          } finally {
            await child.close()
          }
        }
      }
      try {
        if (top.stats.isDirectory()) await walk(top)
        else await searchFile(top)
      } finally {
        await top.close()
      }
      return ok({ query, matches, truncated, filesSearched })
    },
  }

  const readSettings = async (): Promise<Record<string, JsonValue>> => {
    const { dir, name } = await sandbox.openParent(settingsFile)
    let text: string
    try {
      let file: SandboxHandle
      try {
        file = await sandbox.openChild(dir, name)
      } catch (err) {
        // no settings file yet: the form starts empty
        if (err instanceof SandboxError && err.code === 'not_found') return {}
        throw err
      }
      try {
        if (!file.stats.isFile()) throw new SandboxError('not_allowed', `not_allowed: ${settingsFile} is not a regular file`, settingsFile)
        if (file.stats.size > SETTINGS_MAX_BYTES) throw new Error(`${settingsFile} is over ${SETTINGS_MAX_BYTES} bytes`)
        text = (await readAt(file.fd, SETTINGS_MAX_BYTES)).toString('utf8')
      } finally {
        await file.close()
      }
    } finally {
      await dir.close()
    }
    const value = JSON.parse(text) as unknown
    if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error(`${settingsFile} does not hold a JSON object`)
    return value as Record<string, JsonValue>
  }
  const writeSettings = async (values: Record<string, JsonValue>): Promise<void> => {
    const { dir, file } = await openEntry(sandbox, settingsFile, 'create')
    try {
      checkWritable(file)
      await writeAll(file.fd, Buffer.from(JSON.stringify(values, null, 2) + '\n'))
    } finally {
      await file.close()
      await dir.close()
    }
  }
  const settingsTool = createFormTool({
    name: 'edit_settings',
    description: `Fill in fields of the settings form (${settingsFile} in the sandbox). Only the fields given change; password and api_key are redacted in the result.`,
    fields: {
      $schema: SCHEMA,
      type: 'object',
      properties: {
        theme: { enum: ['light', 'dark', 'system'], description: 'The colour theme' },
        language: { type: 'string', pattern: '^[a-z]{2}(-[A-Z]{2})?$', description: 'A language tag such as "en" or "pt-BR"' },
        notifications: { type: 'boolean', description: 'Whether to send notifications' },
        fontSize: { type: 'integer', minimum: 8, maximum: 72 },
        password: { type: 'string', minLength: 8, description: 'The account password (sensitive)' },
        api_key: { type: 'string', description: 'An API key (sensitive)' },
      },
      minProperties: 1,
    },
    sensitive: ['api_key'],
    read: readSettings,
    write: writeSettings,
  })
  const settingsWithSandbox: ToolDefinition<Record<string, JsonValue>> = {
    ...settingsTool,
    async run(values, ctx) {
      try {
        return await settingsTool.run(values, ctx)
      } catch (err) {
        if (err instanceof SandboxError) return sandboxFailure(err)
        if (err instanceof SyntaxError) return errorResult(`${settingsFile} is not valid JSON`)
        throw err
      }
    },
  }

  const deleteTool: ToolDefinition<{ path: string }> = {
    name: 'delete_file',
    description: 'Delete a file inside the sandbox. Needs the user’s confirmation.',
    inputSchema: FILE_PATH_SCHEMA,
    hints: { destructive: true },
    needsConfirmation: true,
    summarize: ({ path }) => `Delete ${path}`,
    async run({ path }, ctx) {
      let opened: { dir: SandboxHandle; file: SandboxHandle; name: string }
      try {
        opened = await openEntry(sandbox, path, false)
      } catch (err) {
        return sandboxFailure(err)
      }
      const { dir, file, name } = opened
      const rel = file.rel
      const size = file.stats.size
      let backup: Buffer | undefined
      try {
        if (!file.stats.isFile()) return refuse('not_a_file', `${rel} is not a regular file`)
        // keep small files so the deletion can be undone (tm.undo(callId))
        backup = size <= UNDO_MAX_BYTES ? await readAt(file.fd, size) : undefined
        await file.close()
        await sandbox.unlinkChild(dir, name, file.stats)
      } catch (err) {
        return sandboxFailure(err)
      } finally {
        await file.close()
        await dir.close()
      }
      if (backup !== undefined) {
        const bytes = backup
        ctx.registerUndo(async () => {
          const { dir: again, file: restored } = await openEntry(sandbox, rel, 'exclusive')
          try {
            await writeAll(restored.fd, bytes)
          } finally {
            await restored.close()
            await again.close()
          }
          return { restored: rel }
        })
      }
      return ok({ deleted: rel, bytes: size })
    },
  }

  return [readFileTool, listDirTool, searchTool, settingsWithSandbox, deleteTool] as unknown as ToolDefinition<never>[]
}
