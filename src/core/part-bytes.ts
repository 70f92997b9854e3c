/** The decoded size of a content part, without decoding it (`attach` and the model view both ask). */
import type { ContentPart } from './types.js'

/** The decoded byte length of a base64 part, computed from its length and padding; `undefined` for a URL part. */
export function partBytes(part: ContentPart): number | undefined {
  const data = part.data
  if (data === undefined) return undefined
  let end = data.length
  while (end > 0 && isSpace(data.charCodeAt(end - 1))) end--
  let pad = 0
  while (pad < 2 && end > 0 && data.charCodeAt(end - 1) === 61 /* = */) {
    end--
    pad++
  }
  return Math.floor((end * 3) / 4)
}

function isSpace(c: number): boolean {
  return c === 32 || c === 10 || c === 13 || c === 9
}
