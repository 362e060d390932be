// What OpenClaw's context blocks tell the engine about a turn: the sender's name (the
// "Conversation info" block's `sender`), which the memory then knows as the user's name
// with no configuration; and that the blocks themselves are the host's, not the turn's
// words: the memory keeps and searches what the person wrote.
import { describe, expect, it } from 'vitest'
import { createContextEngine, type HostMessage } from '@openclaw/context-engine/openclaw'

const T0 = Date.parse('2026-11-20T09:00:00Z')
const KEY = 'agent:main:telegram:direct:4242'
const MARKER = '\u27e6openclaw:ctx\u27e7'

/** A user message as OpenClaw writes it for a Telegram direct chat with Ann. */
function fromAnn(n: number, text: string): HostMessage {
  const info = { chat_id: 'telegram:4242', message_id: String(1000 + n), sender: { id: '4242', name: 'Ann', username: 'ann_k' } }
  return { role: 'user', content: `Conversation info: ${MARKER}\n\`\`\`json\n${JSON.stringify(info, null, 2)}\n\`\`\`\n\n${text}`, timestamp: T0 + n * 60_000 }
}

const reply = (n: number, text: string): HostMessage => ({ role: 'assistant', content: text, timestamp: T0 + n * 60_000 + 1 })

/**
 * A long chat: Ann says once, at length, what she thinks of the lake house; the assistant
 * mentions it in short lines now and then, which the words alone rank first.
 */
function chat(): HostMessage[] {
  const out: HostMessage[] = [
    fromAnn(0, 'Honestly, after looking at all the photos and the map again last night, the lake house felt too remote for my parents, so I would rather book the cabin near town this time.'),
  ]
  for (let i = 1; i < 40; i++) {
    out.push(reply(2 * i - 1, i % 4 === 0 ? `The lake house is free on weekend ${i}.` : `Noted item ${i}: the florist, the caterer and the seating plan for table ${i}.`))
    out.push(fromAnn(2 * i, `ok, thanks for item ${i}`))
  }
  return out
}

const contextText = (out: { messages: HostMessage[]; systemPromptAddition?: string }) =>
  [out.systemPromptAddition ?? '', ...out.messages.map((m) => (typeof m.content === 'string' ? m.content : m.content.map((b) => ('text' in b ? b.text : '')).join('\n')))].join('\n')

describe("the OpenClaw engine and the host's context blocks", () => {
  it('knows the user by the name the blocks give and finds what she said', async () => {
    const e = createContextEngine({ path: ':memory:', history: false, threadStatus: false, compaction: { minFold: 1 } })
    const messages = chat()
    for (const m of messages) await e.afterTurn({ sessionId: 's1', sessionKey: KEY, messages: [m] })
    const out = await e.assemble({ sessionId: 's2', sessionKey: KEY, messages: [], prompt: 'What did Ann say about the lake house?', tokenBudget: 1_000 })
    expect(contextText(out)).toContain('I would rather book the cabin near town')
    expect(e.diagnostics).toEqual([])
    await e.dispose()
  })

  it("gives the model's search tool the names too: of the same words, hers first", async () => {
    const e = createContextEngine({ path: ':memory:', history: false, threadStatus: false })
    // The same words from Ann and from the assistant: the words alone put the newer first.
    for (const m of [fromAnn(0, 'The lake house is too remote.'), reply(1, 'The lake house is too remote.')]) {
      await e.afterTurn({ sessionId: 's1', sessionKey: KEY, messages: [m] })
    }
    const [search] = e.agentTools({ sessionKey: KEY, sessionId: 's1' })
    const found = JSON.parse((await search.execute('q1', { query: 'What did Ann say about the lake house?', max_results: 2 })).content[0].text)
    expect(found.results.map((r: { role: string }) => r.role)).toEqual(['user', 'assistant'])
    await e.dispose()
  })

  it('keeps and searches what the person wrote, not the blocks before it', async () => {
    const e = createContextEngine({ path: ':memory:', history: false, threadStatus: false })
    for (const m of chat().slice(0, 6)) await e.afterTurn({ sessionId: 's1', sessionKey: KEY, messages: [m] })
    const [search] = e.agentTools({ sessionKey: KEY, sessionId: 's1' })
    const found = JSON.parse((await search.execute('q1', { query: 'cabin near town', max_results: 8 })).content[0].text)
    const texts: string[] = found.results.map((r: { text: string }) => r.text)
    expect(texts.some((t) => t.startsWith('Honestly, after looking at all the photos'))).toBe(true)
    expect(texts.join('\n')).not.toContain(MARKER)
    // The blocks' own words (message_id, chat_id, the sender's id) find nothing.
    const byBlock = JSON.parse((await search.execute('q2', { query: 'message_id chat_id 4242', max_results: 8 })).content[0].text)
    expect(byBlock.results).toEqual([])
    await e.dispose()
  })
})
