import { describe, expect, it } from 'vitest'
import {
  applyThreadBudget,
  threadBudgetCut,
  buildThreadContext,
  buildThreadContextWithTelemetry,
  estimateTokens,
  THREAD_BUDGET_TOKENS,
} from '@openclaw/context-engine'
import { msg, threadInput, thrown, ts } from './helpers'

const reply = (t: string, text: string) => ({ ts: t, text, author: 'someone' })

describe('applyThreadBudget', () => {
  it('keeps everything when it fits, in order, as the same objects', () => {
    const replies = [reply('1.1', 'a'), reply('1.2', 'b'), reply('1.3', 'c')]
    const { included, truncation } = applyThreadBudget({ replies })
    expect(included).toHaveLength(3)
    included.forEach((r, i) => expect(r).toBe(replies[i]))
    expect(truncation).toEqual({ total_replies: 3, included_replies: 3, strategy: 'most_recent', omitted_range_ts: null })
  })

  it('fills newest-first and reports [oldest omitted ts, newest omitted ts]', () => {
    // 10 tokens each: a budget of 35 keeps the newest 3 of 6.
    const replies = Array.from({ length: 6 }, (_, i) => reply(`100.${i}`, 'x'.repeat(40)))
    const { included, truncation } = applyThreadBudget({ replies, budgetTokens: 35 })
    expect(included.map((r) => r.ts)).toEqual(['100.3', '100.4', '100.5'])
    expect(truncation.included_replies).toBe(3)
    expect(truncation.total_replies).toBe(6)
    expect(truncation.omitted_range_ts).toEqual(['100.0', '100.2'])
  })

  it('keeps the newest reply even when it alone exceeds the budget', () => {
    const replies = [reply('1', 'short'), reply('2', 'z'.repeat(10_000))]
    const { included, truncation } = applyThreadBudget({ replies, budgetTokens: 100 })
    expect(included).toEqual([replies[1]])
    expect(truncation.omitted_range_ts).toEqual(['1', '1'])
    expect(applyThreadBudget({ replies, budgetTokens: 0 }).included).toEqual([replies[1]])
  })

  it('uses an 8000-token budget by default', () => {
    expect(THREAD_BUDGET_TOKENS).toBe(8000)
    const replies = Array.from({ length: 20 }, (_, i) => reply(String(i), 'w'.repeat(2000))) // 500 tokens each
    expect(applyThreadBudget({ replies }).included).toHaveLength(16)
    expect(applyThreadBudget({ replies, budgetTokens: null }).included).toHaveLength(16)
  })

  it('counts tokens in UTF-16 units', () => {
    const replies = [reply('1', '😀'.repeat(4)), reply('2', '😀'.repeat(4))] // 8 units = 2 tokens each
    expect(applyThreadBudget({ replies, budgetTokens: 4 }).included).toHaveLength(2)
    expect(applyThreadBudget({ replies, budgetTokens: 3 }).included).toHaveLength(1)
  })

  it('returns an empty result for no replies', () => {
    expect(applyThreadBudget({ replies: [] })).toEqual({
      included: [],
      truncation: { total_replies: 0, included_replies: 0, strategy: 'most_recent', omitted_range_ts: null },
    })
  })

  it('rejects bad input with errors naming the field', () => {
    expect(thrown(() => applyThreadBudget(null as never)).message).toBe('applyThreadBudget: input: expected an object, got null')
    expect(thrown(() => applyThreadBudget({} as never)).message).toBe('applyThreadBudget: replies: expected an array, got undefined')
    const noText = thrown(() => applyThreadBudget({ replies: [reply('1', 'a'), { ts: '2' }] as never }))
    expect(noText).toBeInstanceOf(TypeError)
    expect(noText.message).toBe('applyThreadBudget: replies[1].text: expected a string, got undefined')
    const badTs = thrown(() => applyThreadBudget({ replies: [{ ts: 2, text: 'a' }] as never }))
    expect(badTs.message).toBe('applyThreadBudget: replies[0].ts: expected a string, got number')
    for (const budget of [-1, NaN, Infinity, -Infinity]) {
      const e = thrown(() => applyThreadBudget({ replies: [], budgetTokens: budget }))
      expect(e, String(budget)).toBeInstanceOf(RangeError)
      expect(e.message).toMatch(/^applyThreadBudget: budgetTokens: /)
    }
    expect(thrown(() => applyThreadBudget({ replies: [], budgetTokens: '10' as never }))).toBeInstanceOf(TypeError)
  })
})

