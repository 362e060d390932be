// Events racing fetches, and load on one cold thread. An event that arrives while a
// fetch is in flight is newer than anything that fetch returns: an edit, a deletion or
// a reaction is never undone by the older fetched copy, and a reply that arrives during
// a fetch is kept (no second fetch). Every event kind is raced against every fetch kind.
import { describe, expect, it } from 'vitest'
import { ChannelStore, type ChannelEvent } from '@openclaw/context-engine'

const C = 'C07ROLLOUT'
/** 2026-04-10T15:40:00Z */
const T0 = 1775835600000
const ts = (s: number) => `${T0 / 1000 + s}.000100`
const author = { userId: 'U1', displayName: 'Sam' }

/** A promise and its resolver, to hold a fetch in flight. */
function deferred<T>() {
  let resolve!: (v: T) => void
  const promise = new Promise<T>((r) => (resolve = r))
  return { promise, resolve }
}

const slack = (s: number, text: string, extra: Record<string, unknown> = {}) => ({ type: 'message', ts: ts(s), user: 'U1', text, ...extra })
/** The platform's state as the fetch saw it: message 10 and reply 21 carry secrets; 20 is a root with one reply. */
const before = {
  10: slack(10, 'password: hunter2', { reactions: [{ name: 'eyes', count: 1, users: ['U9'] }] }),
  20: slack(20, 'root', { thread_ts: ts(20), reply_count: 1 }),
  21: slack(21, 'token: swordfish', { thread_ts: ts(20), reactions: [{ name: 'eyes', count: 1, users: ['U9'] }] }),
}

type FetchKind = 'history' | 'thread' | 'messages'

/**
 * A store whose one fetch (of `kind`) is held in flight until `release()`, after which
 * it answers with `before`. Messages are first known to the store by events, as a live
 * gateway sees them, so every event kind has a held copy to change.
 */
function racing(kind: FetchKind) {
  const gate = deferred<void>()
  const started = deferred<void>()
  let calls = 0
  const answer = async (messages: unknown[]) => {
    calls++
    started.resolve()
    await gate.promise
    return { ok: true, messages, has_more: false }
  }
  const clock = { now: T0 + 60_000 }
  const store = new ChannelStore({
    clock: () => clock.now,
    fetcher: {
      fetchHistory: () => answer([before[20], before[10]]),
      fetchThread: () => answer([before[20], before[21]]),
      fetchMessages: async () => ({ ok: true, messages: [] }),
    },
  })
  if (kind !== 'history') store.ingestSlackResponse(C, { ok: true, messages: [] })
  // The store learns the messages from events (the thread's first reply included).
  store.ingest({ type: 'message', channelId: C, message: { ts: ts(10), text: 'password: hunter2', author, reactions: [{ name: 'eyes', count: 1 }] } })
  store.ingest({ type: 'message', channelId: C, message: { ts: ts(20), text: 'root', author, replyCount: 1 } })
  store.ingest({ type: 'message', channelId: C, message: { ts: ts(21), text: 'token: swordfish', author, threadId: ts(20), reactions: [{ name: 'eyes', count: 1 }] } })
  store.ingest({ type: 'message', channelId: C, message: { ts: ts(5), text: 'hello', author } })
  if (kind === 'thread') {
    // The thread is held, from an earlier fetch whose copy has now expired.
    store.ingestSlackResponse(C, { ok: true, messages: [before[20], before[21]], has_more: false }, { threadId: ts(20) })
    clock.now += 6 * 60_000
  }
  const anchor = kind === 'history' ? ts(5) : ts(20)
  return { store, anchor, started: started.promise, release: () => gate.resolve(), calls: () => calls }
}

/** Each event kind, aimed at message `target`, and what must hold after the race. */
const events = (target: string): Array<[string, ChannelEvent, (store: ChannelStore) => void]> => [
  [
    'an edit',
    { type: 'message_changed', channelId: C, messageId: target, text: '(removed)' },
    (store) => expect(store.getMessage(C, target)?.text).toBe('(removed)'),
  ],
  [
    'a deletion',
    { type: 'message_deleted', channelId: C, messageId: target },
    (store) => expect(store.getMessage(C, target)).toBeNull(),
  ],
  [
    'a reaction added',
    { type: 'reaction_added', channelId: C, messageId: target, reaction: 'white_check_mark', userId: 'U2' },
    (store) => expect(store.getMessage(C, target)?.reactions.map((r) => r.name)).toContain('white_check_mark'),
  ],
  [
    'a reaction removed',
    { type: 'reaction_removed', channelId: C, messageId: target, reaction: 'eyes', userId: 'U9' },
    (store) => expect(store.getMessage(C, target)?.reactions.map((r) => r.name) ?? []).not.toContain('eyes'),
  ],
  [
    'a new reply',
    { type: 'message', channelId: C, message: { ts: ts(22), text: 'second reply', author, threadId: ts(20) } },
    (store) => expect(store.getMessage(C, ts(22))?.text).toBe('second reply'),
  ],
  [
    'a new channel message',
    { type: 'message', channelId: C, message: { ts: ts(30), text: 'news', author } },
    (store) => expect(store.getMessage(C, ts(30))?.text).toBe('news'),
  ],
]

