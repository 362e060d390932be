// The OpenClaw engine with its memory on a real PostgreSQL (`url` in its config), against
// the same engine on SQLite: the same contexts turn by turn over a long session past the
// window; then the database killed and restarted mid-replay: no turn fails (each degrades
// to the host's own messages, with a diagnostic naming the cause), the engine reconnects
// by itself, and no turn is lost.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createContextEngine, isTurnMessage, laneOf, placeSession, type HostMessage } from '@openclaw/context-engine/openclaw'
import { pgInstalled, serverForSuite } from './pg-server'

const KEY = 'agent:main:slack:channel:C0PG:thread:1775835600.000100'
const PLACE = placeSession(KEY, 's1')
const T0 = 1_775_835_600_000
const FILLER = 'We went over the rollout steps, the customer notice and the dashboards that hide the slow tail.'

/** Turn `i`'s prompt: a long note with one fact of its own. */
function note(i: number): string {
  return `Turn ${i}: workstream ${i} is owned by Person${i}, vendor Vendor${i * 7}, budget ${100 + i}k euros. ${FILLER.repeat(4)}`
}

type Engine = ReturnType<typeof createContextEngine>

/** What a context says, the host's objects as their text (the turn message's time aside). */
function said(out: { messages: HostMessage[]; systemPromptAddition?: string; estimatedTokens: number }) {
  const text = (m: HostMessage) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content))
  return {
    system: out.systemPromptAddition ?? '',
    messages: out.messages.map((m) => (isTurnMessage(m) ? `turn: ${text(m)}` : `${m.role}: ${text(m)}`)),
    tokens: out.estimatedTokens,
  }
}

/** `n` OpenClaw turns from turn `from`, each an assembly then afterTurn with the answer. */
async function replay(e: Engine, transcript: HostMessage[], from: number, n: number, before?: (i: number) => void) {
  const out: ReturnType<typeof said>[] = []
  for (let i = from; i < from + n; i++) {
    before?.(i)
    const prompt = note(i)
    const one = await e.assemble({ sessionId: 's1', sessionKey: KEY, messages: transcript.slice(), prompt, tokenBudget: 1_500 })
    out.push(said(one))
    transcript.push({ role: 'user', content: prompt, timestamp: T0 + i * 60_000 } as HostMessage)
    transcript.push({ role: 'assistant', content: [{ type: 'text', text: `Noted: Person${i} owns workstream ${i}.` }], timestamp: T0 + i * 60_000 + 1 } as HostMessage)
    await e.afterTurn({ sessionId: 's1', sessionKey: KEY, messages: transcript.slice() })
  }
  return out
}

const server = serverForSuite(beforeAll, afterAll)
const freshDatabase = () => server().database()

describe.skipIf(!pgInstalled)('the OpenClaw engine on PostgreSQL', () => {
  it('builds the contexts the engine on SQLite builds, turn by turn, past the window', { timeout: 120_000 }, async () => {
    const lite = createContextEngine({ path: ':memory:' })
    const pg = createContextEngine({ url: freshDatabase() })
    const a = await replay(lite, [], 0, 40)
    const b = await replay(pg, [], 0, 40)
    expect(b).toEqual(a)
    // Past the window: the engine retrieved and folded, so the comparison covered it.
    expect(a.some((c) => c.system.includes('summary'))).toBe(true)
    expect(pg.diagnostics).toEqual([])
    await Promise.all([lite.dispose(), pg.dispose()])
  })

  it('two engines serving alternate turns of one session build the contexts one engine builds', { timeout: 120_000 }, async () => {
    const url = freshDatabase()
    // Two engines, each with its own caches and lane states, as two gateway hosts.
    const hosts = [createContextEngine({ url }), createContextEngine({ url })]
    const alone = createContextEngine({ url: freshDatabase() })
    const shared: ReturnType<typeof said>[] = []
    const one: ReturnType<typeof said>[] = []
    const [t1, t2]: HostMessage[][] = [[], []]
    for (let i = 0; i < 40; i++) {
      shared.push(...(await replay(hosts[i % 2], t1, i, 1)))
      one.push(...(await replay(alone, t2, i, 1)))
    }
    expect(shared).toEqual(one)
    expect(one.some((c) => c.system.includes('summary'))).toBe(true)
    await Promise.all([...hosts, alone].map((e) => e.dispose()))
  })

  it('fails no turn while the database is down, reconnects by itself, and loses no turn', { timeout: 180_000 }, async () => {
    const e = createContextEngine({ url: freshDatabase() })
    const transcript: HostMessage[] = []
    const out = await replay(e, transcript, 0, 30, (i) => {
      if (i === 10) server().kill()
      if (i === 18) server().up()
    })
    // Down (turns 10 to 17): the host's own messages, in full, and a diagnostic by cause.
    for (let i = 10; i < 18; i++) {
      expect(out[i].system).toBe('')
      expect(out[i].messages.length).toBe(2 * i)
    }
    const codes = e.diagnostics.map((d) => d.message).join('\n')
    expect(codes).toMatch(/PG_UNREACHABLE|PG_TIMEOUT/)
    // Back: the memory section again, and every turn of the transcript stored once.
    expect(out[29].system).toContain('conversation_memory')
    const memory: any = await (e as any).memory()
    const stored = await memory.recent(PLACE.sessionId, laneOf(PLACE), 1_000)
    expect(stored.map((m: any) => m.text)).toEqual(transcript.map((m) => (typeof m.content === 'string' ? m.content : (m.content as any)[0].text)))
    await e.dispose()
  })
})
