// Past the model's window (issue 60), driven as OpenClaw drives an engine that owns its
// compaction: each model call assembles twice, first with the transcript, the prompt apart
// and what the window leaves after OpenClaw's reserve and system prompt, then from its loop
// on what the first returned plus the prompt, with the whole window; afterTurn runs before
// the second and again with the answer. The request carries the second's messages under
// the first's system prompt.
import { describe, expect, it } from 'vitest'
import { createContextEngine, isTurnMessage, laneOf, placeSession, type HostMessage } from '@openclaw/context-engine/openclaw'
import { MemoryStore, tokenEstimate } from '@openclaw/context-engine'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const KEY = 'agent:main:slack:channel:C0WIN:thread:1775835600.000100'
const PLACE = placeSession(KEY, 's1')
const [SESSION, LANE] = [PLACE.sessionId, laneOf(PLACE)]
const T0 = 1_775_835_600_000
const FILLER =
  'The team went through the dependencies between the rollout steps, the customer notice, the dashboards that hide the slow tail, and who owns the runbooks now that their authors moved on.'

/** Turn `i`'s prompt: a long note with one fact of its own (about 300 tokens). */
function note(i: number): string {
  return `Turn ${i}: note on workstream ${i}. Decision: owner Person${i}, vendor Vendor${i * 7}, budget ${100 + i}k euros. ${FILLER.repeat(6)}`
}

const textOf = (m: HostMessage) => (typeof m.content === 'string' ? m.content : (m.content as Array<{ text?: string }>).map((b) => b.text ?? '').join('\n'))
const hostOnly = (messages: HostMessage[]) => messages.filter((m) => !isTurnMessage(m))

type Engine = ReturnType<typeof createContextEngine>

/**
 * One OpenClaw turn: the two assemblies with afterTurn between and after; returns both
 * results and the transcript after the answer.
 */
async function openclawTurn(e: Engine, transcript: HostMessage[], i: number, first: number, window: number) {
  const prompt = note(i)
  const one = await e.assemble({ sessionId: 's1', sessionKey: KEY, messages: transcript.slice(), prompt, tokenBudget: first })
  const user: HostMessage = { role: 'user', content: `[Sun 2026-11-29 00:30 UTC] ${prompt}`, timestamp: T0 + i * 60_000 }
  const state = [...one.messages, user]
  await e.afterTurn({ sessionId: 's1', sessionKey: KEY, messages: state, prePromptMessageCount: one.messages.length })
  const two = await e.assemble({ sessionId: 's1', sessionKey: KEY, messages: state, tokenBudget: window })
  const answer: HostMessage = { role: 'assistant', content: [{ type: 'text', text: `Noted for turn ${i}: Person${i} owns it.` }], timestamp: T0 + i * 60_000 + 30_000 }
  await e.afterTurn({ sessionId: 's1', sessionKey: KEY, messages: [...state, answer], prePromptMessageCount: one.messages.length })
  return { one, two, user, answer, prompt }
}

/** A new engine on `turns` OpenClaw turns at `first` / `window`; the engine and the transcript. */
async function driven(turns: number, first: number, window: number) {
  const e = createContextEngine({ path: ':memory:' })
  const transcript: HostMessage[] = []
  for (let i = 0; i < turns; i++) {
    const { user, answer } = await openclawTurn(e, transcript, i, first, window)
    transcript.push(user, answer)
  }
  return { e, transcript }
}

