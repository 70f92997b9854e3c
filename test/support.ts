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
 * The folder of an official reference suite (the JSON Schema Test Suite, the MCP schema) in
 * `$TOOLWIRE_REFERENCE_DIR`, else in `../shared/reference/` beside the project's own checkout;
 * it is not copied into the repository. Absent (a fresh clone on its own), the tests that need it skip with a
 * printed reason; with `CI=true` its absence is an error.
 */
export function referencePath(...parts: string[]): string | undefined {
  const dir = process.env.TOOLWIRE_REFERENCE_DIR ?? join(import.meta.dirname, '..', '..', 'shared', 'reference')
  const path = join(dir, ...parts)
  if (existsSync(path)) return path
  const reason =
    `reference data not found at ${path}: tests that need it are skipped. To run them, set TOOLWIRE_REFERENCE_DIR to a folder ` +
    'holding json-schema-test-suite/ (a clone of json-schema-org/JSON-Schema-Test-Suite) and mcp/schema-2025-11-25.json ' +
    '(schema/2025-11-25/schema.json of modelcontextprotocol/modelcontextprotocol), or place the shared reference folder beside the checkout'
  if (process.env.CI === 'true') throw new Error(`${reason}; CI=true requires it`)
  console.warn(`SKIP: ${reason}`)
  return undefined
}

/**
 * Why the SQLite store cannot run here, or undefined when it can. better-sqlite3 is compiled for
 * the Node.js that installed it; `npm run test:node-matrix` compiles it for each other major and
 * loads that build (scripts/sqlite-addon.mjs). Where it still does not load (vitest run directly
 * on another major, or the compile failed) the SQLite cases skip with this reason; under CI=true
 * that is an error.
 */
export async function sqliteUnusable(): Promise<string | undefined> {
  try {
    const { default: Database } = await import('better-sqlite3')
    new Database(':memory:').close()
    return undefined
  } catch (err) {
    if (!String((err as Error).message).includes('NODE_MODULE_VERSION')) throw err
    const reason =
      `better-sqlite3 was compiled for another Node.js than ${process.version}: the SQLite cases are skipped on this one ` +
      '(`npm run test:node-matrix` compiles it for each major)'
    if (process.env.CI === 'true') throw new Error(`${reason}; CI=true requires them`)
    return reason
  }
}
