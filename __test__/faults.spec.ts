// Fault injection for fetchers: whatever a fetcher does (throws, rejects with any value,
// never settles, answers 429 with an absurd Retry-After, returns malformed, oversized or
// wrong-thread pages), a turn is never failed and never hangs: buildContext, the tools
// and getMedia resolve with what the store holds and a note.
import { describe, expect, it } from 'vitest'
import { ChannelStore, type ChannelStoreOptions } from '@openclaw/context-engine'

const C = 'C07ROLLOUT'
/** 2026-04-10T15:40:00Z */
const T0 = 1775835600000
const ts = (s: number) => `${T0 / 1000 + s}.000100`
const author = { userId: 'U1', displayName: 'Sam' }
const slackMessage = (s: number, text: string, thread?: number, extra: Record<string, unknown> = {}) => ({
  type: 'message',
  ts: ts(s),
  user: 'U1',
  text,
  ...(thread === undefined ? {} : { thread_ts: ts(thread) }),
  ...extra,
})

/** A store with history of a thread root at ts(100) that has 5 replies (none held). */
function withRoot(options: ChannelStoreOptions) {
  const clock = { now: T0 + 3_600_000 }
  const store = new ChannelStore({ clock: () => clock.now, ...options })
  store.ingestSlackResponse(C, { ok: true, messages: [slackMessage(100, 'root', 100, { reply_count: 5 })], has_more: false })
  return { store, clock }
}

const hostile = (): Record<string, unknown> =>
  new Proxy(
    {},
    {
      get() {
        throw new Error('trap: get')
      },
      getPrototypeOf() {
        throw new Error('trap: getPrototypeOf')
      },
      ownKeys() {
        throw new Error('trap: ownKeys')
      },
      has() {
        throw new Error('trap: has')
      },
    },
  )

describe('a fetcher that never settles', () => {
  it('times out after fetchTimeout, degrades with a note, and releases the shared in-flight call', async () => {
    let calls = 0
    const { store } = withRoot({ fetchTimeout: 40, fetcher: { fetchThread: () => (calls++, new Promise(() => {})) } })
    const started = Date.now()
    const [a, b] = await Promise.all([store.buildContext(C, ts(100)), store.buildContext(C, ts(100))])
    expect(Date.now() - started).toBeLessThan(2_000)
    expect(calls).toBe(1)
    for (const ctx of [a, b]) {
      expect(ctx.notes.join(' ')).toMatch(/conversations\.replies failed: no answer within 40 ms \(fetchTimeout\)/)
      expect(ctx.snapshot.anchor.text).toBe('root')
    }
    // The hung call no longer holds up the thread: the next build asks again.
    await store.buildContext(C, ts(100))
    expect(calls).toBe(2)
    expect(store.stats()).toMatchObject({ timedOutFetches: 2, failedFetches: 2 })
  })

  it('the tools and getMedia time out too', async () => {
    const { store } = withRoot({
      fetchTimeout: 30,
      fetcher: { fetchThread: () => new Promise(() => {}), fetchMedia: () => new Promise(() => {}) },
    })
    store.ingest({ type: 'message', channelId: C, message: { ts: ts(200), text: 'pic', author, media: [{ artifactId: 'F1', mediaType: 'image/png', byteLength: 3 }] } })
    const r = JSON.parse(await store.tools(C).execute('channel_messages', { thread_id: ts(100), media_artifact_id: 'F1' }))
    expect(r.notes.join(' ')).toMatch(/no answer within 30 ms/)
    const m = await store.getMedia('F1')
    expect(m.data).toBeNull()
    expect(m.note).toMatch(/files\.download failed: no answer within 30 ms/)
  })

  it('rejects a fetchTimeout that is not a positive whole number', () => {
    for (const bad of [0, -1, 1.5, NaN, Infinity]) {
      expect(() => new ChannelStore({ fetchTimeout: bad })).toThrow(RangeError)
    }
    expect(() => new ChannelStore({ fetchTimeout: '5s' as never })).toThrow(TypeError)
  })
})

