#!/usr/bin/env node
// Proves the prebuilt path a user on linux-x64-gnu takes: the platform package carries the
// binary, the main package carries the JavaScript, and installing both compiles nothing.
//
// 1. Places the release binary (built by `npm install` / `npm test` in this checkout) in
//    npm/linux-x64-gnu/, as `napi artifacts` does, and `npm pack`s that package and the
//    main package.
// 2. Installs both tarballs into a fresh consumer project with a PATH that holds no cargo
//    or rustc, timing it; then, in that project: `require` and native ESM `import` of every
//    export, one ChannelStore.buildContext, one tool call, and `tsc --strict` of a small
//    TypeScript file against the installed typings.
// 3. The failure case: the main package alone, still without Rust: installing succeeds and
//    leaves no build behind, and loading it fails with the error that says what to do.
//
// Run by .ci/run; exits non-zero with one line naming what failed.
'use strict'
const { execFileSync, spawnSync } = require('node:child_process')
const { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } = require('node:fs')
const { tmpdir } = require('node:os')
const { delimiter, join } = require('node:path')

const root = join(__dirname, '..')
const PLATFORM = 'linux-x64-gnu'
const BINARY = `context-engine.${PLATFORM}.node`
// Installing two local tarballs with no dependencies takes a few seconds; a minute means
// something compiled or fetched.
const INSTALL_LIMIT_MS = 60_000

const fail = (msg) => {
  console.error(`prebuilt-install: ${msg}`)
  process.exitCode = 1
  throw new Error(msg)
}

if (process.platform !== 'linux' || process.arch !== 'x64') {
  console.log(`prebuilt-install: skipped (this check packs the ${PLATFORM} package; this is ${process.platform}-${process.arch})`)
  process.exit(0)
}

/** A PATH without cargo or rustc: node and npm stay reachable through a directory of links. */
function pathWithoutRust(work) {
  const shims = join(work, 'bin')
  mkdirSync(shims)
  for (const tool of ['node', 'npm', 'npx']) {
    const found = spawnSync('which', [tool], { encoding: 'utf8' }).stdout.trim()
    if (found) symlinkSync(found, join(shims, tool))
  }
  const hasRust = (dir) => ['cargo', 'rustc'].some((t) => existsSync(join(dir, t)))
  const kept = (process.env.PATH || '').split(delimiter).filter((dir) => dir && !hasRust(dir))
  return [shims, ...kept].join(delimiter)
}

function consumerProject(dir) {
  mkdirSync(dir, { recursive: true })
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'consumer', version: '1.0.0', private: true }))
}

function npmInstall(cwd, env, tarballs) {
  const started = Date.now()
  const r = spawnSync('npm', ['install', '--no-audit', '--no-fund', '--omit=optional', ...tarballs], { cwd, env, encoding: 'utf8' })
  return { ...r, ms: Date.now() - started }
}

function node(cwd, env, args) {
  return spawnSync(process.execPath, args, { cwd, env, encoding: 'utf8' })
}

const CHECK_CJS = `
const m = require('@openclaw/context-engine')
const store = new m.ChannelStore()
store.ingest({ type: 'message', channelId: 'C1', message: { ts: '1775835600.000100', text: 'The canary for v2.4 is healthy', author: { userId: 'U1', displayName: 'Sam' } } })
store.buildContext('C1', '1775835600.000100').then(async (ctx) => {
  if (!ctx.promptSection.includes('canary')) throw new Error('the prompt section lacks the message')
  const answer = JSON.parse(await store.tools('C1').execute('channel_context', { intent: 'canary health' }))
  if (!answer.results || answer.results.length !== 1) throw new Error('the tool found ' + JSON.stringify(answer))
  console.log(Object.keys(m).length + ' exports, buildContext ' + ctx.tokens.total + ' tokens, 1 tool result')
})
`

const CHECK_ESM = `
import * as all from '@openclaw/context-engine'
import cjs from '@openclaw/context-engine'
const missing = Object.keys(cjs).filter((k) => !(k in all))
if (missing.length) throw new Error('not importable by name: ' + missing.join(', '))
console.log(Object.keys(cjs).length + ' names importable')
`

const CHECK_TS = `
import { ChannelStore, buildChannelSnapshot, type BuiltContext, type StoreStats } from '@openclaw/context-engine'
const store: ChannelStore = new ChannelStore({ windowSize: 100, rateLimit: { preset: 'slack-non-marketplace' } })
const pending: Promise<BuiltContext> = store.buildContext('C1', '1775835600.000100', { adjacent: 5 })
const stats: StoreStats = store.stats()
const n: number = stats.caches.threadReplies.max
const snapshot = buildChannelSnapshot({ channel: { id: 'C1', name: 'eng', platform: 'slack' }, anchor: { ts: '1.1', text: 't', author: { userId: 'U', displayName: 'u' } }, adjacentMessages: [] })
const id: string = snapshot.anchor.message_id
export { pending, n, id }
`

