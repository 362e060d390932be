// buildChannelTools called as the Claude SDK runner calls its own context/tools module:
// its StructuredContextInput and fetcher in, its two tools out, each execute resolving to
// a tool result { content: [{ type: 'text', text }], details } whose payloads and error
// texts are the runner's. The ranking is the engine's (accents folded, words stemmed),
// which finds at least what the runner's word count found.
import { describe, expect, it } from 'vitest'
import { buildChannelTools, channelToolsFactory, type RunnerChannelFetcher, type StructuredContextInput } from '@openclaw/context-engine'

const who = (id: string, name: string) => ({ authorId: id, authorName: name, authorIsBot: false })

function input(fetcher: Partial<RunnerChannelFetcher> = {}): StructuredContextInput & { fetcher: RunnerChannelFetcher } {
  return {
    platform: 'slack',
    channelId: 'C07ROLLOUT',
    channelName: 'rollout',
    channelType: 'group',
    anchor: { messageId: '1775853300.000100', ts: '1775853300.000100', ...who('U1', 'Bek'), text: 'what was the rollout plan?', threadId: null },
    adjacentMessages: [
      { messageId: '1775853000.000100', ts: '1775853000.000100', ...who('U2', 'Ana'), text: 'Rollout plan for v2.4: canary Tuesday, full rollout Thursday', threadId: null, replyCount: 2, hasMedia: false, reactions: [] },
      { messageId: '1775853100.000100', ts: '1775853100.000100', ...who('U3', 'Jo'), text: 'lunch anyone?', threadId: null, replyCount: 0, hasMedia: true, reactions: [] },
      { messageId: '1775853200.000100', ts: '1775853200.000100', ...who('U5', 'Lucía'), text: 'Le déploiement a échoué', threadId: null, replyCount: 0, hasMedia: false, reactions: [] },
      { messageId: '1775853300.000100', ts: '1775853300.000100', ...who('U1', 'Bek'), text: 'what was the rollout plan?', threadId: null, replyCount: 0, hasMedia: false, reactions: [] },
    ],
    thread: {
      rootMessageId: '1775853000.000100',
      rootTs: '1775853000.000100',
      rootAuthorId: 'U2',
      rootAuthorName: 'Ana',
      rootAuthorIsBot: false,
      rootText: 'Rollout plan for v2.4: canary Tuesday, full rollout Thursday',
      replies: [{ messageId: '1775853010.000100', ts: '1775853010.000100', ...who('U4', 'Li'), text: 'the canary rollout is healthy', files: [{ artifactId: 'F9', mimeType: 'image/png', byteLength: 3 }] }],
      totalReplyCount: 2,
    },
    fetcher: {
      fetchThread: async () => ({ replies: [], totalCount: 0 }),
      fetchMessages: async () => [],
      ...fetcher,
    },
  }
}

const details = async (p: Promise<{ content: Array<{ type: string; text?: string }>; details: unknown }>) => {
  const r = await p
  expect(r.content[0].type).toBe('text')
  expect(JSON.parse(r.content[0].text!)).toEqual(JSON.parse(JSON.stringify(r.details)))
  return r.details as Record<string, any>
}

