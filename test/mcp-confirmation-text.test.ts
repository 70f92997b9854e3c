// The text a model reads when a call waits for approval at a link (a client without
// elicitation). "did not run yet" made a model call the tool again, which parks a second,
// separate confirmation: approved both, the side effect ran twice. The text says the call runs
// once approved at the link, without another call, and that calling again asks for a second
// approval; both claims are checked against what the server does.
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { describe, expect, it } from 'vitest'
import { ToolManager } from '../src/runtime/manager.js'
import { createMcpServer, type McpServerOptions } from '../src/mcp/server.js'

const LINK = 'https://app.example/confirm/abc'

function manager(runs: string[]): ToolManager {
  const tm = new ToolManager()
  tm.register({
    name: 'send_payment',
    inputSchema: { type: 'object', properties: { to: { type: 'string' } }, required: ['to'] },
    needsConfirmation: true,
    summarize: ({ to }: { to: string }) => `Pay ${to}`,
    run: ({ to }: { to: string }) => {
      runs.push(to)
      return { paid: to }
    },
  })
  return tm
}

async function callOnce(tm: ToolManager, options: McpServerOptions): Promise<{ text: string; confirmId: string }> {
  const [a, b] = InMemoryTransport.createLinkedPair()
  await createMcpServer(tm, options).connect(a)
  const client = new Client({ name: 'no-elicitation', version: '1.0.0' })
  await client.connect(b)
  try {
    const result = (await client.callTool({ name: 'send_payment', arguments: { to: 'bob' } })) as CallToolResult
    expect(result.isError).toBe(true)
    const first = result.content[0] as { type: string; text: string }
    const meta = result._meta?.['toolwire/confirmation'] as { confirmId: string }
    return { text: first.text, confirmId: meta.confirmId }
  } finally {
    await client.close()
  }
}

const link: McpServerOptions['confirmationLink'] = () => ({ url: LINK, decided: async () => undefined })

describe('the text of a confirmation waiting at a link', () => {
  for (const [what, options] of [
    ['the link in the text', { confirmationLink: link }],
    ['the link only in _meta', { confirmationLink: link, confirmationLinkInText: false }],
  ] as const) {
    it(`${what}: it runs once approved, without another call; another call asks a second, separate approval`, async () => {
      const runs: string[] = []
      const tm = manager(runs)
      const { text, confirmId } = await callOnce(tm, options)
      expect(text).not.toMatch(/did not run/)
      expect(text).toMatch(/runs once approved there, without another call/)
      expect(text).toMatch(/Calling this tool again would ask for a second, separate approval/)
      expect(text).toContain('Pay bob')
      if (options.confirmationLinkInText === false) expect(text).not.toContain(LINK)
      else expect(text).toContain(LINK)
      expect(text.length).toBeLessThan(420)

      // what the text claims: another call is another confirmation; approving the first runs it once
      const again = await callOnce(tm, options)
      expect(again.confirmId).not.toBe(confirmId)
      const view = await tm.confirm(confirmId, { approve: true })
      expect(view.status).toBe('ok')
      expect(runs).toEqual(['bob'])
    })
  }

  it('without a link, the text tells the model not to call again for the same action either', async () => {
    const { text } = await callOnce(manager([]), {})
    expect(text).toMatch(/Calling this tool again would ask for a second, separate confirmation/)
  })
})
