#!/usr/bin/env node
/**
 * The `toolwire` command:
 *
 *   toolwire serve [module] [--root <dir>]        an MCP server over stdio
 *   toolwire serve [module] --http [host:]port    an MCP server over Streamable HTTP
 *   toolwire call <tool> ['<json>'] [--root <dir>] [--module <m>] [--yes]
 *   toolwire tools [module] [--json] [--root <dir>]
 *
 * The library is loaded on demand from the same build's shared chunks as `toolwire`
 * itself, so a tool module that imports `toolwire` shares the very same classes (helper
 * results, views and `instanceof` checks work across the two).
 */
import { resolve } from 'node:path'
import { parseArgs } from 'node:util'
import type { DemoToolsOptions } from './demo/index.js'
import type { ToolDefinition, ToolManager, ToolManagerOptions } from './runtime/manager.js'
import type { ServableManager } from './mcp/meta.js'
import type { ServeStdioOptions } from './mcp/stdio.js'
import type { HttpMcpServer, ServeHttpOptions } from './mcp/http.js'
import type { ServeHttpAuthOptions } from './mcp/auth/resource-server.js'
import type { CallResult } from './core/view.js'
import type { ToolStore } from './runtime/store/types.js'
import { givenSecrets, redactSecrets } from './cli-redact.js'

