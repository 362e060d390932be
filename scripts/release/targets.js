// The release targets: each Rust target triple of package.json's napi.targets, the
// platform id in its binary's and its npm package's name, and the runner that builds it.
'use strict'
const { readFileSync } = require('node:fs')
const { join } = require('node:path')

const root = join(__dirname, '..', '..')
const PLATFORMS = {
  'x86_64-unknown-linux-gnu': 'linux-x64-gnu',
  'aarch64-unknown-linux-gnu': 'linux-arm64-gnu',
  'x86_64-apple-darwin': 'darwin-x64',
  'aarch64-apple-darwin': 'darwin-arm64',
  'x86_64-pc-windows-msvc': 'win32-x64-msvc',
}

const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))

/** The configured targets, in package.json order. */
const targets = pkg.napi.targets

/** `context-engine.<platform>.node` for a target triple. */
function binaryName(target) {
  const platform = PLATFORMS[target]
  if (!platform) throw new Error(`unknown release target ${target} (known: ${Object.keys(PLATFORMS).join(', ')})`)
  return `${addonName}.${platform}.node`
}

/** The triple of the machine running this script, for the targets above. */
function hostTarget() {
  const { platform, arch } = process
  if (platform === 'linux') return arch === 'arm64' ? 'aarch64-unknown-linux-gnu' : 'x86_64-unknown-linux-gnu'
  if (platform === 'darwin') return arch === 'arm64' ? 'aarch64-apple-darwin' : 'x86_64-apple-darwin'
  if (platform === 'win32') return 'x86_64-pc-windows-msvc'
  return `${arch}-${platform}`
}

/** The addon's name (package.json napi.binaryName). */
const addonName = pkg.napi.binaryName

module.exports = { PLATFORMS, addonName, binaryName, hostTarget, root, targets }
