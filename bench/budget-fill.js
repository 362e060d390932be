#!/usr/bin/env node
// How much of each budget the package's sections use, in real tokens (Claude's reference
// tokenizer, `@anthropic-ai/tokenizer`), when there is more material than fits: never over
// is the rule, and a budget half empty is context the model did not get.
//
// Material: the texts of bench/token-corpus.js, one script at a time (chat, code, json,
// cjk, other, emoji; held-out texts only), as
//   - a ChannelStore channel of 120 messages and a thread of 600 replies, built with
//     `buildContext` in both renderings (JSON and compact): the thread (8,000) and the
//     snapshot (1,500, up to 120 adjacent messages) are measured apart;
//   - a MemoryStore lane of 1,500 turns, assembled within 2,000 and 8,000;
//   - 40 earlier conversations of a chat, `buildConversationContext` within 3,000.
// Each section is measured twice: as a fresh process counts (no calibration), and after
// the engine has calibrated on the `usage` of 12 earlier sections of the same script
// (training texts), as a gateway's calibration does from the Messages API's answers.
// Then what a calibration has not seen: calibrated on chat alone, the sections of every
// other kind; calibrated on every kind but Italian and traditional Chinese, sections of
// those two; calibrated on Japanese, sections of Korean and Chinese; on Korean, Japanese
// and Chinese; on TypeScript, JavaScript, Rust and package.json; on German, Czech, Polish,
// Turkish and Russian; on simplified Chinese, traditional, and the other way; on code,
// and on JSON, every other kind (0 over is the rule there too). And what it cannot tell
// apart, reported apart: calibrated on Spanish, Italian.
// Then conversations shaped like the real ones, which no constant of the calibration was
// chosen on: bench/long-chats.js's two-person chats, as they are and with long assistant
// turns, calibrated on half the chats and measured on the other half.
// Plus the bundled channel's default snapshot (fixtures/slack-channel.json, 1,500 tokens,
// 20 adjacent): how many adjacent messages each rendering carries, before calibration, after
// calibrating on 24 of its whole prompt sections, and after calibrating on the sections in them.
//
// Each calibrated section under 90% with material left out is built again, the engine given a
// budget 1% larger at a time until it shows more, to tell why: that next larger build within
// the budget in real tokens means the engine's meter left out what fitted; over it, the next
// message did not fit (the material's grain).
//
// With --by-source, the calibrated measure again for each source of the corpus alone (one
// language, one file type, one layout: the traffic of a gateway that keeps to one), in
// place of the tables above. With --several-sources, for each kind of several sources,
// calibrated on its sources' sections in turn, each section of one source (a gateway whose
// users write in several languages), then each source's sections.
//
// --rounds N: calibrate on N rounds in place of 12 (a model keeps 512 observations, about 73
// rounds of the 7 sections). --seed N: draw the texts by another seed (0, the default, is the
// one the docs' figures come from), to see how much a figure moves with the draw.
//
//   node bench/budget-fill.js [--json] [--by-source | --several-sources] [--rounds N] [--seed N]
//   exits 1 when a section is over its budget
'use strict'

const path = require('node:path')
const engine = require(path.join(__dirname, '..'))
const { tokenCorpus, KINDS } = require('./token-corpus')
const { loadLongChats } = require('./long-chats')
const { lengthenAssistantTurns } = require('./long-turns')
const { referenceTokens } = require('./reference-tokens')
const { xorshift } = require('./rng')

/** The fill a section must reach when material was left out. */
const FILL_TARGET = 0.9
const THREAD_BUDGET = 8_000
const SNAPSHOT_BUDGET = 1_500
const MEMORY_BUDGETS = [2_000, 8_000]
const HISTORY_BUDGET = 3_000
/** Sections of a script the calibrated run observes first. */
const WARMUP = (() => {
  const at = process.argv.indexOf('--rounds')
  const n = at < 0 ? 12 : Number(process.argv[at + 1])
  if (!Number.isInteger(n) || n < 1) throw new Error('--rounds takes a whole number of rounds, 1 or more')
  return n
})()
/** Mixed into every draw's seed: 0 for the figures the docs give; another to see how much they move with the draw. */
const SEED = (() => {
  const at = process.argv.indexOf('--seed')
  const n = at < 0 ? 0 : Number(process.argv[at + 1])
  if (!Number.isInteger(n) || n < 0) throw new Error('--seed takes a whole number, 0 or more')
  return n
})()
const T0 = 1_775_000_000 // seconds: the channel's first message