interface Runtime {
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

/** Exit codes of `toolwire call`, by the status of the application view. */
export const EXIT_CODES: Readonly<Record<CallResult['status'] | 'usage', number>> = Object.freeze({
  ok: 0,
  error: 1,
  invalid: 2,
  refused: 3,
  needs_confirmation: 4,
  pending: 5,
  cancelled: 6,
  usage: 64,
})

const USAGE = `Usage:
  toolwire serve [module] [--root <dir>]     serve tools over MCP (stdio)
  toolwire serve [module] --http [host:]port serve tools over MCP Streamable HTTP
  toolwire call <tool> ['<json>'] [options]  run one call, print the result as JSON
  toolwire tools [module] [--json]           list the tools

Without a module, the built-in demo toolset is used (read_file, list_dir,
search_text, edit_settings, delete_file), confined to --root (default: the
current directory). A module default-exports a ToolManager or a list of tools.

Options:
  --root <dir>      the demo toolset's sandbox directory (default: .)
  --module <path>   a tool module (call, tools; same as the positional module)
  --json            tools: print the manifest as JSON
  --yes             call: approve a call that needs confirmation
  --timeout <ms>    call: cancel the call after this many milliseconds
  --http <[host:]port>  serve: MCP Streamable HTTP at http://host:port/mcp
                    (host default 127.0.0.1; port 0 picks a free one)
  --stateless       serve --http: no sessions (any instance answers any request)
  --token <token>   serve --http: require "Authorization: Bearer <token>"
                    (default: the TOOLWIRE_TOKEN environment variable;
                    set but empty is a usage error)
  --auth-issuer <url>  serve --http: be an OAuth resource server: accept access
                    tokens of this issuer only (default: TOOLWIRE_AUTH_ISSUER;
                    not with --token; see docs/auth.md)
  --auth-audience <uri>  the audience tokens must name (default: --public-url's
                    origin plus /mcp, else the bound URL; TOOLWIRE_AUTH_AUDIENCE)
  --auth-require-at-jwt  accept only typ at+jwt (TOOLWIRE_AUTH_REQUIRE_AT_JWT=1)
  --auth-jwks-uri <url>  the issuer's key set, when it has no metadata
                    (TOOLWIRE_AUTH_JWKS_URI)
  --auth-introspection-client-id <id>  introspect opaque tokens as this client
                    (TOOLWIRE_AUTH_INTROSPECTION_CLIENT_ID); its secret only from
                    TOOLWIRE_AUTH_INTROSPECTION_CLIENT_SECRET
  --max-calls-per-principal <n>  with --auth-issuer: the most tools/call requests one
                    principal has in flight (TOOLWIRE_AUTH_MAX_CALLS_PER_PRINCIPAL)
  --calls-per-minute <n>  with --auth-issuer: each principal's sustained call rate,
                    a token bucket of a minute's worth (TOOLWIRE_AUTH_CALLS_PER_MINUTE);
                    over either quota: 429 with Retry-After
  --confirm-sign-in  with --auth-issuer: approvers sign in at the issuer on the
                    confirmation page (OpenID Connect, needs openid-client) as the
                    client TOOLWIRE_AUTH_SIGNIN_CLIENT_ID, its secret only from
                    TOOLWIRE_AUTH_SIGNIN_CLIENT_SECRET; the evidence names the approver
  --confirm-approver-scope <scope>  with --confirm-sign-in: the scope an approver
                    must hold ({tool} is the tool's name: approve:{tool})
  --confirm-not-caller  with --confirm-sign-in: the caller may not approve its own call
  --allow-origin <origin>  serve --http: also accept this Origin (repeatable)
  --metrics-public  serve --http: /healthz and /metrics without the token
  --public-url <url>  serve --http: the address browsers reach this server at
                    (for the approval links of calls that need confirmation)
  --no-link-in-text  serve --http: keep approval links out of the result text
                    the model reads (only in _meta["toolwire/confirmation"].url,
                    for a client application that shows it to its user)
  --store <store>   serve: a durable store shared by instances: sqlite:<file>
                    or postgres://user@host:port/db (default: TOOLWIRE_STORE);
                    TOOLWIRE_APPROVAL_SECRET (16+ bytes, same on every instance)
                    signs confirmations and approval links (required with --http),
                    TOOLWIRE_STORE_KEY (32 bytes, hex or base64) seals parked input;
                    to rotate either, give a comma-separated list, newest first
  -h, --help        show this help
  -v, --version     show the version

TOOLWIRE_DEBUG=1 prints each tool exception (tool, call id, name, message,
stack) and transport errors to stderr: for the operator only, as it shows
what a tool put in its exception.

Exit codes of call: 0 ok, 1 error, 2 invalid, 3 refused, 4 needs_confirmation,
5 pending, 6 cancelled, 64 usage error.`

async function loadRuntime(): Promise<Runtime> {
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

class UsageError extends Error {}

interface Parsed {
  readonly command: string | undefined
  readonly positionals: readonly string[]
  readonly root: string | undefined
  readonly module: string | undefined
  readonly json: boolean
  readonly yes: boolean
  readonly timeout: string | undefined
  readonly http: string | undefined
  readonly stateless: boolean
  readonly token: string | undefined
  readonly authIssuer: string | undefined
  readonly authAudience: string | undefined
  readonly authRequireAtJwt: boolean
  readonly authJwksUri: string | undefined
  readonly authIntrospectionClientId: string | undefined
  readonly maxCallsPerPrincipal: string | undefined
  readonly confirmSignIn: boolean
  readonly confirmApproverScope: string | undefined
  readonly confirmNotCaller: boolean
  readonly callsPerMinute: string | undefined
  readonly allowOrigins: readonly string[]
  readonly metricsPublic: boolean
  readonly publicUrl: string | undefined
  readonly linkInText: boolean
  readonly store: string | undefined
  readonly help: boolean
  readonly version: boolean
}

function parse(argv: readonly string[]): Parsed {
  let values: Record<string, string | boolean | string[] | undefined>
  let positionals: string[]
  try {
    ;({ values, positionals } = parseArgs({
      args: [...argv],
      allowPositionals: true,
      strict: true,
      options: {
        root: { type: 'string' },
        module: { type: 'string' },
        json: { type: 'boolean' },
        yes: { type: 'boolean', short: 'y' },
        timeout: { type: 'string' },
        http: { type: 'string' },
        stateless: { type: 'boolean' },
        token: { type: 'string' },
        'auth-issuer': { type: 'string' },
        'auth-audience': { type: 'string' },
        'auth-require-at-jwt': { type: 'boolean' },
        'auth-jwks-uri': { type: 'string' },
        'auth-introspection-client-id': { type: 'string' },
        'max-calls-per-principal': { type: 'string' },
        'confirm-sign-in': { type: 'boolean' },
        'confirm-approver-scope': { type: 'string' },
        'confirm-not-caller': { type: 'boolean' },
        'calls-per-minute': { type: 'string' },
        'allow-origin': { type: 'string', multiple: true },
        'metrics-public': { type: 'boolean' },
        'public-url': { type: 'string' },
        'no-link-in-text': { type: 'boolean' },
        store: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
        version: { type: 'boolean', short: 'v' },
      },
    }))
  } catch (err) {
    throw new UsageError((err as Error).message)
  }
  return {
    command: positionals[0],
    positionals: positionals.slice(1),
    root: values.root as string | undefined,
    module: values.module as string | undefined,
    json: values.json === true,
    yes: values.yes === true,
    timeout: values.timeout as string | undefined,
    http: values.http as string | undefined,
    stateless: values.stateless === true,
    token: values.token as string | undefined,
    authIssuer: values['auth-issuer'] as string | undefined,
    authAudience: values['auth-audience'] as string | undefined,
    authRequireAtJwt: values['auth-require-at-jwt'] === true,
    authJwksUri: values['auth-jwks-uri'] as string | undefined,
    authIntrospectionClientId: values['auth-introspection-client-id'] as string | undefined,
    maxCallsPerPrincipal: values['max-calls-per-principal'] as string | undefined,
    confirmSignIn: values['confirm-sign-in'] === true,
    confirmApproverScope: values['confirm-approver-scope'] as string | undefined,
    confirmNotCaller: values['confirm-not-caller'] === true,
    callsPerMinute: values['calls-per-minute'] as string | undefined,
    allowOrigins: (values['allow-origin'] as string[] | undefined) ?? [],
    metricsPublic: values['metrics-public'] === true,
    publicUrl: values['public-url'] as string | undefined,
    linkInText: values['no-link-in-text'] !== true,
    store: values.store as string | undefined,
    help: values.help === true,
    version: values.version === true,
  }
}

async function managerFor(rt: Runtime, module: string | undefined, root: string | undefined, options: ToolManagerOptions = {}): Promise<ServableManager> {
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

function hintList(entry: { hints?: Record<string, unknown>; needsConfirmation?: true }): string {
  const h = entry.hints ?? {}
  const out: string[] = []
  if (h.readOnly === true) out.push('read-only')
  if (h.destructive === true) out.push('destructive')
  if (h.idempotent === true) out.push('idempotent')
  if (h.untrustedContent === true) out.push('untrusted')
  if (entry.needsConfirmation === true) out.push('confirm')
  return out.join(',')
}

function table(rows: readonly (readonly string[])[]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)))
  return rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  ')).join('\n')
}

