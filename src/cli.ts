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
import type { ToolManager } from './runtime/manager.js'
import type { ServableManager } from './mcp/meta.js'
import type { HttpMcpServer } from './mcp/http.js'
import type { CallResult } from './core/view.js'
import { givenSecrets, redactSecrets } from './cli-redact.js'
import { EXIT_CODES, USAGE, UsageError, parse, parseListen, type Parsed } from './cli-args.js'
import { durableOptions, loadRuntime, managerFor, type DurableServe, type Runtime } from './cli-runtime.js'
import { authOptions, refusedFlag } from './cli-http-auth.js'
import { debugToolErrors, ignoreUnhandledRejections } from './cli-debug.js'

export { EXIT_CODES }

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