/** The text between a section's opening tag and its closing tag. */
function inside(prompt, name) {
  const open = prompt.indexOf(`<${name} `)
  const close = prompt.indexOf(`</${name}>`)
  return open < 0 || close < 0 ? '' : prompt.slice(prompt.indexOf('\n', open) + 1, close - 1)
}

/** `n` texts of `pool`, drawn by `random`, each at most `maxChars` long. */
function draw(pool, n, random, maxChars = 1_500) {
  return Array.from({ length: n }, () => pool[Math.floor(random() * pool.length)].slice(0, maxChars))
}

const ts = (s) => `${s}.000100`
const author = (i) => ({ userId: `U${100 + (i % 7)}`, displayName: ['Priya', 'Sam', 'Lee', 'Ana', 'Kofi', 'Mei', 'Olu'][i % 7] })

/** The channel sections (thread and snapshot) of `texts`, in `format`, the engine given `scale` times each budget. */
async function channelSections(texts, format, scale) {
  const channelId = 'CFILL'
  const root = ts(T0 + 10_000)
  const top = texts.slice(0, 120).map((text, i) => ({ messageId: ts(T0 + i * 160), ts: ts(T0 + i * 160), author: author(i), text }))
  top.push({ messageId: root, ts: root, author: author(3), text: texts[120], replyCount: 600 })
  const replies = texts.slice(121, 721).map((text, i) => ({ messageId: ts(T0 + 20_000 + i * 7), ts: ts(T0 + 20_000 + i * 7), author: author(i + 1), text, threadId: root }))
  const anchor = replies[replies.length - 1]
  // The messages arrive as events; the thread and the history are fetched once, whole.
  const store = new engine.ChannelStore({
    clock: () => (T0 + 30_000) * 1000,
    fetcher: {
      fetchHistory: async () => ({ messages: top }),
      fetchThread: async () => ({ messages: [top[top.length - 1], ...replies] }),
    },
  })
  store.setChannel({ id: channelId, name: 'fill', platform: 'slack' })
  store.ingestMany([...top, ...replies].map((message) => ({ type: 'message', channelId, message })))
  const ctx = await store.buildContext(channelId, anchor.messageId, {
    threadId: root,
    budgetTokens: Math.floor(THREAD_BUDGET * scale),
    snapshotBudgetTokens: Math.floor(SNAPSHOT_BUDGET * scale),
    adjacent: 120,
    format,
  })
  await store.close()
  return [
    { section: `thread, ${format}`, budget: THREAD_BUDGET, text: inside(ctx.promptSection, 'thread_context'), leftOut: ctx.thread.truncation.included_replies < ctx.thread.truncation.total_replies, shown: ctx.thread.truncation.included_replies },
    { section: `snapshot, ${format}`, budget: SNAPSHOT_BUDGET, text: inside(ctx.promptSection, 'channel_snapshot'), leftOut: (ctx.snapshot.adjacent_omitted ?? 0) > 0, shown: ctx.snapshot.adjacent.length },
  ]
}

/** MemoryStore.assemble of a 1,500-turn lane within each budget (times `scale`). */
function memorySections(texts, scale) {
  const memory = new engine.MemoryStore({ path: ':memory:' })
  try {
    const t0 = T0 * 1000
    let lane = null
    const batch = texts.slice(0, 1_500).map((text, i) => ({ sessionId: 'fill', chatId: 'fill', messageId: `m${i}`, role: i % 2 === 0 ? 'user' : 'assistant', text, ts: t0 + i * 60_000 }))
    for (let i = 0; i < batch.length; i += 100) [{ threadKey: lane }] = memory.ingest(batch.slice(i, i + 100))
    return MEMORY_BUDGETS.map((budget) => {
      const out = memory.assemble({ sessionId: 'fill', threadKey: lane, userMessage: texts[1_500], budgetTokens: Math.floor(budget * scale), now: t0 + 1_501 * 60_000 })
      return { section: `assemble ${budget.toLocaleString('en-US')}`, budget, text: out.text, leftOut: out.recentIncluded + out.passagesIncluded < 1_500, shown: out.recentIncluded + out.passagesIncluded }
    })
  } finally {
    memory.close()
  }
}

