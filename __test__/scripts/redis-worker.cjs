// One gateway worker sharing a Redis with others, for redis.spec.ts. Prints one JSON line.
//
//   node redis-worker.cjs hammer <url> <prefix> <startMs> <simulatedMs> <speed> <id>
//       builds context for a new thread as fast as it can (each needs one
//       conversations.replies call) on a clock that runs <speed> times real time from
//       <startMs>, with a limit of 40 calls/min that every worker shares; prints the
//       (simulated) time of every call it was allowed to make
//   node redis-worker.cjs compact <url> <prefix> <file> <id> <rounds>
//       each round: one new message, then, under the lane's lock (40 ms), plan and apply
//       a compaction with the lock's fencing token; every tenth round stalls past the
//       lock's expiry before applying, as a worker in a long GC pause would
'use strict'
const { ChannelStore, MemoryStore, RedisCoordinator } = require('@openclaw/context-engine')

const [mode, url, keyPrefix, ...rest] = process.argv.slice(2)
const say = (o) => process.stdout.write(`${JSON.stringify(o)}\n`)
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
const T0 = 1775835600

async function hammer() {
  const [startMs, simulatedMs, speed, id] = rest.map(Number)
  const start = T0 * 1000
  // The time of the last clock reading: the store reads it when it asks Redis for a
  // slot, and not again before the fetcher is called, so it is the call's admission time.
  let last = 0
  const clock = () => (last = start + (Date.now() - startMs) * speed)
  const calls = []
  const ts = (s) => `${T0 + s}.${String(id).padStart(6, '0')}`
  const store = new ChannelStore({
    clock,
    redis: { url, keyPrefix },
    rateLimit: { maxCallsPerMin: 40, overflowStrategy: 'degrade' },
    fetcher: {
      async fetchThread(req) {
        calls.push(last)
        const root = { type: 'message', ts: req.threadId, user: 'U1', text: 'root', reply_count: 1 }
        const reply = { type: 'message', ts: ts(Number(req.threadId.split('.')[0]) - T0 + 1), thread_ts: req.threadId, user: 'U2', text: 'a reply' }
        return { ok: true, messages: [root, reply], has_more: false }
      },
    },
  })
  let builds = 0
  let failedTurns = 0
  let refused = 0
  for (let k = 0; clock() - start < simulatedMs; k++) {
    const thread = ts(k * 10)
    const reply = ts(k * 10 + 1)
    store.ingest({ type: 'message', channelId: 'C1', message: { ts: reply, text: `question ${k}`, threadId: thread, author: { userId: 'U2', displayName: 'Priya' } } })
    try {
      const ctx = await store.buildContext('C1', reply, { threadId: thread })
      builds++
      if (ctx.notes.some((n) => n.includes('rate limited'))) refused++
    } catch {
      failedTurns++
    }
  }
  say({ id, calls, builds, refused, failedTurns, redis: store.stats().redis })
}

async function compact() {
  const [file, id, roundsArg] = rest
  const rounds = Number(roundsArg)
  const memory = new MemoryStore({ path: file })
  const coord = new RedisCoordinator({ url, keyPrefix })
  const versions = []
  const out = { id, versions, fenced: 0, stale: 0, busy: 0, stalls: 0 }
  for (let r = 0; r < rounds; r++) {
    memory.ingest([{ sessionId: 's1', chatId: 'c', messageId: `${id}-${r}`, role: 'user', text: `worker ${id} round ${r}: keep step ${r} small`, ts: r }])
    const lock = await coord.lock('compact:s1:root:c', 40)
    if (!lock) {
      out.busy++
      continue
    }
    try {
      const plan = memory.planCompaction('s1', 'root:c', { force: true })
      if (!plan) continue
      if (r % 10 === 0) {
        out.stalls++
        await sleep(60)
      }
      try {
        const done = memory.applyCompaction(plan, { fence: lock.fence })
        versions.push(done.summaryVersion)
      } catch (err) {
        if (err.code === 'ERR_MEMORY_FENCED') out.fenced++
        else if (err.code === 'ERR_MEMORY_STALE') out.stale++
        else throw err
      }
    } finally {
      await coord.release(lock)
    }
  }
  memory.close()
  say(out)
}

;(mode === 'hammer' ? hammer() : mode === 'compact' ? compact() : Promise.reject(new Error(`unknown mode ${mode}`))).catch((err) => {
  process.stderr.write(`${err && err.stack ? err.stack : err}\n`)
  process.exit(1)
})
