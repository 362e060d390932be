// One behaviour on both stores: the same calls, made on a SQLite store and on a store on a
// real PostgreSQL (started here), give the same answers: stored messages and lanes,
// contexts at every budget, searches, compactions and their summaries and records,
// conversations, vectors and the tools. Then the guarantees only a shared database has:
// two processes alternating the turns of one session build the contexts one process builds,
// and a compaction asked by both at once is written once.
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MemoryStore, memoryToolDefinitions, type SharedMemoryStore } from '@openclaw/context-engine'
import { pgInstalled, serverForSuite } from './pg-server'

const S = 'conf-session'
const T0 = 1_775_835_600_000
const MIN = 60_000

/** A seeded generator (mulberry32): the same data on every run. */
function random(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296
  }
}

const WORDS = (
  'deploy key rotates friday build queue staging cluster latency budget invoice vendor ' +
  'offsite lisbon venue catering designer hiring roadmap launch beta customers churn ' +
  'pricing tier discount contract renewal incident postmortem pager alert dashboard ' +
  'migration schema index vacuum backup restore replica failover region cost'
).split(' ')
const CJK = ['部署密钥每周五轮换', '预算会议改到下周三', '东京办公室的网络很慢', '新的设计师下个月入职']

/** A chat of a user and an assistant in three lanes, long turns among short ones. */
function conversation(n: number, seed = 7) {
  const r = random(seed)
  const pick = () => WORDS[Math.floor(r() * WORDS.length)]
  const out: any[] = []
  for (let i = 0; i < n; i++) {
    const user = i % 2 === 0
    const length = r() < 0.2 ? 60 + Math.floor(r() * 120) : 4 + Math.floor(r() * 14)
    let text = Array.from({ length }, pick).join(' ')
    if (i === 11) text = 'my favourite colour is blue and I live in Porto'
    if (i === 57) text = 'my favourite colour is green now'
    if (i % 17 === 5) text += ` ${CJK[i % CJK.length]}`
    if (user && r() < 0.3) text += '?'
    const m: any = { sessionId: S, chatId: '42', messageId: `m${i}`, role: user ? 'user' : 'assistant', text, ts: T0 + i * MIN }
    if (i % 9 === 4) m.topicId = '7'
    if (i % 13 === 6 && i > 6) m.replyTo = `m${i - 6}`
    out.push(m)
  }
  return out
}

const QUESTIONS = [
  'when does the deploy key rotate?',
  'what did we decide about the offsite venue in lisbon?',
  'what is my favourite colour?',
  'how is the migration schema index going',
  '部署密钥什么时候轮换',
  'tell me about the incident postmortem and the pager alert',
]

type Store = MemoryStore | SharedMemoryStore

