#!/usr/bin/env node
// What the OpenClaw plugin costs and recalls over whole sessions, against what a host does
// without an engine, at the budget OpenClaw passes and at one every session outgrows.
//
// The sessions. The long two-person chats of bench/long-chats.js (the public chitchat
// corpus, weeks of sessions each), each replayed as one OpenClaw session the way OpenClaw
// drives a context engine: for every user turn, `assemble` gets the transcript so far
// (the host's own message objects) and the turn's text as the prompt; the request is then
// composed as the host sends it: a stable base system prompt of ~2K tokens followed by the
// engine's `systemPromptAddition`, the messages `assemble` returned, then the prompt; the
// turn (the user turn and the assistant turns that answer it) is committed with
// `commitTurn` and `maintain` runs. At the end every question of the chat is asked once
// (`assemble` with the whole transcript and the question as the prompt; nothing is
// committed) and the context (the addition and the messages' text) is checked for the
// turns that hold its answer.
//
// Plus a work thread whose messages share vocabulary, so retrieval has something to match
// every turn: 60 turns of the engineering channel of bench/search-corpus.js (a seeded
// generator with a Zipf vocabulary), alternately the user's and the assistant's, at a
// budget the whole thread fits.
//
// Builders, same requests, same budgets, in one run:
//   - the plugin, with its defaults;
//   - the whole transcript (no engine), sliding when over: the newest messages that fit
//     the budget;
//   - chunked: the whole transcript while it fits, then the oldest half of it dropped each
//     time it outgrows the budget (append-only between drops).
// The budget is the engine's `tokenBudget`: what the context adds to the base system prompt
// and the prompt (the addition and the messages), in real tokens for the baselines.
//
// Figures, tokens by @anthropic-ai/tokenizer (a request is its system prompt and each
// message as JSON, counted piece by piece):
//   - cache-weighted input cost, as Anthropic bills a cached prefix: a request's tokens in
//     the longest prefix it shares with the previous request at 0.1, the rest at 1.25
//     (a cache write); reported against the reference builder of the budget (the whole
//     transcript at the budget every session fits, the sliding window at the one they
//     outgrow);
//   - median reusable prefix: the share of a request's tokens in that prefix;
//   - evidence recall at the end: the share of evidence turns whose text is in the
//     context; answer containment: the share of questions whose answer is in it;
//   - over budget: requests whose context (the addition and the messages) is over the
//     budget in real tokens.
// Targets (issue 49): at 180,000, the plugin's cost <= 1.05x the whole transcript's,
// recall >= 99%, median reusable share >= 0.95; at 8,000, recall >= 80%, cost <= 0.5x the
// sliding window's; the work thread at 16,000: cost <= 1.05x the whole transcript's, median
// share >= 0.9; none over budget.
//
//   node bench/session-replay.js [--quick] [--json] [--chats N] [--budgets 180000,8000] [--long-turns] [--pg]
//   (--pg: the plugin on PostgreSQL as well, a server started here)
//   (--long-turns: the chats with long assistant turns of bench/long-turns.js; with --spread,
//   each turn's own text at a seeded place among the other chat's turns)
//   (--quick: the three shortest of the ten chats, every 4th question)
'use strict'

const path = require('node:path')
const { createContextEngine } = require(path.join(__dirname, '..', 'openclaw'))
const { loadLongChats } = require('./long-chats')
const { lengthenAssistantTurns } = require('./long-turns')
const { makeCorpus } = require('./search-corpus')
const { referenceTokens } = require('./reference-tokens')

const QUICK = process.argv.includes('--quick')
const JSON_OUT = process.argv.includes('--json')
const LONG_TURNS = process.argv.includes('--long-turns')
const arg = (name) => {
  const i = process.argv.indexOf(name)
  return i > 0 ? process.argv[i + 1] : undefined
}
const CHATS = Number(arg('--chats') ?? 10)
const EVERY = QUICK ? 4 : 1
const BUDGETS = (arg('--budgets') ?? '180000,8000').split(',').map(Number)
const WORK_BUDGET = 16_000
const WORK_TURNS = 60
const READ = 0.1
const WRITE = 1.25
const TARGETS = {
  fits: { costVsWhole: 1.05, evidenceRecall: 0.99, medianPrefixShare: 0.95 },
  outgrown: { evidenceRecall: 0.8, costVsSliding: 0.5 },
  workThread: { costVsWhole: 1.05, medianPrefixShare: 0.9 },
  overBudget: 0,
}

