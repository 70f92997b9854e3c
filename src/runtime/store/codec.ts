/**
 * What the stores write: the canonical JSON text of a value and its SHA-256, unguessable ids,
 * and a parked call's input as a store keeps it — redacted for anyone who reads the table,
 * and, when the app gives a key, sealed whole with AES-256-GCM so that another process can
 * run the call with the real input.
 */
import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes, randomFillSync } from 'node:crypto'
import { redact } from '../../core/redact.js'
import { toFrozenJson } from '../../core/json.js'
import type { JsonValue } from '../../core/types.js'

/**
 * The canonical JSON text of a value: object keys sorted by UTF-16 code units, no whitespace,
 * numbers and strings as `JSON.stringify` writes them. Two inputs that mean the same JSON
 * have the same text, whatever the order their keys were written in.
 * @throws TypeError when the value has no JSON form (a cycle, a BigInt, too deep).
 */
export function canonicalJson(value: unknown): string {
  return write(toFrozenJson(value))
}

function write(value: JsonValue): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value)
  if (Array.isArray(value)) return `[${value.map(write).join(',')}]`
  const obj = value as { readonly [key: string]: JsonValue }
  const parts: string[] = []
  for (const key of Object.keys(obj).sort()) parts.push(`${JSON.stringify(key)}:${write(obj[key]!)}`)
  return `{${parts.join(',')}}`
}

/** Lowercase hex SHA-256 of the canonical JSON text of `value`: what approvals and the idempotency ledger bind to. */
export function inputHash(value: unknown): string {
  return createHash('sha256').update(canonicalJson(value), 'utf8').digest('hex')
}

/** A new id: `prefix` then 128 random bits from the system's CSPRNG, base64url (22 characters). */
export { randomId } from '../../core/ids.js'

/** Bytes of the CSPRNG drawn ahead for {@link randomIdPair}, each handed out once (as Node.js's own `randomUUID` does). */
const pool = Buffer.alloc(32 * 128)
let pooled = pool.length

/**
 * Two ids as {@link randomId} makes them (128 random bits each, base64url), for a call's own
 * ledger key and its token. The bytes come from the system's CSPRNG, drawn 128 pairs at a time
 * (a draw costs several µs; each byte is used once).
 */
export function randomIdPair(): readonly [string, string] {
  if (pooled === pool.length) {
    randomFillSync(pool)
    pooled = 0
  }
  const at = pooled
  pooled += 32
  return [pool.toString('base64url', at, at + 16), pool.toString('base64url', at + 16, at + 32)]
}

/** An AES-256 key: 32 bytes, or their base64 / hex text. */
export type StoreKey = Uint8Array | string

/**
 * A keyed {@link inputHash}: HMAC-SHA256 of the canonical JSON text under `key`. A hash that is
 * handed out (in an approval token) or stored must be keyed, or a low-entropy field of the input
 * (a PIN) could be recovered from it by trying values.
 */
export function keyedInputHash(key: Uint8Array, value: unknown): string {
  return createHmac('sha256', key).update(canonicalJson(value), 'utf8').digest('hex')
}

/** What a parked call's hash and sealed input are bound to besides its id: the tool that runs and the call it continues. */
export interface ParkedBinding {
  readonly tool: string
  readonly callId: string
}

/** The prefix of a {@link parkedHash}; a parked row's hash without it was written before the binding (input only). */
export const PARKED_HASH_PREFIX = 'p2.'

/**
 * A parked row's hash: of its id, tool, call id and input together, so that a row given another
 * tool, or another row's input and hash, no longer matches. Keyed (HMAC under `key`, from
 * {@link inputHashKey}) with a store key or an approval secret; else plain SHA-256 of `value`,
 * which the caller redacts. @throws TypeError when the input has no JSON form.
 */
export function parkedHash(key: Uint8Array | undefined, id: string, binding: ParkedBinding, value: unknown): string {
  const text = canonicalJson(['toolwire parked call', id, binding.tool, binding.callId, value])
  const mac = key === undefined ? createHash('sha256') : createHmac('sha256', key)
  return PARKED_HASH_PREFIX + mac.update(text, 'utf8').digest('hex')
}

