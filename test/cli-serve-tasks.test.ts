// `toolwire serve --store sqlite:<file>` over stdio serves the tasks extension (MCP 2026-07-28),
// run as the built dist/cli.js: server/discover advertises it; the demo's delete_file (it needs
// confirmation) called by a client that declares the extension answers a task; tasks/get shows
// input_required; tasks/update approves; the task completes and the file is gone (the tool ran
// once). Every frame is checked against the 2026-07-28 schema and the SEP-2663 fixture.
import { spawn } from 'node:child_process'
import { existsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cli, makeToolBox } from './fixtures/mcp/helpers.js'
import { frameSchemas } from './fixtures/mcp/frames.js'
import { taskMeta } from './fixtures/mcp/task-rpc.js'

const schemas = frameSchemas()
let box: ReturnType<typeof makeToolBox>['box']
beforeAll(() => {
  ;({ box } = makeToolBox())
})
afterAll(() => box?.cleanup())

describe('toolwire serve --store over stdio', () => {
  it('serves tasks: input_required → tasks/update approve → completed; the tool ran once', async () => {
    const victim = join(box.root, 'task-victim.txt')
    writeFileSync(victim, 'bye')
    const child = spawn(process.execPath, [cli, 'serve', '--store', `sqlite:${join(box.dir, 'tasks.db')}`], { cwd: box.root, stdio: ['pipe', 'pipe', 'pipe'] })
    const exit = new Promise<number | null>((resolve) => child.on('exit', resolve))
    const waiting = new Map<number, (frame: Record<string, any>) => void>()
    const methods = new Map<number, string>()
    createInterface({ input: child.stdout }).on('line', (line) => {
      const frame = JSON.parse(line) as Record<string, any>
      if (schemas !== undefined) expect(schemas.taskFrameErrors(methods.get(frame.id) ?? '', frame), line.slice(0, 400)).toEqual([])
      waiting.get(frame.id)?.(frame)
    })
    let seq = 0
    const rpc = (method: string, params: Record<string, unknown>): Promise<Record<string, any>> =>
      new Promise((resolve) => {
        const id = ++seq
        waiting.set(id, resolve)
        methods.set(id, method)
        child.stdin.write(JSON.stringify({ jsonrpc: '2.0', id, method, params: { ...params, _meta: taskMeta(true) } }) + '\n')
      })
    try {
      const discover = await rpc('server/discover', {})
      expect(discover.result.capabilities.extensions).toEqual({ 'io.modelcontextprotocol/tasks': {} })
      const called = await rpc('tools/call', { name: 'delete_file', arguments: { path: 'task-victim.txt' } })
      expect(called.result).toMatchObject({ resultType: 'task', status: 'input_required' })
      const taskId = called.result.taskId as string
      const asked = await rpc('tasks/get', { taskId })
      expect(Object.keys(asked.result.inputRequests)).toEqual(['confirm-1'])
      expect(existsSync(victim)).toBe(true)
      expect((await rpc('tasks/update', { taskId, inputResponses: { 'confirm-1': { action: 'accept', content: { approve: true } } } })).result).toMatchObject({ resultType: 'complete' })
      let done = await rpc('tasks/get', { taskId })
      for (let i = 0; i < 400 && done.result.status === 'working'; i++) {
        await new Promise((r) => setTimeout(r, 5))
        done = await rpc('tasks/get', { taskId })
      }
      expect(done.result).toMatchObject({ status: 'completed', result: { isError: false } })
      expect(existsSync(victim)).toBe(false)
    } finally {
      child.stdin.end()
    }
    expect(await exit).toBe(0)
  })
})
