/** The built-in demo toolset and its sandbox. */
export { createDemoTools, SEARCH_SKIP_DIRS } from './tools.js'
export type { DemoToolsOptions } from './tools.js'
export { MAX_PATH_BYTES, Sandbox, SandboxError } from './sandbox.js'
export type { OpenChildOptions, SandboxErrorCode, SandboxHandle, SandboxPath } from './sandbox.js'
