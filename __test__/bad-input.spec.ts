// Bad input of every kind, against every export and method: a clear TypeError /
// RangeError naming the export and the field, or a documented default, never a crash.
// The full matrix runs in a child process (a crash there fails the test instead of the
// runner); the cases the matrix found are also pinned here one by one.
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import {
  ChannelStore,
  RuntimeGuard,
  applyThreadBudget,
  buildChannelSnapshot,
  buildThreadContext,
  buildChannelTools,
  createAttachmentManifest,
  recordAttachment,
  serializeManifest,
  type ContextEngineError,
} from '@openclaw/context-engine'
import { thrown } from './helpers'

const script = fileURLToPath(new URL('./scripts/bad-input-matrix.cjs', import.meta.url))
const ts = (s: number) => `${1775835600 + s}.000100`
const author = { userId: 'U1', displayName: 'Sam' }

describe('the bad-input matrix', () => {
  it('makes thousands of hostile calls across every export and method without a crash or an unnamed error', () => {
    const run = spawnSync(process.execPath, [script], { encoding: 'utf8', timeout: 300_000, maxBuffer: 64 * 1024 * 1024 })
    expect(run.signal).toBeNull()
    expect(run.status).toBe(0)
    const report: { entries: number; calls: number; outcomes: Record<string, number>; violations: string[] } = JSON.parse(run.stdout)
    console.log(`bad-input matrix: ${report.entries} entry points, ${report.calls} calls, outcomes ${JSON.stringify(report.outcomes)}`)
    expect(report.entries).toBeGreaterThanOrEqual(50)
    expect(report.calls).toBeGreaterThan(3_000)
    expect(report.violations).toEqual([])
  }, 310_000)
})

describe('numbers JSON cannot hold', () => {
  const cases: Array<[string, () => unknown, RegExp]> = [
    ['options.windowSize', () => new ChannelStore({ windowSize: NaN }), /ChannelStore: options\.windowSize: expected a finite number, got NaN/],
    ['options.threadReplies.max', () => new ChannelStore({ threadReplies: { max: Infinity } }), /options\.threadReplies\.max: expected a finite number, got Infinity/],
    ['options.threadReplies.ttl', () => new ChannelStore({ threadReplies: { ttl: -Infinity } }), /options\.threadReplies\.ttl: expected a finite number, got -Infinity/],
    ['options.threadStarters.max', () => new ChannelStore({ threadStarters: { max: NaN } }), /options\.threadStarters\.max/],
    ['options.media.maxSize', () => new ChannelStore({ media: { maxSize: NaN } }), /options\.media\.maxSize/],
    ['options.rateLimit.maxCallsPerMin', () => new ChannelStore({ rateLimit: { maxCallsPerMin: NaN } }), /options\.rateLimit\.maxCallsPerMin/],
    ['options.rateLimit.perMethod', () => new ChannelStore({ rateLimit: { perMethod: { 'conversations.replies': Infinity } } }), /options\.rateLimit\.perMethod\.conversations\.replies/],
    ['options.rateLimit.queueTimeout', () => new ChannelStore({ rateLimit: { queueTimeout: NaN } }), /options\.rateLimit\.queueTimeout/],
    ['options.rateLimit.pageSize', () => new ChannelStore({ rateLimit: { pageSize: NaN } }), /options\.rateLimit\.pageSize/],
    ['options.fetchTimeout', () => new ChannelStore({ fetchTimeout: NaN }), /options\.fetchTimeout/],
    ['anchor.replyCount', () => buildChannelSnapshot({ channel: { id: 'C', name: 'c', platform: 'slack' }, anchor: { ts: ts(1), text: 'x', author, replyCount: NaN }, adjacentMessages: [] } as never), /buildChannelSnapshot: anchor\.replyCount: expected a finite number, got NaN/],
    ['totalReplyCount', () => buildThreadContext({ root: { ts: ts(1), text: 'x', author }, replies: [], totalReplyCount: Infinity } as never), /buildThreadContext: totalReplyCount: expected a finite number, got Infinity/],
    ['budgetTokens', () => applyThreadBudget({ replies: [], budgetTokens: NaN }), /applyThreadBudget: budgetTokens: must be a finite number, got NaN/],
    ['RuntimeGuard inlineMaxBytes', () => new RuntimeGuard({ inlineMaxBytes: NaN }), /RuntimeGuard: options\.inlineMaxBytes: expected a finite number, got NaN/],
    ['planMedia inlineMaxBytes', () => new RuntimeGuard().planMedia([], { inlineMaxBytes: Infinity } as never), /planMedia: options\.inlineMaxBytes: expected a finite number, got Infinity/],
    ['tools maxMediaBytes', () => new ChannelStore().tools('C', { maxMediaBytes: NaN }), /tools: options\.maxMediaBytes: expected a finite number, got NaN/],
  ]
  for (const [field, call, message] of cases) {
    it(`${field}: NaN or ±Infinity is a RangeError naming the field, not a silent default`, () => {
      const e = thrown(call)
      expect(e).toBeInstanceOf(RangeError)
      expect(e.message).toMatch(message)
    })
  }

  it('buildContext options too (as a rejection)', async () => {
    const store = new ChannelStore()
    await expect(store.buildContext('C', ts(1), { adjacent: NaN })).rejects.toThrow(/buildContext: options\.adjacent: expected a finite number, got NaN/)
  })
})

