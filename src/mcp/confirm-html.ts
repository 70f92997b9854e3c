/**
 * The HTML of the confirmation page and of its sign-in (auth/signin.ts): one small page
 * shape, escaped text, and headers that keep it out of frames, caches and other origins'
 * forms. No MCP SDK import.
 */
import type { ServerResponse } from 'node:http'
import type { CallResult } from '../core/view.js'
import type { FieldChange } from '../core/types.js'
import type { PrincipalRef } from '../core/principal.js'

/** `text` with HTML's special characters escaped. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!)
}

/** The headers of every page. */
export const PAGE_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  // same-origin, not no-referrer: with no-referrer the browser sends `Origin: null` on the form's POST
  'referrer-policy': 'same-origin',
}

/** Answers a page: `title` (escaped) over `body` (HTML the caller escaped), with `extraHeaders` (cookies). */
export function page(res: ServerResponse, status: number, title: string, body: string, extraHeaders: Record<string, string | string[]> = {}): void {
  const html =
    '<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">' +
    `<title>${escapeHtml(title)}</title><style>body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem;color:#222}` +
    'table{border-collapse:collapse;width:100%;margin:1rem 0}td,th{border:1px solid #ccc;padding:.3rem .5rem;text-align:left;vertical-align:top;word-break:break-all}' +
    'button{font-size:1rem;padding:.5rem 1.5rem;margin-right:1rem;border-radius:4px;border:1px solid #888;cursor:pointer}#approve{background:#1a7f37;color:#fff}#deny{background:#fff}' +
    `code{background:#f3f3f3;padding:0 .2rem}</style></head><body><h1>${escapeHtml(title)}</h1>${body}</body></html>`
  res.writeHead(status, { ...PAGE_HEADERS, ...extraHeaders, 'content-length': Buffer.byteLength(html) })
  res.end(html)
}

function shown(value: unknown): string {
  if (value === undefined) return '—'
  const text = typeof value === 'string' ? value : JSON.stringify(value)
  return text.length > 2000 ? `${text.slice(0, 2000)}…` : text
}

/** What a page shows of a call. */
export interface PageEntry {
  readonly tool: string
  readonly summary: string
  readonly changes: readonly FieldChange[] | undefined
  readonly expiresAt: number
  /** The whole summary's length when `summary` was clipped to fit a link. */
  readonly summaryLength?: number
}

/** The most of a summary a page shows, and a shared link carries (a default summary holds the whole input). */
export const PAGE_SUMMARY_CHARS = 1000

/** The summary as the page shows it: at most `PAGE_SUMMARY_CHARS`, saying so when it was shortened. */
function shownSummary(entry: PageEntry): string {
  const length = Math.max(entry.summaryLength ?? 0, entry.summary.length)
  if (length === entry.summary.length && length <= PAGE_SUMMARY_CHARS) return escapeHtml(entry.summary)
  const text = entry.summary.slice(0, PAGE_SUMMARY_CHARS)
  return `${escapeHtml(text)}… <small id="shortened">(shortened: the whole summary is ${length.toLocaleString('en')} characters)</small>`
}

/** The page of a link still good: the call, its changes, Approve and Deny (and who is signed in, with sign-in). */
export function confirmPage(res: ServerResponse, entry: PageEntry, csrf: string, approver: PrincipalRef | undefined): void {
  const changes =
    entry.changes === undefined || entry.changes.length === 0
      ? ''
      : '<h2>Changes</h2><table><thead><tr><th>field</th><th>before</th><th>after</th></tr></thead><tbody>' +
        entry.changes.map((c) => `<tr><td><code>${escapeHtml(c.path)}</code></td><td>${escapeHtml(shown(c.before))}</td><td>${escapeHtml(shown(c.after))}</td></tr>`).join('') +
        '</tbody></table>'
  page(
    res,
    200,
    'Confirm a tool call',
    (approver === undefined ? '' : `<p>Signed in as <strong id="approver">${escapeHtml(approver.subject)}</strong>.</p>`) +
      `<p>An assistant wants to run <strong id="tool">${escapeHtml(entry.tool)}</strong>:</p>` +
      `<p id="summary" style="font-size:1.2rem">${shownSummary(entry)}</p>${changes}` +
      `<form method="post"><input type="hidden" name="csrf" value="${escapeHtml(csrf)}">` +
      '<button id="approve" type="submit" name="decision" value="approve">Approve</button>' +
      '<button id="deny" type="submit" name="decision" value="deny">Deny</button></form>' +
      `<p><small>This link works once and expires at ${new Date(entry.expiresAt).toISOString()}.</small></p>`,
  )
}

export function gonePage(res: ServerResponse): void {
  page(res, 410, 'This link is no longer valid', '<p>It was already used, the call was answered another way, or it expired. Nothing was run from this page.</p>')
}

export function outcomePage(res: ServerResponse, approve: boolean, entry: PageEntry, view: CallResult): void {
  const outcome =
    view.status === 'refused'
      ? `<p>Not run: <code id="outcome">${escapeHtml(view.code)}</code> (${escapeHtml(view.message)}).</p>`
      : `<p>The call ran: <code id="outcome">${escapeHtml(view.status)}</code>.</p>`
  page(res, 200, approve ? 'Approved' : 'Denied', `<p id="summary">${shownSummary(entry)}</p>${outcome}<p>You can close this page.</p>`)
}
