// Trace context over MCP (issue #22 Deliver 4): a tools/call request's `_meta` traceparent,
// tracestate and baggage parent the call's execute_tool span (the in-memory transport and raw
// Streamable HTTP frames, checked against the 2025-11-25 schema), with no propagator
// registered and with NodeSDK's W3C ones; and importMcpTools sends the local call's span in
// `_meta`, so one trace crosses client → toolwire → a second toolwire server.
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import { ElicitRequestSchema, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js'
import { propagation, type TextMapPropagator } from '@opentelemetry/api'
import { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator } from '@opentelemetry/core'
import { afterEach, describe, expect, it } from 'vitest'
import { importMcpTools } from '../src/mcp/client.js'
import { serveHttp } from '../src/mcp/http.js'
import { createMcpServer } from '../src/mcp/server.js'
import { ToolManager, type ToolContext } from '../src/index.js'
import { useTracerProvider, type FinishedSpan } from './fixtures/tracing.js'
import { mcpSchemas } from './fixtures/mcp/schema.js'

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736'
const SPAN_ID = '00f067aa0ba902b7'
const TRACEPARENT = `00-${TRACE_ID}-${SPAN_ID}-01`

const schemas = mcpSchemas('mcp-trace.test.ts')
/** A check of frames against a 2025-11-25 definition (these frames are of that era); nothing without the schemas. */
const frameCheck = (def: string) => (frame: unknown): void => {
  if (schemas !== undefined) expect(schemas.problems('2025-11-25', def, frame)).toEqual([])
}
const validRequest = frameCheck('JSONRPCRequest')
const validCallRequest = frameCheck('CallToolRequest')
const validResponse = frameCheck('JSONRPCResultResponse')
const validCallResult = frameCheck('CallToolResult')

const { exporter } = useTracerProvider()
afterEach(() => {
  propagation.disable()
  exporter.reset()
})

function spanOf(tool: string): FinishedSpan {
  const spans = exporter.getFinishedSpans().filter((s) => s.name === `execute_tool ${tool}`)
  expect(spans).toHaveLength(1)
  return spans[0]!
}

/** The served manager: `echo`, and `seen` (answers the trace context its body sees). */
function served(): ToolManager {
  const tm = new ToolManager()
  tm.register({ name: 'echo', description: 'Echoes', inputSchema: { type: 'object' }, run: (input) => input })
  tm.register({ name: 'seen', inputSchema: { type: 'object' }, run: (_input, ctx: ToolContext) => ({ traceContext: ctx.traceContext ?? null }) })
  tm.register({ name: 'guarded', inputSchema: { type: 'object' }, needsConfirmation: true, run: () => 'done' })
  return tm
}

/** An SDK client connected to `createMcpServer(tm)` in memory (approving every elicitation when `approve`); `sent` holds every frame the client sent. */
async function inMemory(tm: ToolManager, approve = false): Promise<{ client: Client; sent: JSONRPCMessage[] }> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  const sent: JSONRPCMessage[] = []
  const send = clientSide.send.bind(clientSide)
  clientSide.send = (message, options) => {
    sent.push(message)
    return send(message, options)
  }
  await createMcpServer(tm).connect(serverSide)
  const client = new Client({ name: 'trace-test', version: '1.0.0' }, approve ? { capabilities: { elicitation: { form: {} } } } : {})
  if (approve) client.setRequestHandler(ElicitRequestSchema, () => ({ action: 'accept', content: { approve: true } }))
  await client.connect(clientSide)
  return { client, sent }
}

/** The last tools/call request among the frames a client sent. */
function lastCall(sent: JSONRPCMessage[]): { params: { _meta?: Record<string, unknown> } } {
  const calls = sent.filter((m) => 'method' in m && m.method === 'tools/call')
  expect(calls.length).toBeGreaterThan(0)
  return calls.at(-1) as unknown as { params: { _meta?: Record<string, unknown> } }
}

const nodeSdkPropagator = (): TextMapPropagator =>
  new CompositePropagator({ propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()] })

