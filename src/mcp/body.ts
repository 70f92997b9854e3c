/**
 * Request bodies under a byte limit, for every body `serveHttp` reads (MCP POSTs, the
 * confirmation page's form): the limit is counted while the body streams, and a body
 * that passes it is answered at once, never read to its end. No MCP SDK import.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'

/** How long a body still arriving after its answer is read and dropped before its connection is closed, in ms. */
const DRAIN_MS = 1000

/**
 * Reads the body up to `limit` bytes. Resolves `undefined` as soon as it is larger (declared
 * in `Content-Length`, or counted while it streams), without waiting for its end: the caller
 * answers then (413), and {@link closeUnfinished} ends what is still coming.
 */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length'])
    if (Number.isFinite(declared) && declared > limit) {
      resolve(undefined)
      return
    }
    const chunks: Buffer[] = []
    let size = 0
    const onData = (chunk: Buffer): void => {
      size += chunk.length
      if (size <= limit) {
        chunks.push(chunk)
        return
      }
      chunks.length = 0
      req.off('data', onData)
      req.off('end', onEnd)
      req.off('error', reject)
      req.pause()
      resolve(undefined)
    }
    const onEnd = (): void => resolve(Buffer.concat(chunks))
    req.on('data', onData)
    req.on('end', onEnd)
    req.on('error', reject)
  })
}

/**
 * A request answered before its body ended (over a limit, or refused unread: 401, 403, 404,
 * ...) is not read to its end, which for an endless chunked body is never: unless its body
 * is declared (`Content-Length`) within `limit` (node then drops it, and the connection is
 * kept), its answer says `Connection: close` (decided when the headers are written, whoever
 * writes them) and the connection is closed once the answer is written. Should it still be
 * open then, what arrives is dropped for at most `limit` more bytes or {@link DRAIN_MS}.
 */
export function closeUnfinished(req: IncomingMessage, res: ServerResponse, limit: number): void {
  const declared = Number(req.headers['content-length'] ?? 0)
  const unbounded = req.headers['transfer-encoding'] !== undefined || !(declared <= limit)
  const writeHead = res.writeHead.bind(res) as (...args: unknown[]) => ServerResponse
  res.writeHead = ((...args: unknown[]) => {
    if (unbounded && !req.complete && !res.headersSent) res.setHeader('connection', 'close')
    return writeHead(...args)
  }) as ServerResponse['writeHead']
  res.once('finish', () => {
    if (req.complete || req.socket.destroyed) return
    const socket = req.socket
    const start = socket.bytesRead
    // the watch ends with the request's body or the connection, whichever comes first, and leaves
    // no listener behind: a kept-alive connection answers many early refusals
    const stop = (): void => {
      clearInterval(timer)
      socket.off('close', stop)
      req.off('end', stop)
    }
    const close = (): void => {
      stop()
      socket.destroy()
    }
    // what still arrives is parsed and dropped by node (the request is dumped): counted on the socket
    const timer = setInterval(() => {
      if (socket.bytesRead - start > limit || Date.now() >= deadline) close()
    }, 50)
    const deadline = Date.now() + DRAIN_MS
    timer.unref()
    socket.once('close', stop)
    req.once('end', stop)
  })
}
