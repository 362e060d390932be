// ChannelStore as a user calls it: options and their errors, events, steady state,
// TTLs at their boundaries (injected clock), rate limiting (queue, degrade, Retry-After),
// failed fetches, shared in-flight calls, media and stats.
import { afterEach, describe, expect, it, vi } from 'vitest'
import { ChannelStore, DEFAULT_THREAD_REPLIES_MAX, DEFAULT_WINDOW_SIZE, tokenEstimate, type ChannelEvent, type ChannelStoreOptions } from '@openclaw/context-engine'
import { thrown } from './helpers'

const C = 'C07ROLLOUT'
/** 2026-04-10T15:40:00Z */
const T0 = 1775835600000
const ts = (s: number) => `${T0 / 1000 + s}.000100`
const author = (n: number) => ({ userId: `U${n}`, displayName: ['Sam', 'Priya', 'Jonas'][n % 3] })

const post = (s: number, text = `message ${s}`, threadOf?: number): ChannelEvent => ({
  type: 'message',
  channelId: C,
  message: { ts: ts(s), text, author: author(s), threadId: threadOf === undefined ? undefined : ts(threadOf) },
})

/** A Slack Web API body, as conversations.history / .replies return it. */
const slackMessage = (s: number, text: string, thread?: number, extra: Record<string, unknown> = {}) => ({
  type: 'message',
  ts: ts(s),
  user: `U${s % 3}`,
  text,
  ...(thread === undefined ? {} : { thread_ts: ts(thread) }),
  ...extra,
})

interface Recorder {
  calls: Array<{ fetch: string; request: Record<string, unknown> }>
}

/** A fetcher over a fake workspace: history is messages 0..29, thread 100 has 5 replies. */
function fakeSlack(rec: Recorder, overrides: Partial<NonNullable<ChannelStoreOptions['fetcher']>> = {}) {
  return {
    async fetchHistory(request: Record<string, unknown>) {
      rec.calls.push({ fetch: 'history', request })
      const messages = Array.from({ length: 30 }, (_, i) => slackMessage(29 - i, `history ${29 - i}`))
      return { ok: true, messages, has_more: true, response_metadata: { next_cursor: 'bmV4dA==' } }
    },
    async fetchThread(request: Record<string, unknown>) {
      rec.calls.push({ fetch: 'thread', request })
      const root = Number(String(request.threadId).split('.')[0]) - T0 / 1000
      const replies = Array.from({ length: 5 }, (_, i) => slackMessage(root + 1 + i, `reply ${i}`, root))
      return { ok: true, messages: [slackMessage(root, 'root', root, { reply_count: 5 }), ...replies], has_more: false }
    },
    ...overrides,
  }
}

function setup(options: ChannelStoreOptions = {}, overrides = {}) {
  const rec: Recorder = { calls: [] }
  const clock = { now: T0 + 3_600_000 }
  const store = new ChannelStore({ clock: () => clock.now, fetcher: fakeSlack(rec, overrides), ...options })
  return { store, rec, clock }
}

afterEach(() => {
  vi.useRealTimers()
})