describe('values V8 cannot convert, and values read twice', () => {
  it('cycles, BigInt and revoked proxies are TypeErrors naming the export, not bare V8 messages', () => {
    const cycle: Record<string, unknown> = { type: 'message', channelId: 'C' }
    cycle.message = cycle
    const store = new ChannelStore()
    expect(thrown(() => store.ingest(cycle as never)).message).toMatch(/^ChannelStore.ingest: event: cannot be read as JSON \(.*circular/)
    expect(thrown(() => store.ingest({ type: 'message', channelId: 'C', message: { ts: ts(1), text: 'x', author, replyCount: 1n } } as never)).message).toMatch(/^ChannelStore.ingest: event: cannot be read as JSON \(.*BigInt/)
    const r = Proxy.revocable({}, {})
    r.revoke()
    expect(thrown(() => store.ingest(r.proxy as never))).toBeInstanceOf(TypeError)
    const m = createAttachmentManifest() as unknown as Record<string, unknown>
    m.entries = { F1: cycle }
    const e = thrown(() => serializeManifest(m as never))
    expect(e).toBeInstanceOf(TypeError)
    expect(e.message).toMatch(/^serializeManifest: manifest: cannot be read \(.*circular/)
    expect((e as Error & { cause?: unknown }).cause).toBeInstanceOf(TypeError)
  })

  it("a caller's throwing getter surfaces as a TypeError naming the export, with the original as its cause", () => {
    const boom = new Error('boom')
    const input = Object.defineProperty({}, 'channel', { enumerable: true, get: () => { throw boom } })
    const e = thrown(() => buildChannelTools(input as never))
    expect(e.message).toBe('buildChannelTools: input: cannot be read (boom)')
    expect((e as Error & { cause?: unknown }).cause).toBe(boom)
  })

  it('buildChannelTools names itself in errors raised by the store calls it makes', () => {
    const cases: Array<[unknown, RegExp]> = [
      [{ channel: { id: 'C\ud800', name: 'x' }, messages: [] }, /^buildChannelTools: channel\.id: contains a lone surrogate/],
      [{ channel: { id: 'C1' }, messages: [{ ts: ts(1), text: 'x', author, replyCount: NaN }] }, /^buildChannelTools: messages\[0\]\.replyCount: expected a finite number, got NaN/],
      [{ channel: { id: 'C1' }, messages: [], maxMediaBytes: NaN }, /^buildChannelTools: maxMediaBytes: expected a finite number, got NaN/],
    ]
    for (const [input, message] of cases) expect(thrown(() => buildChannelTools(input as never)).message).toMatch(message)
  })

  it('a text getter that answers differently on its second read cannot shift fields in ingestMany', () => {
    const store = new ChannelStore()
    let reads = 0
    const message = { ts: ts(1), author: { userId: 'U7', displayName: 'Priya' } }
    Object.defineProperty(message, 'text', { enumerable: true, get: () => (++reads === 1 ? 'first read' : 42) })
    store.ingestMany([{ type: 'message', channelId: 'C', message: message as never }])
    const held = store.getMessage('C', ts(1))
    expect(held?.text).toBe('first read')
    expect(held?.author).toMatchObject({ user_id: 'U7', display_name: 'Priya' })
    expect(reads).toBe(1)
  })

  it('an id with NUL is an ordinary manifest key', () => {
    const m = createAttachmentManifest()
    recordAttachment(m, { artifact_id: 'F\u0000x', content_hash: 'a'.repeat(64), media_type: 'image/png', display_name: 'a.png', source_message_id: ts(1), source_thread_id: null, included_at_turn: 1 } as never)
    expect(m.entries['F\u0000x'].artifact_id).toBe('F\u0000x')
    expect(Object.keys(m.entries)).toEqual(['F\u0000x'])
  })

  it('observe and loadMedia, which never throw, skip a message or entry whose getter throws', () => {
    const g = new RuntimeGuard()
    const hostile = Object.defineProperty({}, 'type', { enumerable: true, get: () => { throw new Error('trap') } })
    expect(() => g.observe(hostile)).not.toThrow()
    expect(g.loadMedia([hostile]).loaded).toBe(false)
  })
})

describe('error codes', () => {
  it('every input error carries code and path as properties, from the native and the JS layer alike', async () => {
    const cases: Array<[() => unknown, string, string, string]> = [
      [() => new ChannelStore({ windowSize: NaN }), 'RangeError', 'ERR_OUT_OF_RANGE', 'options.windowSize'],
      [() => buildThreadContext({ root: { ts: ts(1), text: 'x' }, replies: [] } as never), 'TypeError', 'ERR_INVALID_ARG_TYPE', 'root.author'],
      [() => buildChannelTools({ channel: { id: 5 }, messages: [] } as never), 'TypeError', 'ERR_INVALID_ARG_TYPE', 'channel.id'],
      [() => buildChannelTools({ channel: { id: 'C' }, messages: [{ ts: 5 }] } as never), 'TypeError', 'ERR_INVALID_ARG_TYPE', 'messages[0].ts'],
      [() => applyThreadBudget(Object.defineProperty({}, 'replies', { get: () => { throw new Error('z') } }) as never), 'TypeError', 'ERR_UNREADABLE_INPUT', 'input'],
      [() => new ChannelStore().ingestMany([Object.defineProperty({ type: 'message' }, 'channelId', { enumerable: true, get: () => { throw new Error('z') } })] as never), 'TypeError', 'ERR_UNREADABLE_INPUT', 'events'],
    ]
    for (const [call, kind, code, path] of cases) {
      const e = thrown(call) as ContextEngineError
      expect([e.constructor.name, e.code, e.path]).toEqual([kind, code, path])
    }
    const anchor = (await new ChannelStore().buildContext('C', ts(1)).catch((e) => e)) as ContextEngineError
    expect(anchor.code).toBe('ANCHOR_NOT_FOUND')
  })
})

describe('unknown fields', () => {
  it('an unknown or misspelled message field is refused in every shape and lane, never dropped', () => {
    const store = new ChannelStore()
    const m = { ts: ts(1), text: 'x', author, files: [{ artifactId: 'F1' }] }
    // The packed path of ingestMany and its JSON path, and single events, say the same.
    expect(() => store.ingestMany([{ type: 'message', channelId: 'C', message: m } as never])).toThrow(/ingestMany: events\[0\]\.message\.files: unknown field/)
    expect(() => store.ingest({ type: 'message', channelId: 'C', message: m } as never)).toThrow(/ingest: event\.message\.files: unknown field/)
    expect(() => store.ingestMany([{ type: 'message', channelId: 'C', message: { ts: ts(1), text: 'x', author: { ...author, avatar: 'a.png' } } } as never])).toThrow(/author\.avatar: unknown field/)
    expect(store.stats().ingestedEvents).toBe(0)
    const snapshot = { channel: { id: 'C', name: 'c', platform: 'slack' }, anchor: m, adjacentMessages: [] }
    expect(() => buildChannelSnapshot(snapshot as never)).toThrow(/buildChannelSnapshot: anchor\.files: unknown field/)
    expect(() => buildThreadContext({ root: { ts: ts(1), text: 'x', author }, replies: [m] } as never)).toThrow(/replies\[0\]\.files: unknown field/)
  })
})
