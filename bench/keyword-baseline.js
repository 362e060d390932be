// The channel-search ranking the addon replaces, reproduced as it was: count how many query
// words occur (as substrings) in each message, best count first, newest first among equals.
//
// Known weakness, kept on purpose: query words are split on anything that is not [a-z0-9], so
// accented words are cut into pieces ("déploiement" → "ploiement") and Japanese text yields no
// query words at all; stop words ("the", "what") count like any other word.
'use strict'

// Slack ts strings ("1780000000.000100") always carry six fraction digits: a longer string is
// later, equal lengths compare as text (parseFloat would round away the microseconds).
function compareTs(a, b) {
  return a.length - b.length || (a < b ? -1 : a > b ? 1 : 0)
}

/**
 * @param {string} intent the user's question
 * @param {{id: string, ts: string, text: string}[]} messages
 * @param {number} [maxResults=8]
 * @returns {string[]} ids, best first
 */
/** The original's query words: lower-cased ASCII alphanumeric runs of >= 3 chars, deduplicated. */
function queryWords(intent) {
  return [
    ...new Set(
      intent
        .toLowerCase()
        .split(/[^a-z0-9]+/)
        .filter((w) => w.length >= 3),
    ),
  ]
}

function rankKeywordCount(intent, messages, maxResults = 8) {
  const words = queryWords(intent)
  if (words.length === 0) return []
  const scored = []
  for (const m of messages) {
    const text = (m.text || '').toLowerCase()
    let score = 0
    for (const w of words) if (text.includes(w)) score++
    if (score > 0) scored.push({ m, score })
  }
  scored.sort((a, b) => b.score - a.score || compareTs(b.m.ts, a.m.ts))
  return scored.slice(0, maxResults).map((s) => s.m.id)
}

/**
 * Every message of a fixture (channel messages and thread replies) once, oldest first.
 * Thread roots appear both in `messages` and at the head of their `replies` list, and
 * thread_broadcast replies appear in both too: deduplicated by ts.
 * @returns {{id: string, ts: string, text: string, user: string|undefined, thread_ts: string|undefined}[]}
 */
function messagesFromFixture(fixture) {
  const byTs = new Map()
  const add = (m) => {
    if (!m || !m.ts || byTs.has(m.ts)) return
    byTs.set(m.ts, { id: m.ts, ts: m.ts, text: m.text || '', user: m.user, thread_ts: m.thread_ts })
  }
  for (const m of fixture.messages || []) add(m)
  for (const thread of Object.values(fixture.replies || {})) for (const m of thread) add(m)
  return [...byTs.values()].sort((a, b) => compareTs(a.ts, b.ts))
}

module.exports = { rankKeywordCount, messagesFromFixture, compareTs, queryWords }