describe('ChannelStore options', () => {
  it('defaults to the seed numbers', () => {
    const s = new ChannelStore().stats()
    expect(s.caches.threadReplies.max).toBe(500)
    expect(s.caches.threadStarters.max).toBe(2000)
    expect(s.caches.media.maxSize).toBe(50 * 1024 * 1024)
    // The defaults the package exports are the store's own.
    expect(DEFAULT_THREAD_REPLIES_MAX).toBe(500)
    expect(DEFAULT_WINDOW_SIZE).toBe(1000)
  })

  it('keeps DEFAULT_WINDOW_SIZE messages per channel by default', () => {
    const store = new ChannelStore({ clock: () => 1775835600000 + 86_400_000 })
    const events = Array.from({ length: DEFAULT_WINDOW_SIZE + 5 }, (_, i) => ({ type: 'message' as const, channelId: 'C1', message: { ts: `${1775835600 + i}.000100`, text: `m${i}`, author: { userId: 'U1', displayName: 'Sam' } } }))
    store.ingestMany(events)
    expect(store.getMessage('C1', events[4].message.ts)).toBeNull()
    expect(store.getMessage('C1', events[5].message.ts)?.text).toBe('m5')
  })

  it('rejects unknown, negative and mistyped options naming the field', () => {
    const e1 = thrown(() => new ChannelStore({ windowsize: 10 } as never))
    expect(e1).toBeInstanceOf(TypeError)
    expect(e1.message).toMatch(/options\.windowsize: unknown field/)
    const e2 = thrown(() => new ChannelStore({ threadReplies: { ttl: -1 } }))
    expect(e2).toBeInstanceOf(RangeError)
    expect(e2.message).toMatch(/options\.threadReplies\.ttl/)
    const e3 = thrown(() => new ChannelStore({ rateLimit: { overflowStrategy: 'drop' as never } }))
    expect(e3).toBeInstanceOf(RangeError)
    expect(e3.message).toMatch(/"queue" or "degrade"/)
    const e4 = thrown(() => new ChannelStore({ fetcher: { fetchThread: 'nope' as never } }))
    expect(e4).toBeInstanceOf(TypeError)
    expect(e4.message).toMatch(/options\.fetcher\.fetchThread: expected an async function, got string/)
    const e5 = thrown(() => new ChannelStore({ clock: 5 as never }))
    expect(e5.message).toMatch(/options\.clock/)
    expect(thrown(() => new ChannelStore({ windowSize: 0 }))).toBeInstanceOf(RangeError)
  })

  it('reports a clock that returns no time', () => {
    const store = new ChannelStore({ clock: () => Number.NaN })
    expect(() => store.ingest(post(1))).toThrow(/clock returned NaN/)
  })
})

