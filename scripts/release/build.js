#!/usr/bin/env node
// Builds the release addon for one target into artifacts/ and checks the file's header.
//
//   node scripts/release/build.js <rust target triple> [--out <dir>]
//
// A Linux target other than the host's is cross-compiled with zig (`napi build -x`, which
// runs cargo-zigbuild; `pip install ziglang cargo-zigbuild` provides both). macOS builds
// both of its targets natively on either Mac; Windows builds on Windows.
'use strict'
const { spawnSync } = require('node:child_process')
const { mkdirSync } = require('node:fs')
const { join } = require('node:path')
const { check } = require('./check-binary.js')
const { binaryName, hostTarget, root, targets } = require('./targets.js')

function main(argv) {
  const target = argv[0]
  const outAt = argv.indexOf('--out')
  const out = outAt >= 0 ? argv[outAt + 1] : join(root, 'artifacts')
  if (!target || (outAt >= 0 && !out)) {
    console.error('usage: build.js <rust target triple> [--out <dir>]')
    return 2
  }
  if (!targets.includes(target)) {
    console.error(`build: ${target} is not a release target (package.json napi.targets: ${targets.join(', ')})`)
    return 2
  }
  const host = hostTarget()
  const cross = target !== host && target.includes('-linux-') && host.includes('-linux-')
  mkdirSync(out, { recursive: true })
  const args = ['napi', 'build', '--platform', '--release', '--no-js', '--target', target, '--output-dir', out]
  if (cross) args.push('--cross-compile')
  console.log(`build: ${target}${cross ? ` (cross-compiled from ${host} with zig)` : ''}`)
  const r = spawnSync(process.platform === 'win32' ? 'npx.cmd' : 'npx', args, { cwd: root, stdio: 'inherit', shell: process.platform === 'win32' })
  if (r.status !== 0) return r.status || 1
  const file = join(out, binaryName(target))
  const problem = check(file, target)
  if (problem) {
    console.error(`build: ${problem}`)
    return 1
  }
  console.log(`build: ${file} checked: a ${target} shared library`)
  return 0
}

process.exitCode = main(process.argv.slice(2))