describe('past the window, as OpenClaw assembles', () => {
  it("gives the loop's assembly the first's budget and context, so the request fits what the window leaves", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ce-window-'))
    const e = createContextEngine({ path: join(dir, 'm.sqlite') })
    const transcript: HostMessage[] = []
    const versions: number[] = []
    const first = 2_000
    for (let i = 0; i < 40; i++) {
      const { one, two, user, answer, prompt } = await openclawTurn(e, transcript, i, first, 16_000)
      // Within the first's budget, the prompt now counted among the messages.
      const promptTokens = Math.ceil(tokenEstimate(JSON.stringify({ role: 'user', content: prompt })).estimate)
      expect(two.estimatedTokens).toBeLessThanOrEqual(first + promptTokens)
      // The same context: the first's kept messages, then the prompt; the same turn part.
      expect(hostOnly(two.messages)).toEqual([...hostOnly(one.messages), user])
      const turnText = (out: { messages: HostMessage[] }) => out.messages.filter(isTurnMessage).map(textOf)
      expect(turnText(two)).toEqual(turnText(one))
      // Past the share of the budget, the context stays within it.
      expect(one.estimatedTokens).toBeLessThanOrEqual(Math.floor(0.75 * (first + promptTokens)))
      transcript.push(user, answer)
      const m = new MemoryStore({ path: join(dir, 'm.sqlite') })
      versions.push(m.record(SESSION, 'thread_summary', LANE)?.summaryVersion ?? 0)
      m.close()
    }
    // The summary, in the cached system prompt, is rewritten in large, rare steps: past
    // the window from the first turns on, at most once every 10 turns.
    const rewrites = versions[versions.length - 1]
    expect(rewrites).toBeGreaterThanOrEqual(2)
    expect(rewrites).toBeLessThanOrEqual(40 / 10)
    for (let i = 10; i < versions.length; i++) expect(versions[i] - versions[i - 10]).toBeLessThanOrEqual(1)
    expect(e.diagnostics).toEqual([])
    await e.dispose()
    rmSync(dir, { recursive: true, force: true })
  })

  it('retrieves what the window no longer holds, within the share, and the loop sends it once, unchanged', async () => {
    const { e, transcript } = await driven(30, 4_000, 32_000)
    // A question about turn 2, far out of the window: what answers it comes back.
    const prompt = 'Who owns workstream 2?'
    const one = await e.assemble({ sessionId: 's1', sessionKey: KEY, messages: transcript.slice(), prompt, tokenBudget: 4_000 })
    expect(one.estimatedTokens).toBeLessThanOrEqual(0.75 * 4_100)
    const turn = one.messages.filter(isTurnMessage).map(textOf).join('\n')
    expect(turn).toContain('Noted for turn 2: Person2 owns it.')
    expect(hostOnly(one.messages).map(textOf).join('\n')).not.toMatch(/Person2\b/)
    // The loop's assembly, on what the first returned: the same part, once.
    const user: HostMessage = { role: 'user', content: prompt, timestamp: T0 + 99 * 60_000 }
    const two = await e.assemble({ sessionId: 's1', sessionKey: KEY, messages: [...one.messages, user], tokenBudget: 32_000 })
    const again = two.messages.filter(isTurnMessage).map(textOf)
    expect(again).toEqual([turn])
    expect(hostOnly(two.messages)).toEqual([...hostOnly(one.messages), user])
    await e.dispose()
  })
})

