/**
 * Sandbox path resolution for the demo toolset: every path a tool is given is
 * relative to one root directory, and anything that resolves outside it (through
 * `..`, an absolute path or a symbolic link) is refused with code `not_allowed`.
 *
 * The check and the use are one operation: a tool opens the file or directory first
 * and then checks where the open descriptor really is (on Linux, the kernel's answer
 * in `/proc/self/fd/N`), and reads, lists or writes only through that descriptor. A
 * second process that swaps a file or a directory for a symbolic link between a check
 * and a use therefore gains nothing. Writers open the parent directory, check it, and
 * create or open the file inside it without following a link.
 */
import type { Dirent, Stats } from 'node:fs'
import { close, closeSync, constants, fstat, lstat, open, openSync, readdir, readlink, readlinkSync, realpath, unlink } from 'node:fs'
import { basename, dirname, isAbsolute, relative, resolve, sep } from 'node:path'
import { promisify } from 'node:util'

const pOpen = promisify(open)
const pClose = promisify(close)
const pFstat = promisify(fstat)
const pLstat = promisify(lstat)
const pReadlink = promisify(readlink)
const pRealpath = promisify(realpath)
const pReaddir = promisify(readdir)
const pUnlink = promisify(unlink)

/** Why a path was not resolved. */
export type SandboxErrorCode = 'not_allowed' | 'not_found' | 'invalid_path'

/** A path the sandbox refused or could not resolve. */
export class SandboxError extends Error {
  override name = 'SandboxError'
  constructor(
    readonly code: SandboxErrorCode,
    message: string,
    readonly path: string,
  ) {
    super(message)
  }
}

/** A resolved path: `real` is the absolute real path; `rel` is relative to the root, with `/` separators. */
export interface SandboxPath {
  readonly real: string
  readonly rel: string
}

/**
 * A file or directory opened inside the sandbox. Use it only through `fd` (files) or
 * `path` (directories), never through a path built from the tool's input again.
 */
export interface SandboxHandle {
  /** Where it is, relative to the root, with `/` separators (`.` for the root). */
  readonly rel: string
  /** Its `fstat` taken when it was opened. */
  readonly stats: Stats
  /**
   * The open descriptor. A file's is open for reading or writing; a directory's (or
   * another kind's) may be an `O_PATH` descriptor on Linux, so list a directory
   * through `path`. A directory in the fallback mode has none.
   */
  readonly fd: number | undefined
  /**
   * A path naming this very object while the handle is open: `/proc/self/fd/N` on
   * Linux, its real path in the fallback mode.
   */
  readonly path: string
  /** Closes the descriptor (idempotent). */
  close(): Promise<void>
}

/** How {@link Sandbox.openChild} opens an entry. */
export interface OpenChildOptions {
  /** Open a directory (default: anything that is not a directory is fine). */
  readonly directory?: boolean
  /** Open for writing: `create` creates a missing file, `exclusive` only a missing one. */
  readonly write?: false | 'existing' | 'create' | 'exclusive'
}

/** The longest path the sandbox accepts, in UTF-8 bytes (Linux's `PATH_MAX`). */
export const MAX_PATH_BYTES = 4096

const C = constants
const O_NOFOLLOW = C.O_NOFOLLOW ?? 0
const O_DIRECTORY = C.O_DIRECTORY ?? 0
// never block on a FIFO, never take a controlling terminal
const O_SAFE = (C.O_NONBLOCK ?? 0) | (C.O_NOCTTY ?? 0)
/**
 * Linux's O_PATH (the generic value, used by every architecture Node.js supports):
 * locates an object without opening it for I/O, so that nothing outside the root is
 * ever really opened (no device's or FIFO's open runs) before the check.
 */
const O_PATH =
  process.platform === 'linux' && ['x64', 'arm64', 'arm', 'ia32', 'ppc64', 's390x', 'riscv64', 'loong64'].includes(process.arch) ? 0o10000000 : 0

function isInside(root: string, path: string): boolean {
  if (path === root) return true
  const prefix = root.endsWith(sep) ? root : root + sep
  return path.startsWith(prefix)
}

