// `context-engine inspect`: run as a user runs it (the package's bin, in a child process)
// on the bundled channel laid out as a Slack export, as Web API bodies and as Events API
// payloads; its errors; and its HTML page, opened in headless Chromium.
import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { beforeAll, describe, expect, it } from 'vitest'

const root = join(__dirname, '..')
const bin = join(root, 'bin', 'context-engine.js')
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { writeSlackExport } = require('../fixtures/slack-export.js')
// eslint-disable-next-line @typescript-eslint/no-require-imports
const data = require('../fixtures/slack-channel.json')

type Msg = { ts: string; thread_ts?: string; user?: string; text?: string }
const longest: Msg[] = Object.values(data.replies as Record<string, Msg[]>).reduce((a, b) => (b.length > a.length ? b : a))
const threadTs = longest[0].ts
const lastReply = longest[longest.length - 1].ts

function inspect(...args: string[]) {
  const r = spawnSync(process.execPath, [bin, 'inspect', ...args], { encoding: 'utf8' })
  return { code: r.status, out: r.stdout, err: r.stderr }
}

let dir: string
let exportDir: string
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'inspect-'))
  exportDir = join(dir, 'export')
  writeSlackExport(exportDir)
})

describe('context-engine inspect', () => {
  it('reports a Slack export: the channel, the anchor, tokens per part, no calls', () => {
    const r = inspect(exportDir, '--json')
    expect(r.code).toBe(0)
    const report = JSON.parse(r.out)
    expect(report.input.kind).toBe('Slack export')
    expect(report.channel).toMatchObject({ id: 'C04PLATENG', name: 'platform-eng' })
    const newest = (data.messages as Msg[]).concat(...(Object.values(data.replies) as Msg[][])).reduce((a, b) => (Number(b.ts) > Number(a.ts) ? b : a))
    expect(report.anchor.ts).toBe(newest.ts)
    // One bound for the whole section: at least each part's, less than their bounds added.
    const parts = [report.tokens.guidance, report.tokens.snapshot, report.tokens.thread]
    expect(report.tokens.total).toBeGreaterThanOrEqual(Math.max(...parts))
    expect(report.tokens.total).toBeLessThan(parts.reduce((a, b) => a + b, 0))
    expect(report.calls).toEqual([])
    expect(report.promptSection).toBeUndefined()
  })

  it('pictures the thread budget and says what it cut', () => {
    const r = inspect(exportDir, '--anchor', lastReply, '--budget', '2000')
    expect(r.code).toBe(0)
    expect(r.out).toContain(`in thread ${threadTs}`)
    const budgetLine = r.out.split('\n').find((l) => l.trimStart().startsWith('thread ') && l.includes('thread budget'))
    expect(budgetLine).toMatch(/█+░*\s+[\d,]+\s+of the 2,000-token thread budget \(\d+%\)/)
    const used = Number(/█+░*\s+([\d,]+)/.exec(budgetLine!)![1].replace(/,/g, ''))
    expect(used).toBeLessThanOrEqual(2000)
    expect(r.out).toMatch(/thread: \d+ of \d+ replies included, \d+ left out \(most_recent/)
    expect(r.out).toMatch(/omitted range: \d{4}-\d\d-\d\dT[\d:.]+Z to \d{4}-\d\d-\d\dT[\d:.]+Z/)
    expect(r.out).not.toContain('<channel_snapshot')
    const withPrompt = inspect(exportDir, '--anchor', lastReply, '--prompt', '--dm', '--tool-names', 'dotted')
    expect(withPrompt.out).toContain('<channel_snapshot format="json">')
    expect(withPrompt.out).toContain('channel.messages')
  })

  it('shows each budget against what it holds: the bound, the estimate and, with --real, the reference count', () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { countTokens } = require('@anthropic-ai/tokenizer') as { countTokens: (t: string) => number }
    for (const format of ['json', 'compact']) {
      const r = inspect(exportDir, '--anchor', lastReply, '--budget', '2000', '--format', format, '--real', '--json', '--prompt')
      expect(r.code, r.err).toBe(0)
      const report = JSON.parse(r.out)
      const b = report.budgets
      expect(b.snapshot.budget).toBe(1500)
      expect(b.thread.budget).toBe(2000)
      for (const part of [b.snapshot, b.thread]) {
        // Never over, by the bound and in real tokens; the estimate is the central one.
        expect(part.bound).toBeLessThanOrEqual(part.budget)
        expect(part.real).toBeLessThanOrEqual(part.bound)
        expect(part.estimate).toBeLessThan(part.bound)
      }
      expect(b.thread.bound).toBe(report.tokens.thread)
      expect(b.section.real).toBe(countTokens(report.promptSection))
    }
    const text = inspect(exportDir, '--anchor', lastReply, '--budget', '2000', '--real')
    expect(text.out).toMatch(/thread {6}2,000: bound [\d,]+ \(\d+%\), estimate [\d,]+, real [\d,]+ \(\d+% used\)/)
    expect(inspect(exportDir).out).toContain('--real adds the reference tokenizer')
  })

  it('reads Web API bodies, given the channel they came from', () => {
    const history = { ok: true, messages: [...(data.messages as Msg[])].reverse(), has_more: false }
    const replies = { ok: true, messages: longest, has_more: false }
    const file = join(dir, 'bodies.json')
    writeFileSync(file, JSON.stringify([history, replies]))
    const r = inspect(file, '--channel', 'C04PLATENG', '--anchor', lastReply, '--json')
    expect(r.code).toBe(0)
    const report = JSON.parse(r.out)
    expect(report.input.kind).toBe('Web API bodies')
    expect(report.thread.totalReplies).toBeGreaterThanOrEqual(longest.length - 1)
    expect(report.calls).toEqual([])
    const without = inspect(file)
    expect(without.code).toBe(2)
    expect(without.err.trim()).toBe(`context-engine inspect: ${file}: Web API bodies do not name their channel; pass --channel <id>`)
  })

  it('reads Events API payloads and lists the calls a gateway would make for what they lack', () => {
    // The last 30 messages of the thread only: the store lacks the channel's history and
    // the thread's start, which a gateway would fetch.
    const events = longest.slice(-30).map((m) => ({ type: 'event_callback', team_id: 'T1', event: { ...m, channel: 'C04PLATENG' } }))
    const file = join(dir, 'events.jsonl')
    writeFileSync(file, events.map((e) => JSON.stringify(e)).join('\n') + '\n')
    const r = inspect(file, '--json')
    expect(r.code).toBe(0)
    const report = JSON.parse(r.out)
    expect(report.input.kind).toBe('Events API payloads')
    expect(report.anchor.ts).toBe(lastReply)
    const fetches = report.calls.map((c: { fetch: string }) => c.fetch)
    expect(fetches).toContain('fetchHistory')
    expect(fetches).toContain('fetchThread')
    const text = inspect(file)
    expect(text.out).toMatch(/calls a gateway would make \(\d+\):/)
    expect(text.out).toContain(`conversations.replies for thread ${threadTs}`)
  })

  it('reads Discord Gateway dispatches and Telegram updates: the thread as each platform holds it', () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { FakeDiscord, FakeTelegram, timelineOf } = require('../demo/platforms.js')
    const timeline = timelineOf(data)
    const discord = new FakeDiscord(data)
    const telegram = new FakeTelegram(data)
    // The thread's last 30 messages without its root's THREAD_CREATE history: a gateway
    // would fetch the rest of the thread and the channel.
    const tail = timeline.filter((m: Msg) => m.thread_ts === threadTs && m.ts !== threadTs).slice(-30)
    const dFile = join(dir, 'discord.jsonl')
    writeFileSync(dFile, [discord.guildCreate(), ...tail.flatMap((m: Msg) => discord.dispatchesFor(m))].map((x) => JSON.stringify(x)).join('\n') + '\n')
    const d = JSON.parse(inspect(dFile, '--json').out)
    expect(d.input.kind).toBe('JSONL of Discord Gateway dispatches')
    expect(d.channel).toMatchObject({ id: discord.channelId, name: data.channel.name, platform: 'discord' })
    // The thread's root and start are what the recorded fetch would have brought.
    expect(d.anchor.ts).toBe(discord.idOf(lastReply))
    const asked = d.calls.map((c: { fetch: string }) => c.fetch)
    expect(asked).toContain('fetchThread')
    expect(inspect(dFile).out).toContain(`GET /channels/${discord.idOf(threadTs)}/messages (thread)`)
    // Telegram: the reply chain arrives with its root in every reply, and nothing can be fetched.
    const tFile = join(dir, 'telegram.jsonl')
    writeFileSync(tFile, tail.flatMap((m: Msg) => telegram.updatesFor(m)).map((x: unknown) => JSON.stringify(x)).join('\n') + '\n')
    const t = JSON.parse(inspect(tFile, '--json').out)
    expect(t.input.kind).toBe('JSONL of Telegram updates')
    expect(t.channel).toMatchObject({ id: telegram.channelId, platform: 'telegram' })
    expect(t.anchor).toMatchObject({ ts: telegram.idOf(lastReply), threadId: telegram.idOf(threadTs) })
    expect(t.calls).toEqual([])
    expect(t.thread.includedReplies).toBe(30)
    // 31 messages held: asking for 50 around the anchor says why there are not more.
    expect(t.notes).toEqual([])
    const wide = JSON.parse(inspect(tFile, '--adjacent', '50', '--json').out)
    expect(wide.notes.some((n: string) => n.startsWith("Telegram's Bot API cannot read a chat's history"))).toBe(true)
    const picked = inspect(tFile, '--anchor', telegram.idOf(tail[0].ts), '--json')
    expect(JSON.parse(picked.out).anchor.ts).toBe(telegram.idOf(tail[0].ts))
    const missing = inspect(tFile, '--anchor', '999999')
    expect(missing.code).toBe(2)
    expect(missing.err).toContain('--anchor 999999: no message with that id')
  })

  it('answers a bad input with one line and exit code 2, never a stack trace', () => {
    const cases: Array<[string[], RegExp]> = [
      [[join(dir, 'missing.json')], /missing\.json: no such file or folder$/],
      [[dir], /not a Slack export \(it has no channels\.json/],
      [[exportDir, '--anchor', '1.000001'], /--anchor 1\.000001: no message with that ts in platform-eng/],
      [[exportDir, '--channel', 'random'], /no channel "random" in the input/],
      [[exportDir, '--budget', '-5'], /--budget expects a non-negative whole number/],
      [[exportDir, '--frobnicate'], /unknown option --frobnicate/],
      [[], /an input is required/],
    ]
    for (const [args, message] of cases) {
      const r = inspect(...args)
      expect(r.code, args.join(' ')).toBe(2)
      expect(r.out).toBe('')
      const lines = r.err.trim().split('\n')
      expect(lines, args.join(' ')).toHaveLength(1)
      expect(lines[0]).toMatch(/^context-engine inspect: /)
      expect(lines[0]).toMatch(message)
    }
  })

  it('writes one self-contained HTML page that headless Chromium renders', (ctx) => {
    const page = join(dir, 'report.html')
    const r = inspect(exportDir, '--anchor', lastReply, '--budget', '2000', '--html', page)
    expect(r.code).toBe(0)
    expect(r.out).toContain(`wrote ${page}`)
    const html = readFileSync(page, 'utf8')
    // Self-contained: nothing loaded from elsewhere.
    expect(html).not.toMatch(/\s(src|href)=/)
    // Chat text is escaped: the prompt's tags appear as text, not as elements.
    expect(html).toContain('&lt;channel_snapshot format=&quot;json&quot;&gt;')
    // CHROME_PATH names the browser (the release workflow sets it on macOS and Windows);
    // else the first Chromium or Chrome on the PATH.
    const chromium = process.env.CHROME_PATH || ['chromium', 'chromium-browser', 'google-chrome'].find((c) => spawnSync('which', [c]).status === 0)
    if (!chromium) {
      // CI installs Debian's chromium; on a machine without it this check cannot run.
      expect(process.env.CI, 'headless Chromium is required when CI is set (or set CHROME_PATH)').toBeFalsy()
      // Reported at the end of the run as skipped, with how to get Chromium.
      ctx.skip()
      return
    }
    const shot = join(dir, 'report.png')
    const dom = spawnSync(chromium, ['--headless', '--no-sandbox', '--disable-gpu', '--dump-dom', pathToFileURL(page).href], { encoding: 'utf8', timeout: 60_000 })
    expect(dom.status, dom.stderr).toBe(0)
    expect(dom.stdout).toContain('id="budget"')
    expect((dom.stdout.match(/class="row"/g) ?? []).length).toBe(3)
    expect((dom.stdout.match(/<details>/g) ?? []).length).toBe(3)
    expect(dom.stdout).toContain(`anchor ${lastReply} by Priya`)
    const png = spawnSync(chromium, ['--headless', '--no-sandbox', '--disable-gpu', '--window-size=1000,800', `--screenshot=${shot}`, pathToFileURL(page).href], { encoding: 'utf8', timeout: 60_000 })
    expect(png.status, png.stderr).toBe(0)
    expect(existsSync(shot)).toBe(true)
    // A rendered page is not a blank one: the PNG of a white page compresses to almost nothing.
    expect(readFileSync(shot).length).toBeGreaterThan(10_000)
  })
})
