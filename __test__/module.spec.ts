import { describe, expect, it } from 'vitest'
import { createRequire } from 'node:module'
import { spawnSync } from 'node:child_process'
import { copyFileSync, cpSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import * as esm from '@openclaw/context-engine'
import { buildChannelSnapshot, THREAD_BUDGET_TOKENS } from '@openclaw/context-engine'
import { snapshotInput } from './helpers'

const root = resolve(__dirname, '..')
const require = createRequire(import.meta.url)

const DROP_IN = [
  'THREAD_BUDGET_TOKENS',
  'SNIPPET_MAX_CHARS',
  'estimateTokens',
  'truncateSnippet',
  'applyThreadBudget',
  'buildChannelSnapshot',
  'buildThreadContext',
  'buildThreadContextWithTelemetry',
  'ATTACHMENT_MANIFEST_KEY',
  'createAttachmentManifest',
  'isAlreadyAttached',
  'recordAttachment',
  'getThreadAttachments',
  'serializeManifest',
  'loadManifestFromEntries',
]
const EXTRA = ['checkAttachment', 'sha256Hex', 'sha256HexAsync', 'buildContextPromptSection']

describe('module systems', () => {
  it('works with ESM named imports', () => {
    expect(THREAD_BUDGET_TOKENS).toBe(8000)
    expect(buildChannelSnapshot(snapshotInput(1)).schema_version).toBe('1.0')
  })

  it('gives every export as a named import in plain Node ESM (no bundler transform)', () => {
    // vitest rewrites imports; plain Node reads CommonJS named exports statically, so
    // an export added any other way is missing there. Checked in a child process.
    const code = [
      "import * as all from '@openclaw/context-engine'",
      "import cjs from '@openclaw/context-engine'",
      "import { buildChannelTools, ChannelStore, applyThreadBudget } from '@openclaw/context-engine'",
      'const missing = Object.keys(cjs).filter((k) => !(k in all) || all[k] !== cjs[k])',
      'console.log(JSON.stringify({ missing, names: Object.keys(cjs).length, tools: typeof buildChannelTools, store: typeof ChannelStore, budget: typeof applyThreadBudget }))',
    ].join('\n')
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', code], { cwd: root, encoding: 'utf8' })
    expect(run.stderr).toBe('')
    const out = JSON.parse(run.stdout)
    expect(out.missing).toEqual([])
    expect(out.names).toBeGreaterThanOrEqual(36)
    expect([out.tools, out.store, out.budget]).toEqual(['function', 'function', 'function'])
  })

  it('works with require()', () => {
    const cjs = require('@openclaw/context-engine')
    expect(cjs.buildChannelSnapshot(snapshotInput(1)).adjacent).toHaveLength(1)
    const input = snapshotInput(1)
    expect(cjs.buildChannelSnapshot(input)).toEqual(esm.buildChannelSnapshot(input))
  })

  it('exports every drop-in name and the additions, as functions or constants', () => {
    const cjs = require('@openclaw/context-engine')
    for (const name of [...DROP_IN, ...EXTRA]) {
      expect(cjs[name], name).toBeDefined()
      const fromEsm = (esm as Record<string, unknown>)[name]
      expect(typeof fromEsm, name).toBe(typeof cjs[name])
      if (typeof fromEsm !== 'function') expect(fromEsm, name).toBe(cjs[name])
    }
    expect(cjs.SNIPPET_MAX_CHARS).toBe(150)
    expect(cjs.ATTACHMENT_MANIFEST_KEY).toBe('openclaw:claude-sdk-attachment-manifest')
  })

  it('every platform package names the repository, license and the one Node range', () => {
    const pkg = require('../package.json')
    expect(pkg.engines.node).toBe('>= 20')
    const dirs = readdirSync(join(root, 'npm'))
    expect(dirs.length).toBeGreaterThanOrEqual(5)
    for (const dir of dirs) {
      const p = require(join(root, 'npm', dir, 'package.json'))
      expect([dir, p.repository, p.license, p.engines]).toEqual([dir, pkg.repository, 'MIT', pkg.engines])
    }
    expect(pkg.files).toContain('LICENSE')
  })

  it('resolves to index.js and index.d.ts through package.json', () => {
    const pkg = require('../package.json')
    expect(pkg.name).toBe('@openclaw/context-engine')
    expect(pkg.main).toBe('index.js')
    expect(pkg.types).toBe('index.d.ts')
    expect(require.resolve('@openclaw/context-engine')).toBe(join(root, 'index.js'))
  })
})

describe('loader', () => {
  const nodeFile = readdirSync(root).find((f) => /^context-engine\..+\.node$/.test(f))
  if (!nodeFile) throw new Error('no built addon next to index.js; run `npm run build`')
  const platformId = nodeFile.slice('context-engine.'.length, -'.node'.length)

  // A copy of the package's loader in a scratch directory, so what it finds can be chosen.
  function scratch(): string {
    const dir = mkdtempSync(join(tmpdir(), 'context-engine-loader-'))
    copyFileSync(join(root, 'index.js'), join(dir, 'index.js'))
    cpSync(join(root, 'js'), join(dir, 'js'), { recursive: true })
    return dir
  }

  function run(dir: string, code: string) {
    const env = { ...process.env }
    delete env.NAPI_RS_NATIVE_LIBRARY_PATH
    return spawnSync(process.execPath, ['-e', code], { cwd: dir, env, encoding: 'utf8' })
  }

  function fakePrebuilt(dir: string) {
    const pkgDir = join(dir, 'node_modules', '@openclaw', `context-engine-${platformId}`)
    mkdirSync(pkgDir, { recursive: true })
    writeFileSync(join(pkgDir, 'package.json'), JSON.stringify({ name: `@openclaw/context-engine-${platformId}`, main: 'binding.js' }))
    // Stands in for the prebuilt binary: the real addon, tagged so the test can tell it apart.
    writeFileSync(
      join(pkgDir, 'binding.js'),
      `module.exports = { ...require(${JSON.stringify(join(root, nodeFile!))}), sha256Hex: () => 'prebuilt' }`,
    )
  }

  it('loads the local build when no prebuilt package is installed', () => {
    const dir = scratch()
    copyFileSync(join(root, nodeFile), join(dir, nodeFile))
    const r = run(dir, "console.log(require('./index.js').estimateTokens('abcdefgh'))")
    expect(r.stderr).toBe('')
    expect(r.stdout.trim()).toBe('2')
  })

  it('prefers the prebuilt platform package over a local build', () => {
    const dir = scratch()
    copyFileSync(join(root, nodeFile), join(dir, nodeFile))
    fakePrebuilt(dir)
    const r = run(dir, "console.log(require('./index.js').sha256Hex('abcdefgh'))")
    expect(r.stdout.trim()).toBe('prebuilt')
  })

  it('names the load error of a binary that exists but does not load', () => {
    const dir = scratch()
    writeFileSync(join(dir, nodeFile), 'not a shared object')
    const r = run(dir, "require('./index.js')")
    expect(r.status).not.toBe(0)
    expect(r.stderr).toContain(`local build ${join(dir, nodeFile)}: `)
    expect(r.stderr).toMatch(/invalid ELF header|not a valid|file too short|slice is not valid/)
    expect(r.stderr).not.toContain('npm run build')
  })

  it('lets the OpenClaw plugin load without the addon: register says why once and registers nothing', () => {
    const dir = scratch()
    mkdirSync(join(dir, 'openclaw'))
    for (const f of readdirSync(join(root, 'openclaw'))) copyFileSync(join(root, 'openclaw', f), join(dir, 'openclaw', f))
    copyFileSync(join(root, 'package.json'), join(dir, 'package.json'))
    const r = run(
      dir,
      `const plugin = require('./openclaw/index.js')
       const logs = []
       const registered = []
       const api = { pluginConfig: {}, logger: { error: (m) => logs.push(m) }, registerContextEngine: (id) => registered.push(id) }
       plugin.register(api)
       plugin.register(api)
       let direct = null
       try { plugin.createContextEngine({}) } catch (err) { direct = err.code }
       console.log(JSON.stringify({ id: plugin.id, logs, registered, direct }))`,
    )
    expect(r.stderr).toBe('')
    const out = JSON.parse(r.stdout)
    const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
    expect(out.id).toBe('context-engine')
    expect(out.registered).toEqual([])
    // Once, with what to install and where (the plugin's own directory).
    expect(out.logs).toHaveLength(1)
    expect(out.logs[0]).toContain(`no native addon could be loaded for ${platformId}`)
    expect(out.logs[0]).toContain('OpenClaw goes on with its own context engine')
    expect(out.logs[0]).toContain(`npm install --prefix "${dir}" @openclaw/context-engine-${platformId}@${version}`)
    // Building the engine directly still says why it cannot.
    expect(out.direct).toBe('ERR_CONTEXT_ENGINE_NATIVE_MISSING')
  })

  it('says how to build when neither exists', () => {
    const dir = scratch()
    const r = run(dir, "require('./index.js')")
    expect(r.status).not.toBe(0)
    expect(r.stderr).toContain(`no native addon could be loaded for ${platformId}`)
    expect(r.stderr).toContain(`@openclaw/context-engine-${platformId}: not installed`)
    expect(r.stderr).toContain('not found')
    // What a consumer can do: install Rust and build the addon with the package's own
    // command, or get the optional prebuilt package; never `npm run build`, which only
    // works in this repository.
    expect(r.stderr).toContain('npx context-engine build')
    expect(r.stderr).not.toContain('npm run build')
    expect(r.stderr).toContain('--include=optional')
    expect(r.stderr).toContain('https://rustup.rs')
  })
})
