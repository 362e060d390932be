import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it, onTestFinished, vi } from 'vitest'
import plugin, {
  ENGINE_ID,
  MemoryContextEngine,
  createContextEngine,
  isTurnMessage,
  laneOf,
  placeSession,
  recoveryPreamble,
  type HostMessage,
} from '@openclaw/context-engine/openclaw'
import { createAttachmentManifest, postCompactionRecovery, recordAttachment } from '@openclaw/context-engine'

const dir = mkdtempSync(join(tmpdir(), 'openclaw-plugin-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
const pkg = join(__dirname, '..')

const SLACK_THREAD = 'agent:main:slack:channel:C0123:thread:1775835600.000100'
const OTHER_THREAD = 'agent:main:slack:channel:C0123:thread:1775839999.000200'
const T0 = 1_775_835_600_000

// Messages as OpenClaw's agent runtime holds them.
const user = (text: string, i: number): HostMessage => ({ role: 'user', content: text, timestamp: T0 + i * 1000 })
const assistant = (text: string, i: number): HostMessage => ({
  role: 'assistant',
  content: [
    { type: 'thinking', thinking: 'hm', thinkingSignature: 'sig' },
    { type: 'text', text },
  ],
  api: 'anthropic-messages',
  provider: 'anthropic',
  model: 'claude-sonnet-4-6',
  usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
  stopReason: 'stop',
  timestamp: T0 + i * 1000 + 500,
})
const toolCall = (i: number): HostMessage => ({
  role: 'assistant',
  content: [{ type: 'toolCall', id: `call${i}`, name: 'search', arguments: { q: 'x' } }],
  api: 'anthropic-messages',
  provider: 'anthropic',
  model: 'claude-sonnet-4-6',
  usage: {},
  stopReason: 'toolUse',
  timestamp: T0 + i * 1000 + 600,
})
const toolResult = (i: number): HostMessage => ({
  role: 'toolResult',
  toolCallId: `call${i}`,
  toolName: 'search',
  content: [{ type: 'text', text: 'result '.repeat(50) }],
  isError: false,
  timestamp: T0 + i * 1000 + 700,
})

function conversation(turns: number, topic = 'rollout'): HostMessage[] {
  const out: HostMessage[] = []
  for (let i = 0; i < turns; i++) {
    out.push(user(`Turn ${i}: what about the ${topic} of part ${i}?`, i))
    if (i % 5 === 4) out.push(toolCall(i), toolResult(i))
    out.push(assistant(`We decided to ship part ${i} of the ${topic} behind a flag.`, i))
  }
  return out
}

/** The host's messages of an assembly, without the engine's turn message. */
const keptOf = (out: { messages: HostMessage[] }) => out.messages.filter((m) => !isTurnMessage(m))

/** The text of the engine's turn message ('' when there is none); it comes last. */
function turnText(out: { messages: HostMessage[] }): string {
  const last = out.messages.at(-1)
  if (last === undefined || !isTurnMessage(last)) return ''
  expect(out.messages.filter((m) => isTurnMessage(m))).toHaveLength(1)
  return last.content[0].text
}

function engine(file: string, options: Record<string, unknown> = {}) {
  return createContextEngine({ path: join(dir, file), ...options })
}

describe('the OpenClaw plugin', () => {
  it('registers one engine whose info.id is the registered id, as the manifest declares', () => {
    const registered: Array<[string, (ctx: { agentDir?: string }) => MemoryContextEngine]> = []
    plugin.register({
      pluginConfig: { path: join(dir, 'registered.sqlite') },
      logger: { warn: () => {} },
      registerContextEngine: (id, factory) => registered.push([id, factory]),
    })
    expect(registered.map(([id]) => id)).toEqual([ENGINE_ID])
    const e = registered[0][1]({ agentDir: dir })
    expect(e.info).toMatchObject({ id: registered[0][0], ownsCompaction: true })
    const manifest = JSON.parse(readFileSync(join(pkg, 'openclaw.plugin.json'), 'utf8'))
    expect(manifest).toMatchObject({ id: ENGINE_ID, kind: 'context-engine' })
    const json = JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8'))
    expect(json.openclaw.extensions).toEqual(['./openclaw/index.js'])
    // Without a path, the file goes under the agent's directory.
    const byAgent = registered[0][1]({ agentDir: join(dir, 'agent') })
    expect(createContextEngine(undefined, { agentDir: join(dir, 'agent') }).dbPath).toBe(
      join(dir, 'agent', 'context-engine', 'memory.sqlite'),
    )
    expect(byAgent.dbPath).toBe(join(dir, 'registered.sqlite'))
  })

  it("hands the engine the host's config, where the models' windows and reply sizes are", async () => {
    const registered: Array<(ctx: { agentDir?: string; config?: object }) => MemoryContextEngine> = []
    const hostConfig = { models: { providers: { p: { models: [{ id: 'm', contextWindow: 16_000, maxTokens: 4_096 }] } } } }
    plugin.register({
      pluginConfig: { path: ':memory:', history: false, threadStatus: false },
      config: hostConfig,
      logger: { warn: () => {} },
      registerContextEngine: (_id: string, factory: (ctx: { agentDir?: string; config?: object }) => MemoryContextEngine) => registered.push(factory),
    } as never)
    // The factory's own config first, else the plugin API's.
    for (const ctx of [{ agentDir: dir }, { agentDir: dir, config: hostConfig }]) {
      const e = registered[0](ctx)
      const messages = conversation(30).map((m) => (m.role === 'user' ? { ...m, content: `${m.content} ${'the details of the plan '.repeat(20)}` } : m))
      const at = messages.length - 1
      const settings = { model: { provider: 'p' }, limits: { maxOutputTokens: 4_000 } }
      // The context it sent, then the host's answer carrying usage: 12,000 input tokens.
      const first = await e.assemble({ sessionId: 's', sessionKey: SLACK_THREAD, messages: messages.slice(0, at), prompt: 'and the flags?', tokenBudget: 50_000, model: 'm', runtimeSettings: settings })
      const answered = [...messages.slice(0, at), { role: 'user', content: 'and the flags?', timestamp: 1 }, { ...messages[at], usage: { input: first.estimatedTokens + 11_000 } }]
      const next = await e.assemble({ sessionId: 's', sessionKey: SLACK_THREAD, messages: answered, prompt: 'and the rollout?', tokenBudget: 50_000, model: 'm', runtimeSettings: settings })
      // 16,000 less the reply's 4,096 less the host's 11,000 or so leaves under 1,000 tokens.
      expect(next.estimatedTokens).toBeLessThan(1_300)
      await e.dispose()
    }
  })

  it('reads thread keys from OpenClaw session keys: Slack and Discord threads, Telegram topics, channels', () => {
    const cases: Array<[string | undefined, string, string, string]> = [
      [SLACK_THREAD, 's', 'agent:main:slack:channel:C0123', 'reply:C0123:1775835600.000100'],
      ['agent:zu:telegram:group:-1001234567890:topic:3', 's', 'agent:zu:telegram:group:-1001234567890', 'topic:-1001234567890:3'],
      ['agent:main:slack:channel:C0123', 's', 'agent:main:slack:channel:C0123', 'root:C0123'],
      // A Discord thread is a channel of its own under its parent: a topic of the parent.
      ['agent:main:discord:channel:1200000000000000001:thread:1573261620019200007', 's', 'agent:main:discord:channel:1200000000000000001', 'topic:1200000000000000001:1573261620019200007'],
      // Telegram's General topic is the chat itself.
      ['agent:zu:telegram:group:-1001234567890:topic:1', 's', 'agent:zu:telegram:group:-1001234567890', 'root:-1001234567890'],
      ['agent:main:main:thread:1777244748.777299', 's', 'agent:main:main', 'reply:main:1777244748.777299'],
      [undefined, 'abc', 'session:abc', 'root:abc'],
    ]
    for (const [key, id, session, lane] of cases) {
      const place = placeSession(key, id)
      expect([place.sessionId, laneOf(place)]).toEqual([session, lane])
    }
  })

  it('folds long threads into a summary and assembles within the budget from where it stops', async () => {
    const e = engine('lifecycle.sqlite')
    const messages = conversation(45)
    expect(await e.ingestBatch({ sessionId: 's1', sessionKey: SLACK_THREAD, messages: messages.slice(0, 4) })).toEqual({
      ingestedCount: 4,
    })
    expect(await e.ingest({ sessionId: 's1', sessionKey: SLACK_THREAD, message: messages[0] })).toEqual({ ingested: false })
    await e.afterTurn({ sessionId: 's1', sessionKey: SLACK_THREAD, messages, prePromptMessageCount: 0, sessionFile: 'x' })
    const budget = 2_000
    const out = await e.assemble({ sessionId: 's1', sessionKey: SLACK_THREAD, messages, tokenBudget: budget, prompt: 'the rollout flag of part 7' })
    // The recall tools' guidance is the policy, first; then the summary.
    expect(out.systemPromptAddition).toMatch(/^<conversation_memory>\n<policy>\n## Conversation recall\n[^<]*<\/policy>\n<thread_summary>\nCurrent goals \/ open questions:/)
    // The summary, cut to its share of the budget, keeps its newest items.
    expect(out.systemPromptAddition).toMatch(/- We decided to ship part 3\d of the rollout behind a flag\./)
    expect(out.estimatedTokens).toBeLessThanOrEqual(budget)
    const kept = keptOf(out)
    expect(kept.length).toBeLessThan(messages.length)
    expect(kept[0].role).toBe('user')
    // The kept messages are the host's own objects, tool calls with their results, and
    // this turn's retrieved messages come after them, in a message of their own, never
    // in the system prompt (it changes every turn: a prompt cache reuses what is before).
    expect(kept.every((m) => messages.includes(m))).toBe(true)
    expect(out.systemPromptAddition).not.toContain('<retrieved_messages>')
    expect(out.systemPromptAddition).not.toContain('memory_for_this_turn')
    expect(turnText(out)).toMatch(/^<memory_for_this_turn>\n<retrieved_messages>\n/)
    // Words in every message clear no relevance bar: no turn message to pay for uncached.
    const vague = await e.assemble({ sessionId: 's1', sessionKey: SLACK_THREAD, messages, tokenBudget: budget, prompt: 'the rollout' })
    expect(turnText(vague)).toBe('')
    for (const [i, m] of kept.entries()) {
      if (m.role === 'toolResult') expect(kept[i - 1].role).toBe('assistant')
    }
    expect(kept.at(-1)).toBe(messages.at(-1))
    const whole = messages.reduce((n, m) => n + Math.ceil(JSON.stringify(m).length / 4), 0)
    expect(out.estimatedTokens).toBeLessThan(whole / 2)
    expect(e.diagnostics).toEqual([])
    await e.dispose()
  })

  it('keeps the summary at a small budget and brings back a dropped message the question names, never twice', async () => {
    const e = engine('small-budget.sqlite')
    const messages = conversation(45)
    await e.afterTurn({ sessionId: 's1', sessionKey: SLACK_THREAD, messages, prePromptMessageCount: 0, sessionFile: 'x' })
    for (const budget of [2_000, 3_000]) {
      const out = await e.assemble({ sessionId: 's1', sessionKey: SLACK_THREAD, messages, tokenBudget: budget, prompt: 'what did we decide about part 12 of the rollout?' })
      expect(out.estimatedTokens).toBeLessThanOrEqual(budget)
      // The summary gets its share even when the budget is small (cut to its newest items).
      expect(out.systemPromptAddition).toMatch(/<thread_summary>\n/)
      // Part 12 is long out of the kept messages: it comes back for this turn, dated.
      const block = turnText(out)
      expect(block).toMatch(/^<memory_for_this_turn>\n<retrieved_messages>\n## \w{3} \d+ \w{3} \d{4} \(/)
      expect(block).toContain('We decided to ship part 12 of the rollout behind a flag.')
      const sent = [out.systemPromptAddition, ...out.messages.map((m) => JSON.stringify(m.content))].join('\n')
      expect(sent.split('ship part 12 of').length - 1).toBe(1)
    }
    // Off: the summary and the kept messages only.
    const off = engine('small-budget.sqlite', { recallTokens: 0 })
    const plain = await off.assemble({ sessionId: 's1', sessionKey: SLACK_THREAD, messages, tokenBudget: 2_000, prompt: 'what did we decide about part 12 of the rollout?' })
    expect(turnText(plain)).toBe('')
    expect(JSON.stringify(plain)).not.toContain('ship part 12 of')
    await off.dispose()
    await e.dispose()
  })

  it('sends the turn message once: one handed back is dropped, never kept twice, never stored', async () => {
    const e = engine('turn-message.sqlite')
    const messages = conversation(45)
    await e.afterTurn({ sessionId: 's1', sessionKey: SLACK_THREAD, messages, prePromptMessageCount: 0, sessionFile: 'x' })
    const ask = (list: HostMessage[]) =>
      e.assemble({ sessionId: 's1', sessionKey: SLACK_THREAD, messages: list, tokenBudget: 2_000, prompt: 'what did we decide about part 12 of the rollout?' })
    const first = await ask(messages)
    const block = turnText(first)
    expect(block).toContain('ship part 12 of')
    // OpenClaw assembles again on what the first assembly returned, and puts a timestamp
    // before a user message's text: the same context comes back, with one turn message.
    const last = first.messages.at(-1) as HostMessage
    const stamped = { ...last, content: `[Thu 2026-04-10 16:40 UTC] ${block}` }
    expect(isTurnMessage(stamped)).toBe(true)
    const again = await ask([...keptOf(first), stamped])
    expect(again.messages.map((m) => (isTurnMessage(m) ? 'turn' : m))).toEqual([...keptOf(first), 'turn'])
    expect(turnText(again)).toBe(block)
    // Handed back after the turn, it is not stored as something the user said.
    await e.afterTurn({ sessionId: 's1', sessionKey: SLACK_THREAD, messages: [...messages, stamped, user('thanks', 99)], prePromptMessageCount: 0, sessionFile: 'x' })
    await e.dispose()
    const { MemoryStore } = await import('@openclaw/context-engine')
    const place = placeSession(SLACK_THREAD, 's1')
    const memory = new MemoryStore({ path: join(dir, 'turn-message.sqlite') })
    const stored = memory.recent(place.sessionId, laneOf(place), 1_000)
    expect(stored.at(-1)?.text).toBe('thanks')
    expect(stored.some((m) => m.text.includes('memory_for_this_turn'))).toBe(false)
    memory.close()
    // A user's own words that merely mention the tag are theirs.
    expect(isTurnMessage(user('what is <memory_for_this_turn> for?', 1))).toBe(false)
    expect(isTurnMessage({ role: 'assistant', content: '<memory_for_this_turn>\nx' })).toBe(false)
  })

  it('stores every reply of three threads whose provider reuses response ids, with a diagnostic', async () => {
    const e = engine('reused-ids.sqlite')
    const threads = ['1775835600.000100', '1775835700.000100', '1775835800.000100']
    for (const [t, ts] of threads.entries()) {
      const key = `agent:main:slack:channel:C0123:thread:${ts}`
      for (let i = 0; i < 5; i++) {
        const reply = { ...assistant(`Thread ${t} answer ${i}.`, 100 * t + i), responseId: `resp_${i}` }
        const turn = [user(`Thread ${t} question ${i}?`, 100 * t + i), reply]
        // The durable path for the first two threads, the after-turn one for the third.
        if (t < 2) await e.commitTurn({ sessionId: `s${t}`, sessionKey: key, advancementKey: `${t}-${i}`, messages: turn })
        await e.afterTurn({ sessionId: `s${t}`, sessionKey: key, messages: turn, prePromptMessageCount: 0 })
      }
    }
    await e.dispose()
    const { MemoryStore } = await import('@openclaw/context-engine')
    const memory = new MemoryStore({ path: join(dir, 'reused-ids.sqlite') })
    for (const [t, ts] of threads.entries()) {
      const place = placeSession(`agent:main:slack:channel:C0123:thread:${ts}`, 's')
      const replies = memory.recent(place.sessionId, laneOf(place), 100).filter((m) => m.role === 'assistant')
      expect(replies.map((m) => m.text)).toEqual([0, 1, 2, 3, 4].map((i) => `Thread ${t} answer ${i}.`))
      // The first thread keeps the ids; the others' replies are qualified by their lane.
      expect(replies.every((m) => (t === 0 ? m.messageId.startsWith('resp:resp_') && !m.messageId.includes('@') : m.messageId.endsWith(`@${laneOf(place)}`)))).toBe(true)
    }
    memory.close()
    // Said on both paths: the second thread's replies through the commit, the third's
    // after the turn.
    expect(e.diagnostics.filter((d) => d.method === 'commitTurn').map((d) => d.message)).toEqual(
      [0, 1, 2, 3, 4].map((i) => `message id resp:resp_${i} is another thread's already; stored as resp:resp_${i}@reply:C0123:1775835700.000100`),
    )
    expect(e.diagnostics.filter((d) => d.method === 'ingest').map((d) => d.message)).toEqual(
      [0, 1, 2, 3, 4].map((i) => `message id resp:resp_${i} is another thread's already; stored as resp:resp_${i}@reply:C0123:1775835800.000100`),
    )
  })

  it('commits an accepted turn once per advancement key, and maintains by compacting when due', async () => {
    const e = engine('commit.sqlite')
    expect(e.info.transcriptSemantics).toEqual({
      currentTurnFence: 'before-current-turn-entry-v1',
      turnAdvancementIdempotency: 'atomic-idempotent-v1',
    })
    const turn = [user('Turn 1: we decided to ship on Friday.', 1), toolCall(1), toolResult(1), assistant('Shipped.', 1)]
    const commit = (key: string, messages: HostMessage[]) =>
      e.commitTurn({ sessionId: 's', sessionKey: SLACK_THREAD, advancementKey: key, messages })
    expect(await commit('turn-1', turn)).toEqual({ status: 'committed' })
    // A host retry of the same key writes nothing.
    expect(await commit('turn-1', [user('Turn 1 again', 2)])).toEqual({ status: 'duplicate' })
    expect(await e.maintain({ sessionId: 's', sessionKey: SLACK_THREAD })).toEqual({
      changed: false,
      bytesFreed: 0,
      rewrittenEntries: 0,
      reason: 'nothing due',
    })
    const all = conversation(20)
    for (let i = 0; i < all.length; i += 2) await commit(`t${i}`, all.slice(i, i + 2))
    const maintained = await e.maintain({ sessionId: 's', sessionKey: SLACK_THREAD })
    expect(maintained.changed).toBe(false)
    expect(maintained.reason).toMatch(/^thread summary v1: \d+ messages folded$/)
    await e.dispose()
  })

  it('assembles with one call into the store: the turn stored and recorded in the same call', async () => {
    const e = engine('one-call.sqlite')
    const messages = conversation(12)
    await e.assemble({ sessionId: 's1', sessionKey: SLACK_THREAD, messages: messages.slice(0, 6), tokenBudget: 4_000 })
    // Every other method of the store is off limits now: the next turn may only assemble.
    const store = (await e.memory()) as unknown as Record<string, unknown>
    const calls: string[] = []
    const proto = Object.getPrototypeOf(store) as Record<string, unknown>
    for (const name of Object.getOwnPropertyNames(proto)) {
      const f = proto[name]
      if (name === 'constructor' || typeof f !== 'function') continue
      store[name] = (...args: unknown[]) => {
        calls.push(name)
        return (f as (...a: unknown[]) => unknown).apply(store, args)
      }
    }
    const out = await e.assemble({ sessionId: 's2', sessionKey: SLACK_THREAD, messages, tokenBudget: 4_000, prompt: 'the rollout' })
    expect(calls).toEqual(['assemble'])
    expect(e.diagnostics).toEqual([])
    expect(out.messages.length).toBeGreaterThan(0)
    // The turn was stored by that call: the newest message is in the store now.
    const place = placeSession(SLACK_THREAD, 's2')
    const recent = (await e.memory()).recent(place.sessionId, laneOf(place), 1)
    expect(recent.map((m) => m.text)).toEqual(['We decided to ship part 11 of the rollout behind a flag.'])
  })

  it('keeps threads apart: another thread of the channel gets its own summary', async () => {
    const e = engine('threads.sqlite')
    await e.afterTurn({ sessionId: 'a', sessionKey: SLACK_THREAD, messages: conversation(40, 'rollout'), prePromptMessageCount: 0, sessionFile: 'x' })
    await e.afterTurn({ sessionId: 'b', sessionKey: OTHER_THREAD, messages: conversation(40, 'offsite'), prePromptMessageCount: 0, sessionFile: 'x' })
    // Past the verbatim share (a small budget), the thread's summary is in the context.
    const b = await e.assemble({ sessionId: 'b', sessionKey: OTHER_THREAD, messages: conversation(40, 'offsite'), tokenBudget: 3_000 })
    expect(b.systemPromptAddition).toContain('offsite')
    expect(b.systemPromptAddition).not.toContain('rollout')
    await e.dispose()
  })

  it("adds the thread's history by tiers and the thread status, each of which can be turned off", async () => {
    // The tiers are calendar days in the zone, so the clock is fixed at midday in Berlin:
    // run just after midnight there, the conversation of 70 minutes ago is "yesterday".
    vi.useFakeTimers({ toFake: ['Date'] })
    vi.setSystemTime(new Date('2026-11-24T12:00:00+01:00'))
    onTestFinished(() => vi.useRealTimers())
    const now = Date.now()
    const recent = (text: string, ago: number, role: 'user' | 'assistant' = 'user'): HostMessage =>
      role === 'user' ? { role, content: text, timestamp: now - ago } : { ...assistant(text, 0), timestamp: now - ago }
    const e = engine('history.sqlite', { timeZone: 'Europe/Berlin' })
    // An earlier session of this thread (before a reset), an hour ago; another thread of
    // the channel; then this session, five minutes ago.
    await e.assemble({ sessionId: 'earlier', sessionKey: SLACK_THREAD, messages: [recent('book the Lisbon venue', 70 * 60_000), recent('Booked.', 69 * 60_000, 'assistant')], tokenBudget: 50_000 })
    await e.assemble({ sessionId: 'other', sessionKey: OTHER_THREAD, messages: [recent('order the offsite t-shirts', 60 * 60_000)], tokenBudget: 50_000 })
    const mine = [recent('are the workers running?', 5 * 60_000), recent('All three are.', 4 * 60_000, 'assistant')]
    const out = await e.assemble({ sessionId: 'mine', sessionKey: SLACK_THREAD, messages: mine, tokenBudget: 50_000 })
    const addition = out.systemPromptAddition ?? ''
    expect(addition).toContain('<thread-status>CONTINUATION — ')
    expect(addition).toMatch(/<conversation_history>\n<conversation timestamp="[^"]+\+01:00" relative="earlier today">\n\[human \d\d:\d\d\] book the Lisbon venue/)
    // Never another thread's conversation, and this session's own messages are sent as
    // messages, not repeated in the history.
    expect(addition).not.toContain('t-shirts')
    expect(addition).not.toContain('are the workers running?')
    expect(out.estimatedTokens).toBeLessThanOrEqual(50_000)
    await e.dispose()
    const off = engine('history.sqlite', { history: false, threadStatus: false })
    const plain = await off.assemble({ sessionId: 'mine', sessionKey: SLACK_THREAD, messages: mine, tokenBudget: 50_000 })
    expect(plain.systemPromptAddition ?? '').not.toMatch(/thread-status|conversation_history/)
    await off.dispose()
  })

  it('compacts on request and reports tokens before and after', async () => {
    const e = engine('compact.sqlite')
    // Long questions: what the summary stands for is larger than the summary.
    const messages = conversation(14).map((m) =>
      m.role === 'user' ? { ...m, content: `${m.content} ${'with all the details of the plan '.repeat(6)}` } : m,
    )
    await e.ingestBatch({ sessionId: 's', sessionKey: SLACK_THREAD, messages })
    expect(await e.compact({ sessionId: 's', sessionKey: SLACK_THREAD })).toEqual({
      ok: true,
      compacted: false,
      reason: 'below threshold: no fold is due in this thread',
    })
    // Forced (OpenClaw's recovery, /compact): everything before the current turn folds.
    const forced = await e.compact({ sessionId: 's', sessionKey: SLACK_THREAD, force: true })
    expect(forced).toMatchObject({ ok: true, compacted: true, result: { details: { trigger: 'through', folded: 26 } } })
    expect(forced.reason).toBe('thread summary v1: 26 messages before the current turn folded')
    expect(forced.result!.tokensAfter).toBeLessThan(forced.result!.tokensBefore)
    expect(forced.result!.summary).toContain('Decisions made:')
    // Nothing before the current turn is left, and no context was assembled to shrink.
    expect(await e.compact({ sessionId: 's', sessionKey: SLACK_THREAD, force: true })).toEqual({
      ok: true,
      compacted: false,
      reason: 'nothing to fold or drop: the thread holds only what its current turn must',
    })
    await e.dispose()
  })

  it('after an overflow, a forced compact shrinks the next contexts by what the request was over', async () => {
    const e = engine('overflow.sqlite', { history: false, threadStatus: false })
    const messages = conversation(40).map((m) =>
      m.role === 'user' ? { ...m, content: `${m.content} ${'with all the details of the plan '.repeat(6)}` } : m,
    )
    const ask = () => e.assemble({ sessionId: 's', sessionKey: SLACK_THREAD, messages, tokenBudget: 8_000 })
    const first = await ask()
    // The host's request was 900 tokens over its 16,000 window: OpenClaw asks to compact.
    const overflow = { force: true, runtimeContext: { trigger: 'overflow' } }
    const over = await e.compact({ sessionId: 's', sessionKey: SLACK_THREAD, ...overflow, tokenBudget: 16_000, currentTokenCount: 16_900 })
    expect(over.compacted).toBe(true)
    expect(over.reason).toMatch(/messages before the current turn folded; the thread's next contexts within \d+ tokens \(the last took \d+\)/)
    const after = await ask()
    expect(after.estimatedTokens).toBeLessThanOrEqual(first.estimatedTokens - 900)
    expect(over.result!.tokensBefore - over.result!.tokensAfter).toBeGreaterThanOrEqual(900)
    // The retry of the same turn is a new assembly, within the cap.
    expect(after.messages.length).toBeLessThan(first.messages.length)
    // Each further overflow halves what is left, until what the context must hold (the
    // policy, the current turn) is all it holds: then there is nothing to drop.
    let last = after.estimatedTokens
    for (;;) {
      const again = await e.compact({ sessionId: 's', sessionKey: SLACK_THREAD, ...overflow })
      if (!again.compacted) {
        expect(again.reason).toBe('nothing to fold or drop: the thread holds only what its current turn must')
        break
      }
      const next = await ask()
      expect(next.estimatedTokens).toBeLessThan(last)
      last = next.estimatedTokens
    }
    // The current turn (the question, its tool call and result, the answer) is all it keeps.
    const minimal = await ask()
    expect(keptOf(minimal)).toEqual(messages.slice(-4))
    expect(e.diagnostics).toEqual([])
    await e.dispose()
  })

  it("answers OpenClaw's preflight with a no-op it accepts, shrinking the next contexts by what its projection is over", async () => {
    const e = engine('preflight.sqlite', { history: false, threadStatus: false })
    const messages = conversation(40).map((m) =>
      m.role === 'user' ? { ...m, content: `${m.content} ${'with all the details of the plan '.repeat(6)}` } : m,
    )
    // The first assembly of a turn names the reserve OpenClaw keeps for the reply.
    const ask = () =>
      e.assemble({ sessionId: 's', sessionKey: SLACK_THREAD, messages, prompt: 'and the flags?', tokenBudget: 3_000, runtimeSettings: { limits: { promptTokenBudget: 3_000, maxOutputTokens: 4_000 } } })
    const first = await ask()
    const preflight = { force: true, compactionTarget: 'budget', runtimeContext: { trigger: 'budget', forceReason: 'preflight_required' } }
    // Projected 12,400 against 16,000 less the 4,000 reserve: 400 over.
    const out = await e.compact({ sessionId: 's', sessionKey: SLACK_THREAD, ...preflight, tokenBudget: 16_000, currentTokenCount: 12_400 })
    expect(out.compacted).toBe(false)
    // OpenClaw takes "already under target" as an intentional no-op, never a failed turn.
    expect(out.reason).toMatch(/^already under target: the engine assembles this thread within the budget; the thread's next contexts within \d+ tokens/)
    const next = await e.assemble({ sessionId: 's', sessionKey: SLACK_THREAD, messages, prompt: 'and the rollout?', tokenBudget: 3_000 })
    expect(next.estimatedTokens).toBeLessThanOrEqual(first.estimatedTokens - 400)
    // The summary is not rewritten for it.
    expect((await e.memory()).record(placeSession(SLACK_THREAD, 's').sessionId, 'thread_summary', laneOf(placeSession(SLACK_THREAD, 's')))).toBeNull()
    // Under the threshold: nothing to shrink.
    const under = await e.compact({ sessionId: 's', sessionKey: SLACK_THREAD, ...preflight, tokenBudget: 16_000, currentTokenCount: 11_000 })
    expect(under).toEqual({ ok: true, compacted: false, reason: 'already under target: the engine assembles this thread within the budget; nothing to shrink' })
    await e.dispose()
  })

  it("takes the host model's summary when valid, and falls back when it fails, stalls or rambles", async () => {
    const valid =
      'Current goals / open questions:\n- Finish the rollout\nDecisions made:\n- Flags for every part\n' +
      'Important facts:\n- (none)\nRecent outcomes:\n- (none)\nPending actions:\n- (none)\n'
    const asked: string[] = []
    const runs: Array<[string, (req: { messages: Array<{ content: string }> }) => Promise<{ text: string }>, string]> = [
      ['valid', async (req) => (asked.push(req.messages[0].content), { text: valid }), 'caller'],
      ['prose', async () => ({ text: 'Here is a summary of the thread.' }), 'fallback'],
      ['throws', async () => Promise.reject(new Error('provider down')), 'extractive'],
      ['stalls', () => new Promise(() => {}), 'extractive'],
      ['throws at once', () => { throw new Error('no model configured') }, 'extractive'],
    ]
    for (const [name, complete, summarizer] of runs) {
      const e = engine(`llm-${name}.sqlite`, { summarizer: 'llm', summarizerTimeoutMs: 200 })
      await e.ingestBatch({ sessionId: 's', sessionKey: SLACK_THREAD, messages: conversation(20) })
      const r = await e.compact({ sessionId: 's', sessionKey: SLACK_THREAD, force: true, runtimeContext: { llm: { complete } } })
      expect([name, r.result?.details?.summarizer]).toEqual([name, summarizer])
      await e.dispose()
    }
    // The store wrote the request: the plan's prompt, the structure it then accepted.
    expect(asked).toHaveLength(1)
    expect(asked[0]).toMatch(/^Update the running summary of a chat thread[\s\S]*"Pending actions:"[\s\S]*New messages:\n\[user\] /)
  })

  it('re-attaches the images of compacted messages once, with the recovery preamble', async () => {
    // Past the verbatim share: the summary stands for the image's message.
    const e = engine('media.sqlite', { contextThreshold: 0.01 })
    const image = { type: 'image', data: 'aGVsbG8=', mimeType: 'image/png' }
    const messages = conversation(40)
    messages[2] = { ...messages[2], role: 'user', content: [{ type: 'text', text: 'see the chart' }, image], timestamp: T0 + 1 }
    await e.afterTurn({ sessionId: 's', sessionKey: SLACK_THREAD, messages, prePromptMessageCount: 0, sessionFile: 'x' })
    const first = await e.assemble({ sessionId: 's', sessionKey: SLACK_THREAD, messages, tokenBudget: 100_000 })
    const opened = first.messages[0]
    const original = messages.find((m) => m.timestamp === opened.timestamp && m.role === 'user')!
    expect(opened.content).toEqual([
      { type: 'text', text: '[Post-compaction context recovery: re-attaching 1 media items from this thread]' },
      image,
      { type: 'text', text: original.content },
    ])
    // Once: the next turn sends the kept messages as they are, and the host's are untouched.
    const second = await e.assemble({ sessionId: 's', sessionKey: SLACK_THREAD, messages, tokenBudget: 100_000 })
    expect(keptOf(second).every((m) => messages.includes(m))).toBe(true)
    expect(messages[2].content).toEqual([{ type: 'text', text: 'see the chart' }, image])
    await e.dispose()
  })

  it('picks up a thread after a restart with nothing but the SQLite file', async () => {
    const a = engine('restart.sqlite')
    await a.afterTurn({ sessionId: 's', sessionKey: SLACK_THREAD, messages: conversation(40), prePromptMessageCount: 0, sessionFile: 'x' })
    await a.dispose()
    const b = engine('restart.sqlite')
    // The host's transcript starts afresh: only the new question.
    const out = await b.assemble({ sessionId: 's2', sessionKey: SLACK_THREAD, messages: [user('where were we on the rollout?', 100)], tokenBudget: 10_000 })
    expect(out.systemPromptAddition).toContain('- We decided to ship part 29 of the rollout behind a flag.')
    expect(keptOf(out)).toHaveLength(1)
    await b.dispose()
  })

  it('never throws into the host: bad input and storage faults pass the messages through', async () => {
    const warnings: string[] = []
    const notADb = join(dir, 'not-a-db.sqlite')
    writeFileSync(notADb, 'plain text, not SQLite '.repeat(100))
    mkdirSync(join(dir, 'a-directory.sqlite'), { recursive: true })
    for (const path of [notADb, join(dir, 'a-directory.sqlite')]) {
      const e = createContextEngine({ path }, { logger: { warn: (m: string) => warnings.push(m) } })
      const messages = conversation(3)
      const out = await e.assemble({ sessionId: 's', sessionKey: SLACK_THREAD, messages, tokenBudget: 1000 })
      expect(out.messages).toBe(messages)
      expect(await e.ingest({ sessionId: 's', message: messages[0] })).toEqual({ ingested: false })
      expect(await e.ingestBatch({ sessionId: 's', messages })).toEqual({ ingestedCount: 0 })
      expect(await e.afterTurn({ sessionId: 's', messages, prePromptMessageCount: 0, sessionFile: 'x' })).toBeUndefined()
      expect(await e.compact({ sessionId: 's', sessionKey: 'k' })).toMatchObject({ ok: false, compacted: false })
      await e.dispose()
      expect(e.diagnostics.length).toBeGreaterThan(0)
    }
    expect(warnings.some((w) => w.startsWith('[context-engine] assemble: MemoryStore: SQLite'))).toBe(true)

    const e = engine('hostile.sqlite', { summarizer: 'gpt', nonsense: 1 } as Record<string, unknown>)
    expect(e.diagnostics.map((d) => d.message)).toEqual([
      'config.summarizer: unusable value "gpt" (default kept)',
      'config.nonsense: unknown option (ignored)',
    ])
    const hostile: unknown[] = [undefined, null, 7, 'x', { sessionId: 5, messages: 'no' }, { sessionId: 's', messages: [null, 3, { role: 'user', content: 7 }] }]
    for (const p of hostile) {
      await expect(e.assemble(p as never)).resolves.toHaveProperty('messages')
      await expect(e.ingest(p as never)).resolves.toHaveProperty('ingested')
      await expect(e.ingestBatch(p as never)).resolves.toHaveProperty('ingestedCount')
      await expect(e.afterTurn(p as never)).resolves.toBeUndefined()
      await expect(e.compact(p as never)).resolves.toHaveProperty('ok')
    }
    await e.dispose()
    await e.dispose()
  })

  it('uses the same recovery text as the runner-side manifest helper', () => {
    const m = createAttachmentManifest()
    const record = (id: string, thread: string | null) => ({
      artifact_id: id,
      display_name: `${id}.png`,
      media_type: 'image/png',
      content_hash: 'a'.repeat(64),
      source_message_id: '1.0',
      source_thread_id: thread,
      included_at_turn: 1,
    })
    recordAttachment(m, record('F1', '1.0'))
    recordAttachment(m, record('F2', '1.0'))
    recordAttachment(m, record('F3', '9.0'))
    const before = JSON.stringify(m)
    const r = postCompactionRecovery(m, '1.0')
    expect(r?.preamble).toBe(recoveryPreamble(2))
    expect(r?.items.map((x) => x.artifact_id)).toEqual(['F1', 'F2'])
    expect(postCompactionRecovery(m, '5.0')).toBeNull()
    expect(JSON.stringify(m)).toBe(before)
  })
})
