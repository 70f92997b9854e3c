/**
 * The bridge between `node:http` and the SDK v2's web-standard handlers: a header-only
 * `Request` for a body the gate already read, bounded and parsed (handed over as
 * `parsedBody`, so nothing is read or parsed twice), and a `Response` written back to the
 * node response, each wide integer id alias written back as sent (see ids.ts).
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { WideIds } from './ids.js'

/** Request headers the body-less copy must not carry (they describe the body already read). */
const BODY_HEADERS = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive'])

/** A body-less `Request` with `req`'s method, URL and headers; `signal` aborts it. */
export function headerOnlyRequest(req: IncomingMessage, signal: AbortSignal): Request {
  const headers = new Headers()
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined || BODY_HEADERS.has(name)) continue
    if (Array.isArray(value)) for (const v of value) headers.append(name, v)
    else headers.set(name, value)
  }
  return new Request(`http://${req.headers.host ?? 'localhost'}${req.url ?? '/'}`, { method: req.method ?? 'POST', headers, signal })
}

/**
 * Writes `response` to `res` as it streams (SSE included), restoring wide ids line by line.
 * When the client goes away first, the body is cancelled (the SDK then aborts the call) and
 * `abort` runs.
 */
export async function writeResponse(res: ServerResponse, response: Response, ids: WideIds, abort: () => void): Promise<void> {
  const headers: Record<string, string> = {}
  response.headers.forEach((value, name) => {
    headers[name] = value
  })
  const body = response.body
  if (body === null) {
    res.writeHead(response.status, headers)
    res.end()
    return
  }
  if (response.headers.get('content-type')?.startsWith('application/json') === true) {
    // a JSON answer is whole when the SDK returns it: one write for headers and body (an SSE
    // stream below has its headers flushed first, then each event as it comes)
    const text = withoutNullId(await response.text())
    const out = ids.active ? ids.restore(text) : text
    headers['content-length'] = String(Buffer.byteLength(out))
    res.writeHead(response.status, headers)
    res.end(out)
    return
  }
  const reader = body.getReader()
  let gone = false
  const onClose = (): void => {
    if (res.writableFinished) return
    gone = true
    abort()
    reader.cancel().catch(() => undefined)
  }
  res.once('close', onClose)
  const rewrite = ids.active
  if (rewrite) delete headers['content-length']
  res.writeHead(response.status, headers)
  res.flushHeaders()
  const decoder = new TextDecoder()
  let pending = ''
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done || gone) break
      let chunk: Uint8Array | string = value
      if (rewrite) {
        const text = pending + decoder.decode(value, { stream: true })
        const cut = text.lastIndexOf('\n') + 1
        pending = text.slice(cut)
        chunk = ids.restore(text.slice(0, cut))
        if (chunk === '') continue
      }
      if (!res.write(chunk)) await new Promise<void>((resolve) => {
        res.once('drain', resolve)
        res.once('close', resolve)
      })
    }
  } catch {
    // the body failed (the call was cancelled): end what was sent
  } finally {
    res.off('close', onClose)
  }
  if (!gone) res.end(rewrite ? ids.restore(pending + decoder.decode()) : undefined)
}

/**
 * An answer the SDK wrote with `"id": null` (an error to a message it could not name: a
 * notification or a response refused, a wrong content type), which neither revision's schema
 * allows: the same answer without the `id` member. Any other text is returned as it is.
 */
export function withoutNullId(text: string): string {
  if (!text.includes('"id":null')) return text
  try {
    const frame = JSON.parse(text) as unknown
    if (typeof frame !== 'object' || frame === null || Array.isArray(frame) || (frame as { id?: unknown }).id !== null) return text
    const { id: _null, ...rest } = frame as Record<string, unknown>
    return JSON.stringify(rest)
  } catch {
    return text
  }
}

/**
 * Hands the request (its body already parsed) to an SDK handler, and writes the answer back;
 * the client going away before the answer aborts the request (2026-07-28: closing the stream
 * cancels the call).
 */
export async function forwardTo(
  req: IncomingMessage,
  res: ServerResponse,
  handle: (request: Request, parsedBody: unknown) => Promise<Response>,
  ids: WideIds,
  parsedBody?: unknown,
): Promise<void> {
  const aborter = new AbortController()
  const abort = (): void => {
    if (!res.writableFinished) aborter.abort()
  }
  res.once('close', abort)
  try {
    const response = await handle(headerOnlyRequest(req, aborter.signal), parsedBody)
    await writeResponse(res, response, ids, abort)
  } finally {
    res.off('close', abort)
  }
}
