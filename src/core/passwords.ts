/**
 * The passwords a connection string or address holds, so that a message about it can leave
 * them out: one owner for the CLI's stderr and the PostgreSQL store's errors.
 */

/** `scheme://user:password@`: the password part, read without parsing the URL. */
const URL_PASSWORD = /^[a-z][a-z0-9+.-]*:\/\/[^:/@]*:([^@]*)@/i
/** A `password=` parameter, of a URL's query or of a `key=value` string (`host=db password=x`), quoted or not. */
const PASSWORD_PARAM = /(?:^|[\s?&])password\s*=\s*('(?:[^'\\]|\\.)*'?|[^&\s]*)/gi

/**
 * Every text of `value` that could be a password, each raw and percent-decoded: a URL's
 * password (parsed, and read from `user:password@` when the URL does not parse), and every
 * `password=` parameter's value (in a URL's query or a `key=value` connection string, quoted
 * or not). Empty when it holds none.
 */
export function passwordsOf(value: string): string[] {
  const found = new Set<string>()
  const add = (text: string | null | undefined): void => {
    if (text === null || text === undefined || text.length === 0) return
    found.add(text)
    try {
      found.add(decodeURIComponent(text))
    } catch {
      // not percent-encoded text: the raw form is enough
    }
  }
  try {
    const url = new URL(value)
    add(url.password)
    for (const p of url.searchParams.getAll('password')) add(p)
  } catch {
    // not a URL: the patterns below still find its parts
  }
  add(URL_PASSWORD.exec(value)?.[1])
  for (const m of value.matchAll(PASSWORD_PARAM)) {
    const raw = m[1]!
    add(raw)
    if (raw.startsWith("'")) add(raw.replace(/^'|'$/g, '').replace(/\\(.)/g, '$1'))
  }
  return [...found]
}
