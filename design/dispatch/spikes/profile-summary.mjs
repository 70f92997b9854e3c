#!/usr/bin/env node
// Self time per function (and per file) of a V8 .cpuprofile, top N: node profile-summary.mjs <file.cpuprofile> [N]
import { readFileSync } from 'node:fs'

const [file, top = '25'] = process.argv.slice(2)
const prof = JSON.parse(readFileSync(file, 'utf8'))
const byId = new Map(prof.nodes.map((n) => [n.id, n]))
const self = new Map()
const dt = prof.timeDeltas
let total = 0
for (let i = 0; i < prof.samples.length; i++) {
  const n = byId.get(prof.samples[i])
  const d = dt[i] ?? 0
  total += d
  const cf = n.callFrame
  const key = `${cf.functionName || '(anonymous)'} ${cf.url.split('/').slice(-1)[0]}:${cf.lineNumber + 1}`
  self.set(key, (self.get(key) ?? 0) + d)
}
const rows = [...self].sort((a, b) => b[1] - a[1]).slice(0, Number(top))
for (const [k, v] of rows) console.log(`${((100 * v) / total).toFixed(1).padStart(5)}%  ${k}`)
