#!/usr/bin/env node
// Source build: makes sure a native addon exists for this machine.
//
// Runs as the checkout's `prepare` step (so `npm install` in a clone builds the addon), as
// `npm test`'s pretest, and as `npx context-engine build` for a user whose platform has no
// prebuilt package. The published package has no install script: a consumer with a
// prebuilt binary runs nothing at install time.
//
// With a prebuilt platform package (or a local build) that loads, there is nothing to do.
// Otherwise the addon is compiled from source with cargo and copied next to index.js as
// context-engine.<platform>.node, where the loader finds it. `--force` always rebuilds
// (cargo itself skips the work when the sources are unchanged); `npm test` uses it so the
// suites never run against a stale binary.
'use strict'
const { spawnSync } = require('node:child_process')
const { copyFileSync, existsSync, mkdtempSync, readFileSync, renameSync, rmSync } = require('node:fs')
const { tmpdir } = require('node:os')
const { join, sep } = require('node:path')

const root = join(__dirname, '..')
const force = process.argv.includes('--force')
// Installed as a dependency (inside a consumer's node_modules), a build from source uses a
// temporary cargo target directory and removes it: the consumer keeps the addon, not
// hundreds of megabytes of build artifacts. In the package's own checkout `target/` stays,
// so rebuilds are incremental.
const asDependency = root.split(sep).includes('node_modules')

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

const prebuilt = `@openclaw/context-engine-${platformId()}`
if (!existsSync(join(root, 'Cargo.toml'))) {
  console.error(`@openclaw/context-engine: no prebuilt binary loads for ${platformId()} (package ${prebuilt}) and there are no Rust sources to build from.`)
  process.exit(1)
}
const cargo = spawnSync('cargo', ['--version'], { stdio: 'ignore' })
if (cargo.status !== 0) {
  console.error(
    `@openclaw/context-engine: no prebuilt binary loads for ${platformId()} (package ${prebuilt}), and cargo was not found to build one.\n` +
      'If that package exists for your platform, make sure optional dependencies were not skipped (npm install --include=optional).\n' +
      'Otherwise install Rust (https://rustup.rs), then run `npx context-engine build`.',
  )
  process.exit(1)
}

if (!force) console.log('@openclaw/context-engine: building the native addon from source (cargo build --release)...')
const targetDir = asDependency ? mkdtempSync(join(tmpdir(), 'context-engine-build-')) : null
const cleanUp = () => {
  if (targetDir) rmSync(targetDir, { recursive: true, force: true })
}
const build = spawnSync('cargo', ['build', '--release', '--lib', '--message-format=json-render-diagnostics'], {
  cwd: root,
  stdio: ['ignore', 'pipe', 'inherit'],
  maxBuffer: 256 * 1024 * 1024,
  env: targetDir ? { ...process.env, CARGO_TARGET_DIR: targetDir } : process.env,
})
if (build.status !== 0) {
  cleanUp()
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
  cleanUp()
  console.error('@openclaw/context-engine: cargo did not report a cdylib artifact.')
  process.exit(1)
}
const { napi } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
const dest = join(root, `${napi.binaryName}.${platformId()}.node`)
// Copy then rename, so a process that has the old binary mapped is not disturbed.
copyFileSync(artifact, `${dest}.tmp`)
renameSync(`${dest}.tmp`, dest)
cleanUp()
if (!loads()) {
  console.error(`@openclaw/context-engine: built ${dest}, but it does not load.`)
  process.exit(1)
}
if (!force) console.log(`@openclaw/context-engine: built ${dest}`)