/** The base system prompt a host sends before the engine's addition: ~2K tokens, fixed. */
const BASE_SYSTEM = (() => {
  const rules = [
    'Answer the person you are talking with directly and briefly, in their language.',
    'When you are not sure of something said earlier, search the conversation before answering.',
    'Never invent what someone said; quote it when it matters, and say when you cannot find it.',
    'Keep track of names, dates, plans and preferences people mention, and use them when relevant.',
    'Ask one clarifying question when a request is ambiguous, not several.',
    'Do not repeat the question back; do not greet again in an ongoing conversation.',
    'Prefer concrete answers with the numbers, places and times that were given.',
    'When two things said earlier disagree, say which is newer and answer by it.',
  ]
  const out = ['You are a helpful assistant in a long-running chat. Follow these rules.']
  for (let i = 0; out.join('\n').length < 8_000; i++) out.push(`${i + 1}. ${rules[i % rules.length]} (rule ${i + 1} of the house style)`)
  return out.join('\n')
})()

const median = (xs) => {
  const s = xs.slice().sort((a, b) => a - b)
  return s.length === 0 ? 0 : s[Math.floor(s.length / 2)]
}

// ---------------------------------------------------------------- counting a request

const tokenCache = new Map()
function tokensOf(text) {
  let n = tokenCache.get(text)
  if (n === undefined) {
    n = referenceTokens(text)
    if (tokenCache.size > 200_000) tokenCache.clear()
    tokenCache.set(text, n)
  }
  return n
}

const jsonOf = new WeakMap()
function pieceOf(message) {
  let s = jsonOf.get(message)
  if (s === undefined) {
    s = JSON.stringify(message)
    jsonOf.set(message, s)
  }
  return s
}

function commonPrefix(a, b) {
  const n = Math.min(a.length, b.length)
  let i = 0
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++
  return i
}

/** Cache figures of a sequence of requests (each an array of pieces: system, then messages). */
class CacheMeter {
  constructor() {
    this.previous = null
    this.shares = []
    this.cost = 0
    this.tokens = 0
  }

  add(pieces) {
    let total = 0
    for (const p of pieces) total += tokensOf(p)
    let cached = 0
    const prev = this.previous
    if (prev !== null) {
      let i = 0
      while (i < pieces.length && i < prev.length && pieces[i] === prev[i]) cached += tokensOf(pieces[i++])
      if (i < pieces.length && i < prev.length) {
        const shared = commonPrefix(pieces[i], prev[i])
        if (shared > 0) cached += Math.min(tokensOf(pieces[i]), referenceTokens(pieces[i].slice(0, shared)))
      }
      this.shares.push(cached / total)
    }
    this.previous = pieces
    this.cost += READ * cached + WRITE * (total - cached)
    this.tokens += total
  }

  figures() {
    return { medianPrefixShare: median(this.shares), cost: this.cost, tokens: this.tokens, requests: this.shares.length + 1 }
  }
}

/** Real tokens of a context: the addition and the messages as JSON. */
function contextTokens(addition, messages) {
  let n = addition ? tokensOf(addition) : 0
  for (const m of messages) n += tokensOf(pieceOf(m))
  return n
}

function textOfMessage(m) {
  if (typeof m.content === 'string') return m.content
  return (m.content ?? []).filter((b) => b?.type === 'text').map((b) => b.text).join('\n')
}

function contextText(addition, messages) {
  return [addition ?? '', ...messages.map(textOfMessage)].join('\n')
}

// ---------------------------------------------------------------- the builders

