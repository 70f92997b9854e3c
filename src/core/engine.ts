/**
 * The Node.js versions toolwire supports: 20 (from 20.17), 22 and 24, the lines CI runs
 * the whole test suite on (`npm run test:node-matrix`). Checked once, when the package loads:
 * - older than 20.17: loading throws an `Error` with code `ERR_TOOLWIRE_NODE_VERSION`;
 * - any other version outside those lines (odd majors, 26 and later): it loads and works as
 *   far as anyone knows, with one process warning, code `TOOLWIRE_UNTESTED_NODE`
 *   (`node --disable-warning=TOOLWIRE_UNTESTED_NODE` silences it).
 */

/** The supported range, as `engines.node` in package.json states it. */
export const SUPPORTED_NODE = '^20.17.0 || ^22.0.0 || ^24.0.0'

/** How toolwire stands with one Node.js version. */
export type NodeSupport = 'supported' | 'untested' | 'too_old'

/** Classifies a Node.js version string such as `process.versions.node` (`22.23.5`, `v24.1.0`). */
export function nodeSupport(version: string): NodeSupport {
  const [major = 0, minor = 0] = version.replace(/^v/, '').split('.').map((n) => Number.parseInt(n, 10) || 0)
  if (major < 20 || (major === 20 && minor < 17)) return 'too_old'
  return major === 20 || major === 22 || major === 24 ? 'supported' : 'untested'
}

/** Throws on a version older than 20.17; warns once on an untested one. */
export function checkNode(version: string = process.versions.node): void {
  const support = nodeSupport(version)
  if (support === 'too_old') {
    throw Object.assign(new Error(`toolwire requires Node.js 20.17 or later (supported: 20, 22 and 24); this is Node.js ${version}`), {
      code: 'ERR_TOOLWIRE_NODE_VERSION',
    })
  }
  if (support === 'untested') {
    process.emitWarning(`toolwire is tested on Node.js 20, 22 and 24; Node.js ${version} is not one of them`, { code: 'TOOLWIRE_UNTESTED_NODE' })
  }
}

checkNode()