describe('a fetcher that rejects or throws with anything', () => {
  const values: Array<[string, () => unknown, RegExp]> = [
    ['undefined', () => undefined, /rejected with undefined/],
    ['null', () => null, /rejected with null/],
    ['a string', () => 'ratelimited', /failed: ratelimited/],
    ['an empty string', () => '', /rejected with an empty string/],
    ['a number', () => 42, /rejected with 42/],
    ['a symbol', () => Symbol('x'), /rejected with Symbol\(x\)/],
    ['a plain object', () => ({ code: 'E_X' }), /\{"code":"E_X"\}/],
    ['an object that cannot be stringified', () => ({ n: 1n }), /rejected with a value that cannot be read/],
    ['a Proxy that throws on every access', hostile, /rejected with a value that cannot be read/],
    ['an Error without message', () => new TypeError(), /failed: TypeError/],
  ]
  for (const [what, make, note] of values) {
    it(`rejecting with ${what} is a failed fetch with a note`, async () => {
      const { store } = withRoot({ fetcher: { fetchThread: () => Promise.reject(make()) } })
      const ctx = await store.buildContext(C, ts(100))
      expect(ctx.notes.join(' ')).toMatch(note)
      expect(store.stats().failedFetches).toBe(1)
    })
  }

  it('throwing synchronously, or a fetcher object whose properties throw, is a failed fetch', async () => {
    const sync = withRoot({
      fetcher: {
        fetchThread() {
          throw new Error('boom')
        },
      },
    })
    expect((await sync.store.buildContext(C, ts(100))).notes.join(' ')).toMatch(/failed: boom/)
    // The fetcher is checked at construction, then turns hostile.
    const fetcher: Record<string, unknown> = { fetchThread: async () => ({ ok: true, messages: [] }) }
    const { store } = withRoot({ fetcher: fetcher as never })
    Object.defineProperty(fetcher, 'fetchThread', {
      configurable: true,
      get() {
        throw new Error('getter trap')
      },
    })
    expect((await store.buildContext(C, ts(100))).notes.join(' ')).toMatch(/failed: getter trap/)
    Object.defineProperty(fetcher, 'fetchThread', { value: 'not a function' })
    expect((await store.buildContext(C, ts(100))).notes.join(' ')).toMatch(/conversations\.replies failed: .*not a function/)
  })
})

describe('Retry-After', () => {
  it('an absurd Retry-After is capped at one hour and counted', async () => {
    let calls = 0
    const err = Object.assign(new Error('ratelimited'), { retryAfter: 1e9 })
    const { store, clock } = withRoot({ rateLimit: { overflowStrategy: 'degrade' }, fetcher: { fetchThread: () => (calls++, Promise.reject(err)) } })
    const a = await store.buildContext(C, ts(100))
    expect(a.notes.join(' ')).toMatch(/paused for 3600s \(Retry-After, capped at 1 hour\)/)
    expect(store.stats().retryAfterCapped).toBe(1)
    clock.now += 3_599_000
    expect((await store.buildContext(C, ts(100))).notes.join(' ')).toMatch(/paused by Retry-After for 1s more/)
    expect(calls).toBe(1)
    clock.now += 1_000
    await store.buildContext(C, ts(100))
    expect(calls).toBe(2)
  })

  it('Infinity and a Retry-After header of "1e12" are capped the same way', async () => {
    for (const e of [{ retryAfterMs: Infinity }, { headers: { 'retry-after': '1e12' } }]) {
      const { store } = withRoot({ fetcher: { fetchThread: () => Promise.reject(Object.assign(new Error('429'), e)) } })
      expect((await store.buildContext(C, ts(100))).notes.join(' ')).toMatch(/paused for 3600s/)
      expect(store.stats().retryAfterCapped).toBe(1)
    }
  })
})