/** The plugin, as OpenClaw drives it. */
class PluginBuilder {
  constructor(budget, sessionKey, config = { path: ':memory:' }) {
    this.engine = createContextEngine(config)
    this.budget = budget
    this.sessionKey = sessionKey
    this.sessionId = `${sessionKey}:s1`
    this.turns = 0
  }

  async context(transcript, prompt) {
    const out = await this.engine.assemble({ sessionId: this.sessionId, sessionKey: this.sessionKey, messages: transcript.slice(), prompt, tokenBudget: this.budget })
    return { addition: out.systemPromptAddition ?? '', messages: out.messages }
  }

  async commit(messages) {
    const params = { sessionId: this.sessionId, sessionKey: this.sessionKey }
    await this.engine.commitTurn({ ...params, messages, advancementKey: `turn-${++this.turns}` })
    await this.engine.maintain(params)
  }

  async close() {
    const diagnostics = this.engine.diagnostics.map((d) => `${d.method}: ${d.message}`)
    await this.engine.dispose()
    return diagnostics
  }
}

/** The newest messages that fit the budget (the whole transcript while it fits). */
class SlidingBuilder {
  constructor(budget) {
    this.budget = budget
  }

  async context(transcript) {
    let used = 0
    let from = transcript.length
    while (from > 0 && used + tokensOf(pieceOf(transcript[from - 1])) <= this.budget) used += tokensOf(pieceOf(transcript[--from]))
    return { addition: '', messages: transcript.slice(from) }
  }

  async commit() {}
  async close() {
    return []
  }
}

/** The whole transcript while it fits, then its oldest half dropped each time it outgrows the budget. */
class ChunkedBuilder {
  constructor(budget) {
    this.budget = budget
    this.from = 0
    this.used = 0
    this.seen = 0
  }

  async context(transcript) {
    for (; this.seen < transcript.length; this.seen++) this.used += tokensOf(pieceOf(transcript[this.seen]))
    while (this.used > this.budget && this.from < transcript.length) {
      const half = this.used / 2
      let dropped = 0
      while (dropped < half && this.from < transcript.length - 1) dropped += tokensOf(pieceOf(transcript[this.from++]))
      this.used -= dropped
      if (transcript.length - this.from === 1) break
    }
    return { addition: '', messages: transcript.slice(this.from) }
  }

  async commit() {}
  async close() {
    return []
  }
}

const BUILDERS = [
  { name: 'plugin', make: (budget, key) => new PluginBuilder(budget, key) },
  { name: 'whole transcript (sliding when over)', make: (budget) => new SlidingBuilder(budget) },
  { name: 'chunked', make: (budget) => new ChunkedBuilder(budget) },
]

// --pg: the plugin with its memory on PostgreSQL too (a server started here, a database of
// its own for each replay), to read beside the plugin on SQLite.
const PG = process.argv.includes('--pg') ? require('./pg-server') : null
let pgServer = null
let pgDatabases = 0
if (PG !== null) {
  BUILDERS.splice(1, 0, {
    name: 'plugin on PostgreSQL',
    make: (budget, key) => {
      const name = `replay_${++pgDatabases}`
      pgServer.sql(`CREATE DATABASE ${name}`)
      return new PluginBuilder(budget, key, { url: pgServer.url(name) })
    },
  })
}

// ---------------------------------------------------------------- the replay

/** A chat's turns as OpenClaw messages, grouped: each user turn with the assistant turns that answer it. */
function hostTurns(turns) {
  const groups = []
  let lead = []
  for (const t of turns) {
    const message = t.role === 'user' ? { role: 'user', content: t.text, timestamp: t.ts } : { role: 'assistant', content: [{ type: 'text', text: t.text }], timestamp: t.ts }
    if (t.role === 'user') groups.push({ prompt: t.text, messages: [message] })
    else if (groups.length === 0) lead.push(message)
    else groups[groups.length - 1].messages.push(message)
  }
  return { lead, groups }
}

/**
 * Replays `turns` through one builder; then asks `questions` (each with its evidence
 * texts). Returns the cache figures, over-budget count, recall and diagnostics.
 */