describe('threadBudgetCut', () => {
  it('applies the budget rule to text lengths in one call', () => {
    expect(threadBudgetCut(new Uint32Array([40, 40, 40, 40, 40, 40]), 35)).toBe(3)
    expect(threadBudgetCut(new Uint32Array([4, 40_000]), 100)).toBe(1) // newest always kept
    expect(threadBudgetCut(new Uint32Array([]))).toBe(0)
    expect(threadBudgetCut(new Uint32Array(20).fill(2000))).toBe(4) // 8000 default: 16 of 20
  })

  it('agrees with applyThreadBudget on random threads', () => {
    let seed = 7
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31)
    for (let round = 0; round < 200; round++) {
      const replies = Array.from({ length: next() % 60 }, (_, i) => reply(String(i), 'x'.repeat(next() % 3000)))
      const budget = next() % 9000
      const cut = threadBudgetCut(new Uint32Array(replies.map((r) => r.text.length)), budget)
      expect(applyThreadBudget({ replies, budgetTokens: budget }).included).toEqual(replies.slice(cut))
    }
  })

  it('rejects what is not a Uint32Array, and bad budgets', () => {
    for (const bad of [[1, 2], null, 'x', new Float64Array(2)]) {
      const e = thrown(() => threadBudgetCut(bad as never))
      expect(e).toBeInstanceOf(TypeError)
      expect(e.message).toMatch(/^threadBudgetCut: textLengths: expected a Uint32Array/)
    }
    expect(thrown(() => threadBudgetCut(new Uint32Array(1), -5))).toBeInstanceOf(RangeError)
  })
})

