#!/usr/bin/env node
// Bundles the spike from this checkout's src/ with esbuild (node_modules/.bin/esbuild) and runs it.
//   node design/dispatch/spikes/run.mjs [spike] [rounds] [flags]   (spike: walk-vs-closure (default) or sqlite-floor)
// The bundle goes to design/dispatch/.build/ (ignored by git): the native binding is found from there.
import { execFileSync } from 'node:child_process'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const here = dirname(fileURLToPath(import.meta.url))
const root = join(here, '..', '..', '..')
const args = process.argv.slice(2)
const spike = args[0] !== undefined && /^[a-z-]+$/.test(args[0]) ? args.shift() : 'walk-vs-closure'
const out = join(here, '..', '.build', `${spike}.mjs`)
execFileSync(join(root, 'node_modules', '.bin', 'esbuild'), [
  join(here, `${spike}.ts`), '--bundle', '--platform=node', '--format=esm', '--target=node20',
  `--outfile=${out}`, '--packages=external', '--log-level=warning',
], { stdio: 'inherit' })
execFileSync(process.execPath, [out, ...args], { stdio: 'inherit' })