const work = mkdtempSync(join(tmpdir(), 'context-engine-prebuilt-'))
const platformDir = join(root, 'npm', PLATFORM)
const placed = join(platformDir, BINARY)
try {
  const built = join(root, BINARY)
  if (!existsSync(built)) fail(`${BINARY} is not built; run npm install (or npm run build) first`)
  copyFileSync(built, placed)
  const pack = (cwd) => {
    const out = JSON.parse(execFileSync('npm', ['pack', '--json', '--pack-destination', work], { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }))[0]
    return { file: join(work, out.filename), names: out.files.map((f) => f.path) }
  }
  const platformPkg = pack(platformDir)
  if (!platformPkg.names.includes(BINARY)) fail(`the platform tarball lacks ${BINARY} (it holds ${platformPkg.names.join(', ')})`)
  const mainPkg = pack(root)
  const stray = mainPkg.names.filter((n) => n.endsWith('.node'))
  if (stray.length > 0) fail(`the main tarball carries binaries: ${stray.join(', ')}`)

  const env = { ...process.env, PATH: pathWithoutRust(work), CARGO: '', RUSTC: '' }
  if (spawnSync('cargo', ['--version'], { env }).status === 0) fail('cargo is still on the PATH given to the consumer')

  // The prebuilt path.
  const consumer = join(work, 'consumer')
  consumerProject(consumer)
  const install = npmInstall(consumer, env, [platformPkg.file, mainPkg.file])
  if (install.status !== 0) fail(`npm install of both tarballs failed: ${install.stderr.trim().split('\n').pop()}`)
  if (install.ms > INSTALL_LIMIT_MS) fail(`npm install took ${install.ms} ms; nothing should compile`)
  const installed = join(consumer, 'node_modules', '@openclaw', 'context-engine')
  const local = readdirSync(installed).filter((f) => f.endsWith('.node') || f === 'target')
  if (local.length > 0) fail(`installing left build output in the main package: ${local.join(', ')}`)
  const cjs = node(consumer, env, ['-e', CHECK_CJS])
  if (cjs.status !== 0) fail(`require in the consumer failed: ${cjs.stderr.trim()}`)
  const esm = node(consumer, env, ['--input-type=module', '-e', CHECK_ESM])
  if (esm.status !== 0) fail(`native ESM import in the consumer failed: ${esm.stderr.trim()}`)
  writeFileSync(join(consumer, 'check.ts'), CHECK_TS)
  writeFileSync(
    join(consumer, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: { strict: true, noEmit: true, module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', typeRoots: [join(root, 'node_modules', '@types')], types: ['node'], skipLibCheck: false },
      files: ['check.ts'],
    }),
  )
  const tsc = node(consumer, env, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'])
  if (tsc.status !== 0) fail(`tsc --strict against the installed typings failed:\n${tsc.stdout}${tsc.stderr}`)

  // The failure case: no platform package, no Rust.
  const bare = join(work, 'bare')
  consumerProject(bare)
  const bareInstall = npmInstall(bare, env, [mainPkg.file])
  if (bareInstall.status !== 0) fail(`installing the main package alone failed: ${bareInstall.stderr.trim().split('\n').pop()}`)
  const bareInstalled = join(bare, 'node_modules', '@openclaw', 'context-engine')
  const leftovers = readdirSync(bareInstalled).filter((f) => f.endsWith('.node') || f === 'target')
  if (leftovers.length > 0) fail(`a failed install left build output behind: ${leftovers.join(', ')}`)
  const load = node(bare, env, ['-e', "require('@openclaw/context-engine')"])
  if (load.status === 0) fail('loading without a binary succeeded')
  for (const want of [`no native addon could be loaded for ${PLATFORM}`, `@openclaw/context-engine-${PLATFORM}: not installed`, 'npx context-engine build']) {
    if (!load.stderr.includes(want)) fail(`the load error does not say "${want}":\n${load.stderr}`)
  }
  const temp = readdirSync(tmpdir()).filter((f) => f.startsWith('context-engine-build-') && statSync(join(tmpdir(), f)).mtimeMs > Date.now() - 600_000)
  if (temp.length > 0) fail(`a build directory was left in ${tmpdir()}: ${temp.join(', ')}`)

  console.log(
    `prebuilt-install: ok (install of both tarballs without Rust: ${install.ms} ms, nothing compiled; ` +
      `${cjs.stdout.trim()}; ${esm.stdout.trim()}; tsc --strict clean; ` +
      `main package alone: installs, then refuses to load with the build instructions)`,
  )
} catch (err) {
  if (!process.exitCode) {
    console.error(`prebuilt-install: ${err && err.stack ? err.stack : err}`)
    process.exitCode = 1
  }
} finally {
  rmSync(placed, { force: true })
  rmSync(work, { recursive: true, force: true })
}
