#!/usr/bin/env node
// Install step: makes sure a native addon exists for this machine.
//
// With a prebuilt platform package (or a local build) that loads, there is nothing to do.
// Otherwise the addon is compiled from source with cargo and copied next to index.js as
// context-engine.<platform>.node, where the loader finds it. `--force` always rebuilds
// (cargo itself skips the work when the sources are unchanged); `npm test` uses it so the
// suites never run against a stale binary.
'use strict'
const { spawnSync } = require('node:child_process')
const { copyFileSync, existsSync, readFileSync, renameSync } = require('node:fs')
const { join } = require('node:path')

const root = join(__dirname, '..')
const force = process.argv.includes('--force')

function loads() {
  const r = spawnSync(process.execPath, ['-e', `require(${JSON.stringify(join(root, 'index.js'))})`], {
    stdio: 'ignore',
  })
  return r.status === 0
}

function platformId() {
  // Same rule as the loader in index.js.
  const { platform, arch } = process
  if (platform === 'linux') {
    const header = process.report?.getReport?.().header
    return `linux-${arch}-${header && !header.glibcVersionRuntime ? 'musl' : 'gnu'}`
  }
  if (platform === 'win32') return `win32-${arch}-msvc`
  return `${platform}-${arch}`
}

if (!force && existsSync(join(root, 'index.js')) && loads()) process.exit(0)

if (!existsSync(join(root, 'Cargo.toml'))) {
  console.error('@openclaw/context-engine: no prebuilt binary for this platform and no Rust sources to build from.')
  process.exit(1)
}
const cargo = spawnSync('cargo', ['--version'], { stdio: 'ignore' })
if (cargo.status !== 0) {
  console.error(
    '@openclaw/context-engine: no prebuilt binary for this platform, and cargo was not found.\n' +
      'Install Rust (https://rustup.rs), then run `npm install` again (or `npm run build`).',
  )
  process.exit(1)
}

if (!force) console.log('@openclaw/context-engine: building the native addon from source (cargo build --release)...')
const build = spawnSync('cargo', ['build', '--release', '--lib', '--message-format=json-render-diagnostics'], {
  cwd: root,
  stdio: ['ignore', 'pipe', 'inherit'],
  maxBuffer: 256 * 1024 * 1024,
})
if (build.status !== 0) {
  console.error('@openclaw/context-engine: cargo build failed (see above).')
  process.exit(build.status || 1)
}
let artifact = null
for (const line of build.stdout.toString().split('\n')) {
  if (!line.startsWith('{')) continue
  const msg = JSON.parse(line)
  if (msg.reason === 'compiler-artifact' && msg.target.kind.includes('cdylib')) {
    artifact = msg.filenames.find((f) => /\.(so|dylib|dll)$/.test(f)) || artifact
  }
}
if (!artifact) {
  console.error('@openclaw/context-engine: cargo did not report a cdylib artifact.')
  process.exit(1)
}
const { napi } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
const dest = join(root, `${napi.binaryName}.${platformId()}.node`)
// Copy then rename, so a process that has the old binary mapped is not disturbed.
copyFileSync(artifact, `${dest}.tmp`)
renameSync(`${dest}.tmp`, dest)
if (!loads()) {
  console.error(`@openclaw/context-engine: built ${dest}, but it does not load.`)
  process.exit(1)
}
if (!force) console.log(`@openclaw/context-engine: built ${dest}`)