let procFd: boolean | undefined
/** Whether `/proc/self/fd/N` names the object an open descriptor refers to (Linux). */
function hasProcFd(): boolean {
  if (procFd !== undefined) return procFd
  procFd = false
  if (process.platform !== 'linux') return procFd
  try {
    const fd = openSync('/', C.O_RDONLY | O_DIRECTORY)
    try {
      procFd = readlinkSync(`/proc/self/fd/${fd}`) === '/'
    } finally {
      closeSync(fd)
    }
  } catch {
    procFd = false
  }
  return procFd
}

const errno = (err: unknown): string | undefined => (err as NodeJS.ErrnoException | undefined)?.code

/**
 * A directory the demo tools may not leave.
 *
 * On Linux every open is checked on the descriptor: `/proc/self/fd/N` must name a
 * place inside the root (taken as a real path) before anything is read or written
 * through it, so a concurrent swap of a file or directory for a symbolic link is
 * caught. Where `/proc/self/fd` is missing (macOS, Windows) the sandbox falls back to
 * checking the real path, opening it without following a final link, and comparing
 * device and inode numbers before and after; a swap of a directory higher up between
 * the check and the open then remains possible (see the README's Security section).
 */
export class Sandbox {
  private constructor(
    readonly root: string,
    private readonly descriptors?: boolean,
  ) {}

  /**
   * Opens the sandbox at `root` (resolved against the current directory; must exist).
   * `checkDescriptors: false` uses the portable fallback even where `/proc/self/fd`
   * exists (for tests of the fallback); it cannot turn the check on where it is missing.
   */
  static async open(root: string = process.cwd(), options: { readonly checkDescriptors?: boolean } = {}): Promise<Sandbox> {
    return new Sandbox(await pRealpath(resolve(root)), options.checkDescriptors === false ? false : undefined)
  }

  /** Opens the sandbox at an already-real `root` without touching the file system. */
  static atRealPath(root: string): Sandbox {
    return new Sandbox(root)
  }

  /** Whether opens are checked on the descriptor (`/proc/self/fd`), not only on the path. */
  get checksDescriptors(): boolean {
    return this.descriptors ?? hasProcFd()
  }

  /**
   * Checks `path` lexically: a non-empty string without NUL bytes, at most
   * {@link MAX_PATH_BYTES} long, that stays inside the root once `.` and `..` are
   * applied. Returns the absolute lexical path. Linear in the length of `path`.
   */
  private lexical(path: string): string {
    if (typeof path !== 'string' || path.length === 0 || path.includes('\0')) {
      throw new SandboxError('invalid_path', 'The path must be a non-empty string without NUL bytes', String(path))
    }
    if (path.length > MAX_PATH_BYTES || Buffer.byteLength(path) > MAX_PATH_BYTES) {
      throw new SandboxError('invalid_path', `The path is longer than ${MAX_PATH_BYTES} bytes`, path.slice(0, 256))
    }
    const lexical = resolve(this.root, path)
    if (!isInside(this.root, lexical)) throw this.outside(path)
    return lexical
  }

  private outside(path: string): SandboxError {
    return new SandboxError('not_allowed', `not_allowed: ${path} is outside the sandbox root; only paths inside it are allowed`, path)
  }

  /**
   * Resolves `path` (relative to the root) to a real path inside the root.
   *
   * This is a check of the path as it is now; a concurrent process can change what the
   * path names before it is used. The demo tools open through {@link openPath},
   * {@link openParent} and {@link openChild} instead, which check the open descriptor.
   * @throws SandboxError `not_allowed` outside the root, `not_found` when `mustExist`
   * and the path does not exist, `invalid_path` for an empty path, one with NUL bytes
   * or one longer than {@link MAX_PATH_BYTES}.
   */
  async resolve(path: string, options: { readonly mustExist?: boolean } = {}): Promise<SandboxPath> {
    const mustExist = options.mustExist ?? true
    const lexical = this.lexical(path)
    let real: string
    try {
      real = await pRealpath(lexical)
    } catch (err) {
      const code = errno(err)
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw this.outside(path)
      real = await this.resolveMissing(path, lexical)
      if (mustExist) throw new SandboxError('not_found', `${path} does not exist`, path)
    }
    if (!isInside(this.root, real)) throw this.outside(path)
    return { real, rel: this.relative(real) }
  }

