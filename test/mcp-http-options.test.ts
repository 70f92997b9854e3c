// The option objects of serveHttp, createMcpServer, serveStdio and StdioLineTransport are checked
// as `new ToolManager(options)` checks its own (review #21): an unknown key (a typo) or a value of
// the wrong type or range is a TypeError naming the option, never its value, before anything is
// opened. Before, `{ maxSesions: 5 }` or `{ maxSessions: -1 }` was served silently.
import { PassThrough } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { ToolManager } from '../src/runtime/manager.js'
import { MemoryStore } from '../src/runtime/store/index.js'
import { serveHttp, type ServeHttpOptions } from '../src/mcp/http.js'
import { createMcpServer, type McpServerOptions } from '../src/mcp/server.js'
import { serveStdio, StdioLineTransport, type ServeStdioOptions, type StdioLineTransportOptions } from '../src/mcp/stdio.js'

/** What `serveHttp(tm, options)` rejects with; a server it started is closed and the test fails. */
async function refusal(options: unknown): Promise<unknown> {
  try {
    const served = await serveHttp(new ToolManager(), options as ServeHttpOptions)
    await served.close()
    return undefined
  } catch (err) {
    return err
  }
}

const TIMER_MAX = 2 ** 31 - 1
const notPositiveIntegers = [0, -1, 1.5, NaN, Infinity, '10', null, true]

describe('serveHttp refuses malformed options with a TypeError naming the option', () => {
  const bad: [string, unknown[]][] = [
    ['maxBodyBytes', notPositiveIntegers],
    ['maxSessions', notPositiveIntegers],
    ['maxSessionsPerClient', notPositiveIntegers],
    ['sessionIdleMs', [0, -5, NaN, '60000', null]],
    ['sessionUnusedMs', [0, -5, NaN, '60000', null]],
    ['sessionReplayBytes', [-1, 1.5, NaN, Infinity, '4096']],
    ['confirmPageTtlMs', [-1, NaN, TIMER_MAX + 1, Infinity, '600000']],
    ['confirmOutcomeWaitMs', [-1, NaN, TIMER_MAX + 1, '30000']],
    ['shutdownGraceMs', [-1, NaN, TIMER_MAX + 1, Infinity, '10000']],
    ['port', [-1, 65536, 1.5, NaN, '8808']],
    ['host', ['', 127001]],
    ['path', ['mcp', '/m cp', '/mcp?x', 5]],
    ['stateless', ['yes', 1]],
    ['metricsPublic', ['true', 0]],
    ['confirmPage', ['false']],
    ['confirmationLinkInText', ['no']],
    ['confirmations', ['ask', true]],
    ['name', [5]],
    ['version', [1]],
    ['instructions', [{}]],
    ['allowedOrigins', ['https://app.example', ['app.example'], ['https://app.example/path'], [5]]],
    ['allowedHosts', ['app.example', [''], [5]]],
    ['publicUrl', ['app.example', 'ftp://app.example', 'http://a b', 5]],
    ['metrics', ['text']],
    ['onError', [true]],
    ['confirmationLink', ['https://x']],
    ['store', ['memory', {}]],
  ]
  for (const [name, values] of bad) {
    it(`${name}: ${values.map((v) => JSON.stringify(v) ?? String(v)).join(', ')}`, async () => {
      for (const value of values) {
        const err = await refusal({ [name]: value })
        expect(err, `${name}: ${String(value)}`).toBeInstanceOf(TypeError)
        expect((err as Error).message).toMatch(new RegExp(`^toolwire: serveHttp\\(\\) option ${name} must be `))
      }
    })
  }

  it('a token that is empty, holds a space or a non-ASCII character, or is not a string; the message never shows it', async () => {
    for (const token of ['', 'secret with-space', 'sécret-token', 'tab\tsecret', 12345]) {
      const err = await refusal({ token })
      expect(err, String(token)).toBeInstanceOf(TypeError)
      expect((err as Error).message).toBe('toolwire: serveHttp() option token must be a non-empty string of visible ASCII characters without spaces')
    }
  })

  it('options that are not an object', async () => {
    for (const options of [null, 5, 'port=8808', [8808]]) {
      const err = await refusal(options)
      expect(err, JSON.stringify(options)).toBeInstanceOf(TypeError)
      expect((err as Error).message).toBe('toolwire: serveHttp() takes an options object')
    }
  })
})

describe('serveHttp refuses unknown option keys, naming them', () => {
  it('a typo ({ maxSesions: 5 }) or an option of another function ({ authorization }) is a TypeError listing the keys it does not know', async () => {
    const typo = await refusal({ maxSesions: 5 })
    expect(typo).toBeInstanceOf(TypeError)
    expect((typo as Error).message).toMatch(/^toolwire: serveHttp\(\) has no option "maxSesions" \(its options: .*maxSessions.*\)$/)
    const two = await refusal({ authorization: { token: 'the-secret-token' }, tokens: ['x'], port: 0 })
    expect((two as Error).message).toMatch(/has no option "authorization", "tokens" /)
    expect((two as Error).message).not.toContain('the-secret-token')
    // auth's own keys are checked too (docs/auth.md)
    const nested = await refusal({ auth: { issuer: 'https://id.example.test', token: 'the-secret-token' } })
    expect((nested as Error).message).toMatch(/has no option "auth\.token" /)
    expect((nested as Error).message).not.toContain('the-secret-token')
  })

  it('an unknown key is refused even when its value is undefined; a known key set to undefined is the default', async () => {
    expect(await refusal({ maxSesions: undefined })).toBeInstanceOf(TypeError)
    expect(await refusal({ port: undefined, token: undefined, onError: undefined })).toBeUndefined()
  })
})

