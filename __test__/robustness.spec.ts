// No input, however large or malformed, may crash the process: every call either returns
// or throws an Error the caller can catch.
import { describe, expect, it } from 'vitest'
import * as engine from '@openclaw/context-engine'
import { msg, snapshotInput, threadInput, thrown, ts } from './helpers'

const TEN_MB = 10 * 1024 * 1024

function deep(levels: number): unknown {
  let v: unknown = 'leaf'
  for (let i = 0; i < levels; i++) v = { nested: v, list: [i] }
  return v
}

function deepArray(levels: number): unknown {
  let v: unknown = []
  for (let i = 0; i < levels; i++) v = [v]
  return v
}

/** Calls fn; passes when it returns or throws an Error (never anything else). */
function survives(fn: () => unknown): unknown {
  try {
    return fn()
  } catch (e) {
    expect(e).toBeInstanceOf(Error)
    return e
  }
}

describe('large inputs', () => {
  const huge = 'word '.repeat(TEN_MB / 5)

  it('handles 10 MB texts in every text function', () => {
    expect(engine.estimateTokens(huge)).toBe(Math.ceil(huge.length / 4))
    const snippet = engine.truncateSnippet(huge)
    expect(snippet).toHaveLength(150)
    expect(engine.sha256Hex(huge)).toMatch(/^[0-9a-f]{64}$/)
  })

  it('builds a snapshot around a 10 MB anchor and a thread with a 10 MB reply', () => {
    const s = engine.buildChannelSnapshot(snapshotInput(3, huge))
    expect(s.anchor.text).toHaveLength(huge.length)
    const input = snapshotInput(1)
    input.adjacentMessages[0].text = huge
    expect(engine.buildChannelSnapshot(input).adjacent[0].snippet).toHaveLength(150)
    const { threadContext: context, budgetUtilization: telemetry } = engine.buildThreadContextWithTelemetry(threadInput([huge, 'ok']))
    expect(context!.replies[0].is_truncated).toBe(true)
    expect(context!.replies[0].text).toHaveLength(1200)
    expect(telemetry!.actualTokens).toBeLessThanOrEqual(8000)
    const budget = engine.applyThreadBudget({ replies: [{ ts: '1', text: huge }, { ts: '2', text: huge }] })
    expect(budget.included).toHaveLength(1)
  })

  it('handles a thread of 20,000 replies', () => {
    const replies = Array.from({ length: 20_000 }, (_, i) => `reply ${i}`)
    const t = engine.buildThreadContext(threadInput(replies))!
    expect(t.truncation.total_replies).toBe(20_000)
    expect(t.replies.at(-1)!.text).toBe('reply 19999')
  })
})

describe('lone surrogates', () => {
  const broken = 'before \ud800 middle \udfff after \ud83d'

  it('measure and snippet like JavaScript strings', () => {
    expect(engine.estimateTokens(broken)).toBe(Math.ceil(broken.length / 4))
    expect(engine.truncateSnippet(broken)).toBe(broken.replace(/\s+/g, ' ').trim())
  })

  it('become U+FFFD in structured output instead of failing', () => {
    const s = engine.buildChannelSnapshot(snapshotInput(1, broken))
    expect(s.anchor.text).toBe('before \ufffd middle \ufffd after \ufffd')
    const t = engine.buildThreadContext(threadInput([broken]))!
    expect(t.replies[0].text).toBe('before \ufffd middle \ufffd after \ufffd')
    // A valid pair next to a lone half survives.
    const mixed = engine.buildChannelSnapshot(snapshotInput(0, '😀\ud800😀')).anchor.text
    expect(mixed).toBe('😀\ufffd😀')
  })

  it('in a manifest record do not break loading', () => {
    const m = engine.createAttachmentManifest()
    engine.recordAttachment(m, {
      artifactId: 'F1',
      displayName: 'bad \udc00 name',
      mediaType: 'image/png',
      contentHash: 'aa',
      sourceMessageId: '1.1',
      includedAtTurn: 1,
    })
    const text = engine.serializeManifest(m)
    const loaded = engine.loadManifestFromEntries([{ type: 'custom', customType: engine.ATTACHMENT_MANIFEST_KEY, data: text }])
    expect(loaded.entries.F1.display_name).toBe('bad \ufffd name')
  })
})

