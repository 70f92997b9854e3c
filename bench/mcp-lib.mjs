// Helpers the MCP benches share (bench/mcp-http.mjs, bench/mcp-modern.mjs, bench/auth.mjs).
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/** A temp dir holding `echo.mjs`, the one-tool module every MCP bench serves; `{ dir, module }`. */
export function echoModule() {
  const dir = mkdtempSync(join(tmpdir(), 'toolwire-bench-mcp-'))
  const module = join(dir, 'echo.mjs')
  writeFileSync(
    module,
    `export default [{
  name: 'echo',
  description: 'Echoes its text',
  inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false },
  run: ({ text }) => ({ text }),
}]
`,
  )
  return { dir, module }
}

/** The value after `--<name>` on the command line, or `fallback`. */
export const option = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`)
  return i === -1 ? fallback : process.argv[i + 1]
}

export const freePort = () =>
  new Promise((resolve) => {
    const s = createServer()
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address()
      s.close(() => resolve(port))
    })
  })

/** CPU time a process used so far, in µs (user + system), or NaN where /proc is not there. */
export const cpuOf = (pid) => {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
    return ((Number(fields[11]) + Number(fields[12])) * 1e6) / 100
  } catch {
    return Number.NaN
  }
}

export const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length % 2 === 1 ? s[m] : (s[m - 1] + s[m]) / 2
}

/**
 * Starts `toolwire serve <module> --http` from `cli` (plus `extra` arguments, `nodeArgs` for
 * node itself); resolves `{ child, url }` once it prints its address.
 */
export async function serveToolwireHttp(cli, module, extra = [], nodeArgs = []) {
  const port = await freePort()
  const child = spawn(process.execPath, [...nodeArgs, cli, 'serve', module, '--http', `127.0.0.1:${port}`, ...extra], { stdio: ['ignore', 'ignore', 'pipe'] })
  await new Promise((resolve, reject) => {
    let err = ''
    child.stderr.on('data', (chunk) => {
      err += chunk
      if (err.includes(' at http://')) resolve()
    })
    child.once('exit', (code) => reject(new Error(`serve exited (${code}): ${err}`)))
  })
  return { child, url: `http://127.0.0.1:${port}/mcp` }
}
