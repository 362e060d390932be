import { describe, expect, it } from 'vitest'
import { ChannelStore, formatSlackThreadContext } from '@openclaw/context-engine'

const C = 'C07ROLLOUT'
const T0 = 1775835600000
const ts = (s: number) => `${T0 / 1000 + s}.000100`
const msg = (s: number, user: string, text: string, thread?: number, extra: Record<string, unknown> = {}) => ({
  type: 'message',
  ts: ts(s),
  user,
  text,
  ...(thread === undefined ? {} : { thread_ts: ts(thread) }),
  ...extra,
})

function store(fetchThread?: () => Promise<unknown>) {
  const s = new ChannelStore({ clock: () => T0 + 600_000, fetcher: fetchThread ? { fetchThread } : undefined })
  s.setUsers([
    { userId: 'U1', displayName: 'Alice' },
    { userId: 'B1', displayName: 'deploybot', isBot: true },
  ])
  return s
}

const replies = [
  msg(100, 'U1', 'is the import job stuck?', 100, { reply_count: 3 }),
  msg(110, 'B1', 'Restarted 3 workers.', 100),
  msg(120, 'U1', 'are they running?', 100),
  msg(130, 'B1', 'a later reply', 100),
]

describe('the thread-history block', () => {
  it('gives the earlier messages of the thread by name, bots included, then the current question', async () => {
    const s = store()
    s.ingestSlackResponse(C, { ok: true, messages: replies, has_more: false }, { threadId: ts(100) })
    const r = await s.threadContextBlock(C, ts(120), { threadId: ts(100) })
    expect(r.block).toBe(
      '<slack_thread_context>\nAlice: is the import job stuck?\ndeploybot: Restarted 3 workers.\nCurrent question: are they running?\n</slack_thread_context>',
    )
    expect(r.apiCalls).toBe(0)
    expect((await s.threadContextBlock(C, ts(120), { threadId: ts(100), limit: 1 })).block.split('\n')).toEqual([
      '<slack_thread_context>',
      'deploybot: Restarted 3 workers.',
      'Current question: are they running?',
      '</slack_thread_context>',
    ])
  })

  it('fetches the thread once on a miss, and without it gives what is held and a note', async () => {
    let calls = 0
    const ok = store(async () => (calls++, { ok: true, messages: replies, has_more: false }))
    ok.ingestSlackEvent({ type: 'message', channel: C, ...msg(120, 'U1', 'are they running?', 100) })
    const r = await ok.threadContextBlock(C, ts(120), { threadId: ts(100) })
    expect(calls).toBe(1)
    expect(r.block).toContain('deploybot: Restarted 3 workers.')
    const failing = store(async () => Promise.reject(new Error('ratelimited')))
    failing.ingestSlackEvent({ type: 'message', channel: C, ...msg(120, 'U1', 'are they running?', 100) })
    const f = await failing.threadContextBlock(C, ts(120), { threadId: ts(100) })
    expect(f.block).toBe('')
    expect(f.notes.join(' ')).toMatch(/conversations\.replies failed/)
  })

  it('gives nothing for a top-level message or the first message of a thread', async () => {
    const s = store()
    s.ingestSlackResponse(C, { ok: true, messages: [msg(50, 'U1', 'top level')], has_more: false })
    expect((await s.threadContextBlock(C, ts(50))).block).toBe('')
    s.ingestSlackResponse(C, { ok: true, messages: replies, has_more: false }, { threadId: ts(100) })
    expect((await s.threadContextBlock(C, ts(100))).block).toBe('')
    expect(formatSlackThreadContext({ messages: [], currentQuestion: 'hi' })).toBe('')
  })

  it('without a message id takes the newest human message of the thread as the current question', async () => {
    let calls = 0
    const s = store(async () => (calls++, { ok: true, messages: replies, has_more: false }))
    // Nothing held: the thread is fetched once (root included), then served from the cache.
    const r = await s.threadContextBlock(C, null, { threadId: ts(100) })
    expect(r.block).toBe(
      '<slack_thread_context>\nAlice: is the import job stuck?\ndeploybot: Restarted 3 workers.\nCurrent question: are they running?\n</slack_thread_context>',
    )
    expect([calls, r.apiCalls]).toEqual([1, 1])
    expect((await s.threadContextBlock(C, undefined, { threadId: ts(100) })).apiCalls).toBe(0)
    expect(calls).toBe(1)
    // A thread holding only its root has nothing before the current question.
    const lone = store()
    lone.ingestSlackResponse(C, { ok: true, messages: [replies[0]], has_more: false }, { threadId: ts(100) })
    expect((await lone.threadContextBlock(C, null, { threadId: ts(100) })).block).toBe('')
    // Without the thread either, there is nothing to anchor on: a TypeError naming it.
    await expect(s.threadContextBlock(C, null)).rejects.toThrow(/threadContextBlock: .*threadId/)
  })

  it('writes Slack text as it reads: entities decoded, mentions, channels and links by name, escaped once', async () => {
    const s = store()
    s.setChannel({ id: 'C9', name: 'deploys' })
    s.setUsers([{ userId: 'U2', displayName: 'Bob' }])
    const thread = [
      msg(100, 'U1', 'is a &lt; b &amp;&amp; c &gt; d?', 100, { reply_count: 2 }),
      msg(110, 'B1', '<@U2> see <#C9> and <#C1|general>, <https://runbook.example/x?a=1&amp;b=2|the runbook>, <!here>', 100),
      msg(120, 'U1', 'ok <@U3|carol>?', 100),
    ]
    s.ingestSlackResponse(C, { ok: true, messages: thread, has_more: false }, { threadId: ts(100) })
    const { block } = await s.threadContextBlock(C, ts(120), { threadId: ts(100) })
    expect(block).toBe(
      '<slack_thread_context>\nAlice: is a &lt; b &amp;&amp; c &gt; d?\ndeploybot: @Bob see #deploys and #general, the runbook, @here\nCurrent question: ok @carol?\n</slack_thread_context>',
    )
    // The same text in the prompt section, once decoded (JSON escapes it its own way).
    const built = await s.buildContext(C, ts(120), { threadId: ts(100) })
    expect(built.thread?.root.text).toBe('is a < b && c > d?')
    expect(built.promptSection).toContain('@Bob see #deploys and #general, the runbook, @here')
    expect(built.promptSection).not.toContain('&lt;')
  })

  it('refuses an unknown option or a bad limit under its own name', async () => {
    const s = store()
    s.ingestSlackResponse(C, { ok: true, messages: replies, has_more: false }, { threadId: ts(100) })
    await expect(s.threadContextBlock(C, ts(120), { threadId: ts(100), lmit: 5 } as never)).rejects.toMatchObject({
      name: 'TypeError',
      code: 'ERR_INVALID_ARG_TYPE',
      path: 'options.lmit',
      message: expect.stringMatching(/^ChannelStore.threadContextBlock: options\.lmit: unknown field/),
    })
    for (const limit of [-1, 2.5, Number.NaN]) {
      await expect(s.threadContextBlock(C, ts(120), { threadId: ts(100), limit })).rejects.toMatchObject({
        name: 'RangeError',
        path: 'options.limit',
        message: expect.stringMatching(/^ChannelStore.threadContextBlock: options\.limit: /),
      })
    }
    await expect(s.threadContextBlock(C, ts(120), { threadId: ts(100), limit: '5' } as never)).rejects.toMatchObject({ path: 'options.limit', message: expect.stringMatching(/^ChannelStore.threadContextBlock: /) })
    await expect(s.threadContextBlock(C, ts(120), 5 as never)).rejects.toMatchObject({ name: 'TypeError', path: 'options' })
    expect((await s.threadContextBlock(C, ts(120), { threadId: ts(100), limit: 0 })).block).toBe('')
  })
})