/** Every call the script makes, with its answer (or its error's code). */
async function script(m: Store): Promise<unknown[]> {
  const log: unknown[] = []
  const call = async (what: string, f: () => unknown) => {
    try {
      log.push([what, await f()])
    } catch (err: any) {
      log.push([what, 'threw', err.code ?? err.message])
    }
  }
  const chat = conversation(160)
  // In batches, one message alone, and one repeated.
  await call('ingest 0-79', () => m.ingest(chat.slice(0, 80)))
  await call('ingest 80', () => m.ingest([chat[80]]))
  await call('ingest again', () => m.ingest(chat.slice(78, 82)))
  await call('reused id, another lane', () => m.ingest([{ ...chat[3], topicId: '99', text: 'another message under a reused id' }]))
  await call('commit turn', () => m.commitTurn('turn-1', chat.slice(81, 120)))
  await call('commit turn again', () => m.commitTurnReport('turn-1', chat.slice(81, 120)))
  await call('ingest rest', () => m.ingest(chat.slice(120)))
  const lanes = ['root:42', 'topic:42:7']
  for (const lane of lanes) {
    await call(`recent ${lane}`, () => m.recent(S, lane, 12))
    await call(`unsummarized ${lane}`, () => m.unsummarized(S, lane))
  }
  await call('focus', () => m.focusAnchor({ ...chat[40], messageId: 'new', text: 'ok' }))
  await call('fact', () => m.putRecord({ sessionId: S, kind: 'fact', body: 'The deploy key rotates every Friday at noon.', updatedAt: T0 }))
  await call('preference', () => m.putRecord({ sessionId: S, kind: 'preference', body: 'Prefers short answers.', threadKey: 'root:42', updatedAt: T0 }))
  await call('state', () => m.putRecord({ sessionId: S, kind: 'thread_state', threadKey: 'root:42', body: 'Waiting for the venue quote.', updatedAt: T0 }))
  await call('record', () => m.record(S, 'thread_state', 'root:42'))
  // Contexts before any compaction, at small and large budgets.
  const ask = (q: string, budgetTokens: number, extra: object = {}) => ({ sessionId: S, threadKey: 'root:42', userMessage: q, budgetTokens, now: T0 + 200 * MIN, ...extra })
  for (const q of QUESTIONS) for (const b of [300, 1_500, 6_000]) await call(`assemble ${b} ${q}`, () => m.assemble(ask(q, b)))
  // Compactions: planned then applied, a stale plan, the extractive one, with a fence.
  const plan: any = await m.planCompaction(S, 'root:42', { force: true, now: T0 + 201 * MIN })
  log.push(['plan', plan])
  await call('apply', () => m.applyCompaction(plan, { now: T0 + 202 * MIN }))
  await call('apply stale', () => m.applyCompaction(plan, { now: T0 + 203 * MIN }))
  await call('compact topic', () => m.compact(S, 'topic:42:7', { force: true, now: T0 + 204 * MIN }))
  await call('compact again', () => m.compact(S, 'root:42', { force: true, now: T0 + 205 * MIN }))
  await call('summary', () => m.record(S, 'thread_summary', 'root:42'))
  for (const q of QUESTIONS) {
    await call(`search ${q}`, () => m.search(S, q, { threadKey: 'root:42', k: 8 }))
    for (const b of [300, 1_500, 6_000]) await call(`assemble after ${b} ${q}`, () => m.assemble(ask(q, b)))
    await call(`assemble topic ${q}`, () => m.assemble({ ...ask(q, 2_000), threadKey: 'topic:42:7' }))
  }
  // A host's own messages, and what is said about the window.
  const hostMessages = chat.slice(150).map((c) => ({ id: c.messageId, user: c.role === 'user', tokens: 40 }))
  await call('assemble host', () => m.assemble({ ...ask('what about the venue?', 1_200), hostMessages }))
  // Conversations and the history they make.
  await call('conversation', () => m.putConversation({ chatId: '42', sessionId: 'earlier', summary: 'Booked the offsite in Lisbon.', startedAt: T0 - 90 * MIN, endedAt: T0 - 60 * MIN }))
  await call('conversation 2', () => m.putConversation({ chatId: '42', sessionId: 'older', turns: [{ role: 'user', text: 'plan the rollout', ts: T0 - 3 * 60 * MIN }] }))
  await call('history', () => m.buildConversationContext({ chatId: '42', now: T0 }))
  await call('status', () => m.threadStatus({ chatId: '42', now: T0 }))
  // Vectors: what to embed, given, and a context that uses them.
  const pending: any = await m.messagesToEmbed(S, 500)
  log.push(['to embed', pending.length])
  const r = random(3)
  const vectors = pending.map((p: any) => ({ messageId: p.messageId, vector: Array.from({ length: 8 }, () => r() - 0.5) }))
  await call('set vectors', () => m.setVectors(S, vectors))
  await call('to embed after', () => m.messagesToEmbed(S, 10))
  await call('assemble vector', () => m.assemble({ ...ask('the budget?', 1_500), queryVector: [0.3, -0.1, 0.2, 0.4, -0.3, 0.1, 0, 0.2] }))
  // The tools, on every tool.
  const tools = await m.tools({ sessionId: S, threadKey: 'root:42', now: T0 + 300 * MIN })
  for (const d of memoryToolDefinitions()) log.push([`definition ${d.name}`, d])
  await call('tool search', () => tools.execute('conversation_search', { query: 'deploy key friday' }))
  await call('tool search all', () => tools.execute('conversation_search', { query: 'venue', lane: 'all', max_results: 5 }))
  await call('tool expand', () => tools.execute('conversation_expand', { id: 'm40', before: 2, after: 2 }))
  await call('tool bad', () => tools.execute('conversation_expand', { id: 17 }))
  return log
}

const server = serverForSuite(beforeAll, afterAll)
const freshDatabase = () => server().database()

