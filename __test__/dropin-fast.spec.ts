// The drop-in exports in the runner's shapes are built on the JS side (js/dropin/context.js); the
// native exports build the same. Both, on the same random inputs, give equal results.
import { readdirSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import {
  ATTACHMENT_MANIFEST_KEY,
  applyThreadBudget,
  buildChannelSnapshot,
  buildThreadContext,
  buildThreadContextWithTelemetry,
  ChannelStore,
  coreSessionContextSubscriber,
  createAttachmentManifest,
  estimateTokens,
  loadManifestFromEntries,
  recordAttachment,
  serializeManifest,
} from '@openclaw/context-engine'

const require = createRequire(import.meta.url)
const root = join(__dirname, '..')
const native = require(join(root, readdirSync(root).find((f) => f.endsWith('.node'))!))
const { xorshift } = require('../bench/rng.js') as { xorshift: (seed: number) => () => number }
const original = require('../bench/baseline.js') as Record<string, (...args: unknown[]) => unknown>

// Well-formed text: both doors give one answer on it.
const PIECES = ['deploy ', 'ok', '😀', '👩‍💻 ', 'Überprüfung ', '  ', '\n', 'デプロイ', '`x`', '</thread_context>']
// Lone surrogates (a high one alone, a low one alone, half an emoji): the drop-in passes them
// through as the runner's modules do; the native exports give U+FFFD.
const LONE_PIECES = ['\ud800', '\udc00', '\ud83d', '\ude00x']
function texts(random: () => number, pieces = PIECES) {
  const text = (max: number) => {
    let s = ''
    const n = Math.floor(random() * max)
    while (s.length < n) s += pieces[Math.floor(random() * pieces.length)]
    return s
  }
  return text
}
/** `value` with every string in it made well formed (a lone surrogate as U+FFFD). */
function wellFormed(value: unknown): unknown {
  if (typeof value === 'string') return value.toWellFormed()
  if (Array.isArray(value)) return value.map(wellFormed)
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, wellFormed(v)]))
  return value
}

describe('the runner-shaped drop-in, built in JS, equals the native build', () => {
  it('buildThreadContext and its telemetry, over 300 random threads and budgets', () => {
    const random = xorshift(20261127)
    const text = texts(random)
    for (let k = 0; k < 300; k++) {
      const files = () => (random() < 0.2 ? [{ artifactId: `F${k}`, mimeType: 'image/png', byteLength: 10, ...(random() < 0.5 ? { filename: 'a.png' } : {}) }] : random() < 0.5 ? undefined : null)
      const replies = Array.from({ length: Math.floor(random() * 40) }, (_, i) => ({
        messageId: `1.${i}`,
        ts: `1.${i}`,
        authorId: `U${i % 3}`,
        authorName: `u${i % 3}`,
        authorIsBot: random() < 0.1,
        text: text(random() < 0.1 ? 3000 : 300),
        files: files(),
        threadId: '1.0', // a channel message's own field
      }))
      const thread = { rootMessageId: '1.0', rootTs: '1.0', rootAuthorId: 'U0', rootAuthorName: 'u0', rootAuthorIsBot: false, rootText: text(500), rootFiles: files(), replies, totalReplyCount: replies.length + Math.floor(random() * 5) }
      const budget = random() < 0.2 ? undefined : Math.floor(random() * 3000) + (random() < 0.2 ? 0.5 : 0)
      expect(buildThreadContext(thread as never, budget)).toEqual(native.buildThreadContext(thread, budget))
      expect(buildThreadContextWithTelemetry(thread as never, budget)).toEqual(native.buildThreadContextWithTelemetry(thread, budget))
      const flat = replies.map((r) => ({ ts: r.ts, text: r.text }))
      expect(applyThreadBudget({ replies: flat, budgetTokens: budget })).toEqual(native.applyThreadBudget({ replies: flat, budgetTokens: budget }))
      for (const r of replies) expect(estimateTokens(r.text)).toBe(native.estimateTokens(r.text))
    }
  })

  it('buildChannelSnapshot, over 200 random channels', () => {
    const random = xorshift(7)
    const text = texts(random)
    for (let k = 0; k < 200; k++) {
      const msg = (i: number) => ({
        messageId: `2.${i}`,
        ts: `2.${i}`,
        authorId: `U${i % 4}`,
        authorName: `u${i % 4}`,
        authorIsBot: false,
        text: text(400),
        threadId: random() < 0.3 ? '2.0' : null,
        ...(random() < 0.8 ? { replyCount: Math.floor(random() * 3), hasMedia: random() < 0.3, reactions: random() < 0.3 ? [':eyes: 2'] : [] } : {}),
      })
      const adjacentMessages = Array.from({ length: Math.floor(random() * 30) }, (_, i) => msg(i))
      const anchor = random() < 0.5 && adjacentMessages.length > 0 ? adjacentMessages[0] : msg(99)
      const input = { platform: 'slack', channelId: 'C1', channelName: 'ops', anchor: { ...anchor, files: random() < 0.3 ? [{ artifactId: 'F1', mimeType: 'text/plain', byteLength: 3 }] : undefined }, adjacentMessages }
      expect(buildChannelSnapshot(input as never)).toEqual(native.buildChannelSnapshot(input))
    }
  })

  it('leaves what it does not take to the native export, which names the field', () => {
    const thread = { rootMessageId: '1', rootTs: '1', rootAuthorId: 'U', rootAuthorName: 'u', rootAuthorIsBot: false, rootText: 'r', replies: [{ messageId: '2', ts: '2', authorId: 'U', authorName: 'u', authorIsBot: 'no', text: 't' }], totalReplyCount: 1 }
    expect(() => buildThreadContext(thread as never)).toThrow(/^buildThreadContext: replies\[0\]\.authorIsBot: /)
    expect(() => buildThreadContext({ ...thread, replies: [] } as never, -1)).toThrow(RangeError)
    // Text comes back as given, a lone surrogate too, as the runner's module returns it.
    expect(buildThreadContext({ ...thread, replies: [], rootText: 'a\ud800' } as never)!.root.text).toBe('a\ud800')
    // A getter that throws is named as unreadable, read once.
    let reads = 0
    const tricky = { ...thread, get rootText() { reads++; throw new Error('boom') } }
    expect(() => buildThreadContext(tricky as never)).toThrow(/^buildThreadContext: thread: cannot be read \(boom\)/)
    expect(reads).toBe(1)
  })
})

