/** Small helpers shared by the behaviour tests. */
import { existsSync } from 'node:fs'
import { join } from 'node:path'

/** Resolves after `ms` milliseconds. */
export const sleep = (ms: number): Promise<void> => new Promise<void>((r) => setTimeout(r, ms))

/** A promise plus its resolver, for bodies the test releases by hand. */
export function gate<T = void>(): { promise: Promise<T>; release: (v: T) => void } {
  let release!: (v: T) => void
  const promise = new Promise<T>((r) => {
    release = r
  })
  return { promise, release }
}

/**
 * The folder of an official reference suite in `../shared/reference/` (the JSON Schema Test
 * Suite, the MCP schema), which sits beside the project's own checkout and is not copied
 * into the repository. Absent (a fresh clone on its own), the tests that need it skip with a
 * printed reason; with `CI=true` its absence is an error.
 */
export function referencePath(...parts: string[]): string | undefined {
  const path = join(import.meta.dirname, '..', '..', 'shared', 'reference', ...parts)
  if (existsSync(path)) return path
  const reason = `reference data not found at ${path}: tests that need it are skipped (place the shared reference folder beside the checkout to run them)`
  if (process.env.CI === 'true') throw new Error(`${reason}; CI=true requires it`)
  console.warn(`SKIP: ${reason}`)
  return undefined
}