  /**
   * The real path of a `lexical` path that does not exist: walks down from the root one
   * component at a time (one `lstat` each, so linear in the number of components) to
   * the first missing one. A symbolic link on the way that points nowhere is refused,
   * since a later write would follow it.
   */
  private async resolveMissing(path: string, lexical: string): Promise<string> {
    const parts = relative(this.root, lexical).split(sep)
    let real = this.root
    for (let i = 0; i < parts.length; i++) {
      const next = real === sep ? sep + parts[i] : real + sep + parts[i]
      let info: Stats
      try {
        info = await pLstat(next)
      } catch {
        return [next, ...parts.slice(i + 1)].join(sep)
      }
      if (info.isSymbolicLink()) {
        try {
          real = await pRealpath(next)
        } catch {
          throw new SandboxError('not_allowed', `not_allowed: ${path} goes through a symbolic link whose target does not exist`, path)
        }
        if (!isInside(this.root, real)) throw this.outside(path)
      } else {
        real = next
      }
    }
    return real
  }

  /** `real` relative to the root, with `/` separators (`.` for the root itself). */
  relative(real: string): string {
    const rel = relative(this.root, real)
    return rel === '' ? '.' : sep === '/' ? rel : rel.split(sep).join('/')
  }

  /** Whether an absolute real path lies inside the root. */
  contains(real: string): boolean {
    return isAbsolute(real) && isInside(this.root, real)
  }

  /**
   * Opens what `path` names for reading (a file or a directory; links inside the root
   * are followed), then checks that the open object lies inside the root.
   * @throws SandboxError `not_allowed` when it lies outside, `not_found` when it does
   * not exist, `invalid_path` for a path {@link resolve} refuses as such.
   */
  async openPath(path: string): Promise<SandboxHandle> {
    const lexical = this.lexical(path)
    if (!this.checksDescriptors) return this.fallbackOpenPath(path, lexical)
    let fd: number
    try {
      fd = await pOpen(lexical, O_PATH === 0 ? C.O_RDONLY | O_SAFE : O_PATH)
    } catch (err) {
      throw this.openError(err, path)
    }
    const located = await this.adopt(fd, path)
    if (O_PATH === 0 || !located.stats.isFile()) return located
    // checked: now open that very file for reading through its descriptor
    try {
      fd = await pOpen(located.path, C.O_RDONLY | O_SAFE)
    } catch (err) {
      throw this.openError(err, path)
    } finally {
      await located.close()
    }
    try {
      const stats = await pFstat(fd)
      if (!sameFile(stats, located.stats)) throw this.outside(path)
      return handle(located.rel, stats, fd, `/proc/self/fd/${fd}`)
    } catch (err) {
      await pClose(fd).catch(() => undefined)
      throw err
    }
  }

  /**
   * Opens the directory that holds `path` (checked like {@link openPath}) and returns it
   * with the last component's name, for {@link openChild} and {@link unlinkChild}.
   */
  async openParent(path: string): Promise<{ readonly dir: SandboxHandle; readonly name: string }> {
    const lexical = this.lexical(path)
    if (lexical === this.root) throw new SandboxError('invalid_path', `${path} is the sandbox root, not a file in it`, path)
    const name = basename(lexical)
    const parent = dirname(lexical)
    if (!this.checksDescriptors) return { dir: await this.fallbackOpenPath(path, parent, true), name }
    let fd: number
    try {
      fd = await pOpen(parent, (O_PATH === 0 ? C.O_RDONLY | O_SAFE : O_PATH) | O_DIRECTORY)
    } catch (err) {
      const code = errno(err)
      if (code === 'ENOENT' || code === 'ENOTDIR') {
        await this.resolveMissing(path, lexical) // throws not_allowed for a dangling link on the way
        throw new SandboxError('not_found', `The directory of ${path} does not exist`, path)
      }
      throw this.openError(err, path)
    }
    return { dir: await this.adopt(fd, path), name }
  }

