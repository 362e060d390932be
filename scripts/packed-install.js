#!/usr/bin/env node
// Installs the packed package into a fresh consumer project as a user on a platform without
// a prebuilt binary would (`npm pack`, `npm install <tarball>`, then `npx context-engine
// build`). Checks that installing runs no build (the package has no install script), that
// the source build left no cargo `target/` inside the consumer's node_modules, that the
// tarball holds a LICENSE and no Rust test files, and that both `require` and native ESM
// `import` of every export work there. Run by .ci/run.
'use strict'
const { execFileSync, spawnSync } = require('node:child_process')
const { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } = require('node:fs')
const { tmpdir } = require('node:os')
const { join } = require('node:path')

const root = join(__dirname, '..')
const work = mkdtempSync(join(tmpdir(), 'context-engine-packed-'))
const fail = (msg) => {
  console.error(`packed-install: ${msg}`)
  process.exit(1)
}
try {
  const packed = JSON.parse(execFileSync('npm', ['pack', '--json', '--pack-destination', work], { cwd: root, encoding: 'utf8' }))[0]
  const names = packed.files.map((f) => f.path)
  if (!names.includes('LICENSE')) fail('the tarball has no LICENSE')
  const tests = names.filter((n) => /(^|\/)tests(\.rs$|\/)/.test(n))
  if (tests.length > 0) fail(`the tarball carries Rust test files: ${tests.join(', ')}`)
  const consumer = join(work, 'consumer')
  execFileSync('mkdir', ['-p', consumer])
  writeFileSync(join(consumer, 'package.json'), JSON.stringify({ name: 'consumer', version: '1.0.0', private: true }))
  const install = spawnSync('npm', ['install', '--no-audit', '--no-fund', '--omit=optional', join(work, packed.filename)], {
    cwd: consumer,
    encoding: 'utf8',
    stdio: ['ignore', 'inherit', 'inherit'],
  })
  if (install.status !== 0) fail('npm install of the tarball failed')
  const installed = join(consumer, 'node_modules', '@openclaw', 'context-engine')
  const builtAtInstall = readdirSync(installed).filter((f) => f.endsWith('.node'))
  if (builtAtInstall.length > 0) fail(`installing built an addon (${builtAtInstall.join(', ')}): the package must have no install step`)
  const build = spawnSync('npx', ['--no-install', 'context-engine', 'build'], { cwd: consumer, encoding: 'utf8', stdio: ['ignore', 'inherit', 'inherit'] })
  if (build.status !== 0) fail('npx context-engine build failed')
  if (existsSync(join(installed, 'target'))) fail(`the source build left ${join(installed, 'target')} behind`)
  const nodeFiles = readdirSync(installed).filter((f) => f.endsWith('.node'))
  if (nodeFiles.length !== 1) fail(`expected one built addon in the installed package, found ${nodeFiles.join(', ') || 'none'}`)
  const cjs = spawnSync(process.execPath, ['-e', "const m = require('@openclaw/context-engine'); console.log(Object.keys(m).length, m.estimateTokens('abcdefgh'))"], { cwd: consumer, encoding: 'utf8' })
  if (cjs.status !== 0) fail(`require failed: ${cjs.stderr}`)
  const esm = spawnSync(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      "import * as all from '@openclaw/context-engine'; import cjs from '@openclaw/context-engine'; import { buildChannelTools, ChannelStore } from '@openclaw/context-engine'; const missing = Object.keys(cjs).filter((k) => !(k in all)); if (missing.length) throw new Error('missing: ' + missing); const s = new ChannelStore(); s.ingest({ type: 'message', channelId: 'C', message: { ts: '1.1', text: 'hi', author: { userId: 'U', displayName: 'u' } } }); const ctx = await s.buildContext('C', '1.1'); console.log(typeof buildChannelTools, ctx.promptSection.length > 0)",
    ],
    { cwd: consumer, encoding: 'utf8' },
  )
  if (esm.status !== 0) fail(`native ESM import failed: ${esm.stderr}`)
  console.log(`packed-install: ok (${names.length} files in the tarball; require: ${cjs.stdout.trim()}; import: ${esm.stdout.trim()}; no target/ left)`)
} finally {
  rmSync(work, { recursive: true, force: true })
}
