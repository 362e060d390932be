'use strict'

// The package's OpenClaw plugin against the real host, in four steps (run with Node 24,
// which the host needs): the plugin's typings against the real plugin SDK, the offline
// plugin inspector with its runtime capture, the end-to-end turns of e2e.js, and a
// conversation driven past small model windows beside OpenClaw's own engine
// (small-window.js).

const { execFileSync } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { main: e2e, stagePackage } = require('./e2e.js')
const { smallWindows } = require('./small-window.js')

function step(name, fn) {
  const t0 = Date.now()
  process.stdout.write(`openclaw integration: ${name}\n`)
  const out = fn()
  const done = (v) => {
    process.stdout.write(`openclaw integration: ${name}: ok (${((Date.now() - t0) / 1000).toFixed(1)} s)\n`)
    return v
  }
  return out && typeof out.then === 'function' ? out.then(done) : done(out)
}

async function run() {
  const major = Number(process.versions.node.split('.')[0])
  if (major < 24) throw new Error(`run with Node >= 24.16 (the OpenClaw host needs it), not ${process.version}`)
  step('type-check against the openclaw plugin SDK', () =>
    execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', path.join(__dirname, 'tsconfig.json')], { stdio: 'inherit' }),
  )
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'openclaw-integration-'))
  try {
    const pack = stagePackage(work)
    const { staged } = pack
    step('plugin-inspector ci --runtime --allow-execute', () => {
      const cli = path.join(__dirname, 'node_modules', '@openclaw', 'plugin-inspector', 'src', 'cli.js')
      execFileSync(process.execPath, [cli, 'ci', '--runtime', '--allow-execute', '--no-openclaw'], { cwd: staged, stdio: 'inherit' })
      const report = JSON.parse(fs.readFileSync(path.join(staged, 'reports', 'plugin-inspector-report.json'), 'utf8'))
      const capture = fs.readFileSync(path.join(staged, 'reports', 'plugin-inspector-runtime-capture.md'), 'utf8')
      if (String(report.status).toUpperCase() !== 'PASS') throw new Error(`plugin-inspector: ${report.status}`)
      if (report.issues.length > 0) throw new Error(`plugin-inspector issues: ${report.issues.map((i) => i.title).join('; ')}`)
      if (!/registration:registerContextEngine/.test(capture)) throw new Error('the runtime capture did not see registerContextEngine')
    })
    await step('end to end with openclaw agent --local', () => e2e(pack))
    await step('past small windows (16,000 and 32,000), beside OpenClaw\'s own engine', () => smallWindows(pack))
  } finally {
    fs.rmSync(work, { recursive: true, force: true })
  }
}

run().then(
  () => process.exit(0),
  (err) => {
    console.error(err)
    process.exit(1)
  },
)