async function replay(builder, turns, questions, budget) {
  const { lead, groups } = hostTurns(turns)
  const meter = new CacheMeter()
  const transcript = []
  let over = 0
  let contextTokensSum = 0
  if (lead.length > 0) {
    transcript.push(...lead)
    await builder.commit(lead)
  }
  for (const g of groups) {
    const c = await builder.context(transcript, g.prompt)
    const system = c.addition ? `${BASE_SYSTEM}\n\n${c.addition}` : BASE_SYSTEM
    meter.add([system, ...c.messages.map(pieceOf), pieceOf(g.messages[0])])
    const used = contextTokens(c.addition, c.messages)
    contextTokensSum += used
    if (used > budget) over++
    transcript.push(...g.messages)
    await builder.commit(g.messages)
  }
  let evidence = 0
  let answers = 0
  for (const q of questions) {
    const c = await builder.context(transcript, q.question)
    if (contextTokens(c.addition, c.messages) > budget) over++
    const text = contextText(c.addition, c.messages)
    evidence += q.evidenceTexts.filter((t) => text.includes(t)).length / q.evidenceTexts.length
    answers += text.toLowerCase().includes(q.answer.toLowerCase()) ? 1 : 0
  }
  const diagnostics = await builder.close()
  return { ...meter.figures(), over, evidence, answers, questions: questions.length, meanContextTokens: contextTokensSum / Math.max(1, groups.length), diagnostics }
}

function sum(rows, key) {
  return rows.reduce((n, r) => n + r[key], 0)
}

async function chatsRun() {
  const all = await loadLongChats({ count: 10 })
  if (LONG_TURNS) lengthenAssistantTurns(all, { spread: process.argv.includes('--spread') })
  const chats = QUICK ? all.slice(-3) : all.slice(0, CHATS)
  const results = []
  for (const budget of BUDGETS) {
    for (const b of BUILDERS) {
      const per = []
      for (const chat of chats) {
        const turns = chat.sessions.flatMap((s) => s.turns)
        const byId = new Map(turns.map((t) => [t.id, t]))
        const questions = chat.questions
          .filter((_, i) => i % EVERY === 0)
          .map((q) => ({ ...q, evidenceTexts: q.evidence.map((id) => byId.get(id).text) }))
        per.push({ chat: chat.id, ...(await replay(b.make(budget, `agent:main:bench:direct:${chat.id}`), turns, questions, budget)) })
      }
      const questions = sum(per, 'questions')
      results.push({
        budget,
        builder: b.name,
        cost: sum(per, 'cost'),
        tokens: sum(per, 'tokens'),
        requests: sum(per, 'requests'),
        medianPrefixShare: median(per.map((p) => p.medianPrefixShare)),
        evidenceRecall: sum(per, 'evidence') / questions,
        answerContainment: sum(per, 'answers') / questions,
        questions,
        over: sum(per, 'over'),
        meanContextTokens: sum(per, 'meanContextTokens') / per.length,
        diagnostics: [...new Set(per.flatMap((p) => p.diagnostics))].slice(0, 5),
      })
    }
  }
  return { chats: chats.map((c) => c.id), results }
}

async function workThreadRun() {
  const corpus = makeCorpus(2 * WORK_TURNS, 49)
  const t0 = 1_780_000_000_000
  const turns = corpus.map((m, i) => ({ role: i % 2 === 0 ? 'user' : 'assistant', text: m.text, ts: t0 + i * 90_000 }))
  const rows = []
  for (const b of BUILDERS.filter((x) => x.name === 'plugin' || x.name === 'whole transcript (sliding when over)')) {
    const r = await replay(b.make(WORK_BUDGET, 'agent:main:slack:channel:c0work:thread:1780000000.000100'), turns, [], WORK_BUDGET)
    rows.push({ builder: b.name, ...r })
  }
  return rows
}

async function main() {
  if (PG !== null) {
    if (!PG.pgInstalled) throw new Error('--pg: PostgreSQL is not installed here (apt-get install postgresql)')
    pgServer = await PG.PgServer.start()
  }
  try {
    await report()
  } finally {
    pgServer?.stop()
  }
}

