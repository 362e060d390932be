// buildChannelTools, the drop-in for the original module: two plain, spreadable tools
// named channel.context / channel.messages, ranking over the input's messages, the
// input's fetcher for what the input does not hold, and clear errors for bad input.
import { describe, expect, it } from 'vitest'
import { buildChannelTools, type ChannelToolsInput } from '@openclaw/context-engine'
import { msg, thrown, ts } from './helpers'

const channel = { id: 'C0123', name: 'platform-eng', platform: 'slack' }

function input(extra: Partial<ChannelToolsInput> = {}): ChannelToolsInput {
  return {
    channel,
    messages: [
      msg(ts(0), 'Rollout plan for v2.4: canary Tuesday, full rollout Thursday.', { replyCount: 1 }),
      msg(ts(60), 'Lunch anyone?'),
      msg(ts(120), 'Le déploiement de auth-gateway a échoué, je fais un rollback.'),
      msg(ts(90), 'Canary looks healthy so far', { threadId: ts(0) }),
    ],
    ...extra,
  }
}

const parse = async (p: Promise<string>) => JSON.parse(await p)

describe('buildChannelTools', () => {
  it('returns two plain tools in the original shape, spreadable', () => {
    const tools = buildChannelTools(input())
    expect(tools.map((t) => t.name)).toEqual(['channel.context', 'channel.messages'])
    for (const t of tools) {
      const copy = { ...t }
      expect(Object.keys(copy).sort()).toEqual(['description', 'execute', 'name', 'parameters'])
      expect(copy.parameters).toMatchObject({ type: 'object', additionalProperties: false })
      expect(typeof copy.execute).toBe('function')
    }
  })

  it('channel.context ranks the input messages, replies included, accents folded', async () => {
    const [context] = buildChannelTools(input())
    const { ...spread } = context
    const r = await parse(spread.execute('call_1', { intent: 'what was the rollout plan?' }))
    expect(r.results[0].message_id).toBe(ts(0))
    expect(r.results[0].relevance_signal).toMatch(/^keyword:rollout,plan/)
    expect(r.results[0].thread_summary).toMatchObject({ reply_count: 1 })
    expect(r.coverage.messages_scanned).toBe(4)
    const fr = await parse(context.execute('call_2', { intent: 'deploiement echoue' }))
    expect(fr.results[0].message_id).toBe(ts(120))
    const reply = await parse(context.execute('call_3', { intent: 'is the canary healthy' }))
    expect(reply.results[0]).toMatchObject({ message_id: ts(90), thread_id: ts(0) })
  })

  it('channel.messages serves held messages and asks the fetcher for the rest', async () => {
    const asked: unknown[] = []
    const fetcher = {
      async fetchThread(req: { threadId: string }) {
        asked.push(['thread', req.threadId])
        return [msg(req.threadId, 'an older thread root'), msg(ts(-500), 'its reply', { threadId: req.threadId })]
      },
      async fetchMessages(req: { messageIds: string[] }) {
        asked.push(['messages', req.messageIds])
        return req.messageIds.filter((id) => id === ts(-900)).map((id) => msg(id, 'an old message'))
      },
    }
    const [, messages] = buildChannelTools(input({ fetcher }))
    const held = await parse(messages.execute('c1', { message_ids: [ts(60)] }))
    expect(held.messages.map((m: { text: string }) => m.text)).toEqual(['Lunch anyone?'])
    expect(asked).toEqual([])
    const mixed = await parse(messages.execute('c2', { message_ids: [ts(60), ts(-900), ts(-901)] }))
    expect(mixed.messages.map((m: { text: string }) => m.text)).toEqual(['Lunch anyone?', 'an old message'])
    expect(mixed.not_found).toEqual([ts(-901)])
    expect(asked).toEqual([['messages', [ts(-900), ts(-901)]]])
    const thread = await parse(messages.execute('c3', { thread_id: ts(-600) }))
    expect(thread.thread.root.text).toBe('an older thread root')
    expect(thread.thread.replies.map((r: { text: string }) => r.text)).toEqual(['its reply'])
    expect(asked).toHaveLength(2)
  })

  it('without a fetcher, what the input lacks is not found, with a note', async () => {
    const [, messages] = buildChannelTools(input())
    const r = await parse(messages.execute('c1', { thread_id: ts(-600) }))
    expect(r.not_found).toEqual([ts(-600)])
    expect(r.notes.join(' ')).toMatch(/fetch/i)
  })

  it('bad calls from the model resolve to errors it can read', async () => {
    const [context, messages] = buildChannelTools(input())
    expect((await parse(context.execute('c', { intent: 5 }))).error).toMatchObject({ code: 'invalid_input', field: 'intent', tool: 'channel.context' })
    expect((await parse(messages.execute('c', {}))).error.code).toBe('invalid_input')
  })

  it('rejects malformed input with errors that name the field', () => {
    expect(thrown(() => buildChannelTools(null as never))).toBeInstanceOf(TypeError)
    expect(thrown(() => buildChannelTools({ messages: [] } as never)).message).toMatch(/buildChannelTools: channel/)
    expect(thrown(() => buildChannelTools({ channel: { id: 7 }, messages: [] } as never)).message).toMatch(/channel\.id: expected a string/)
    expect(thrown(() => buildChannelTools({ channel: { id: '' }, messages: [] }))).toBeInstanceOf(RangeError)
    expect(thrown(() => buildChannelTools({ channel, messages: 'x' } as never)).message).toMatch(/messages: expected an array/)
    expect(thrown(() => buildChannelTools({ channel, messages: [], extra: 1 } as never)).message).toMatch(/extra: unknown field/)
    const bad = thrown(() => buildChannelTools({ channel, messages: [msg(ts(1), 'ok'), { text: 'no ts' } as never] }))
    expect(bad).toBeInstanceOf(TypeError)
    expect(bad.message).toMatch(/^buildChannelTools: messages\[1\]/)
    expect(thrown(() => buildChannelTools({ channel, messages: [], maxMediaBytes: -1 }))).toBeInstanceOf(RangeError)
    expect(thrown(() => buildChannelTools({ channel, messages: [], maxMediaBytes: -1 })).message).toMatch(/^buildChannelTools: maxMediaBytes/)
  })

  it('names a bad message field by its index in the input, even when replies go in after their roots', () => {
    // The reply comes first in the input but is ingested after its root: the error must
    // still point at messages[0], the caller's own index, with code and path to match.
    const reply = { ...msg(ts(90), 'a reply', { threadId: ts(0) }), author: { userId: 'U1', displayName: 7 } }
    const err = thrown(() => buildChannelTools({ channel, messages: [reply as never, msg(ts(0), 'root', { replyCount: 1 })] }))
    expect(err).toBeInstanceOf(TypeError)
    expect(err.message).toMatch(/^buildChannelTools: messages\[0\]\.author\.displayName: /)
    expect(err).toMatchObject({ code: 'ERR_INVALID_ARG_TYPE', path: 'messages[0].author.displayName' })
    const opt = thrown(() => buildChannelTools({ channel, messages: [], maxMediaBytes: 1.5 }))
    expect(opt).toMatchObject({ code: 'ERR_OUT_OF_RANGE', path: 'maxMediaBytes' })
  })
})
