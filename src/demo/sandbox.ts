/**
 * Sandbox path resolution for the demo toolset: every path a tool is given is
 * relative to one root directory, and anything that resolves outside it (through
 * `..`, an absolute path or a symbolic link) is refused with code `not_allowed`.
 */
import { lstat, realpath } from 'node:fs/promises'
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path'

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

function isInside(root: string, path: string): boolean {
  if (path === root) return true
  const prefix = root.endsWith(sep) ? root : root + sep
  return path.startsWith(prefix)
}

/**
 * A directory the demo tools may not leave.
 *
 * The check is done on real paths (`fs.realpath`): a symlink inside the root that
 * points outside it is refused like `../x`. A target that does not exist yet is
 * checked through its nearest existing ancestor. (Like every path check done before
 * the file operation, it cannot stop a concurrent process from swapping a directory
 * for a symlink between the check and the use.)
 */
export class Sandbox {
  private constructor(readonly root: string) {}

  /** Opens the sandbox at `root` (resolved against the current directory; must exist). */
  static async open(root: string = process.cwd()): Promise<Sandbox> {
    return new Sandbox(await realpath(resolve(root)))
  }

  /** Opens the sandbox at an already-real `root` without touching the file system. */
  static atRealPath(root: string): Sandbox {
    return new Sandbox(root)
  }

  /**
   * Resolves `path` (relative to the root) to a real path inside the root.
   * @throws SandboxError `not_allowed` outside the root, `not_found` when `mustExist`
   * and the path does not exist, `invalid_path` for an empty path or one with NUL bytes.
   */
  async resolve(path: string, options: { readonly mustExist?: boolean } = {}): Promise<SandboxPath> {
    const mustExist = options.mustExist ?? true
    if (typeof path !== 'string' || path.length === 0 || path.includes('\0')) {
      throw new SandboxError('invalid_path', 'The path must be a non-empty string without NUL bytes', String(path))
    }
    const refuse = (): SandboxError =>
      new SandboxError('not_allowed', `not_allowed: ${path} is outside the sandbox root; only paths inside it are allowed`, path)
    const lexical = resolve(this.root, path)
    if (!isInside(this.root, lexical)) throw refuse()
    let real: string
    try {
      real = await realpath(lexical)
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw refuse()
      // A missing target: check its nearest existing ancestor, then re-append the rest.
      // A dangling symlink on the way would be followed by a later write: refused.
      const danglingLink = (): SandboxError =>
        new SandboxError('not_allowed', `not_allowed: ${path} goes through a symbolic link whose target does not exist`, path)
      if (await isSymlink(lexical)) throw danglingLink()
      let ancestor = dirname(lexical)
      for (;;) {
        try {
          real = join(await realpath(ancestor), relative(ancestor, lexical))
          break
        } catch {
          if (await isSymlink(ancestor)) throw danglingLink()
          const up = dirname(ancestor)
          if (up === ancestor) throw refuse()
          ancestor = up
        }
      }
      if (!isInside(this.root, real)) throw refuse()
      if (mustExist) throw new SandboxError('not_found', `${path} does not exist`, path)
    }
    if (!isInside(this.root, real)) throw refuse()
    return { real, rel: this.relative(real) }
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
}

async function isSymlink(path: string): Promise<boolean> {
  try {
    return (await lstat(path)).isSymbolicLink()
  } catch {
    return false
  }
}
