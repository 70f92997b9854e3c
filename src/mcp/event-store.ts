/**
 * The events a session keeps so that a client can resume an SSE stream (`Last-Event-ID`):
 * the newest ones, bounded by count and by bytes. No MCP SDK import beyond its types.
 */
import type { EventStore, JSONRPCMessage } from '@modelcontextprotocol/server'

/** Bounds of a {@link MemoryEventStore}. */
export interface EventStoreLimits {
  /** The most events kept (default 1000). */
  readonly maxEvents?: number
  /** The most bytes kept, each event counted as its JSON (default 4 MiB). */
  readonly maxBytes?: number
}

interface StoredEvent {
  readonly streamId: string
  readonly message: JSONRPCMessage
  readonly bytes: number
}

/**
 * The newest events of one session, in memory, for `Last-Event-ID` replay. Past either bound
 * the oldest go first; an event larger than `maxBytes` is sent but not kept, and everything
 * older goes with it, so that a resume never skips an event silently: a `Last-Event-ID` that
 * is no longer kept is unknown (the SDK's transport answers 400), and the client starts over.
 */
export class MemoryEventStore implements EventStore {
  private readonly events = new Map<string, StoredEvent>()
  private seq = 0
  private held = 0
  private readonly maxEvents: number
  private readonly maxBytes: number

  constructor(limits: EventStoreLimits = {}) {
    this.maxEvents = limits.maxEvents ?? 1000
    this.maxBytes = limits.maxBytes ?? 4 * 1024 * 1024
  }

  /** The bytes the kept events take (their JSON). */
  bytes(): number {
    return this.held
  }

  /** How many events are kept. */
  size(): number {
    return this.events.size
  }

  async storeEvent(streamId: string, message: JSONRPCMessage): Promise<string> {
    const eventId = `${streamId}_${(++this.seq).toString(36)}`
    const bytes = Buffer.byteLength(JSON.stringify(message))
    if (bytes > this.maxBytes) {
      // not kept, nor anything before it: a resume from before it would miss it
      this.events.clear()
      this.held = 0
      return eventId
    }
    this.events.set(eventId, { streamId, message, bytes })
    this.held += bytes
    while (this.events.size > this.maxEvents || this.held > this.maxBytes) {
      const [oldest, event] = this.events.entries().next().value as [string, StoredEvent]
      this.events.delete(oldest)
      this.held -= event.bytes
    }
    return eventId
  }

  async getStreamIdForEventId(eventId: string): Promise<string | undefined> {
    return this.events.get(eventId)?.streamId
  }

  async replayEventsAfter(lastEventId: string, { send }: { send: (eventId: string, message: JSONRPCMessage) => Promise<void> }): Promise<string> {
    const last = this.events.get(lastEventId)
    if (last === undefined) return ''
    let after = false
    for (const [id, event] of this.events) {
      if (id === lastEventId) {
        after = true
        continue
      }
      // the priming event is an empty object: nothing to replay
      if (after && event.streamId === last.streamId && Object.keys(event.message).length > 0) await send(id, event.message)
    }
    return last.streamId
  }
}
