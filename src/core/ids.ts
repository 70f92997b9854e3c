/**
 * Random ids for handles that act as bearer secrets (confirmation and suspension ids,
 * approval links): 128 random bits, base64url, from the platform's CSPRNG.
 *
 * ```ts
 * randomId()        // 'm1H0q3x3s2G9bK9l2gqB3w' (22 characters)
 * randomId('conf_') // 'conf_' + 22 characters
 * ```
 */
export function randomId(prefix = ''): string {
  const bytes = globalThis.crypto.getRandomValues(new Uint8Array(16))
  return prefix + Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64url')
}
