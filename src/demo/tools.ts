/**
 * The built-in demo toolset `toolwire serve` runs without a module: five file tools
 * confined to one sandbox directory (`read_file`, `list_dir`, `search_text`,
 * `edit_settings`, `delete_file`).
 */
import { lstat, open, readdir, readFile, unlink, writeFile } from 'node:fs/promises'
import { basename, join } from 'node:path'
import { attach, AttachError, sniffMimeType } from '../attach.js'
import { createFormTool } from '../form.js'
import { errorResult, invalid, ok, refuse, type ModelResult } from '../helpers.js'
import type { ToolContext, ToolDefinition } from '../manager.js'
import { toolError, ToolResult } from '../result.js'
import type { JsonValue } from '../types.js'
import { Sandbox, SandboxError } from './sandbox.js'

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

/** A refusal or a not-found result for a sandbox error. */
function sandboxFailure(err: unknown): unknown {
  if (err instanceof SandboxError) {
    if (err.code === 'not_found') return ToolResult.failed(toolError('not_found', err.message))
    if (err.code === 'invalid_path') return invalid([{ path: '/path', message: err.message }])
    return refuse('not_allowed', err.message)
  }
  throw err
}

/** The input of the tools that take one file: `{ path }`, relative to the sandbox root. */
const FILE_PATH_SCHEMA = {
  $schema: SCHEMA,
  type: 'object',
  properties: { path: { type: 'string', minLength: 1, description: 'The file, relative to the sandbox root' } },
  required: ['path'],
  additionalProperties: false,
} as const

type Resolved = Awaited<ReturnType<Sandbox['resolve']>>

/**
 * Resolves a tool's `path` inside the sandbox and, when `kind` is given, checks that it
 * is a regular file or a directory. A failure is returned as the tool's result.
 */
async function resolveIn(
  sandbox: Sandbox,
  path: string,
  kind?: 'file' | 'directory',
): Promise<{ target: Resolved; size: number } | { failure: unknown }> {
  let target: Resolved
  try {
    target = await sandbox.resolve(path)
  } catch (err) {
    return { failure: sandboxFailure(err) }
  }
  if (kind === undefined) return { target, size: 0 }
  const info = await lstat(target.real)
  if (kind === 'file' && !info.isFile()) return { failure: refuse('not_a_file', `${target.rel} is not a regular file`) }
  if (kind === 'directory' && !info.isDirectory()) return { failure: refuse('not_a_directory', `${target.rel} is not a directory`) }
  return { target, size: info.size }
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

async function readPrefix(path: string, max: number): Promise<{ bytes: Buffer; size: number }> {
  const handle = await open(path, 'r')
  try {
    const size = (await handle.stat()).size
    const buffer = Buffer.alloc(Math.min(size, max))
    let length = 0
    while (length < buffer.length) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length)
      if (bytesRead === 0) break
      length += bytesRead
    }
    return { bytes: buffer.subarray(0, length), size }
  } finally {
    await handle.close()
  }
}

const isMedia = (mime: string | undefined): mime is string =>
  mime !== undefined && (mime.startsWith('image/') || mime.startsWith('audio/') || mime === 'application/pdf')

