// store.tools(channelId) as a gateway uses it: definitions for the Messages API,
// execute by API or dotted name, scope (two channels sharing ids), bad calls from the
// model, fetches on a miss through the rate-limited fetcher, media blocks.
import { describe, expect, it } from 'vitest'
import { ChannelStore, type ChannelEvent } from '@openclaw/context-engine'
import { thrown } from './helpers'

const T0 = 1775835600000
const ts = (s: number) => `${T0 / 1000 + s}.000100`
const ev = (channelId: string, s: number, text: string, user = 'Sam', threadId?: string, media?: unknown[]): ChannelEvent =>
  ({ type: 'message', channelId, message: { ts: ts(s), text, author: { userId: `U_${user}`, displayName: user }, ...(threadId ? { threadId } : {}), ...(media ? { media } : {}) } }) as ChannelEvent

function store(fetcher?: Record<string, unknown>) {
  const s = new ChannelStore({ clock: () => T0 + 3_600_000, ...(fetcher ? { fetcher } : {}) } as never)
  s.ingestMany([
    ev('C1', 1, 'Rollout plan for v2.4: canary Tuesday, full Thursday.'),
    ev('C1', 2, 'Lunch anyone?', 'Priya'),
    ev('C1', 3, 'Der Déploiement ist fehlgeschlagen, ich rolle zurück.', 'Jonas'),
    ev('C1', 4, 'auth-gatewayのデプロイが完了しました', 'Aiko'),
    ev('C2', 1, 'Rollout plan of the other channel', 'Omar'),
  ])
  return s
}

const run = async (t: { execute(n: string, i: unknown): Promise<string> }, name: string, input: unknown) => JSON.parse(await t.execute(name, input))

describe('definitions', () => {
  it('names are valid Messages API tool names with JSON Schema inputs', () => {
    const defs = store().tools('C1').definitions()
    expect(defs.map((d) => d.name)).toEqual(['channel_context', 'channel_messages'])
    for (const d of defs) {
      expect(d.name).toMatch(/^[a-zA-Z0-9_-]{1,64}$/)
      expect(d.input_schema).toMatchObject({ type: 'object', additionalProperties: false })
      expect(d.description.length).toBeGreaterThan(40)
    }
    expect(defs[0].input_schema).toMatchObject({ required: ['intent'] })
    expect(store().tools('C1', { toolNames: 'dotted' }).definitions().map((d) => d.name)).toEqual(['channel.context', 'channel.messages'])
  })

  it('rejects bad tools() arguments with clear errors', () => {
    const s = store()
    expect(thrown(() => s.tools(5 as never))).toBeInstanceOf(TypeError)
    expect(thrown(() => s.tools(5 as never)).message).toMatch(/channelId: expected a string, got number/)
    expect(thrown(() => s.tools('')).message).toMatch(/channelId/)
    expect(thrown(() => s.tools('C1', { maxMediaBytes: 1.5 }))).toBeInstanceOf(RangeError)
    expect(thrown(() => s.tools('C1', { toolNames: 'x' } as never)).message).toMatch(/toolNames/)
    expect(thrown(() => s.tools('C1', { maxMediaBytes: -1 })).message).toMatch(/maxMediaBytes/)
    expect(thrown(() => s.tools('C1', { nope: 1 } as never)).message).toMatch(/nope/)
  })
})