describe('serveHttp accepts every option well-formed', () => {
  it('all of them at once, and the limits at their bounds', async () => {
    const options: ServeHttpOptions = {
      name: 'n',
      version: '1',
      instructions: 'i',
      confirmations: 'refuse',
      confirmationLinkInText: false,
      host: '127.0.0.1',
      port: 0,
      path: '/mcp/v1',
      stateless: false,
      token: 'a-Token_0.9~+/=',
      metricsPublic: true,
      allowedOrigins: ['https://app.example', 'http://localhost:3000/'],
      allowedHosts: ['app.example'],
      maxBodyBytes: 1,
      sessionIdleMs: Infinity,
      sessionUnusedMs: 1,
      maxSessions: 1,
      maxSessionsPerClient: 1,
      sessionReplayBytes: 0,
      metrics: () => '',
      onError: () => undefined,
      confirmPage: true,
      store: new MemoryStore(),
      approvalSecret: 'an approval secret of enough bytes',
      confirmPageTtlMs: TIMER_MAX,
      confirmOutcomeWaitMs: 0,
      urlConfirmationWaitMs: TIMER_MAX,
      publicUrl: 'https://mcp.example',
      shutdownGraceMs: 0,
    }
    expect(await refusal(options)).toBeUndefined()
  })
})

describe('createMcpServer, serveStdio and StdioLineTransport check their options too', () => {
  const thrown = (f: () => unknown): unknown => {
    try {
      f()
      return undefined
    } catch (err) {
      return err
    }
  }

  it('createMcpServer: an unknown key, a bad confirmations or name', () => {
    const tm = new ToolManager()
    expect((thrown(() => createMcpServer(tm, { port: 1 } as McpServerOptions)) as Error).message).toMatch(/^toolwire: createMcpServer\(\) has no option "port"/)
    expect((thrown(() => createMcpServer(tm, { confirmations: 'never' } as unknown as McpServerOptions)) as Error).message).toBe(
      'toolwire: createMcpServer() option confirmations must be one of "elicit", "refuse"',
    )
    expect(thrown(() => createMcpServer(tm, { name: 5 } as unknown as McpServerOptions))).toBeInstanceOf(TypeError)
    expect((thrown(() => createMcpServer(tm, { urlConfirmationWaitMs: -1 })) as Error).message).toBe(
      'toolwire: createMcpServer() option urlConfirmationWaitMs must be a non-negative number of ms of at most 2,147,483,647',
    )
    expect(thrown(() => createMcpServer(tm, { name: 'x', confirmations: 'elicit', confirmationLinkInText: true }))).toBeUndefined()
  })

  it('serveStdio: an unknown key, a bad limit, streams that are not streams; nothing is served', async () => {
    const tm = new ToolManager()
    const stdin = new PassThrough()
    const stdout = new PassThrough()
    const cases: [unknown, RegExp][] = [
      [{ stdin, stdout, maxLineByte: 10 }, /^toolwire: serveStdio\(\) has no option "maxLineByte"/],
      [{ stdin, stdout, maxLineBytes: 0 }, /^toolwire: serveStdio\(\) option maxLineBytes must be a positive integer$/],
      [{ stdin, stdout, maxLineValues: -1 }, /option maxLineValues must be a positive integer$/],
      [{ stdin, stdout, drainTimeoutMs: TIMER_MAX + 1 }, /option drainTimeoutMs must be a non-negative number of ms of at most 2,147,483,647$/],
      [{ stdin: 'stdin', stdout }, /option stdin must be a readable stream$/],
      [{ stdin, stdout: {} }, /option stdout must be a writable stream$/],
      [{ stdin, stdout, onError: 'log' }, /option onError must be a function$/],
    ]
    for (const [options, message] of cases) {
      const err = await serveStdio(tm, options as ServeStdioOptions).then(
        () => undefined,
        (e: unknown) => e,
      )
      expect(err, JSON.stringify(Object.keys(options as object))).toBeInstanceOf(TypeError)
      expect((err as Error).message).toMatch(message)
    }
    expect(stdin.listenerCount('data')).toBe(0)
    const server = await serveStdio(tm, { stdin, stdout, maxLineBytes: 1024, drainTimeoutMs: 0, name: 'ok' })
    await server.close()
  })

  it('StdioLineTransport: an unknown key or a bad limit', () => {
    const io = (): [PassThrough, PassThrough] => [new PassThrough(), new PassThrough()]
    expect((thrown(() => new StdioLineTransport(...io(), { drainTimeout: 5 } as StdioLineTransportOptions)) as Error).message).toMatch(
      /^toolwire: StdioLineTransport\(\) has no option "drainTimeout"/,
    )
    expect(thrown(() => new StdioLineTransport(...io(), { maxLineBytes: 1.5 }))).toBeInstanceOf(TypeError)
    expect(thrown(() => new StdioLineTransport(...io(), { drainTimeoutMs: -1 }))).toBeInstanceOf(TypeError)
    expect(thrown(() => new StdioLineTransport(...io(), { maxLineBytes: 10, maxLineValues: 10, drainTimeoutMs: 0 }))).toBeUndefined()
  })
})