describe('both doors give one answer but for lone surrogates, which the drop-in passes through', () => {
  const LONE = ['\ud800', '\udfff', 'a\ud83d', '\ude00b', 'ok']
  /** `base`, sometimes with a lone surrogate. */
  const odd = (random: () => number, base: string, p = 0.3) => (random() < p ? `${base}${LONE[Math.floor(random() * LONE.length)]}` : base)
  /** What a call gives: its result, or the error it throws. */
  const outcome = (f: () => unknown) => {
    try {
      return { value: f() }
    } catch (e) {
      return { threw: `${(e as Error).name}: ${(e as Error).message}` }
    }
  }

  it('in every field of the thread, the snapshot and the subscriber, over 300 random inputs', () => {
    const random = xorshift(51)
    const text = texts(random, [...PIECES, ...LONE_PIECES])
    // A reply long enough to be cut is well formed here: where a lone high surrogate is the
    // unit the cut looks at, the drop-in cuts before it as the runner did, the native export
    // after its U+FFFD (the next test holds the drop-in to the runner there).
    const long = texts(random)
    for (let k = 0; k < 300; k++) {
      // An id with a lone surrogate: refused by the native exports (U+FFFD would make it
      // another id), kept exactly by the drop-in, which converts nothing.
      const pid = k % 3 === 0 ? 0.05 : 0
      const replies = Array.from({ length: Math.floor(random() * 12) }, (_, i) => ({
        messageId: odd(random, `1.${i}`, pid),
        ts: odd(random, `1.${i}`, pid),
        authorId: odd(random, 'U1', pid),
        authorName: odd(random, 'Sam'),
        authorIsBot: false,
        text: random() < 0.2 ? long(2500) : text(200),
        files: random() < 0.2 ? [{ artifactId: odd(random, 'F1', pid), mimeType: odd(random, 'image/png'), filename: odd(random, 'a.png'), byteLength: 1 }] : undefined,
      }))
      const thread = { rootMessageId: odd(random, '1.0', pid), rootTs: odd(random, '1.0', pid), rootAuthorId: odd(random, 'U0', pid), rootAuthorName: odd(random, 'Ada'), rootAuthorIsBot: false, rootText: text(300), replies, totalReplyCount: replies.length }
      const budget = Math.floor(random() * 1500)
      // The drop-in's answer, its strings made well formed, is the native one.
      const mine = outcome(() => buildThreadContextWithTelemetry(thread as never, budget))
      const theirs = outcome(() => native.buildThreadContextWithTelemetry(thread, budget))
      if ('value' in theirs) expect(wellFormed(mine)).toEqual(theirs)
      else {
        expect(theirs.threw).toMatch(/lone surrogate/)
        const built = (mine as { value: { threadContext: { root: { message_id: string }; replies: { ts: string }[] } } }).value.threadContext
        expect(built.root.message_id).toBe(thread.rootMessageId)
        expect(built.replies.map((r) => r.ts)).toEqual(replies.slice(replies.length - built.replies.length).map((r) => r.ts))
      }
      const flat = replies.map((r) => ({ ts: r.ts, text: r.text }))
      // (Both return the caller's replies as given; the native export's stamps are well formed.)
      expect(wellFormed(outcome(() => applyThreadBudget({ replies: flat, budgetTokens: budget })))).toEqual(wellFormed(outcome(() => native.applyThreadBudget({ replies: flat, budgetTokens: budget }))))
      const msg = (i: number) => ({ messageId: odd(random, `2.${i}`, pid), ts: odd(random, `2.${i}`, pid), authorId: odd(random, 'U2', pid), authorName: odd(random, 'Bo'), authorIsBot: false, text: text(400), threadId: random() < 0.5 ? odd(random, '2.0', pid) : null, replyCount: 1, hasMedia: false, reactions: [odd(random, ':eyes: 1')] })
      const input = { platform: odd(random, 'slack'), channelId: odd(random, 'C1', pid), channelName: odd(random, 'ops'), anchor: msg(99), adjacentMessages: Array.from({ length: Math.floor(random() * 10) }, (_, i) => msg(i)), thread }
      // (The native export checks the ids of the whole input, the thread's too, which the
      // snapshot does not read: the subscriber hands it the input without its thread.)
      const { thread: _, ...alone } = input
      const snapshot = outcome(() => native.buildChannelSnapshot(alone))
      const mineSnapshot = outcome(() => buildChannelSnapshot(alone as never))
      if ('value' in snapshot) expect(wellFormed(mineSnapshot)).toEqual(snapshot)
      else expect((mineSnapshot as { value: { anchor: { message_id: string } } }).value.anchor.message_id).toBe(input.anchor.messageId)
      if (!('value' in snapshot)) continue
      const nativeThread = outcome(() => native.buildThreadContext(thread))
      if (!('value' in nativeThread)) continue
      // The subscriber's section holds the native documents, and no lone surrogate.
      const section = coreSessionContextSubscriber({ structuredContextInput: input } as never).systemPromptSections![0]
      const blocks = [...section.matchAll(/```json\n([\s\S]*?)\n```/g)].map((m) => JSON.parse(m[1]))
      expect(blocks).toEqual([snapshot.value, nativeThread.value])
      expect(section.isWellFormed()).toBe(true)
      for (const r of replies) expect(estimateTokens(r.text)).toBe(native.estimateTokens(r.text))
    }
  })

  it('the engine door shows a lone surrogate as U+FFFD; the drop-in returns it as the runner did', async () => {
    const store = new ChannelStore({ clock: () => 1_000_000 })
    const author = { userId: 'U1', displayName: 'Sam', isBot: false }
    store.ingest({ type: 'message', channelId: 'C1', message: { ts: '100.000001', text: 'root', author } } as never)
    store.ingest({ type: 'message', channelId: 'C1', message: { ts: '100.000002', text: 'half \ud83d an emoji', author, threadId: '100.000001' } } as never)
    const built = await store.buildContext('C1', '100.000002')
    const thread = { rootMessageId: '1', rootTs: '1', rootAuthorId: 'U', rootAuthorName: 'u', rootAuthorIsBot: false, rootText: 'root', replies: [{ messageId: '2', ts: '2', authorId: 'U', authorName: 'u', authorIsBot: false, text: 'half \ud83d an emoji' }], totalReplyCount: 1 }
    expect(built.thread!.replies[0].text).toBe('half \ufffd an emoji')
    expect(buildThreadContext(thread as never)!.replies[0].text).toBe('half \ud83d an emoji')
    expect(buildThreadContext(thread as never)).toEqual(original.runnerThread(thread))
  })

  it('on text with lone surrogates the drop-in gives what the runner gave, within the same budget', () => {
    const random = xorshift(63)
    const text = texts(random, [...PIECES, ...LONE_PIECES])
    for (let k = 0; k < 200; k++) {
      // Replies under the 300-token cut, returned whole, and over it, cut where the runner cut.
      const replies = Array.from({ length: Math.floor(random() * 30) }, (_, i) => ({ messageId: `1.${i}`, ts: `1.${i}`, authorId: 'U1', authorName: random() < 0.3 ? 'Sam\udc00' : 'Sam', authorIsBot: false, text: random() < 0.2 ? '\ud800'.repeat(1199) + text(50) : text(random() < 0.2 ? 2600 : 1100) }))
      const thread = { rootMessageId: '1.0', rootTs: '1.0', rootAuthorId: 'U0', rootAuthorName: 'Ada\ud800', rootAuthorIsBot: false, rootText: text(600), replies, totalReplyCount: replies.length }
      const budget = Math.floor(random() * 4000)
      const mine = buildThreadContextWithTelemetry(thread as never, budget)
      expect(mine).toEqual(original.runnerThreadWithTelemetry(thread, budget))
      expect(applyThreadBudget({ replies, budgetTokens: budget } as never)).toEqual(original.applyThreadBudget({ replies, budgetTokens: budget }))
      // The budget still bounds what is kept: the kept replies' tokens (before their cut, as
      // the runner counted them), a lone surrogate counted as the unit it is, the newest reply
      // always kept.
      const kept = replies.slice(replies.length - (mine.threadContext?.replies.length ?? 0))
      const used = kept.reduce((n, r) => n + estimateTokens(r.text), 0)
      expect(mine.budgetUtilization!.actualTokens).toBe(used)
      if (kept.length > 1) expect(used).toBeLessThanOrEqual(mine.budgetUtilization!.threadBudgetTokens)
      const input = { platform: 'slack', channelId: 'C1', channelName: 'ops\ud800', anchor: { messageId: '9', ts: '9', authorId: 'U', authorName: 'Bo\udc00', authorIsBot: false, text: text(300), threadId: null }, adjacentMessages: [] }
      expect(buildChannelSnapshot(input as never)).toEqual(original.runnerSnapshot(input))
    }
  })
})

