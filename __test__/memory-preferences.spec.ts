import { describe, expect, it } from 'vitest'
import { MemoryStore, type MemoryMessage } from '@openclaw/context-engine'
import { createContextEngine } from '@openclaw/context-engine/openclaw'

// A question about what someone likes ("What does Ann enjoy doing?") finds the turns where
// that person said what they like in other words ("I love climbing", "I really like
// hiking"), among many that say "love" or "like" in passing, through the preferences the
// compaction keeps; the other person's are not hers.
const S = 'telegram:chat:11'
const T0 = 1_775_835_600_000
const DAY = 86_400_000
const ANN_LIKES = ['I love climbing, mostly bouldering at the old quarry.', 'I really like hiking when the leaves turn.']
const BO_LIKES = 'I really like baking bread on Sundays.'
const FILLER = [
  'Hey Ann, did the plumber ever come round?',
  'Not yet, he said like maybe Thursday, we will see.',
  'The traffic on the bridge was a nightmare again.',
  'Love that the trains are running again though.',
  'Did you enjoy the concert last night?',
  'It was loud, the band played for three hours straight.',
]

function chat(): MemoryMessage[] {
  // Ann writes the user's turns, Bo the assistant's; Ann's likes early, Bo's in between.
  const texts = [ANN_LIKES[0], BO_LIKES, ANN_LIKES[1], ...Array.from({ length: 57 }, (_, i) => FILLER[i % FILLER.length])]
  return texts.map((text, i) => ({ sessionId: S, chatId: '11', messageId: `m${i}`, role: i % 2 ? 'assistant' : 'user', text, ts: T0 + i * 3_600_000 }))
}

describe('MemoryStore: what someone said they like', () => {
  it('brings back her stated preferences for a question about what she enjoys, not his', () => {
    const m = new MemoryStore()
    const [{ threadKey }] = m.ingest(chat())
    expect(m.compact(S, threadKey, { force: true, now: T0 + 3 * DAY })).not.toBeNull()
    const speakers = { user: ['Ann'], assistant: ['Bo'] }
    const ask = (userMessage: string) =>
      m.assemble({ sessionId: S, threadKey, userMessage, budgetTokens: 600, recent: 2, now: T0 + 5 * DAY, speakers }).text
    const text = ask('What does Ann enjoy doing?')
    for (const t of ANN_LIKES) expect(text).toContain(t)
    expect(text).not.toContain(BO_LIKES)
    // "like" as likeness, and "would like" (a wish), are not questions about a liking.
    expect(ask('What is the bridge like?')).not.toContain(ANN_LIKES[0])
    expect(ask('Where would Ann like to go?')).not.toContain(ANN_LIKES[0])
    // The model's search tool gets the same.
    const [search] = m.tools({ sessionId: S, threadKey }).definitions().map((d) => d.name)
    const found = JSON.parse(m.tools({ sessionId: S, threadKey }).execute(search, { query: 'What does Ann enjoy doing?' }))
    const ids = found.results.map((r: { id: string }) => r.id)
    expect(ids).toEqual(expect.arrayContaining(['m0', 'm2']))
    m.close()
  })
})

describe('the OpenClaw engine: what someone said they like', () => {
  it('assembles her stated preferences for the question, with the speakers option', async () => {
    const key = 'agent:main:telegram:direct:11'
    const e = createContextEngine({ path: ':memory:', history: false, threadStatus: false, speakers: { user: ['Ann'], assistant: ['Bo'] } })
    const turns = chat().map((m) => ({ id: m.messageId, role: m.role, content: m.text, timestamp: m.ts }))
    for (let i = 0; i < turns.length; i += 2) {
      await e.afterTurn({ sessionId: 's', sessionKey: key, messages: turns.slice(i, i + 2), prePromptMessageCount: 0 })
    }
    const out = await e.assemble({ sessionId: 's', sessionKey: key, messages: [], prompt: 'What does Ann enjoy doing?', tokenBudget: 1_000 })
    const text = [out.systemPromptAddition ?? '', ...out.messages.map((m) => JSON.stringify(m.content))].join('\n')
    for (const t of ANN_LIKES) expect(text).toContain(t)
    expect(e.diagnostics).toEqual([])
    await e.dispose()
  })
})
