// passwordsOf (src/core/passwords.ts): the one owner of "which texts of a connection string are
// passwords", used by the CLI's stderr redaction and the PostgreSQL store's open errors (review #21).
import { describe, expect, it } from 'vitest'
import { passwordsOf } from '../src/core/passwords.js'
import { givenSecrets, redactSecrets } from '../src/cli-redact.js'

describe('passwordsOf', () => {
  it("a URL's password, raw and percent-decoded", () => {
    expect(passwordsOf('postgres://ann:p%40ss@db:5432/app')).toEqual(['p%40ss', 'p@ss'])
  })

  it('a URL that does not parse still gives the text between the user colon and the @', () => {
    expect(passwordsOf('postgresql+asyncpg://u:pw here@db:bad-port/x')).toContain('pw here')
  })

  it('a password= parameter: in a URL query, and in a key=value string, every one of them', () => {
    expect(passwordsOf('postgres://db/app?sslmode=require&password=q%26w')).toEqual(expect.arrayContaining(['q&w']))
    expect(passwordsOf('host=db password=kw-secret user=ann')).toEqual(['kw-secret'])
    expect(passwordsOf('password=first host=db password=second')).toEqual(['first', 'second'])
  })

  it("a quoted key=value password (libpq's form for one with spaces or quotes), with and without its quotes", () => {
    const found = passwordsOf("host=db password='a b\\'c' user=ann")
    expect(found).toContain("a b'c")
    expect(found).toContain("'a b\\'c'")
  })

  it('none when the text holds no password, or an empty one', () => {
    expect(passwordsOf('postgres://ann@db/app')).toEqual([])
    expect(passwordsOf('host=db user=ann')).toEqual([])
    expect(passwordsOf('postgres://ann:@db/app?password=')).toEqual([])
    expect(passwordsOf('')).toEqual([])
  })

  it('a malformed percent-encoding is kept raw', () => {
    expect(passwordsOf('postgres://ann:100%zz@db/app')).toEqual(['100%zz'])
  })
})

describe('the CLI redacts what passwordsOf finds', () => {
  it('a quoted key=value --store password with a space never shows, nor either of its words', () => {
    const secrets = givenSecrets(['serve', '--store', "host=db password='correct horse' user=ann"], {})
    const shown = redactSecrets("cannot open host=db password='correct horse' user=ann", secrets)
    expect(shown).not.toContain('correct horse')
    expect(shown).toBe('cannot open host=db password=*** user=ann')
  })
})
