/**
 * The only module that imports the generated napi-rs binding. Everything else in
 * `src/` goes through the names re-exported here.
 */
import { existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type * as Binding from '../../binding.js'

/**
 * The package root: the nearest folder above this module that holds `binding.cjs` (this file
 * runs from `src/core/` in a checkout and from `dist/` or `dist/cjs/` in the package).
 */
function bindingPath(): string {
  let dir = dirname(fileURLToPath(import.meta.url))
  for (let up = 0; up < 4; up++) {
    const candidate = join(dir, 'binding.cjs')
    if (existsSync(candidate)) return candidate
    dir = dirname(dir)
  }
  return join(dirname(fileURLToPath(import.meta.url)), '..', 'binding.cjs')
}

function loadBinding(): typeof Binding {
  const require = createRequire(import.meta.url)
  try {
    return require(bindingPath()) as typeof Binding
  } catch (cause) {
    const platform = `${process.platform}-${process.arch}`
    // napi-rs's package names: linux-x64-gnu / linux-x64-musl, win32-x64-msvc, darwin-arm64.
    const glibc = (process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined)?.header?.glibcVersionRuntime
    const abi = process.platform === 'linux' ? (glibc ? '-gnu' : '-musl') : process.platform === 'win32' ? '-msvc' : ''
    throw new Error(
      `toolwire: no native binary for ${platform} (Node ${process.versions.node}). ` +
        `Prebuilt binaries ship as the optional package "toolwire-${platform}${abi}" ` +
        '(or, where none matches, the WebAssembly fallback "toolwire-wasm32-wasi"); ' +
        'reinstall without --omit=optional / --no-optional, or build from source with a Rust toolchain ' +
        '(`npm run build:native` in a clone of toolwire). A tarball made with `npm pack` in a clone has no binary: ' +
        'pack with `node scripts/pack.mjs <dir> --only=<platform>` and install all of its tarballs (docs/platforms.md).',
      { cause },
    )
  }
}

const binding = loadBinding()

export const coreTables: typeof Binding.coreTables = binding.coreTables
export const canonicalizeResult: typeof Binding.canonicalizeResult = binding.canonicalizeResult
export const checkContentPart: typeof Binding.checkContentPart = binding.checkContentPart
export const BindingSchema: typeof Binding.BindingSchema = binding.BindingSchema
export const BindingMetrics: typeof Binding.BindingMetrics = binding.BindingMetrics
export const callRecordJson: typeof Binding.callRecordJson = binding.callRecordJson
export const renderTables: typeof Binding.renderTables = binding.renderTables
export const modelViewJson: typeof Binding.modelViewJson = binding.modelViewJson
export const renderWireJson: typeof Binding.renderWireJson = binding.renderWireJson
export type { BindingCoreTables, BindingIssue } from '../../binding.js'
