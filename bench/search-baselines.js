// Plain-JavaScript channel search, the baselines bench/search.js races the addon's
// `channel_context` tool against:
//
//   - linear: the original algorithm. Query words are the intent lower-cased, split on
//     anything but [a-z0-9], at least 3 characters, deduplicated; a message scores the
//     number of those words its lower-cased text contains (substring match, so "deploy"
//     also matches "deployed"); messages scoring > 0 sorted by score desc, then ts desc;
//     the first `limit`. Each text is lower-cased again for every query, as the original
//     did.
//   - linear-prelowered: the same scan over texts lower-cased once at build time (the
//     cheap fix the original could have had), so the comparison is fair.
//   - minisearch: MiniSearch v7 with BM25 ranking, OR of the query terms, its default
//     tokenizer (split on Unicode spaces and punctuation) and term processing
//     (lower-case), no stored fields.
//
// Every search returns `[{ id, score }]`, best first, at most `limit` long.
'use strict'

const MiniSearch = require('minisearch')

const LIMIT = 8

const { queryWords, compareTs } = require('./keyword-baseline')
const byScoreThenNewest = (a, b) => b.score - a.score || compareTs(b.ts, a.ts)

// ---------------------------------------------------------------- linear

/** The original holds the messages as they are: nothing to build. */
function buildLinear(messages) {
  return { messages }
}

function linearSearch(index, intent, limit = LIMIT) {
  const words = queryWords(intent)
  if (words.length === 0) return []
  const { messages } = index
  const hits = []
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]
    const text = m.text.toLowerCase()
    let score = 0
    for (let j = 0; j < words.length; j++) if (text.includes(words[j])) score++
    if (score > 0) hits.push({ id: m.id, ts: m.ts, score })
  }
  hits.sort(byScoreThenNewest)
  return hits.slice(0, limit).map(({ id, score }) => ({ id, score }))
}

// ---------------------------------------------------------------- linear, pre-lowered

/** Lower-cases every text once; the messages stay as they are. */
function buildLinearPrelowered(messages) {
  const lowered = new Array(messages.length)
  for (let i = 0; i < messages.length; i++) lowered[i] = messages[i].text.toLowerCase()
  return { messages, lowered }
}

function linearPreloweredSearch(index, intent, limit = LIMIT) {
  const words = queryWords(intent)
  if (words.length === 0) return []
  const { messages, lowered } = index
  const hits = []
  for (let i = 0; i < lowered.length; i++) {
    const text = lowered[i]
    let score = 0
    for (let j = 0; j < words.length; j++) if (text.includes(words[j])) score++
    if (score > 0) hits.push({ id: messages[i].id, ts: messages[i].ts, score })
  }
  hits.sort(byScoreThenNewest)
  return hits.slice(0, limit).map(({ id, score }) => ({ id, score }))
}

// ---------------------------------------------------------------- MiniSearch (BM25)

const MINISEARCH_OPTIONS = {
  fields: ['text'],
  storeFields: [],
  idField: 'id',
  searchOptions: { combineWith: 'OR', bm25: { k: 1.2, b: 0.75, d: 0.5 } },
}

/** A MiniSearch index of `messages` (`{ id, text }`), built with one addAll. */
function buildMiniSearch(messages) {
  const ms = new MiniSearch(MINISEARCH_OPTIONS)
  ms.addAll(messages)
  return ms
}

function miniSearch(ms, intent, limit = LIMIT) {
  const results = ms.search(intent)
  const out = []
  for (let i = 0; i < results.length && i < limit; i++) out.push({ id: results[i].id, score: results[i].score })
  return out
}

module.exports = {
  LIMIT,
  MINISEARCH_OPTIONS,
  queryWords,
  buildLinear,
  linearSearch,
  buildLinearPrelowered,
  linearPreloweredSearch,
  buildMiniSearch,
  miniSearch,
}
