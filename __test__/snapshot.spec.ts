import { describe, expect, it } from 'vitest'
import { buildChannelSnapshot } from '@openclaw/context-engine'
import { msg, snapshotInput, thrown, ts } from './helpers'

describe('buildChannelSnapshot', () => {
  it("produces exactly the seed's ChannelSnapshot fields", () => {
    const s = buildChannelSnapshot(snapshotInput(3))
    expect(Object.keys(s)).toEqual(['schema_version', 'channel', 'anchor', 'adjacent'])
    expect(s.schema_version).toBe('1.0')
    expect(s.channel).toEqual({ id: 'C0123', name: 'platform-eng', platform: 'slack' })
    expect(Object.keys(s.anchor)).toEqual(['message_id', 'ts', 'author', 'text', 'media', 'thread_id'])
    expect(Object.keys(s.adjacent[0])).toEqual([
      'message_id',
      'ts',
      'author',
      'snippet',
      'thread_activity',
      'has_media',
      'reactions',
    ])
    expect(Object.keys(s.anchor.author)).toEqual(['user_id', 'display_name', 'is_bot'])
  })

  it('keeps the anchor text in full and converts Slack ts to ISO-8601', () => {
    const long = 'Long anchor. '.repeat(500)
    const input = snapshotInput(2, long)
    input.anchor.ts = '1775853000.123456'
    input.anchor.threadId = '1775852000.000100'
    const s = buildChannelSnapshot(input)
    expect(s.anchor.text).toBe(long)
    expect(s.anchor.ts).toBe('2026-04-10T20:30:00.123456Z')
    expect(s.anchor.message_id).toBe('1775853000.123456')
    expect(s.anchor.thread_id).toBe('1775852000.000100')
  })

  it('excludes the anchor from adjacent messages and snippets the rest', () => {
    const input = snapshotInput(3)
    input.adjacentMessages.push({ ...input.anchor })
    input.adjacentMessages.push(msg(ts(9999), `  multi\n\nline   text ${'z'.repeat(300)}`))
    const s = buildChannelSnapshot(input)
    expect(s.adjacent.map((a) => a.message_id)).not.toContain(input.anchor.ts)
    expect(s.adjacent).toHaveLength(4)
    const last = s.adjacent[3]
    expect(last.snippet.startsWith('multi line text zzz')).toBe(true)
    expect(last.snippet).toHaveLength(150)
    expect(last.snippet.endsWith('…')).toBe(true)
  })

  it('reports thread activity, media and reactions', () => {
    const input = snapshotInput(0)
    input.adjacentMessages = [
      msg(ts(1), 'root of a busy thread', {
        replyCount: 14,
        repliesLast1h: 3,
        lastReplyTs: '1775853170.228819',
        reactions: [
          { name: 'white_check_mark', count: 3 },
          { name: ':eyes:', count: 1 },
        ],
        media: [{ artifactId: 'F07', mediaType: 'image/png', filename: 'graph.png', byteLength: 48_213 }],
      }),
      msg(ts(2), 'quiet message', { replyCount: 0 }),
      msg(ts(3), 'file mentioned without refs', { hasMedia: true }),
    ]
    const [busy, quiet, flagged] = buildChannelSnapshot(input).adjacent
    expect(busy.thread_activity).toEqual({ reply_count: 14, replies_last_1h: 3, last_reply_ts: '2026-04-10T20:32:50.228819Z' })
    expect(busy.reactions).toEqual([':white_check_mark: 3', ':eyes: 1'])
    expect(busy.has_media).toBe(true)
    expect(quiet.thread_activity).toBeNull()
    expect(quiet.has_media).toBe(false)
    expect(quiet.reactions).toEqual([])
    expect(flagged.has_media).toBe(true)
  })

  it('passes media references through in the seed schema', () => {
    const input = snapshotInput(0)
    input.anchor.media = [
      { artifactId: 'F1', mediaType: 'application/pdf', filename: 'spec.pdf', byteLength: 1024 },
      { artifactId: 'F2', mediaType: 'image/jpeg', filename: null, byteLength: 0 },
    ]
    expect(buildChannelSnapshot(input).anchor.media).toEqual([
      { artifact_id: 'F1', media_type: 'application/pdf', filename: 'spec.pdf', byte_length: 1024 },
      { artifact_id: 'F2', media_type: 'image/jpeg', filename: null, byte_length: 0 },
    ])
  })

  it('marks bots and keeps non-English text and emoji intact', () => {
    const input = snapshotInput(0, 'デプロイは完了しました 🚀 — Überprüfung läuft, ¿alguien más? 👩‍💻')
    input.anchor.author = { userId: 'B01', displayName: 'Deploy Bot', isBot: true }
    const s = buildChannelSnapshot(input)
    expect(s.anchor.text).toBe('デプロイは完了しました 🚀 — Überprüfung läuft, ¿alguien más? 👩‍💻')
    expect(s.anchor.author).toEqual({ user_id: 'B01', display_name: 'Deploy Bot', is_bot: true })
  })

  it('names the path of a missing or mistyped field', () => {
    const input = snapshotInput(5)
    delete (input.adjacentMessages[3] as Partial<typeof input.anchor>).ts
    const e = thrown(() => buildChannelSnapshot(input))
    expect(e).toBeInstanceOf(TypeError)
    expect(e.message).toBe('buildChannelSnapshot: adjacentMessages[3].ts: is required')

    const typed = snapshotInput(2)
    ;(typed.adjacentMessages[1] as unknown as Record<string, unknown>).text = 42
    const t = thrown(() => buildChannelSnapshot(typed))
    expect(t).toBeInstanceOf(TypeError)
    expect(t.message).toMatch(/^buildChannelSnapshot: adjacentMessages\[1\]\.text: expected a string, got integer/)

    const media = snapshotInput(1)
    media.anchor.media = [{ artifactId: 'F1', mediaType: 'image/png', byteLength: -5 }]
    const r = thrown(() => buildChannelSnapshot(media))
    expect(r).toBeInstanceOf(RangeError)
    expect(r.message).toMatch(/^buildChannelSnapshot: anchor\.media\[0\]\.byteLength: /)

    const noChannel = thrown(() => buildChannelSnapshot({ anchor: snapshotInput(0).anchor, adjacentMessages: [] } as never))
    expect(noChannel.message).toBe('buildChannelSnapshot: channel: is required')
  })

  it('rejects a non-object input', () => {
    for (const [bad, got] of [
      [undefined, 'undefined'],
      [null, 'null'],
      ['text', 'string'],
      [[], 'array'],
      [7, 'number'],
    ] as const) {
      const e = thrown(() => buildChannelSnapshot(bad as never))
      expect(e).toBeInstanceOf(TypeError)
      expect(e.message).toBe(`buildChannelSnapshot: input: expected an object, got ${got}`)
    }
  })

  it('accepts null where the seed allows it and rejects it elsewhere', () => {
    const input = snapshotInput(1)
    Object.assign(input.anchor, { messageId: null, threadId: null, media: null, hasMedia: null, reactions: null })
    Object.assign(input.adjacentMessages[0], { replyCount: null, lastReplyTs: null, repliesLast1h: null })
    const s = buildChannelSnapshot(input)
    expect(s.anchor.thread_id).toBeNull()
    expect(s.anchor.media).toEqual([])
    const bad = snapshotInput(1)
    ;(bad.anchor as unknown as Record<string, unknown>).text = null
    const e = thrown(() => buildChannelSnapshot(bad))
    expect(e).toBeInstanceOf(TypeError)
    expect(e.message).toBe('buildChannelSnapshot: anchor.text: expected a string, got null')
  })

  it('is deterministic', () => {
    const input = snapshotInput(20)
    expect(JSON.stringify(buildChannelSnapshot(input))).toBe(JSON.stringify(buildChannelSnapshot(input)))
  })
})