/** buildConversationContext over 40 conversations of the last week (within `scale` times the budget). */
function historySection(texts, scale) {
  const memory = new engine.MemoryStore({ path: ':memory:' })
  try {
    const now = (T0 + 8 * 86_400) * 1000
    for (let c = 0; c < 40; c++) {
      const end = now - 20 * 60_000 - c * 4 * 3_600_000
      const turns = texts.slice(c * 12, c * 12 + 12).map((text, i) => ({ role: i % 2 === 0 ? 'user' : 'assistant', text, ts: end - (12 - i) * 60_000 }))
      memory.putConversation({ chatId: 'fill', sessionId: `s${c}`, turns, summary: texts[480 + c].slice(0, 280), endedAt: end })
    }
    const text = memory.buildConversationContext({ chatId: 'fill', maxTokens: Math.floor(HISTORY_BUDGET * scale), now })
    return [{ section: 'conversation history', budget: HISTORY_BUDGET, text, leftOut: (text.match(/<conversation /g) ?? []).length + (text.match(/<conversation-summary /g) ?? []).length < 40, shown: (text.match(/<conversation[ -]/g) ?? []).length }]
  } finally {
    memory.close()
  }
}

/**
 * The seven sections of `texts`, each `budget` the one measured against; the engine is given
 * `scale` times it (1 but for `withNext`).
 */
async function sections(texts, scale = 1) {
  return [...(await channelSections(texts, 'json', scale)), ...(await channelSections(texts, 'compact', scale)), ...memorySections(texts, scale), ...historySection(texts, scale)]
}

/** The budget multiples tried for the next larger build: 1% more at a time, up to half more. */
const NEXT_SCALES = Array.from({ length: 50 }, (_, i) => 1 + (i + 1) / 100)

/**
 * `built` (the sections of `texts`, with `real`) with, for each under FILL_TARGET with
 * material left out, `next`: the real tokens of the next larger build the engine makes
 * (given a budget 1% larger at a time, until it shows more), and how many more it shows.
 * When `next.real` is within the budget, the engine's meter left out what fitted; when not,
 * the next message did not fit (the material's grain).
 */
async function withNext(texts, built) {
  const due = built.map((s) => s.leftOut && s.real < FILL_TARGET * s.budget)
  const next = built.map(() => null)
  for (const scale of NEXT_SCALES) {
    if (!due.some((d, i) => d && next[i] === null)) break
    ;(await sections(texts, scale)).forEach((s, i) => {
      if (due[i] && next[i] === null && s.shown > built[i].shown) next[i] = { real: referenceTokens(s.text), more: s.shown - built[i].shown }
    })
  }
  return built.map((s, i) => (due[i] ? { ...s, next: next[i] } : s))
}

/** How many of `rows` under FILL_TARGET with material left out the next larger build would have fitted (`next` of withNext). */
function nextTally(rows) {
  const low = rows.filter((r) => r.leftOut && r.fill < FILL_TARGET)
  const fitted = low.filter((r) => r.next && r.next.real <= r.budget).length
  const grain = low.filter((r) => r.next && r.next.real > r.budget).length
  const unknown = low.length - fitted - grain
  return (
    `of the ${low.length} under ${FILL_TARGET * 100}% with material left out, the engine's next larger build is within the budget in real tokens for ${fitted} (the meter left out what fitted), over it for ${grain} (the next message did not fit)` +
    (unknown ? `, not found within ${NEXT_SCALES[NEXT_SCALES.length - 1]}x the budget for ${unknown}` : '')
  )
}