describe('what the host tells the engine', () => {
  const config = { models: { providers: { recorder: { models: [{ id: 'echo-1', contextWindow: 16_000, maxTokens: 4_096 }] } } } }
  const settings = (limits: object) => ({ model: { provider: 'recorder', resolved: 'echo-1' }, limits })

  it("keeps every context within the model's window less its reply and the host's own part, learnt from usage", async () => {
    const e = createContextEngine({ path: ':memory:' }, { config })
    const transcript: HostMessage[] = []
    let sent = 0
    for (let i = 0; i < 12; i++) {
      const prompt = note(i)
      // OpenClaw's first assembly: a budget that forgets the host's tools (a generous one).
      const one = await e.assemble({ sessionId: 's1', sessionKey: KEY, messages: transcript.slice(), prompt, tokenBudget: 6_000, model: 'echo-1', runtimeSettings: settings({ promptTokenBudget: 6_000, maxOutputTokens: 4_000 }) })
      sent = one.estimatedTokens
      // The model counts the host's 10,700 tokens of system prompt and tools besides.
      const user: HostMessage = { role: 'user', content: prompt, timestamp: T0 + i * 60_000 }
      const input = 10_700 + Math.round(one.messages.concat([user]).reduce((n, m) => n + tokenEstimate(JSON.stringify(m)).estimate, 0) + tokenEstimate(one.systemPromptAddition ?? '').estimate)
      const answer = { role: 'assistant', content: [{ type: 'text', text: `Noted for turn ${i}.` }], timestamp: T0 + i * 60_000 + 1, usage: { input, output: 12, cacheRead: 0, cacheWrite: 0 } } as HostMessage
      transcript.push(user, answer)
      if (i >= 2) {
        // From the second answer on: the host's part is known, and the request fits the
        // window with the reply's 4,096 tokens.
        expect(input + 4_096).toBeLessThanOrEqual(16_000)
      }
    }
    expect(sent).toBeGreaterThan(0)
    await e.dispose()
  })

  it('keeps what a thread needs across processes: a new engine on the same file goes on where the last stopped', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ce-window-'))
    const path = join(dir, 'm.sqlite')
    const transcript: HostMessage[] = []
    let e = createContextEngine({ path })
    let version = 0
    for (let i = 0; i < 16; i++) {
      // A process a turn, as `openclaw agent --local` runs: OpenClaw's bootstrap maintain
      // first, then the turn.
      e = createContextEngine({ path })
      await e.maintain({ sessionId: 's1', sessionKey: KEY })
      const m = new MemoryStore({ path })
      const before = m.record(SESSION, 'thread_summary', LANE)?.summaryVersion ?? 0
      m.close()
      // The bootstrap maintain of a thread past the window folds nothing on its own.
      if (i > 6) expect(before).toBe(version)
      const { user, answer } = await openclawTurn(e, transcript, i, 2_000, 16_000)
      await e.maintain({ sessionId: 's1', sessionKey: KEY })
      transcript.push(user, answer)
      const n = new MemoryStore({ path })
      version = n.record(SESSION, 'thread_summary', LANE)?.summaryVersion ?? 0
      n.close()
      await e.dispose()
    }
    expect(version).toBeLessThanOrEqual(2)
    rmSync(dir, { recursive: true, force: true })
  })

  it("folds after the turn's answer, never between the assemblies of one turn", async () => {
    const e = createContextEngine({ path: ':memory:' })
    const transcript: HostMessage[] = []
    const versionOf = async () => ((await e.memory()) as MemoryStore).record(SESSION, "thread_summary", LANE)?.summaryVersion ?? 0
    for (let i = 0; i < 30; i++) {
      const prompt = note(i)
      const one = await e.assemble({ sessionId: 's1', sessionKey: KEY, messages: transcript.slice(), prompt, tokenBudget: 2_000 })
      const user: HostMessage = { role: 'user', content: prompt, timestamp: T0 + i * 60_000 }
      const before = await versionOf()
      // OpenClaw's loop: afterTurn with the prompt newest, then the second assembly.
      await e.afterTurn({ sessionId: 's1', sessionKey: KEY, messages: [...one.messages, user] })
      expect(await versionOf()).toBe(before)
      const answer: HostMessage = { role: 'assistant', content: [{ type: 'text', text: `Noted ${i}.` }], timestamp: T0 + i * 60_000 + 1 }
      await e.afterTurn({ sessionId: 's1', sessionKey: KEY, messages: [...one.messages, user, answer] })
      transcript.push(user, answer)
    }
    expect(await versionOf()).toBeGreaterThanOrEqual(1)
    await e.dispose()
  })

  it('gives the same context when the loop sends the prompt apart again (a deferred turn)', async () => {
    const e = createContextEngine({ path: ':memory:' })
    const transcript: HostMessage[] = []
    for (let i = 0; i < 20; i++) {
      const prompt = note(i)
      const one = await e.assemble({ sessionId: 's1', sessionKey: KEY, messages: transcript.slice(), prompt, tokenBudget: 2_000 })
      const two = await e.assemble({ sessionId: 's1', sessionKey: KEY, messages: one.messages, prompt, tokenBudget: 15_000 })
      expect(two.messages).toEqual(one.messages)
      expect(two.estimatedTokens).toBeLessThanOrEqual(2_000 + Math.ceil(tokenEstimate(JSON.stringify({ role: 'user', content: prompt })).estimate))
      transcript.push({ role: 'user', content: prompt, timestamp: T0 + i * 60_000 }, { role: 'assistant', content: [{ type: 'text', text: `Noted ${i}.` }], timestamp: T0 + i * 60_000 + 1 })
    }
    await e.dispose()
  })
})

