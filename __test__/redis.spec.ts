// Many workers over one real Redis (started here on a free port): a rate limit that
// four worker processes share, locks whose fencing tokens stop a holder whose lock
// expired, and a Redis that is missing at start or killed mid-run without a failed turn.
import { spawn } from 'node:child_process'
import { createServer } from 'node:net'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ChannelStore, MemoryStore, RedisCoordinator } from '@openclaw/context-engine'
import { RedisServer, redisInstalled } from './redis-server'
import { thrown } from './helpers'

const dir = mkdtempSync(join(tmpdir(), 'redis-spec-'))
const worker = join(__dirname, 'scripts', 'redis-worker.cjs')
const T0 = 1775835600

function run(args: string[]): Promise<any> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, [worker, ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    let err = ''
    proc.stdout.on('data', (d: Buffer) => (out += d.toString()))
    proc.stderr.on('data', (d: Buffer) => (err += d.toString()))
    proc.on('error', reject)
    proc.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out.trim().split('\n').pop()!)) : reject(new Error(`worker ${args[0]} exited ${code}: ${err}`))))
  })
}

/** The most calls in any window [t, t + width) of sorted `times`. */
function rollingMax(times: number[], width: number): number {
  let best = 0
  let lo = 0
  for (let hi = 0; hi < times.length; hi++) {
    while (times[hi] - times[lo] >= width) lo++
    best = Math.max(best, hi - lo + 1)
  }
  return best
}

let redis: RedisServer
beforeAll(async () => {
  if (redisInstalled) redis = await RedisServer.start()
})
afterAll(async () => {
  await redis?.stop()
  rmSync(dir, { recursive: true, force: true })
})

