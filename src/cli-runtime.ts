/**
 * What the `toolwire` command runs on: the library, loaded on demand ({@link loadRuntime}),
 * the tool manager a command serves ({@link managerFor}) and the durable store of `--store`
 * with its secrets ({@link durableOptions}).
 */
import { resolve } from 'node:path'
import type { DemoToolsOptions } from './demo/index.js'
import type { ToolDefinition, ToolManager, ToolManagerOptions } from './runtime/manager.js'
import type { ServableManager } from './mcp/meta.js'
import type { ServeStdioOptions } from './mcp/stdio.js'
import type { HttpMcpServer, ServeHttpOptions } from './mcp/http.js'
import type { ToolStore } from './runtime/store/types.js'
import { UsageError, type Parsed } from './cli-args.js'

/** The library's parts the command uses. */
export interface Runtime {
  readonly ToolManager: new (options?: ToolManagerOptions) => ToolManager
  readonly createDemoTools: (options?: DemoToolsOptions) => Promise<ToolDefinition<never>[]>
  readonly serveStdio: (tm: ServableManager, options?: ServeStdioOptions) => Promise<{ readonly closed: Promise<void> }>
  readonly serveHttp: (tm: ServableManager, options?: ServeHttpOptions) => Promise<HttpMcpServer>
  readonly loadToolModule: (specifier: string, make: () => ToolManager, cwd?: string) => Promise<ServableManager>
  readonly toolwireVersion: () => string
  readonly openStore: (spec: string) => Promise<ToolStore>
  /** The library's own checks of a secret or a list of them (messages name the place, never the value). */
  readonly approvalSecretList: (secrets: string | readonly string[], option: string) => readonly Buffer[]
  readonly storeKeyList: (keys: string | readonly string[], option: string) => readonly Buffer[]
}

/** The library, loaded from the same build's shared chunks as the command. */
export async function loadRuntime(): Promise<Runtime> {
  const [manager, demo, mcp, approval, codec] = await Promise.all([
    import('./runtime/manager.js'),
    import('./demo/index.js'),
    import('./mcp/index.js'),
    import('./runtime/store/approval.js'),
    import('./runtime/store/codec.js'),
  ])
  return {
    ToolManager: manager.ToolManager,
    createDemoTools: demo.createDemoTools,
    serveStdio: mcp.serveStdio,
    serveHttp: mcp.serveHttp,
    loadToolModule: mcp.loadToolModule,
    toolwireVersion: mcp.toolwireVersion,
    openStore,
    approvalSecretList: approval.approvalSecretList,
    storeKeyList: codec.storeKeyList,
  }
}