describe('buildThreadContext', () => {
  it('returns null for null input and for a message without replies', () => {
    expect(buildThreadContext(null)).toBeNull()
    expect(buildThreadContext(threadInput([]))).toBeNull()
  })

  it('uses the root ts as thread_id and the seed schema', () => {
    const t = buildThreadContext(threadInput(['first reply', 'second reply']))!
    expect(t.thread_id).toBe(ts(0))
    expect(Object.keys(t).sort()).toEqual(['replies', 'root', 'schema_version', 'thread_id', 'truncation'])
    expect(t.schema_version).toBe('1.0')
    expect(Object.keys(t.root).sort()).toEqual(['author', 'media', 'message_id', 'text', 'ts'])
    expect(Object.keys(t.replies[0]).sort()).toEqual(['author', 'is_truncated', 'media', 'message_id', 'text', 'ts'])
    expect(Object.keys(t.root.author).sort()).toEqual(['display_name', 'is_bot', 'user_id'])
    expect(t.root.message_id).toBe(ts(0))
    expect(t.root.ts).toBe('2026-04-10T20:30:00.000000Z')
    expect(t.replies.map((r) => r.text)).toEqual(['first reply', 'second reply'])
    expect(t.truncation).toEqual({ total_replies: 2, included_replies: 2, strategy: 'most_recent', omitted_range_ts: null })
  })

  it("takes total_replies from the caller's totalReplyCount, which may exceed the replies given", () => {
    const t = buildThreadContext(threadInput(['only one fetched'], { totalReplyCount: 57 }))!
    expect(t.truncation.total_replies).toBe(57)
    expect(t.truncation.included_replies).toBe(1)
    // A root whose reply count says it is a thread is one, even before replies are fetched.
    expect(buildThreadContext(threadInput([], { totalReplyCount: 3 }))!.replies).toEqual([])
  })

  it('cuts a reply over 300 tokens to 1199 units plus an ellipsis and flags it', () => {
    const long = 'L'.repeat(5000)
    const exactly300 = 'e'.repeat(1200)
    const t = buildThreadContext(threadInput([long, exactly300]))!
    expect(t.replies[0].is_truncated).toBe(true)
    expect(t.replies[0].text).toBe('L'.repeat(1199) + '…')
    expect(estimateTokens(t.replies[0].text)).toBe(300)
    expect(t.replies[1].is_truncated).toBe(false)
    expect(t.replies[1].text).toBe(exactly300)
  })

  it('never splits a surrogate pair when cutting a reply', () => {
    const text = 'a'.repeat(1198) + '😀'.repeat(10) // unit 1198-1199 is one emoji
    const r = buildThreadContext(threadInput([text]))!.replies[0]
    expect(r.text).toBe('a'.repeat(1198) + '…')
  })

  it('keeps the root in full and the newest replies within the budget', () => {
    const root = 'R'.repeat(40_000)
    const replies = Array.from({ length: 50 }, (_, i) => `reply ${i} `.padEnd(400, '.')) // 100 tokens each
    const input = { ...threadInput(replies), root: msg(ts(0), root) }
    const { threadContext: context, budgetUtilization: telemetry } = buildThreadContextWithTelemetry(input, 12_000)
    expect(context!.root.text).toBe(root)
    // 12000 - 10000 (root) leaves 2000: the newest 20 replies.
    expect(context!.replies).toHaveLength(20)
    expect(context!.replies[0].text.startsWith('reply 30 ')).toBe(true)
    expect(context!.truncation.omitted_range_ts).toEqual([context!.truncation.omitted_range_ts![0], expect.any(String)])
    expect(context!.truncation.omitted_range_ts![0]).toBe('2026-04-10T20:30:10.000000Z')
    expect(context!.truncation.omitted_range_ts![1]).toBe('2026-04-10T20:30:39.000000Z')
    expect(telemetry).toEqual({ threadBudgetTokens: 12_000, actualTokens: 12_000, messagesTruncated: 30 })
  })

  it('reports telemetry with the default budget', () => {
    const { threadContext: context, budgetUtilization: telemetry } = buildThreadContextWithTelemetry(threadInput(['x'.repeat(4000), 'ok']))
    expect(context).not.toBeNull()
    expect(telemetry!.threadBudgetTokens).toBe(8000)
    // The replies the budget left out (none here; the long one is cut, not left out).
    expect(telemetry!.messagesTruncated).toBe(0)
    expect(buildThreadContextWithTelemetry(threadInput(['x'.repeat(4000), 'ok']), 300).budgetUtilization!.messagesTruncated).toBe(1)
    expect(telemetry!.actualTokens).toBe(estimateTokens('Incident: checkout latency is up') + 300 + 1)
    // Without a thread, as the runner's module: no budget was used.
    expect(buildThreadContextWithTelemetry(null, 50)).toEqual({ threadContext: null })
  })

  it('accepts null exactly where the seed allows it', () => {
    const t = buildThreadContext({
      threadId: null,
      root: { ...msg(ts(0), 'root'), media: null, messageId: null, reactions: null, threadId: null },
      replies: [{ ...msg(ts(1), 'r'), media: [{ artifactId: 'F1', mediaType: 'image/png', filename: null, byteLength: 3 }] }],
      totalReplyCount: null,
    })!
    expect(t.replies[0].media).toEqual([{ artifact_id: 'F1', media_type: 'image/png', filename: null, byte_length: 3 }])
    const e = thrown(() => buildThreadContext({ root: null, replies: [] } as never))
    expect(e).toBeInstanceOf(TypeError)
    expect(e.message).toBe('buildThreadContext: root: expected an object, got null')
  })

  it('names the failing field of a bad thread', () => {
    const bad = threadInput(['a', 'b', 'c'])
    ;(bad.replies[2] as unknown as Record<string, unknown>).author = { userId: 'U1' }
    const e = thrown(() => buildThreadContext(bad))
    expect(e).toBeInstanceOf(TypeError)
    expect(e.message).toBe('buildThreadContext: replies[2].author.displayName: is required')
    const neg = thrown(() => buildThreadContext(threadInput(['a'], { totalReplyCount: -4 })))
    expect(neg).toBeInstanceOf(RangeError)
    expect(neg.message).toMatch(/^buildThreadContext: totalReplyCount: /)
  })

  it('rejects a negative, NaN or infinite budget with a RangeError', () => {
    for (const budget of [-1, NaN, Infinity]) {
      const e = thrown(() => buildThreadContext(threadInput(['a']), budget))
      expect(e).toBeInstanceOf(RangeError)
      expect(e.message).toMatch(/^buildThreadContext: budgetTokens: must be/)
      expect(thrown(() => buildThreadContextWithTelemetry(null, budget))).toBeInstanceOf(RangeError)
    }
  })
})