describe('ChannelStore events', () => {
  it('rejects a malformed event naming the field, and a bad batch changes nothing', () => {
    const store = new ChannelStore()
    const e = thrown(() => store.ingest({ type: 'message', channelId: C } as ChannelEvent))
    expect(e).toBeInstanceOf(TypeError)
    expect(e.message).toBe('ChannelStore.ingest: event.message: is required')
    store.ingestMany([post(1)])
    const bad = thrown(() => store.ingestMany([post(2), { type: 'message_deleted', channelId: C } as ChannelEvent, post(3)]))
    expect(bad.message).toBe('ChannelStore.ingestMany: events[1].messageId: is required')
    expect(store.stats().messages).toBe(1)
    expect(store.getMessage(C, ts(2))).toBeNull()
    expect(() => store.ingestMany('nope' as never)).toThrow(TypeError)
  })

  it('ingests plain-message batches and mixed batches alike, naming a bad ts by its index', () => {
    const store = new ChannelStore()
    const plain = [post(1, 'héllo 😀'), post(2, 'reply', 1), { ...post(3), message: { ...post(3).message!, author: { userId: 'B1', displayName: 'deploy-bot', isBot: true } } }]
    expect(store.ingestMany(plain)).toBe(3)
    expect(store.getMessage(C, ts(1))?.text).toBe('héllo 😀')
    expect(store.getMessage(C, ts(2))?.thread_id).toBe(ts(1))
    expect(store.getMessage(C, ts(3))?.author).toEqual({ user_id: 'B1', display_name: 'deploy-bot', is_bot: true })
    const mixed = [post(4), { type: 'reaction_added', channelId: C, messageId: ts(4), reaction: 'eyes', userId: 'U1' } as ChannelEvent]
    expect(store.ingestMany(mixed)).toBe(2)
    expect(store.getMessage(C, ts(4))?.reactions).toEqual([{ name: 'eyes', count: 1, users: ['U1'] }])
    const bad = thrown(() => store.ingestMany([post(5), { ...post(6), message: { ...post(6).message!, ts: 'soon' } }]))
    expect(bad).toBeInstanceOf(TypeError)
    expect(bad.message).toBe('ChannelStore.ingestMany: events[1].message.ts: expected a platform timestamp such as "1775835600.000100", got "soon"')
    expect(store.getMessage(C, ts(5))).toBeNull()
    expect(store.ingestMany([])).toBe(0)
  })

  it('takes messages with their own messageId through the packed path as the JSON path does', () => {
    // A batch of plain messages crosses packed; one reaction in it sends the batch as JSON.
    const withIds: ChannelEvent[] = [
      { type: 'message', channelId: C, message: { messageId: 'M1', ts: ts(1), text: 'root', author: author(1) } },
      { type: 'message', channelId: C, message: { messageId: 'M2', ts: ts(2), text: 'reply', author: author(2), threadId: 'M1' } },
      { type: 'message', channelId: C, message: { messageId: ts(3), ts: ts(3), text: 'own ts as id', author: author(3), threadId: ts(3) } },
    ]
    const packed = new ChannelStore()
    const json = new ChannelStore()
    expect(packed.ingestMany(withIds)).toBe(3)
    expect(json.ingestMany([...withIds, { type: 'reaction_added', channelId: 'C0OTHER', messageId: 'X', reaction: 'eyes', userId: 'U1' }])).toBe(4)
    for (const id of ['M1', 'M2', ts(3)]) expect(packed.getMessage(C, id)).toEqual(json.getMessage(C, id))
    expect(packed.getMessage(C, 'M1')?.ts).toBe(ts(1))
    expect(packed.getMessage(C, 'M2')?.thread_id).toBe('M1')
    expect(packed.getMessage(C, ts(3))?.thread_id).toBeNull()
    expect(packed.getMessage(C, ts(1))).toBeNull()
    // An empty id is refused by name on both lanes.
    const empty = { type: 'message', channelId: C, message: { messageId: '', ts: ts(4), text: 'x', author: author(4) } } as ChannelEvent
    expect(thrown(() => packed.ingestMany([empty])).message).toBe('ChannelStore.ingestMany: events[0].message.messageId: expected a non-empty string')
    expect(packed.stats().messages).toBe(2) // the two channel messages; the reply is not in the window
  })

  it('counts and ignores event kinds it does not handle', () => {
    const store = new ChannelStore()
    expect(store.ingest({ type: 'channel_renamed', channelId: C } as ChannelEvent)).toBe(0)
    expect(store.stats().ignoredEvents).toBe(1)
  })

  it('applies edits, reactions and deletions to the held message', () => {
    const store = new ChannelStore()
    store.ingestMany([
      post(1, 'first draft'),
      { type: 'message_changed', channelId: C, messageId: ts(1), text: 'final text' },
      { type: 'reaction_added', channelId: C, messageId: ts(1), reaction: 'eyes', userId: 'U1' },
      { type: 'reaction_added', channelId: C, messageId: ts(1), reaction: 'eyes', userId: 'U2' },
      { type: 'reaction_removed', channelId: C, messageId: ts(1), reaction: 'eyes', userId: 'U1' },
    ])
    const m = store.getMessage(C, ts(1))
    expect(m?.text).toBe('final text')
    expect(m?.edited).toBe(true)
    expect(m?.reactions).toEqual([{ name: 'eyes', count: 1, users: ['U2'] }])
    store.ingest({ type: 'message_deleted', channelId: C, messageId: ts(1) })
    expect(store.getMessage(C, ts(1))).toBeNull()
  })

  it('keeps at most windowSize messages per channel, dropping the oldest', () => {
    const store = new ChannelStore({ windowSize: 3 })
    store.ingestMany([1, 2, 3, 4, 5].map((s) => post(s)))
    expect(store.stats().messages).toBe(3)
    expect(store.getMessage(C, ts(2))).toBeNull()
    expect(store.getMessage(C, ts(5))).not.toBeNull()
  })

  it('computes thread activity from the replies it holds', () => {
    const { store, clock } = setup()
    store.ingestMany([post(0, 'root'), post(10, 'a', 0), post(20, 'b', 0), post(30, 'c', 0)])
    clock.now = T0 + 20_000 + 3_600_000 // the reply at +20 s is exactly one hour old
    expect(store.threadActivity(C, ts(0))).toEqual({
      reply_count: 3,
      replies_last_1h: 2,
      last_reply_ts: '2026-04-10T15:40:30.000100Z',
      participant_names: ['Priya', 'Jonas', 'Sam'],
    })
    expect(store.threadActivity(C, ts(10))).toBeNull()
  })
})