  /**
   * Opens the entry `name` of the open directory `dir` without following a symbolic
   * link, and checks the open object. A link is refused with `not_allowed`. Writing
   * never truncates on open: truncate through the descriptor once it is checked.
   * @throws SandboxError `not_allowed` for a link or a place outside the root,
   * `not_found` when it does not exist (and `write` is not `create` / `exclusive`).
   */
  async openChild(dir: SandboxHandle, name: string, options: OpenChildOptions = {}): Promise<SandboxHandle> {
    if (name.length === 0 || name === '.' || name === '..' || name.includes('/') || name.includes(sep) || name.includes('\0')) {
      throw new SandboxError('invalid_path', `${name} is not a directory entry name`, name)
    }
    const write = options.write ?? false
    let flags = O_NOFOLLOW | O_SAFE | (options.directory ? O_DIRECTORY : 0)
    if (write === false) flags |= C.O_RDONLY
    else flags |= C.O_WRONLY | (write === 'create' ? C.O_CREAT : write === 'exclusive' ? C.O_CREAT | C.O_EXCL : 0)
    const shown = dir.rel === '.' ? name : `${dir.rel}/${name}`
    if (!this.checksDescriptors) return this.fallbackOpenChild(dir, name, shown, flags)
    let fd: number
    try {
      fd = await pOpen(`${dir.path}/${name}`, flags, 0o666)
    } catch (err) {
      // O_DIRECTORY | O_NOFOLLOW on a link fails with ENOTDIR: say it is a link
      if (options.directory && errno(err) === 'ENOTDIR' && (await this.lstatChild(dir, name).catch(() => undefined))?.isSymbolicLink()) {
        throw this.openError(Object.assign(new Error('link'), { code: 'ELOOP' }), shown)
      }
      throw this.openError(err, shown)
    }
    return this.adopt(fd, shown)
  }

  /** The entries of the open directory `dir`. */
  async readdir(dir: SandboxHandle): Promise<Dirent[]> {
    return pReaddir(dir.path, { withFileTypes: true })
  }

  /** `lstat` of the entry `name` of the open directory `dir` (a link is not followed). */
  async lstatChild(dir: SandboxHandle, name: string): Promise<Stats> {
    return pLstat(`${dir.path}/${name}`)
  }

  /**
   * Removes the entry `name` of the open directory `dir` if it is still the file
   * `expected` (same device and inode). Only an entry of `dir` can be removed.
   * @throws SandboxError `not_found` when it is gone or was replaced.
   */
  async unlinkChild(dir: SandboxHandle, name: string, expected: Stats): Promise<void> {
    const shown = dir.rel === '.' ? name : `${dir.rel}/${name}`
    let now: Stats
    try {
      now = await this.lstatChild(dir, name)
    } catch {
      throw new SandboxError('not_found', `${shown} does not exist`, shown)
    }
    if (now.dev !== expected.dev || now.ino !== expected.ino) throw new SandboxError('not_found', `${shown} was replaced`, shown)
    if (!this.checksDescriptors) await this.fallbackSameDir(dir, shown)
    await pUnlink(`${dir.path}/${name}`)
  }

  private openError(err: unknown, path: string): unknown {
    const code = errno(err)
    if (code === 'ENOENT' || code === 'ENOTDIR') return new SandboxError('not_found', `${path} does not exist`, path)
    if (code === 'ELOOP' || code === 'EMLINK') {
      return new SandboxError('not_allowed', `not_allowed: ${path} is a symbolic link; the demo tools do not follow it here`, path)
    }
    if (code === 'ENAMETOOLONG') return new SandboxError('invalid_path', `${path} is too long`, path.slice(0, 256))
    return err
  }

