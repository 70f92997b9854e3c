/**
 * Where an MCP client's OAuth state lives between runs: tokens, the registered client, the PKCE
 * code verifier and the discovery state. `TokenStorage` is the pluggable interface;
 * `memoryTokenStorage()` keeps it in the process, `fileTokenStorage(path)` in one JSON file (mode
 * 0600, every write atomic). Error messages name the file, never a stored value.
 */
import { randomBytes } from 'node:crypto'
import { mkdir, open, readFile, rename, rm } from 'node:fs/promises'
import { dirname } from 'node:path'

/** A stored value: a JSON object (tokens, client information, a verifier, a discovery state). */
export type TokenStorageValue = Readonly<Record<string, unknown>>

/**
 * A key-value store for OAuth client state. Each method may be synchronous or return a promise.
 * `get` answers `undefined` for a key it does not hold. Keys are opaque strings that begin with
 * the MCP server's URL.
 */
export interface TokenStorage {
  get(key: string): TokenStorageValue | undefined | Promise<TokenStorageValue | undefined>
  set(key: string, value: TokenStorageValue): void | Promise<void>
  delete(key: string): void | Promise<void>
}

/** A `TokenStorage` in this process's memory (the default): nothing survives a restart. */
export function memoryTokenStorage(): TokenStorage {
  const values = new Map<string, TokenStorageValue>()
  return {
    get: (key) => values.get(key),
    set: (key, value) => void values.set(key, value),
    delete: (key) => void values.delete(key),
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/**
 * A `TokenStorage` in one JSON file, created with mode 0600 (its folder with 0700 when missing).
 * Each `set` or `delete` writes a temporary file beside it and renames it over the old one, so a
 * reader sees the old file or the new one, never half of one. Writes from this process are taken
 * one at a time; two processes writing the same file may lose one another's update.
 */
export function fileTokenStorage(path: string): TokenStorage {
  let queue: Promise<unknown> = Promise.resolve()

  async function load(): Promise<Record<string, unknown>> {
    let text: string
    try {
      text = await readFile(path, 'utf8')
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {}
      throw new Error(`cannot read the OAuth token file ${path} (${(err as NodeJS.ErrnoException).code ?? 'error'})`)
    }
    let parsed: unknown
    try {
      parsed = JSON.parse(text)
    } catch {
      // not the parser's message: it quotes the text, which holds tokens
      parsed = undefined
    }
    if (!isObject(parsed)) throw new Error(`the OAuth token file ${path} is not a JSON object`)
    return parsed
  }

  async function save(all: Record<string, unknown>): Promise<void> {
    await mkdir(dirname(path), { recursive: true, mode: 0o700 })
    const temp = `${path}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`
    const file = await open(temp, 'wx', 0o600)
    try {
      await file.writeFile(JSON.stringify(all, null, 2) + '\n')
      await file.sync()
    } finally {
      await file.close()
    }
    try {
      await rename(temp, path)
    } catch (err) {
      await rm(temp, { force: true })
      throw new Error(`cannot write the OAuth token file ${path} (${(err as NodeJS.ErrnoException).code ?? 'error'})`)
    }
  }

  /** Runs `change` on the file's content after every earlier write of this storage has ended. */
  function update(change: (all: Record<string, unknown>) => boolean): Promise<void> {
    const next = queue.then(async () => {
      const all = await load()
      if (change(all)) await save(all)
    })
    queue = next.catch(() => undefined)
    return next
  }

  return {
    async get(key) {
      await queue
      const value = (await load())[key]
      return isObject(value) ? value : undefined
    },
    set: (key, value) =>
      update((all) => {
        all[key] = value
        return true
      }),
    delete: (key) =>
      update((all) => {
        if (!(key in all)) return false
        delete all[key]
        return true
      }),
  }
}