/** Runs the CLI; resolves to the exit code. */
export async function main(argv: readonly string[], given: { out: (s: string) => void; err: (s: string) => void }): Promise<number> {
  // nothing written to stderr shows a secret the command was given (a token, a store's password)
  const secrets = givenSecrets(argv, process.env)
  const io = { out: given.out, err: (s: string) => given.err(redactSecrets(s, secrets)) }
  let parsed: Parsed
  try {
    parsed = parse(argv)
  } catch (err) {
    io.err(`toolwire: ${(err as Error).message}\n\n${USAGE}\n`)
    return EXIT_CODES.usage
  }
  if (parsed.help) {
    io.out(USAGE + '\n')
    return 0
  }
  const rt = await loadRuntime()
  if (parsed.version) {
    io.out(rt.toolwireVersion() + '\n')
    return 0
  }
  try {
    switch (parsed.command) {
      case 'serve':
        return await serve(rt, parsed, io)
      case 'call':
        return await call(rt, parsed, io)
      case 'tools':
        return await tools(rt, parsed, io)
      case undefined:
        throw new UsageError('missing command')
      default:
        throw new UsageError(`unknown command ${JSON.stringify(parsed.command)}`)
    }
  } catch (err) {
    if (err instanceof UsageError) {
      io.err(`toolwire: ${err.message}\n\n${USAGE}\n`)
      return EXIT_CODES.usage
    }
    throw err
  }
}

