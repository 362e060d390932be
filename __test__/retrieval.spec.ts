// Retrieval quality on the hand-written fixture (fixtures/retrieval-*.json): questions
// asked days later in partly other words, with known targets. The ranking must beat the
// original keyword-count ranking on the same set (given the same since/authors filter).
import { describe, expect, it } from 'vitest'
import { ChannelStore } from '@openclaw/context-engine'
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { loadStore, rankWithTools } = require('../bench/retrieval-store.js')
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { recallAt, keywordBaselineFiltered, questions, check } = require('../bench/recall.js')

type Question = { id: string; lang: string; targets: string[] }

describe('channel_context retrieval', () => {
  it('the fixture is consistent (threads, ids, targets, filters)', () => {
    expect(check().problems).toEqual([])
    expect(questions.length).toBeGreaterThanOrEqual(50)
  })

  it('has recall@8 above the keyword-count ranking on the question set', async () => {
    const tools = loadStore(ChannelStore)
    const ours = await recallAt(8, (q: Question) => rankWithTools(tools, q, 8))
    const base = await recallAt(8, keywordBaselineFiltered)
    console.log(
      `recall@8: channel_context ${ours.recall.toFixed(3)} (${ours.fullyHit}/${ours.total}), keyword count ${base.recall.toFixed(3)} (${base.fullyHit}/${base.total})`,
    )
    expect(ours.recall).toBeGreaterThan(base.recall)
  })

  it('finds the multilingual questions the keyword count cannot', async () => {
    const tools = loadStore(ChannelStore)
    const multi = questions.filter((q: Question) => q.lang !== 'en')
    expect(multi.length).toBeGreaterThanOrEqual(5)
    let hits = 0
    for (const q of multi) {
      const top: string[] = await rankWithTools(tools, q, 8)
      if (q.targets.some((t: string) => top.includes(t))) hits++
    }
    expect(hits / multi.length).toBeGreaterThanOrEqual(0.8)
  })
})
