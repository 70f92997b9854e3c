// `npm run test:wasm`: the suite with the addon replaced by the WebAssembly fallback. The variable
// goes to the test processes only: vitest's own bundler (rolldown) is a napi-rs package too, and
// would otherwise look for its own wasm build.
import { defineConfig, mergeConfig } from 'vitest/config'
import base from './vitest.config.js'

export default mergeConfig(base, defineConfig({ test: { env: { NAPI_RS_FORCE_WASI: 'error' } } }))
