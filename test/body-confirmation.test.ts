// A confirmation a tool body asks for (`pending({ kind: 'confirmation' })`, as importMcpTools does
// for a remote one): tm.confirm answers it through the tool's resume with { approve }, approve and
// deny alike; what the body kept (keepForResume, internal) reaches the resume, here and through
// the store on another manager; the answer is taken once.
import { describe, expect, it } from 'vitest'
import { ToolManager, type ToolContext } from '../src/runtime/manager.js'
import { keepForResume, resumeStateOf } from '../src/runtime/resume-state.js'
import { pending } from '../src/core/helpers.js'
import { MemoryStore } from '../src/runtime/store/index.js'

function withAsker(tm: ToolManager, seen: unknown[]): ToolManager {
  tm.register({
    name: 'ask',
    inputSchema: { type: 'object', properties: { n: { type: 'number' } } },
    run: (input: { n?: number }, ctx: ToolContext) => {
      keepForResume(ctx, { state: `kept-${input.n ?? 0}` })
      return pending({ kind: 'confirmation', summary: 'Go ahead?' })
    },
    resume: (answer: unknown, input: { n?: number }, ctx: ToolContext) => {
      seen.push({ answer, input, kept: resumeStateOf(ctx) })
      return (answer as { approve: boolean }).approve ? 'went' : 'stayed'
    },
  })
  return tm
}

function idOf(view: { status: string; confirmId?: string }): string {
  if (view.status !== 'needs_confirmation') throw new Error(JSON.stringify(view))
  return view.confirmId!
}

describe('a body confirmation', () => {
  it('tm.confirm approves or denies through resume, with the kept state; once; the confirmation event names it', async () => {
    const seen: unknown[] = []
    const tm = withAsker(new ToolManager(), seen)
    const events: unknown[] = []
    tm.on('confirmation', (e) => events.push({ approved: e.approved, status: e.result.status }))
    const yes = await tm.call('ask', { n: 1 })
    expect(yes).toMatchObject({ status: 'needs_confirmation', summary: 'Go ahead?' })
    expect(JSON.stringify(yes)).not.toContain('kept-1')
    expect(await tm.confirm(idOf(yes), { approve: true })).toMatchObject({ status: 'ok', data: 'went' })
    expect(await tm.confirm(idOf(yes), { approve: true })).toMatchObject({ status: 'refused', code: 'request_used' })
    const no = await tm.call('ask', { n: 2 })
    expect(await tm.confirm(idOf(no), { approve: false })).toMatchObject({ status: 'ok', data: 'stayed' })
    expect(seen).toEqual([
      { answer: { approve: true }, input: { n: 1 }, kept: { state: 'kept-1' } },
      { answer: { approve: false }, input: { n: 2 }, kept: { state: 'kept-2' } },
    ])
    expect(events).toEqual([{ approved: true, status: 'ok' }, { approved: false, status: 'ok' }])
    // tm.resume answers it the same way, without the event
    const again = await tm.call('ask', { n: 4 })
    expect(await tm.resume(idOf(again), { approve: true })).toMatchObject({ status: 'ok', data: 'went' })
    expect(events).toHaveLength(2)
  })

  it('with a store and an approval secret, another manager confirms it: the kept state comes from the parked row', async () => {
    const store = new MemoryStore()
    const options = { store, approvalSecret: 'an approval secret of enough bytes', storeKey: 'd'.repeat(64) }
    const seenA: unknown[] = []
    const seenB: unknown[] = []
    const a = withAsker(new ToolManager(options), seenA)
    const b = withAsker(new ToolManager(options), seenB)
    const view = await a.call('ask', { n: 3 })
    expect(await b.confirm(idOf(view), { approve: true })).toMatchObject({ status: 'ok', data: 'went' })
    expect(await a.confirm(idOf(view), { approve: true })).toMatchObject({ status: 'refused', code: 'request_used' })
    expect(seenA).toEqual([])
    expect(seenB).toEqual([{ answer: { approve: true }, input: { n: 3 }, kept: { state: 'kept-3' } }])
  })

  it('keepForResume refuses a ctx that is not a call', () => {
    expect(() => keepForResume({} as ToolContext, 1)).toThrow(TypeError)
    expect(resumeStateOf({} as ToolContext)).toBeUndefined()
  })
})
