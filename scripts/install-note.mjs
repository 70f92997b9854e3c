#!/usr/bin/env node
// Run by `npm install` in a clone (first in the `prepare` script), after npm's own output. On
// Node.js 20 npm warns EBADENGINE for the development dependencies whose `engines` leave 20 out
// (the OpenAI SDK 7 that @openai/agents 0.20 needs, the Gemini SDK 3, the MCP conformance suite's
// and napi-rs's helpers): this names them and says that nothing is to be done. They are used on
// Node.js 20 all the same (CI installs and runs the whole suite there); toolwire's users never
// install them. Prints nothing when every installed package accepts this Node.js.
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(fileURLToPath(import.meta.url), '..', '..')

/**
 * The development dependencies in `lock` (package-lock.json) whose `engines.node` leaves out
 * `nodeVersion`, as `name@version`, sorted: the packages npm warns EBADENGINE about.
 */
export function devEngineMisses(lock, nodeVersion, satisfies) {
  const misses = []
  for (const [path, entry] of Object.entries(lock.packages ?? {})) {
    const range = entry.engines?.node
    if (path === '' || !entry.dev || entry.optional || typeof range !== 'string') continue
    if (!satisfies(nodeVersion, range, { includePrerelease: true })) misses.push(`${path.slice(path.lastIndexOf('node_modules/') + 13)}@${entry.version}`)
  }
  return [...new Set(misses)].sort()
}

/** The note for `misses` on `nodeVersion`, or undefined when there are none. */
export function installNote(misses, nodeVersion) {
  if (misses.length === 0) return undefined
  return (
    `toolwire: the EBADENGINE warnings above are for development dependencies that declare a newer Node.js than ${nodeVersion}: ` +
    `${misses.join(', ')}. Nothing to do: the test suite runs on Node.js 20, 22 and 24 with them, and users of the published package never install them.`
  )
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  try {
    const { satisfies } = createRequire(import.meta.url)('semver')
    const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8'))
    const note = installNote(devEngineMisses(lock, process.versions.node, satisfies), process.version)
    if (note !== undefined) console.log(note)
  } catch {
    // a note only: never a reason for the install to fail
  }
}
