// Checks that every relative link in README.md, CHANGELOG.md and docs/*.md points at a file that
// exists and, when it names a heading (`page.md#anchor`), at a heading that exists (GitHub's
// anchor rules). Exits 1 and lists the broken links.
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'

const root = join(import.meta.dirname, '..')
const pages = ['README.md', 'CHANGELOG.md', ...readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)]

/** GitHub's heading anchor: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
function anchors(text) {
  const seen = new Map()
  const out = new Set()
  let fenced = false
  for (const line of text.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced
    const m = !fenced && /^#{1,6} (.*)$/.exec(line)
    if (!m) continue
    const base = m[1].trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-')
    const n = seen.get(base) ?? 0
    seen.set(base, n + 1)
    out.add(n ? `${base}-${n}` : base)
  }
  return out
}

const broken = []
for (const page of pages) {
  const path = join(root, page)
  if (!existsSync(path)) continue
  const text = readFileSync(path, 'utf8').replace(/```[\s\S]*?```/g, '')
  for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
    if (/^[a-z]+:/i.test(target)) continue // http:, https:, mailto:
    const [file, anchor] = target.split('#')
    const dest = file ? join(dirname(path), file) : path
    if (!existsSync(dest)) broken.push(`${page}: ${target} (no such file)`)
    else if (anchor && dest.endsWith('.md') && !anchors(readFileSync(dest, 'utf8')).has(anchor))
      broken.push(`${page}: ${target} (no heading #${anchor} in ${relative(root, dest)})`)
  }
}
if (broken.length) {
  console.error(`broken links:\n  ${broken.join('\n  ')}`)
  process.exit(1)
}
console.log(`docs: ${pages.length} pages, every relative link resolves`)