describe("buildChannelTools(StructuredContextInput): the runner's tools", () => {
  it('returns channel.context and channel.messages, whose execute resolves to tool results', async () => {
    const tools = buildChannelTools(input())
    expect(tools.map((t) => t.name)).toEqual(['channel.context', 'channel.messages'])
    expect(tools[0].parameters).toMatchObject({ type: 'object', required: ['intent'] })
    const r = await tools[0].execute('call_1', { intent: 'rollout plan' })
    expect(r.content[0].text).toBe(JSON.stringify(r.details, null, 2))
  })

  it('channel.context: matches first (thread replies searched, anchor and duplicates left out), then recent media', async () => {
    const [context] = buildChannelTools(input())
    const d = await details(context.execute('c', { intent: 'rollout plan' }))
    expect(d.results.map((r: any) => [r.message_id, r.relevance_signal])).toEqual([
      ['1775853000.000100', 'keyword_match:rollout,plan'],
      ['1775853010.000100', 'keyword_match:rollout,plan'],
      ['1775853100.000100', 'recent_media'],
    ])
    expect(d.results[0]).toEqual({
      message_id: '1775853000.000100',
      thread_id: null,
      ts: '1775853000.000100',
      author: { user_id: 'U2', display_name: 'Ana', is_bot: false },
      text: 'Rollout plan for v2.4: canary Tuesday, full rollout Thursday',
      thread_summary: { reply_count: 2, last_reply_ts: null, participant_names: [] },
      relevance_signal: 'keyword_match:rollout,plan',
    })
    expect(d.results[1]).toMatchObject({ thread_id: '1775853000.000100', has_media: true, thread_summary: null })
    // The root is among the adjacent messages, so only the reply is added from the thread.
    expect(d.coverage).toEqual({ messages_scanned: 4, time_range: ['1775853000.000100', '1775853010.000100'] })
    expect(d.pagination).toEqual({ total: 3, offset: 0, limit: 8 })
    const page = await details(context.execute('c', { intent: 'rollout plan', offset: 1, max_results: 1 }))
    expect(page.results.map((r: any) => r.message_id)).toEqual(['1775853010.000100'])
    expect(page.pagination).toEqual({ total: 3, offset: 1, limit: 1 })
  })

  it('channel.context finds what the words mean, accents and word forms included', async () => {
    const [context] = buildChannelTools(input())
    const d = await details(context.execute('c', { intent: 'deploiement echoue' }))
    expect(d.results[0].message_id).toBe('1775853200.000100')
    expect(await details(context.execute('c', {}))).toEqual({ error: 'Missing required parameter: intent' })
  })

  it('channel.messages: the snapshot thread by its root ts, another thread through fetchThread(threadId, maxReplies)', async () => {
    const asked: unknown[] = []
    const [, messages] = buildChannelTools(
      input({
        async fetchThread(threadId, maxReplies) {
          asked.push([threadId, maxReplies])
          return { root: { messageId: threadId, ts: threadId, ...who('U9', 'Old'), text: 'an older thread' }, replies: [{ messageId: '1775852001.000100', ts: '1775852001.000100', ...who('U8', 'X'), text: 'its reply' }], totalCount: 1 }
        },
      }),
    )
    const own = await details(messages.execute('m', { thread_id: '1775853000.000100' }))
    expect(own.thread.root.text).toMatch(/^Rollout plan/)
    expect(own.thread.truncation.total_replies).toBe(2)
    expect(asked).toEqual([])
    const other = await details(messages.execute('m', { thread_id: '1775852000.000100' }))
    expect(asked).toEqual([['1775852000.000100', 50]])
    expect(other.thread).toMatchObject({ thread_id: '1775852000.000100', root: { text: 'an older thread', author: { display_name: 'Old' } } })
    expect(other.thread.replies.map((r: any) => r.text)).toEqual(['its reply'])
    await messages.execute('m', { thread_id: '1775852000.000100', max_replies: 5 })
    expect(asked[1]).toEqual(['1775852000.000100', 5])
  })

  it('channel.messages: errors are results with the runner texts, never rejections', async () => {
    const [, messages] = buildChannelTools(input({ fetchThread: async () => Promise.reject(new Error('boom')) }))
    expect(await details(messages.execute('m', { thread_id: '1.1' }))).toEqual({ error: 'Thread 1.1 not found in channel snapshot' })
    expect(await details(messages.execute('m', { media_artifact_id: 'F1' }))).toEqual({ error: 'Media retrieval is not supported by this channel fetcher.' })
    expect(await details(messages.execute('m', {}))).toEqual({ error: 'No valid query parameters provided' })
    // 15 fetches a minute per tool set; the first call above was one.
    for (let i = 0; i < 14; i++) await messages.execute('m', { thread_id: `2.${i}` })
    expect(await details(messages.execute('m', { thread_id: '3.0' }))).toEqual({ error: 'Rate limit reached. Stop fetching messages and answer using the context you have.' })
  })

  it('channel.messages: snapshot messages by id, and media through fetchMedia as an image block', async () => {
    const [, messages] = buildChannelTools(input({ fetchMedia: async () => ({ mimeType: 'image/png', data: new Uint8Array([137, 80, 78, 71]) }) }))
    const m = await details(messages.execute('m', { message_ids: ['1775853100.000100', 'unknown'] }))
    expect(m).toEqual({ messages: [{ message_id: '1775853100.000100', ts: '1775853100.000100', author: { user_id: 'U3', display_name: 'Jo', is_bot: false }, text: 'lunch anyone?', media: [] }] })
    const r = await messages.execute('m', { media_artifact_id: 'F9' })
    expect(r.details).toEqual({ media: { artifact_id: 'F9', media_type: 'image/png', content: 'iVBORw==' } })
    expect(r.content[1]).toEqual({ type: 'image', data: 'iVBORw==', mimeType: 'image/png' })
    const [, failing] = buildChannelTools(input({ fetchMedia: async () => Promise.reject(new Error('403')) }))
    expect(await details(failing.execute('m', { media_artifact_id: 'F9' }))).toEqual({ error: 'Failed to fetch media F9' })
  })

  it('works with ids that are not platform timestamps (the ranking falls back to a word count)', async () => {
    const i = input()
    i.adjacentMessages = i.adjacentMessages.map((m, n) => ({ ...m, messageId: `msg-${n}`, ts: `msg-${n}` }))
    i.anchor = { ...i.anchor, messageId: 'msg-3', ts: 'msg-3' }
    i.thread = null
    const [context] = buildChannelTools(i)
    const d = await details(context.execute('c', { intent: 'rollout plan' }))
    expect(d.results[0].message_id).toBe('msg-0')
  })

  it('names a bad field of the runner input after itself, and ignores fields the runner did not read', () => {
    const bad = input() as unknown as { anchor: Record<string, unknown> }
    bad.anchor.text = 5
    expect(() => buildChannelTools(bad as never)).toThrow(/^buildChannelTools: anchor\.text/)
    expect(buildChannelTools({ ...input(), channelType: 'channel', extra: true } as never).map((t) => t.name)).toEqual(['channel.context', 'channel.messages'])
  })
})

describe('channelToolsFactory(ctx)', () => {
  it("gives the runner's two tools, labelled, for a context with structured input, none without", () => {
    const tools = channelToolsFactory({ structuredContextInput: input() })
    expect(tools.map((t) => [t.name, t.label])).toEqual([
      ['channel.context', 'channel.context'],
      ['channel.messages', 'channel.messages'],
    ])
    for (const t of tools) expect(t.description.length).toBeGreaterThan(0)
    expect(channelToolsFactory({ structuredContextInput: { ...input(), channelType: 'direct' } }).map((t) => t.name)).toEqual(['channel.context', 'channel.messages'])
    expect(channelToolsFactory({})).toEqual([])
    expect(channelToolsFactory({ structuredContextInput: null })).toEqual([])
    const bad = input() as unknown as { anchor: Record<string, unknown> }
    bad.anchor.text = 5
    expect(() => channelToolsFactory({ structuredContextInput: bad as never })).toThrow(/^channelToolsFactory: ctx\.structuredContextInput\.anchor\.text/)
  })
})
