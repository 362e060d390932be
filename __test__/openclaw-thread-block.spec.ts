import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ChannelStore } from '@openclaw/context-engine'
import { createContextEngine, isTurnMessage, type HostMessage } from '@openclaw/context-engine/openclaw'
// The same stand-in serves the end-to-end run with the real OpenClaw host.
import { startSlackApi } from '../integration/openclaw/slack-api.js'

// Session keys as OpenClaw hands them to the engine: lowercased.
const ROOT = '1775835600.000100'
const THREAD = `agent:main:slack:channel:c07rollout:thread:${ROOT}`
const C = 'C07ROLLOUT'
const T0 = 1_775_835_600_000
const ts = (s: number) => `${T0 / 1000 + s}.000100`

// The thread in Slack: a question, a bot's answer, the pronoun question being answered.
const slackThread = [
  { type: 'message', ts: ROOT, user: 'U1', text: 'is the import job stuck?', thread_ts: ROOT, reply_count: 3 },
  { type: 'message', ts: ts(10), user: 'U2', text: 'I saw it at 40% an hour ago &amp; told <@U3>', thread_ts: ROOT },
  { type: 'message', ts: ts(20), bot_id: 'B1', username: 'deploybot', text: 'Restarted 3 workers.', thread_ts: ROOT },
  { type: 'message', ts: ts(30), user: 'U1', text: 'are they running?', thread_ts: ROOT },
]
const hostTurn: HostMessage[] = [{ role: 'user', content: 'are they running?', timestamp: T0 + 30_000 }]
const BLOCK =
  '<slack_thread_context>\nAlice: is the import job stuck?\nBob: I saw it at 40% an hour ago &amp; told @Carol\ndeploybot: Restarted 3 workers.\nCurrent question: are they running?\n</slack_thread_context>'

const assemble = (e: ReturnType<typeof createContextEngine>, sessionKey: string, tokenBudget = 50_000) =>
  e.assemble({ sessionId: `s-${sessionKey}`, sessionKey, messages: hostTurn, tokenBudget })

/** Everything the model is sent: the system prompt addition and the messages' text. */
const seen = (out: { systemPromptAddition?: string; messages: HostMessage[] }) =>
  [
    out.systemPromptAddition ?? '',
    ...out.messages.flatMap((m) =>
      typeof m.content === 'string' ? [m.content] : (m.content as Array<{ text?: string }>).map((b) => b.text ?? ''),
    ),
  ].join('\n')

/** The text of the engine's turn message, the last message ('' when there is none). */
const turnBlock = (out: { systemPromptAddition?: string; messages: HostMessage[] }) => {
  expect(out.systemPromptAddition ?? '').not.toContain('memory_for_this_turn')
  const last = out.messages.at(-1)
  return last !== undefined && isTurnMessage(last) ? last.content[0].text : ''
}