  /** Checks where the open descriptor `fd` is; closes it and throws unless inside the root. */
  private async adopt(fd: number, path: string): Promise<SandboxHandle> {
    try {
      let where = await pReadlink(`/proc/self/fd/${fd}`)
      const stats = await pFstat(fd)
      if (stats.nlink === 0 && where.endsWith(' (deleted)')) where = where.slice(0, -' (deleted)'.length)
      if (!isAbsolute(where) || !isInside(this.root, where)) throw this.outside(path)
      return handle(this.relative(where), stats, fd, `/proc/self/fd/${fd}`)
    } catch (err) {
      await pClose(fd).catch(() => undefined)
      throw err
    }
  }

  // -- the fallback without /proc/self/fd: check the real path, open without following
  // the last link, then compare device and inode with the path's lstat before and after.

  private async fallbackOpenPath(path: string, lexical: string, directory = false): Promise<SandboxHandle> {
    let real: string
    try {
      real = await pRealpath(lexical)
    } catch (err) {
      const code = errno(err)
      if (code === 'ENOENT' || code === 'ENOTDIR') {
        await this.resolveMissing(path, lexical)
        throw new SandboxError('not_found', `${path} does not exist`, path)
      }
      throw this.openError(err, path)
    }
    if (!isInside(this.root, real)) throw this.outside(path)
    const before = await pLstat(real).catch((err: unknown) => Promise.reject(this.openError(err, path)))
    if (directory && !before.isDirectory()) throw new SandboxError('not_found', `The directory of ${path} does not exist`, path)
    const rel = this.relative(real)
    if (before.isDirectory()) return handle(rel, before, undefined, real)
    let fd: number
    try {
      fd = await pOpen(real, C.O_RDONLY | O_NOFOLLOW | O_SAFE)
    } catch (err) {
      throw this.openError(err, path)
    }
    try {
      const stats = await pFstat(fd)
      const after = await pLstat(real)
      if (!sameFile(stats, before) || !sameFile(stats, after) || (await pRealpath(real)) !== real) throw this.outside(path)
      return handle(rel, stats, fd, real)
    } catch (err) {
      await pClose(fd).catch(() => undefined)
      throw err
    }
  }

  private async fallbackOpenChild(dir: SandboxHandle, name: string, shown: string, flags: number): Promise<SandboxHandle> {
    await this.fallbackSameDir(dir, shown)
    const real = `${dir.path}${sep}${name}`
    if (flags & O_DIRECTORY) {
      const info = await pLstat(real).catch((err: unknown) => Promise.reject(this.openError(err, shown)))
      if (info.isSymbolicLink()) throw this.openError(Object.assign(new Error('link'), { code: 'ELOOP' }), shown)
      if (!info.isDirectory()) throw new SandboxError('not_found', `${shown} is not a directory`, shown)
      return handle(this.relative(real), info, undefined, real)
    }
    let fd: number
    try {
      fd = await pOpen(real, flags & ~O_DIRECTORY, 0o666)
    } catch (err) {
      throw this.openError(err, shown)
    }
    try {
      const stats = await pFstat(fd)
      await this.fallbackSameDir(dir, shown)
      const after = await pLstat(real)
      if (!sameFile(stats, after)) throw this.outside(shown)
      return handle(this.relative(real), stats, fd, real)
    } catch (err) {
      await pClose(fd).catch(() => undefined)
      throw err
    }
  }

  /** The fallback's directory handle still names the same directory by the same real path. */
  private async fallbackSameDir(dir: SandboxHandle, shown: string): Promise<void> {
    const now = await pLstat(dir.path).catch(() => undefined)
    if (now === undefined || !sameFile(now, dir.stats) || (await pRealpath(dir.path).catch(() => '')) !== dir.path) throw this.outside(shown)
  }
}

function sameFile(a: Stats, b: Stats): boolean {
  return a.dev === b.dev && a.ino === b.ino
}

function handle(rel: string, stats: Stats, fd: number | undefined, path: string): SandboxHandle {
  let open = fd !== undefined
  return {
    rel,
    stats,
    fd,
    path,
    async close() {
      if (!open || fd === undefined) return
      open = false
      await pClose(fd)
    },
  }
}
