import { describe, expect, it } from 'vitest'
import { MemoryStore, type MemoryMessage } from '@openclaw/context-engine'
import { createContextEngine } from '@openclaw/context-engine/openclaw'
import { thrown } from './helpers'

// A host's embedder, by a list: one dimension per topic, counting the topic's words (a
// real model does this by meaning). The question and the turn that answers it share no
// word, only a topic.
const TOPICS = [
  ['party', 'lasagna', 'cake', 'food', 'bring', 'brought', 'dinner'],
  ['car', 'mechanic', 'engine', 'fixed', 'tyres'],
  ['weather', 'rain', 'sunny', 'awful', 'storm'],
  ['work', 'deadline', 'boss', 'meeting', 'meetings'],
]
function embed(texts: string[]): Float32Array[] {
  return texts.map((t) => {
    const words = t.toLowerCase().split(/[^a-z0-9]+/)
    return Float32Array.from(TOPICS.map((topic) => words.filter((w) => topic.includes(w)).length))
  })
}

const S = 'telegram:chat:9'
const T0 = 1_775_835_600_000
const FILLER = [
  'My car is at the mechanic again, the engine this time.',
  'The weather was awful all week, a storm every night.',
  'Work is busy, a deadline every day and my boss keeps calling meetings.',
  'The tyres need changing before winter too.',
]
const ANSWER = "I made my grandmother's lasagna for tonight, everyone loved it."
const QUESTION = 'What did Sam bring to the party?'

function chat(): MemoryMessage[] {
  const texts = [ANSWER, ...Array.from({ length: 24 }, (_, i) => FILLER[i % FILLER.length])]
  return texts.map((text, i) => ({ sessionId: S, chatId: '9', messageId: `m${i}`, role: i % 2 ? 'assistant' : 'user', text, ts: T0 + i * 60_000 }))
}

function embedAll(m: MemoryStore): number {
  let n = 0
  for (let pending = m.messagesToEmbed(S, 10); pending.length > 0; pending = m.messagesToEmbed(S, 10)) {
    const vectors = embed(pending.map((p) => p.text))
    expect(m.setVectors(S, pending.map((p, i) => ({ messageId: p.messageId, vector: vectors[i] })))).toEqual([])
    n += pending.length
  }
  return n
}

