/**
 * What both kinds of confirmation pages share (`ConfirmationPages` in this process,
 * `SharedConfirmationPages` through a store): the link types `serveHttp` and the MCP server
 * use, the path prefix of approval links, the page's form ({@link readDecision}) and the
 * sign-in check of who answers ({@link approverOf}).
 */
import { timingSafeEqual } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { CallResult } from '../core/view.js'
import { readBody } from './body.js'
import { page } from './confirm-html.js'
import type { ConfirmSignIn } from './auth/signin.js'
import { principalKey, type PrincipalRef } from '../core/principal.js'

/** What the page shows of a call waiting for confirmation. */
export interface ConfirmationLinkInput {
  readonly tool: string
  readonly view: Extract<CallResult, { status: 'needs_confirmation' }>
  /** Who made the call, when it had a principal: with sign-in and `approverNotCaller`, not its approver. */
  readonly caller?: Pick<PrincipalRef, 'subject' | 'issuer'>
}

/** An approval link for a call waiting for confirmation (see `McpServerOptions.confirmationLink`). */
export interface ConfirmationLink {
  /** The absolute URL a person opens. */
  readonly url: string
  /**
   * Resolves with the call's result once a decision is made (on the page or any other way;
   * with a shared store, on any instance: the outcome that instance recorded), or undefined
   * when the link ends without one or `signal` aborts.
   */
  decided(signal: AbortSignal): Promise<CallResult | undefined>
}

/** The path prefix of approval links. */
export const CONFIRM_PATH = '/confirm/'
/** The largest form body the page accepts. */
const FORM_MAX_BYTES = 4096

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a)
  const y = Buffer.from(b)
  return x.length === y.length && timingSafeEqual(x, y)
}

/** The form of a POST, `'too large'` past `FORM_MAX_BYTES` (answered then, not read to its end). */
async function readForm(req: IncomingMessage): Promise<URLSearchParams | 'too large'> {
  const body = await readBody(req, FORM_MAX_BYTES)
  return body === undefined ? 'too large' : new URLSearchParams(body.toString('utf8'))
}

/** The decision of a POST whose form carries `csrf`; `undefined` once it has answered 405, 413 or 403. */
export async function readDecision(req: IncomingMessage, res: ServerResponse, expectedCsrf: string): Promise<'approve' | 'deny' | undefined> {
  if (req.method !== 'POST') {
    req.resume()
    res.writeHead(405, { allow: 'GET, POST', 'content-type': 'text/plain; charset=utf-8' })
    res.end('method not allowed\n')
    return undefined
  }
  const type = req.headers['content-type'] ?? ''
  const form = type.startsWith('application/x-www-form-urlencoded') ? await readForm(req) : (req.resume(), undefined)
  if (form === 'too large') {
    res.writeHead(413, { 'content-type': 'text/plain; charset=utf-8', connection: 'close' })
    res.end('the form is too large\n')
    return undefined
  }
  const csrf = form?.get('csrf') ?? ''
  const decision = form?.get('decision')
  if (form === undefined || !sameSecret(csrf, expectedCsrf) || (decision !== 'approve' && decision !== 'deny')) {
    page(res, 403, 'Not accepted', '<p>The form was not sent from this page. Open the link again.</p>')
    return undefined
  }
  return decision
}

/** Options of `ConfirmationPages`. */
export interface ConfirmationPagesOptions {
  /** How long a link stays valid, in ms (default 10 minutes, the manager's default `confirmTtlMs`). */
  readonly ttlMs?: number
  /** The most links open at once (default 10 000); the oldest is dropped beyond. */
  readonly max?: number
  /** With `auth.signIn`: only a signed-in approver (holding the approver scope) may answer, and the decision says who. */
  readonly signIn?: ConfirmSignIn
}

/**
 * With sign-in, the approver of a good link (or `null` once the sign-in has answered: a
 * redirect or a refusal); without, `undefined`: the link is the credential.
 */
export async function approverOf(signIn: ConfirmSignIn | undefined, req: IncomingMessage, res: ServerResponse, pathname: string, entry: { readonly tool: string; readonly callerKey?: string }): Promise<PrincipalRef | null | undefined> {
  return signIn === undefined ? undefined : ((await signIn.approver(req, res, pathname, entry.tool, entry.callerKey)) ?? null)
}

/** The caller's key a link keeps, when the call had a principal. */
export function callerKeyOf(caller: ConfirmationLinkInput['caller']): { callerKey?: string } {
  return caller === undefined ? {} : { callerKey: principalKey(caller) }
}

/** What `serveHttp` uses of its approval links, kept in this process or shared through a store. */
export interface ConfirmationLinks {
  open(input: ConfirmationLinkInput): string
  decided(path: string, signal: AbortSignal): Promise<CallResult | undefined>
  handle(req: IncomingMessage, res: ServerResponse, pathname: string): Promise<void>
  close(): void
}
