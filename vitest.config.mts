import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['__test__/**/*.spec.ts'],
    // The addon is native code: keep suites in worker processes, not threads, so a crash
    // would fail one file loudly instead of taking the runner down with it.
    pool: 'forks',
    testTimeout: 60_000,
    // The summary, then one plain line per file whose tests were skipped, saying why and
    // how to run them.
    reporters: ['default', './__test__/scripts/skipped-reporter.ts'],
  },
})
