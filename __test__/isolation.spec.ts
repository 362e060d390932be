// A tool scoped to one channel sees that channel's data and nothing else, whatever ids a
// model or a platform hands it: media bytes follow the channel that asks, thread and
// fetch keys are structured (no separator character can join two channels), and ids
// that cannot be represented exactly (lone surrogates) are refused, never merged.
import { describe, expect, it } from 'vitest'
import { ChannelStore, type ChannelEvent } from '@openclaw/context-engine'

/** 2026-04-10T15:40:00Z */
const T0 = 1775835600000
const ts = (s: number) => `${T0 / 1000 + s}.000100`
const author = { userId: 'U1', displayName: 'Sam' }
const run = async (t: { execute(n: string, i: unknown): Promise<string> }, name: string, input: unknown) => JSON.parse(await t.execute(name, input))

const withFile = (channelId: string, s: number, artifactId: string): ChannelEvent => ({
  type: 'message',
  channelId,
  message: { ts: ts(s), text: `file in ${channelId}`, author, media: [{ artifactId, mediaType: 'image/png', filename: 'f.png', byteLength: 3 }] },
})

describe('media follows the channel that asks', () => {
  function twoChannels() {
    const downloads: Array<Record<string, unknown>> = []
    const store = new ChannelStore({
      clock: () => T0 + 60_000,
      fetcher: {
        async fetchMedia(req) {
          downloads.push(req)
          return Buffer.from(req.channelId === 'CA' ? 'AAA' : 'BBB')
        },
      },
    })
    return { store, downloads }
  }

  it('gives channel B its own bytes for a file id channel A downloaded first', async () => {
    const { store, downloads } = twoChannels()
    store.ingest(withFile('CA', 1, 'F1'))
    const a = await run(store.tools('CA'), 'channel_messages', { media_artifact_id: 'F1' })
    expect(Buffer.from(a.media.content.source.data, 'base64').toString()).toBe('AAA')
    // B has no message with F1: not found, and no download.
    expect((await run(store.tools('CB'), 'channel_messages', { media_artifact_id: 'F1' })).not_found).toEqual(['F1'])
    store.ingest(withFile('CB', 2, 'F1'))
    const b = await run(store.tools('CB'), 'channel_messages', { media_artifact_id: 'F1' })
    expect(Buffer.from(b.media.content.source.data, 'base64').toString()).toBe('BBB')
    expect(downloads.map((d) => d.channelId)).toEqual(['CA', 'CB'])
    // A keeps access to its own copy after B posted the same file id.
    const again = await run(store.tools('CA'), 'channel_messages', { media_artifact_id: 'F1' })
    expect(Buffer.from(again.media.content.source.data, 'base64').toString()).toBe('AAA')
    expect(downloads).toHaveLength(2)
  })

  it('getMedia with a channel serves only that channel, and without one the newest reference', async () => {
    const { store } = twoChannels()
    store.ingest(withFile('CA', 1, 'F1'))
    const missing = await store.getMedia('F1', 'CB')
    expect(missing.data).toBeNull()
    expect(missing.note).toBe('File F1 is not referenced by any message the store holds for channel CB.')
    store.ingest(withFile('CB', 2, 'F1'))
    expect(Buffer.from((await store.getMedia('F1', 'CA')).data!).toString()).toBe('AAA')
    expect(Buffer.from((await store.getMedia('F1', 'CB')).data!).toString()).toBe('BBB')
    expect(Buffer.from((await store.getMedia('F1')).data!).toString()).toBe('BBB')
    await expect(store.getMedia('F1', 7 as never)).rejects.toThrow(/getMedia: channelId: expected a string/)
  })
})

describe('structured keys', () => {
  it('a thread id carrying a separator character cannot reach a thread of another channel', async () => {
    const other = 'A\u001fX'
    const fetched: string[] = []
    const store = new ChannelStore({
      clock: () => T0 + 60_000,
      fetcher: {
        async fetchThread(req) {
          fetched.push(String(req.channelId))
          if (req.channelId !== other) return { ok: true, messages: [], has_more: false }
          return {
            ok: true,
            messages: [
              { type: 'message', ts: ts(1), user: 'U1', text: 'root', thread_ts: ts(1), reply_count: 1 },
              { type: 'message', ts: ts(2), user: 'U2', text: 'secret reply', thread_ts: ts(1) },
            ],
            has_more: false,
          }
        },
      },
    })
    // Channel "A\u001fX" holds thread ts(1) with a secret reply.
    expect(JSON.stringify(await run(store.tools(other), 'channel_messages', { thread_id: ts(1) }))).toContain('secret reply')
    const t = store.tools('A')
    const r = await run(t, 'channel_messages', { thread_id: `X\u001f${ts(1)}` })
    expect(JSON.stringify(r)).not.toContain('secret reply')
    expect(r.not_found).toEqual([`X\u001f${ts(1)}`])
    const ctx = await run(t, 'channel_context', { intent: 'secret reply' })
    expect(ctx.error).toBeUndefined()
    expect(JSON.stringify(ctx)).not.toContain('secret reply')
    expect(fetched).toEqual([other, 'A'])
  })
})

