#!/usr/bin/env node
// Retrieval recall on a hand-written channel: for every question in
// fixtures/retrieval-questions.json, does the ranking put the message(s) that answer it in its
// top k? recall@k = mean over questions of |targets ∩ top-k| / |targets|.
//
//   node bench/recall.js [--verbose] [--check] [--k 8]
//
// Prints recall@k for the original keyword-count ranking (with since/authors applied as a
// pre-filter, so it sees the same messages) and, when the addon is built, for channel_context
// over a ChannelStore filled from the same fixture (bench/retrieval-store.js).
//
// Any ranking can be measured: rankFn(question, messages, k) → message ids (or a promise of
// them), best first, where `question` is a question object ({id, question, targets, since,
// authors, lang, ...}) and `messages` is messagesFromFixture(channel) ({id, ts, text, user,
// thread_ts}, id === ts).
//
//   const { recallAt } = require('./bench/recall')
//   const r = await recallAt(8, (q, messages, k) => myRanking(q.question, messages, k))
//   console.log(r.recall, r.fullyHit, r.total)
'use strict'
const path = require('node:path')
const { rankKeywordCount, messagesFromFixture } = require('./keyword-baseline')

const FIXTURES = path.join(__dirname, '..', 'fixtures')
const channel = require(path.join(FIXTURES, 'retrieval-channel.json'))
const questions = require(path.join(FIXTURES, 'retrieval-questions.json'))
const messages = messagesFromFixture(channel)

/**
 * @param {number} k
 * @param {(question: object, messages: object[], k: number) => string[]} rankFn
 * @returns {Promise<{k: number, recall: number, fullyHit: number, total: number,
 *            perQuestion: {id: string, hit: number, of: number, ranks: (number|null)[], top: string[]}[]}>}
 */
async function recallAt(k, rankFn) {
  const perQuestion = []
  let sum = 0
  let fullyHit = 0
  for (const q of questions) {
    const ranked = (await rankFn(q, messages, k)) || []
    const top = ranked.slice(0, k)
    const ranks = q.targets.map((t) => {
      const i = ranked.indexOf(t)
      return i < 0 ? null : i + 1
    })
    const hit = q.targets.filter((t) => top.includes(t)).length
    sum += hit / q.targets.length
    if (hit === q.targets.length) fullyHit++
    perQuestion.push({ id: q.id, hit, of: q.targets.length, ranks, top })
  }
  return { k, recall: questions.length ? sum / questions.length : 0, fullyHit, total: questions.length, perQuestion }
}

// ---------------------------------------------------------------- optional since/authors filter

const fold = (s) =>
  String(s)
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .trim()

/** User ids whose display name, real name or handle matches one of `names` (accent- and case-insensitive). */
function resolveAuthors(names) {
  const wanted = new Set(names.map(fold))
  const ids = new Set()
  for (const u of Object.values(channel.users || {})) {
    const candidates = [u.name, u.real_name, u.profile && u.profile.display_name, u.profile && u.profile.real_name]
    if (candidates.some((c) => c && wanted.has(fold(c)))) ids.add(u.id)
  }
  return ids
}

/** The messages a question's `since` / `authors` allow (all of them when both are empty). */
function applyFilters(q, msgs) {
  let out = msgs
  if (q.since) {
    const since = Date.parse(q.since.length === 10 ? `${q.since}T00:00:00Z` : q.since) / 1000
    out = out.filter((m) => Number(m.ts.split('.')[0]) >= since)
  }
  if (q.authors && q.authors.length) {
    const ids = resolveAuthors(q.authors)
    out = out.filter((m) => ids.has(m.user))
  }
  return out
}

// ---------------------------------------------------------------- the baseline as a rankFn

const keywordBaseline = (q, msgs, k = 8) => rankKeywordCount(q.question, msgs, k)
const keywordBaselineFiltered = (q, msgs, k = 8) => rankKeywordCount(q.question, applyFilters(q, msgs), k)

// ---------------------------------------------------------------- fixture checks (--check)

