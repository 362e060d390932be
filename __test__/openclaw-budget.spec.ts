// The budget the plugin is given (issue 49): a session that fits `contextThreshold` of it is
// passed through verbatim; past it, the kept window changes in large fold steps and the
// summary only with them; retrieval uses the room the budget leaves, only from what is not
// in view and only past its relevance bar. Driven as OpenClaw drives the engine: assemble
// with the transcript so far and the prompt, then commitTurn and maintain.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { createContextEngine, isTurnMessage, laneOf, placeSession, type HostMessage } from '@openclaw/context-engine/openclaw'
import { tokenEstimate } from '@openclaw/context-engine'

const KEY = 'agent:main:slack:channel:C0BUDGET:thread:1775835600.000100'
const T0 = 1_775_835_600_000

type Turn = { prompt: string; messages: HostMessage[] }

/** `n` turns of a work thread; every 10th user turn is about the zebrafish tank. */
function turns(n: number, long = false): Turn[] {
  const out: Turn[] = []
  for (let i = 0; i < n; i++) {
    const about = i % 10 === 3 ? `the zebrafish tank of lab ${i} needs its filter replaced` : `the build queue of step ${i} is long`
    const prompt = `Turn ${i}: ${about}${long ? `; ${'the build queue notes again. '.repeat(8)}` : ''}`
    out.push({
      prompt,
      messages: [
        { role: 'user', content: prompt, timestamp: T0 + i * 60_000 },
        { role: 'assistant', content: [{ type: 'text', text: `Noted for turn ${i}: ${about}.` }], timestamp: T0 + i * 60_000 + 30_000 },
      ],
    })
  }
  return out
}

/** Replays `list` through `engine` at `budget`, calling `each` with every assembly. */
async function replay(engine: ReturnType<typeof createContextEngine>, list: Turn[], budget: number, each: (out: any, transcript: HostMessage[]) => void) {
  const transcript: HostMessage[] = []
  for (const [i, t] of list.entries()) {
    const out = await engine.assemble({ sessionId: 's1', sessionKey: KEY, messages: transcript.slice(), prompt: t.prompt, tokenBudget: budget })
    each(out, transcript.slice())
    transcript.push(...t.messages)
    await engine.commitTurn({ sessionId: 's1', sessionKey: KEY, messages: t.messages, advancementKey: `t${i}` })
    await engine.maintain({ sessionId: 's1', sessionKey: KEY })
  }
  return transcript
}

const kept = (out: { messages: HostMessage[] }) => out.messages.filter((m) => !isTurnMessage(m))
const turnMessageOf = (out: { messages: HostMessage[] }) => out.messages.find((m) => isTurnMessage(m))

