/**
 * `toolwire serve --http`'s authorization options: `serveHttp`'s `auth` from the --auth-*,
 * --confirm-* and quota flags and the TOOLWIRE_AUTH_* variables ({@link authOptions}), and an
 * option `serveHttp` refused told as the flag or variable that gave it ({@link refusedFlag}).
 */
import type { ServeHttpAuthOptions } from './mcp/auth/resource-server.js'
import { UsageError, type Parsed } from './cli-args.js'

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
export function authOptions(p: Parsed): ServeHttpAuthOptions | undefined {
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
export function refusedFlag(option: string, must: string, p: Parsed): string {
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
