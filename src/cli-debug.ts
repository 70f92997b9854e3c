/**
 * What the `toolwire` command tells the operator on stderr about tools that misbehave: their
 * exceptions under TOOLWIRE_DEBUG ({@link debugToolErrors}) and the promise rejections they
 * leave unhandled ({@link ignoreUnhandledRejections}), never with a secret the command was given.
 */
import type { ServableManager } from './mcp/meta.js'
import { givenSecrets, redactSecrets } from './cli-redact.js'

/**
 * Under TOOLWIRE_DEBUG: each `error` event (a tool's exception) on stderr, for the operator:
 * the tool, the call id, the exception's name, message and stack. It shows whatever the tool
 * put in its exception (it may hold secrets), hence only on request; never on stdout, which
 * carries the result of `call` and the frames of stdio MCP.
 */
export function debugToolErrors(tm: Pick<ServableManager, 'on'>, io: { err: (s: string) => void }): void {
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
export function ignoreUnhandledRejections(): void {
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