/** The key of {@link keyedInputHash}, derived from a store key or an approval secret (never the same bytes as either). */
export function inputHashKey(secret: Uint8Array | string): Buffer {
  return createHash('sha256').update('toolwire input hash v1\u0000', 'utf8').update(typeof secret === 'string' ? Buffer.from(secret, 'utf8') : secret).digest()
}

/**
 * One store key, or several newest first (key rotation): the first seals, every one opens.
 * See docs/store.md, "Rotating secrets".
 */
export type StoreKeys = StoreKey | readonly StoreKey[]

const KEY_TEXT = 'a store key is 32 bytes (AES-256), or their base64 or hex text'

/** The 32 bytes of a key. @throws TypeError when it is not 32 bytes (the message never shows the key). */
export function keyBytes(key: StoreKey): Buffer {
  return keyBytesOf(key, undefined)
}

/** {@link keyBytes}, naming `what` (`storeKey[1]`) in its error. */
function keyBytesOf(key: StoreKey, what: string | undefined): Buffer {
  let bytes: Buffer
  if (typeof key === 'string') bytes = /^[0-9a-fA-F]{64}$/.test(key) ? Buffer.from(key, 'hex') : Buffer.from(key, 'base64')
  else if (key instanceof Uint8Array) bytes = Buffer.from(key)
  // no Buffer.from here: Node's own message would print the value
  else throw new TypeError(`toolwire: ${what ?? 'a store key'} must be a string or a Uint8Array`)
  if (bytes.length !== 32) throw new TypeError(what === undefined ? `toolwire: ${KEY_TEXT}` : `toolwire: ${what} is not 32 bytes: ${KEY_TEXT}`)
  return bytes
}

/**
 * The bytes of each key of `keys` (one key, or a non-empty list newest first), checked as
 * {@link keyBytes} checks one: the first seals, all open.
 * @throws TypeError for a key that is not 32 bytes, an empty list or a key listed twice (in
 * any spelling); the message names the key's place (`storeKey[1]`), never the key.
 */
export function storeKeyList(keys: StoreKeys, option = 'storeKey'): readonly Buffer[] {
  if (!Array.isArray(keys)) return [keyBytesOf(keys as StoreKey, undefined)]
  return distinct(
    (keys as readonly StoreKey[]).map((key, i) => keyBytesOf(key, `${option}[${i}]`)),
    option,
    'give at least one key, newest first',
  )
}

/**
 * `list` when it is non-empty and has no two equal entries.
 * @throws TypeError otherwise, naming the places (`approvalSecret[2]`), never the values.
 * @internal
 */
export function distinct(list: readonly Buffer[], option: string, empty: string): readonly Buffer[] {
  if (list.length === 0) throw new TypeError(`toolwire: ${option} is an empty list: ${empty}`)
  for (let i = 1; i < list.length; i++) {
    for (let j = 0; j < i; j++) {
      if (list[i]!.equals(list[j]!)) throw new TypeError(`toolwire: ${option}[${i}] is the same as ${option}[${j}]: list each once`)
    }
  }
  return Object.freeze([...list])
}

/** A sealed input bound to its parked id only (written before the binding; still opened). */
const SEALED = 'tw1.'
/** A sealed input bound to its parked id, tool and call id. */
const SEALED_BOUND = 'tw2.'

/** A parked call's input, as a store keeps it. */
export interface StoredInput {
  /** The input with every sensitive field `'[redacted]'`: what listings, logs and the table show. */
  readonly input: JsonValue
  /** The whole input, AES-256-GCM under the store's key, bound to the parked id (and tool and call id when sealed with a binding); `null` without a key. */
  readonly sealed: string | null
  /** Whether redaction hid anything, so that without `sealed` the real input is lost to other processes. */
  readonly redacted: boolean
}

