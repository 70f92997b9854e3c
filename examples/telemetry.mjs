// A span, a metrics snapshot and an event record. Run: node examples/telemetry.mjs
import { trace } from '@opentelemetry/api'
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base'
import { ToolManager, errorResult } from 'toolwire'

const exporter = new InMemorySpanExporter()
trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }))

const tm = new ToolManager()
tm.register({ name: 'search', description: 'Search the docs', inputSchema: { type: 'object' }, run: () => errorResult('index offline') })
tm.on('call_end', (e) => console.log('record:', JSON.stringify(e.record)))
await tm.call('search', { q: 'retry' }, { callId: 'call_42' })

const [span] = exporter.getFinishedSpans()
console.log('span:', JSON.stringify({ name: span.name, kind: span.kind, status: span.status, attributes: span.attributes }))
const snapshot = tm.metrics().tools[0]
console.log('metrics:', JSON.stringify({ ...snapshot, duration: { ...snapshot.duration, buckets: `${snapshot.duration.buckets.length} buckets` } }))
console.log(tm.metrics({ format: 'prometheus' }).split('\n').filter((l) => l.includes('tool_calls_total') || l.startsWith('# ')).slice(0, 6).join('\n'))
