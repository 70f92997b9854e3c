/**
 * The HTML of the confirmation page and of its sign-in (auth/signin.ts): one small page
 * shape, escaped text, and headers that keep it out of frames, caches and other origins'
 * forms. No MCP SDK import.
 */
import type { ServerResponse } from 'node:http'

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
