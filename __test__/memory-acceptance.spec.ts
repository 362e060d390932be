// The conversation memory's acceptance points, on a replayed 300-message session across
// four thread keys (bench/memory-replay.js, the same replay as the table in docs/benchmarks.md).
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { createRequire } from 'node:module'
import { MemoryStore } from '@openclaw/context-engine'

const { replay, SESSION } = createRequire(import.meta.url)('../bench/memory-replay.js') as {
  replay: (o?: { messages?: number; budget?: number; path?: string }) => Array<{ turn: number; lane: string; threadKey: string; engine: number; whole: number; text: string }>
  SESSION: string
}

const dir = mkdtempSync(join(tmpdir(), 'memory-acceptance-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
const file = join(dir, 'replay.sqlite')
const rows = replay({ path: file })

// Words only one lane uses.
const OWN: Record<string, RegExp> = {
  'topic:release': /release 4\.\d/,
  'topic:hiring': /candidate \d|role \d/,
  'reply-chain': /import run \d|run \d+ /,
  root: /Lunch plans|shared calendar|slides from demo|travel budget|room for retro/,
}

describe('conversation memory, replayed', () => {
  it('replays 300 messages as 150 turns over 4 thread keys', () => {
    expect(rows).toHaveLength(150)
    expect(new Set(rows.map((r) => r.threadKey))).toEqual(
      new Set(['topic:-1001234:11', 'topic:-1001234:12', 'reply:-1001234:0', 'root:-1001234']),
    )
  })

  it('assembles every turn from its own thread key only', () => {
    for (const r of rows) {
      const recent = r.text.split('<recent_messages>')[1]?.split('</recent_messages>')[0] ?? ''
      const summary = r.text.split('<thread_summary>')[1]?.split('</thread_summary>')[0] ?? ''
      for (const [lane, own] of Object.entries(OWN)) {
        if (lane === r.lane) continue
        expect(own.test(recent), `turn ${r.turn} (${r.lane}) recent messages hold ${lane}`).toBe(false)
        expect(own.test(summary), `turn ${r.turn} (${r.lane}) summary holds ${lane}`).toBe(false)
      }
    }
  })

  it('keeps the context within its budget while the history grows past it: summaries and retrieval stand for the rest', () => {
    const last = rows[rows.length - 1]
    // Sending the whole history grows without bound; the engine's context uses its budget
    // (4,000) and stops there, the summaries and the retrieved messages standing for what
    // no longer fits.
    expect(last.whole).toBeGreaterThan(6_000)
    for (const r of rows) expect(r.engine, `turn ${r.turn}`).toBeLessThanOrEqual(4_000)
    // While a lane's own history is below the budget, its context is about that history;
    // once the whole history is twice the budget, each turn sends less than half of it.
    expect(rows[149].whole / rows[99].whole).toBeGreaterThan(1.45)
    for (const r of rows.filter((x) => x.whole > 8_000)) expect(r.engine / r.whole, `turn ${r.turn}`).toBeLessThan(0.5)
    expect(rows.filter((x) => x.whole > 8_000).length).toBeGreaterThan(3)
    const total = rows.reduce((n, r) => n + r.engine, 0)
    const whole = rows.reduce((n, r) => n + r.whole, 0)
    expect(total / whole).toBeLessThan(0.5)
  })

  it('picks up a thread where it left off with nothing in memory but the SQLite file', () => {
    const reopened = new MemoryStore({ path: file })
    const a = reopened.assemble({
      sessionId: SESSION,
      threadKey: 'topic:-1001234:12',
      userMessage: 'where are we with the candidates?',
      budgetTokens: 4_000,
    })
    // The questions of the thread were answered, so none is left open.
    expect(a.text).toMatch(/<thread_summary>\nCurrent goals \/ open questions:\n- \(none\)\nDecisions made:\n/)
    expect(a.text).toMatch(/We agreed to make an offer to candidate \d+ if references pass\./)
    // The lane's newest messages, as many as their share of the budget holds.
    expect(a.recentIncluded).toBeGreaterThanOrEqual(10)
    expect(a.tokens.total).toBeLessThanOrEqual(4_000)
    reopened.close()
  })
})
