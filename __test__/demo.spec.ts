// The bundled fixture and `npm run demo`, as a new user runs them.
import { describe, expect, it } from 'vitest'
import { execFileSync, spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'

const root = resolve(__dirname, '..')
const fixture = JSON.parse(readFileSync(join(root, 'fixtures', 'slack-channel.json'), 'utf8'))

describe('fixtures/slack-channel.json', () => {
  const replies = Object.values(fixture.replies as Record<string, Array<Record<string, unknown>>>)
  const all = [...fixture.messages, ...replies.flatMap((r) => r.slice(1))]

  it('is a realistic Slack channel: 300+ messages over several days, threads, one with 150+ replies', () => {
    expect(fixture.messages.length).toBeGreaterThanOrEqual(300)
    const days = new Set(fixture.messages.map((m: { ts: string }) => new Date(Number(m.ts.split('.')[0]) * 1000).toISOString().slice(0, 10)))
    expect(days.size).toBeGreaterThanOrEqual(5)
    expect(replies.length).toBeGreaterThanOrEqual(6)
    expect(Math.max(...replies.map((r) => r.length - 1))).toBeGreaterThanOrEqual(150)
  })

  it('has reactions, files, edits, bots, broadcasts, non-English text and emoji', () => {
    expect(all.some((m) => m.reactions?.[0]?.users?.length === m.reactions?.[0]?.count)).toBe(true)
    expect(all.some((m) => m.files?.[0]?.mimetype)).toBe(true)
    expect(all.some((m) => m.edited?.ts)).toBe(true)
    expect(all.some((m) => m.subtype === 'bot_message' && m.bot_id)).toBe(true)
    expect(fixture.messages.some((m: { subtype?: string }) => m.subtype === 'thread_broadcast')).toBe(true)
    expect(all.some((m) => /[\u3040-\u30ff]/.test(m.text))).toBe(true)
    expect(all.some((m) => /[äöüß]/.test(m.text))).toBe(true)
    expect(all.some((m) => /\p{Extended_Pictographic}/u.test(m.text))).toBe(true)
    expect(all.some((m) => m.text.length > 1200)).toBe(true)
  })

  it('is what fixtures/generate.js writes (deterministic)', () => {
    const before = readFileSync(join(root, 'fixtures', 'slack-channel.json'), 'utf8')
    execFileSync(process.execPath, [join(root, 'fixtures', 'generate.js')])
    expect(readFileSync(join(root, 'fixtures', 'slack-channel.json'), 'utf8')).toBe(before)
  })
})

describe('npm run demo', () => {
  it('replays the channel through a ChannelStore: one history and one replies call warm it, a later message costs none', () => {
    const out = execFileSync(process.execPath, [join(root, 'demo', 'run.js'), '--json'], { encoding: 'utf8' })
    const summary = JSON.parse(out)
    expect(summary.restart.payloadsReplayed).toBeGreaterThan(0)
    expect(summary.firstBuild.calls).toEqual(['conversations.history', 'conversations.replies'])
    expect(summary.firstBuild.notes).toEqual([])
    expect(summary.laterMessage.apiCalls).toBe(0)
    expect(summary.laterMessage.calls).toEqual([])
    expect(summary.anchor.inThread).toBe(true)
    expect(summary.thread.totalReplies).toBeGreaterThanOrEqual(150)
    expect(summary.thread.omitted).toBeGreaterThan(0)
    expect(summary.thread.omittedRange).toHaveLength(2)
    expect(summary.thread.actualTokens).toBeLessThanOrEqual(summary.thread.budgetTokens)
    expect(summary.thread.repliesCut).toBeGreaterThan(0)
    // 50 asked for; those within the 1,500-token snapshot budget kept, the rest counted.
    expect(summary.adjacent.messages + summary.adjacent.omitted).toBe(50)
    expect(summary.adjacent.omitted).toBeGreaterThan(0)
    expect(summary.tokens.snapshot).toBeLessThanOrEqual(1_500)
    expect(summary.adjacent.snippetsTruncated).toBeGreaterThan(0)
    // The whole is bounded once: more than any part, less than the parts' bounds added.
    const parts = [summary.tokens.guidance, summary.tokens.snapshot, summary.tokens.thread]
    expect(summary.tokens.total).toBeGreaterThan(Math.max(...parts))
    expect(summary.tokens.total).toBeLessThan(parts.reduce((a, b) => a + b, 0))
    expect(summary.manifest.recorded).toBeGreaterThan(0)
    expect(summary.manifest.secondDownloadApiCalls).toBe(0)
    expect(summary.manifest.reupload.match).toBe('content_hash')
    expect(summary.manifest.restoredAfterTornWrite).toBe(summary.manifest.recorded)
    expect(summary.stats.calls['files.download']).toBe(summary.manifest.recorded)
  })

  it('prints the prompt section and a readable report', () => {
    const out = execFileSync(process.execPath, [join(root, 'demo', 'run.js')], { encoding: 'utf8' })
    expect(out).toContain('<channel_snapshot format="json">')
    expect(out).toContain('<thread_context format="json">')
    expect(out).toMatch(/whole section\s+\d+/)
    expect(out).toMatch(/omitted replies from \d{4}-\d\d-\d\dT/)
    expect(out).toMatch(/first buildContext: 2 API calls \(conversations\.history, conversations\.replies\)/)
    expect(out).toMatch(/later message \d+\.\d+ .*: 0 API calls - the store is warm from events/)
  })

  it('runs the same channel as Discord dispatches and as Telegram updates', () => {
    const run = (platform: string) => JSON.parse(execFileSync(process.execPath, [join(root, 'demo', 'run.js'), '--platform', platform, '--json'], { encoding: 'utf8' }))
    const slack = JSON.parse(execFileSync(process.execPath, [join(root, 'demo', 'run.js'), '--json'], { encoding: 'utf8' }))
    const discord = run('discord')
    // Discord's REST API warms the channel and the thread, as Slack's Web API does.
    expect(discord.firstBuild.calls).toEqual(['GET /channels/{id}/messages', 'GET /channels/{thread}/messages'])
    expect(discord.firstBuild.notes).toEqual([])
    expect(discord.laterMessage.apiCalls).toBe(0)
    expect(discord.thread.totalReplies).toBe(slack.thread.totalReplies)
    expect(discord.anchor.author).toBe(slack.anchor.author)
    expect(discord.manifest.recorded).toBe(slack.manifest.recorded)
    // The Bot API cannot read history: the bot saw the channel from its start, and no call is made.
    const telegram = run('telegram')
    expect(telegram.firstBuild.calls).toEqual([])
    expect(telegram.firstBuild.apiCalls).toBe(0)
    expect(telegram.thread.totalReplies).toBe(slack.thread.totalReplies)
    expect(telegram.anchor.author).toBe(slack.anchor.author)
    // A reply chain's messages answer its root: the section points at it instead of repeating it.
    expect(telegram.tokens.quotedReply).toBeGreaterThan(0)
    expect(telegram.tokens.quotedReply).toBeLessThan(100)
    for (const s of [discord, telegram]) {
      expect(s.thread.actualTokens).toBeLessThanOrEqual(s.thread.budgetTokens)
      expect(s.tokens.snapshot).toBeLessThanOrEqual(1_500)
    }
    const bad = spawnSync(process.execPath, [join(root, 'demo', 'run.js'), '--platform', 'irc'], { encoding: 'utf8' })
    expect(bad.status).toBe(2)
    expect(bad.stderr).toContain('--platform must be one of slack, discord, telegram, got "irc"')
  })

  it('fails clearly on a bad anchor or budget', () => {
    const bad = spawnSync(process.execPath, [join(root, 'demo', 'run.js'), '--anchor', '123.456'], { encoding: 'utf8' })
    expect(bad.status).toBe(2)
    expect(bad.stderr).toContain('no message with ts "123.456"')
    const budget = spawnSync(process.execPath, [join(root, 'demo', 'run.js'), '--budget', 'lots'], { encoding: 'utf8' })
    expect(budget.status).toBe(2)
    expect(budget.stderr).toContain('--budget must be a non-negative integer')
  })
})
