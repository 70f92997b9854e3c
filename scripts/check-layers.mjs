// Checks docs/development.md's layer rule: a folder of src/ imports only from itself and the
// folders above it (core, render, observe, runtime, mcp, integrations, demo); the files at
// src/'s top (the entries and the CLI) may import any folder. Type-only imports count too.
// Run by `npm run check:cycles`; exits 1 naming each import that goes down.
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve, sep } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', 'src')
const LAYERS = ['core', 'render', 'observe', 'runtime', 'mcp', 'integrations', 'demo']

/** The layer index of a file under src/ (the top-level files come after every folder). */
function layerOf(file) {
  const first = relative(root, file).split(sep)[0]
  const i = LAYERS.indexOf(first)
  if (i < 0 && first.endsWith('.ts')) return LAYERS.length
  if (i < 0) throw new Error(`check-layers: src/${first} is in no layer of docs/development.md`)
  return i
}

function* files(dir) {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name)
    if (e.isDirectory()) yield* files(p)
    else if (e.name.endsWith('.ts')) yield p
  }
}

// static imports and re-exports (`from '...'`), and dynamic `import('...')`
const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s*)['"](\.{1,2}\/[^'"]+)['"]/gm
const wrong = []
for (const file of files(root)) {
  const text = readFileSync(file, 'utf8')
  const mine = layerOf(file)
  for (const m of text.matchAll(SPECIFIER)) {
    const target = resolve(dirname(file), m[1])
    if (!target.startsWith(root + sep)) continue
    const theirs = layerOf(target.replace(/\.js$/, '.ts'))
    if (theirs > mine) wrong.push(`src/${relative(root, file)} imports ${m[1]} (${LAYERS[theirs] ?? 'the top level'} is below ${LAYERS[mine] ?? 'the top level'})`)
  }
}
if (wrong.length > 0) {
  console.error(`check-layers: ${wrong.length} import(s) go down the layers of docs/development.md:\n  ${wrong.join('\n  ')}`)
  process.exit(1)
}
console.log('layers: every import in src/ goes to its own folder or one above it')
