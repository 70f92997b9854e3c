// Trace context on a task's continuation (MCP 2026-07-28, serveHttp): a tools/call carrying a
// traceparent in `_meta` that becomes a task waiting for approval; the approval comes by
// tasks/update. On the instance that made the task, the continued run's execute_tool span is a
// child of the sent span (the parked call keeps the request's trace context in memory, with a
// store too). On another instance on the store, or after a restart, the trace context is not in
// the store: the run's span starts a trace of its own, linked by its gen_ai.tool.call.id (docs/mcp.md, Tasks).
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { serveHttp, type HttpMcpServer } from '../src/mcp/http.js'
import { MemoryStore } from '../src/runtime/store/index.js'
import { payManager } from './fixtures/mcp/instances.js'
import { settledTask, taskMeta, taskRpc } from './fixtures/mcp/task-rpc.js'
import { useTracerProvider, type FinishedSpan } from './fixtures/tracing.js'

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736'
const SPAN_ID = '00f067aa0ba902b7'
const TRACEPARENT = `00-${TRACE_ID}-${SPAN_ID}-01`
const SECRET = 'tasks-trace-approval-secret-0123456789'
const STORE_KEY = 'f'.repeat(64)
const APPROVE = { 'confirm-1': { action: 'accept', content: { approve: true } } }

const { exporter } = useTracerProvider()
afterEach(() => exporter.reset())
const servers: HttpMcpServer[] = []
afterAll(async () => {
  for (const s of servers) await s.close()
})

/** Two instances on one store; a task made on the first with a traceparent, approved on `answerOn`; the spans of `pay`. */
async function approvedOn(answerOn: 'same' | 'other', invoice: string): Promise<FinishedSpan[]> {
  const store = new MemoryStore()
  const runs: string[] = []
  const a = await serveHttp(payManager(store, runs, 'A', SECRET, STORE_KEY), { store, approvalSecret: SECRET })
  const b = await serveHttp(payManager(store, runs, 'B', SECRET, STORE_KEY), { store, approvalSecret: SECRET })
  servers.push(a, b)
  const called = await taskRpc(a.url, 'tools/call', { name: 'pay', arguments: { invoice }, _meta: taskMeta(true, { traceparent: TRACEPARENT, tracestate: 'k=v' }) }, 'pay')
  const taskId = called.result.taskId as string
  const target = answerOn === 'same' ? a : b
  await taskRpc(target.url, 'tasks/update', { taskId, inputResponses: APPROVE, _meta: taskMeta(true) }, taskId)
  expect((await settledTask([target.url], taskId)).result).toMatchObject({ status: 'completed' })
  expect(runs).toEqual([`${invoice}@${answerOn === 'same' ? 'A' : 'B'}`])
  await a.close()
  await b.close()
  return exporter.getFinishedSpans().filter((s) => s.name === 'execute_tool pay')
}

describe('trace context on a task continued by tasks/update', () => {
  it('on the instance that made the task: the run is a child of the span the tools/call request sent', async () => {
    const spans = await approvedOn('same', 'INV-T1')
    // the call that parked, then its run after the approval: both in the sent trace, under the sent span
    expect(spans.map((s) => s.attributes['toolwire.status'])).toEqual(['pending', 'success'])
    for (const span of spans) {
      expect(span.spanContext().traceId).toBe(TRACE_ID)
      expect(span.parentSpanContext?.spanId).toBe(SPAN_ID)
      expect(span.spanContext().traceState?.serialize()).toBe('k=v')
    }
  })

  it('on another instance: the trace context is not in the store, the run starts a trace of its own', async () => {
    const spans = await approvedOn('other', 'INV-T2')
    expect(spans.map((s) => s.attributes['toolwire.status'])).toEqual(['pending', 'success'])
    const [parked, run] = spans as [FinishedSpan, FinishedSpan]
    expect(parked.spanContext().traceId).toBe(TRACE_ID)
    expect(parked.parentSpanContext?.spanId).toBe(SPAN_ID)
    // the same call id links the two spans; the run's trace is its own
    expect(run.attributes['gen_ai.tool.call.id']).toBe(parked.attributes['gen_ai.tool.call.id'])
    expect(run.spanContext().traceId).not.toBe(TRACE_ID)
    expect(run.parentSpanContext).toBeUndefined()
  })
})
