#!/usr/bin/env node
// Packs the checkout as an OpenClaw plugin archive that runs on this machine: the package
// as `npm pack` makes it (platform-neutral, as it is published) plus the native addon
// built here (`npm run build`), in `openclaw-context-engine-<version>-<platform>.tgz`.
//
//   npm run pack:plugin [-- --out <dir>]
//   openclaw plugins install ./openclaw-context-engine-0.1.0-linux-x64-gnu.tgz --force --accept-capabilities
//
// OpenClaw asks for both flags: `--force` for an archive from outside ClawHub (and to
// replace an installed copy), `--accept-capabilities` for the plugin's declared
// capabilities (its context-engine slot and tools).
//
// `npm pack` alone leaves the addon out (the published package gets it from its platform
// package, which a local build has not published): installed into OpenClaw, that plugin
// loads, registers nothing and logs what is missing. The end-to-end run
// (integration/openclaw) installs the archive this script writes.
'use strict'
const { execFileSync } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const root = path.join(__dirname, '..')

/** The addons built in the checkout (`context-engine.<platform>.node`). */
function builtAddons() {
  return fs.readdirSync(root).filter((f) => /^context-engine\..+\.node$/.test(f))
}

/**
 * Packs the plugin into `outDir`. Returns the archive's path and the unpacked folder it
 * was made from (under `work`, which the caller removes).
 */
function packPlugin({ outDir = process.cwd(), work = fs.mkdtempSync(path.join(os.tmpdir(), 'context-engine-plugin-')) } = {}) {
  const addons = builtAddons()
  if (addons.length === 0) throw new Error(`no built addon in ${root}: run \`npm run build\` (or \`npm install\`) first`)
  const [packed] = JSON.parse(execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', work], { cwd: root, encoding: 'utf8' }))
  execFileSync('tar', ['-xzf', path.join(work, packed.filename), '-C', work])
  fs.rmSync(path.join(work, packed.filename))
  const staged = path.join(work, 'package')
  for (const f of addons) fs.copyFileSync(path.join(root, f), path.join(staged, f))
  const platform = addons[0].replace(/^context-engine\.|\.node$/g, '')
  const tarball = path.join(path.resolve(outDir), `openclaw-context-engine-${packed.version}-${platform}.tgz`)
  fs.mkdirSync(path.dirname(tarball), { recursive: true })
  execFileSync('tar', ['-czf', tarball, '-C', work, 'package'])
  return { tarball, staged, addons }
}

if (require.main === module) {
  const at = process.argv.indexOf('--out')
  const outDir = at > 0 ? process.argv[at + 1] : process.cwd()
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'context-engine-plugin-'))
  try {
    const { tarball, addons } = packPlugin({ outDir, work })
    console.log(`${tarball} (with ${addons.join(', ')})`)
    const shown = path.relative(process.cwd(), tarball)
    console.log(`install it: openclaw plugins install ${shown.startsWith('..') ? tarball : `./${shown}`} --force --accept-capabilities`)
  } catch (err) {
    console.error(`pack-plugin: ${err.message}`)
    process.exitCode = 1
  } finally {
    fs.rmSync(work, { recursive: true, force: true })
  }
}

module.exports = { packPlugin }
