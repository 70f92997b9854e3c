/**
 * `attach(path)`: reads a file into a content part, its MIME type detected from the
 * file's magic bytes (the extension is only a fallback). `partBytes(part)` gives a
 * part's decoded size without decoding it.
 */
import { constants } from 'node:fs'
import { open } from 'node:fs/promises'
import { basename, extname } from 'node:path'
import type { ContentPart } from './types.js'

export { partBytes } from './part-bytes.js'

/** The default largest file `attach` reads: 20 MiB. */
export const DEFAULT_ATTACH_MAX_BYTES = 20 * 1024 * 1024

/** Why `attach` refused a path. */
export type AttachErrorCode = 'too_large' | 'not_found' | 'not_a_file' | 'unreadable'

/** A file `attach` would not or could not read. `code` says why; `path` is the path given. */
export class AttachError extends Error {
  override name = 'AttachError'
  constructor(
    readonly code: AttachErrorCode,
    message: string,
    readonly path: string,
    readonly size?: number,
    readonly maxBytes?: number,
  ) {
    super(message)
  }
}

/** Options of `attach`. */
export interface AttachOptions {
  /** The largest file to read, in bytes (default 20 MiB). Larger files are refused with code `too_large`. */
  readonly maxBytes?: number
}

/** A content part made by `attach`: always base64 `data` and the file's basename. */
export interface AttachedPart extends ContentPart {
  readonly data: string
  readonly name: string
}

const EXTENSIONS: Readonly<Record<string, string>> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  svg: 'image/svg+xml',
  bmp: 'image/bmp',
  pdf: 'application/pdf',
  wav: 'audio/wav',
  mp3: 'audio/mpeg',
  ogg: 'audio/ogg',
  oga: 'audio/ogg',
  opus: 'audio/ogg',
  flac: 'audio/flac',
  m4a: 'audio/mp4',
  txt: 'text/plain',
  md: 'text/markdown',
  csv: 'text/csv',
  html: 'text/html',
  json: 'application/json',
}

function ascii(bytes: Uint8Array, offset: number, text: string): boolean {
  if (bytes.length < offset + text.length) return false
  for (let i = 0; i < text.length; i++) if (bytes[offset + i] !== text.charCodeAt(i)) return false
  return true
}

/** An MPEG audio frame header (MPEG 1/2/2.5, layers I–III), as MP3 files without an ID3 tag start. */
function isMpegFrame(b: Uint8Array): boolean {
  if (b.length < 4 || b[0] !== 0xff) return false
  const b1 = b[1]!
  const b2 = b[2]!
  if ((b1 & 0xe0) !== 0xe0) return false // 11 sync bits
  if (((b1 >> 3) & 0x03) === 0x01) return false // reserved version
  if (((b1 >> 1) & 0x03) === 0x00) return false // reserved layer (also rules out AAC ADTS)
  if (b2 >> 4 === 0x0f) return false // bad bitrate index
  if (((b2 >> 2) & 0x03) === 0x03) return false // reserved sample rate
  return true
}

/**
 * The MIME type of `bytes` from their magic numbers: PNG, JPEG, GIF, WebP, PDF, WAV,
 * MP3 (ID3 tag or frame sync), OGG and FLAC; `undefined` when none matches.
 */
export function sniffMimeType(bytes: Uint8Array): string | undefined {
  const b = bytes
  if (b.length >= 8 && b[0] === 0x89 && ascii(b, 1, 'PNG\r\n\x1a\n')) return 'image/png'
  if (b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return 'image/jpeg'
  if (ascii(b, 0, 'GIF87a') || ascii(b, 0, 'GIF89a')) return 'image/gif'
  if (ascii(b, 0, 'RIFF') && ascii(b, 8, 'WEBP')) return 'image/webp'
  if (ascii(b, 0, 'RIFF') && ascii(b, 8, 'WAVE')) return 'audio/wav'
  if (ascii(b, 0, '%PDF-')) return 'application/pdf'
  if (ascii(b, 0, 'OggS')) return 'audio/ogg'
  if (ascii(b, 0, 'fLaC')) return 'audio/flac'
  if (ascii(b, 0, 'ID3') || isMpegFrame(b)) return 'audio/mpeg'
  return undefined
}

/** The MIME type of a file: magic bytes first, then the extension, else `application/octet-stream`. */
export function detectMimeType(bytes: Uint8Array, path: string): string {
  return sniffMimeType(bytes) ?? EXTENSIONS[extname(path).slice(1).toLowerCase()] ?? 'application/octet-stream'
}

function partType(mimeType: string): ContentPart['type'] {
  if (mimeType.startsWith('image/')) return 'image'
  if (mimeType.startsWith('audio/')) return 'audio'
  return 'file'
}

function tooLarge(path: string, size: number, maxBytes: number): AttachError {
  return new AttachError('too_large', `${path} is ${size} bytes, over the ${maxBytes}-byte limit`, path, size, maxBytes)
}

/**
 * Reads the file at `path` into a content part `{ type, mimeType, data, name }`.
 * The size is checked with `stat` before anything is read.
 *
 * @throws AttachError with code `not_found`, `not_a_file`, `too_large` (over
 * `maxBytes`, default 20 MiB) or `unreadable`.
 * @example
 * const part = await attach('shot.png') // { type: 'image', mimeType: 'image/png', data: 'iVBOR…', name: 'shot.png' }
 */
export async function attach(path: string, options: AttachOptions = {}): Promise<AttachedPart> {
  if (typeof path !== 'string' || path.length === 0) throw new TypeError('toolwire: attach(path) takes a non-empty path')
  const maxBytes = options.maxBytes ?? DEFAULT_ATTACH_MAX_BYTES
  if (!(Number.isInteger(maxBytes) && maxBytes >= 0)) throw new TypeError('toolwire: attach maxBytes must be a non-negative integer')
  let handle: Awaited<ReturnType<typeof open>>
  try {
    // non-blocking, so that opening a FIFO (or a device) for reading never waits for a writer:
    // what is not a regular file is refused below, before anything is read
    handle = await open(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0))
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    if (code === 'ENOENT' || code === 'ENOTDIR') throw new AttachError('not_found', `${path} does not exist`, path)
    if (code === 'EISDIR') throw new AttachError('not_a_file', `${path} is not a regular file`, path)
    throw new AttachError('unreadable', `${path} cannot be read (${code ?? 'unknown error'})`, path)
  }
  try {
    const stat = await handle.stat()
    if (!stat.isFile()) throw new AttachError('not_a_file', `${path} is not a regular file`, path)
    if (stat.size > maxBytes) throw tooLarge(path, stat.size, maxBytes)
    // read at most maxBytes + 1, so a file that grew after stat is still refused
    const buffer = Buffer.allocUnsafe(Math.min(stat.size, maxBytes) + 1)
    let length = 0
    for (;;) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length)
      if (bytesRead === 0) break
      length += bytesRead
      if (length === buffer.length) {
        if (length > maxBytes) throw tooLarge(path, length, maxBytes)
        throw new AttachError('unreadable', `${path} grew while it was being read`, path)
      }
    }
    const bytes = buffer.subarray(0, length)
    const mimeType = detectMimeType(bytes, path)
    return Object.freeze({ type: partType(mimeType), mimeType, data: bytes.toString('base64'), name: basename(path) })
  } catch (err) {
    if (err instanceof AttachError) throw err
    throw new AttachError('unreadable', `${path} cannot be read (${(err as NodeJS.ErrnoException).code ?? 'unknown error'})`, path)
  } finally {
    await handle.close()
  }
}
