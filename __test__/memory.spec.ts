import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { MemoryStore, type MemoryMessage } from '@openclaw/context-engine'
import { thrown } from './helpers'

const dir = mkdtempSync(join(tmpdir(), 'memory-spec-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const S = 'telegram:chat:42'
const T0 = 1_775_835_600_000

function msg(
  id: string,
  text: string,
  extra: Partial<MemoryMessage> = {},
): MemoryMessage {
  return { sessionId: S, chatId: '42', messageId: id, role: 'user', text, ts: T0 + Number(id) * 1000, ...extra }
}

describe('MemoryStore', () => {
  it('files messages by thread key: topic, then reply chain, then root', () => {
    const m = new MemoryStore()
    const keys = m.ingest([
      msg('1', 'deploy v2.4?'),
      msg('2', 'Canary first.', { role: 'assistant', replyTo: '1' }),
      msg('3', 'and eu-west?', { replyTo: '2' }),
      msg('4', 'offsite agenda', { topicId: '7' }),
      msg('5', 'lunch?'),
    ])
    expect(keys.map((k) => k.threadKey)).toEqual([
      'root:42',
      'reply:42:1',
      'reply:42:1',
      'topic:42:7',
      'root:42',
    ])
    expect(keys.every((k) => k.ingested)).toBe(true)
    // The same ids again, in their lanes (an edit re-delivered): nothing changes. The same
    // message again from elsewhere: nothing either.
    expect(m.ingest([msg('3', 'edited?', { replyTo: '2' }), msg('2', 'Canary first.', { role: 'assistant' })])).toEqual([
      { threadKey: 'reply:42:1', ingested: false },
      { threadKey: 'reply:42:1', ingested: false },
    ])
    // Another message of another lane under a taken id is kept, under a qualified id.
    expect(m.ingest([msg('3', 'a different question')])).toEqual([{ threadKey: 'root:42', ingested: true, storedAs: '3@root:42' }])
    expect(m.recent(S, 'root:42').map((r) => [r.messageId, r.text])).toContainEqual(['3@root:42', 'a different question'])
    // A committed turn says the same of its messages; its retry writes and says nothing.
    const turn = [msg('4', 'a question of the root lane'), msg('9', 'its answer', { role: 'assistant' })]
    expect(m.commitTurnReport('turn-9', turn)).toEqual({
      status: 'committed',
      messages: [
        { threadKey: 'root:42', ingested: true, storedAs: '4@root:42' },
        { threadKey: 'root:42', ingested: true },
      ],
    })
    expect(m.commitTurnReport('turn-9', turn)).toEqual({ status: 'duplicate', messages: [] })
    expect(m.commitTurn('turn-9', turn)).toBe('duplicate')
    expect(m.recent(S, 'reply:42:1').map((r) => r.text)).toEqual(['Canary first.', 'and eu-west?'])
    expect(m.focusAnchor(msg('6', 'ok', { replyTo: '2' }), 'reply:42:1')).toEqual({
      kind: 'reply_target',
      id: '2',
      expects: null,
    })
    m.close()
  })

  it('keeps a pending question from capturing a message that does not answer it', () => {
    const m = new MemoryStore()
    m.ingest([msg('1', 'Shall I restart the server?', { role: 'assistant' })])
    m.putRecord({
      sessionId: S,
      kind: 'thread_state',
      threadKey: 'root:42',
      body: JSON.stringify({ pending: { questionId: '1', expects: 'yes_no' } }),
    })
    expect(m.focusAnchor(msg('2', 'yes'), 'root:42')).toEqual({ kind: 'pending_slot', id: '1', expects: 'yes_no' })
    expect(m.focusAnchor(msg('3', 'what is the weather in Oslo'), 'root:42')).toEqual({
      kind: 'last_assistant',
      id: '1',
      expects: null,
    })
  })

  it('compacts past 30 messages, keeps 10 verbatim, and takes a valid model summary', () => {
    const m = new MemoryStore()
    m.ingest(
      Array.from({ length: 31 }, (_, i) => msg(String(i + 1), `We decided to ship part ${i + 1}.`)),
    )
    expect(m.planCompaction(S, 'root:42', { now: T0 })?.trigger).toBe('messages')
    const done = m.compact(S, 'root:42', { now: T0 })
    expect(done).toMatchObject({ trigger: 'messages', folded: 21, summaryVersion: 1, summarizer: 'extractive' })
    expect(done!.tokensAfter).toBeLessThan(done!.tokensBefore)
    expect(m.unsummarized(S, 'root:42')).toHaveLength(10)
    expect(m.compact(S, 'root:42', { now: T0 })).toBeNull()
    const summary = m.record(S, 'thread_summary', 'root:42')!
    expect(summary).toMatchObject({ summaryVersion: 1, messageRange: { from: '1', to: '21' } })

    m.ingest([msg('40', 'I prefer Fridays.'), msg('41', 'ok')])
    const plan = m.planCompaction(S, 'root:42', { force: true, now: T0 })!
    expect(plan).toMatchObject({ trigger: 'forced', previousVersion: 1, kept: 10 })
    expect(plan.messages.map((x) => x.messageId)).toEqual(['22', '23'])
    // What to ask a model: the structure applyCompaction accepts, the summary it builds on,
    // the messages to fold.
    for (const part of ['"Current goals / open questions:", "Decisions made:", "Important facts:", "Recent outcomes:", "Pending actions:"', 'at most 8 lines "- item" of at most 160 characters', `Previous summary:\n${summary!.body}\n`]) {
      expect(plan.prompt).toContain(part)
    }
    expect(plan.prompt).toContain(`New messages:\n${plan.messages.map((x) => `[${x.role}] ${x.text}`).join('\n')}\n`)
    const model =
      'Current goals / open questions:\n- (none)\nDecisions made:\n- Ship every part\n' +
      'Important facts:\n- Prefers Fridays\nRecent outcomes:\n- (none)\nPending actions:\n- (none)\n'
    expect(m.applyCompaction(plan, { summary: model, now: T0 + 1 })).toMatchObject({
      summarizer: 'caller',
      summaryVersion: 2,
      fallbackReason: null,
    })
    // The same plan again was overtaken: nothing is written.
    const stale = thrown(() => m.applyCompaction(plan, { summary: model }))
    expect(stale).toMatchObject({ code: 'ERR_MEMORY_STALE' })
    const next = m.planCompaction(S, 'root:42', { force: true })
    expect(next).toBeNull()
  })

  it('falls back to the extractive summary when the model answers prose', () => {
    const m = new MemoryStore()
    m.ingest(Array.from({ length: 12 }, (_, i) => msg(String(i + 1), `We decided on step ${i + 1}.`)))
    const plan = m.planCompaction(S, 'root:42', { force: true })!
    const r = m.applyCompaction(plan, { summary: 'Sure! The team decided many things.' })
    expect(r).toMatchObject({ summarizer: 'fallback', fallbackReason: 'text before the first section' })
    expect(m.record(S, 'thread_summary', 'root:42')!.body).toContain('- We decided on step 2.')
  })

  it('assembles the layers in order within the budget and never stores a secret', () => {
    const m = new MemoryStore()
    m.ingest([msg('1', 'Plan the rollout'), msg('2', 'Canary Tuesday.', { role: 'assistant', replyTo: '1' })])
    m.putRecord({ sessionId: S, kind: 'outcome', body: 'The rollout failed once. key sk-ant-api03-abcdefghijklmnopqrstuvwx' })
    const a = m.assemble({
      sessionId: S,
      threadKey: 'reply:42:1',
      policy: 'Be careful.',
      userMessage: 'how did the rollout go </user_message>',
      budgetTokens: 2_000,
    })
    expect(a.text.indexOf('<policy>')).toBeLessThan(a.text.indexOf('<memories>'))
    expect(a.text.indexOf('<memories>')).toBeLessThan(a.text.indexOf('<recent_messages>'))
    expect(a.text).toContain('&lt;/user_message&gt;')
    expect(a.text).not.toContain('sk-ant-api03')
    expect(a.tokens.total).toBeLessThanOrEqual(2_000)
    expect(a).toEqual(
      m.assemble({
        sessionId: S,
        threadKey: 'reply:42:1',
        policy: 'Be careful.',
        userMessage: 'how did the rollout go </user_message>',
        budgetTokens: 2_000,
      }),
    )
    const tight = m.assemble({ sessionId: S, threadKey: 'reply:42:1', userMessage: 'rollout', budgetTokens: 20 })
    expect(tight.memoriesIncluded).toBe(0)
  })

  it('recalls an old message of a long lane by its words, dated, and fills a larger budget with more', () => {
    const m = new MemoryStore()
    const batch = Array.from({ length: 400 }, (_, i) =>
      msg(String(i + 1), i === 30 ? 'Caroline went to the LGBTQ support group on Sunday' : `status ${i}: the build queue is long today`),
    )
    m.ingest(batch)
    const now = T0 + 3 * 86_400_000
    const ask = (budgetTokens: number) => m.assemble({ sessionId: S, threadKey: 'root:42', userMessage: 'When did Caroline go to the support group?', budgetTokens, now })
    const small = ask(1_000)
    expect(small.text).toContain('Caroline went to the LGBTQ support group on Sunday')
    expect(small.text).toMatch(/<retrieved_messages>\n## \w{3} \d+ \w{3} \d{4} \(3 days ago\)\n/)
    expect(small.passagesIncluded).toBeGreaterThan(0)
    const sizes = [1_000, 2_000, 4_000, 8_000].map((b) => ask(b))
    for (const [i, a] of sizes.entries()) {
      expect(a.tokens.total).toBeLessThanOrEqual([1_000, 2_000, 4_000, 8_000][i])
      if (i > 0) expect(a.recentIncluded + a.passagesIncluded).toBeGreaterThan(sizes[i - 1].recentIncluded + sizes[i - 1].passagesIncluded)
    }
    expect(small.text).toBe(small.system + small.turn)
  })

  it('ranks the turns of the speaker a question names first, by the host\'s names or a greeting', () => {
    // Both speakers wrote of the trip; only the assistant's turn tells how it went, and
    // the retrieved messages have room for one.
    const turns = [
      msg('1', 'Ava says the trip to Lisbon went well, I should ask about the trip.'),
      msg('2', 'The trip was lovely, sunny every day in Lisbon.', { role: 'assistant' }),
      ...Array.from({ length: 40 }, (_, i) => msg(String(i + 3), `unrelated note ${i}`, { role: i % 2 ? 'assistant' : 'user' })),
    ]
    const ask = (m: MemoryStore, speakers?: { user?: string[]; assistant?: string[] }) =>
      m.assemble({ sessionId: S, threadKey: 'root:42', userMessage: "How was Ava's trip?", budgetTokens: 1_000, recent: 0, retrievedMaxTokens: 100, retrievedNeighbours: 0, now: T0 + 86_400_000, speakers })
    const m = new MemoryStore()
    m.ingest(turns)
    expect(ask(m).text).toContain('Ava says the trip')
    expect(ask(m).text).not.toContain('The trip was lovely')
    const told = ask(m, { user: ['Sam'], assistant: ['Ava Lee'] })
    expect(told.text).toContain('The trip was lovely')
    expect(told.text).not.toContain('Ava says the trip')
    // A greeting tells it as well.
    const g = new MemoryStore()
    g.ingest([...turns, msg('99', 'Thanks, Ava!')])
    expect(ask(g).text).toContain('The trip was lovely')
    expect(ask(g).text).not.toContain('Ava says the trip')
    expect(thrown(() => ask(m, { user: 'Sam' as unknown as string[] }))).toMatchObject({ code: 'ERR_INVALID_ARG_TYPE' })
  })

  it('brings the answer to a question a long turn asks before it goes on', () => {
    // The assistant asks, then goes on in the same turn; the user's next turn answers.
    // A weaker match (one of the question's words) competes for the room.
    const more = 'Meanwhile the build queue drained overnight, the flaky integration suite passed twice in a row, and the release notes draft is in the shared folder for review before Friday.'
    const turns = [
      msg('1', 'Can you help me plan the team trip?'),
      msg('2', `Happy to. Which venue in Lisbon did you book for the offsite? ${more}`, { role: 'assistant' }),
      msg('3', 'The riverside hall, for the second week of May.'),
      ...Array.from({ length: 30 }, (_, i) => msg(String(i + 4), `unrelated note ${i} about lunch orders`, { role: i % 2 ? 'user' : 'assistant' })),
      msg('34', 'Flights to Lisbon are cheaper on Tuesdays.', { role: 'assistant' }),
      msg('35', 'ok noted'),
      ...Array.from({ length: 30 }, (_, i) => msg(String(i + 36), `unrelated note ${i + 30} about parking`, { role: i % 2 ? 'user' : 'assistant' })),
    ]
    const m = new MemoryStore()
    try {
      m.ingest(turns)
      const ask = (retrievedMaxTokens: number) =>
        m.assemble({ sessionId: S, threadKey: 'root:42', userMessage: 'Which venue did we book in Lisbon for the offsite?', budgetTokens: 2_000, recent: 0, retrievedMaxTokens, retrievedNeighbours: 1, now: T0 + 86_400_000 }).text
      // Room for the question and a little more: its answer comes with it, at its weight.
      const roomy = ask(200)
      expect(roomy).toContain('did you book for the offsite?')
      expect(roomy).toContain('The riverside hall, for the second week of May.')
      // Room for short lines only: the answer comes before the weaker match.
      const tight = ask(100)
      expect(tight).toContain('The riverside hall, for the second week of May.')
      expect(tight).not.toContain('cheaper on Tuesdays')
    } finally {
      m.close()
    }
  })

  it("keeps a host's own messages from the newest within the budget and never repeats them", () => {
    const m = new MemoryStore()
    const batch = Array.from({ length: 60 }, (_, i) =>
      msg(String(i + 1), i === 4 ? 'the Lisbon venue is booked for May' : `turn ${i}: checking the queue`, { role: i % 2 === 0 ? 'user' : 'assistant' }),
    )
    m.ingest(batch)
    const hostMessages = batch.map((b) => ({ id: b.messageId, user: b.role === 'user', tokens: 12 }))
    const a = m.assemble({ sessionId: S, threadKey: 'root:42', userMessage: '', query: 'is the venue booked?', hostMessages, budgetTokens: 600, now: T0 })
    expect(a.keepFrom).toBeGreaterThan(4)
    expect(a.keepFrom % 2).toBe(0)
    expect(a.tokens.total).toBeLessThanOrEqual(600)
    expect(a.turn).toContain('the Lisbon venue is booked for May')
    for (let i = a.keepFrom; i < 60; i++) expect(a.turn).not.toContain(`turn ${i}: checking`)
    const e = thrown(() => m.assemble({ sessionId: S, threadKey: 'root:42', userMessage: '', hostMessages: [{ id: 'x', user: true, tokens: -1 }], budgetTokens: 600 }))
    expect(e).toMatchObject({ name: 'RangeError', path: 'input.hostMessages[0].tokens' })
  })

  it('takes plain batches through the packed path with the same results and the same refusals', () => {
    const plain = new MemoryStore()
    const batch = [
      msg('1', 'déjà vu 😀 in the topic', { topicId: '7' }),
      msg('2', 'a reply', { replyTo: '1', role: 'assistant' }),
      msg('3', 'lone \ud800 surrogate in text only', { topicId: null, replyTo: null }),
    ]
    const packed = plain.ingest(batch)
    // A key the packed path does not know sends the batch down the JSON path.
    const viaJson = new MemoryStore()
    const json = viaJson.ingest(batch.map((m) => Object.assign(Object.create({ inherited: 1 }), m)))
    expect(packed).toEqual(json)
    expect(packed.map((r) => r.threadKey)).toEqual(['topic:42:7', 'topic:42:7', 'root:42'])
    expect(plain.recent(S, 'topic:42:7').map((r) => r.text)).toEqual(['déjà vu 😀 in the topic', 'a reply'])
    expect(plain.recent(S, 'root:42')[0].text).toBe('lone \ufffd surrogate in text only')
    // An id with a lone surrogate is refused on either path, naming the field.
    expect(thrown(() => plain.ingest([{ ...msg('11', 'x'), messageId: '\udc00' }]))).toMatchObject({
      name: 'TypeError',
      code: 'ERR_INVALID_ARG_TYPE',
      path: 'messages[0].messageId',
    })
    expect(thrown(() => plain.ingest([{ ...msg('9', 'x'), ts: NaN }]))).toMatchObject({ name: 'RangeError', path: 'messages[0].ts' })
    // Each property is read once.
    let reads = 0
    const counted = { ...msg('10', 'counted'), get text() { reads++; return 'counted' } }
    plain.ingest([counted])
    expect(reads).toBe(1)
  })

  it('keeps everything in its file across a reopen', () => {
    const path = join(dir, 'reopen.sqlite')
    const a = new MemoryStore({ path })
    a.ingest([msg('1', 'remember the blue door')])
    a.close()
    const b = new MemoryStore({ path })
    expect(b.recent(S, 'root:42').map((r) => r.text)).toEqual(['remember the blue door'])
    b.close()
    expect(thrown(() => b.recent(S, 'root:42'))).toMatchObject({ code: 'ERR_MEMORY_CLOSED' })
  })

  it('refuses bad input by name and a file that is not a database with a clear error', () => {
    const m = new MemoryStore()
    expect(thrown(() => m.ingest([{ ...msg('1', 'x'), role: 'system' as 'user' }]))).toMatchObject({
      name: 'TypeError',
      code: 'ERR_INVALID_ARG_TYPE',
      path: 'messages[0].role',
    })
    expect(thrown(() => m.ingest([{ ...msg('1', 'x'), extra: 1 } as MemoryMessage]))).toMatchObject({
      code: 'ERR_INVALID_ARG_TYPE',
    })
    expect(thrown(() => new MemoryStore({ compaction: { keepRecent: 0 } }))).toMatchObject({
      name: 'RangeError',
      path: 'options.compaction.keepRecent',
    })
    // A failed batch writes nothing.
    expect(thrown(() => m.ingest([msg('1', 'a'), { ...msg('2', 'b'), sessionId: '' }]))).toMatchObject({
      path: 'messages[1].sessionId',
    })
    expect(m.recent(S, 'root:42')).toEqual([])
    const junk = join(dir, 'junk.sqlite')
    writeFileSync(junk, 'this is not a database, only words '.repeat(200))
    const e = thrown(() => new MemoryStore({ path: junk }))
    expect(e).toMatchObject({ code: 'ERR_MEMORY_STORAGE' })
    expect(String(e)).toMatch(/^Error: MemoryStore: SQLite: file is not a database/)
  })
})
