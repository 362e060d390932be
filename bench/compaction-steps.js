#!/usr/bin/env node
// How often a lane of long user-and-assistant turns compacts, and what storing a turn and
// compacting it costs. A generated session of N messages (--turns, default 2,000), user
// turns of 80 words and assistant turns of 300 (word cycles of one sentence, numbered so
// no two are the same: the words do not matter here, the lengths do), each stored with
// `MemoryStore.ingest` and followed by `compact` at the default thresholds, as a gateway
// does after every turn. Reports compactions, messages per compaction, messages folded,
// and the mean ms a turn for ingest plus compaction.
// Targets (issue: memory for user-and-assistant sessions): at most one compaction per 10
// messages; ingest plus compaction <= 1 ms a turn.
//
//   node bench/compaction-steps.js [--turns N] [--json]
'use strict'

const path = require('node:path')
const { MemoryStore } = require(path.join(__dirname, '..'))

const turnsArg = process.argv.indexOf('--turns')
const N = turnsArg > 0 ? Number(process.argv[turnsArg + 1]) : 2_000
const JSON_OUT = process.argv.includes('--json')
const T0 = 1_775_835_600_000
const WORDS = 'the schedule moved because our vendor asked for another review of costs and the team agreed to revisit the plan next week after the numbers land'.split(' ')

function turn(n, words) {
  let s = `Turn ${n}:`
  for (let i = 0; i < words; i++) s += ' ' + WORDS[(i * 7 + n) % WORDS.length]
  return s + '.'
}

const store = new MemoryStore({ path: ':memory:' })
let compactions = 0
let folded = 0
const started = process.hrtime.bigint()
for (let n = 0; n < N; n++) {
  const role = n % 2 === 0 ? 'user' : 'assistant'
  const text = turn(n, role === 'user' ? 80 : 300)
  const [{ threadKey }] = store.ingest([{ sessionId: 's', chatId: 'c', messageId: String(n), role, text, ts: T0 + n * 60_000 }])
  const done = store.compact('s', threadKey, { now: T0 + n * 60_000 })
  if (done) {
    compactions++
    folded += done.folded
  }
}
const msPerTurn = Number(process.hrtime.bigint() - started) / 1e6 / N
const result = {
  messages: N,
  compactions,
  messagesPerCompaction: N / Math.max(1, compactions),
  folded,
  msPerTurn,
  targets: { atMostOnePer10: N / Math.max(1, compactions) >= 10, msPerTurnAtMost1: msPerTurn <= 1 },
}
if (JSON_OUT) console.log(JSON.stringify(result))
else {
  console.log(`${N} messages (user 80 words, assistant 300): ${compactions} compactions, one per ${result.messagesPerCompaction.toFixed(1)} messages, ${folded} folded`)
  console.log(`ingest + compaction: ${msPerTurn.toFixed(3)} ms a turn`)
  console.log(`targets: at most one compaction per 10 messages ${result.targets.atMostOnePer10 ? 'met' : 'MISSED'}; <= 1 ms a turn ${result.targets.msPerTurnAtMost1 ? 'met' : 'MISSED'}`)
}