describe('a question asked again', () => {
  it('on the whole transcript at a larger budget is assembled anew, with more of the conversation', async () => {
    const { e, transcript } = await driven(30, 4_000, 32_000)
    const prompt = 'Who owns workstream 2?'
    const small = await e.assemble({ sessionId: 's1', sessionKey: KEY, messages: transcript.slice(), prompt, tokenBudget: 2_000 })
    const large = await e.assemble({ sessionId: 's1', sessionKey: KEY, messages: transcript.slice(), prompt, tokenBudget: 8_000 })
    // The kept window is a share of the budget: four times the budget, a larger window (what
    // is retrieved is sized by the question, not by the room, so it does not grow with it).
    expect(large.estimatedTokens).toBeGreaterThan(small.estimatedTokens + 1_000)
    expect(hostOnly(large.messages).length).toBeGreaterThan(hostOnly(small.messages).length)
    await e.dispose()
  })
})

describe('long turns past the window', () => {
  it('leave retrieval room: a window that slides keeps what a fold would leave, and older notes come back', async () => {
    // 60 notes of about 1,000 tokens on 12 workstreams, each workstream's notes with facts
    // of their own: the budget holds a few notes, and a fold waits for 10 turns. Over the
    // last ten turns (a whole fold cycle: the window right after a fold, growing, sliding)
    // one question a turn about an older note, asked before the turn's note.
    const e = createContextEngine({ path: ':memory:' })
    const transcript: HostMessage[] = []
    const text = (i: number) => `Turn ${i}: note on workstream ${i % 12}. Decision: owner Person${i}, vendor Vendor${i * 7}. ${FILLER.repeat(30)}`
    const asked = [2, 5, 9, 14, 17, 21, 26, 30, 33, 38]
    let found = 0
    for (let i = 0; i < 60; i++) {
      const q = asked[i - 50]
      if (q !== undefined) {
        const out = await e.assemble({ sessionId: 's1', sessionKey: KEY, messages: transcript.slice(), prompt: `Who owns workstream ${q % 12}, and with which vendor?`, tokenBudget: 16_000 })
        const all = [out.systemPromptAddition ?? '', ...out.messages.map(textOf)].join('\n')
        if (all.includes(`owner Person${q}, vendor Vendor${q * 7}`)) found++
      }
      await e.assemble({ sessionId: 's1', sessionKey: KEY, messages: transcript.slice(), prompt: text(i), tokenBudget: 16_000 })
      const user: HostMessage = { role: 'user', content: text(i), timestamp: T0 + i * 60_000 }
      const answer: HostMessage = { role: 'assistant', content: [{ type: 'text', text: `Noted ${i}.` }], timestamp: T0 + i * 60_000 + 1 }
      transcript.push(user, answer)
      await e.commitTurn({ sessionId: 's1', sessionKey: KEY, messages: [user, answer], advancementKey: `n${i}` })
      await e.maintain({ sessionId: 's1', sessionKey: KEY })
    }
    expect(found).toBeGreaterThanOrEqual(8)
    await e.dispose()
  })
})
