// The runner's built-in before_session_create subscriber, called as the runner calls it:
// an event with or without structured channel input in, `{ systemPromptSections }` out.
import { execFileSync } from 'node:child_process'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { buildChannelSnapshot, buildThreadContext, coreSessionContextSubscriber, type StructuredContextInput } from '@openclaw/context-engine'
import { thrown } from './helpers'

const person = (id: string, name: string) => ({ authorId: id, authorName: name, authorIsBot: false })

function input(over: Partial<StructuredContextInput> = {}): StructuredContextInput {
  return {
    platform: 'slack',
    channelId: 'C07OPS',
    channelName: 'ops',
    channelType: 'group',
    anchor: { messageId: '1775853170.2', ts: '1775853170.2', ...person('U1', 'Bek'), text: 'is the ```canary``` done?', threadId: '1775853000.1' },
    adjacentMessages: [{ messageId: '1775853100.1', ts: '1775853100.1', ...person('U2', 'Ana'), text: 'deploy started', threadId: null, replyCount: 2, hasMedia: false, reactions: [':eyes: 1'] }],
    thread: null,
    fetcher: { fetchThread: async () => ({ replies: [], totalCount: 0 }), fetchMessages: async () => [] },
    ...over,
  } as StructuredContextInput
}

const thread = {
  rootMessageId: '1775853000.1',
  rootTs: '1775853000.1',
  ...Object.fromEntries(Object.entries(person('U2', 'Ana')).map(([k, v]) => [`root${k[0].toUpperCase()}${k.slice(1)}`, v])),
  rootText: 'canary for checkout',
  replies: [{ messageId: '1775853050.1', ts: '1775853050.1', ...person('U1', 'Bek'), text: 'at 10%' }],
  totalReplyCount: 1,
} as NonNullable<StructuredContextInput['thread']>

describe('coreSessionContextSubscriber(event)', () => {
  it('adds nothing to an event without structured input', () => {
    expect(coreSessionContextSubscriber({ systemPrompt: 'Base prompt.' })).toEqual({})
    expect(coreSessionContextSubscriber({ systemPrompt: 'Base prompt.', structuredContextInput: null })).toEqual({})
  })

  it('adds one section: the channel context, the thread context and the tools, in that order', () => {
    const result = coreSessionContextSubscriber({ systemPrompt: 'Base prompt.', structuredContextInput: input({ thread }) })
    expect(Object.keys(result)).toEqual(['systemPromptSections'])
    expect(result.systemPromptSections).toHaveLength(1)
    const s = result.systemPromptSections![0]
    const order = ['### Channel Context', '### Thread Context', '### Channel Tools'].map((h) => s.indexOf(h))
    expect(order.every((i, k) => i >= 0 && (k === 0 || i > order[k - 1]))).toBe(true)
    // The snapshot and thread are the package's own, indented; text cannot close the fence.
    const fenced = [...s.matchAll(/```json\n([\s\S]*?)\n```/g)].map((m) => JSON.parse(m[1]))
    expect(fenced).toEqual([buildChannelSnapshot(input({ thread })), buildThreadContext(thread)])
    expect(s.match(/```/g)).toHaveLength(4)
    for (const tool of ['channel.context', 'channel.messages', 'compacted']) expect(s).toContain(tool)
  })

  it('leaves the thread out without one, and gives a direct message the one tool that works there', () => {
    const s = coreSessionContextSubscriber({ structuredContextInput: input() }).systemPromptSections![0]
    expect(s).not.toContain('Thread Context')
    const dm = coreSessionContextSubscriber({ structuredContextInput: input({ channelType: 'direct' }) }).systemPromptSections![0]
    expect(dm).toContain('### Channel Context')
    expect(dm).toContain('returns empty results in DMs')
    expect(dm).not.toContain('searches the channel')
  })

  it('checks what it reads and names the field', () => {
    expect(thrown(() => coreSessionContextSubscriber(null as never)).message).toMatch(/^coreSessionContextSubscriber: event: expected an object/)
    const bad = input() as unknown as { anchor: Record<string, unknown> }
    bad.anchor.text = 5
    const e = thrown(() => coreSessionContextSubscriber({ structuredContextInput: bad as never }))
    expect(e).toBeInstanceOf(TypeError)
    expect(e.message).toMatch(/^coreSessionContextSubscriber: event\.structuredContextInput\.anchor\.text: /)
  })

  it("takes a thread whose replies are the channel's own message objects, extra fields and all", () => {
    const replies = thread.replies.map((r) => ({ ...r, threadId: thread.rootTs, replyCount: 0, reactions: [':eyes: 1'], hasMedia: false }))
    const t = buildThreadContext({ ...thread, replies, channelType: 'group' } as never)
    expect(t).toEqual(buildThreadContext(thread))
  })

  it('works from a native ESM import in a child process', () => {
    const script = `import { coreSessionContextSubscriber } from '@openclaw/context-engine'
const r = coreSessionContextSubscriber({ structuredContextInput: ${JSON.stringify({ ...input(), fetcher: undefined })} })
process.stdout.write(String(r.systemPromptSections[0].startsWith('### Channel Context')))`
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: join(__dirname, '..'), encoding: 'utf8' })
    expect(out).toBe('true')
  })
})
