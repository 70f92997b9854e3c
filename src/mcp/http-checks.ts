/**
 * The request checks of `serveHttp` that need no state: URL and origin shapes, loopback names,
 * and the `Host` / `Origin` / `Accept` header readings. No MCP SDK import.
 */

/** Whether an `Accept` header lists both `application/json` and `text/event-stream`. */
export function acceptsJsonAndEventStream(accept: string | undefined): boolean {
  if (accept === undefined) return false
  const types = accept.split(',').map((part) => part.split(';')[0]!.trim().toLowerCase())
  return types.includes('application/json') && types.includes('text/event-stream')
}

/** An absolute http(s) URL. */
export function isHttpUrl(value: unknown): boolean {
  if (typeof value !== 'string') return false
  try {
    const u = new URL(value)
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.host !== ''
  } catch {
    return false
  }
}

/** An origin as a browser sends it: `scheme://host[:port]`, nothing after (a trailing `/` is tolerated). */
export function isOrigin(value: unknown): boolean {
  if (typeof value !== 'string' || !isHttpUrl(value)) return false
  return new URL(value).origin === value.replace(/\/+$/, '').toLowerCase()
}

export const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '[::1]', '::1'])
export function isLoopbackAddress(host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host)
}

/** The host name of a `Host` header value (`name[:port]`, `[v6][:port]`), lower-cased. */
export function hostNameOf(hostHeader: string): string {
  const h = hostHeader.trim().toLowerCase()
  if (h.startsWith('[')) {
    const end = h.indexOf(']')
    return end === -1 ? h : h.slice(0, end + 1)
  }
  const colon = h.indexOf(':')
  return colon === -1 ? h : h.slice(0, colon)
}

export function originHostName(origin: string): string | undefined {
  try {
    const url = new URL(origin)
    return url.hostname.toLowerCase()
  } catch {
    return undefined
  }
}
