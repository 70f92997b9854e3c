// ajv (from toolwire's node_modules) over the official 2026-07-28 and 2025-11-25 schemas, plus a
// SEP-2663 tasks schema written here (the 2026-07-28 schema file has no task definitions)
import { createRequire } from 'node:module'
import { readFileSync } from 'node:fs'
const require = createRequire('/work/main/package.json')
const Ajv2020 = require('ajv/dist/2020').default
const addFormats = require('ajv-formats').default
const ajv = new Ajv2020({ strict: false, allErrors: true })
addFormats(ajv)
const s26 = JSON.parse(readFileSync('/work/shared/reference/mcp/schema-2026-07-28.json', 'utf8'))
const s25 = JSON.parse(readFileSync('/work/shared/reference/mcp/schema-2025-11-25.json', 'utf8'))
s26.$id = 'mcp-2026'; s25.$id = 'mcp-2025'
ajv.addSchema(s26); ajv.addSchema(s25)
// SEP-2663 shapes, as JSON Schema, reusing the 2026 $defs
const R = (d) => ({ $ref: `mcp-2026#/$defs/${d}` })
const task = {
  type: 'object',
  required: ['taskId', 'status', 'createdAt', 'lastUpdatedAt', 'ttlMs'],
  properties: {
    taskId: { type: 'string' },
    status: { enum: ['working', 'input_required', 'completed', 'cancelled', 'failed'] },
    statusMessage: { type: 'string' },
    createdAt: { type: 'string', format: 'date-time' },
    lastUpdatedAt: { type: 'string', format: 'date-time' },
    ttlMs: { type: ['integer', 'null'] },
    pollIntervalMs: { type: 'integer' },
  },
}
const detailed = {
  allOf: [task],
  oneOf: [
    { properties: { status: { const: 'working' } } },
    { properties: { status: { const: 'input_required' }, inputRequests: R('InputRequests') }, required: ['inputRequests'] },
    { properties: { status: { const: 'completed' }, result: R('JSONObject') }, required: ['result'] },
    { properties: { status: { const: 'failed' }, error: R('JSONObject') }, required: ['error'] },
    { properties: { status: { const: 'cancelled' } } },
  ],
}
const env = (result) => ({ type: 'object', required: ['jsonrpc', 'id', 'result'], properties: { jsonrpc: { const: '2.0' }, id: R('RequestId'), result } })
const req = (method, params) => ({ type: 'object', required: ['jsonrpc', 'id', 'method', 'params'], properties: { jsonrpc: { const: '2.0' }, id: R('RequestId'), method: { const: method }, params } })
ajv.addSchema({
  $id: 'tasks',
  $defs: {
    CreateTaskResultResponse: env({ allOf: [R('Result'), task, { properties: { resultType: { const: 'task' } } }] }),
    GetTaskResultResponse: env({ allOf: [R('Result'), detailed, { properties: { resultType: { const: 'complete' } } }] }),
    AckResultResponse: env({ allOf: [R('Result'), { properties: { resultType: { const: 'complete' } } }] }),
    GetTaskRequest: req('tasks/get', { allOf: [R('RequestParams'), { required: ['taskId'], properties: { taskId: { type: 'string' } } }] }),
    CancelTaskRequest: req('tasks/cancel', { allOf: [R('RequestParams'), { required: ['taskId'], properties: { taskId: { type: 'string' } } }] }),
    UpdateTaskRequest: req('tasks/update', { allOf: [R('RequestParams'), { required: ['taskId', 'inputResponses'], properties: { taskId: { type: 'string' }, inputResponses: R('InputResponses') } }] }),
  },
})

/** validate(frame, 'mcp-2026#/$defs/CallToolResultResponse') → [] or error strings */
export function validate(frame, ref) {
  const v = ajv.getSchema(ref)
  if (!v) throw new Error('no schema ' + ref)
  return v(frame) ? [] : v.errors.map((e) => `${e.instancePath} ${e.message} ${JSON.stringify(e.params)}`)
}
export function check(label, frame, ref) {
  const errs = validate(frame, ref)
  console.log(`${errs.length === 0 ? 'VALID  ' : 'INVALID'} ${label} against ${ref}${errs.length ? ': ' + errs.slice(0, 4).join(' | ') : ''}`)
  return errs.length === 0
}