describe.each([
  ['no propagator registered', undefined],
  ["NodeSDK's W3C propagators registered", nodeSdkPropagator],
] as const)('a tools/call request carrying a traceparent, %s', (_label, make) => {
  const register = (): void => {
    if (make !== undefined) expect(propagation.setGlobalPropagator(make())).toBe(true)
  }

  it('yields an execute_tool span with that trace id and the sent span as its parent (in memory)', async () => {
    register()
    const { client, sent } = await inMemory(served())
    try {
      const result = await client.callTool({ name: 'seen', arguments: {}, _meta: { traceparent: TRACEPARENT, tracestate: 'rojo=00f067aa0ba902b7', baggage: 'tenant=acme' } })
      const span = spanOf('seen')
      expect(span.spanContext().traceId).toBe(TRACE_ID)
      expect(span.parentSpanContext?.spanId).toBe(SPAN_ID)
      expect(span.parentSpanContext?.isRemote).toBe(true)
      // the body sees its own span as the context to forward, with the tracestate and baggage
      expect(result.structuredContent).toEqual({
        traceContext: { traceparent: `00-${TRACE_ID}-${span.spanContext().spanId}-01`, tracestate: 'rojo=00f067aa0ba902b7', baggage: 'tenant=acme' },
      })
      const call = lastCall(sent)
      validRequest(call)
      validCallRequest(call)
    } finally {
      await client.close()
    }
  })

  it('a call confirmed through elicitation: the waiting call and the confirmed run are both children of the sent span', async () => {
    register()
    const { client } = await inMemory(served(), true)
    try {
      const result = await client.callTool({ name: 'guarded', arguments: {}, _meta: { traceparent: TRACEPARENT } })
      expect(result).toMatchObject({ isError: false, content: [{ type: 'text', text: 'done' }] })
      const spans = exporter.getFinishedSpans().filter((s) => s.name === 'execute_tool guarded')
      expect(spans.map((s) => s.attributes['toolwire.status'])).toEqual(['pending', 'success'])
      for (const span of spans) {
        expect(span.spanContext().traceId).toBe(TRACE_ID)
        expect(span.parentSpanContext?.spanId).toBe(SPAN_ID)
      }
    } finally {
      await client.close()
    }
  })

  it('over Streamable HTTP: the raw frames are valid, the span is parented; an invalid traceparent is ignored', async () => {
    register()
    // the validators do check: a tools/call without a name is refused
    if (schemas !== undefined) expect(schemas.problems('2025-11-25', 'CallToolRequest', { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { _meta: { traceparent: TRACEPARENT } } }).join()).toMatch(/name/)
    const http = await serveHttp(served(), { stateless: true })
    try {
      const post = async (id: number, meta: Record<string, unknown>): Promise<Record<string, unknown>> => {
        const request = { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', arguments: { n: id }, _meta: meta } }
        validRequest(request)
        validCallRequest(request)
        const res = await fetch(http.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' },
          body: JSON.stringify(request),
        })
        expect(res.status).toBe(200)
        const frame = (await res.json()) as Record<string, unknown>
        validResponse(frame)
        validCallResult(frame.result)
        return frame
      }
      expect(await post(1, { traceparent: TRACEPARENT })).toMatchObject({ id: 1, result: { isError: false, structuredContent: { n: 1 } } })
      const parented = spanOf('echo')
      expect(parented.spanContext().traceId).toBe(TRACE_ID)
      expect(parented.parentSpanContext?.spanId).toBe(SPAN_ID)
      exporter.reset()
      // uppercase hex is not W3C: the call runs, its span starts a trace of its own
      expect(await post(2, { traceparent: TRACEPARENT.toUpperCase(), tracestate: 'a=b' })).toMatchObject({ id: 2, result: { isError: false, structuredContent: { n: 2 } } })
      const root = spanOf('echo')
      expect(root.parentSpanContext).toBeUndefined()
      expect(root.spanContext().traceId).not.toBe(TRACE_ID)
      exporter.reset()
      for (const meta of [{ traceparent: 42 }, { traceparent: `00-${'0'.repeat(32)}-${SPAN_ID}-01` }, { traceparent: { nested: true } }, { baggage: 'k=v' }]) {
        expect(await post(3, meta)).toMatchObject({ id: 3, result: { isError: false } })
      }
      expect(exporter.getFinishedSpans().map((s) => s.parentSpanContext)).toEqual([undefined, undefined, undefined, undefined])
    } finally {
      await http.close()
    }
  })

  it('one trace crosses client → toolwire → a second toolwire server (importMcpTools sends the local span in _meta)', async () => {
    register()
    const { client, sent } = await inMemory(served())
    try {
      const local = new ToolManager()
      await importMcpTools(client, local, { prefix: 'remote__' })
      const view = await local.call('remote__echo', { q: 1 }, { traceContext: { traceparent: TRACEPARENT, tracestate: 'rojo=1', baggage: 'tenant=acme' } })
      expect(view).toMatchObject({ status: 'ok', data: { q: 1 } })
      const localSpan = spanOf('remote__echo')
      const remoteSpan = spanOf('echo')
      expect(localSpan.spanContext().traceId).toBe(TRACE_ID)
      expect(localSpan.parentSpanContext?.spanId).toBe(SPAN_ID)
      expect(remoteSpan.spanContext().traceId).toBe(TRACE_ID)
      expect(remoteSpan.parentSpanContext?.spanId).toBe(localSpan.spanContext().spanId)
      expect(remoteSpan.spanContext().traceState?.get('rojo')).toBe('1')
      // the frame that crossed: traceparent of the local span, its tracestate, and the baggage
      const call = lastCall(sent)
      validRequest(call)
      validCallRequest(call)
      // (beside the progress token importMcpTools always asks for)
      expect(call.params._meta).toEqual({ progressToken: expect.any(Number), traceparent: `00-${TRACE_ID}-${localSpan.spanContext().spanId}-01`, tracestate: 'rojo=1', baggage: 'tenant=acme' })
    } finally {
      await client.close()
    }
  })
})

