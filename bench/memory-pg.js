#!/usr/bin/env node
// The memory on PostgreSQL beside the memory on SQLite, in one run on the same data
// (bench/scale-data.js: 120-character messages, Zipf's law over 20,000 words, batches of
// 1,000 holding 20 consecutive messages of each of 50 random sessions, as a gateway
// flushing its conversations' turns):
//   - ingest: messages per second, batches of 1,000 (target on PostgreSQL: >= 10,000/s);
//   - assemble: p50 and p99 for random lanes of the full store, at an 8,000-token budget,
//     as the caller waits for it (on PostgreSQL, through the store's worker thread; target:
//     p50 at most 3x SQLite's at 100,000 messages);
//   - size on disk: the SQLite file, and PostgreSQL's tables with their indexes.
// PostgreSQL is the distribution's server, started here (bench/pg-server.js) on loopback
// with fsync off, as the SQLite file is written with synchronous=NORMAL; both on the
// same disk. A report, not a test.
//
//   node bench/memory-pg.js [--quick] [--messages N] [--json]
'use strict'
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { MemoryStore } = require(path.join(__dirname, '..'))
const { PgServer, pgInstalled } = require('./pg-server')
const { VOCABULARIES, batches } = require('./scale-data')

const arg = (name, fallback) => {
  const at = process.argv.indexOf(name)
  return at < 0 ? fallback : Number(process.argv[at + 1])
}
const QUICK = process.argv.includes('--quick')
const MESSAGES = arg('--messages', QUICK ? 20_000 : 100_000)
const SESSIONS = Math.max(1, Math.round(MESSAGES / 1_000))
const BATCH = 1_000
const ASSEMBLES = QUICK ? 100 : 500

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]
}

/** Ingests the data into `store` (awaiting each batch), then times `assemble`. */
async function run(store) {
  const vocabulary = VOCABULARIES.zipf
  let ingestMs = 0
  for (const batch of batches({ messages: MESSAGES, sessions: SESSIONS, batch: BATCH }, 'turns', vocabulary)) {
    const t0 = performance.now()
    await store.ingest(batch)
    ingestMs += performance.now() - t0
  }
  const rand = require('./rng').xorshift(0x9e3779b9)
  const times = []
  const contexts = []
  for (let i = 0; i < ASSEMBLES; i++) {
    const s = Math.floor(rand() * SESSIONS)
    const lane = Math.floor(rand() * 4)
    const t0 = performance.now()
    const out = await store.assemble({
      sessionId: `telegram:chat:${s}`,
      threadKey: lane === 0 ? `root:${s}` : `topic:${s}:${lane}`,
      policy: 'You are the team assistant.',
      userMessage: vocabulary.question(rand, i),
      budgetTokens: 8_000,
      now: 1_775_835_600_000 + MESSAGES,
    })
    times.push(performance.now() - t0)
    contexts.push(out.text)
  }
  times.sort((a, b) => a - b)
  return {
    ingestPerSecond: Math.round(MESSAGES / (ingestMs / 1000)),
    assembleP50Ms: percentile(times, 50),
    assembleP99Ms: percentile(times, 99),
    contexts,
  }
}

async function main() {
  if (!pgInstalled) {
    console.log('bench/memory-pg.js: PostgreSQL is not installed here (apt-get install postgresql): nothing to compare')
    return
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'memory-pg-bench-'))
  const server = await PgServer.start()
  try {
    const file = path.join(dir, 'memory.sqlite')
    const lite = new MemoryStore({ path: file })
    const sqlite = await run(lite)
    lite.close()
    sqlite.bytes = fs.statSync(file).size + (fs.existsSync(`${file}-wal`) ? fs.statSync(`${file}-wal`).size : 0)
    const shared = await MemoryStore.connect({ url: server.url() })
    const pg = await run(shared)
    await shared.close()
    pg.bytes = Number(server.sql("SELECT sum(pg_total_relation_size(c.oid)) FROM pg_class c WHERE c.relkind = 'r' AND c.relname LIKE 'memory_%'"))
    const tables = server
      .sql("SELECT c.relname, pg_table_size(c.oid), pg_indexes_size(c.oid) FROM pg_class c WHERE c.relkind = 'r' AND c.relname LIKE 'memory_%' ORDER BY 2 DESC")
      .trim()
      .split('\n')
      .map((line) => line.split('|'))
      .map(([name, table, indexes]) => ({ name, tableBytes: Number(table), indexBytes: Number(indexes) }))
    const same = sqlite.contexts.every((c, i) => c === pg.contexts[i])
    const report = {
      messages: MESSAGES,
      sessions: SESSIONS,
      assembles: ASSEMBLES,
      sqlite: { ...sqlite, contexts: undefined },
      postgresql: { ...pg, contexts: undefined, tables },
      sameContexts: same,
    }
    if (process.argv.includes('--json')) {
      console.log(JSON.stringify(report, null, 2))
      return
    }
    const mib = (b) => `${(b / 1048576).toFixed(1)} MiB`
    console.log(`memory on PostgreSQL beside SQLite: ${MESSAGES.toLocaleString('en-US')} messages in ${SESSIONS.toLocaleString('en-US')} sessions, batches of ${BATCH.toLocaleString('en-US')}, ${ASSEMBLES} assemblies at 8,000 tokens`)
    console.log('  store       ingest msgs/s   assemble p50   p99        size')
    for (const [name, r] of [['SQLite', sqlite], ['PostgreSQL', pg]]) {
      console.log(`  ${name.padEnd(10)}  ${r.ingestPerSecond.toLocaleString('en-US').padStart(13)}   ${r.assembleP50Ms.toFixed(2).padStart(9)} ms   ${r.assembleP99Ms.toFixed(2).padStart(6)} ms   ${mib(r.bytes)}`)
    }
    console.log(`  PostgreSQL / SQLite: assemble p50 ${(pg.assembleP50Ms / sqlite.assembleP50Ms).toFixed(2)}x (target <= 3x), ingest ${pg.ingestPerSecond >= 10_000 ? 'met' : 'MISSED'} (target >= 10,000/s)`)
    console.log(`  the same ${ASSEMBLES} contexts on both: ${same ? 'yes' : 'NO'}`)
    console.log(`  PostgreSQL tables: ${tables.map((t) => `${t.name} ${mib(t.tableBytes)} + indexes ${mib(t.indexBytes)}`).join('; ')}`)
  } finally {
    server.stop()
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