describe('the budget the plugin is given', () => {
  it('passes a session that fits through verbatim, past the store’s compaction triggers, and still summarizes', async () => {
    const e = createContextEngine({ path: ':memory:' })
    let last: any = null
    let lastTranscript: HostMessage[] = []
    // 40 turns: 80 messages, far past the seed's 30-message trigger.
    await replay(e, turns(40), 180_000, (out, transcript) => {
      // Every turn, the host's own messages, all of them, in order, and nothing added.
      expect(out.messages).toHaveLength(transcript.length)
      out.messages.forEach((m: HostMessage, i: number) => expect(m).toBe(transcript[i]))
      last = out
      lastTranscript = transcript
    })
    expect(lastTranscript).toHaveLength(78)
    expect(last.systemPromptAddition).not.toContain('<thread_summary>')
    // The store still folds at its triggers, for search, the tools and the history.
    const place = placeSession(KEY, 's1')
    expect((await e.memory()).record(place.sessionId, 'thread_summary', laneOf(place))).not.toBeNull()
    // A question about an early turn retrieves nothing: the whole lane is in view.
    const asked = await e.assemble({ sessionId: 's1', sessionKey: KEY, messages: lastTranscript, prompt: 'what about the zebrafish tank filter of lab 3?', tokenBudget: 180_000 })
    expect(turnMessageOf(asked)).toBeUndefined()
    expect(kept(asked)).toHaveLength(78)
    expect(e.diagnostics).toEqual([])
    await e.dispose()
  })

  it('past the threshold, keeps the window append-only between fold steps and changes the summary only at a step', async () => {
    const e = createContextEngine({ path: ':memory:' })
    const budget = 4_000
    let previous: { first: HostMessage | undefined; addition: string; count: number } | null = null
    let steps = 0
    let appended = 0
    await replay(e, turns(160, true), budget, (out) => {
      expect(out.estimatedTokens).toBeLessThanOrEqual(budget)
      const k = kept(out)
      const now = { first: k[0], addition: out.systemPromptAddition ?? '', count: k.length }
      if (previous !== null && previous.count > 0) {
        if (now.first === previous.first && now.addition === previous.addition) {
          // Append-only: the same first message, the previous window and the new turn.
          expect(now.count).toBeGreaterThanOrEqual(previous.count)
          appended++
        } else {
          steps++
        }
      }
      previous = now
    })
    // The transcript outgrows the threshold early; from then on, steps are rare: the window
    // opens at a step line and moves on a step at a time (a quarter of the fold mark, half
    // the threshold's share of the budget's allowance: over an eighth of that share, in
    // estimated tokens), the summary changing with it, so there are at most as many steps as
    // the transcript's estimate fills such eighths, and one more.
    const text = (m: HostMessage) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content))
    const total = turns(160, true).reduce((n, t) => n + t.messages.reduce((k, m) => k + tokenEstimate(text(m)).estimate, 0), 0)
    expect(steps).toBeGreaterThan(0)
    expect(steps).toBeLessThanOrEqual(Math.ceil(total / ((budget * 0.75) / 8)) + 1)
    // Between steps, several turns append to the window for each step.
    expect(appended).toBeGreaterThan(3 * steps)
    expect(appended).toBeGreaterThan(110)
    expect(e.diagnostics).toEqual([])
    await e.dispose()
  })

  it('past the threshold, keeps the same window however the folds happened: assembled every turn, fed only, or restarted', async () => {
    const budget = 4_000
    const list = turns(120, true)
    const transcript = list.flatMap((t) => t.messages)
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fold-history-'))
    const open = (name: string) => createContextEngine({ path: path.join(dir, `${name}.sqlite`) })
    const fed = async (e: ReturnType<typeof createContextEngine>, part: Turn[], from: number) => {
      for (const [i, t] of part.entries()) {
        await e.commitTurn({ sessionId: 's1', sessionKey: KEY, messages: t.messages, advancementKey: `t${from + i}` })
        await e.maintain({ sessionId: 's1', sessionKey: KEY })
      }
    }
    try {
      // The host assembles before every turn: the engine folds at its own step lines.
      const every = open('every')
      await replay(every, list, budget, () => {})
      // The host never assembles: the store's own compaction triggers fold.
      const fedOnly = open('fed')
      await fed(fedOnly, list, 0)
      // Assembled every turn for half the session, then restarted and fed only.
      let restarted = open('restarted')
      await replay(restarted, list.slice(0, 60), budget, () => {})
      await restarted.dispose()
      restarted = open('restarted')
      await fed(restarted, list.slice(60), 60)
      const asked = async (e: ReturnType<typeof createContextEngine>) => {
        const out = await e.assemble({ sessionId: 's1', sessionKey: KEY, messages: transcript, prompt: 'Which lab has the zebrafish tank whose filter needs replacing?', tokenBudget: budget })
        expect(out.estimatedTokens).toBeLessThanOrEqual(budget)
        const place = placeSession(KEY, 's1')
        const summary = (await e.memory()).record(place.sessionId, 'thread_summary', laneOf(place))
        return { out, folded: JSON.stringify(summary?.messageRange ?? null) }
      }
      const [a, b, c] = [await asked(every), await asked(fedOnly), await asked(restarted)]
      // The lanes folded differently (their summaries end elsewhere), yet the window is the
      // same: the same first message and as many, so retrieval has the same room.
      expect(new Set([a.folded, b.folded, c.folded]).size).toBe(3)
      const window = kept(a.out)
      expect(window.length).toBeGreaterThan(2)
      expect(window.length).toBeLessThan(transcript.length / 2)
      for (const other of [b, c]) {
        expect(kept(other.out)).toEqual(window)
        expect(kept(other.out)[0]).toBe(window[0])
      }
      for (const e of [every, fedOnly, restarted]) {
        expect(e.diagnostics).toEqual([])
        await e.dispose()
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })

  it('retrieves with the room the budget leaves, not a fixed 2,000 tokens, and only what clears its bar', async () => {
    const e = createContextEngine({ path: ':memory:', contextThreshold: 0.2 })
    const list = turns(400, true)
    const transcript = await replay(e, list, 40_000, () => {})
    const place = placeSession(KEY, 's1')
    expect((await e.memory()).record(place.sessionId, 'thread_summary', laneOf(place))).not.toBeNull()
    const out = await e.assemble({ sessionId: 's1', sessionKey: KEY, messages: transcript, prompt: 'which zebrafish tank filter was replaced?', tokenBudget: 40_000 })
    expect(out.estimatedTokens).toBeLessThanOrEqual(40_000)
    const turn = turnMessageOf(out)
    expect(turn).toBeDefined()
    const text = (turn!.content as Array<{ text: string }>)[0].text
    expect(tokenEstimate(text).upperBound).toBeGreaterThan(2_000)
    // Never what the kept messages already show.
    for (const m of kept(out)) {
      const said = typeof m.content === 'string' ? m.content : ''
      if (said !== '') expect(text).not.toContain(said)
    }
    // A question of words in every message clears no bar: nothing retrieved, no turn message.
    const vague = await e.assemble({ sessionId: 's1', sessionKey: KEY, messages: transcript, prompt: 'the build queue?', tokenBudget: 40_000 })
    expect(turnMessageOf(vague)).toBeUndefined()
    // A cap still caps.
    const capped = createContextEngine({ path: ':memory:', contextThreshold: 0.2, recallTokens: 500 })
    await replay(capped, list.slice(0, 200), 40_000, () => {})
    const small = await capped.assemble({ sessionId: 's1', sessionKey: KEY, messages: transcript.slice(0, 400), prompt: 'which zebrafish tank filter was replaced?', tokenBudget: 40_000 })
    const smallText = (turnMessageOf(small)!.content as Array<{ text: string }>)[0].text
    expect(tokenEstimate(smallText).upperBound).toBeLessThanOrEqual(600)
    await capped.dispose()
    await e.dispose()
  })

  it('reads contextThreshold as the manifest declares it: a share above 0 and at most 1', async () => {
    for (const bad of [0, 1.5, -1, '0.5', Number.NaN]) {
      const e = createContextEngine({ path: ':memory:', contextThreshold: bad })
      expect(e.options.contextThreshold).toBe(0.75)
      expect(e.diagnostics.map((d) => d.message)).toEqual([expect.stringMatching(/^config\.contextThreshold: unusable value/)])
    }
    const e = createContextEngine({ path: ':memory:', contextThreshold: 1 })
    expect(e.diagnostics).toEqual([])
    expect(e.options.contextThreshold).toBe(1)
  })
})