describe('channel_context', () => {
  it('ranks by keywords across languages, by either name, with signals and coverage', async () => {
    const t = store().tools('C1')
    const r = await run(t, 'channel_context', { intent: 'what was the rollout plan?' })
    expect(r.results[0].message_id).toBe(ts(1))
    expect(r.results[0].relevance_signal).toMatch(/^keyword:rollout,plan/)
    expect(r.coverage.messages_scanned).toBe(4)
    expect(r.coverage.time_range).toHaveLength(2)
    expect((await run(t, 'channel.context', { intent: 'déploiement' })).results[0].message_id).toBe(ts(3))
    expect((await run(t, 'channel.context', { intent: 'DEPLOIEMENT' })).results[0].message_id).toBe(ts(3))
    expect((await run(t, 'channel_context', { intent: 'デプロイ' })).results[0].message_id).toBe(ts(4))
    // The input may come as the JSON text of a tool_use block.
    expect((await run(t, 'channel_context', '{"intent":"lunch"}')).results[0].message_id).toBe(ts(2))
  })

  it('max_results defaults to 8 and is clamped to 50', async () => {
    const s = new ChannelStore()
    s.ingestMany(Array.from({ length: 80 }, (_, i) => ev('C1', i, `deploy number ${i}`)))
    const t = s.tools('C1')
    expect((await run(t, 'channel_context', { intent: 'deploy' })).results).toHaveLength(8)
    expect((await run(t, 'channel_context', { intent: 'deploy', max_results: 500 })).results).toHaveLength(50)
  })

  it('a bad call resolves to an error the model can correct, never a rejection', async () => {
    const t = store().tools('C1')
    const cases: Array<[string, unknown, string]> = [
      ['channel_context', {}, 'intent'],
      ['channel_context', { intent: 7 }, 'intent'],
      ['channel_context', { intent: 'x', max_results: 0 }, 'max_results'],
      ['channel_context', { intent: 'x', max_results: 'many' }, 'max_results'],
      ['channel_context', { intent: 'x', since: 'last tuesday' }, 'since'],
      ['channel_context', { intent: 'x', channel: 'C2' }, 'channel'],
      ['channel_messages', { thread_id: 12 }, 'thread_id'],
      ['channel_messages', { message_ids: [] }, 'message_ids'],
    ]
    for (const [name, input, field] of cases) {
      const r = await run(t, name, input)
      expect(r.error, JSON.stringify(input)).toMatchObject({ code: 'invalid_input', field, tool: name })
    }
    expect((await run(t, 'channel_messages', {})).error.message).toMatch(/at least one of thread_id, message_ids or media_artifact_id/)
    expect((await run(t, 'search_everything', {})).error.code).toBe('unknown_tool')
    expect((await run(t, 'channel_context', '{not json')).error.code).toBe('invalid_input')
    const cyclic: Record<string, unknown> = { intent: 'x' }
    cyclic.self = cyclic
    expect((await run(t, 'channel_context', cyclic)).error.code).toBe('invalid_input')
    expect((await run(t, 'channel_context', undefined)).error.code).toBe('invalid_input')
  })
})

describe('scope', () => {
  it('ids shared by two channels resolve only in the tools channel', async () => {
    const s = store()
    const c1 = s.tools('C1')
    const c2 = s.tools('C2')
    expect((await run(c2, 'channel_context', { intent: 'rollout plan' })).results.map((r: { author: { display_name: string } }) => r.author.display_name)).toEqual(['Omar'])
    const m1 = await run(c1, 'channel_messages', { message_ids: [ts(1), ts(2)] })
    const m2 = await run(c2, 'channel_messages', { message_ids: [ts(1), ts(2)] })
    expect(m1.messages.map((m: { text: string }) => m.text)).toEqual(['Rollout plan for v2.4: canary Tuesday, full Thursday.', 'Lunch anyone?'])
    expect(m2.messages.map((m: { text: string }) => m.text)).toEqual(['Rollout plan of the other channel'])
    expect(m2.not_found).toEqual([ts(2)])
  })
})