describe('ChannelStore.buildContext', () => {
  it('after a restart one history call warms the channel; then steady state makes no calls', async () => {
    const { store, rec } = setup()
    store.ingest(post(40, 'is the canary healthy?'))
    const first = await store.buildContext(C, ts(40))
    expect(first.apiCalls).toBe(1)
    expect(rec.calls.map((c) => c.fetch)).toEqual(['history'])
    expect(first.snapshot.adjacent.length + (first.snapshot.adjacent_omitted ?? 0)).toBe(20)
    expect(first.notes).toEqual([])
    // Events keep flowing: a new message, a thread and its replies.
    store.ingestMany([post(41, 'rollout at 10%'), post(42, 'ack', 41), post(43, 'p99 fine', 41), post(44, 'next step?')])
    for (const anchor of [ts(44), ts(43), ts(41)]) {
      const ctx = await store.buildContext(C, anchor)
      expect(ctx.apiCalls).toBe(0)
    }
    expect(rec.calls).toHaveLength(1)
    const inThread = await store.buildContext(C, ts(43))
    expect(inThread.thread?.truncation.total_replies).toBe(2)
    expect(inThread.tokens.total).toBe(tokenEstimate(inThread.promptSection).upperBound)
    expect(inThread.tokens.thread).toBeGreaterThan(0)
    expect(store.stats().calls).toEqual({ 'conversations.history': 1 })
  })

  it('reads the same prompt, documents and JSON whether or not promptSection was read first, in any order', async () => {
    const { store } = setup()
    // Non-ASCII text (UTF-16 in V8), emoji included, in the anchor's thread and around it.
    store.ingestMany([post(40, 'Überprüfung der デプロイ 🚀'), post(41, 'root'), post(42, 'ça marche 🎉', 41), post(43, 'ack', 41)])
    expect((await store.buildContext(C, ts(43))).apiCalls).toBe(1) // warms the channel
    const fresh = await store.buildContext(C, ts(43))
    const expected = {
      snapshot: fresh.snapshot,
      thread: fresh.thread,
      json: JSON.stringify(fresh),
      prompt: fresh.promptSection,
    }
    expect(expected.prompt).toContain('ça marche 🎉')
    expect(expected.thread?.replies.map((r) => r.text)).toEqual(['ça marche 🎉', 'ack'])
    for (const order of [['prompt', 'snapshot', 'thread', 'json'], ['snapshot', 'prompt', 'json', 'thread'], ['json', 'thread', 'prompt', 'snapshot']]) {
      const ctx = await store.buildContext(C, ts(43))
      for (const part of order) {
        if (part === 'prompt') {
          expect(ctx.promptSection).toBe(expected.prompt)
          // A second read is the same string.
          expect(ctx.promptSection).toBe(expected.prompt)
        }
        if (part === 'snapshot') expect(ctx.snapshot).toEqual(expected.snapshot)
        if (part === 'thread') expect(ctx.thread).toEqual(expected.thread)
        if (part === 'json') expect(JSON.stringify(ctx)).toBe(expected.json)
      }
      // Once read, the prompt stays what it was: not enumerable, not writable.
      expect(Object.keys(ctx)).not.toContain('promptSection')
      expect(() => {
        ;(ctx as { promptSection: string }).promptSection = 'replaced'
      }).toThrow(TypeError)
      expect(ctx.promptSection).toBe(expected.prompt)
    }
    // A frozen result still answers every read.
    const frozen = Object.freeze(await store.buildContext(C, ts(43)))
    expect(frozen.promptSection).toBe(expected.prompt)
    expect(frozen.thread).toEqual(expected.thread)
    expect(JSON.stringify(frozen)).toBe(expected.json)
  })

  it('fetches a thread it does not hold once, then serves it from cache until exactly 5 minutes', async () => {
    const { store, rec, clock } = setup()
    store.ingestSlackResponse(C, { ok: true, messages: [slackMessage(100, 'root', 100, { reply_count: 5, latest_reply: ts(105) })], has_more: false })
    const a = await store.buildContext(C, ts(100))
    expect(a.apiCalls).toBe(1)
    expect(rec.calls[0]).toEqual({ fetch: 'thread', request: { channelId: C, threadId: ts(100), limit: 200 } })
    expect(a.thread?.replies.map((r) => r.text)).toEqual(['reply 0', 'reply 1', 'reply 2', 'reply 3', 'reply 4'])
    const fetchedAt = clock.now
    clock.now = fetchedAt + 5 * 60_000 - 1
    expect((await store.buildContext(C, ts(103))).apiCalls).toBe(0)
    clock.now = fetchedAt + 5 * 60_000
    expect((await store.buildContext(C, ts(103))).apiCalls).toBe(1)
    const s = store.stats().caches.threadReplies
    expect(s.expirations).toBe(1)
    expect(s.hits).toBeGreaterThan(0)
  })

  it('shares one call between concurrent requests for the same thread', async () => {
    const { store, rec } = setup()
    store.ingestSlackResponse(C, { ok: true, messages: [slackMessage(100, 'root', 100, { reply_count: 5 })], has_more: false })
    const all = await Promise.all([store.buildContext(C, ts(100)), store.buildContext(C, ts(100)), store.buildContext(C, ts(100))])
    expect(rec.calls).toHaveLength(1)
    expect(all.map((c) => c.apiCalls).sort()).toEqual([0, 0, 1])
    expect(all.every((c) => c.thread?.replies.length === 5)).toBe(true)
  })

  it('follows conversations.replies pages by cursor', async () => {
    const pages: Record<string, unknown> = {
      '': { ok: true, messages: [slackMessage(100, 'root', 100, { reply_count: 2 }), slackMessage(101, 'one', 100)], has_more: true, response_metadata: { next_cursor: 'cGFnZTI=' } },
      'cGFnZTI=': { ok: true, messages: [slackMessage(100, 'root', 100, { reply_count: 2 }), slackMessage(102, 'two', 100)], has_more: false, response_metadata: { next_cursor: '' } },
    }
    const cursors: unknown[] = []
    const { store } = setup({}, {
      async fetchThread(req: { cursor?: string }) {
        cursors.push(req.cursor)
        return pages[req.cursor ?? '']
      },
    })
    store.ingestSlackResponse(C, { ok: true, messages: [slackMessage(100, 'root', 100, { reply_count: 2 })] })
    const ctx = await store.buildContext(C, ts(100))
    expect(cursors).toEqual([undefined, 'cGFnZTI='])
    expect(ctx.apiCalls).toBe(2)
    expect(ctx.thread?.replies.map((r) => r.text)).toEqual(['one', 'two'])
  })

  it('degrades when a fetch fails: the turn still gets a context, with a note', async () => {
    const { store, clock } = setup({}, {
      async fetchThread() {
        throw new Error('socket hang up')
      },
    })
    // A thread held from events, then expired: served stale.
    store.ingestSlackResponse(C, { ok: true, messages: [], has_more: false })
    store.ingestMany([post(0, 'root'), post(1, 'reply', 0)])
    clock.now += 10 * 60_000
    const ctx = await store.buildContext(C, ts(1))
    expect(ctx.stale).toBe(true)
    expect(ctx.thread?.replies).toHaveLength(1)
    expect(ctx.notes[0]).toBe(`Could not fetch thread ${ts(0)} (conversations.replies failed: socket hang up).`)
    expect(ctx.notes[1]).toMatch(/served from cache, 600s old/)
    const s = store.stats()
    expect(s.failedFetches).toBe(1)
    expect(s.staleServes).toBe(1)
  })

  it('treats a malformed or ok:false response as a failed fetch, not an exception', async () => {
    const { store } = setup({}, {
      async fetchThread() {
        return { ok: false, error: 'thread_not_found' }
      },
    })
    store.ingestSlackResponse(C, { ok: true, messages: [slackMessage(100, 'root', 100, { reply_count: 3 })] })
    const ctx = await store.buildContext(C, ts(100))
    expect(ctx.thread?.replies).toEqual([])
    expect(ctx.notes.join(' ')).toMatch(/Slack returned error "thread_not_found"/)
    expect(store.stats().failedFetches).toBe(1)
  })

  it('rejects with ANCHOR_NOT_FOUND only when the anchor itself cannot be found', async () => {
    const store = new ChannelStore()
    await expect(store.buildContext(C, ts(5))).rejects.toMatchObject({ code: 'ANCHOR_NOT_FOUND' })
    await expect(store.buildContext(C, '')).rejects.toThrow(TypeError)
    await expect(store.buildContext(C, 5 as never)).rejects.toThrow('buildContext: anchorMessageId: expected a string, got number')
    await expect(store.getMedia(null as never)).rejects.toThrow(TypeError)
    await expect(store.buildContext(C, ts(1), { budgetTokens: -1 })).rejects.toThrow(RangeError)
  })

  it('after fetching, an anchor still unknown rejects with ANCHOR_NOT_FOUND and says what was tried', async () => {
    const store = new ChannelStore({ fetcher: { fetchHistory: async () => ({ ok: true, messages: [], has_more: false }) } })
    const err = await store.buildContext(C, ts(5)).then(
      () => null,
      (e: Error & { code?: string }) => e,
    )
    expect(err?.code).toBe('ANCHOR_NOT_FOUND')
    expect(err?.message).toContain('no fetchMessages in the fetcher')
  })

  it('notes a fetch it could not make for want of a fetcher function', async () => {
    const { store } = setup({ fetcher: { fetchHistory: async () => ({ ok: true, messages: [], has_more: false }) } })
    store.ingestSlackResponse(C, { ok: true, messages: [slackMessage(100, 'root', 100, { reply_count: 4 })] })
    const ctx = await store.buildContext(C, ts(100))
    expect(ctx.notes[0]).toBe(`Could not fetch thread ${ts(100)} (no fetchThread in the fetcher).`)
    expect(ctx.thread?.truncation.total_replies).toBe(4)
    expect(ctx.thread?.replies).toEqual([])
  })

  it('fetches an unknown reply by its thread id when the caller knows it', async () => {
    const { store, rec } = setup()
    store.ingestSlackResponse(C, { ok: true, messages: [], has_more: false })
    const ctx = await store.buildContext(C, ts(103), { threadId: ts(100) })
    expect(rec.calls.map((c) => c.fetch)).toEqual(['thread'])
    expect(ctx.snapshot.anchor.text).toBe('reply 2')
    expect(ctx.snapshot.anchor.thread_id).toBe(ts(100))
  })
})