/**
 * The demo tools over the sandbox at `options.root`.
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
      const resolved = await resolveIn(sandbox, path, 'file')
      if ('failure' in resolved) return resolved.failure
      const { target } = resolved
      const { bytes, size } = await readPrefix(target.real, Math.max(maxText, 64))
      const sniffed = sniffMimeType(bytes)
      if (isMedia(sniffed)) {
        let part
        try {
          part = await attach(target.real, { maxBytes: maxMedia })
        } catch (err) {
          if (err instanceof AttachError && err.code === 'too_large') {
            return refuse('too_large', `${target.rel} is ${size} bytes, over the ${maxMedia}-byte limit for media`)
          }
          throw err
        }
        const result: ModelResult = {
          output: `${basename(target.real)} (${part.mimeType}, ${size} bytes)`,
          isError: false,
          parts: [part],
        }
        return result
      }
      if (!looksLikeText(bytes)) {
        return refuse('unsupported_file', `${target.rel} is a binary file (${size} bytes); only text, image, audio and PDF files can be read`)
      }
      let text = bytes.subarray(0, Math.min(bytes.length, maxText)).toString('utf8')
      if (size > maxText) text = text.replace(/\uFFFD$/, '') + `\n[truncated: showing the first ${maxText} of ${size} bytes]`
      const result: ModelResult = { output: text, isError: false }
      return result
    },
  }

  const listDirTool: ToolDefinition<{ path?: string }> = {
    name: 'list_dir',
    description: 'List a directory inside the sandbox: each entry with its type and size in bytes.',
    inputSchema: {
      $schema: SCHEMA,
      type: 'object',
      properties: { path: { type: 'string', minLength: 1, default: '.', description: 'The directory, relative to the sandbox root (default: the root)' } },
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
      const resolved = await resolveIn(sandbox, path, 'directory')
      if ('failure' in resolved) return resolved.failure
      const { target } = resolved
      const dirents = await readdir(target.real, { withFileTypes: true })
      dirents.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
      const entries: { name: string; type: string; size?: number }[] = []
      for (const d of dirents) {
        const type = d.isFile() ? 'file' : d.isDirectory() ? 'dir' : d.isSymbolicLink() ? 'symlink' : 'other'
        const entry: { name: string; type: string; size?: number } = { name: d.name, type }
        if (type === 'file') {
          try {
            entry.size = (await lstat(join(target.real, d.name))).size
          } catch {
            // removed meanwhile
          }
        }
        entries.push(entry)
      }
      return ok({ path: target.rel, entries })
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
        path: { type: 'string', minLength: 1, default: '.', description: 'Where to search, relative to the sandbox root' },
        maxMatches: { type: 'integer', minimum: 1, maximum: 1000, default: 100 },
        caseSensitive: { type: 'boolean', default: false },
      },
      required: ['query'],
      additionalProperties: false,
    },
    hints: { readOnly: true, idempotent: true, untrustedContent: true },
    async run({ query, path = '.', maxMatches = 100, caseSensitive = false }, ctx: ToolContext) {
      const resolved = await resolveIn(sandbox, path)
      if ('failure' in resolved) return resolved.failure
      const { target } = resolved
      const needle = caseSensitive ? query : query.toLowerCase()
      const matches: { path: string; line: number; text: string }[] = []
      let truncated = false
      let filesSearched = 0
      const searchFile = async (file: string): Promise<void> => {
        const info = await lstat(file)
        if (info.size > SEARCH_MAX_FILE_BYTES) return
        const bytes = await readFile(file)
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
            matches.push({ path: sandbox.relative(file), line: i + 1, text })
          }
        }
      }
      const walk = async (dir: string): Promise<void> => {
        const dirents = await readdir(dir, { withFileTypes: true })
        dirents.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
        for (const d of dirents) {
          if (truncated || ctx.signal.aborted) return
          if (filesSearched >= SEARCH_MAX_FILES) {
            truncated = true
            return
          }
          // symbolic links are never followed, so the walk cannot leave the sandbox
          if (d.isDirectory()) {
            if (!SEARCH_SKIP_DIRS.has(d.name)) await walk(join(dir, d.name))
          } else if (d.isFile()) {
            await searchFile(join(dir, d.name)).catch(() => undefined)
          }
        }
      }
      const info = await lstat(target.real)
      if (info.isDirectory()) await walk(target.real)
      else if (info.isFile()) await searchFile(target.real)
      return ok({ query, matches, truncated, filesSearched })
    },
  }

  const readSettings = async (): Promise<Record<string, JsonValue>> => {
    const target = await sandbox.resolve(settingsFile, { mustExist: false })
    let text: string
    try {
      text = await readFile(target.real, 'utf8')
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {}
      throw err
    }
    const value = JSON.parse(text) as unknown
    if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error(`${settingsFile} does not hold a JSON object`)
    return value as Record<string, JsonValue>
  }
  const writeSettings = async (values: Record<string, JsonValue>): Promise<void> => {
    const target = await sandbox.resolve(settingsFile, { mustExist: false })
    await writeFile(target.real, JSON.stringify(values, null, 2) + '\n')
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
      const resolved = await resolveIn(sandbox, path, 'file')
      if ('failure' in resolved) return resolved.failure
      const { target, size } = resolved
      // keep small files so the deletion can be undone (tm.undo(callId))
      const backup = size <= 10 * 1024 * 1024 ? await readFile(target.real) : undefined
      await unlink(target.real)
      if (backup !== undefined) ctx.registerUndo(() => writeFile(target.real, backup, { flag: 'wx' }).then(() => ({ restored: target.rel })))
      return ok({ deleted: target.rel, bytes: size })
    },
  }

  return [readFileTool, listDirTool, searchTool, settingsWithSandbox, deleteTool] as unknown as ToolDefinition<never>[]
}