describe('the Slack thread block in the OpenClaw engine', () => {
  let slack: Awaited<ReturnType<typeof startSlackApi>>
  beforeAll(async () => {
    slack = await startSlackApi({ threads: { [`${C}:${ROOT}`]: slackThread }, users: { U1: 'Alice', U2: 'Bob', U3: 'Carol' } })
  })
  afterAll(() => slack.close())

  it("adds the gateway's ChannelStore thread to a Slack thread session, inside the budget", async () => {
    const store = new ChannelStore({ clock: () => T0 + 60_000 })
    store.setUsers([
      { userId: 'U1', displayName: 'Alice' },
      { userId: 'U2', displayName: 'Bob' },
      { userId: 'U3', displayName: 'Carol' },
    ])
    store.ingestSlackResponse(C, { ok: true, messages: slackThread, has_more: false }, { threadId: ROOT })
    const e = createContextEngine({ path: ':memory:' }, { channelStore: store })
    const out = await assemble(e, THREAD)
    // It changes every turn: it is in the turn message after the kept ones, after what a
    // prompt cache reuses; the host's messages are its own objects, untouched.
    expect(turnBlock(out)).toMatch(/^<memory_for_this_turn>\n/)
    expect(turnBlock(out)).toContain(BLOCK)
    expect(out.messages.slice(0, -1)).toEqual(hostTurn)
    expect(out.messages[0]).toBe(hostTurn[0])
    // Counted in the estimate, which stays within the budget.
    expect(out.estimatedTokens).toBeGreaterThanOrEqual(Math.ceil(BLOCK.length / 4))
    expect(out.estimatedTokens).toBeLessThanOrEqual(50_000)
    // The limit, then nothing for a direct message, a top-level chat or another platform.
    const one = createContextEngine({ path: ':memory:', threadBlockLimit: 1 }, { channelStore: store })
    expect(seen(await assemble(one, THREAD))).toContain(
      '<slack_thread_context>\ndeploybot: Restarted 3 workers.\nCurrent question: are they running?\n</slack_thread_context>',
    )
    for (const key of [
      `agent:main:slack:direct:u1:thread:${ROOT}`,
      'agent:main:slack:channel:c07rollout',
      `agent:main:discord:channel:c07rollout:thread:${ROOT}`,
    ]) {
      expect(seen(await assemble(e, key))).not.toContain('slack_thread_context')
    }
    // Turned off; and a budget that cannot hold it leaves it out, noted.
    const off = createContextEngine({ path: ':memory:', threadBlock: false }, { channelStore: store })
    expect(seen(await assemble(off, THREAD))).not.toContain('slack_thread_context')
    const tight = createContextEngine({ path: ':memory:' }, { channelStore: store })
    const small = await assemble(tight, THREAD, 100)
    expect(seen(small)).not.toContain('slack_thread_context')
    expect(tight.diagnostics.map((d) => d.message).join(' ')).toMatch(/the Slack thread block \(\d+ tokens\) did not fit the budget \(100\); left out/)
    expect(e.diagnostics).toEqual([])
    await Promise.all([e, one, off, tight].map((x) => x.dispose()))
  })

  it('fetches the thread from Slack with the bot token once per cache lifetime, authors and mentions named from users.info', async () => {
    slack.calls.length = 0
    slack.setMode('ok')
    const e = createContextEngine({ path: ':memory:', slack: { botToken: 'xoxb-test', apiUrl: slack.url } })
    const out = await assemble(e, THREAD)
    expect(turnBlock(out)).toContain(BLOCK)
    expect(slack.calls.map((c) => c.method).sort()).toEqual(['conversations.replies', 'users.info', 'users.info', 'users.info'])
    expect(slack.calls.every((c) => c.auth === 'Bearer xoxb-test')).toBe(true)
    expect(slack.calls[0].params).toMatchObject({ channel: C, ts: ROOT })
    // The next turn within five minutes: the thread and the names come from the store.
    await assemble(e, THREAD)
    expect(slack.calls).toHaveLength(4)
    expect(e.diagnostics).toEqual([])
    await e.dispose()
  })

  it('answers without the block, and with a note, when Slack refuses or fails', async () => {
    for (const [mode, why] of [
      ['ratelimited', /conversations\.replies: rate limited \(HTTP 429\)/],
      ['error', /channel_not_found/],
    ] as const) {
      slack.calls.length = 0
      slack.setMode(mode)
      const e = createContextEngine({ path: ':memory:', slack: { botToken: 'xoxb-test', apiUrl: slack.url } })
      const out = await assemble(e, THREAD)
      expect(seen(out)).not.toContain('slack_thread_context')
      expect(e.diagnostics.map((d) => d.message).join(' ')).toMatch(why)
      await e.dispose()
    }
    slack.setMode('ok')
  })

  it('never shows the bot token in a config diagnostic', () => {
    const e = createContextEngine({ path: ':memory:', slack: { botToken: 'xoxb-secret', apiUrl: 'ftp://x' } })
    const said = e.diagnostics.map((d) => d.message).join(' ')
    expect(said).toMatch(/config\.slack: unusable value/)
    expect(said).not.toContain('xoxb-secret')
    // A token OpenClaw could not take from the environment is named as such.
    const unset = createContextEngine({ path: ':memory:', slack: { botToken: '${SLACK_BOT_TOKEN}' } })
    expect(unset.diagnostics.map((d) => d.message).join(' ')).toMatch(/\$\{SLACK_BOT_TOKEN\} is not set in the environment/)
  })
})