/**
 * The bundled channel's default snapshot in both renderings: adjacent messages carried,
 * before calibration and after the engine has calibrated on the prompt sections of 12
 * other messages of the channel (as a gateway's first answers there would).
 */
async function bundledSnapshot() {
  const fs = require('node:fs')
  const os = require('node:os')
  const { inspect, parseArgs } = require('../bin/inspect.js')
  const { writeSlackExport } = require('../fixtures/slack-export.js')
  const data = require('../fixtures/slack-channel.json')
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fill-'))
  const ANCHOR = '1775736192.817058'
  try {
    writeSlackExport(dir)
    const measure = async () => {
      const out = {}
      for (const format of ['json', 'compact']) {
        const r = await inspect(engine, parseArgs([dir, '--anchor', ANCHOR, '--format', format]))
        out[format] = { adjacent: r.snapshot.adjacent, real: referenceTokens(inside(r.promptSection, 'channel_snapshot')) }
      }
      return out
    }
    engine.resetCalibration()
    const before = await measure()
    const others = data.messages.filter((m) => m.ts !== ANCHOR)
    // Calibrated on what a request's usage counts (the whole prompt section), or on the
    // sections themselves (as the Messages API's token counting endpoint counts a text).
    const calibrated = async (part) => {
      engine.resetCalibration()
      for (let i = 0; i < 12; i++) {
        const m = others[Math.floor(((i + 0.5) * others.length) / 12)]
        for (const format of ['json', 'compact']) {
          const r = await inspect(engine, parseArgs([dir, '--anchor', m.ts, '--format', format]))
          for (const text of part(r.promptSection)) engine.calibrate({ text, inputTokens: referenceTokens(text) })
        }
      }
      return measure()
    }
    const after = await calibrated((prompt) => [prompt])
    const bySection = await calibrated((prompt) => ['channel_snapshot', 'thread_context'].map((name) => inside(prompt, name)).filter((t) => t !== ''))
    engine.resetCalibration()
    return { before, after, bySection }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

/**
 * Calibrates the "default" model afresh on `rounds` rounds of sections of `train`, or of
 * `train(i)` in round `i` when it is a function (a pool per round).
 */
async function warmUp(train, random, rounds = WARMUP) {
  engine.resetCalibration()
  for (let i = 0; i < rounds; i++) {
    for (const s of await sections(draw(typeof train === 'function' ? train(i) : train, 1_600, random))) {
      if (s.text !== '') engine.calibrate({ text: s.text, inputTokens: referenceTokens(s.text) })
    }
  }
}

/** The sections of `texts`, each with its real tokens and, when `next`, withNext's `next`. */
async function measured(texts, next = true) {
  const built = (await sections(texts)).map((s) => ({ ...s, real: referenceTokens(s.text) }))
  return next ? withNext(texts, built) : built
}

/** A row of sourceRows (and severalSources): section `s` of `source`, measured. */
const sourceRow = (source, s) => ({ source, section: s.section, budget: s.budget, real: s.real, fill: s.real / s.budget, leftOut: s.leftOut, next: s.next })

/** Warms the "default" model on `WARMUP` rounds of sections of `train`, then measures the sections of `held`. */
async function calibratedSections(train, held, random) {
  await warmUp(train, random)
  const out = await measured(draw(held, 1_600, random))
  engine.resetCalibration()
  return out
}

/** The calibrated fill of each source's sections, calibrated on that source's training texts alone. */
async function sourceRows(corpus) {
  const sources = [...new Set(corpus.map((t) => t.source))]
  const rows = []
  for (const [i, source] of sources.entries()) {
    const of = (heldOut) => corpus.filter((t) => t.source === source && t.heldOut === heldOut).map((t) => t.text)
    for (const s of await calibratedSections(of(false), of(true), xorshift(SEED ^ 0xface ^ (i + 1) * 7919))) rows.push(sourceRow(source, s))
  }
  return rows
}

/** Prints `rows` of sourceRows as a table, a source a row. */
function printSources(rows, title) {
  const names = [...new Set(rows.map((r) => r.section))]
  console.log(title)
  console.log(`| source | ${names.join(' | ')} |`)
  console.log(`| --- | ${names.map(() => '---:').join(' | ')} |`)
  for (const source of new Set(rows.map((r) => r.source))) {
    const cells = names.map((name) => {
      const r = rows.find((x) => x.source === source && x.section === name)
      const pct = `${(r.fill * 100).toFixed(0)}%`
      return `${r.real > r.budget ? `**${pct} over**` : pct}${r.leftOut ? '' : ' (all)'}`
    })
    console.log(`| ${source} | ${cells.join(' | ')} |`)
  }
}

/** Prints the tally of `rows` of sourceRows, in either output; exit code 1 when one is over. */
function tallySources(rows) {
  const due = rows.filter((r) => r.leftOut)
  const over = rows.filter((r) => r.real > r.budget)
  console.log(`sections over budget: ${over.length} of ${rows.length}; at ${FILL_TARGET * 100}% or more with material left out: ${due.filter((r) => r.fill >= FILL_TARGET).length} of ${due.length}; ${nextTally(rows)}`)
  if (over.length > 0) process.exitCode = 1
}

/** Each source of the corpus alone. */
async function bySource(corpus) {
  const rows = await sourceRows(corpus)
  if (process.argv.includes('--json')) console.log(JSON.stringify({ bySource: rows }, null, 2))
  else printSources(rows, `after calibrating on ${WARMUP} rounds of sections of one source alone:`)
  tallySources(rows)
}

/**
 * Traffic of several sources of one kind, each section of one source (a gateway whose users
 * write in several languages, or send several file types): calibrated on WARMUP rounds of
 * each source's sections in turn (the model keeping its last 512 observations, about 73
 * rounds), then each source's sections.
 */
async function severalSources(corpus) {
  const out = {}
  for (const [k, kind] of KINDS.entries()) {
    const sources = [...new Set(corpus.filter((t) => t.kind === kind).map((t) => t.source))]
    if (sources.length < 2) continue
    const of = (source, heldOut) => corpus.filter((t) => t.source === source && t.heldOut === heldOut).map((t) => t.text)
    const random = xorshift(SEED ^ 0xbeef ^ (k + 1) * 7919)
    const train = sources.map((source) => of(source, false))
    await warmUp((i) => train[i % train.length], random, WARMUP * train.length)
    const rows = []
    for (const source of sources) {
      for (const s of await measured(draw(of(source, true), 1_600, random))) rows.push(sourceRow(source, s))
    }
    engine.resetCalibration()
    out[kind] = rows
    if (!process.argv.includes('--json')) {
      printSources(rows, `\n${kind}: after calibrating on ${WARMUP} rounds of each of its sources in turn (${sources.join(', ')}), each section of one source:`)
      tallySources(rows)
    }
  }
  if (process.argv.includes('--json')) console.log(JSON.stringify({ severalSources: out }, null, 2))
  else tallySources(Object.values(out).flat())
}

/**
 * Conversations shaped like the real ones, which no constant of the calibration was chosen
 * on: the two-person chats of bench/long-chats.js (the chitchat corpus's 10 longest pairs),
 * their turns as messages, as they are and with long assistant turns (bench/long-turns.js);
 * calibrated on the sections of the even-numbered chats, the odd-numbered ones measured.
 */
async function chatRows() {
  const plain = await loadLongChats({ count: 10 })
  const long = JSON.parse(JSON.stringify(plain))
  lengthenAssistantTurns(long)
  const corpus = []
  for (const [source, chats] of [['two-person chats', plain], ['long assistant turns', long]]) {
    chats.forEach((chat, i) => {
      for (const session of chat.sessions) for (const turn of session.turns) corpus.push({ source, text: turn.text, heldOut: i % 2 === 1 })
    })
  }
  return sourceRows(corpus)
}

async function main() {
  const corpus = await tokenCorpus()
  if (process.argv.includes('--by-source')) return bySource(corpus)
  if (process.argv.includes('--several-sources')) return severalSources(corpus)
  const rows = []
  for (const kind of KINDS) {
    const random = xorshift(SEED ^ 0x5eed ^ (KINDS.indexOf(kind) + 1) * 7919)
    const held = corpus.filter((t) => t.kind === kind && t.heldOut).map((t) => t.text)
    const train = corpus.filter((t) => t.kind === kind && !t.heldOut).map((t) => t.text)
    for (const calibrated of [false, true]) {
      engine.resetCalibration()
      if (calibrated) await warmUp(train, random)
      for (const s of await measured(draw(held, 1_600, random), calibrated)) {
        rows.push({ kind, calibrated, section: s.section, budget: s.budget, real: s.real, fill: s.real / s.budget, leftOut: s.leftOut, shown: s.shown, next: s.next })
      }
    }
  }
  // What a calibration has not seen keeps the bound: calibrated on chat alone, then
  // sections of every other kind; calibrated on mixed traffic of every kind but Italian and
  // traditional Chinese (the two the estimate undercounts most), then sections of those;
  // calibrated on Japanese, then Korean and Chinese (other scripts of the CJK part), and on
  // Korean, then Japanese and Chinese; calibrated on TypeScript, then JavaScript, Rust and
  // package.json; on German, then Czech, Polish, Turkish and Russian (other letters); on
  // simplified Chinese, then traditional, and the other way (simplified radicals); on code,
  // then every other kind; on JSON, then every other kind.
  const unseen = []
  const trainOf = (keep) => corpus.filter((t) => !t.heldOut && keep(t)).map((t) => t.text)
  const heldOf = (keep) => corpus.filter((t) => t.heldOut && keep(t)).map((t) => t.text)
  /** Calibrated on one source (`trained`, its name), then sections of each `[name, source]` of `tested`. */
  const sourceCase = (trained, source, tested) => ({
    trained,
    train: trainOf((t) => t.source === source),
    tests: tested.map(([name, other]) => [name, heldOf((t) => t.source === other)]),
  })
  /** Calibrated on one kind, then sections of every other kind. */
  const kindCase = (kind) => ({
    trained: kind,
    train: trainOf((t) => t.kind === kind),
    tests: KINDS.filter((k) => k !== kind).map((k) => [k, heldOf((t) => t.kind === k)]),
  })
  const chinese = [['simplified Chinese', 'zh-cn'], ['traditional Chinese', 'zh-tw']]
  const cases = [
    kindCase('chat'),
    {
      trained: 'every kind but Italian and traditional Chinese',
      train: trainOf((t) => t.source !== 'it' && t.source !== 'zh-tw'),
      tests: [['Italian', heldOf((t) => t.source === 'it')], ['traditional Chinese', heldOf((t) => t.source === 'zh-tw')]],
    },
    sourceCase('Japanese', 'ja', [['Korean', 'ko'], ...chinese]),
    sourceCase('Korean', 'ko', [['Japanese', 'ja'], ...chinese]),
    sourceCase('TypeScript', 'ts', [['JavaScript', 'js'], ['Rust', 'rs'], ['package.json', 'package.json']]),
    sourceCase('German', 'de', ['cs', 'pl', 'tr', 'ru'].map((s) => [s, s])),
    sourceCase('simplified Chinese', 'zh-cn', [chinese[1]]),
    sourceCase('traditional Chinese', 'zh-tw', [chinese[0]]),
    kindCase('code'),
    kindCase('json'),
  ]
  // What the profile cannot tell apart: another language of the same script and parts.
  // Reported, not held to 0 over (see docs/tokens.md, "What a calibration cannot tell").
  const sameScript = [
    sourceCase('Spanish', 'es', [['Italian', 'it']]),
  ]
  const same = []
  for (const [list, out] of [[cases, unseen], [sameScript, same]]) {
    for (const c of list) {
      const random = xorshift(SEED ^ 0x5eed ^ 0x1234)
      await warmUp(c.train, random)
      for (const [name, held] of c.tests) {
        for (const s of await sections(draw(held, 1_600, random))) {
          const real = referenceTokens(s.text)
          out.push({ trained: c.trained, kind: name, section: s.section, budget: s.budget, real, fill: real / s.budget })
        }
      }
    }
  }
  engine.resetCalibration()
  const bundled = await bundledSnapshot()
  const chats = await chatRows()
  if (process.argv.includes('--json')) {
    console.log(JSON.stringify({ rows, unseen, sameScript: same, bundled, chats }, null, 2))
  } else {
    const names = [...new Set(rows.map((r) => r.section))]
    for (const calibrated of [false, true]) {
      console.log(calibrated ? `\nafter calibrating on ${WARMUP} rounds of sections of the same script (the "default" model):` : 'uncalibrated (a fresh process):')
      console.log(`| section | budget | ${KINDS.join(' | ')} |`)
      console.log(`| --- | ---: | ${KINDS.map(() => '---:').join(' | ')} |`)
      for (const name of names) {
        const cells = KINDS.map((kind) => {
          const r = rows.find((x) => x.kind === kind && x.calibrated === calibrated && x.section === name)
          const pct = `${(r.fill * 100).toFixed(0)}%`
          return `${r.real > r.budget ? `**${pct} over**` : pct}${r.leftOut ? '' : ' (all)'} ${r.shown}`
        })
        const budget = rows.find((x) => x.section === name).budget
        console.log(`| ${name} | ${budget.toLocaleString('en-US')} | ${cells.join(' | ')} |`)
      }
    }
    console.log('\ncells: real tokens / budget, then messages (or conversations) shown; "(all)": everything fitted, so no fill is due')
    for (const [label, b] of [['uncalibrated', bundled.before], ['calibrated on 24 of its prompt sections', bundled.after], ['calibrated on the snapshots and threads of those 24', bundled.bySection]]) {
      console.log(`bundled channel, default snapshot (1,500 tokens, 20 adjacent asked), ${label}: JSON ${b.json.adjacent} adjacent (${b.json.real} real tokens), compact ${b.compact.adjacent} (${b.compact.real})`)
    }
    printSources(chats, `\nconversations shaped like the real ones (bench/long-chats.js, 10 chats), calibrated on ${WARMUP} rounds of sections of the even-numbered chats, the odd-numbered measured:`)
  }
  tallySources(chats)
  const unseenOver = unseen.filter((r) => r.real > r.budget)
  console.log(
    `sections of a kind the calibration had not seen: ${unseen.length}, ${unseenOver.length} over budget${unseenOver.length ? `: ${unseenOver.map((r) => `${r.section} ${r.kind} after ${r.trained} ${(r.fill * 100).toFixed(0)}%`).join(', ')}` : ''}; fill ${Math.round(Math.min(...unseen.map((r) => r.fill)) * 100)}-${Math.round(Math.max(...unseen.map((r) => r.fill)) * 100)}%`,
  )
  if (unseenOver.length > 0) process.exitCode = 1
  for (const c of sameScript) {
    const mine = same.filter((r) => r.trained === c.trained)
    const over = mine.filter((r) => r.real > r.budget)
    console.log(`${c.tests[0][0]} sections after calibrating on ${c.trained} alone (one script, another language; not held to 0 over): ${over.length} of ${mine.length} over${over.length ? `, at most ${Math.round(Math.max(...over.map((r) => r.fill)) * 100)}%` : ''}`)
  }
  const over = rows.filter((r) => r.real > r.budget)
  const low = rows.filter((r) => r.leftOut && r.fill < FILL_TARGET)
  const summary = (list) => list.map((r) => `${r.section} ${r.kind}${r.calibrated ? ' (calibrated)' : ''} ${(r.fill * 100).toFixed(0)}%`).join(', ')
  console.log(`sections over budget: ${over.length} of ${rows.length}${over.length ? `: ${summary(over)}` : ''}`)
  console.log(`sections under ${FILL_TARGET * 100}% with material left out: ${low.length} of ${rows.filter((r) => r.leftOut).length}`)
  console.log(`calibrated: ${nextTally(rows.filter((r) => r.calibrated))}`)
  if (over.length > 0) process.exitCode = 1
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