async function serve(rt: Runtime, p: Parsed, io: { err: (s: string) => void }): Promise<number> {
  if (p.positionals.length > 1) throw new UsageError('serve takes at most one module')
  const module = p.module ?? p.positionals[0]
  const authFlags =
    p.authIssuer !== undefined ||
    p.authAudience !== undefined ||
    p.authRequireAtJwt ||
    p.authJwksUri !== undefined ||
    p.authIntrospectionClientId !== undefined ||
    p.maxCallsPerPrincipal !== undefined ||
    p.callsPerMinute !== undefined ||
    p.confirmSignIn ||
    p.confirmApproverScope !== undefined ||
    p.confirmNotCaller
  if (p.http === undefined && (p.stateless || p.token !== undefined || p.allowOrigins.length > 0 || p.metricsPublic || p.publicUrl !== undefined || !p.linkInText || authFlags)) {
    throw new UsageError('--stateless, --token, --auth-*, --allow-origin, --metrics-public, --public-url and --no-link-in-text go with --http')
  }
  if (p.publicUrl !== undefined && !/^https?:\/\/[^/]+/i.test(p.publicUrl)) throw new UsageError('--public-url takes an http(s) URL')
  const listen = p.http === undefined ? undefined : parseListen(p.http)
  const durable = await durableOptions(rt, p, listen !== undefined)
  let sweeping: ReturnType<typeof setInterval> | undefined
  try {
    const tm = await managerFor(rt, module, p.root, durable ?? {})
    // with a store: runs a stopped instance left unfinished are reported as outcome unknown, once across instances
    const recover = (tm as Partial<Pick<ToolManager, 'recover'>>).recover
    if (durable !== undefined && typeof recover === 'function') {
      // a store that fails rejects (StoreUnavailableError); the next tick tries again
      sweeping = setInterval(() => void recover.call(tm).catch((err: unknown) => io.err(`toolwire: recover: ${err instanceof Error ? err.message : String(err)}\n`)), 60_000)
      sweeping.unref()
    }
    const debug = process.env.TOOLWIRE_DEBUG !== undefined && process.env.TOOLWIRE_DEBUG !== ''
    if (debug) debugToolErrors(tm, io)
    const what = module === undefined ? `the demo toolset in ${resolve(p.root ?? '.')}` : module
    if (listen !== undefined) return await serveOverHttp(rt, tm, p, listen, what, debug, io, durable)
    // with a store that has tasks, a 2026-07-28 client that declares the extension gets tasks
    const { closed } = await rt.serveStdio(tm, {
      onError: debug ? (e) => io.err(`toolwire: ${e.message}\n`) : undefined,
      ...(durable === undefined ? {} : { store: durable.store }),
    })
    io.err(`toolwire: serving ${tm.list().length} tools from ${what} over MCP (stdio${durable === undefined ? '' : `, ${durable.store.kind} store`}); end the input to stop\n`)
    const stop = (): void => {
      process.stdin.destroy()
    }
    process.once('SIGTERM', stop)
    await closed
    process.off('SIGTERM', stop)
    return 0
  } finally {
    clearInterval(sweeping)
    await durable?.store.close().catch(() => undefined)
  }
}