describe('MemoryStore vectors (a host embedder)', () => {
  it('finds the turn that answers in other words only with the question vector', () => {
    const m = new MemoryStore()
    const [{ threadKey }] = m.ingest(chat())
    expect(m.messagesToEmbed(S).map((p) => p.messageId).slice(0, 2)).toEqual(['m24', 'm23'])
    expect(embedAll(m)).toBe(25)
    expect(m.messagesToEmbed(S)).toEqual([])
    const input = { sessionId: S, threadKey, userMessage: QUESTION, budgetTokens: 400, recent: 2, now: T0 + 86_400_000 }
    expect(m.assemble(input).text).not.toContain('lasagna')
    const [q] = embed([QUESTION])
    const found = m.assemble({ ...input, queryVector: q })
    expect(found.text).toContain(ANSWER)
    expect(found.tokens.total).toBeLessThanOrEqual(400)
    // A plain array does as well as a Float32Array; null is no vector.
    expect(m.assemble({ ...input, queryVector: Array.from(q) }).text).toBe(found.text)
    expect(m.assemble({ ...input, queryVector: null }).text).toBe(m.assemble(input).text)
    // A vector of another length (another model's) finds nothing by meaning.
    expect(m.assemble({ ...input, queryVector: [1, 0] }).text).not.toContain('lasagna')
    m.close()
  })

  it('says which ids it does not know, and refuses a batch with a bad vector whole', () => {
    const m = new MemoryStore()
    m.ingest(chat())
    expect(m.setVectors(S, [{ messageId: 'm0', vector: [1, 0, 0, 0] }, { messageId: 'nope', vector: [1, 0, 0, 0] }])).toEqual(['nope'])
    expect(m.messagesToEmbed(S, 1)).toEqual([{ messageId: 'm24', text: FILLER[3] }])
    const nan = thrown(() => m.setVectors(S, [{ messageId: 'm1', vector: [1] }, { messageId: 'm2', vector: [Number.NaN] }]))
    expect(nan).toBeInstanceOf(RangeError)
    expect(nan.message).toBe('MemoryStore.setVectors: entries[1].vector: [0] is not a finite number')
    expect(m.messagesToEmbed(S, 1)[0].messageId).toBe('m24')
    expect(thrown(() => m.setVectors(S, [{ messageId: 'm1', vector: [] }])).message).toBe(
      'MemoryStore.setVectors: entries[0].vector: must hold at least one number',
    )
    expect(thrown(() => m.setVectors(S, [{ messageId: 'm1', vector: new Float32Array(4097) }])).message).toBe(
      'MemoryStore.setVectors: entries[0].vector: must hold at most 4096 numbers, got 4097',
    )
    const wrong = thrown(() => m.setVectors(S, [{ messageId: 'm1', vector: 'abc' as never }]))
    expect(wrong).toBeInstanceOf(TypeError)
    expect(wrong.message).toBe('MemoryStore.setVectors: entries[0].vector: expected a Float32Array or an array of numbers, got string')
    expect(thrown(() => m.setVectors(S, [{ messageId: 'm1', vector: new Float64Array(3) as never }])).message).toBe(
      'MemoryStore.setVectors: entries[0].vector: expected a Float32Array or an array of numbers, got another typed array',
    )
    expect(thrown(() => m.setVectors(S, [{ messageId: 'm1', vector: [1, 'x'] as never }])).message).toBe(
      "MemoryStore.setVectors: entries[0].vector[1]: expected a number, got string",
    )
    const input = { sessionId: S, threadKey: 'root:9', userMessage: 'x', budgetTokens: 100 }
    expect(thrown(() => m.assemble({ ...input, queryVector: [Number.POSITIVE_INFINITY] })).message).toBe(
      'MemoryStore.assemble: input.queryVector: [0] is not a finite number',
    )
    expect(thrown(() => m.assemble({ ...input, queryVector: [1], nearestWeight: -1 })).message).toBe(
      'MemoryStore.assemble: input.nearestWeight: must be a finite number >= 0, got -1',
    )
    m.close()
  })

  it('gives conversation_search the same fusion when the host passes the query vector', () => {
    const m = new MemoryStore()
    m.ingest(chat())
    embedAll(m)
    const tools = m.tools({ sessionId: S })
    const search = (vector?: Float32Array | null) =>
      JSON.parse(tools.execute('conversation_search', { query: QUESTION }, vector)).results.map((r: { id: string }) => r.id)
    expect(search()).not.toContain('m0')
    expect(search(null)).toEqual(search())
    expect(search(embed([QUESTION])[0])[0]).toBe('m0')
    expect(thrown(() => tools.execute('conversation_search', { query: 'x' }, [Number.NaN])).message).toBe(
      'MemoryTools.execute: queryVector: [0] is not a finite number',
    )
    m.close()
  })

  it('at nearestWeight 0 keeps the words first, the nearest in the room they leave', () => {
    const m = new MemoryStore()
    const [{ threadKey }] = m.ingest(chat())
    embedAll(m)
    const [q] = embed(['car weather party'])
    const input = { sessionId: S, threadKey, userMessage: 'the car and the weather', budgetTokens: 4000, recent: 1, retrievedNeighbours: 0, now: T0 + 86_400_000 }
    const words = m.assemble(input)
    const weight0 = m.assemble({ ...input, queryVector: q, nearestWeight: 0 })
    // The words' matches are all there; the lasagna turn (no word of the question) after.
    expect(words.text).not.toContain('lasagna')
    expect(weight0.text).toContain('lasagna')
    expect(weight0.passagesIncluded).toBeGreaterThan(words.passagesIncluded)
    m.close()
  })
})

