#!/usr/bin/env node
// The package's command line.
//
//   npx context-engine build   compile the native addon from source (needs Rust), for a
//                              platform without a prebuilt binary
'use strict'
const { spawnSync } = require('node:child_process')
const { join } = require('node:path')

const USAGE = `usage: context-engine <command>

commands:
  build    compile the native addon from source with cargo (Rust from https://rustup.rs),
           for a platform that has no prebuilt package; the addon is placed next to the
           package's index.js, where the loader finds it`

function main(argv) {
  const [command, ...rest] = argv
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
    console.log(USAGE)
    return 0
  }
  if (command === 'build') {
    if (rest.length > 0) {
      console.error(`context-engine build: unexpected argument ${JSON.stringify(rest[0])} (it takes none)`)
      return 2
    }
    const r = spawnSync(process.execPath, [join(__dirname, '..', 'scripts', 'install.js'), '--force'], { stdio: 'inherit' })
    return r.status ?? 1
  }
  console.error(`context-engine: unknown command ${JSON.stringify(command)}\n\n${USAGE}`)
  return 2
}

process.exitCode = main(process.argv.slice(2))
