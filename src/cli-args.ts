/**
 * The `toolwire` command's arguments: its usage text, its exit codes, the parsed flags
 * ({@link parse}), the `--http` listen address ({@link parseListen}) and the error that
 * reports a misuse ({@link UsageError}: the usage text follows it, exit code 64).
 */
import { parseArgs } from 'node:util'
import type { CallResult } from './core/view.js'

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

export const USAGE = `Usage:
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

/** A misuse of the command: reported with the usage text, exit code 64. */
export class UsageError extends Error {}

/** The command line, parsed: the command, its positionals and each flag. */
export interface Parsed {
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

/** The command line parsed (an unknown flag or a missing value is a {@link UsageError}). */
export function parse(argv: readonly string[]): Parsed {
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

/** `[host:]port`: `8808`, `0.0.0.0:8808`, `[::1]:8808`; the host a name or an address, nothing else (no user, no password). */
export function parseListen(value: string): { host: string; port: number } {
  const m = /^(?:(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9._-]+):)?(\d{1,5})$/.exec(value.trim())
  const port = m === null ? NaN : Number(m[2])
  // the value may hold a user and password: no part of it is shown
  if (m === null || !(port >= 0 && port <= 65535)) throw new UsageError('--http takes [host:]port, such as 8808, 0.0.0.0:8808 or [::1]:8808 (the value given is not shown)')
  const host = m[1] === undefined ? '127.0.0.1' : m[1].startsWith('[') ? m[1].slice(1, -1) : m[1]
  return { host, port }
}
