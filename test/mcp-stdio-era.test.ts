// A stdio connection keeps checking each request against the era it opened (src/mcp/stdio-era.ts):
// the SDK v2's stdio entry checks only the opening message. Raw frames over an in-process pipe;
// error frames are checked against the 2026-07-28 schema (skipped with the reason printed when the
// reference folder is absent, failing under CI=true: test/fixtures/mcp/frames.ts).
import { PassThrough } from 'node:stream'
import { afterEach, describe, expect, it } from 'vitest'
import { ToolManager } from '../src/runtime/manager.js'
import { serveStdio, type StdioMcpServer } from '../src/mcp/stdio.js'
import { StdioEra } from '../src/mcp/stdio-era.js'
import { MCP_PROTOCOL_VERSION } from '../src/mcp/protocol.js'
import { frameSchemas } from './fixtures/mcp/frames.js'

const schemas = frameSchemas()

function envelope(version: unknown = MCP_PROTOCOL_VERSION, capabilities: unknown = {}): Record<string, unknown> {
  // (capabilities null: the key is left out)
  const meta: Record<string, unknown> = { 'io.modelcontextprotocol/protocolVersion': version, 'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' } }
  if (capabilities !== null) meta['io.modelcontextprotocol/clientCapabilities'] = capabilities
  return meta
}

let served: StdioMcpServer | undefined
afterEach(async () => {
  await served?.close()
  served = undefined
})

/** A served manager with one `echo` tool counting its runs, and a `send` that resolves the answer to a request id. */
async function connection(): Promise<{ send: (frame: Record<string, unknown>) => Promise<Record<string, unknown>>; runs: () => number }> {
  let runs = 0
  const tm = new ToolManager()
  tm.register({ name: 'echo', inputSchema: { type: 'object', properties: { text: { type: 'string' } } }, run: (input: { text?: string }) => (runs++, { text: input.text ?? '' }) })
  const toServer = new PassThrough()
  const toClient = new PassThrough()
  served = await serveStdio(tm, { stdin: toServer, stdout: toClient })
  const waiting = new Map<unknown, (frame: Record<string, unknown>) => void>()
  let buffer = ''
  toClient.on('data', (chunk: Buffer) => {
    buffer += chunk.toString('utf8')
    for (let nl = buffer.indexOf('\n'); nl !== -1; nl = buffer.indexOf('\n')) {
      const frame = JSON.parse(buffer.slice(0, nl)) as Record<string, unknown>
      buffer = buffer.slice(nl + 1)
      waiting.get(frame.id)?.(frame)
    }
  })
  const send = (frame: Record<string, unknown>): Promise<Record<string, unknown>> =>
    new Promise((resolve) => {
      waiting.set(frame.id, resolve)
      toServer.write(`${JSON.stringify({ jsonrpc: '2.0', ...frame })}\n`)
    })
  return { send, runs: () => runs }
}

const call = (id: number, meta?: Record<string, unknown>): Record<string, unknown> => ({
  id,
  method: 'tools/call',
  params: { name: 'echo', arguments: { text: 'hi' }, ...(meta === undefined ? {} : { _meta: meta }) },
})

function expectModernError(frame: Record<string, unknown>, code: number): { message: string; data?: unknown } {
  const error = frame.error as { code: number; message: string; data?: unknown }
  expect(error?.code, JSON.stringify(frame)).toBe(code)
  if (schemas !== undefined) expect(schemas.frameErrors('modern', frame)).toEqual([])
  return error
}

describe('stdio: every request on a 2026-07-28 connection is checked', () => {
  it('a later request naming an unknown revision gets -32022 and does not run', async () => {
    const { send, runs } = await connection()
    expect((await send(call(1, envelope()))).result).toBeDefined()
    const error = expectModernError(await send(call(2, envelope('2030-01-01'))), -32022)
    expect(error.data).toEqual({ supported: [MCP_PROTOCOL_VERSION], requested: '2030-01-01' })
    expect(runs()).toBe(1)
  })

  it('a later envelope without clientCapabilities gets -32602 naming the key; one without an envelope -32602', async () => {
    const { send, runs } = await connection()
    expect((await send(call(1, envelope()))).result).toBeDefined()
    expect(expectModernError(await send(call(2, envelope(MCP_PROTOCOL_VERSION, null))), -32602).message).toContain('io.modelcontextprotocol/clientCapabilities: missing')
    expect(expectModernError(await send(call(3)), -32602).message).toContain('envelope is required')
    expect(expectModernError(await send(call(4, envelope(7))), -32602).message).toContain('protocolVersion: expected a string')
    expect(runs()).toBe(1)
    // the connection still serves valid requests
    expect((await send(call(5, envelope()))).result).toBeDefined()
    expect(runs()).toBe(2)
  })

  it('after a server/discover probe, a request without the envelope gets -32602; initialize still opens 2025-11-25', async () => {
    const { send, runs } = await connection()
    const discovered = await send({ id: 1, method: 'server/discover', params: { _meta: envelope() } })
    expect((discovered.result as { supportedVersions: string[] }).supportedVersions).toEqual([MCP_PROTOCOL_VERSION])
    expectModernError(await send({ id: 2, method: 'tools/list', params: {} }), -32602)
    const init = await send({ id: 3, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'old', version: '1' } } })
    expect((init.result as { protocolVersion: string }).protocolVersion).toBe('2025-11-25')
    const listed = await send({ id: 4, method: 'tools/list', params: {} })
    expect((listed.result as { tools: unknown[] }).tools).toHaveLength(1)
    expect(runs()).toBe(0)
  })
})

describe('StdioEra', () => {
  it('a connection opened with initialize (or without an envelope) is 2025-11-25: later requests pass unchecked', () => {
    for (const opening of [{ method: 'initialize', params: {} }, { method: 'tools/list', params: {} }]) {
      const era = new StdioEra()
      expect(era.check({ jsonrpc: '2.0', id: 1, ...opening } as never)).toBeUndefined()
      expect(era.check({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'x', _meta: envelope('2030-01-01') } } as never)).toBeUndefined()
    }
  })

  it('notifications and responses are never refused', () => {
    const era = new StdioEra()
    era.check({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: envelope() } } as never)
    expect(era.check({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } } as never)).toBeUndefined()
    expect(era.check({ jsonrpc: '2.0', id: 9, result: {} } as never)).toBeUndefined()
  })
})