describe.skipIf(!pgInstalled)('the memory on PostgreSQL', () => {
  it('gives what the SQLite store gives, call for call', { timeout: 120_000 }, async () => {
    const lite = await script(new MemoryStore())
    const pg = await MemoryStore.connect({ url: freshDatabase() })
    expect(pg.shared).toBe(true)
    const shared = await script(pg)
    await pg.close()
    expect(shared.length).toBe(lite.length)
    for (let i = 0; i < lite.length; i++) expect(shared[i], String((lite[i] as unknown[])[0])).toEqual(lite[i])
    // The script reached what it means to compare: contexts with retrieved turns,
    // compactions that wrote, and a stale plan refused.
    const by = (what: string) => (lite.find((e) => (e as unknown[])[0] === what) as unknown[])[1] as any
    expect(by('apply').summaryVersion).toBe(1)
    expect(lite.find((e) => (e as unknown[])[0] === 'apply stale')).toEqual(['apply stale', 'threw', 'ERR_MEMORY_STALE'])
    expect(by('assemble after 6000 when does the deploy key rotate?').text).toContain('deploy key')
  })

  it('is the same store, SQLite, through connect({ path })', { timeout: 60_000 }, async () => {
    const lite = await script(new MemoryStore())
    const viaWorker = await MemoryStore.connect({ path: ':memory:' })
    expect(viaWorker.shared).toBe(false)
    expect(await script(viaWorker)).toEqual(lite)
    await viaWorker.close()
  })

  it('refuses what it cannot connect to, by cause, within its timeout', { timeout: 60_000 }, async () => {
    const url = server().url()
    const cases: [string, string][] = [
      [url.replace(':context-engine-test@', ':wrong@'), 'PG_AUTH'],
      [url.replace(/\/postgres$/, '/no_such_database'), 'PG_NO_DATABASE'],
      ['postgres://postgres:x@127.0.0.1:1/postgres', 'PG_UNREACHABLE'],
      ['not a url://', 'PG_BAD_URL'],
      [`${url}?sslmode=require`, 'PG_TLS'],
    ]
    for (const [bad, code] of cases) {
      const err: any = await MemoryStore.connect({ url: bad }).then(
        () => null,
        (e) => e,
      )
      expect(err?.code, bad).toBe(code)
      expect(err.message).not.toContain('context-engine-test')
    }
    // A server that accepts the connection and never answers: the connect timeout.
    const { createServer } = await import('node:net')
    const silent = createServer(() => {})
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r))
    const port = (silent.address() as { port: number }).port
    const started = Date.now()
    const err: any = await MemoryStore.connect({ url: `postgres://u:p@127.0.0.1:${port}/db`, connectTimeoutMs: 500 }).catch((e) => e)
    silent.close()
    expect(err.code).toBe('PG_TIMEOUT')
    expect(Date.now() - started).toBeLessThan(10_000)
    // The constructor never waits for the network, and the options are checked.
    expect(() => new MemoryStore({ url } as any)).toThrow(/MemoryStore\.connect/)
    await expect(MemoryStore.connect({ url, poolSize: 0 })).rejects.toMatchObject({ code: 'ERR_OUT_OF_RANGE', path: 'options.poolSize' })
    await expect(MemoryStore.connect({ url, path: 'x.sqlite' })).rejects.toMatchObject({ code: 'ERR_INVALID_ARG_TYPE' })
    await expect(MemoryStore.connect({ url: 42 } as any)).rejects.toMatchObject({ code: 'ERR_INVALID_ARG_TYPE', path: 'options.url' })
  })

  it('two processes alternating the turns of one session build the contexts one process builds', { timeout: 180_000 }, async () => {
    const url = freshDatabase()
    const chat = conversation(120, 11)
    const turns: any[][] = []
    for (let i = 0; i < chat.length; i += 2) turns.push(chat.slice(i, i + 2))
    const workers = [0, 1].map(() => alternate(url))
    const contexts: string[] = []
    for (let t = 0; t < turns.length; t++) {
      const w = workers[t % 2]
      const q = QUESTIONS[t % QUESTIONS.length]
      contexts.push(await w.ask({ turn: turns[t], key: `turn-${t}`, question: q, compact: t % 10 === 9, now: T0 + (t * 2 + 1) * MIN }))
    }
    await Promise.all(workers.map((w) => w.end()))
    // One process, one SQLite store, the same turns.
    const one = new MemoryStore()
    const expected: string[] = []
    for (let t = 0; t < turns.length; t++) {
      one.commitTurn(`turn-${t}`, turns[t])
      if (t % 10 === 9) one.compact(S, 'root:42', { force: true, now: T0 + (t * 2 + 1) * MIN })
      expected.push(one.assemble({ sessionId: S, threadKey: 'root:42', userMessage: QUESTIONS[t % QUESTIONS.length], budgetTokens: 1_500, now: T0 + (t * 2 + 1) * MIN }).text)
    }
    expect(contexts).toEqual(expected)
  })

  it('writes a compaction asked by two processes at once once', { timeout: 120_000 }, async () => {
    const url = freshDatabase()
    const seed = await MemoryStore.connect({ url })
    await seed.ingest(conversation(80, 5))
    await seed.close()
    const workers = [0, 1].map(() => alternate(url))
    const results = await Promise.all(workers.map((w) => w.race()))
    await Promise.all(workers.map((w) => w.end()))
    const written = results.filter((r) => r.ok)
    const refused = results.filter((r) => !r.ok)
    expect(written.length).toBe(1)
    expect(refused.map((r) => r.code)).toEqual(['ERR_MEMORY_STALE'])
    const check = await MemoryStore.connect({ url })
    expect(((await check.record(S, 'thread_summary', 'root:42')) as any).summaryVersion).toBe(1)
    await check.close()
  })
})

/** A child process with its own store on `url`, answering one request at a time. */
function alternate(url: string) {
  const proc = spawn(process.execPath, [join(__dirname, 'scripts', 'pg-turns.cjs'), url], { stdio: ['pipe', 'pipe', 'inherit'] })
  let buffer = ''
  const waiting: ((v: any) => void)[] = []
  proc.stdout.on('data', (d: Buffer) => {
    buffer += d.toString()
    let nl
    while ((nl = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, nl)
      buffer = buffer.slice(nl + 1)
      waiting.shift()?.(JSON.parse(line))
    }
  })
  const send = (req: object) =>
    new Promise<any>((resolve) => {
      waiting.push(resolve)
      proc.stdin.write(`${JSON.stringify(req)}\n`)
    })
  return {
    ask: async (req: object) => (await send({ op: 'turn', ...req })).text as string,
    race: () => send({ op: 'race' }),
    end: async () => {
      await send({ op: 'end' })
      proc.stdin.end()
    },
  }
}
