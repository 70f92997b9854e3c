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
 * Once `res` is sent, a request whose body is still coming (over a limit, or never read:
 * a refusal before the body) is not read to its end, which for an endless chunked body is
 * never: what arrives is dropped for at most `limit` more bytes or {@link DRAIN_MS}
 * (so that the client can read the answer), then the connection is closed.
 */
export function closeUnfinished(req: IncomingMessage, res: ServerResponse, limit: number): void {
  res.once('finish', () => {
    if (req.complete || req.destroyed) return
    let dropped = 0
    const close = (): void => {
      clearTimeout(timer)
      req.destroy()
    }
    const timer = setTimeout(close, DRAIN_MS)
    timer.unref()
    req.on('data', (chunk: Buffer) => {
      dropped += chunk.length
      if (dropped > limit) close()
    })
    req.once('end', () => clearTimeout(timer))
    req.once('close', () => clearTimeout(timer))
    req.resume()
  })
}
