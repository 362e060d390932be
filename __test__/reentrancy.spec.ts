// Re-entrancy at the stack limit: a clock, getter, toJSON or fetcher that calls the same
// API again until the stack runs out. Before, napi-rs's conversion of the resulting
// exception ran JavaScript again and recursed until the native stack was gone (a
// segfault on ~30 exports). Run in a child process so a crash fails the test instead of
// killing the runner: it must exit 0 with a catchable RangeError on every synchronous
// entry point, and the documented outcome on the ones that never throw.
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const script = fileURLToPath(new URL('./scripts/reentrancy.cjs', import.meta.url))

/** Entry points whose documented outcome is not a thrown RangeError. */
const DOCUMENTED: Record<string, string> = {
  // Async: every failure is a rejection (or, for the tools, an answer with an error).
  'ChannelStore.buildContext through clock': 'rejected RangeError',
  'ChannelStore.tools through clock': 'resolved',
  'ChannelTools.execute through a getter': 'resolved',
  // The getter's inner call returns a promise, so the recursion ends without a throw and
  // the outer build fails for its own reason (no such anchor).
  'ChannelStore.buildContext through a getter': 'rejected Error',
  'ChannelStore.buildContext through its fetcher': 'resolved',
  // Documented never to throw on their input: an unreadable value is skipped.
  'loadManifestFromEntries through a getter': 'returned',
  'classifyOverflowError through a getter': 'returned',
  'repairOrphanTurn through a getter': 'returned',
  'RuntimeGuard.observe through a getter': 'returned',
  'RuntimeGuard.decideOverflow through a getter': 'returned',
  'RuntimeGuard.planResumeRecovery through a getter': 'returned',
  'RuntimeGuard.loadMedia through a getter': 'returned',
}

describe('re-entrancy at the stack limit', () => {
  it('never crashes: every entry point ends in a catchable RangeError or its documented outcome', () => {
    const run = spawnSync(process.execPath, [script], { encoding: 'utf8', timeout: 120_000 })
    expect(run.signal).toBeNull()
    expect(run.status).toBe(0)
    const results: Array<{ name: string; outcome: string }> = JSON.parse(run.stdout)
    expect(results.length).toBeGreaterThanOrEqual(45)
    for (const { name, outcome } of results) {
      expect(`${name}: ${outcome}`).toBe(`${name}: ${DOCUMENTED[name] ?? 'threw RangeError'}`)
    }
  }, 130_000)
})