describe.skipIf(!redisInstalled)('workers sharing a Redis', () => {
  it('four worker processes hammering one workspace for 10 simulated minutes never exceed the shared 40 calls/min', async () => {
    const startMs = Date.now() + 300
    const args = (id: number) => ['hammer', redis.url, 'shared-limit', String(startMs), String(10 * 60_000), '60', String(id)]
    const results = await Promise.all([1, 2, 3, 4].map((id) => run(args(id))))
    const times = results.flatMap((r) => r.calls as number[]).sort((a, b) => a - b)
    // Each worker alone would allow itself 40 a minute (160 together).
    expect(rollingMax(times, 60_000)).toBeLessThanOrEqual(40)
    // ...and the limit is used, not just refused: close to 40 a minute over 10 minutes.
    // A rolling window lets 40 through per window, the last one included.
    const windows = Math.floor((times[times.length - 1] - times[0]) / 60_000) + 1
    expect(times.length).toBeLessThanOrEqual(40 * windows)
    expect(times.length).toBeGreaterThanOrEqual(300)
    // Every worker took part; how the slots split between them is not promised (a worker
    // the scheduler starves on a loaded machine can lose every race for a freed slot).
    expect(results.filter((r) => r.calls.length > 0).length).toBeGreaterThanOrEqual(2)
    for (const r of results) {
      expect(r.failedTurns).toBe(0)
      expect(r.builds).toBeGreaterThan(0)
      expect(r.refused).toBeGreaterThan(0)
      expect(r.redis).toMatchObject({ connected: true, degradedSince: null, lastError: null })
    }
  }, 60_000)

  it('two workers racing to compact one thread 1,000 times each: every version written once, none by a holder whose lock expired', async () => {
    const file = join(dir, 'race.sqlite')
    new MemoryStore({ path: file }).close()
    const [a, b] = await Promise.all([run(['compact', redis.url, 'race', file, 'a', '1000']), run(['compact', redis.url, 'race', file, 'b', '1000'])])
    const versions = [...a.versions, ...b.versions].sort((x: number, y: number) => x - y)
    // Exactly one summary per version, none lost: 1, 2, ..., n.
    expect(versions).toEqual(versions.map((_: number, i: number) => i + 1))
    // The file's summary is at the last version written.
    const memory = new MemoryStore({ path: file })
    memory.ingest(Array.from({ length: 11 }, (_, i) => ({ sessionId: 's1', chatId: 'c', messageId: `after-${i}`, role: 'user' as const, text: `after ${i}`, ts: 5_000 + i })))
    expect(memory.planCompaction('s1', 'root:c', { force: true })?.previousVersion).toBe(versions.length)
    memory.close()
    // Most rounds find the lock taken (how many win depends on the scheduler: 91 to
    // ~300 here); what matters is that many were written, each once.
    expect(versions.length).toBeGreaterThan(20)
    // Stalled holders whose lock another worker took and wrote under were refused by
    // their fencing token.
    expect(a.stalls + b.stalls).toBeGreaterThan(0)
    expect(a.fenced + b.fenced).toBeGreaterThan(0)
  }, 120_000)

  it('locks: one holder at a time, extended and released only by the holder, fencing tokens increasing', async () => {
    const coord = new RedisCoordinator({ url: redis.url, keyPrefix: 'locks' })
    const a = await coord.lock('job', 5_000)
    expect(a).not.toBeNull()
    expect(await coord.lock('job', 5_000)).toBeNull()
    expect(await coord.extend(a!, 5_000)).toBe(true)
    expect(await coord.release({ ...a!, token: 'not-the-holder' })).toBe(false)
    expect(await coord.release(a!)).toBe(true)
    expect(await coord.extend(a!, 5_000)).toBe(false)
    const b = await coord.lock('job', 50)
    expect(b!.fence).toBeGreaterThan(a!.fence!)
    await new Promise((r) => setTimeout(r, 80))
    // Expired: the next holder gets it, and the old holder can neither extend nor release.
    const c = await coord.lock('job', 5_000)
    expect(c!.fence).toBeGreaterThan(b!.fence!)
    expect(await coord.extend(b!, 5_000)).toBe(false)
    expect(await coord.release(b!)).toBe(false)
    expect(coord.stats()).toMatchObject({ connected: true, failures: 0 })
    expect(thrown(() => new RedisCoordinator({ url: 'http://localhost' })).message).toMatch(
      /RedisCoordinator: options\.url: expected a redis:\/\/ \(or rediss:\/\/, unix:\/\/\) URL/,
    )
  })

  it('keeps answering with Redis killed mid-run and restarted: 0 failed turns, a note while it is gone, reconnected after', async () => {
    const own = await RedisServer.start()
    let fetched = 0
    const store = new ChannelStore({
      redis: { url: own.url, keyPrefix: 'outage', timeoutMs: 200 },
      // Room for every turn here: the shared limit is not what this test is about.
      rateLimit: { maxCallsPerMin: 10_000 },
      fetcher: {
        async fetchThread(req: any) {
          fetched++
          return { ok: true, messages: [{ type: 'message', ts: req.threadId, user: 'U1', text: 'root', reply_count: 0 }], has_more: false }
        },
      },
    })
    let failed = 0
    let k = 0
    const notes: string[][] = []
    const turn = async () => {
      k++
      const thread = `${T0 + k * 10}.000100`
      const reply = `${T0 + k * 10 + 1}.000100`
      store.ingest({ type: 'message', channelId: 'C1', message: { ts: reply, text: `q${k}`, threadId: thread, author: { userId: 'U2', displayName: 'Priya' } } })
      const started = Date.now()
      try {
        const ctx = await store.buildContext('C1', reply, { threadId: thread })
        notes.push(ctx.notes)
      } catch {
        failed++
      }
      // Never a hang: every Redis call has its timeout.
      expect(Date.now() - started).toBeLessThan(2_000)
    }
    for (let i = 0; i < 20; i++) await turn()
    expect(store.stats().redis).toMatchObject({ connected: true })
    await own.kill()
    const during = notes.length
    for (let i = 0; i < 20; i++) await turn()
    expect(notes.slice(during).every((n) => n.some((x) => x.startsWith('Redis is unreachable (')))).toBe(true)
    expect(store.stats().redis).toMatchObject({ connected: false })
    expect(store.stats().redis!.degradedSince).toBeGreaterThan(0)
    await own.up()
    // The manager reconnects on its own (within a second of the next call).
    const deadline = Date.now() + 10_000
    while (!store.stats().redis!.connected && Date.now() < deadline) {
      await turn()
      await new Promise((r) => setTimeout(r, 100))
    }
    await turn()
    expect(store.stats().redis).toMatchObject({ connected: true, degradedSince: null })
    expect(notes[notes.length - 1].some((x) => x.startsWith('Redis is unreachable'))).toBe(false)
    expect(failed).toBe(0)
    expect(fetched).toBe(k)
    await own.stop()
  }, 60_000)

  it("shares one worker's Retry-After with the others, and a queued wait past queueTimeout is refused", async () => {
    const thread = (n: number) => ({ root: `${T0 + n * 10}.000100`, reply: `${T0 + n * 10 + 1}.000100` })
    const page = (req: any) => ({ ok: true, messages: [{ type: 'message', ts: req.threadId, user: 'U1', text: 'root', reply_count: 0 }], has_more: false })
    const ask = async (store: ChannelStore, n: number) => {
      const t = thread(n)
      store.ingest({ type: 'message', channelId: 'C1', message: { ts: t.reply, text: `q${n}`, threadId: t.root, author: { userId: 'U2', displayName: 'Priya' } } })
      return store.buildContext('C1', t.reply, { threadId: t.root })
    }
    const redisOpts = { url: redis.url, keyPrefix: 'retry-after' }
    let calledB = 0
    const a = new ChannelStore({
      redis: redisOpts,
      fetcher: {
        async fetchThread() {
          throw Object.assign(new Error('An API error occurred: ratelimited'), { code: 'slack_webapi_rate_limited_error', retryAfter: 30 })
        },
      },
    })
    const b = new ChannelStore({
      redis: redisOpts,
      rateLimit: { overflowStrategy: 'degrade' },
      fetcher: {
        async fetchThread(req: any) {
          calledB++
          return page(req)
        },
      },
    })
    const first = await ask(a, 1)
    expect(first.notes.join(' ')).toMatch(/paused for 30s \(Retry-After\)/)
    // The pause reaches Redis in the background; worker B, which was never told, waits.
    await new Promise((r) => setTimeout(r, 100))
    const second = await ask(b, 2)
    expect(calledB).toBe(0)
    expect(second.notes.join(' ')).toMatch(/conversations\.replies is paused by Retry-After for \d+s more \(the limit is shared by every worker\)/)

    // Queue strategy: a shared slot more than queueTimeout away is refused, not waited for.
    const queued = new ChannelStore({
      redis: { url: redis.url, keyPrefix: 'queue-timeout' },
      rateLimit: { perMethod: { 'conversations.replies': 1 }, queueTimeout: 1_000 },
      fetcher: { fetchThread: async (req: any) => page(req) },
    })
    const other = new ChannelStore({
      redis: { url: redis.url, keyPrefix: 'queue-timeout' },
      rateLimit: { perMethod: { 'conversations.replies': 1 }, queueTimeout: 1_000 },
      fetcher: { fetchThread: async (req: any) => page(req) },
    })
    expect((await ask(queued, 3)).apiCalls).toBe(1)
    const started = Date.now()
    const refused = await ask(other, 4)
    expect(Date.now() - started).toBeLessThan(1_000)
    expect(refused.apiCalls).toBe(0)
    expect(refused.notes.join(' ')).toMatch(/the wait of \d+s exceeds the queue timeout \(the limit is shared by every worker\)/)
    expect(other.stats().rateLimited).toBe(1)
  })

  it('connects at construction: stats() says connected with a healthy Redis before any call', async () => {
    const coord = new RedisCoordinator({ url: redis.url, keyPrefix: 'probe' })
    const store = new ChannelStore({ redis: { url: redis.url, keyPrefix: 'probe' } })
    const deadline = Date.now() + 5_000
    while ((coord.stats().state === 'connecting' || store.stats().redis!.state === 'connecting') && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 10))
    }
    expect(coord.stats()).toMatchObject({ connected: true, state: 'connected', calls: 0, failures: 0, degradedSince: null })
    expect(store.stats().redis).toMatchObject({ connected: true, state: 'connected', calls: 0 })
    const down = new RedisCoordinator({ url: 'redis://127.0.0.1:1', timeoutMs: 100 })
    // Refused at once, the attempt may be over already.
    expect(['connecting', 'unreachable']).toContain(down.stats().state)
    while (down.stats().state === 'connecting' && Date.now() < deadline + 2_000) await new Promise((r) => setTimeout(r, 10))
    expect(down.stats()).toMatchObject({ connected: false, state: 'unreachable' })
  })

  it('after losing Redis, reconnects once a second and answers the calls in between locally, with one short lastError', async () => {
    const own = await RedisServer.start()
    const coord = new RedisCoordinator({ url: own.url, keyPrefix: 'loss', timeoutMs: 200 })
    const held = await coord.lock('warm', 10_000)
    expect(held?.fence).toBeGreaterThan(0)
    await own.kill()
    // Something listens on the port again, but never answers: each connection is a
    // reconnection attempt, counted.
    const attempts: number[] = []
    const sockets = new Set<import('node:net').Socket>()
    const mute = createServer((sock) => {
      attempts.push(Date.now())
      sockets.add(sock)
      sock.on('error', () => {})
    })
    await new Promise<void>((r) => mute.listen(own.port, '127.0.0.1', () => r()))
    const started = Date.now()
    const slow: number[] = []
    let calls = 0
    while (Date.now() - started < 3_000) {
      const t = Date.now()
      const lock = await coord.lock(`job-${calls}`, 1_000)
      calls++
      // Redis unreachable: a process-local lock, without a fencing token.
      expect(lock?.fence).toBeNull()
      if (Date.now() - t > 50) slow.push(Date.now() - t)
    }
    for (const s of sockets) s.destroy()
    await new Promise((r) => mute.close(r))
    // Hundreds of calls, at most one attempt (and one slow call) per second.
    expect(calls).toBeGreaterThan(100)
    expect(attempts.length, `attempts at ${attempts.map((t) => t - started)} ms`).toBeLessThanOrEqual(4)
    for (let i = 1; i < attempts.length; i++) expect(attempts[i] - attempts[i - 1]).toBeGreaterThanOrEqual(900)
    expect(slow.length).toBeLessThanOrEqual(5)
    const { lastError, failures } = coord.stats()
    expect(failures).toBeGreaterThanOrEqual(calls)
    expect(lastError!.length).toBeLessThan(200)
    expect(lastError).not.toMatch(/not reconnected yet/)
    expect(lastError).not.toContain('\n')
    // Back again: the next attempt after the pause connects, and fences go on.
    await own.up()
    const deadline = Date.now() + 5_000
    let back = null
    while (Date.now() < deadline && !(back = await coord.lock('after', 1_000))?.fence) await new Promise((r) => setTimeout(r, 100))
    expect(back?.fence).toBeGreaterThan(held!.fence!)
    expect(coord.stats()).toMatchObject({ connected: true, state: 'connected', degradedSince: null })
    await own.stop()
  }, 30_000)

  it('keeps fencing tokens increasing when Redis forgets them, and refuses a write without one over a fenced summary', async () => {
    const file = join(dir, 'forget.sqlite')
    const memory = new MemoryStore({ path: file })
    let n = 0
    const compactUnder = (fence?: number | null) => {
      memory.ingest(Array.from({ length: 12 }, () => ({ sessionId: 's1', chatId: 'c', messageId: `m${n}`, role: 'user' as const, text: `step ${n++} of the plan`, ts: n })))
      const plan = memory.planCompaction('s1', 'root:c', { force: true })!
      return memory.applyCompaction(plan, { fence })
    }
    const first = new RedisCoordinator({ url: redis.url, keyPrefix: 'forget' })
    const a = (await first.lock('compact:s1', 5_000))!
    expect(compactUnder(a.fence).summaryVersion).toBe(1)
    await first.release(a)
    // Redis loses everything (a restart without persistence, a failover, an eviction).
    expect(await redis.command('FLUSHALL')).toBe('+OK')
    // A worker that never saw the old tokens: its token is still past every one written.
    const fresh = new RedisCoordinator({ url: redis.url, keyPrefix: 'forget' })
    const b = (await fresh.lock('compact:s1', 5_000))!
    expect(b.fence).toBeGreaterThan(a.fence!)
    expect(compactUnder(b.fence).summaryVersion).toBe(2)
    await fresh.release(b)
    // And the same worker after a flush.
    expect(await redis.command('FLUSHALL')).toBe('+OK')
    const c = (await fresh.lock('compact:s1', 5_000))!
    expect(c.fence).toBeGreaterThan(b.fence!)
    await fresh.release(c)
    // No token (a process-local lock) over a summary written under one: refused.
    for (const fence of [null, undefined]) {
      expect(thrown(() => compactUnder(fence))).toMatchObject({ code: 'ERR_MEMORY_FENCED', message: expect.stringMatching(/no fencing token was given/) })
    }
    memory.close()
  })

  it('starts without Redis (nothing listening): builds go on the local limiter with a note', async () => {
    const store = new ChannelStore({
      redis: { url: 'redis://127.0.0.1:1', timeoutMs: 100 },
      fetcher: {
        async fetchThread(req: any) {
          return { ok: true, messages: [{ type: 'message', ts: req.threadId, user: 'U1', text: 'root', reply_count: 0 }], has_more: false }
        },
      },
    })
    store.ingest({ type: 'message', channelId: 'C1', message: { ts: `${T0 + 1}.000100`, text: 'q', threadId: `${T0}.000100`, author: { userId: 'U2', displayName: 'Priya' } } })
    const ctx = await store.buildContext('C1', `${T0 + 1}.000100`, { threadId: `${T0}.000100` })
    expect(ctx.apiCalls).toBe(1)
    const note = ctx.notes.find((n) => n.startsWith('Redis'))
    expect(note).toMatch(/^Redis is unreachable \(.+\): rate limits and locks are this worker's own until it reconnects\.$/)
    expect(store.stats().redis).toMatchObject({ url: 'redis://127.0.0.1:1', connected: false })
  })

  it('every build after the first failed Redis call carries the note, one that asked Redis nothing too', async () => {
    const store = new ChannelStore({ redis: { url: 'redis://127.0.0.1:1', timeoutMs: 100 } })
    // Everything the builds show is held: none of them fetches, so none asks the shared
    // limiter. The first failed call is the connection attempt made at construction.
    store.ingest({ type: 'message', channelId: 'C1', message: { ts: `${T0}.000100`, text: 'hello', author: { userId: 'U2', displayName: 'Priya' } } })
    const deadline = Date.now() + 5_000
    while (store.stats().redis!.state !== 'unreachable' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20))
    expect(store.stats().redis!.failures).toBeGreaterThan(0)
    for (let i = 0; i < 3; i++) {
      const ctx = await store.buildContext('C1', `${T0}.000100`, { adjacent: 0 })
      expect(ctx.apiCalls).toBe(0)
      expect(ctx.notes.filter((n) => n.startsWith('Redis is unreachable ('))).toHaveLength(1)
    }
  })
})