describe('events racing fetches', () => {
  for (const kind of ['history', 'thread'] as FetchKind[]) {
    // The history page holds message 10, the thread page reply 21.
    for (const [what, event, check] of events(kind === 'history' ? ts(10) : ts(21))) {
      it(`${what} during a ${kind} fetch survives the older fetched copy`, async () => {
        const r = racing(kind)
        const built = r.store.buildContext(C, r.anchor)
        await r.started
        r.store.ingest(event)
        r.release()
        await built
        check(r.store)
        // What the model would see now: no removed text comes back.
        const after = await r.store.buildContext(C, r.anchor)
        const secret = kind === 'history' ? 'hunter2' : 'swordfish'
        if (what === 'an edit' || what === 'a deletion') expect(after.promptSection).not.toContain(secret)
        expect(r.calls()).toBe(1)
        if (kind === 'thread') {
          // Nothing more to fetch: the next build of the thread makes no call.
          await r.store.buildContext(C, ts(20))
          expect(r.calls()).toBe(1)
        }
      })
    }
  }

  it('an edit during a fetch by message id survives it', async () => {
    const gate = deferred<void>()
    const started = deferred<void>()
    const store = new ChannelStore({
      clock: () => T0 + 60_000,
      fetcher: {
        fetchMessages: async () => {
          started.resolve()
          await gate.promise
          return { ok: true, messages: [slack(40, 'password: hunter2')] }
        },
      },
    })
    store.ingestSlackResponse(C, { ok: true, messages: [] })
    const built = store.buildContext(C, ts(40))
    await started.promise
    // The store did not hold message 40 when the edit came: the edit is applied to the
    // fetched copy.
    store.ingest({ type: 'message_changed', channelId: C, messageId: ts(40), text: '(removed)' })
    gate.resolve()
    expect((await built).snapshot.anchor.text).toBe('(removed)')
    expect(store.getMessage(C, ts(40))?.text).toBe('(removed)')
  })

  it('a reply in a cold thread that arrives during its fetch is kept: one fetch, not two', async () => {
    const gate = deferred<void>()
    const started = deferred<void>()
    let calls = 0
    const store = new ChannelStore({
      clock: () => T0 + 60_000,
      fetcher: {
        fetchThread: async () => {
          calls++
          started.resolve()
          await gate.promise
          return { ok: true, messages: [before[20], before[21]], has_more: false }
        },
      },
    })
    store.ingestSlackResponse(C, { ok: true, messages: [before[20]] })
    const built = store.buildContext(C, ts(20))
    await started.promise
    store.ingest({ type: 'message', channelId: C, message: { ts: ts(22), text: '@bot and now?', author, threadId: ts(20) } })
    gate.resolve()
    await built
    const ctx = await store.buildContext(C, ts(22))
    expect(calls).toBe(1)
    expect(ctx.thread!.replies.map((r) => r.text)).toEqual(['token: swordfish', '@bot and now?'])
  })
})

describe('load on one cold thread', () => {
  /** A store that holds root 20 but not its replies; the thread fetch takes 20 ms. */
  function coldThread() {
    const out = { store: null as unknown as ChannelStore, calls: 0 }
    out.store = new ChannelStore({
      clock: () => T0 + 60_000,
      fetcher: {
        fetchThread: async () => {
          out.calls++
          await new Promise((r) => setTimeout(r, 20))
          return { ok: true, messages: [before[20], before[21]], has_more: false }
        },
      },
    })
    out.store.ingestSlackResponse(C, { ok: true, messages: [before[20]] })
    return out
  }

  it('1,000 concurrent builds on one cold thread make one fetch and agree to the byte', async () => {
    const cold = coldThread()
    const store = cold.store
    const all = await Promise.all(Array.from({ length: 1_000 }, () => store.buildContext(C, ts(20))))
    expect(cold.calls).toBe(1)
    expect(new Set(all.map((c) => c.promptSection)).size).toBe(1)
    expect(all.reduce((n, c) => n + c.apiCalls, 0)).toBe(1)
    expect(store.stats().calls['conversations.replies']).toBe(1)
  })

  it('1,000 concurrent tool calls on one cold thread make one fetch', async () => {
    const cold = coldThread()
    const t = cold.store.tools(C)
    const all = await Promise.all(Array.from({ length: 1_000 }, () => t.execute('channel_messages', { thread_id: ts(20) })))
    expect(cold.calls).toBe(1)
    expect(new Set(all).size).toBe(1)
    expect(JSON.parse(all[0]).thread.replies[0].text).toBe('token: swordfish')
  })
})

describe('deletions that are no longer remembered', () => {
  it('a message deleted before the newest 10,000 deletions does not come back with a later fetch', async () => {
    const store = new ChannelStore({
      clock: () => T0 + 3_600_000,
      fetcher: {
        fetchHistory: async () => ({
          ok: true,
          messages: [slack(5000, 'anchor'), slack(2, 'newer than every forgotten deletion'), slack(1, 'password: hunter2')],
          has_more: false,
        }),
      },
    })
    // The secret is deleted first, then 10,004 more messages (all within the same second).
    const more = Array.from({ length: 10_004 }, (_, i) => ({ type: 'message_deleted' as const, channelId: C, messageId: `${T0 / 1000 + 1}.${String(101 + i).padStart(6, '0')}` }))
    store.ingestMany([{ type: 'message_deleted', channelId: C, messageId: ts(1) }, ...more])
    store.ingest({ type: 'message', channelId: C, message: { ts: ts(5000), text: 'anchor', author } })
    const ctx = await store.buildContext(C, ts(5000))
    expect(ctx.apiCalls).toBe(1)
    expect(ctx.promptSection).not.toContain('hunter2')
    expect(store.getMessage(C, ts(1))).toBeNull()
    // Messages after the forgotten deletions' horizon are stored as usual.
    expect(store.getMessage(C, ts(2))?.text).toBe('newer than every forgotten deletion')
  })
})