describe('malformed input', () => {
  const cyclic: Record<string, unknown> = { ts: '1', text: 'x' }
  cyclic.author = cyclic
  const withBigInt = { ...msg(ts(1), 'x'), replyCount: 10n }
  const throwingGetter = Object.defineProperty({ ...msg(ts(1), 'x') }, 'text', {
    enumerable: true,
    get() {
      throw new Error('getter')
    },
  })
  const proxy = new Proxy(
    {},
    {
      get() {
        throw new Error('proxy get')
      },
      ownKeys() {
        throw new Error('proxy keys')
      },
    },
  )
  const junk: unknown[] = [
    undefined,
    null,
    0,
    -1,
    NaN,
    '',
    'string',
    Symbol('s'),
    10n,
    () => 1,
    [],
    {},
    { channel: 5 },
    cyclic,
    withBigInt,
    throwingGetter,
    proxy,
    deep(2_000),
    deepArray(100_000),
    { anchor: deep(5_000) },
    { ...snapshotInput(1), adjacentMessages: deepArray(50_000) },
    { ...snapshotInput(1), adjacentMessages: [cyclic] },
    { ...snapshotInput(1), adjacentMessages: Array.from({ length: 100_000 }, (_, i) => (i % 2 ? null : { ts: i })) },
    new Uint8Array(10),
    new Date(0),
    new Map([[1, 2]]),
  ]

  it('never crash the builders', () => {
    for (const value of junk) {
      survives(() => engine.buildChannelSnapshot(value as never))
      survives(() => engine.buildThreadContext(value as never))
      survives(() => engine.buildThreadContext(threadInput(['a']), value as never))
      survives(() => engine.buildThreadContextWithTelemetry(value as never))
      survives(() => engine.applyThreadBudget(value as never))
      survives(() => engine.applyThreadBudget({ replies: [value] } as never))
      survives(() => engine.buildContextPromptSection(value as never))
      survives(() => engine.buildContextPromptSection({ snapshot: value } as never, value as never))
      survives(() => engine.estimateTokens(value as never))
      survives(() => engine.truncateSnippet(value as never))
      survives(() => engine.sha256Hex(value as never))
    }
  })

  it('never crash the manifest functions, and loading never throws', () => {
    const m = engine.createAttachmentManifest()
    for (const value of junk) {
      survives(() => engine.recordAttachment(m, value as never))
      survives(() => engine.recordAttachment(value as never, value as never))
      survives(() => engine.isAlreadyAttached(value as never, value as never))
      survives(() => engine.getThreadAttachments(value as never, value as never))
      survives(() => engine.checkAttachment(value as never, value as never))
      survives(() => engine.checkAttachment(m, value as never))
      survives(() => engine.serializeManifest(value as never))
      survives(() => engine.serializeManifest({ entries: value } as never))
      expect(engine.loadManifestFromEntries(value as never)).toEqual({ entries: {} })
      expect(engine.loadManifestFromEntries([value] as never)).toEqual({ entries: {} })
      const data = { type: 'custom', customType: engine.ATTACHMENT_MANIFEST_KEY, data: value }
      expect(engine.loadManifestFromEntries([data])).toEqual({ entries: {} })
    }
    expect(Object.keys(m.entries)).toEqual([])
  })

  it('reports deep nesting as an error, not a crash', () => {
    // However deep it goes, a field the message does not have is refused by name.
    const input = snapshotInput(1)
    ;(input.anchor as unknown as Record<string, unknown>).extra = deep(3_000)
    expect(thrown(() => engine.buildChannelSnapshot(input))).toMatchObject({
      name: 'TypeError',
      code: 'ERR_INVALID_ARG_TYPE',
      path: 'anchor.extra',
    })
    // Too deep for JavaScript to serialize at all: the RangeError it throws, catchable.
    const tooDeep = thrown(() => engine.buildChannelSnapshot({ ...snapshotInput(1), adjacentMessages: deepArray(100_000) } as never))
    expect(tooDeep).toBeInstanceOf(RangeError)
    expect(tooDeep.message).toMatch(/Maximum call stack size exceeded/)
  })

  it('leaves the process usable afterwards', () => {
    expect(engine.estimateTokens('still alive')).toBe(3)
    expect(engine.buildChannelSnapshot(snapshotInput(2)).adjacent).toHaveLength(2)
  })
})
