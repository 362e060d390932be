#!/usr/bin/env node
// Runs the vitest suites on a release artifact: places `artifacts/<binary>` (or the file
// given) next to index.js, where the loader finds a local build, checks its header and
// that it loads, then runs every suite against it. The release workflow's test job calls
// this on each platform with the binary its build job uploaded.
//
//   node scripts/release/test-binary.js [<file.node>]
'use strict'
const { spawnSync } = require('node:child_process')
const { copyFileSync, existsSync } = require('node:fs')
const { join, resolve } = require('node:path')
const { check } = require('./check-binary.js')
const { binaryName, hostTarget, root } = require('./targets.js')

function main(argv) {
  const target = hostTarget()
  const name = binaryName(target)
  const file = resolve(argv[0] || join(root, 'artifacts', name))
  if (!existsSync(file)) {
    console.error(`test-binary: ${file} does not exist (build it with scripts/release/build.js ${target})`)
    return 2
  }
  const problem = check(file, target)
  if (problem) {
    console.error(`test-binary: ${problem}`)
    return 1
  }
  const placed = join(root, name)
  if (resolve(placed) !== file) copyFileSync(file, placed)
  const load = spawnSync(process.execPath, ['-e', "console.log(Object.keys(require('./index.js')).length + ' exports')"], { cwd: root, encoding: 'utf8' })
  if (load.status !== 0) {
    console.error(`test-binary: ${name} does not load:\n${load.stderr}`)
    return 1
  }
  console.log(`test-binary: ${name} loads (${load.stdout.trim()}); running the vitest suites on it`)
  const vitest = spawnSync(process.execPath, [join(root, 'node_modules', 'vitest', 'vitest.mjs'), 'run'], { cwd: root, stdio: 'inherit' })
  return vitest.status ?? 1
}

process.exitCode = main(process.argv.slice(2))
