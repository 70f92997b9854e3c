import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { attach, AttachError, DEFAULT_ATTACH_MAX_BYTES, detectMimeType, partBytes, sniffMimeType } from '../src/core/attach.js'

const fixtures = join(import.meta.dirname, 'fixtures')
const fixture = (name: string) => join(fixtures, name)

describe('attach: magic-byte detection', () => {
  it.each([
    ['pixel.png', 'image', 'image/png'],
    ['pixel.jpg', 'image', 'image/jpeg'],
    ['pixel.gif', 'image', 'image/gif'],
    ['pixel.webp', 'image', 'image/webp'],
    ['doc.pdf', 'file', 'application/pdf'],
    ['tone.wav', 'audio', 'audio/wav'],
    ['tagged.mp3', 'audio', 'audio/mpeg'],
    ['bare.mp3', 'audio', 'audio/mpeg'],
    ['clip.ogg', 'audio', 'audio/ogg'],
  ] as const)('%s → %s %s', async (name, type, mimeType) => {
    const bytes = readFileSync(fixture(name))
    const part = await attach(fixture(name))
    expect(part).toEqual({ type, mimeType, data: bytes.toString('base64'), name })
    expect(partBytes(part)).toBe(bytes.length)
  })

  it('magic bytes win over a misleading extension', async () => {
    expect((await attach(fixture('really-png.txt'))).mimeType).toBe('image/png')
  })

  it('falls back to the extension, then application/octet-stream', async () => {
    expect(await attach(fixture('notes.txt'))).toMatchObject({ type: 'file', mimeType: 'text/plain', name: 'notes.txt' })
    expect(await attach(fixture('fake.png'))).toMatchObject({ type: 'image', mimeType: 'image/png' })
    expect(await attach(fixture('mystery.bin'))).toMatchObject({ type: 'file', mimeType: 'application/octet-stream' })
  })

  it('does not mistake other 0xFF-prefixed data for MP3 (JPEG, AAC ADTS)', () => {
    expect(sniffMimeType(new Uint8Array([0xff, 0xd8, 0xff, 0xe0]))).toBe('image/jpeg')
    expect(sniffMimeType(new Uint8Array([0xff, 0xf1, 0x50, 0x80]))).toBeUndefined()
    expect(sniffMimeType(new Uint8Array([0xff, 0xfb, 0xf0, 0x00]))).toBeUndefined() // bad bitrate index
    expect(sniffMimeType(new Uint8Array([]))).toBeUndefined()
    expect(detectMimeType(new Uint8Array([1, 2]), 'x.UNKNOWN')).toBe('application/octet-stream')
  })
})

describe('attach: refusals', () => {
  it('refuses files over maxBytes before reading, with a typed error', async () => {
    const err = await attach(fixture('doc.pdf'), { maxBytes: 100 }).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(AttachError)
    expect(err).toMatchObject({ code: 'too_large', size: 216, maxBytes: 100 })
    expect((err as Error).message).toContain('over the 100-byte limit')
    expect(await attach(fixture('doc.pdf'), { maxBytes: 216 })).toMatchObject({ mimeType: 'application/pdf' })
  })

  it('defaults to 20 MiB', async () => {
    expect(DEFAULT_ATTACH_MAX_BYTES).toBe(20 * 1024 * 1024)
    const dir = mkdtempSync(join(tmpdir(), 'toolwire-attach-'))
    const big = join(dir, 'big.bin')
    writeFileSync(big, Buffer.alloc(0))
    const { truncateSync } = await import('node:fs')
    truncateSync(big, DEFAULT_ATTACH_MAX_BYTES + 1) // sparse: nothing is written or read
    await expect(attach(big)).rejects.toMatchObject({ code: 'too_large' })
  })

  it('not_found and not_a_file', async () => {
    await expect(attach(fixture('missing.png'))).rejects.toMatchObject({ name: 'AttachError', code: 'not_found' })
    await expect(attach(fixtures)).rejects.toMatchObject({ name: 'AttachError', code: 'not_a_file' })
  })

  it.skipIf(process.platform === 'win32')('a FIFO with no writer is not_a_file at once: opening it never waits for one', async () => {
    const { execFileSync } = await import('node:child_process')
    const fifo = join(mkdtempSync(join(tmpdir(), 'attach-fifo-')), 'pipe')
    execFileSync('mkfifo', [fifo])
    await expect(attach(fifo)).rejects.toMatchObject({ name: 'AttachError', code: 'not_a_file' })
  })
})

describe('partBytes', () => {
  it('computes the decoded length from base64 length and padding', () => {
    for (let n = 0; n < 20; n++) {
      const data = Buffer.alloc(n, 7).toString('base64')
      expect(partBytes({ type: 'file', mimeType: 'application/octet-stream', data })).toBe(n)
      // unpadded base64 too
      expect(partBytes({ type: 'file', mimeType: 'application/octet-stream', data: data.replace(/=+$/, '') })).toBe(n)
    }
  })

  it('is undefined for URL parts', () => {
    expect(partBytes({ type: 'image', mimeType: 'image/png', url: 'https://example.com/a.png' })).toBeUndefined()
  })
})