describe('importMcpTools without a trace', () => {
  it('a local call with no span and no trace context sends no trace _meta; tracing off forwards what the call was given', async () => {
    const { client, sent } = await inMemory(served())
    try {
      const untraced = new ToolManager({ telemetry: { tracing: false } })
      await importMcpTools(client, untraced)
      await untraced.call('echo', { q: 1 })
      const plain = lastCall(sent)
      expect(plain.params._meta).toEqual({ progressToken: expect.any(Number) })
      expect(spanOf('echo').parentSpanContext).toBeUndefined()
      exporter.reset()
      // tracing off still forwards the context it was called with (nothing of its own)
      await untraced.call('echo', { q: 2 }, { traceContext: { traceparent: TRACEPARENT } })
      const forwarded = lastCall(sent)
      expect(forwarded.params._meta).toEqual({ progressToken: expect.any(Number), traceparent: TRACEPARENT })
      expect(spanOf('echo').parentSpanContext?.spanId).toBe(SPAN_ID)
    } finally {
      await client.close()
    }
  })

  it('over Streamable HTTP too: the remote span is a child of the local one', async () => {
    const http = await serveHttp(served(), { stateless: true })
    const client = new Client({ name: 'trace-test', version: '1.0.0' })
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(http.url)))
      const local = new ToolManager()
      await importMcpTools(client, local, { prefix: 'remote__' })
      const view = await local.call('remote__echo', { q: 3 })
      expect(view).toMatchObject({ status: 'ok', data: { q: 3 } })
      const localSpan = spanOf('remote__echo')
      const remoteSpan = spanOf('echo')
      expect(localSpan.parentSpanContext).toBeUndefined()
      expect(remoteSpan.spanContext().traceId).toBe(localSpan.spanContext().traceId)
      expect(remoteSpan.parentSpanContext?.spanId).toBe(localSpan.spanContext().spanId)
    } finally {
      await client.close()
      await http.close()
    }
  })
})