describe('ChannelStore rate limiting', () => {
  const rootsOnly = (ids: number[]) => ({ ok: true, messages: ids.map((s) => slackMessage(s, 'root', s, { reply_count: 5 })), has_more: false })

  it('degrade: past the limit the store serves what it has, with a note, and makes no call', async () => {
    const { store, rec } = setup({ rateLimit: { preset: 'slack-non-marketplace', overflowStrategy: 'degrade' } })
    store.ingestSlackResponse(C, rootsOnly([100, 200]))
    const a = await store.buildContext(C, ts(100))
    expect(a.apiCalls).toBe(1)
    expect(rec.calls[0].request.limit).toBe(15)
    const b = await store.buildContext(C, ts(200))
    expect(b.apiCalls).toBe(0)
    expect(b.notes[0]).toBe(`Could not fetch thread ${ts(200)} (conversations.replies is rate limited; next slot in 60s).`)
    expect(store.stats().rateLimited).toBe(1)
  })

  it('queue: a call past the limit waits for its slot, and no 60-second window holds more than the limit', async () => {
    vi.useFakeTimers({ now: T0 })
    const rec: Recorder = { calls: [] }
    const times: number[] = []
    const store = new ChannelStore({
      clock: () => Date.now(),
      rateLimit: { perMethod: { 'conversations.replies': 2 }, queueTimeout: 180_000 },
      fetcher: fakeSlack(rec, {
        async fetchThread(req: { threadId?: string }) {
          times.push(Date.now())
          return fakeSlack(rec).fetchThread(req as Record<string, unknown>)
        },
      }),
    })
    store.ingestSlackResponse(C, rootsOnly([100, 200, 300, 400, 500]))
    const pending = [100, 200, 300, 400, 500].map((s) => store.buildContext(C, ts(s)))
    await vi.advanceTimersByTimeAsync(0)
    expect(times).toHaveLength(2)
    expect(store.stats().queuedCalls).toBe(3)
    await vi.advanceTimersByTimeAsync(60_000)
    expect(times).toHaveLength(4)
    await vi.advanceTimersByTimeAsync(60_000)
    const done = await Promise.all(pending)
    expect(done.every((c) => c.thread?.replies.length === 5)).toBe(true)
    expect(times.map((t) => t - T0)).toEqual([0, 0, 60_000, 60_000, 120_000])
    for (const t of times) expect(times.filter((u) => u >= t && u < t + 60_000).length).toBeLessThanOrEqual(2)
  })

  it('queue: a call that would wait past queueTimeout is refused and degrades', async () => {
    const { store } = setup({ rateLimit: { perMethod: { 'conversations.replies': 1 }, queueTimeout: 59_999 } })
    store.ingestSlackResponse(C, rootsOnly([100, 200]))
    await store.buildContext(C, ts(100))
    const b = await store.buildContext(C, ts(200))
    expect(b.notes[0]).toMatch(/the wait of 60s exceeds the queue timeout/)
  })

  it('a Retry-After on a 429 pauses that method for exactly that long', async () => {
    let fail = true
    const { store, clock } = setup({ rateLimit: { overflowStrategy: 'degrade' } }, {
      async fetchThread(req: Record<string, unknown>) {
        if (fail) {
          fail = false
          throw Object.assign(new Error('An API error occurred: ratelimited'), { code: 'slack_webapi_rate_limited_error', retryAfter: 30 })
        }
        return fakeSlack({ calls: [] }).fetchThread(req)
      },
    })
    store.ingestSlackResponse(C, rootsOnly([100, 200]))
    const a = await store.buildContext(C, ts(100))
    expect(a.notes[0]).toMatch(/ratelimited; paused for 30s \(Retry-After\)/)
    const start = clock.now
    clock.now = start + 29_999
    const b = await store.buildContext(C, ts(200))
    expect(b.apiCalls).toBe(0)
    expect(b.notes[0]).toMatch(/paused by Retry-After for 1s more/)
    clock.now = start + 30_000
    const c = await store.buildContext(C, ts(200))
    expect(c.apiCalls).toBe(1)
    expect(c.thread?.replies).toHaveLength(5)
  })

  it('counts limits per workspace', async () => {
    const { store } = setup({ rateLimit: { perMethod: { 'conversations.replies': 1 }, overflowStrategy: 'degrade' } })
    store.setChannel({ id: 'C2', workspaceId: 'T2', name: 'other' })
    store.ingestSlackResponse(C, rootsOnly([100]))
    store.ingestSlackResponse('C2', rootsOnly([100]))
    expect((await store.buildContext(C, ts(100))).apiCalls).toBe(1)
    const other = await store.buildContext('C2', ts(100))
    expect(other.apiCalls).toBe(1)
    expect(other.snapshot.channel).toEqual({ id: 'C2', name: 'other', platform: 'slack' })
  })
})

