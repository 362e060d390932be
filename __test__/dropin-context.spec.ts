// The drop-in context functions called as the Claude SDK runner calls its own
// context/channel-snapshot and context/thread-context modules: the runner's flat
// StructuredContextInput and thread shape in, the runner's output out (timestamps as
// given, its budget rule, its telemetry). Read side by side with those modules'
// signatures: buildChannelSnapshot(input), buildThreadContext(thread, budgetTokens?),
// buildThreadContextWithTelemetry(thread, budgetTokens?).
import { describe, expect, it } from 'vitest'
import {
  buildChannelSnapshot,
  createAttachmentManifest,
  recordAttachment,
  buildThreadContext,
  buildThreadContextWithTelemetry,
  estimateTokens,
  type StructuredContextInput,
  type ThreadDataInput,
} from '@openclaw/context-engine'
import { thrown } from './helpers'

const person = (id: string, name: string) => ({ authorId: id, authorName: name, authorIsBot: false })

function input(): StructuredContextInput {
  return {
    platform: 'slack',
    channelId: 'C07ROLLOUT',
    channelName: 'rollout',
    channelType: 'group',
    anchor: {
      messageId: '1775853170.228819',
      ts: '1775853170.228819',
      ...person('U1', 'Bek'),
      text: 'can someone check the deploy?',
      threadId: null,
      files: [{ artifactId: 'F1', mimeType: 'image/png', filename: 'graph.png', byteLength: 4096 }, { artifactId: 'F2', mimeType: 'text/plain', byteLength: 10 }],
    },
    adjacentMessages: [
      { messageId: '1775853100.000100', ts: '1775853100.000100', ...person('U2', 'Ana'), text: '  deploy   started\n\nby the bot  ', threadId: null, replyCount: 3, hasMedia: false, reactions: [':eyes: 2'] },
      { messageId: '1775853170.228819', ts: '1775853170.228819', ...person('U1', 'Bek'), text: 'the anchor again', threadId: null, replyCount: 0, hasMedia: true, reactions: [] },
      { messageId: '1775853200.000100', ts: '1775853200.000100', authorId: 'B1', authorName: 'Deploy Bot', authorIsBot: true, text: 'x'.repeat(400), threadId: null, replyCount: 0, hasMedia: true, reactions: [] },
    ],
    thread: null,
    fetcher: { fetchThread: async () => ({ replies: [], totalCount: 0 }), fetchMessages: async () => [] },
  }
}

function thread(replyTexts: string[], total = replyTexts.length): ThreadDataInput {
  return {
    rootMessageId: '1775853000.000100',
    rootTs: '1775853000.000100',
    rootAuthorId: 'U0',
    rootAuthorName: 'Omar',
    rootAuthorIsBot: false,
    rootText: 'Incident: checkout latency is up',
    rootFiles: [{ artifactId: 'F9', mimeType: 'application/pdf', byteLength: 1 }],
    replies: replyTexts.map((text, i) => ({ messageId: `1775853001.00000${i}`, ts: `1775853001.00000${i}`, ...person(`U${i}`, `P${i}`), text })),
    totalReplyCount: total,
  }
}

describe("buildChannelSnapshot(input) in the runner's shape", () => {
  it('builds the runner snapshot: flat authors, ts as given, files as media, the anchor left out of adjacent', () => {
    const s = buildChannelSnapshot(input())
    expect(s.schema_version).toBe('1.0')
    expect(s.channel).toEqual({ id: 'C07ROLLOUT', name: 'rollout', platform: 'slack' })
    expect(s.anchor).toEqual({
      message_id: '1775853170.228819',
      ts: '1775853170.228819',
      author: { user_id: 'U1', display_name: 'Bek', is_bot: false },
      text: 'can someone check the deploy?',
      media: [
        { artifact_id: 'F1', media_type: 'image/png', filename: 'graph.png', byte_length: 4096 },
        { artifact_id: 'F2', media_type: 'text/plain', filename: null, byte_length: 10 },
      ],
      thread_id: null,
    })
    expect(s.adjacent.map((a) => a.message_id)).toEqual(['1775853100.000100', '1775853200.000100'])
    expect(s.adjacent[0]).toEqual({
      message_id: '1775853100.000100',
      ts: '1775853100.000100',
      author: { user_id: 'U2', display_name: 'Ana', is_bot: false },
      snippet: 'deploy started by the bot',
      thread_activity: { reply_count: 3, replies_last_1h: 0, last_reply_ts: null },
      has_media: false,
      reactions: [':eyes: 2'],
    })
    expect(s.adjacent[1].snippet).toHaveLength(150)
    expect(s.adjacent[1].snippet.endsWith('…')).toBe(true)
    expect(s.adjacent[1].thread_activity).toBeNull()
    expect(s.adjacent[1].author.is_bot).toBe(true)
  })

  it('ignores what the runner does not read, as the runner did, and still checks what it reads', () => {
    const plain = buildChannelSnapshot(input())
    // Channel message objects as adjacent messages: their own fields, no channelType.
    const extra = input() as unknown as { adjacentMessages: Array<Record<string, unknown>>; channelType?: string }
    extra.adjacentMessages[0].files = []
    extra.adjacentMessages[0].permalink = 'https://example.slack.com/p1'
    delete extra.channelType
    expect(buildChannelSnapshot(extra as never)).toEqual(plain)
    expect(buildChannelSnapshot({ ...input(), channelType: 'channel' } as never)).toEqual(plain)
    // replyCount, hasMedia and reactions may be absent: no activity, no media, none.
    const bare = input() as unknown as { adjacentMessages: Array<Record<string, unknown>> }
    for (const k of ['replyCount', 'hasMedia', 'reactions']) delete bare.adjacentMessages[0][k]
    expect(buildChannelSnapshot(bare as never).adjacent[0]).toMatchObject({ thread_activity: null, has_media: false, reactions: [] })
    // A field it reads, missing or of the wrong type, is still a TypeError with its path.
    const missing = input() as unknown as { anchor: Record<string, unknown> }
    delete missing.anchor.authorName
    expect(thrown(() => buildChannelSnapshot(missing as never)).message).toMatch(/anchor\.authorName: is required/)
    const wrong = input() as unknown as { adjacentMessages: Array<Record<string, unknown>> }
    wrong.adjacentMessages[0].replyCount = 'three'
    const e = thrown(() => buildChannelSnapshot(wrong as never))
    expect(e).toBeInstanceOf(TypeError)
    expect(e.message).toMatch(/^buildChannelSnapshot: adjacentMessages\[0\]\.replyCount: /)
  })
})

