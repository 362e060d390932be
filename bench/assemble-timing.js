#!/usr/bin/env node
// How long `MemoryStore.assemble` takes on questions as people ask them, against the plain
// BM25 query and fill anyone can write, and against another build of the package, in one
// run on one machine. The chats and questions of bench/long-chats.js (the public chitchat
// corpus: the questions are the people's own, turned into the third person, and the told
// / when / two-turn ones), every turn stored in order with the default compaction after
// each; each question then asked once at each budget, the builds taking turns question by
// question, each first on every other question, so neither gets a warmer machine. Each budget has its own store (the same turns
// stored the same way): a store sees each question once, as it would in a conversation, so
// what it keeps from one question helps another only where the questions share it. BM25: MiniSearch's search over every turn and
// the fill of its best turns by estimated tokens (the baseline's whole work per question).
// With --long-turns, the chats with long assistant turns (bench/long-turns.js).
//
//   node bench/assemble-timing.js [--chats N] [--against <checkout>] [--long-turns] [--json]
//   (--against: a checkout of another commit with its addon built, e.g. a git worktree)
'use strict'

const path = require('node:path')
const MiniSearch = require('minisearch')
const { loadLongChats } = require('./long-chats')

const arg = (name, fallback) => {
  const i = process.argv.indexOf(name)
  return i > 0 ? process.argv[i + 1] : fallback
}
const CHATS = Number(arg('--chats', 10))
const AGAINST = arg('--against', null)
const LONG_TURNS = process.argv.includes('--long-turns')
const JSON_OUT = process.argv.includes('--json')
const BUDGETS = [1_000, 2_000, 4_000, 8_000]
const DAY = 86_400_000

const quantile = (xs, q) => {
  const s = Float64Array.from(xs).sort()
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]
}
const ms = (t0) => Number(process.hrtime.bigint() - t0) / 1e6

async function main() {
  const builds = [{ name: 'this build', root: path.join(__dirname, '..') }]
  if (AGAINST) builds.push({ name: `build at ${path.basename(path.resolve(AGAINST))}`, root: path.resolve(AGAINST) })
  for (const b of builds) b.MemoryStore = require(b.root).MemoryStore
  const chats = (await loadLongChats({ count: CHATS })).slice(0, CHATS)
  if (LONG_TURNS) require('./long-turns').lengthenAssistantTurns(chats)
  const times = new Map()
  const at = (name, budget) => {
    const k = `${name}@${budget}`
    if (!times.has(k)) times.set(k, [])
    return times.get(k)
  }
  let questions = 0
  for (const chat of chats) {
    const turns = chat.sessions.flatMap((s) => s.turns)
    const now = turns[turns.length - 1].ts + DAY
    const speakers = { user: [chat.names[0]], assistant: [chat.names[1]] }
    const stored = (b) => {
      const memory = new b.MemoryStore()
      let lane = null
      for (const t of turns) {
        ;[{ threadKey: lane }] = memory.ingest([{ sessionId: 's', chatId: chat.id, messageId: t.id, role: t.role, text: t.text, ts: t.ts }])
        memory.compact('s', lane, { now: t.ts })
      }
      return { memory, lane }
    }
    const stores = builds.map((b) => new Map(BUDGETS.map((budget) => [budget, stored(b)])))
    const index = new MiniSearch({ fields: ['text'], idField: 'id' })
    index.addAll(turns.map((t) => ({ id: t.id, text: t.text })))
    const byId = new Map(turns.map((t) => [t.id, t]))
    const cost = new Map(turns.map((t) => [t.id, Math.ceil(t.text.length / 4)]))
    for (const q of chat.questions) {
      questions++
      for (const budget of BUDGETS) {
        // Which build goes first alternates: the second of two calls in a row runs on a
        // warmer machine (measured: a build against a copy of itself read 3-7% faster
        // second).
        const order = questions % 2 === 0 ? [...builds.entries()] : [...builds.entries()].reverse()
        for (const [i, b] of order) {
          const { memory, lane } = stores[i].get(budget)
          const t0 = process.hrtime.bigint()
          memory.assemble({ sessionId: 's', threadKey: lane, userMessage: q.question, budgetTokens: budget, now, speakers })
          at(b.name, budget).push(ms(t0))
        }
        const t0 = process.hrtime.bigint()
        const out = []
        let used = 0
        for (const r of index.search(q.question)) {
          const c = cost.get(r.id)
          if (used + c > budget) continue
          used += c
          out.push(byId.get(r.id).text)
        }
        out.join('\n')
        at('BM25 query and fill (MiniSearch)', budget).push(ms(t0))
      }
    }
    for (const s of stores) for (const { memory } of s.values()) memory.close()
  }
  const rows = []
  for (const name of [...builds.map((b) => b.name), 'BM25 query and fill (MiniSearch)']) {
    for (const budget of BUDGETS) {
      const xs = at(name, budget)
      rows.push({ name, budget, p50: quantile(xs, 0.5), p99: quantile(xs, 0.99), n: xs.length })
    }
  }
  if (JSON_OUT) return console.log(JSON.stringify({ chats: chats.length, questions, longTurns: LONG_TURNS, rows }, null, 2))
  console.log(`assemble timing: ${chats.length} chats${LONG_TURNS ? ' with long assistant turns' : ''}, ${questions} questions as asked, ${BUDGETS.length} budgets`)
  console.log('builder                                 budget   p50 ms   p99 ms   p50 vs this build')
  const base = (budget) => rows.find((r) => r.name === builds[0].name && r.budget === budget).p50
  for (const r of rows) {
    console.log(`${r.name.padEnd(40)}${String(r.budget).padStart(6)} ${r.p50.toFixed(2).padStart(8)} ${r.p99.toFixed(2).padStart(8)}   ${(r.p50 / base(r.budget)).toFixed(2)}x`)
  }
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