describe('malformed, oversized and wrong-thread pages', () => {
  const bodies: Array<[string, unknown]> = [
    ['a number', 42],
    ['ok: false', { ok: false, error: 'channel_not_found' }],
    ['messages that is not an array', { ok: true, messages: 'x' }],
    ['a message without ts', { ok: true, messages: [{ text: 'no ts' }] }],
    ['a Proxy that throws on every access', hostile()],
    ['a cycle', (() => { const o: Record<string, unknown> = { ok: true }; o.self = o; return o })()],
  ]
  for (const [what, body] of bodies) {
    it(`a page that is ${what} is an unusable result with a note`, async () => {
      const { store } = withRoot({ fetcher: { fetchThread: async () => body } })
      const ctx = await store.buildContext(C, ts(100))
      expect(ctx.notes.join(' ')).toMatch(/Could not fetch thread/)
      expect(ctx.snapshot.anchor.text).toBe('root')
    })
  }

  it('a page far larger than asked is cut to the page size, and the thread stays incomplete', async () => {
    const replies = Array.from({ length: 20_000 }, (_, i) => slackMessage(101 + i, `r${i}`, 100))
    let asked = 0
    const { store } = withRoot({
      rateLimit: { pageSize: 50, maxPages: 1 },
      fetcher: {
        async fetchThread(req) {
          asked = Number(req.limit)
          return { ok: true, messages: [slackMessage(100, 'root', 100, { reply_count: 20_000 }), ...replies], has_more: false }
        },
      },
    })
    const ctx = await store.buildContext(C, ts(100))
    expect(asked).toBe(50)
    expect(ctx.thread!.truncation.total_replies).toBe(20_000)
    expect(ctx.thread!.replies.length).toBeLessThanOrEqual(50)
    expect(store.stats().repliesDropped).toBe(20_000 + 1 - 51)
  })

  it('replies of another thread in a thread page are not shown as this thread', async () => {
    const { store } = withRoot({
      fetcher: {
        async fetchThread() {
          return { ok: true, messages: [slackMessage(100, 'root', 100, { reply_count: 1 }), slackMessage(101, 'mine', 100), slackMessage(102, 'elsewhere', 999)], has_more: false }
        },
      },
    })
    const ctx = await store.buildContext(C, ts(100))
    expect(ctx.thread!.replies.map((r) => r.text)).toEqual(['mine'])
  })
})

describe('the anchor the event delivered', () => {
  it('a reply in an old thread, with conversations.replies refused, is still the anchor', async () => {
    const { store } = withRoot({ rateLimit: { preset: 'slack-non-marketplace', overflowStrategy: 'degrade' }, fetcher: { fetchThread: async () => ({ ok: true, messages: [], has_more: false }) } })
    store.ingestSlackResponse(C, { ok: true, messages: [slackMessage(300, 'old root', 300, { reply_count: 9 })], has_more: false })
    // The first mention uses the minute's one replies call on thread 100...
    await store.buildContext(C, ts(100))
    // ...then a reply arrives in another old thread, and the bot is mentioned in it.
    store.ingest({ type: 'message', channelId: C, message: { ts: ts(400), text: '@bot are they running?', author, threadId: ts(300) } })
    const ctx = await store.buildContext(C, ts(400))
    expect(ctx.snapshot.anchor.text).toBe('@bot are they running?')
    expect(ctx.snapshot.anchor.thread_id).toBe(ts(300))
    expect(ctx.notes.join(' ')).toMatch(/Could not fetch thread .* rate limited/)
    // Edits and deletions reach it like any held copy.
    store.ingest({ type: 'message_changed', channelId: C, messageId: ts(400), text: 'edited' })
    expect((await store.buildContext(C, ts(400))).snapshot.anchor.text).toBe('edited')
    store.ingest({ type: 'message_deleted', channelId: C, messageId: ts(400) })
    await expect(store.buildContext(C, ts(400))).rejects.toMatchObject({ code: 'ANCHOR_NOT_FOUND' })
  })
})

describe('bounded threads', () => {
  it('a thread fed 100,000 replies by events holds at most maxRepliesPerThread, the newest', async () => {
    const store = new ChannelStore({ clock: () => T0 + 3_600_000, maxRepliesPerThread: 500 })
    store.ingest({ type: 'message', channelId: C, message: { ts: ts(0), text: 'root', author, replyCount: 0 } })
    const batch = Array.from({ length: 100_000 }, (_, i) => ({
      type: 'message' as const,
      channelId: C,
      message: { ts: `${T0 / 1000 + 1 + Math.floor(i / 1000)}.${String(i % 1000).padStart(6, '0')}`, text: `reply ${i}`, author, threadId: ts(0) },
    }))
    store.ingestMany(batch)
    const ctx = await store.buildContext(C, ts(0))
    expect(ctx.thread!.truncation.total_replies).toBe(100_000)
    expect(store.stats().repliesDropped).toBe(100_000 - 500)
    expect(store.stats().messageBytes).toBeLessThan(1_000_000)
    expect(ctx.thread!.replies.at(-1)!.text).toBe('reply 99999')
  })

  it('rejects a maxRepliesPerThread that is not a positive whole number', () => {
    for (const bad of [0, -3, 2.5, NaN]) expect(() => new ChannelStore({ maxRepliesPerThread: bad })).toThrow(RangeError)
  })
})
