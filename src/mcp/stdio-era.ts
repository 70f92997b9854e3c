/**
 * The era of a stdio connection, checked on every request (basic/versioning): the SDK v2's
 * stdio entry checks the envelope of the opening message only, then hands every later message
 * to the pinned instance. On a 2026-07-28 connection each request must still carry a valid
 * envelope naming a supported revision, and a `server/discover` probe is not followed by
 * 2025-era requests without `initialize`.
 */
import { CLIENT_CAPABILITIES_META_KEY, PROTOCOL_VERSION_META_KEY, UnsupportedProtocolVersionError, type JSONRPCMessage } from '@modelcontextprotocol/server'
import { MCP_PROTOCOL_VERSION } from './protocol.js'

/** What the connection has opened as: nothing yet, a `server/discover` probe, or an era. */
type Opened = 'nothing' | 'probe' | 'modern' | 'legacy'

/** The error a request gets instead of being served. */
export interface EraRefusal {
  readonly code: number
  readonly message: string
  readonly data?: unknown
}

const ENVELOPE_REQUIRED = 'the per-request envelope is required on protocol revision 2026-07-28 (a 2025-11-25 client opens with initialize)'

/** The `_meta` of a request's params, when it is an object. */
function metaOf(params: unknown): Record<string, unknown> | undefined {
  if (typeof params !== 'object' || params === null) return undefined
  const meta = (params as { _meta?: unknown })._meta
  return typeof meta === 'object' && meta !== null && !Array.isArray(meta) ? (meta as Record<string, unknown>) : undefined
}

function invalidEnvelope(key: string, problem: string): EraRefusal {
  return { code: -32602, message: `Invalid _meta envelope for protocol revision 2026-07-28: ${key}: ${problem}`, data: { envelope: { key, problem } } }
}

/**
 * Follows one stdio connection's messages in order. `check` answers the refusal a request
 * gets, or `undefined` to serve it.
 *
 * @example
 * const era = new StdioEra()
 * era.check({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {} }) // undefined: 2025-11-25 from now on
 */
export class StdioEra {
  private opened: Opened = 'nothing'

  /** Whether the connection serves 2026-07-28, or opened with a `server/discover` probe (a later request is checked as 2026-07-28 unless it is `initialize`). */
  get modern(): boolean {
    return this.opened === 'modern' || this.opened === 'probe'
  }

  check(message: JSONRPCMessage): EraRefusal | undefined {
    const m = message as { id?: unknown; method?: unknown; params?: unknown }
    if (typeof m.method !== 'string' || m.id === undefined) return undefined // notifications and responses
    const meta = metaOf(m.params)
    const claim = meta !== undefined && Object.hasOwn(meta, PROTOCOL_VERSION_META_KEY)
    if (m.method === 'initialize' && !claim) {
      // the SDK refuses initialize on a 2026-07-28 connection itself
      if (this.opened !== 'modern') this.opened = 'legacy'
      return undefined
    }
    if (this.opened === 'legacy') return undefined
    if (this.opened === 'nothing') {
      // the SDK checks the opening message (its envelope, its revision)
      if (claim) this.opened = m.method === 'server/discover' ? 'probe' : 'modern'
      else this.opened = 'legacy'
      return undefined
    }
    // a 2026-07-28 connection (or one that probed with server/discover): every request carries a valid envelope
    if (!claim) return invalidEnvelope('_meta', ENVELOPE_REQUIRED)
    const version = meta[PROTOCOL_VERSION_META_KEY]
    if (typeof version !== 'string') return invalidEnvelope(PROTOCOL_VERSION_META_KEY, 'expected a string')
    const capabilities = meta[CLIENT_CAPABILITIES_META_KEY]
    if (capabilities === undefined) return invalidEnvelope(CLIENT_CAPABILITIES_META_KEY, 'missing')
    if (typeof capabilities !== 'object' || capabilities === null || Array.isArray(capabilities)) return invalidEnvelope(CLIENT_CAPABILITIES_META_KEY, 'expected an object')
    if (version !== MCP_PROTOCOL_VERSION) {
      const error = new UnsupportedProtocolVersionError({ supported: [MCP_PROTOCOL_VERSION], requested: version })
      return { code: error.code, message: error.message, data: error.data }
    }
    this.opened = 'modern'
    return undefined
  }
}
