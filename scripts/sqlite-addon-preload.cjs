// Preloaded (NODE_OPTIONS=--require) by `npm run test:node-matrix` into every process of a run on a
// Node.js major other than the one `npm install` compiled better-sqlite3 for: wherever
// better-sqlite3 loads its addon (better_sqlite3.node), the one compiled for this major
// (TOOLWIRE_SQLITE_ADDON, scripts/sqlite-addon.mjs) loads instead. Nothing else changes.
'use strict'
const { basename } = require('node:path')

const addon = process.env.TOOLWIRE_SQLITE_ADDON
if (addon) {
  const dlopen = process.dlopen
  process.dlopen = function (module, filename, ...rest) {
    return dlopen.call(this, module, basename(String(filename)) === 'better_sqlite3.node' ? addon : filename, ...rest)
  }
}