/**
 * Prepares an input for a store: the redacted copy always; the sealed whole when `key` is
 * given (with a list of keys, newest first, under the first). `sensitive` adds field names to
 * the default rules (`password`, `cc-*`).
 * The ciphertext's associated data is `id` (and, given a `binding`, the tool and call id), so a
 * sealed input moved to another row, or to a row naming another tool or call, does not open.
 */
export function sealInput(id: string, input: unknown, sensitive?: ReadonlySet<string>, key?: StoreKeys, binding?: ParkedBinding): StoredInput {
  const full = canonicalJson(input)
  const shown = redact(input, sensitive)
  const redacted = canonicalJson(shown) !== full
  if (key === undefined) return { input: shown, sealed: null, redacted }
  const iv = randomBytes(12)
  const cipher = createCipheriv('aes-256-gcm', storeKeyList(key)[0]!, iv)
  cipher.setAAD(associatedData(id, binding))
  const body = Buffer.concat([cipher.update(full, 'utf8'), cipher.final()])
  const sealed = (binding === undefined ? SEALED : SEALED_BOUND) + Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url')
  return { input: shown, sealed, redacted }
}

/**
 * The real input of a stored one: opened from `sealed` with `key` (or with whichever key of a
 * list, newest first, sealed it), or the stored copy when nothing was redacted. `undefined`
 * when the input cannot be recovered (redacted and not sealed, or no key given).
 *
 * A sealed input does not say which key sealed it (the format is the same as before key
 * rotation): each key is tried in turn, and a wrong key is told by the GCM tag, so a list of
 * `n` keys costs at most `n` passes over the sealed text.
 * @throws Error when the sealed text was altered, belongs to another id, or no key given opens
 * it, or it was sealed with a binding and `binding` is not the one (the message never shows a
 * key); TypeError when a key is malformed ({@link storeKeyList}).
 */
export function openInput(id: string, stored: StoredInput, key?: StoreKeys, binding?: ParkedBinding): JsonValue | undefined {
  if (stored.sealed !== null && key !== undefined) {
    const keys = storeKeyList(key)
    const bound = stored.sealed.startsWith(SEALED_BOUND)
    if (!bound && !stored.sealed.startsWith(SEALED)) throw new Error('toolwire: a sealed input has an unknown format')
    if (bound && binding === undefined) throw new Error('toolwire: a sealed input is bound to its tool and call, and none was given')
    const aad = associatedData(id, bound ? binding : undefined)
    const raw = Buffer.from(stored.sealed.slice(SEALED.length), 'base64url')
    if (raw.length < 28) throw new Error('toolwire: a sealed input is truncated')
    for (const k of keys) {
      const text = openWith(k, aad, raw)
      if (text !== undefined) return toFrozenJson(JSON.parse(text))
    }
    throw new Error(
      keys.length === 1
        ? 'toolwire: a sealed input does not open: altered, sealed for another id, or with another key'
        : `toolwire: a sealed input opens with none of the ${keys.length} store keys: altered, sealed for another id, or with a key no longer listed`,
    )
  }
  return stored.redacted ? undefined : stored.input
}

/** Whether `stored` was sealed bound to its parked id only (before the tool and call id were bound too). */
export function sealedUnbound(stored: StoredInput): boolean {
  return stored.sealed !== null && stored.sealed.startsWith(SEALED)
}

/** The associated data of a sealed input: its id, or its id, tool and call id. */
function associatedData(id: string, binding: ParkedBinding | undefined): Buffer {
  return Buffer.from(binding === undefined ? id : JSON.stringify([id, binding.tool, binding.callId]), 'utf8')
}

/** The text `raw` (IV, tag, ciphertext) seals under `key` for the associated data `aad`; `undefined` when the tag does not check out. */
function openWith(key: Buffer, aad: Buffer, raw: Buffer): string | undefined {
  const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12))
  decipher.setAAD(aad)
  decipher.setAuthTag(raw.subarray(12, 28))
  const body = decipher.update(raw.subarray(28))
  try {
    return Buffer.concat([body, decipher.final()]).toString('utf8')
  } catch {
    return undefined
  }
}
