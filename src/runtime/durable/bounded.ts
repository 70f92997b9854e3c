/**
 * A store whose every answer is awaited for a bounded time: the durable layer uses its store
 * through this, so that a store that stops answering (a dead connection, a lock never given
 * back) never hangs `tm.confirm`, `tm.resume`, `tm.undo`, `tm.undoable`, `tm.recover` or a
 * call. Past the bound a method rejects with a {@link StoreUnavailableError}; an answer that
 * comes later is undone where it took something (a won claim is given back, a taken undo is
 * put back, a ledger key taken is released), so a given-up wait changes nothing.
 */
import { StoreUnavailableError, type ClaimResult, type BeginResult, type ToolStore, type UndoEntry } from '../store/types.js'

/**
 * How long the durable layer waits for one answer of the store (and a settled call for the
 * store writes its view depends on, when it has no timeout of its own), in ms.
 */
export const STORE_WAIT_MS = 10_000

/** The error of a store that did not answer `what` within `ms`. */
export function storeTimeout(store: ToolStore, what: string, ms: number): StoreUnavailableError {
  return new StoreUnavailableError(`toolwire: the ${store.kind} store did not answer ${what} within ${ms} ms`)
}

/**
 * `answer`, or a rejection with a {@link StoreUnavailableError} after `ms`; `late(value)` gets
 * an answer that came after the rejection (its rejection is dropped). The timer does not keep
 * the process alive.
 */
function bounded<T>(store: ToolStore, what: string, ms: number, answer: Promise<T>, late?: (value: T) => unknown): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let done = false
    const timer = setTimeout(() => {
      done = true
      reject(storeTimeout(store, what, ms))
    }, ms)
    ;(timer as { unref?: () => void }).unref?.()
    answer.then(
      (value) => {
        if (!done) {
          done = true
          clearTimeout(timer)
          resolve(value)
        } else if (late !== undefined) {
          void Promise.resolve()
            .then(() => late(value))
            .catch(() => undefined)
        }
      },
      (err: unknown) => {
        if (done) return
        done = true
        clearTimeout(timer)
        reject(err)
      },
    )
  })
}

/** What `putUndo` takes to put `entry` back as it was (its owner only when it has one). */
export function undoInput(entry: Omit<UndoEntry, 'createdAt'>): Omit<UndoEntry, 'createdAt'> {
  const { callId, tool, payload, owner } = entry
  return owner === null || owner === undefined ? { callId, tool, payload } : { callId, tool, payload, owner }
}

/** `store`, each method's answer awaited at most `ms` (see the module's comment). */
export function boundedStore(store: ToolStore, ms: number = STORE_WAIT_MS): ToolStore {
  const wait = <T>(what: string, answer: () => Promise<T>, late?: (value: T) => unknown): Promise<T> => {
    let p: Promise<T>
    try {
      p = answer()
    } catch (err) {
      return Promise.reject(err)
    }
    return bounded(store, what, ms, p, late)
  }
  const getUndo = store.getUndo
  return {
    kind: store.kind,
    ...(store.now === undefined ? {} : { now: store.now }),
    ...(store.principals === true ? { principals: true } : {}),
    park: (call) => wait('park', () => store.park(call)),
    getParked: (id) => wait('getParked', () => store.getParked(id)),
    listParked: (state) => wait('listParked', () => store.listParked(state)),
    claim: (id, options) =>
      wait('claim', () => store.claim(id, options), (won: ClaimResult) => (won.ok ? store.unclaim(id, won.fence) : undefined)),
    finish: (id, fence) => wait('finish', () => store.finish(id, fence)),
    unclaim: (id, fence) => wait('unclaim', () => store.unclaim(id, fence)),
    deny: (id) => wait('deny', () => store.deny(id)),
    putUndo: (entry) => wait('putUndo', () => store.putUndo(entry)),
    takeUndo: (callId, owner) =>
      wait('takeUndo', () => (owner === undefined ? store.takeUndo(callId) : store.takeUndo(callId, owner)), (taken: UndoEntry | undefined) =>
        taken === undefined ? undefined : store.putUndo(undoInput(taken)),
      ),
    ...(getUndo === undefined ? {} : { getUndo: (callId: string) => wait('getUndo', () => getUndo.call(store, callId)) }),
    appendEvidence: (record) => wait('appendEvidence', () => store.appendEvidence(record)),
    readEvidence: () => wait('readEvidence', () => store.readEvidence()),
    begin: (key, hash, options) =>
      wait('begin', () => store.begin(key, hash, options), (begun: BeginResult) => (begun.state === 'new' ? store.release(key, begun.token) : undefined)),
    settle: (key, token, result) => wait('settle', () => store.settle(key, token, result)),
    release: (key, token) => wait('release', () => store.release(key, token)),
    sweep: () => wait('sweep', () => store.sweep()),
    prune: (options) => wait('prune', () => store.prune(options)),
    close: () => store.close(),
  }
}
