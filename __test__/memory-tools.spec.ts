import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { MemoryStore, memoryToolDefinitions } from '@openclaw/context-engine'
import plugin, { TOOL_NAMES, createContextEngine, type AgentTool, type HostMessage } from '@openclaw/context-engine/openclaw'

const dir = mkdtempSync(join(tmpdir(), 'memory-tools-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
const pkg = join(__dirname, '..')

const DAY = 86_400_000
/** 2026-04-10 00:00 UTC. */
const T0 = 1_775_779_200_000
const S = 'telegram:chat:42'

function chat(): MemoryStore {
  const m = new MemoryStore()
  const rows: Array<[string, string | null, string, number]> = [
    ['a1', null, 'We booked the Lisbon venue for the May offsite.', 0],
    ['a2', null, 'Great, the Lisbon venue has a terrace.', 0],
    ['a3', null, 'What about catering?', 1],
    ['a4', null, "Catering is the hotel's own kitchen.", 1],
    ['b1', '7', 'The Lisbon flights land at 09:40 on Monday.', 10],
    ['b2', '7', 'I will book the airport shuttle.', 10],
  ]
  m.ingest(
    rows.map(([messageId, topicId, text, day], i) => ({
      sessionId: S,
      chatId: '42',
      messageId,
      role: i % 2 === 0 ? 'user' : 'assistant',
      text,
      ts: T0 + day * DAY + DAY / 2 + i * 60_000,
      topicId,
    })),
  )
  return m
}

const parse = (text: string) => JSON.parse(text)
const ids = (list: Array<{ id: string }> | undefined) => (list ?? []).map((r) => r.id)

describe('the memory tools', () => {
  it('are two Messages API tools, the same with or without a store', () => {
    const m = chat()
    const defs = m.tools({ sessionId: S }).definitions()
    expect(defs.map((d) => d.name)).toEqual(['conversation_search', 'conversation_expand'])
    expect(memoryToolDefinitions()).toEqual(defs)
    for (const d of defs) {
      expect(d.name).toMatch(/^[a-zA-Z0-9_-]{1,64}$/)
      expect(d.input_schema).toMatchObject({ type: 'object', additionalProperties: false })
    }
    // Never OpenClaw's own names.
    expect(defs.map((d) => d.name)).not.toContain('memory_search')
    expect(defs.map((d) => d.name)).not.toContain('sessions_search')
    m.close()
  })

  it('search the whole chat by words, with ids, lanes and dates, and expand a hit to its turns', () => {
    const m = chat()
    const tools = m.tools({ sessionId: S, threadKey: 'root:42', now: T0 + 30 * DAY })
    expect(tools.sessionId).toBe(S)
    const found = parse(tools.execute('conversation_search', { query: 'Lisbon venue' }))
    expect(ids(found.results)).toEqual(['a2', 'a1', 'b1'])
    expect(found.results[1]).toEqual({
      id: 'a1',
      lane: 'root:42',
      role: 'user',
      date: '2026-04-10 12:00 UTC',
      ago: '29 days ago',
      text: 'We booked the Lisbon venue for the May offsite.',
    })
    // The input as JSON text, as some runners hand it over.
    const current = parse(tools.execute('conversation_search', JSON.stringify({ query: 'Lisbon', lane: 'current' })))
    expect(ids(current.results)).toEqual(['a2', 'a1'])
    const window = parse(tools.execute('conversation_search', { query: 'Lisbon', since: '2026-04-15' }))
    expect(ids(window.results)).toEqual(['b1'])
    const around = parse(tools.execute('conversation_expand', { id: 'a3', before: 1, after: 1 }))
    expect(ids(around.messages)).toEqual(['a2', 'a3', 'a4'])
    expect(around).toMatchObject({ lane: 'root:42', more_before: 'a1' })
    m.close()
  })

  it('answer a bad call or a closed store with an error the model reads, never a throw', () => {
    const m = chat()
    const tools = m.tools({ sessionId: S })
    expect(parse(tools.execute('memory_search', { query: 'x' })).error.code).toBe('unknown_tool')
    expect(parse(tools.execute('conversation_search', {})).error).toMatchObject({ code: 'invalid_input', field: 'query' })
    expect(parse(tools.execute('conversation_search', '{not json')).error.code).toBe('invalid_input')
    expect(parse(tools.execute('conversation_expand', { id: 'zz' })).error).toMatchObject({ field: 'id' })
    m.close()
    expect(parse(tools.execute('conversation_search', { query: 'Lisbon' })).error).toMatchObject({ code: 'internal' })
    expect(() => m.tools({ sessionId: '' })).toThrow(RangeError)
    expect(() => m.tools({ sessionId: S, chat: 'x' } as never)).toThrow(TypeError)
  })

  it('reach nothing of another chat', () => {
    const m = chat()
    const other = m.tools({ sessionId: 'telegram:chat:99' })
    expect(parse(other.execute('conversation_search', { query: 'Lisbon venue' })).results).toEqual([])
    expect(parse(other.execute('conversation_expand', { id: 'a1' })).error.field).toBe('id')
    m.close()
  })
})

describe('the plugin registers the memory tools', () => {
  const SESSION_KEY = 'agent:main:slack:channel:c0123:thread:1775835600.000100'
  const user = (text: string, i: number): HostMessage => ({ role: 'user', content: text, timestamp: T0 + i * 1000 })
  const assistant = (text: string, i: number): HostMessage => ({
    role: 'assistant',
    content: [{ type: 'text', text }],
    timestamp: T0 + i * 1000 + 500,
  })

  function register(config: Record<string, unknown>) {
    const tools: Array<{ factory: (ctx: { agentDir?: string; sessionKey?: string; sessionId?: string }) => AgentTool[]; names: string[] }> = []
    const engines: string[] = []
    plugin.register({
      pluginConfig: config,
      logger: { warn: () => {} },
      registerContextEngine: (id) => engines.push(id),
      registerTool: (factory, opts) => tools.push({ factory, names: opts.names }),
    })
    return { tools, engines }
  }

  it('under the names its manifest declares, over the engine file, scoped to the session', async () => {
    const path = join(dir, 'plugin-tools.sqlite')
    const { tools, engines } = register({ path })
    expect(engines).toEqual(['context-engine'])
    expect(tools).toHaveLength(1)
    const manifest = JSON.parse(readFileSync(join(pkg, 'openclaw.plugin.json'), 'utf8'))
    expect(manifest.contracts.tools).toEqual(tools[0].names)
    expect([...TOOL_NAMES]).toEqual(tools[0].names)
    expect(tools[0].names).toEqual(memoryToolDefinitions().map((d) => d.name))

    // The engine stores a turn; the tools of that session find it, another session's do not.
    const e = createContextEngine({ path })
    const messages = [user('The cutover is on Sunday at 03:00 UTC, rollback at 05:00 UTC.', 0), assistant('Noted: cutover Sunday 03:00 UTC.', 1)]
    await e.afterTurn({ sessionId: 's1', sessionKey: SESSION_KEY, messages, prePromptMessageCount: 0 })
    await e.dispose()
    const mine = tools[0].factory({ agentDir: dir, sessionKey: SESSION_KEY, sessionId: 's1' })
    expect(mine.map((t) => t.name)).toEqual(tools[0].names)
    expect(mine[0]).toMatchObject({ label: 'Conversation Search', parameters: { type: 'object' } })
    const result = await mine[0].execute('call1', { query: 'cutover rollback' })
    expect(result.content[0].type).toBe('text')
    const found = JSON.parse(result.content[0].text)
    expect(found.results.map((r: { text: string }) => r.text)).toContain('The cutover is on Sunday at 03:00 UTC, rollback at 05:00 UTC.')
    const expanded = JSON.parse((await mine[1].execute('call2', { id: found.results[0].id })).content[0].text)
    expect(expanded.messages).toHaveLength(2)
    const theirs = tools[0].factory({ agentDir: dir, sessionKey: 'agent:main:slack:channel:c0999', sessionId: 's2' })
    expect(JSON.parse((await theirs[0].execute('call3', { query: 'cutover rollback' })).content[0].text).results).toEqual([])
  })

  it('tells the model about them in the cached system part, unless turned off', async () => {
    const on = createContextEngine({ path: join(dir, 'guidance.sqlite') })
    const out = await on.assemble({ sessionId: 's', sessionKey: SESSION_KEY, messages: [user('hi there', 0)], tokenBudget: 8_000, prompt: 'hi there' })
    expect(out.systemPromptAddition).toContain('conversation_search')
    expect(out.systemPromptAddition).toContain('conversation_expand')
    await on.dispose()
    const off = createContextEngine({ path: join(dir, 'guidance.sqlite'), recallTools: false })
    const quiet = await off.assemble({ sessionId: 's', sessionKey: SESSION_KEY, messages: [user('hi there', 0)], tokenBudget: 8_000, prompt: 'hi there' })
    expect(quiet.systemPromptAddition ?? '').not.toContain('conversation_search')
    await off.dispose()
    expect(register({ path: join(dir, 'off.sqlite'), recallTools: false }).tools).toEqual([])
  })

  it('answer a store that cannot open with an error the model reads', async () => {
    const e = createContextEngine({ path: join(dir, 'no-such-dir', '\u0000bad') })
    const [search] = e.agentTools({ sessionKey: SESSION_KEY, sessionId: 's' })
    const out = JSON.parse((await search.execute('c', { query: 'anything here' })).content[0].text)
    expect(out.error.code).toBe('internal')
    expect(e.diagnostics.some((d) => d.method === 'tools')).toBe(true)
  })
})
