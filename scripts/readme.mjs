// Writes README.md from docs/README.template.md, replacing each
// `<!-- include docs/x.md -->` with that file (headings shifted under the README's own).
// `node scripts/readme.mjs --check` exits 1 when README.md is stale.
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

const root = join(import.meta.dirname, '..')
const template = readFileSync(join(root, 'docs/README.template.md'), 'utf8')
const readme = template.replace(/<!-- include (docs\/[\w.-]+\.md) -->/g, (_, file) => {
  let text = readFileSync(join(root, file), 'utf8').trim()
  // a part's top-level "# Title" becomes a "## Title" section
  if (text.startsWith('# ')) text = text.replace(/^(#+) /gm, '#$1 ')
  return text
})
if (process.argv.includes('--check')) {
  if (readFileSync(join(root, 'README.md'), 'utf8') !== readme) {
    console.error('README.md is stale: run node scripts/readme.mjs')
    process.exit(1)
  }
} else {
  writeFileSync(join(root, 'README.md'), readme)
}
