#!/usr/bin/env node
// The package's command line.
//
//   npx context-engine inspect <input>  what the model would get for a message of your
//                                       own channel (see `inspect --help`)
//   npx context-engine build            compile the native addon from source (needs Rust),
//                                       for a platform without a prebuilt binary
'use strict'
const { spawnSync } = require('node:child_process')
const { join } = require('node:path')

const USAGE = `usage: context-engine <command>

commands:
  inspect  what buildContext gives for one message of a Slack export, a file of Web API
           bodies or a JSONL of Events API payloads (context-engine inspect --help)
  build    compile the native addon from source with cargo (Rust from https://rustup.rs),
           for a platform that has no prebuilt package; the addon is placed next to the
           package's index.js, where the loader finds it`

async function main(argv) {
  const [command, ...rest] = argv
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
    console.log(USAGE)
    return 0
  }
  if (command === 'inspect') {
    // Loaded here, so that `build` works where no addon loads yet.
    return require('./inspect.js').run(rest, require('..'))
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

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code
  },
  (err) => {
    console.error(`context-engine: ${err && err.stack ? err.stack : err}`)
    process.exitCode = 1
  },
)