const STOP = new Set(
  (
    // en
    'the a an and or but of to in on at for from by with about into over after before than then ' +
    'is are was were be been being do does did done have has had will would should could can may ' +
    'what which who whom whose when where why how that this these those there here it its we us our ' +
    'you your they them their he she his her i me my any all every some no not now new old get got ' +
    'just still also again ever end up out off per make made much many more most back one two ' +
    // de
    'der die das den dem des ein eine einen einem einer und oder aber ist sind war hat haben wer was ' +
    'wie wo warum am im vom zum zur von mit auf für an bei nach noch schon jetzt ' +
    // fr
    'le la les un une des du de et ou est a été ont qui que quoi quel quelle pour par sur dans avec on ' +
    'ce cet cette comment pourquoi ' +
    // es
    'el los las lo un una unos unas y o es son fue qué que con por para del al se le ya cómo cuándo'
  )
    .split(/\s+/)
    .filter(Boolean),
)

const CJK = /[\u3040-\u30ff\u3400-\u9fff\uff66-\uff9f]/
const HIRAGANA_ONLY = /^[\u3040-\u309f]+$/

function contentWords(text) {
  const out = new Set()
  for (const tok of fold(text).match(/[\p{L}\p{N}_'-]+/gu) || []) {
    for (const part of [tok, ...tok.split(/[_'-]+/)]) {
      const w = part.replace(/^[_'-]+|[_'-]+$/g, '')
      if (w.length < 2 || STOP.has(w) || CJK.test(w) || /^\d+$/.test(w)) continue
      out.add(w)
    }
  }
  return out
}

function cjkBigrams(text) {
  const out = new Set()
  for (const run of text.match(/[\u3040-\u30ff\u3400-\u9fff\uff66-\uff9f]+/g) || []) {
    for (let i = 0; i + 2 <= run.length; i++) {
      const bg = run.slice(i, i + 2)
      if (!HIRAGANA_ONLY.test(bg)) out.add(bg)
    }
  }
  return out
}

// same word, or an inflected / compound variant: one is a prefix of the other with at least
// 4 shared letters (flag/flagging, invoice/invoices), or a ≥5-letter word inside a compound
// (limit/speicherlimit)
function variant(a, b) {
  if (a === b) return true
  const [s, l] = a.length <= b.length ? [a, b] : [b, a]
  if (s.length >= 4 && l.startsWith(s)) return true
  if (s.length >= 5 && l.includes(s)) return true
  let p = 0
  while (p < s.length && s[p] === l[p]) p++
  return p >= 5 && p >= s.length - 3 // deletes/deleted, renouvellement/renouvellements
}

function sharedWords(question, target) {
  const qw = contentWords(question)
  const tw = contentWords(target)
  const shared = []
  for (const a of qw) for (const b of tw) if (variant(a, b)) shared.push(a === b ? a : `${a}~${b}`)
  const tb = cjkBigrams(target)
  for (const bg of cjkBigrams(question)) if (tb.has(bg)) shared.push(bg)
  return { shared: [...new Set(shared)], questionWords: qw }
}

function check() {
  const problems = []
  const byTs = new Map(messages.map((m) => [m.ts, m]))
  // ts format, order and uniqueness
  const all = []
  for (const m of channel.messages) all.push(m)
  for (const [root, thread] of Object.entries(channel.replies)) {
    if (thread[0].ts !== root) problems.push(`replies[${root}] does not start with its root`)
    const rootMsg = channel.messages.find((m) => m.ts === root)
    if (!rootMsg) problems.push(`thread ${root} has no root in messages`)
    else {
      if (rootMsg.reply_count !== thread.length - 1) problems.push(`thread ${root}: reply_count mismatch`)
      if (rootMsg.latest_reply !== thread[thread.length - 1].ts) problems.push(`thread ${root}: latest_reply mismatch`)
    }
    for (let i = 1; i < thread.length; i++) {
      const r = thread[i]
      if (r.thread_ts !== root) problems.push(`reply ${r.ts}: thread_ts mismatch`)
      if (!(r.ts > thread[i - 1].ts)) problems.push(`reply ${r.ts}: out of order`)
      all.push(r)
    }
  }
  for (const m of all) if (!/^\d{10}\.\d{6}$/.test(m.ts)) problems.push(`bad ts ${m.ts}`)
  for (let i = 1; i < channel.messages.length; i++)
    if (!(channel.messages[i].ts > channel.messages[i - 1].ts)) problems.push(`channel messages out of order at ${i}`)
  const texts = new Map()
  for (const m of messages) {
    if (texts.has(m.text)) problems.push(`duplicate text: ${m.text}`)
    texts.set(m.text, m.ts)
  }
  // questions
  const ids = new Set()
  const report = []
  for (const q of questions) {
    if (ids.has(q.id)) problems.push(`duplicate question id ${q.id}`)
    ids.add(q.id)
    if (!q.targets.length) problems.push(`${q.id}: no targets`)
    for (const t of q.targets) {
      const m = byTs.get(t)
      if (!m) {
        problems.push(`${q.id}: target ${t} does not exist`)
        continue
      }
      if (q.since && Number(t.split('.')[0]) < Date.parse(`${q.since}T00:00:00Z`) / 1000)
        problems.push(`${q.id}: target ${t} is before since ${q.since}`)
      if (q.authors && q.authors.length && !resolveAuthors(q.authors).has(m.user))
        problems.push(`${q.id}: target ${t} is not by ${q.authors.join(', ')}`)
      const { shared, questionWords } = sharedWords(q.question, m.text)
      // Only questions tagged `paraphrase` may share no word with their target (they
      // measure what no keyword ranking can find).
      if (!shared.length && !(q.tags || []).includes('paraphrase'))
        problems.push(`${q.id}: shares no content word with target ${t}`)
      const exact = [...questionWords].filter((w) => contentWords(m.text).has(w))
      report.push(`${q.id} ${t}  shared: ${shared.join(', ')}  (${exact.length}/${questionWords.size} question words verbatim)`)
    }
  }
  return { problems, report }
}

// ---------------------------------------------------------------- CLI

function printResult(label, r, verbose) {
  if (verbose) {
    for (const p of r.perQuestion) {
      const q = questions.find((x) => x.id === p.id)
      const mark = p.hit === p.of ? 'HIT ' : p.hit ? 'PART' : 'MISS'
      const ranks = p.ranks.map((x) => (x === null ? '-' : x)).join(',')
      console.log(`  ${mark} ${p.id} [${q.lang}${q.tags ? ' ' + q.tags.join(',') : ''}] ${p.hit}/${p.of} rank ${ranks}  ${q.question}`)
    }
  }
  console.log(`${label}: recall@${r.k} = ${r.recall.toFixed(2)} (${r.fullyHit}/${r.total} questions fully hit)`)
}

async function main() {
  const argv = process.argv.slice(2)
  const verbose = argv.includes('--verbose')
  const ki = argv.indexOf('--k')
  const k = ki >= 0 ? Number(argv[ki + 1]) : 8
  if (argv.includes('--check')) {
    const { problems, report } = check()
    if (verbose) for (const line of report) console.log(line)
    const threads = Object.keys(channel.replies).length
    const replies = Object.values(channel.replies).reduce((s, t) => s + t.length - 1, 0)
    console.log(
      `fixture: ${messages.length} messages (${messages.length - replies} top-level, ${replies} replies in ${threads} threads), ${questions.length} questions`,
    )
    if (problems.length) {
      for (const p of problems) console.log(`PROBLEM ${p}`)
      process.exitCode = 1
    } else console.log('fixture check: ok')
  }
  printResult('keyword-count (original)', await recallAt(k, keywordBaselineFiltered), verbose)
  let addon
  try {
    addon = require('..')
  } catch (e) {
    console.log(`channel_context: not measured, the addon is not built (${e.message.split('\n')[0]})`)
    return
  }
  const { loadStore, rankWithTools } = require('./retrieval-store')
  const tools = loadStore(addon.ChannelStore)
  printResult('channel_context (addon)', await recallAt(k, (q) => rankWithTools(tools, q, k)), verbose)
}

if (require.main === module) {
  main().catch((e) => {
    console.error(e)
    process.exitCode = 1
  })
}

module.exports = { recallAt, applyFilters, resolveAuthors, keywordBaseline, keywordBaselineFiltered, messages, questions, channel, check }