async function report() {
  const { chats, results } = await chatsRun()
  const work = await workThreadRun()
  const at = (budget, name) => results.find((r) => r.budget === budget && r.builder === name)
  const [fits, outgrown] = [BUDGETS[0], BUDGETS[BUDGETS.length - 1]]
  for (const budget of BUDGETS) {
    const ref = at(budget, 'whole transcript (sliding when over)').cost
    for (const r of results.filter((x) => x.budget === budget)) r.costVsReference = r.cost / ref
  }
  const workPlugin = work[0]
  const workWhole = work[1]
  const met = {
    fitsCost: at(fits, 'plugin').costVsReference <= TARGETS.fits.costVsWhole,
    fitsRecall: at(fits, 'plugin').evidenceRecall >= TARGETS.fits.evidenceRecall,
    fitsShare: at(fits, 'plugin').medianPrefixShare >= TARGETS.fits.medianPrefixShare,
    outgrownRecall: at(outgrown, 'plugin').evidenceRecall >= TARGETS.outgrown.evidenceRecall,
    outgrownCost: at(outgrown, 'plugin').costVsReference <= TARGETS.outgrown.costVsSliding,
    workCost: workPlugin.cost / workWhole.cost <= TARGETS.workThread.costVsWhole,
    workShare: workPlugin.medianPrefixShare >= TARGETS.workThread.medianPrefixShare,
    overBudget: results.filter((r) => r.builder === 'plugin').every((r) => r.over === 0) && workPlugin.over === 0,
  }
  if (JSON_OUT) {
    console.log(JSON.stringify({ chats, results, workThread: work, targets: TARGETS, met }, null, 2))
    return
  }
  const pct = (x) => `${(100 * x).toFixed(1)}%`
  console.log(`session replay: ${chats.length} chats replayed as OpenClaw sessions${QUICK ? ' (quick)' : ''}, ${results[0].questions} questions at the end`)
  console.log('budget   builder                                evidence  answer  cost vs ref  median prefix  mean context tokens  requests  over')
  for (const r of results) {
    console.log(
      `${String(r.budget).padStart(7)}  ${r.builder.padEnd(38)} ${pct(r.evidenceRecall).padStart(8)}  ${pct(r.answerContainment).padStart(6)}  ${`${r.costVsReference.toFixed(2)}x`.padStart(11)}  ${r.medianPrefixShare.toFixed(3).padStart(13)}  ${r.meanContextTokens.toFixed(0).padStart(19)}  ${String(r.requests).padStart(8)}  ${String(r.over).padStart(4)}`,
    )
    if (r.diagnostics.length > 0) console.log(`         diagnostics: ${r.diagnostics.join('; ')}`)
  }
  console.log(`(cost vs ref: against the whole transcript, sliding when over, at the same budget)`)
  console.log(
    `work thread (${WORK_TURNS} turns sharing vocabulary) at ${WORK_BUDGET}: plugin cost ${(workPlugin.cost / workWhole.cost).toFixed(2)}x the whole transcript's, median prefix ${workPlugin.medianPrefixShare.toFixed(3)} (whole ${workWhole.medianPrefixShare.toFixed(3)}), mean context ${workPlugin.meanContextTokens.toFixed(0)} / ${workWhole.meanContextTokens.toFixed(0)} tokens, over ${workPlugin.over}`,
  )
  const word = (ok) => (ok ? 'met' : 'missed')
  console.log(
    `targets: at ${fits} cost <= ${TARGETS.fits.costVsWhole}x ${word(met.fitsCost)}, recall >= 99% ${word(met.fitsRecall)}, median share >= ${TARGETS.fits.medianPrefixShare} ${word(met.fitsShare)}; ` +
      `at ${outgrown} recall >= 80% ${word(met.outgrownRecall)}, cost <= ${TARGETS.outgrown.costVsSliding}x ${word(met.outgrownCost)}; ` +
      `work thread cost <= ${TARGETS.workThread.costVsWhole}x ${word(met.workCost)}, share >= ${TARGETS.workThread.medianPrefixShare} ${word(met.workShare)}; none over budget ${word(met.overBudget)}`,
  )
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
