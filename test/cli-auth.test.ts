// `toolwire serve --http … --auth-issuer <issuer>` run as the built dist/cli.js against the real
// test issuer (oidc-provider on loopback): the flags and TOOLWIRE_AUTH_* variables, the usage
// errors (--token with --auth-issuer, auth flags without --http or without an issuer, the
// introspection secret from the environment only), and the secret never printed.
import { execFile, spawn } from 'node:child_process'
import { createInterface } from 'node:readline'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MCP_PROTOCOL_VERSION } from '../src/mcp/protocol.js'
import { givenSecrets } from '../src/cli-redact.js'
import { cli, ensureBuilt, makeToolBox, type ToolBox } from './fixtures/mcp/helpers.js'
import { signingKey, startIssuer, type TestIssuer } from './fixtures/auth/issuer.js'

let box: ToolBox['box']
let iss: TestIssuer
beforeAll(async () => {
  ensureBuilt()
  ;({ box } = makeToolBox())
  iss = await startIssuer({ scopes: ['files:read'], keys: [await signingKey('k1')] })
})
afterAll(async () => {
  box?.cleanup()
  await iss?.close()
})

/** The environment of a run: the parent's without any TOOLWIRE_ variable, plus `env`. */
const envOf = (env: Record<string, string>): NodeJS.ProcessEnv => ({
  ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('TOOLWIRE_'))),
  ...env,
})

function run(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; err: string }> {
  return new Promise((resolve) => {
    const child = execFile(process.execPath, [cli, ...args], { cwd: box.root, encoding: 'utf8', timeout: 45_000, env: envOf(env) }, (_e, _out, stderr) => resolve({ code: child.exitCode, err: stderr }))
  })
}

/** Starts `serve --http 127.0.0.1:0 …`; resolves with its MCP URL (from the line on stderr) and a stop function. */
async function serve(args: string[], env: Record<string, string> = {}): Promise<{ url: string; line: string; stop: () => Promise<void> }> {
  const child = spawn(process.execPath, [cli, 'serve', '--http', '127.0.0.1:0', ...args], { cwd: box.root, stdio: ['ignore', 'ignore', 'pipe'], env: envOf(env) })
  const exit = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  const { url, line } = await new Promise<{ url: string; line: string }>((resolve, reject) => {
    createInterface({ input: child.stderr! }).on('line', (l) => {
      const m = /at (http:\/\/\S+)$/.exec(l)
      if (m !== null) resolve({ url: m[1]!, line: l })
    })
    child.once('exit', (code) => reject(new Error(`exited ${code}`)))
  })
  return {
    url,
    line,
    stop: async () => {
      child.kill('SIGTERM')
      await exit
    },
  }
}

const listDir = (url: string, token?: string) =>
  fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': MCP_PROTOCOL_VERSION,
      'mcp-method': 'tools/call',
      'mcp-name': 'list_dir',
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: {
        name: 'list_dir',
        arguments: { path: '.' },
        _meta: {
          'io.modelcontextprotocol/protocolVersion': MCP_PROTOCOL_VERSION,
          'io.modelcontextprotocol/clientInfo': { name: 't', version: '1' },
          'io.modelcontextprotocol/clientCapabilities': {},
        },
      },
    }),
  })

