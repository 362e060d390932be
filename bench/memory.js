#!/usr/bin/env node
// Conversation memory (MemoryStore over SQLite) benchmarks:
//   - replay: a scripted 300-message session across 4 thread keys (bench/memory-replay.js);
//     prompt tokens per turn with the engine's layered context against sending the whole
//     history, as the README's table;
//   - scale: 1,000,000 messages across 10,000 sessions (4 lanes each) ingested into one
//     SQLite file in batches of 1,000 (target: at least 50,000 messages/s), then `assemble`
//     for random lanes of the full store (target: p50 at most 2 ms), with p99. Two batch
//     shapes: "turns" (each batch holds 20 consecutive messages of each of 50 random
//     sessions, as a gateway flushing conversations' turns) and "scattered" (every message
//     of a batch in a random session: the worst case, each row landing on another index
//     page).
// A report, not a test: no timing assertions.
//
//   node bench/memory.js [--quick] [--json] [--markdown]
'use strict'
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { MemoryStore } = require(path.join(__dirname, '..'))
const { replay } = require('./memory-replay')

const QUICK = process.argv.includes('--quick')
const JSON_OUT = process.argv.includes('--json')
const MARKDOWN = process.argv.includes('--markdown')
const MESSAGES = QUICK ? 100_000 : 1_000_000
const SESSIONS = QUICK ? 1_000 : 10_000
const BATCH = 1_000
const ASSEMBLES = QUICK ? 500 : 2_000

const rand = require('./rng').xorshift(0x2545f491)
const WORDS = 'deploy rollout canary latency checkout service migration schema index replica review release flag incident budget offsite candidate interview decided prefer failed fixed'.split(' ')
function sentence() {
  let s = ''
  while (s.length < 120) s += `${WORDS[Math.floor(rand() * WORDS.length)]} `
  return `${s.trim()}.`
}

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]
}

function replayTable() {
  const rows = replay()
  const at = [10, 25, 50, 75, 100, 125, 150].map((t) => rows[t - 1])
  const sum = (k) => rows.reduce((n, r) => n + r[k], 0)
  return { rows: at.map(({ turn, lane, engine, whole }) => ({ turn, messages: turn * 2 + 1, lane, engine, whole })), totals: { engine: sum('engine'), whole: sum('whole') } }
}

function scale(shape) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'memory-bench-'))
  const file = path.join(dir, 'memory.sqlite')
  const memory = new MemoryStore({ path: file })
  try {
    // Time the ingest calls only: building the batches is the caller's work.
    let ingestNs = 0n
    let id = 0
    for (let done = 0; done < MESSAGES; done += BATCH) {
      const batch = []
      let s = 0
      for (let i = 0; i < BATCH; i++) {
        if (shape === 'scattered' || i % 20 === 0) s = Math.floor(rand() * SESSIONS)
        const lane = Math.floor(rand() * 4)
        batch.push({
          sessionId: `telegram:chat:${s}`,
          chatId: String(s),
          messageId: String(++id),
          role: i % 2 === 0 ? 'user' : 'assistant',
          text: sentence(),
          ts: 1_775_835_600_000 + id,
          topicId: lane === 0 ? null : String(lane),
        })
      }
      const t0 = process.hrtime.bigint()
      memory.ingest(batch)
      ingestNs += process.hrtime.bigint() - t0
    }
    const ingestSeconds = Number(ingestNs) / 1e9
    // Some summaries and facts to retrieve, as a running store would have.
    for (let s = 0; s < SESSIONS; s += 10) {
      memory.compact(`telegram:chat:${s}`, `topic:${s}:1`, { force: true })
      memory.putRecord({ sessionId: `telegram:chat:${s}`, kind: 'fact', body: `The team prefers ${WORDS[s % WORDS.length]} reviews on Fridays.` })
    }
    const times = []
    for (let i = 0; i < ASSEMBLES; i++) {
      const s = Math.floor(rand() * SESSIONS)
      const lane = Math.floor(rand() * 4)
      const t = process.hrtime.bigint()
      memory.assemble({
        sessionId: `telegram:chat:${s}`,
        threadKey: lane === 0 ? `root:${s}` : `topic:${s}:${lane}`,
        policy: 'You are the team assistant.',
        userMessage: `what did we decide about the ${WORDS[i % WORDS.length]} review?`,
        budgetTokens: 4_000,
      })
      times.push(Number(process.hrtime.bigint() - t) / 1e6)
    }
    times.sort((a, b) => a - b)
    const bytes = fs.statSync(file).size + (fs.existsSync(`${file}-wal`) ? fs.statSync(`${file}-wal`).size : 0)
    return {
      shape,
      messages: MESSAGES,
      sessions: SESSIONS,
      ingestPerSecond: Math.round(MESSAGES / ingestSeconds),
      assembleP50Ms: percentile(times, 50),
      assembleP99Ms: percentile(times, 99),
      fileBytesPerMessage: Math.round(bytes / MESSAGES),
    }
  } finally {
    memory.close()
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

const table = replayTable()
const runs = [scale('turns'), scale('scattered')]
if (JSON_OUT) {
  console.log(JSON.stringify({ replay: table, scale: runs }, null, 2))
} else {
  const lines = ['| turn | messages so far | lane | engine context (tokens) | whole history (tokens) | engine / whole |', '| ---: | ---: | --- | ---: | ---: | ---: |']
  for (const r of table.rows) {
    lines.push(`| ${r.turn} | ${r.messages} | ${r.lane} | ${r.engine.toLocaleString('en-US')} | ${r.whole.toLocaleString('en-US')} | ${((100 * r.engine) / r.whole).toFixed(0)}% |`)
  }
  lines.push(`| all 150 turns | 301 | | ${table.totals.engine.toLocaleString('en-US')} | ${table.totals.whole.toLocaleString('en-US')} | ${((100 * table.totals.engine) / table.totals.whole).toFixed(0)}% |`)
  console.log(MARKDOWN ? lines.join('\n') : `replay (300 messages, 4 thread keys, budget 4,000 tokens):\n${lines.join('\n')}`)
  console.log('')
  for (const big of runs) console.log(
    `scale (${big.shape} batches): ${big.messages.toLocaleString('en-US')} messages across ${big.sessions.toLocaleString('en-US')} sessions: ` +
      `ingest ${big.ingestPerSecond.toLocaleString('en-US')} messages/s (target >= 50,000), ` +
      `assemble p50 ${big.assembleP50Ms.toFixed(3)} ms (target <= 2 ms), p99 ${big.assembleP99Ms.toFixed(3)} ms, ` +
      `${big.fileBytesPerMessage} file bytes per message`,
  )
}
