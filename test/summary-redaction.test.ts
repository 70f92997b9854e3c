// A custom confirmation summary cannot show a sensitive field: summarize is given the input
// with sensitive fields redacted (a summary written from the raw input leaked them to the model).
import { describe, expect, it } from 'vitest'
import { ToolManager } from '../src/index.js'
import { toOpenAIChat } from '../src/render/index.js'

describe('custom confirmation summaries', () => {
  it('see sensitive fields redacted, declared and by name, and the model never reads them', async () => {
    const tm = new ToolManager()
    const seen: unknown[] = []
    tm.register({
      name: 'delete_account',
      inputSchema: { type: 'object', properties: { user: { type: 'string' }, token: { type: 'string' }, password: { type: 'string' } } },
      sensitive: ['token'],
      needsConfirmation: true,
      summarize: (input: { user: string; token: string; password: string }) => {
        seen.push(input)
        return `delete ${input.user} using ${input.token} / ${input.password}`
      },
      run: () => 'deleted',
    })
    const view = await tm.call('delete_account', { user: 'ann', token: 'sk-TOPSECRET', password: 'hunter2' })
    expect(view.status).toBe('needs_confirmation')
    expect(seen).toEqual([{ user: 'ann', token: '[redacted]', password: '[redacted]' }])
    const wire = JSON.stringify(toOpenAIChat(view, { toolCallId: 'call_1' }))
    expect(wire).toContain('delete ann using')
    expect(wire).not.toContain('sk-TOPSECRET')
    expect(wire).not.toContain('hunter2')
    if (view.status !== 'needs_confirmation') return
    expect(view.summary).toBe('delete ann using [redacted] / [redacted]')
    // the approved run still gets the real input
    let ran: unknown
    tm.register({ name: 'echo_secret', inputSchema: { type: 'object' }, sensitive: ['token'], needsConfirmation: true, summarize: () => 'echo', run: (i) => ((ran = i), 'ok') })
    const parked = await tm.call('echo_secret', { token: 'real' })
    if (parked.status !== 'needs_confirmation') throw new Error(parked.status)
    await tm.confirm(parked.confirmId, { approve: true })
    expect(ran).toEqual({ token: 'real' })
  })
})
