// The archive a user installs into OpenClaw from a local build (`npm run pack:plugin`):
// the package as `npm pack` makes it, plus the addon built in the checkout.
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'

const root = join(__dirname, '..')

describe('npm run pack:plugin', () => {
  it('writes an archive with the manifest, the plugin entry and this machine\'s addon, and says how to install it', () => {
    const out = mkdtempSync(join(tmpdir(), 'pack-plugin-'))
    try {
      const run = spawnSync('npm', ['run', '--silent', 'pack:plugin', '--', '--out', out], { cwd: root, encoding: 'utf8' })
      expect(run.status, run.stderr).toBe(0)
      const [archive] = readdirSync(out)
      expect(archive).toMatch(/^openclaw-context-engine-\d+\.\d+\.\d+-[a-z0-9]+-[a-z0-9]+(-[a-z]+)?\.tgz$/)
      expect(run.stdout).toContain(`openclaw plugins install ${join(out, archive)} --force --accept-capabilities`)
      const files = spawnSync('tar', ['-tzf', join(out, archive)], { encoding: 'utf8' }).stdout.split('\n')
      for (const f of ['package/openclaw.plugin.json', 'package/openclaw/index.js', 'package/index.js', 'package/package.json']) expect(files).toContain(f)
      expect(files.filter((f) => /^package\/context-engine\..+\.node$/.test(f))).toHaveLength(1)
    } finally {
      rmSync(out, { recursive: true, force: true })
    }
  }, 60_000)
})
