/**
 * What the `toolwire` command may print of the secrets it was given: nothing. Every message it
 * writes to stderr (usage errors, store and transport errors, an internal error's stack) goes
 * through {@link redactSecrets}: the `--token`, `TOOLWIRE_TOKEN`, `TOOLWIRE_APPROVAL_SECRET`,
 * `TOOLWIRE_STORE_KEY`, `TOOLWIRE_AUTH_INTROSPECTION_CLIENT_SECRET` and `TOOLWIRE_AUTH_SIGNIN_CLIENT_SECRET` values (each entry of a comma-separated list), the password of the
 * addresses given (`--store`, `TOOLWIRE_STORE`, `--http`, `--public-url`: a URL's, raw and
 * decoded, and every `password=` parameter's, quoted or not: see core/passwords.ts), and the user and password part of any URL are
 * replaced by `***`.
 */

import { passwordsOf } from './core/passwords.js'

/** The options and environment variables whose whole value is a secret. */
const SECRET_OPTIONS = ['--token'] as const
const SECRET_ENV = ['TOOLWIRE_TOKEN', 'TOOLWIRE_APPROVAL_SECRET', 'TOOLWIRE_STORE_KEY', 'TOOLWIRE_AUTH_INTROSPECTION_CLIENT_SECRET', 'TOOLWIRE_AUTH_SIGNIN_CLIENT_SECRET'] as const
/** The options and environment variables holding an address, whose password is a secret. */
const ADDRESS_OPTIONS = ['--store', '--http', '--public-url'] as const
const ADDRESS_ENV = ['TOOLWIRE_STORE'] as const
/** Shorter values are not searched for (they would blank out ordinary words); URLs' user parts still are. */
const MIN_SECRET_CHARS = 4
/** `scheme://user:password@` and `scheme://user@`: what a message must never show of a URL. */
const USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/@'"]*@/gi

/** The values of `name` in `argv` (`--name value` and `--name=value`). */
function optionValues(argv: readonly string[], name: string): string[] {
  const out: string[] = []
  argv.forEach((arg, i) => {
    if (arg === name && i + 1 < argv.length) out.push(argv[i + 1]!)
    else if (arg.startsWith(`${name}=`)) out.push(arg.slice(name.length + 1))
  })
  return out
}

/** A secret value: whole, and each entry of a comma-separated list. */
function entriesOf(value: string): string[] {
  return [value, ...value.split(',').map((s) => s.trim())]
}

/** Every secret the command was given, longest first (so that a secret inside another is not left half shown). */
export function givenSecrets(argv: readonly string[], env: NodeJS.ProcessEnv): string[] {
  const secrets = [...SECRET_OPTIONS.flatMap((name) => optionValues(argv, name)), ...SECRET_ENV.map((name) => env[name] ?? '')]
  const addresses = [...ADDRESS_OPTIONS.flatMap((name) => optionValues(argv, name)), ...ADDRESS_ENV.map((name) => env[name] ?? '')]
  const found = new Set([...secrets.flatMap(entriesOf), ...addresses.flatMap(passwordsOf)].filter((s) => s.length >= MIN_SECRET_CHARS))
  return [...found].sort((a, b) => b.length - a.length)
}

/** `text` without any of `secrets`, and without the user and password part of any URL. */
export function redactSecrets(text: string, secrets: readonly string[]): string {
  let out = text
  for (const secret of secrets) out = out.split(secret).join('***')
  return out.replace(USERINFO, '$1***@')
}
