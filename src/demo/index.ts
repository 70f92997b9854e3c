/** The built-in demo toolset and its sandbox. */
export { createDemoTools, SEARCH_SKIP_DIRS } from './tools.js'
export type { DemoToolsOptions } from './tools.js'
export { Sandbox, SandboxError } from './sandbox.js'
export type { SandboxErrorCode, SandboxPath } from './sandbox.js'
