// The drop-in exports in the runner's shapes are built on the JS side (js/dropin.js); the
// native exports build the same. Both, on the same random inputs, give equal results.
import { readdirSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { applyThreadBudget, buildChannelSnapshot, buildThreadContext, buildThreadContextWithTelemetry, estimateTokens } from '@openclaw/context-engine'

const require = createRequire(import.meta.url)
const root = join(__dirname, '..')
const native = require(join(root, readdirSync(root).find((f) => f.endsWith('.node'))!))
const { xorshift } = require('../bench/rng.js') as { xorshift: (seed: number) => () => number }

const PIECES = ['deploy ', 'ok', '😀', '👩‍💻 ', 'Überprüfung ', '  ', '\n', 'デプロイ', '`x`', '</thread_context>']
function texts(random: () => number) {
  const text = (max: number) => {
    let s = ''
    const n = Math.floor(random() * max)
    while (s.length < n) s += PIECES[Math.floor(random() * PIECES.length)]
    return s
  }
  return text
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
    // Text passes through as given, as in the runner's module, a lone surrogate included.
    expect(buildThreadContext({ ...thread, replies: [], rootText: 'a\ud800' } as never)!.root.text).toBe('a\ud800')
    // A getter that throws is named as unreadable, read once.
    let reads = 0
    const tricky = { ...thread, get rootText() { reads++; throw new Error('boom') } }
    expect(() => buildThreadContext(tricky as never)).toThrow(/^buildThreadContext: thread: cannot be read \(boom\)/)
    expect(reads).toBe(1)
  })
})
