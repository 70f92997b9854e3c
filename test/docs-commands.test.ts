// The install commands in README.md and docs/ do what they say when pasted: every argument of an
// `npm install` that names a file or folder is one npm reads as a path. npm reads `a/b` (no `./`,
// `../` or `/` in front) as the GitHub repository `github:a/b`: `npm install pack/*.tgz` fails.
import { execFileSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'

const root = join(import.meta.dirname, '..')
const pages = ['README.md', ...readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)]

/** Every `npm install` / `npm i` / `npm add` command in a page's code (fenced blocks and inline spans), with its arguments. */
function installCommands(text: string): string[][] {
  const code = [...text.matchAll(/```[^\n]*\n([\s\S]*?)```/g)].map((m) => m[1]!)
  const prose = text.replace(/```[\s\S]*?```/g, '')
  code.push(...[...prose.matchAll(/`([^`]+)`/g)].map((m) => m[1]!.replace(/\s+/g, ' ')))
  const commands: string[][] = []
  for (const snippet of code) {
    for (const line of snippet.split(/\n|&&|;|\|/)) {
      const words = line.replace(/#.*$/, '').trim().split(/\s+/)
      const at = words.findIndex((w, i) => w === 'npm' && ['install', 'i', 'add'].includes(words[i + 1] ?? ''))
      if (at >= 0) commands.push(words.slice(at + 2).filter((w) => w !== '' && !w.startsWith('-')))
    }
  }
  return commands
}

/**
 * How npm reads an install argument, by npm's own rule (npm-package-arg): a path when it starts
 * with `/`, `./`, `../` or `~/` (or `file:`), a URL or git spec by its protocol, a scoped name
 * `@scope/name`, else a name with a slash is a GitHub `owner/repo` and anything else a registry name.
 */
function readAs(arg: string): 'path' | 'url' | 'registry' | 'github' {
  if (/^(\/|\.{1,2}\/|~\/|file:)/.test(arg)) return 'path'
  if (/^[a-z+]+:/i.test(arg)) return 'url'
  if (/^@[^/]+\/[^/]+$/.test(arg)) return 'registry'
  return arg.includes('/') ? 'github' : 'registry'
}

/** npm's own parser, from the npm that runs the tests, when it can be found. */
function npmPackageArg(): ((arg: string) => { type: string }) | undefined {
  try {
    const npmRoot = execFileSync('npm', ['root', '-g'], { encoding: 'utf8' }).trim()
    const dir = join(npmRoot, 'npm', 'node_modules', 'npm-package-arg')
    return existsSync(dir) ? (createRequire(join(dir, 'package.json'))(dir) as (arg: string) => { type: string }) : undefined
  } catch {
    return undefined
  }
}

describe('install commands in the docs', () => {
  it('name every file to install as a path (./, ../ or /), never as a GitHub owner/repo', () => {
    const misread: string[] = []
    let seen = 0
    for (const page of pages) {
      for (const args of installCommands(readFileSync(join(root, page), 'utf8'))) {
        seen++
        for (const arg of args) if (readAs(arg) === 'github') misread.push(`${page}: npm install ${args.join(' ')} (npm reads '${arg}' as github:${arg})`)
      }
    }
    expect(seen).toBeGreaterThan(0)
    expect(misread).toEqual([])
  })

  it("the rule above is npm's own (npm-package-arg of the npm running the tests)", () => {
    const npa = npmPackageArg()
    if (npa === undefined) {
      if (process.env.CI === 'true') throw new Error("npm's npm-package-arg not found under `npm root -g`; CI=true requires it")
      console.warn("SKIP: npm's npm-package-arg not found under `npm root -g`: the rule is not cross-checked here")
      return
    }
    const npmType = { path: ['file', 'directory'], url: ['remote', 'git'], registry: ['tag', 'range', 'version'], github: ['git'] }
    for (const arg of ['pack/toolwire-0.1.0.tgz', './pack/toolwire-0.1.0.tgz', '../toolwire/pack/toolwire-0.1.0.tgz', '/tmp/toolwire/pack/toolwire-0.1.0.tgz', 'better-sqlite3', '@types/json-schema', 'toolwire']) {
      expect({ arg, type: npmType[readAs(arg)].includes(npa(arg).type) }).toEqual({ arg, type: true })
    }
  })
})