describe('ChannelStore.getMedia', () => {
  const file = { artifactId: 'F07SCREEN01', mediaType: 'image/png', filename: 'canary.png', byteLength: 4, url: 'https://files.slack.com/files-pri/T0-F07SCREEN01/canary.png' }
  const withFile = (store: ChannelStore) =>
    store.ingest({ type: 'message', channelId: C, message: { ts: ts(1), text: 'graph', author: author(1), media: [file] } })

  it('downloads once, then serves from the media cache; concurrent requests share the call', async () => {
    const requests: unknown[] = []
    const store = new ChannelStore({
      fetcher: {
        async fetchMedia(req) {
          requests.push(req)
          return new Uint8Array([1, 2, 3, 4])
        },
      },
    })
    withFile(store)
    const [a, b] = await Promise.all([store.getMedia('F07SCREEN01'), store.getMedia('F07SCREEN01')])
    expect(requests).toHaveLength(1)
    expect(requests[0]).toMatchObject({ artifactId: 'F07SCREEN01', url: file.url, mediaType: 'image/png', channelId: C, messageId: ts(1) })
    expect(a.apiCalls + b.apiCalls).toBe(1)
    expect([...(a.data ?? [])]).toEqual([1, 2, 3, 4])
    expect(a.contentHash).toBe('9f64a747e1b97f131fabb6b447296c9b6f0201e79fb3c5356e6c77e89b6a806a')
    const c = await store.getMedia('F07SCREEN01')
    expect(c.apiCalls).toBe(0)
    expect(c.cached).toBe(true)
    expect(store.stats().caches.media).toMatchObject({ hits: 1, bytes: 4, size: 1 })
  })

  it('never caches an item larger than maxSize, and says why there are no bytes', async () => {
    const store = new ChannelStore({ media: { maxSize: 3 }, fetcher: { fetchMedia: async () => Buffer.from([1, 2, 3, 4]) } })
    withFile(store)
    const a = await store.getMedia('F07SCREEN01')
    expect(a.cached).toBe(false)
    expect(a.byteLength).toBe(4)
    expect(store.stats().caches.media.bytes).toBe(0)
    const unknown = await store.getMedia('F999')
    expect(unknown.data).toBeNull()
    expect(unknown.note).toBe('File F999 is not referenced by any message the store holds.')
  })

  it('resolves with a note when the download fails', async () => {
    const store = new ChannelStore({ fetcher: { fetchMedia: async () => Promise.reject(new Error('403 Forbidden')) } })
    withFile(store)
    const m = await store.getMedia('F07SCREEN01')
    expect(m.data).toBeNull()
    expect(m.note).toBe('files.download failed: 403 Forbidden')
    expect(store.stats().failedFetches).toBe(1)
  })
})