interface DurableServe {
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
async function durableOptions(rt: Runtime, p: Parsed, http: boolean): Promise<DurableServe | undefined> {
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

/** `[host:]port`: `8808`, `0.0.0.0:8808`, `[::1]:8808`; the host a name or an address, nothing else (no user, no password). */
function parseListen(value: string): { host: string; port: number } {
  const m = /^(?:(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9._-]+):)?(\d{1,5})$/.exec(value.trim())
  const port = m === null ? NaN : Number(m[2])
  // the value may hold a user and password: no part of it is shown
  if (m === null || !(port >= 0 && port <= 65535)) throw new UsageError('--http takes [host:]port, such as 8808, 0.0.0.0:8808 or [::1]:8808 (the value given is not shown)')
  const host = m[1] === undefined ? '127.0.0.1' : m[1].startsWith('[') ? m[1].slice(1, -1) : m[1]
  return { host, port }
}

/** The flag, else the environment variable, that gave an `auth` option. */
const AUTH_FLAGS: Readonly<Record<string, readonly [flag: string, env: string, given: (p: Parsed) => boolean]>> = {
  'auth.issuer': ['--auth-issuer', 'TOOLWIRE_AUTH_ISSUER', (p) => p.authIssuer !== undefined],
  'auth.audience': ['--auth-audience', 'TOOLWIRE_AUTH_AUDIENCE', (p) => p.authAudience !== undefined],
  'auth.jwksUri': ['--auth-jwks-uri', 'TOOLWIRE_AUTH_JWKS_URI', (p) => p.authJwksUri !== undefined],
  'auth.introspection.clientId': ['--auth-introspection-client-id', 'TOOLWIRE_AUTH_INTROSPECTION_CLIENT_ID', (p) => p.authIntrospectionClientId !== undefined],
  'auth.introspection.clientSecret': ['TOOLWIRE_AUTH_INTROSPECTION_CLIENT_SECRET', 'TOOLWIRE_AUTH_INTROSPECTION_CLIENT_SECRET', () => false],
  'auth.quotas.concurrentCalls': ['--max-calls-per-principal', 'TOOLWIRE_AUTH_MAX_CALLS_PER_PRINCIPAL', (p) => p.maxCallsPerPrincipal !== undefined],
  'auth.quotas.callsPerMinute': ['--calls-per-minute', 'TOOLWIRE_AUTH_CALLS_PER_MINUTE', (p) => p.callsPerMinute !== undefined],
  'auth.signIn.clientId': ['TOOLWIRE_AUTH_SIGNIN_CLIENT_ID', 'TOOLWIRE_AUTH_SIGNIN_CLIENT_ID', () => false],
  'auth.signIn.approverScope': ['--confirm-approver-scope', '--confirm-approver-scope', () => true],
}

/** The variables that mean something only with an issuer. */
const ISSUER_BOUND_ENV = [
  'TOOLWIRE_AUTH_AUDIENCE',
  'TOOLWIRE_AUTH_REQUIRE_AT_JWT',
  'TOOLWIRE_AUTH_JWKS_URI',
  'TOOLWIRE_AUTH_INTROSPECTION_CLIENT_ID',
  'TOOLWIRE_AUTH_INTROSPECTION_CLIENT_SECRET',
  'TOOLWIRE_AUTH_MAX_CALLS_PER_PRINCIPAL',
  'TOOLWIRE_AUTH_CALLS_PER_MINUTE',
  'TOOLWIRE_AUTH_SIGNIN_CLIENT_ID',
  'TOOLWIRE_AUTH_SIGNIN_CLIENT_SECRET',
] as const

/** A flag's number (`NaN` for text that is none: serveHttp refuses it, naming the flag). */
function numberOf(text: string): number {
  return /^\s*$/.test(text) ? Number.NaN : Number(text)
}

/** `true` for 1 / true, `false` for unset, empty, 0 / false; a usage error otherwise. */
function envFlag(name: string): boolean {
  const value = (process.env[name] ?? '').trim().toLowerCase()
  if (value === '' || value === '0' || value === 'false') return false
  if (value === '1' || value === 'true') return true
  throw new UsageError(`${name} takes 1 or 0`)
}

/** `serveHttp`'s `auth` from the --auth-* flags and TOOLWIRE_AUTH_* variables (a flag wins), or undefined without an issuer. */
function authOptions(p: Parsed): ServeHttpAuthOptions | undefined {
  const env = (name: string): string | undefined => process.env[name]
  // a misspelled variable would leave the option it meant off (an issuer: an open server)
  const unknown = Object.keys(process.env).filter((name) => name.startsWith('TOOLWIRE_AUTH_') && name !== 'TOOLWIRE_AUTH_ISSUER' && !(ISSUER_BOUND_ENV as readonly string[]).includes(name))
  if (unknown.length > 0) throw new UsageError(`unknown environment variable ${unknown.sort().join(', ')} (the TOOLWIRE_AUTH_* variables: TOOLWIRE_AUTH_ISSUER, ${ISSUER_BOUND_ENV.join(', ')})`)
  const issuer = p.authIssuer ?? env('TOOLWIRE_AUTH_ISSUER')
  const audience = p.authAudience ?? env('TOOLWIRE_AUTH_AUDIENCE')
  const jwksUri = p.authJwksUri ?? env('TOOLWIRE_AUTH_JWKS_URI')
  const clientId = p.authIntrospectionClientId ?? env('TOOLWIRE_AUTH_INTROSPECTION_CLIENT_ID')
  const requireAtJwt = p.authRequireAtJwt || envFlag('TOOLWIRE_AUTH_REQUIRE_AT_JWT')
  const concurrentCalls = p.maxCallsPerPrincipal ?? env('TOOLWIRE_AUTH_MAX_CALLS_PER_PRINCIPAL')
  const callsPerMinute = p.callsPerMinute ?? env('TOOLWIRE_AUTH_CALLS_PER_MINUTE')
  if (issuer === undefined) {
    // a variable that only means something with an issuer, set without one: refused like its flag (never an open server)
    const stray = ISSUER_BOUND_ENV.filter((name) => env(name) !== undefined)
    if (stray.length > 0) throw new UsageError(`${stray.join(', ')} ${stray.length === 1 ? 'goes' : 'go'} with --auth-issuer (or TOOLWIRE_AUTH_ISSUER), which is not set`)
    if (
      p.authAudience !== undefined ||
      p.authJwksUri !== undefined ||
      p.authIntrospectionClientId !== undefined ||
      p.authRequireAtJwt ||
      p.maxCallsPerPrincipal !== undefined ||
      p.callsPerMinute !== undefined ||
      p.confirmSignIn ||
      p.confirmApproverScope !== undefined ||
      p.confirmNotCaller
    ) {
      throw new UsageError(
        '--auth-audience, --auth-require-at-jwt, --auth-jwks-uri, --auth-introspection-client-id, --max-calls-per-principal, --calls-per-minute and --confirm-* go with --auth-issuer (or TOOLWIRE_AUTH_ISSUER)',
      )
    }
  }
  if (issuer === undefined) return undefined
  const signInClientId = env('TOOLWIRE_AUTH_SIGNIN_CLIENT_ID')
  const signInSecret = env('TOOLWIRE_AUTH_SIGNIN_CLIENT_SECRET')
  if (p.confirmSignIn && (signInClientId === undefined || signInClientId === '')) throw new UsageError('--confirm-sign-in needs TOOLWIRE_AUTH_SIGNIN_CLIENT_ID (the confirmation page\'s client at the issuer)')
  // the sign-in variables never go unused: the client id turns sign-in on, as each variable turns its option on
  if (!p.confirmSignIn && signInClientId === undefined && signInSecret !== undefined) throw new UsageError('TOOLWIRE_AUTH_SIGNIN_CLIENT_SECRET goes with TOOLWIRE_AUTH_SIGNIN_CLIENT_ID')
  const signIn = p.confirmSignIn || signInClientId !== undefined
  if (!signIn && (p.confirmApproverScope !== undefined || p.confirmNotCaller)) throw new UsageError('--confirm-approver-scope and --confirm-not-caller go with --confirm-sign-in (or TOOLWIRE_AUTH_SIGNIN_CLIENT_ID)')
  const clientSecret = env('TOOLWIRE_AUTH_INTROSPECTION_CLIENT_SECRET')
  if (clientId !== undefined && (clientSecret === undefined || clientSecret === '')) {
    throw new UsageError('--auth-introspection-client-id needs TOOLWIRE_AUTH_INTROSPECTION_CLIENT_SECRET (the secret is read from the environment only)')
  }
  return {
    issuer,
    ...(audience === undefined ? {} : { audience }),
    ...(requireAtJwt ? { requireAtJwt } : {}),
    ...(jwksUri === undefined ? {} : { jwksUri }),
    ...(clientId === undefined ? {} : { introspection: { clientId, clientSecret: clientSecret! } }),
    ...(concurrentCalls === undefined && callsPerMinute === undefined
      ? {}
      : {
          quotas: {
            ...(concurrentCalls === undefined ? {} : { concurrentCalls: numberOf(concurrentCalls) }),
            ...(callsPerMinute === undefined ? {} : { callsPerMinute: numberOf(callsPerMinute) }),
          },
        }),
    ...(!signIn
      ? {}
      : {
          signIn: {
            clientId: signInClientId!,
            ...(signInSecret === undefined || signInSecret === '' ? {} : { clientSecret: signInSecret }),
            ...(p.confirmApproverScope === undefined ? {} : { approverScope: p.confirmApproverScope }),
            ...(p.confirmNotCaller ? { approverNotCaller: true } : {}),
          },
        }),
  }
}

/** A `serveHttp` option it refused (`must`: what it must be), told as the flag or environment variable that gave it. */
function refusedFlag(option: string, must: string, p: Parsed): string {
  const auth = AUTH_FLAGS[option]
  if (auth !== undefined && must.startsWith('is required')) return `${auth[0]} (or ${auth[1]}) is required when --http binds a non-loopback host without --public-url`
  if (auth !== undefined) return `${auth[2](p) ? auth[0] : auth[1]} ${must}`
  switch (option) {
    case 'token':
      return `${p.token !== undefined ? '--token' : 'TOOLWIRE_TOKEN'} ${must}`
    case 'allowedOrigins':
      return '--allow-origin takes an origin: scheme://host[:port], nothing after'
    case 'publicUrl':
      return `--public-url ${must}`
    default:
      return `the serveHttp option ${option} ${must}`
  }
}

async function serveOverHttp(
  rt: Runtime,
  tm: ServableManager,
  p: Parsed,
  listen: { host: string; port: number },
  what: string,
  debug: boolean,
  io: { err: (s: string) => void },
  durable: DurableServe | undefined,
): Promise<number> {
  // set but empty is refused by serveHttp like `--token ''`, never taken as "no token"
  const token = p.token ?? process.env.TOOLWIRE_TOKEN
  const auth = authOptions(p)
  if (token !== undefined && auth !== undefined) {
    throw new UsageError('--token (or TOOLWIRE_TOKEN) and --auth-issuer (or TOOLWIRE_AUTH_ISSUER) do not go together: one way to authorize at a time')
  }
  let served: HttpMcpServer
  try {
    served = await rt.serveHttp(tm, {
      host: listen.host,
      port: listen.port,
      stateless: p.stateless,
      ...(token === undefined ? {} : { token }),
      ...(auth === undefined ? {} : { auth }),
      allowedOrigins: p.allowOrigins,
      metricsPublic: p.metricsPublic,
      ...(p.publicUrl === undefined ? {} : { publicUrl: p.publicUrl }),
      ...(p.linkInText ? {} : { confirmationLinkInText: false }),
      ...(durable?.approvalSecret === undefined ? {} : { store: durable.store, approvalSecret: durable.approvalSecret }),
      onError: debug ? (e) => io.err(`toolwire: ${e.message}\n`) : undefined,
    })
  } catch (err) {
    // an option serveHttp refuses (its TypeError names it, never its value) is told as the flag or variable that gave it
    const refused = err instanceof TypeError ? /^toolwire: serveHttp\(\) option ([\w.]+) (must be .*|is required .*)$/.exec(err.message) : null
    if (refused !== null) throw new UsageError(refusedFlag(refused[1]!, refused[2]!, p))
    throw new UsageError(`cannot listen on ${listen.host}:${listen.port}: ${(err as Error).message}`)
  }
  const mode = p.stateless ? 'stateless' : 'sessions'
  const guard = auth !== undefined ? `access tokens of ${auth.issuer}` : token === undefined ? 'no token' : 'bearer token required'
  const stored = durable === undefined ? '' : `, ${durable.store.kind} store`
  io.err(`toolwire: serving ${tm.list().length} tools from ${what} over MCP (Streamable HTTP, ${mode}, ${guard}${stored}) at ${served.url}\n`)
  await new Promise<void>((resolveStop) => {
    const stop = (): void => {
      process.off('SIGTERM', stop)
      process.off('SIGINT', stop)
      resolveStop()
    }
    process.once('SIGTERM', stop)
    process.once('SIGINT', stop)
  })
  await served.close()
  return 0
}

async function call(rt: Runtime, p: Parsed, io: { out: (s: string) => void; err: (s: string) => void }): Promise<number> {
  const [tool, json = '{}', ...rest] = p.positionals
  if (tool === undefined) throw new UsageError('call needs a tool name')
  if (rest.length > 0) throw new UsageError('call takes a tool name and one JSON argument (quote it)')
  let timeoutMs: number | undefined
  if (p.timeout !== undefined) {
    timeoutMs = Number(p.timeout)
    if (!(Number.isFinite(timeoutMs) && timeoutMs > 0)) throw new UsageError('--timeout takes a positive number of milliseconds')
  }
  const tm = (await managerFor(rt, p.module, p.root)) as ToolManager
  if (process.env.TOOLWIRE_DEBUG !== undefined && process.env.TOOLWIRE_DEBUG !== '') debugToolErrors(tm, io)
  const controller = new AbortController()
  const onSignal = (): void => controller.abort()
  process.once('SIGINT', onSignal)
  // a tool waiting on nothing but its signal must not let the process end early
  const keepAlive = setInterval(() => undefined, 1 << 30)
  try {
    let view: CallResult =
      typeof tm.callJson === 'function'
        ? await tm.callJson(tool, json, { signal: controller.signal, ...(timeoutMs === undefined ? {} : { timeoutMs }) })
        : await tm.call(tool, JSON.parse(json), { signal: controller.signal })
    if (view.status === 'needs_confirmation' && p.yes) view = await tm.confirm(view.confirmId, { approve: true })
    io.out(JSON.stringify(view, null, 2) + '\n')
    return EXIT_CODES[view.status]
  } finally {
    clearInterval(keepAlive)
    process.off('SIGINT', onSignal)
  }
}

async function tools(rt: Runtime, p: Parsed, io: { out: (s: string) => void }): Promise<number> {
  if (p.positionals.length > 1) throw new UsageError('tools takes at most one module')
  const tm = await managerFor(rt, p.module ?? p.positionals[0], p.root)
  const manifest = tm.manifest()
  if (p.json) {
    io.out(JSON.stringify(manifest, null, 2) + '\n')
    return 0
  }
  const rows = [['NAME', 'HINTS', 'DESCRIPTION'], ...manifest.map((e) => [e.name, hintList(e as never) || '-', (e.description ?? '').split('\n')[0]!])]
  io.out(table(rows) + '\n')
  return 0
}

/**
 * Under TOOLWIRE_DEBUG: each `error` event (a tool's exception) on stderr, for the operator:
 * the tool, the call id, the exception's name, message and stack. It shows whatever the tool
 * put in its exception (it may hold secrets), hence only on request; never on stdout, which
 * carries the result of `call` and the frames of stdio MCP.
 */
function debugToolErrors(tm: Pick<ServableManager, 'on'>, io: { err: (s: string) => void }): void {
  tm.on('error', (event) => {
    try {
      const { error } = event
      let name: string
      try {
        const kind = error === null ? 'null' : typeof error
        name = error instanceof Error ? String(error.name) : `(${/^[aeiou]/.test(kind) ? 'an' : 'a'} ${kind})`
      } catch {
        name = '(an unreadable error)'
      }
      // the stack's frames (its first lines repeat the message, which may span several)
      const frames = event.stack === undefined ? [] : event.stack.split('\n').filter((line) => /^\s+at /.test(line))
      const stack = frames.length > 0 ? frames.join('\n') : (event.stack ?? '')
      io.err(`toolwire: [debug] tool ${JSON.stringify(event.tool)} threw (call ${event.callId}): ${name}: ${event.message}\n${stack === '' ? '' : `${stack}\n`}`)
    } catch {
      // stderr is gone: nothing to tell
    }
  })
}

/**
 * A tool's own stray rejection (a promise it never handles) must not end `serve` or a
 * `call`: it is noted on stderr (with its detail only under TOOLWIRE_DEBUG, as it may
 * carry secrets) and otherwise ignored. The manager itself never leaves one.
 */
function ignoreUnhandledRejections(): void {
  process.on('unhandledRejection', (reason: unknown) => {
    let detail = ''
    if (process.env.TOOLWIRE_DEBUG !== undefined && process.env.TOOLWIRE_DEBUG !== '') {
      try {
        detail = `: ${reason instanceof Error ? (reason.stack ?? reason.message) : String(reason)}`
      } catch {
        detail = ': (unprintable)'
      }
    }
    try {
      process.stderr.write(redactSecrets(`toolwire: ignored a promise rejection a tool left unhandled${detail}\n`, givenSecrets(process.argv.slice(2), process.env)))
    } catch {
      // stderr is gone: nothing to tell
    }
  })
}

const isMain = process.argv[1] !== undefined && import.meta.url.endsWith('/cli.js')
if (isMain) {
  ignoreUnhandledRejections()
  main(process.argv.slice(2), { out: (s) => process.stdout.write(s), err: (s) => process.stderr.write(s) }).then(
    (code) => {
      process.exitCode = code
      // a tool that ignores its abort signal must not keep the process alive
      setTimeout(() => process.exit(code), 1000).unref()
    },
    (err: unknown) => {
      const text = `toolwire: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`
      process.stderr.write(redactSecrets(text, givenSecrets(process.argv.slice(2), process.env)))
      process.exit(70)
    },
  )
}