describe('toolwire serve --auth-issuer', () => {
  it('serves the metadata, refuses a request without a token, and runs a call with one', async () => {
    const served = await serve(['--auth-issuer', iss.issuer])
    try {
      iss.setResource(served.url)
      expect(served.line).toContain(`access tokens of ${iss.issuer}`)
      const doc = (await (await fetch(new URL('/.well-known/oauth-protected-resource/mcp', served.url))).json()) as Record<string, unknown>
      expect(doc).toMatchObject({ resource: served.url, authorization_servers: [iss.issuer] })
      expect((await listDir(served.url)).status).toBe(401)
      expect((await listDir(served.url, await iss.token('alice', 'files:read'))).status).toBe(200)
    } finally {
      await served.stop()
    }
  })

  it('takes the TOOLWIRE_AUTH_* variables: issuer, audience, and introspection with its secret from the environment', async () => {
    const audience = 'http://127.0.0.1:9/env-audience'
    iss.setResource(audience)
    const served = await serve([], {
      TOOLWIRE_AUTH_ISSUER: iss.issuer,
      TOOLWIRE_AUTH_AUDIENCE: audience,
      TOOLWIRE_AUTH_INTROSPECTION_CLIENT_ID: 'toolwire',
      TOOLWIRE_AUTH_INTROSPECTION_CLIENT_SECRET: 'toolwire-secret',
    })
    try {
      expect(((await (await fetch(new URL('/.well-known/oauth-protected-resource', served.url))).json()) as { resource: string }).resource).toBe(audience)
      expect((await listDir(served.url, await iss.opaqueToken('alice', 'files:read'))).status).toBe(200)
      expect((await listDir(served.url, await iss.token('alice', 'files:read'))).status).toBe(200)
    } finally {
      await served.stop()
    }
  })

  it('quotas per principal from --calls-per-minute (or its variable): the call over quota gets 429 with Retry-After; another principal is not held back', async () => {
    for (const [args, env] of [
      [['--auth-issuer', iss.issuer, '--calls-per-minute', '1', '--max-calls-per-principal', '4'], {}],
      [[], { TOOLWIRE_AUTH_ISSUER: iss.issuer, TOOLWIRE_AUTH_CALLS_PER_MINUTE: '1' }],
    ] as const) {
      const served = await serve([...args], env)
      try {
        iss.setResource(served.url)
        const alice = await iss.token('alice', 'files:read')
        expect((await listDir(served.url, alice)).status).toBe(200)
        const over = await listDir(served.url, alice)
        expect(over.status).toBe(429)
        expect(Number(over.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
        expect(await over.json()).toMatchObject({ id: 1, error: { code: -32000, message: 'Too Many Requests: rate limit for this principal' } })
        expect((await listDir(served.url, await iss.token('bob', 'files:read'))).status).toBe(200)
      } finally {
        await served.stop()
      }
    }
  })

  it('usage errors exit 64, naming the flag or variable and never a secret', async () => {
    const secret = 'introspection-secret-value'
    const cases: [string[], Record<string, string>, string][] = [
      [['serve', '--auth-issuer', 'https://id.example.test'], {}, 'go with --http'],
      [['serve', '--http', '0', '--token', 'tok-12345', '--auth-issuer', 'https://id.example.test'], {}, '--token (or TOOLWIRE_TOKEN) and --auth-issuer'],
      [['serve', '--http', '0', '--auth-issuer', 'https://id.example.test'], { TOOLWIRE_TOKEN: 'tok-12345' }, 'do not go together'],
      [['serve', '--http', '0', '--auth-audience', 'https://a.example/mcp'], {}, 'go with --auth-issuer'],
      [['serve', '--http', '0', '--auth-issuer', 'https://id.example.test', '--auth-introspection-client-id', 'rs'], {}, 'needs TOOLWIRE_AUTH_INTROSPECTION_CLIENT_SECRET'],
      [['serve', '--http', '0', '--auth-issuer', 'http://id.example.test'], {}, '--auth-issuer must be an https URL'],
      [['serve', '--http', '0'], { TOOLWIRE_AUTH_ISSUER: 'http://id.example.test' }, 'TOOLWIRE_AUTH_ISSUER must be an https URL'],
      // the flag wins over its variable
      [['serve', '--http', '0', '--auth-issuer', 'http://id.example.test'], { TOOLWIRE_AUTH_ISSUER: 'https://id.example.test' }, '--auth-issuer must be an https URL'],
      [['serve', '--http', '0.0.0.0:0', '--auth-issuer', 'https://id.example.test'], {}, '--auth-audience (or TOOLWIRE_AUTH_AUDIENCE) is required when --http binds a non-loopback host'],
      [['serve', '--http', '0', '--auth-issuer', 'https://id.example.test'], { TOOLWIRE_AUTH_REQUIRE_AT_JWT: 'yes' }, 'TOOLWIRE_AUTH_REQUIRE_AT_JWT takes 1 or 0'],
      [['serve', '--http', '0', '--calls-per-minute', '5'], {}, 'go with --auth-issuer'],
      // a variable that needs an issuer, set without one, never leaves the server open
      [['serve', '--http', '0.0.0.0:0'], { TOOLWIRE_AUTH_AUDIENCE: 'https://x.example/mcp' }, 'TOOLWIRE_AUTH_AUDIENCE goes with --auth-issuer (or TOOLWIRE_AUTH_ISSUER), which is not set'],
      [['serve', '--http', '0'], { TOOLWIRE_AUTH_CALLS_PER_MINUTE: '5', TOOLWIRE_AUTH_INTROSPECTION_CLIENT_SECRET: secret }, 'TOOLWIRE_AUTH_INTROSPECTION_CLIENT_SECRET, TOOLWIRE_AUTH_CALLS_PER_MINUTE go with --auth-issuer'],
      [['serve', '--http', '0', '--confirm-sign-in'], {}, 'go with --auth-issuer'],
      [['serve', '--http', '0', '--confirm-approver-scope', 'approve:{tool}'], {}, 'go with --auth-issuer'],
      // a misspelled variable (here the issuer's) never leaves the option it meant off
      [['serve', '--http', '0'], { TOOLWIRE_AUTH_ISUER: 'https://id.example.test' }, 'unknown environment variable TOOLWIRE_AUTH_ISUER'],
      [['serve', '--http', '0', '--auth-issuer', 'https://id.example.test'], { TOOLWIRE_AUTH_SIGNIN_CLIENT_SECRET: secret }, 'TOOLWIRE_AUTH_SIGNIN_CLIENT_SECRET goes with TOOLWIRE_AUTH_SIGNIN_CLIENT_ID'],
      [['serve', '--http', '0', '--auth-issuer', 'https://id.example.test', '--confirm-not-caller'], {}, '--confirm-approver-scope and --confirm-not-caller go with --confirm-sign-in'],
      [['serve', '--http', '0', '--auth-issuer', 'https://id.example.test', '--confirm-sign-in'], { TOOLWIRE_AUTH_SIGNIN_CLIENT_SECRET: secret }, '--confirm-sign-in needs TOOLWIRE_AUTH_SIGNIN_CLIENT_ID'],
      [['serve', '--http', '0', '--auth-issuer', 'https://id.example.test', '--confirm-sign-in', '--confirm-approver-scope', 'a b'], { TOOLWIRE_AUTH_SIGNIN_CLIENT_ID: 'page', TOOLWIRE_AUTH_SIGNIN_CLIENT_SECRET: secret }, '--confirm-approver-scope must be'],
      [['serve', '--http', '0', '--auth-issuer', 'https://id.example.test', '--max-calls-per-principal', '0'], {}, '--max-calls-per-principal must be a positive integer'],
      [['serve', '--http', '0', '--auth-issuer', 'https://id.example.test'], { TOOLWIRE_AUTH_CALLS_PER_MINUTE: 'many' }, 'TOOLWIRE_AUTH_CALLS_PER_MINUTE must be a positive finite number'],
      [['serve', '--http', '0', '--auth-issuer', 'https://id.example.test', '--auth-introspection-client-id', 'rs', '--auth-jwks-uri', `http://x.example/${secret}`], { TOOLWIRE_AUTH_INTROSPECTION_CLIENT_SECRET: secret }, '--auth-jwks-uri must be an https URL'],
    ]
    const results = await Promise.all(cases.map(([args, env]) => run(args, env)))
    results.forEach((r, i) => {
      expect(r.code, JSON.stringify(cases[i]![0])).toBe(64)
      expect(r.err).toContain(cases[i]![2])
      expect(r.err).not.toContain(secret)
    })
  })

  it('counts the introspection and sign-in secrets among the secrets never printed', () => {
    expect(givenSecrets([], { TOOLWIRE_AUTH_INTROSPECTION_CLIENT_SECRET: 'the-client-secret' })).toContain('the-client-secret')
    expect(givenSecrets([], { TOOLWIRE_AUTH_SIGNIN_CLIENT_SECRET: 'the-page-secret' })).toContain('the-page-secret')
  })

  it('--confirm-sign-in (or TOOLWIRE_AUTH_SIGNIN_CLIENT_ID alone) serves the page sign-in: its callback is reached and refuses a sign-in it did not start', async () => {
    for (const args of [['--confirm-sign-in', '--confirm-approver-scope', 'approve:{tool}', '--confirm-not-caller'], []]) {
      const served = await serve(['--auth-issuer', iss.issuer, ...args], { TOOLWIRE_AUTH_SIGNIN_CLIENT_ID: 'page', TOOLWIRE_AUTH_SIGNIN_CLIENT_SECRET: 'page-secret' })
      try {
        const callback = await fetch(new URL('/confirm/callback?code=x&state=y', served.url), { redirect: 'manual' })
        expect(callback.status).toBe(403)
        expect(await callback.text()).not.toContain('page-secret')
      } finally {
        await served.stop()
      }
    }
  })
})