describe('ids that cannot be represented exactly are refused, never merged', () => {
  const post = (channelId: string, ts_: string, text: string, messageId?: string): ChannelEvent => ({
    type: 'message',
    channelId,
    message: { ts: ts_, text, author, ...(messageId ? { messageId } : {}) },
  })

  it('channels C\\ud800 and C\\udfff are not one channel: both are refused, on every ingest path', () => {
    const store = new ChannelStore({ clock: () => T0 })
    for (const bad of ['C\ud800', 'C\udfff']) {
      expect(() => store.ingest(post(bad, ts(1), 'x'))).toThrow(TypeError)
      expect(() => store.ingest(post(bad, ts(1), 'x'))).toThrow(/ingest: .*channelId: contains a lone surrogate/)
      // The packed path of ingestMany and its JSON path.
      expect(() => store.ingestMany([post(bad, ts(1), 'x')])).toThrow(/ingestMany: events\[0\]\.channelId: contains a lone surrogate/)
      expect(() => store.ingestMany([{ ...post(bad, ts(1), 'x'), workspaceId: 'T1' }])).toThrow(/ingestMany: .*channelId: contains a lone surrogate/)
      expect(() => store.tools(bad)).toThrow(/tools: channelId: contains a lone surrogate/)
      expect(() => store.ingestSlackResponse(bad, { ok: true, messages: [] })).toThrow(/lone surrogate/)
    }
    expect(store.stats().ingestedEvents).toBe(0)
    // A real U+FFFD is a character like any other.
    expect(store.ingest(post('C\ufffd', ts(1), 'x'))).toBe(1)
  })

  it('deleting message M\\udc00 cannot delete M\\ud800: the deletion is refused', () => {
    const store = new ChannelStore({ clock: () => T0 })
    expect(() => store.ingest(post('C1', ts(1), 'keep me', 'M\ud800'))).toThrow(/messageId: contains a lone surrogate/)
    store.ingest(post('C1', ts(1), 'keep me', 'M\ufffd'))
    expect(() => store.ingest({ type: 'delete', channelId: 'C1', messageId: 'M\udc00' })).toThrow(/messageId: contains a lone surrogate/)
    expect(store.getMessage('C1', 'M\ufffd')?.text).toBe('keep me')
    expect(() => store.getMessage('C1', 'M\udc00')).toThrow(/getMessage: messageId: contains a lone surrogate/)
  })

  it('text keeps working: a lone surrogate in message text is folded, not refused', () => {
    const store = new ChannelStore({ clock: () => T0 })
    expect(store.ingestMany([post('C1', ts(1), 'broken \ud800 pair')])).toBe(1)
    expect(store.getMessage('C1', ts(1))?.text).toBe('broken \ufffd pair')
  })

  it('tool inputs with a lone surrogate in an id field get a model-readable error', async () => {
    const store = new ChannelStore({ clock: () => T0 })
    store.ingest(post('C1', ts(1), 'hello'))
    const t = store.tools('C1')
    const r = await run(t, 'channel_messages', { message_ids: [ts(1), 'M\ud800'] })
    expect(r.error).toMatchObject({ code: 'invalid_input', field: 'message_ids' })
    expect(r.error.message).toMatch(/lone surrogate/)
    const q = await run(t, 'channel_context', { intent: 'hello \ud800' })
    expect(q.error).toBeUndefined()
  })

  it('a fetched page carrying such an id is unusable and degrades with a note', async () => {
    const store = new ChannelStore({
      clock: () => T0 + 60_000,
      fetcher: { fetchHistory: async () => ({ ok: true, messages: [{ type: 'message', ts: ts(1), user: 'U\ud800', text: 'x' }], has_more: false }) },
    })
    store.ingest(post('C1', ts(2), 'anchor'))
    const built = await store.buildContext('C1', ts(2))
    expect(built.notes.join('\n')).toMatch(/unusable result: .*user: contains a lone surrogate/)
    expect(store.stats().failedFetches).toBe(1)
  })
})
