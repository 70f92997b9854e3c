// Early refusals on one kept-alive connection (401, 403, 404 answered before the body is read):
// each leaves nothing behind on the connection, however many come (closeUnfinished).
import { createServer, Agent, request, type IncomingMessage } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { describe, expect, it } from 'vitest'
import { closeUnfinished } from '../src/mcp/body.js'
import { ToolManager } from '../src/runtime/manager.js'
import { serveHttp } from '../src/mcp/http.js'

/** Sends `n` POSTs with a small declared body over one kept-alive connection to `url`; resolves the statuses. */
async function flood(url: string, n: number, headers: Record<string, string> = {}): Promise<number[]> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 })
  const statuses: number[] = []
  for (let i = 0; i < n; i++) {
    statuses.push(
      await new Promise<number>((resolve, reject) => {
        const req = request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json', ...headers } }, (res) => {
          res.resume()
          res.on('end', () => resolve(res.statusCode!))
        })
        req.on('error', reject)
        req.end('{"jsonrpc":"2.0","id":1,"method":"ping"}')
      }),
    )
  }
  agent.destroy()
  return statuses
}

describe('early answers on a kept-alive connection', () => {
  it('leave no listener on the connection (300 refusals before the body was read)', async () => {
    let socket: Socket | undefined
    let most = 0
    const server = createServer((req: IncomingMessage, res) => {
      socket = req.socket
      closeUnfinished(req, res, 1024)
      res.writeHead(401).end()
      most = Math.max(most, socket.listenerCount('close'))
    })
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`
    const statuses = await flood(url, 300)
    expect(new Set(statuses)).toEqual(new Set([401]))
    // one connection served them all, and its close listeners stayed what node itself adds
    expect(socket!.listenerCount('close')).toBeLessThan(10)
    expect(most).toBeLessThan(10)
    await new Promise<void>((r) => server.close(() => r()))
  })

  it('through serveHttp: 300 requests with a wrong token on one connection are each refused, and the server stays up', async () => {
    const tm = new ToolManager()
    const served = await serveHttp(tm, { token: 'the-right-token-123456' })
    try {
      const statuses = await flood(served.url, 300, { authorization: 'Bearer wrong', accept: 'application/json, text/event-stream' })
      expect(new Set(statuses)).toEqual(new Set([401]))
    } finally {
      await served.close()
    }
  })
})
