/**
 * The AEAD both of the MCP layer's sealed tokens use: the confirmation page's `p1.` links
 * (confirm-page.ts) and the `requestState` of multi-round-trip requests (request-state.ts).
 * AES-256-GCM with a random 96-bit IV; the sealed bytes are IV, ciphertext, then the 16-byte
 * tag. Each caller derives its own key and passes associated data naming its format, so a
 * token of one kind never opens as the other. No MCP SDK import.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto'

const IV_BYTES = 12
const TAG_BYTES = 16
/** The fewest bytes a sealed value has: its IV and tag around at least one byte. */
export const SEALED_MIN_BYTES = IV_BYTES + TAG_BYTES + 1

/** `plain` sealed under `key` (32 bytes) for `aad`: IV, ciphertext, tag. */
export function sealBytes(key: Buffer, aad: Buffer, plain: Buffer): Buffer {
  const iv = randomBytes(IV_BYTES)
  const cipher = createCipheriv('aes-256-gcm', key, iv)
  cipher.setAAD(aad)
  return Buffer.concat([iv, cipher.update(plain), cipher.final(), cipher.getAuthTag()])
}

/** The plain bytes `raw` (from {@link sealBytes}) seals under `key` for `aad`; `undefined` when the tag does not check out. */
export function openBytes(key: Buffer, aad: Buffer, raw: Buffer): Buffer | undefined {
  if (raw.length < SEALED_MIN_BYTES) return undefined
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, IV_BYTES))
    decipher.setAAD(aad)
    decipher.setAuthTag(raw.subarray(raw.length - TAG_BYTES))
    return Buffer.concat([decipher.update(raw.subarray(IV_BYTES, raw.length - TAG_BYTES)), decipher.final()])
  } catch {
    return undefined
  }
}
