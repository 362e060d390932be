#!/usr/bin/env node
// The release workflow's publish job: places the downloaded binaries in their platform
// packages (`napi artifacts`), checks each one's header, publishes the platform packages
// and adds them to the main package's optionalDependencies (`napi prepublish`), then
// publishes the main package, with npm provenance.
//
//   node scripts/release/publish.js             every target's binary must be in artifacts/
//   node scripts/release/publish.js --dry-run   the same steps for the binaries that are
//                                                there, publishing nothing and leaving the
//                                                checkout as it was (run by .ci/run)
'use strict'
const { spawnSync } = require('node:child_process')
const { existsSync, readdirSync, rmSync, writeFileSync } = require('node:fs')
const { join } = require('node:path')
const { check } = require('./check-binary.js')
const { PLATFORMS, addonName, binaryName, root, targets } = require('./targets.js')

const dryRun = process.argv.includes('--dry-run')
const artifacts = join(root, 'artifacts')
const npx = process.platform === 'win32' ? 'npx.cmd' : 'npx'

function run(cmd, args, env = process.env) {
  console.log(`publish: ${cmd} ${args.join(' ')}`)
  const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit', env, shell: process.platform === 'win32' })
  if (r.status !== 0) throw new Error(`${cmd} ${args[0] ?? ''} ${args[1] ?? ''} exited with ${r.status}`)
}

function main() {
  const present = targets.filter((t) => existsSync(join(artifacts, binaryName(t))))
  const missing = targets.filter((t) => !present.includes(t))
  if (present.length === 0) throw new Error(`no binaries in ${artifacts}; build them with scripts/release/build.js`)
  if (missing.length > 0 && !dryRun) throw new Error(`missing binaries for ${missing.join(', ')}: a release carries every target`)
  const config = []
  if (dryRun && missing.length > 0) {
    // napi reads the targets from its config: a dry run covers the binaries at hand.
    const file = join(artifacts, 'napi-dry-run.json')
    writeFileSync(file, JSON.stringify({ binaryName: addonName, targets: present }))
    config.push('-c', file)
    console.log(`publish: dry run for ${present.join(', ')} (not built here: ${missing.join(', ')})`)
  }
  const rootBinaries = new Set(readdirSync(root).filter((f) => f.endsWith('.node')))
  try {
    run(npx, ['napi', 'artifacts', ...config, '-o', 'artifacts', '--npm-dir', 'npm'])
    for (const t of present) {
      const placed = join(root, 'npm', PLATFORMS[t], binaryName(t))
      const problem = check(placed, t)
      if (problem) throw new Error(problem)
    }
    const env = { ...process.env, NPM_CONFIG_PROVENANCE: 'true' }
    run(npx, ['napi', 'prepublish', ...config, '-p', 'npm', '-t', 'npm', ...(dryRun ? ['--dry-run'] : [])], env)
    // The lifecycle scripts ran above, as steps of their own: `prepublishOnly` is the same
    // `napi prepublish`, and `prepare` would only find the addon already built.
    run('npm', ['publish', '--access', 'public', '--ignore-scripts', ...(dryRun ? ['--dry-run'] : ['--provenance'])], env)
  } finally {
    if (dryRun) {
      // Leave the checkout as it was: napi artifacts copied the binaries into the platform
      // packages and next to index.js.
      for (const t of present) rmSync(join(root, 'npm', PLATFORMS[t], binaryName(t)), { force: true })
      for (const f of readdirSync(root)) if (f.endsWith('.node') && !rootBinaries.has(f)) rmSync(join(root, f), { force: true })
      rmSync(join(artifacts, 'napi-dry-run.json'), { force: true })
    }
  }
  console.log(`publish: ${dryRun ? 'dry run ok' : 'published'} (${present.length} platform packages and the main package)`)
}

try {
  main()
} catch (err) {
  console.error(`publish: ${err.message}`)
  process.exitCode = 1
}