describe("buildThreadContext(thread, budgetTokens?) in the runner's shape", () => {
  it('keeps the newest replies whose text fits the budget; the root is free and always in full', () => {
    const replies = Array.from({ length: 10 }, (_, i) => `${i}`.padEnd(400, '.')) // 100 tokens each
    const t = buildThreadContext(thread(replies, 12), 250)!
    expect(t.thread_id).toBe('1775853000.000100')
    expect(t.root).toEqual({
      message_id: '1775853000.000100',
      ts: '1775853000.000100',
      author: { user_id: 'U0', display_name: 'Omar', is_bot: false },
      text: 'Incident: checkout latency is up',
      media: [{ artifact_id: 'F9', media_type: 'application/pdf', filename: null, byte_length: 1 }],
    })
    expect(t.replies.map((r) => r.text[0])).toEqual(['8', '9'])
    expect(t.truncation).toEqual({ total_replies: 12, included_replies: 2, strategy: 'most_recent', omitted_range_ts: ['1775853001.000000', '1775853001.000007'] })
  })

  it('always keeps the newest reply, cut to 300 tokens with an ellipsis', () => {
    const t = buildThreadContext(thread(['short', 'z'.repeat(8_000)]), 10)!
    expect(t.replies).toHaveLength(1)
    expect(t.replies[0].is_truncated).toBe(true)
    expect(t.replies[0].text).toBe('z'.repeat(1199) + '…')
  })

  it('a thread without replies is still a ThreadContext; null is null', () => {
    const t = buildThreadContext(thread([], 0))!
    expect(t.replies).toEqual([])
    expect(t.truncation).toEqual({ total_replies: 0, included_replies: 0, strategy: 'most_recent', omitted_range_ts: null })
    expect(buildThreadContext(null)).toBeNull()
  })

  it('reports the budget as the runner did: { threadContext, budgetUtilization }', () => {
    const replies = ['a'.repeat(40), 'b'.repeat(4000), 'c'.repeat(8)]
    const out = buildThreadContextWithTelemetry(thread(replies), 1005)
    expect(out.threadContext!.replies.map((r) => r.text[0])).toEqual(['b', 'c'])
    // actualTokens: the included replies' text before the 300-token cut.
    expect(out.budgetUtilization).toEqual({ threadBudgetTokens: 1005, actualTokens: estimateTokens(replies[1]) + estimateTokens(replies[2]), messagesTruncated: 1 })
    expect(buildThreadContextWithTelemetry(thread(replies)).budgetUtilization!.threadBudgetTokens).toBe(8000)
    expect(buildThreadContextWithTelemetry(null)).toEqual({ threadContext: null })
  })
})

describe("recordAttachment(manifest, params) with the runner's params", () => {
  it('takes camelCase params with `turn` and stores the record under its artifact id', () => {
    const m = createAttachmentManifest()
    recordAttachment(m, { artifactId: 'F1', displayName: 'graph.png', mediaType: 'image/png', contentHash: 'ab'.repeat(32), sourceMessageId: '1.1', sourceThreadId: null, turn: 3 })
    expect(m.entries.F1).toEqual({ artifact_id: 'F1', display_name: 'graph.png', media_type: 'image/png', content_hash: 'ab'.repeat(32), source_message_id: '1.1', source_thread_id: null, included_at_turn: 3 })
  })
})