describe('the attachment manifest, canonical on the JS side, equals the native export', () => {
  it('serializes and loads 200 random manifests, valid, camelCase, broken and odd alike', () => {
    const random = xorshift(42)
    const pick = <T,>(xs: T[]) => xs[Math.floor(random() * xs.length)]
    for (let k = 0; k < 200; k++) {
      const manifest = createAttachmentManifest()
      const n = Math.floor(random() * 12)
      for (let i = 0; i < n; i++) {
        recordAttachment(manifest, {
          artifactId: `F${k}_${i}`,
          displayName: pick(['a.png', 'q "x" \\ y.pdf', 'nul\u0000l', 'ünï 😀', '</tag>']),
          mediaType: pick(['image/png', 'text/plain']),
          contentHash: `${k}${i}`.padEnd(8, 'a'),
          sourceMessageId: `${i}.1`,
          sourceThreadId: random() < 0.5 ? null : `${i}.0`,
          includedAtTurn: Math.floor(random() * 99),
        })
      }
      const entries = manifest.entries as Record<string, Record<string, unknown>>
      const keys = Object.keys(entries)
      const odd = random()
      if (keys.length > 0 && odd < 0.15) entries[keys[0]].display_name = '' // invalid
      else if (keys.length > 0 && odd < 0.3) entries[keys[0]] = { artifactId: keys[0], displayName: 'c', mediaType: 'm', contentHash: 'h', sourceMessageId: 's', includedAtTurn: 2 } // camelCase
      else if (keys.length > 0 && odd < 0.4) entries[keys[0]].display_name = 'lone \ud800'
      else if (keys.length > 0 && odd < 0.5) entries[keys[0]].included_at_turn = 2 ** 53 + 2
      const mine = (() => { try { return serializeManifest(manifest) } catch (e) { return `threw ${(e as Error).message}` } })()
      const theirs = (() => { try { return native.serializeManifest(manifest) } catch (e) { return `threw ${(e as Error).message}` } })()
      expect(mine).toBe(theirs)
      const log = [{ type: 'message' }, { type: 'custom', customType: ATTACHMENT_MANIFEST_KEY, data: random() < 0.2 ? manifest : JSON.stringify(manifest) }, { type: 'custom', customType: 'other', data: '{}' }]
      expect(loadManifestFromEntries(log)).toEqual(native.loadManifestFromEntries(log))
    }
  })

  it('reads an entry once, and a newer broken manifest falls back to an older one as before', () => {
    const good = createAttachmentManifest()
    recordAttachment(good, { artifactId: 'F1', displayName: 'a.png', mediaType: 'image/png', contentHash: 'aa', sourceMessageId: '1.1', includedAtTurn: 1 })
    let reads = 0
    const newer = { type: 'custom', customType: ATTACHMENT_MANIFEST_KEY, get data() { reads++; return '{"entries":{"F2":{"artifact_id":"F3"}}}' } }
    const log = [{ type: 'custom', customType: ATTACHMENT_MANIFEST_KEY, data: JSON.stringify(good) }, newer]
    expect(loadManifestFromEntries(log)).toEqual(good)
    expect(reads).toBe(1)
  })
})
