/**
 * What `toolwire serve` loads before it serves: a tool module (`loadToolModule`) and
 * toolwire's own version. No MCP SDK import.
 */
import { readFileSync } from 'node:fs'
import { dirname, join, resolve as resolvePath } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import type { ToolDefinition, ToolManager } from '../runtime/manager.js'
import type { ServableManager } from './meta.js'

let cachedVersion: string | undefined

/** toolwire's own version, read from its package.json (`0.0.0` when not found). */
export function toolwireVersion(): string {
  if (cachedVersion !== undefined) return cachedVersion
  let dir = dirname(fileURLToPath(import.meta.url))
  for (let i = 0; i < 4; i++) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string }
      if (pkg.name === 'toolwire' && typeof pkg.version === 'string') return (cachedVersion = pkg.version)
    } catch {
      // keep looking upwards
    }
    dir = dirname(dir)
  }
  return (cachedVersion = '0.0.0')
}

/** Whether `value` looks like a `ToolManager` (from this or another copy of toolwire). */
export function isServableManager(value: unknown): value is ServableManager {
  if (typeof value !== 'object' || value === null) return false
  const v = value as Record<string, unknown>
  return ['call', 'manifest', 'list', 'confirm', 'on', 'off', 'register'].every((k) => typeof v[k] === 'function')
}

/**
 * Loads a tool module for `toolwire serve <module>`: its default export is a
 * `ToolManager`, a list of tool definitions, or a (possibly async) function returning
 * either. A list is registered into a manager made by `makeManager`.
 * @throws Error when the module cannot be loaded or exports neither.
 */
export async function loadToolModule(
  specifier: string,
  makeManager: () => ServableManager & Pick<ToolManager, 'register'>,
  cwd: string = process.cwd(),
): Promise<ServableManager> {
  const url = /^[a-z][a-z0-9+.-]*:/i.test(specifier) && !/^[a-z]:[\\/]/i.test(specifier) ? specifier : pathToFileURL(resolvePath(cwd, specifier)).href
  const mod = (await import(url)) as { default?: unknown; tools?: unknown }
  let value = mod.default ?? mod.tools
  if (typeof value === 'function' && !isServableManager(value)) value = await (value as () => unknown)()
  if (isServableManager(value)) return value
  if (Array.isArray(value)) {
    const tm = makeManager()
    for (const tool of value) tm.register(tool as ToolDefinition)
    return tm
  }
  throw new Error(`toolwire: ${specifier} must default-export a ToolManager or a list of tools`)
}