/** A store from `--store`: `sqlite:<file>` (or a path ending in .db/.sqlite) or `postgres://…`. */
async function openStore(spec: string): Promise<ToolStore> {
  const store = await import('./runtime/store/index.js')
  if (/^postgres(ql)?:\/\//i.test(spec)) return store.openPostgresStore({ connectionString: spec })
  const path = spec.startsWith('sqlite:') ? spec.slice('sqlite:'.length) : /\.(db|sqlite3?)$/i.test(spec) ? spec : undefined
  if (path === undefined || path === '') {
    // the value may hold a user and password: no part of it is shown
    throw new UsageError('--store takes sqlite:<file> or postgres://… (or a path ending in .db or .sqlite); the value given is not shown: it may hold a password')
  }
  return store.openSqliteStore({ path: resolve(path) })
}

/** The tool manager of a tool module, else of the demo toolset confined to `root`. */
export async function managerFor(rt: Runtime, module: string | undefined, root: string | undefined, options: ToolManagerOptions = {}): Promise<ServableManager> {
  if (module !== undefined) {
    let made: ToolManager | undefined
    let tm: ServableManager
    try {
      tm = await rt.loadToolModule(module, () => (made = new rt.ToolManager(options)))
    } catch (err) {
      throw new UsageError(`cannot load tool module ${module}: ${(err as Error).message}`)
    }
    if (options.store !== undefined && tm !== made) {
      throw new UsageError(`--store: ${module} exports its own ToolManager; give it the store there (new ToolManager({ store, approvalSecret })), or export a list of tools`)
    }
    return tm
  }
  let tools: ToolDefinition<never>[]
  try {
    tools = await rt.createDemoTools({ root: resolve(root ?? '.') })
  } catch (err) {
    throw new UsageError(`cannot open the sandbox root ${root ?? '.'}: ${(err as Error).message}`)
  }
  const tm = new rt.ToolManager(options)
  for (const tool of tools) tm.register(tool)
  return tm
}

/** `serve`'s durable store and the secrets it goes with. */
export interface DurableServe {
  readonly store: ToolStore
  /** Newest first: the first signs, any verifies. */
  readonly approvalSecret?: readonly string[]
  /** Newest first: the first seals, any opens. */
  readonly storeKey?: readonly string[]
}

/**
 * The secrets of an environment variable: one, or a comma-separated list newest first (spaces
 * around each trimmed); `undefined` when unset or empty. Each is checked as the library checks
 * the option (`check`), so a bad one is a usage error before anything is opened. No message
 * ever shows a secret: an entry is named by its place (counted from 0, newest first).
 */
function secretsOf(name: string, check: (value: string | readonly string[], option: string) => readonly Buffer[]): readonly string[] | undefined {
  const value = process.env[name]
  if (value === undefined || value === '') return undefined
  const list = value.split(',').map((s) => s.trim())
  const empty = list.findIndex((s) => s === '')
  if (empty !== -1) {
    throw new UsageError(
      list.length === 1
        ? `${name} is blank: give one secret, or a comma-separated list of them, newest first`
        : `${name}[${empty}] is empty (entry ${empty + 1} of ${list.length}): give one secret, or a comma-separated list of them, newest first, with no empty entry`,
    )
  }
  try {
    check(list.length === 1 ? list[0]! : list, name)
  } catch (err) {
    if (!(err instanceof TypeError)) throw err
    const message = err.message.replace(/^toolwire: /, '')
    const named = message.includes(name) ? message : `${name}: ${message}`
    throw new UsageError(list.length === 1 ? named : `${named} (a comma-separated list, newest first, counted from 0)`)
  }
  return list
}

/** The store of `--store` (or TOOLWIRE_STORE), with TOOLWIRE_APPROVAL_SECRET and TOOLWIRE_STORE_KEY (each one secret or a comma-separated list, newest first). */
export async function durableOptions(rt: Runtime, p: Parsed, http: boolean): Promise<DurableServe | undefined> {
  const env = (name: string): string | undefined => {
    const v = process.env[name]
    return v === undefined || v === '' ? undefined : v
  }
  const spec = p.store ?? env('TOOLWIRE_STORE')
  if (spec === undefined) return undefined
  const approvalSecret = secretsOf('TOOLWIRE_APPROVAL_SECRET', rt.approvalSecretList)
  const storeKey = secretsOf('TOOLWIRE_STORE_KEY', rt.storeKeyList)
  if (approvalSecret === undefined && http) {
    throw new UsageError('--store with --http needs TOOLWIRE_APPROVAL_SECRET (at least 16 bytes, the same on every instance): it signs confirmations and seals approval links')
  }
  let store: ToolStore
  try {
    store = await rt.openStore(spec)
  } catch (err) {
    if (err instanceof UsageError) throw err
    // the connection string may carry a user and password: only the kind of store is named
    throw new UsageError(`cannot open the store (${/^postgres(ql)?:\/\//i.test(spec) ? 'postgres' : 'sqlite'}): ${(err as Error).message}`)
  }
  return { store, ...(approvalSecret === undefined ? {} : { approvalSecret }), ...(storeKey === undefined ? {} : { storeKey }) }
}
