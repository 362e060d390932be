'use strict'
// A scripted 300-message chat session across 4 thread keys (a Telegram group with two
// forum topics, a reply chain and the root lane), replayed turn by turn through the
// MemoryStore as a gateway would: store the user message, compact its lane when due,
// assemble its context within the budget, store the answer. For every turn it records
// the tokens of the engine's context and of the whole history a naive gateway would send.
// Used by bench/memory.js (the table in docs/benchmarks.md) and __test__/memory-acceptance.spec.ts.

const path = require('node:path')
const { MemoryStore, tokenEstimate } = require(path.join(__dirname, '..'))

const SESSION = 'telegram:chat:-1001234'
const CHAT = '-1001234'
const T0 = 1_775_835_600_000

// What each lane talks about: its user lines cycle through these, numbered.
const LANES = [
  {
    name: 'topic:release',
    topicId: '11',
    user: [
      'Can we cut release 4.{n} today?',
      'We decided to freeze the branch for 4.{n} at noon.',
      'The 4.{n} smoke tests failed on the payments suite, again.',
      'I will follow up with QA about the flaky checkout test in 4.{n}.',
      'Deadline for 4.{n} is Friday and we must keep the changelog short.',
    ],
  },
  {
    name: 'topic:hiring',
    topicId: '12',
    user: [
      'Who is interviewing candidate {n} this week?',
      'We agreed to make an offer to candidate {n} if references pass.',
      'Candidate {n} prefers remote work with a monthly office day.',
      'Remind me to send the take-home task to candidate {n}.',
      'The budget for role {n} is fixed at the senior band.',
    ],
  },
  {
    name: 'reply-chain',
    user: [
      'What broke in the nightly import run {n}?',
      'Rolled back import run {n} after the schema check failed.',
      'We will add a guard for empty CSV files before run {n} repeats.',
      'Fixed the timezone parsing in run {n}, it passed locally.',
      'I prefer alerts for run {n} to go to the data channel.',
    ],
  },
  {
    name: 'root',
    user: [
      'Lunch plans for Thursday {n}?',
      'We use the shared calendar for the offsite {n}, always.',
      'Does anyone have the slides from demo {n}?',
      'Approved the travel budget for trip {n}.',
      'Need to book the room for retro {n}.',
    ],
  },
]

function fill(template, n) {
  return template.replace(/\{n\}/g, String(n))
}

function answer(text) {
  return `Noted: ${text.replace(/\?$/, '.')} I will keep that in mind and report back when it changes.`
}


/**
 * Replays `messages` (default 300) messages, returns per-turn figures:
 * `{ turn, lane, engine, whole }` where `engine` is the assembled context's tokens and
 * `whole` the tokens of every earlier message of the session plus the new one.
 */
function replay({ messages = 300, budget = 4_000, path: file = ':memory:' } = {}) {
  const memory = new MemoryStore({ path: file })
  const rows = []
  // The whole history as one text, counted as the engine counts its context (the token
  // estimator's upper bound).
  let history = ''
  let whole = 0
  const add = (text) => {
    history += `${text}\n`
    whole = tokenEstimate(history).upperBound
  }
  const counts = LANES.map(() => 0)
  let id = 0
  try {
    // The root message the reply chain hangs off (message 0, in the root lane).
    const opener = 'Thread for the nightly import runs: reply here.'
    memory.ingest([{ sessionId: SESSION, chatId: CHAT, ts: T0, messageId: '0', role: 'user', text: opener }])
    add(opener)
    let chainTip = '0'
    id = 1
    for (let turn = 0; id < messages; turn++) {
      const laneIndex = turn % LANES.length
      const lane = LANES[laneIndex]
      const n = counts[laneIndex]++
      const text = fill(lane.user[n % lane.user.length], Math.floor(n / lane.user.length) + 1)
      const userId = String(++id)
      const placement = {}
      if (lane.topicId) placement.topicId = lane.topicId
      if (lane.name === 'reply-chain') placement.replyTo = chainTip
      const base = { sessionId: SESSION, chatId: CHAT, ts: T0 + id * 60_000 }
      const [{ threadKey }] = memory.ingest([{ ...base, messageId: userId, role: 'user', text, ...placement }])
      memory.compact(SESSION, threadKey, { now: base.ts })
      const assembled = memory.assemble({
        sessionId: SESSION,
        threadKey,
        policy: 'You are the team assistant. Never share credentials.',
        userMessage: text,
        budgetTokens: budget,
        now: base.ts,
      })
      add(text)
      rows.push({ turn: rows.length + 1, lane: lane.name, threadKey, engine: assembled.tokens.total, whole, text: assembled.text })
      const reply = answer(text)
      const assistantId = String(++id)
      const answerPlacement = lane.name === 'reply-chain' ? { replyTo: userId } : placement
      memory.ingest([{ ...base, ts: base.ts + 1_000, messageId: assistantId, role: 'assistant', text: reply, ...answerPlacement }])
      if (lane.name === 'reply-chain') chainTip = assistantId
      add(reply)
    }
  } finally {
    memory.close()
  }
  return rows
}

module.exports = { replay, LANES, SESSION }
