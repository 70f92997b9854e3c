/**
 * How `serveHttp` answers by itself: JSON-RPC errors (never `"id": null`), JSON documents and
 * plain text, each with its length and `Cache-Control: no-store`.
 */
import type { ServerResponse } from 'node:http'
import type { WideIds } from './ids.js'

/** A JSON-RPC error answer: its HTTP status, code and message. */
export interface JsonRpcErrorBody {
  readonly status: number
  readonly code: number
  readonly message: string
  /** The request's id when known; an answer to a request without a usable id has none (never `null`). */
  readonly id?: string | number
  readonly headers?: Readonly<Record<string, string>>
  /** Writes back an `id` that was an alias of a wide integer (see ids.ts). */
  readonly ids?: WideIds
}

/** Writes `body` as JSON (`serialize` writes wide ids back); once headers are sent, only ends the answer. */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Readonly<Record<string, string>> = {}, serialize: (value: unknown) => string = JSON.stringify): void {
  if (res.headersSent) {
    res.end()
    return
  }
  const text = serialize(body)
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), 'cache-control': 'no-store', ...headers })
  res.end(text)
}

/** Writes the JSON-RPC error `e`, with its `id` only when known. */
export function sendError(res: ServerResponse, e: JsonRpcErrorBody): void {
  const ids = e.ids
  const frame = e.id === undefined ? { jsonrpc: '2.0', error: { code: e.code, message: e.message } } : { jsonrpc: '2.0', id: e.id, error: { code: e.code, message: e.message } }
  sendJson(res, e.status, frame, e.headers, ids === undefined ? undefined : (v) => ids.serialize(v))
}

/** Writes `text`; once headers are sent, only ends the answer. */
export function sendText(res: ServerResponse, status: number, text: string, contentType = 'text/plain; charset=utf-8', headers: Readonly<Record<string, string>> = {}): void {
  if (res.headersSent) {
    res.end()
    return
  }
  res.writeHead(status, { 'content-type': contentType, 'content-length': Buffer.byteLength(text), 'cache-control': 'no-store', ...headers })
  res.end(text)
}
