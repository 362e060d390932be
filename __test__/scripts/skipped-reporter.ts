// Says at the very end of `npm test`, in one plain line per file, which tests were skipped
// for want of a program and how to get it. Tests skip only when this machine lacks one
// (in CI, which installs them, they fail instead): the suites that need a real Redis, and
// the check that renders the inspect page in headless Chromium. Tests left out by a
// filter (`-t`, `.only`) are vitest's own business and not reported here.
import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import type { Reporter, TestModule } from 'vitest/node'

const installed = (cmd: string) => spawnSync(cmd, ['--version']).error === undefined

const POSTGRESQL = {
  missing: () => !existsSync('/usr/lib/postgresql') && !installed('initdb'),
  why: 'they need a PostgreSQL server, which is not installed here; install it (Debian/Ubuntu: sudo apt-get install postgresql; macOS: brew install postgresql) and run npm test again',
}

/** For each file whose tests may skip: whether what it needs is missing, and why/how. */
const NEEDS: Record<string, { missing: () => boolean; why: string }> = {
  'redis.spec.ts': {
    missing: () => !installed('redis-server'),
    why: 'they need redis-server, which is not installed here; install it (Debian/Ubuntu: sudo apt-get install redis-server; macOS: brew install redis) and run npm test again',
  },
  'memory-conformance.spec.ts': POSTGRESQL,
  'openclaw-pg.spec.ts': POSTGRESQL,
  'inspect.spec.ts': {
    missing: () => !process.env.CHROME_PATH && !['chromium', 'chromium-browser', 'google-chrome'].some(installed),
    why: 'it renders the inspect page in headless Chromium, which is not installed here; install it (Debian/Ubuntu: sudo apt-get install chromium) or set CHROME_PATH to a Chrome, and run npm test again',
  },
}

export default class SkippedReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>) {
    for (const m of testModules) {
      const skipped = [...m.children.allTests('skipped')].length
      const file = m.moduleId.split(/[\\/]/).pop() ?? m.moduleId
      const need = NEEDS[file]
      if (skipped === 0 || need === undefined || !need.missing()) continue
      const tests = skipped === 1 ? '1 test' : `${skipped} tests`
      process.stdout.write(`\nSkipped ${tests} of ${file}: ${need.why}.\n`)
    }
  }
}