describe('the OpenClaw engine with a host embedder', () => {
  const key = 'agent:main:telegram:direct:9'
  const turns = chat().map((m) => ({ id: m.messageId, role: m.role, content: m.text, timestamp: m.ts }))

  async function replay(embedder: unknown) {
    const e = createContextEngine({ path: ':memory:', history: false, threadStatus: false }, { embedder: embedder as never })
    for (let i = 0; i < turns.length; i += 2) {
      await e.afterTurn({ sessionId: 's', sessionKey: key, messages: turns.slice(i, i + 2), prePromptMessageCount: 0 })
    }
    const out = await e.assemble({ sessionId: 's', sessionKey: key, messages: [], prompt: QUESTION, tokenBudget: 400 })
    const text = [out.systemPromptAddition ?? '', ...out.messages.map((m) => JSON.stringify(m.content))].join('\n')
    return { e, text }
  }

  it('embeds the turns after each turn and the question before the assembly', async () => {
    const calls: number[] = []
    const { e, text } = await replay(async (texts: string[]) => {
      calls.push(texts.length)
      return embed(texts)
    })
    expect(text).toContain('lasagna')
    // Two messages a turn, then the question.
    expect(calls.slice(0, 2)).toEqual([2, 2])
    expect(calls[calls.length - 1]).toBe(1)
    expect(e.diagnostics).toEqual([])
    await e.dispose()
  })

  it("embeds the model's search query for conversation_search", async () => {
    const { e } = await replay(async (texts: string[]) => embed(texts))
    const [search] = e.agentTools({ sessionKey: key, sessionId: 's' })
    const out = JSON.parse((await search.execute('t1', { query: QUESTION })).content[0].text)
    expect(out.results[0].text).toContain('lasagna')
    await e.dispose()
  })

  it('takes an OpenClaw embedding provider (embedBatch, embedQuery)', async () => {
    let queries = 0
    const provider = {
      id: 'toy',
      model: 'topics',
      embedBatch: async (texts: string[]) => embed(texts).map((v) => Array.from(v)),
      embedQuery: async (text: string) => {
        queries++
        return Array.from(embed([text])[0])
      },
    }
    const { e, text } = await replay(provider)
    expect(text).toContain('lasagna')
    expect(queries).toBe(1)
    await e.dispose()
  })

  it('searches by words alone when the embedder fails or is not one, with a diagnostic', async () => {
    const failing = await replay(async () => {
      throw new Error('model offline')
    })
    expect(failing.text).not.toContain('lasagna')
    expect(failing.e.diagnostics.map((d) => `${d.method}: ${d.message}`)).toContain('embedder: model offline')
    await failing.e.dispose()
    const short = await replay(async () => [])
    expect(short.e.diagnostics.map((d) => d.message)).toContain('the embedder returned 0 vectors for 2 texts')
    await short.e.dispose()
    const nan = await replay(async (texts: string[]) => (texts[0] === QUESTION ? [[Number.NaN, 1]] : embed(texts)))
    expect(nan.text).toContain('<conversation_memory>') // assembled, not passed through
    expect(nan.e.diagnostics.map((d) => d.message)).toEqual([
      "the embedder's vector for the question is not one (Array of 2); words only",
    ])
    await nan.e.dispose()
    const wrong = await replay({ embed: () => [] })
    expect(wrong.e.diagnostics.map((d) => d.message)).toContain(
      'host.embedder: expected a function embed(texts) or an object with embedBatch(texts); embedding off',
    )
    await wrong.e.dispose()
  })

  it('gives up on an embedder that does not answer within 5 s', async () => {
    const { e, text } = await replay((texts: string[]) => (texts[0] === QUESTION ? new Promise(() => {}) : embed(texts)))
    expect(text).not.toContain('lasagna')
    expect(e.diagnostics.map((d) => d.message)).toContain('the embedder took over 5000 ms')
    await e.dispose()
  }, 15_000)
})

describe('the OpenClaw engine with the speakers config', () => {
  const key = 'agent:main:telegram:direct:7'
  const FILL = ['The weather was awful all week.', 'My car is at the mechanic again.', 'Work is busy with deadlines.', 'The tyres need changing soon.']
  // The agent (Ava) recommended the blue tent; the user's turn names Ava and the red tent.
  const texts = [
    'Which tent should I take to the lake?',
    'I recommend the blue tent, it is light and dry.',
    "My sister recommended the red tent to Ava and me, it's roomy.",
    'Both are fine then.',
    ...Array.from({ length: 40 }, (_, i) => FILL[i % FILL.length]),
  ]
  const turns = texts.map((text, i) => ({ id: `t${i}`, role: i % 2 ? 'assistant' : 'user', content: text, timestamp: T0 + i * 60_000 }))

  async function ask(config: Record<string, unknown>) {
    const e = createContextEngine({ path: ':memory:', history: false, threadStatus: false, recallTokens: 100, ...config })
    for (let i = 0; i < turns.length; i += 2) await e.afterTurn({ sessionId: 's', sessionKey: key, messages: turns.slice(i, i + 2), prePromptMessageCount: 0 })
    const out = await e.assemble({ sessionId: 's', sessionKey: key, messages: [], prompt: 'Which tent did Ava recommend?', tokenBudget: 540 })
    await e.dispose()
    return [out.systemPromptAddition ?? '', ...out.messages.map((m) => JSON.stringify(m.content))].join('\n')
  }

  it("ranks the named speaker's turns first", async () => {
    const named = await ask({ speakers: { assistant: ['Ava'] } })
    expect(named).toContain('I recommend the blue tent')
    expect(named).not.toContain('My sister recommended')
    const unnamed = await ask({})
    expect(unnamed).toContain('My sister recommended')
  })

  it('reads the names as the manifest says, and sets a bad value aside', () => {
    const e = createContextEngine({ path: ':memory:', speakers: { user: ['Ann Lee'], assistant: [] } })
    expect(e.diagnostics).toEqual([])
    const bad = createContextEngine({ path: ':memory:', speakers: { user: 'Ann' } as never })
    expect(bad.diagnostics.map((d) => d.message)).toEqual(['config.speakers: unusable value {"user":"Ann"} (default kept)'])
    const empty = createContextEngine({ path: ':memory:', speakers: { assistant: [''] } })
    expect(empty.diagnostics).toHaveLength(1)
  })
})