describe('channel_messages', () => {
  it('a cached thread costs no call; an unheld one costs one conversations.replies', async () => {
    const calls: string[] = []
    const s = store({
      async fetchThread(req: { threadId: string }) {
        calls.push(`replies:${req.threadId}`)
        return { messages: [{ ts: req.threadId, text: 'old root', user: 'U1', reply_count: 2 }, { ts: ts(-50), thread_ts: req.threadId, text: 'first', user: 'U2' }, { ts: ts(-40), thread_ts: req.threadId, text: 'second', user: 'U3' }], has_more: false }
      },
    })
    s.ingestMany([ev('C1', 10, 'root'), ev('C1', 11, 'r1', 'Priya', ts(10)), ev('C1', 12, 'r2', 'Jonas', ts(10))])
    const t = s.tools('C1')
    const cached = await run(t, 'channel_messages', { thread_id: ts(10), max_replies: 1 })
    expect(cached.thread.replies.map((r: { text: string }) => r.text)).toEqual(['r2'])
    expect(cached.thread.truncation).toMatchObject({ total_replies: 2, included_replies: 1 })
    expect(calls).toEqual([])
    const old = await run(t, 'channel_messages', { thread_id: ts(-60) })
    expect(old.thread.replies.map((r: { text: string }) => r.text)).toEqual(['first', 'second'])
    expect(calls).toEqual([`replies:${ts(-60)}`])
    await run(t, 'channel_messages', { thread_id: ts(-60) })
    expect(calls).toHaveLength(1)
    expect(s.stats().calls['conversations.replies']).toBe(1)
  })

  it('a failed fetch becomes a note, not an error', async () => {
    const s = store({ async fetchThread() { throw Object.assign(new Error('ratelimited'), { retryAfter: 30 }) } })
    const r = await run(s.tools('C1'), 'channel_messages', { thread_id: ts(-60), message_ids: [ts(1)] })
    expect(r.not_found).toEqual([ts(-60)])
    expect(r.notes[0]).toMatch(/Could not fetch thread .*ratelimited/)
    expect(r.messages[0].message_id).toBe(ts(1))
  })

  it('a file without fetchMedia is a note even when the same call fetches a thread', async () => {
    const s = store({ async fetchThread() { return { ok: true, messages: [{ type: 'message', ts: ts(30), thread_ts: ts(30), user: 'U1', text: 'root', reply_count: 1 }, { type: 'message', ts: ts(31), thread_ts: ts(30), user: 'U2', text: 'reply' }] } } })
    // The root says it has a reply the store does not hold: the call fetches the thread.
    s.ingestSlackResponse('C1', { ok: true, messages: [{ type: 'message', ts: ts(30), thread_ts: ts(30), user: 'U1', text: 'root', reply_count: 1, files: [{ id: 'F9', name: 'a.png', mimetype: 'image/png', size: 4 }] }] })
    const r = await run(s.tools('C1'), 'channel_messages', { thread_id: ts(30), media_artifact_id: 'F9' })
    expect(r.thread.replies.map((m: { text: string }) => m.text)).toEqual(['reply'])
    expect(r.notes).toContain('Could not download file F9 (no fetchMedia in the fetcher).')
    expect(r.media.content.text).toMatch(/could not be retrieved/)
  })

  it('media comes back as an Anthropic content block, only for this channel, with a size guard', async () => {
    let downloads = 0
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47])
    const s = store({ async fetchMedia() { downloads++; return png } })
    s.ingestMany([
      ev('C1', 20, 'screenshot', 'Sam', undefined, [
        { artifactId: 'F1', mediaType: 'image/png', filename: 'a.png', byteLength: 4 },
        { artifactId: 'F2', mediaType: 'application/pdf', filename: 'big.pdf', byteLength: 50_000_000 },
      ]),
    ])
    const t = s.tools('C1', { maxMediaBytes: 1_000_000 })
    const r = await run(t, 'channel_messages', { media_artifact_id: 'F1' })
    expect(r.media.content).toEqual({ type: 'image', source: { type: 'base64', media_type: 'image/png', data: png.toString('base64') } })
    await run(t, 'channel_messages', { media_artifact_id: 'F1' })
    expect(downloads).toBe(1)
    const big = await run(t, 'channel_messages', { media_artifact_id: 'F2' })
    expect(big.media.inline).toBe(false)
    expect(big.media.content.type).toBe('text')
    expect(big.media.content.text).toMatch(/larger than the 976 KB limit/)
    expect(downloads).toBe(1)
    expect((await run(s.tools('C2'), 'channel_messages', { media_artifact_id: 'F1' })).not_found).toEqual(['F1'])
  })
})

describe('tool names in the prompt and in the definitions', () => {
  it('buildContext tells the model the names that store.tools(...).definitions() gives it, by default', async () => {
    const s = new ChannelStore({ clock: () => 1775835600000 })
    s.ingest({ type: 'message', channelId: 'C1', message: { ts: '1775835500.000100', text: 'hi', author: { userId: 'U1', displayName: 'Sam' } } })
    const ctx = await s.buildContext('C1', '1775835500.000100')
    const names = s.tools('C1').definitions().map((d) => d.name)
    expect(names).toEqual(['channel_context', 'channel_messages'])
    for (const n of names) expect(ctx.promptSection).toContain(n)
    expect(ctx.promptSection).not.toContain('channel.context')
    const dotted = await s.buildContext('C1', '1775835500.000100', { toolNames: 'dotted' })
    const dottedNames = s.tools('C1', { toolNames: 'dotted' }).definitions().map((d) => d.name)
    for (const n of dottedNames) expect(dotted.promptSection).toContain(n)
  })
})
