#!/usr/bin/env node
// Are the summaries worth their tokens? The long chats of bench/memory-recall.js (made from
// the public chitchat corpus by bench/long-chats.js), every turn stored in order with the
// default compaction after each; then, per chat, the lane's final summary is read against
// the questions (each with the turns that answer it):
//   - evidence share: the share of the summary's item tokens (by @anthropic-ai/tokenizer)
//     taken from turns some question needs (an item is a sentence of a turn, found in it
//     word for word), against the share those turns have of all turns' tokens (what items
//     drawn at random would give) and against the newest turns cut to the summary's size
//     (what a summary that keeps the latest text gives);
//   - questions the summary alone answers: those with an item from an evidence turn, and
//     those whose answer is in the summary's text (any case);
//   - records per 100 turns: the facts, preferences and outcomes compaction wrote, and the
//     questions whose evidence turn one of them states that the model's search tool
//     (`conversation_search`, the question as its query) lists among its `memories`.
// A report: no target is asserted here; the figures go to docs/benchmarks.md.
//
//   node bench/memory-summary.js [--json] [--chats N]
'use strict'

const path = require('node:path')
const { MemoryStore } = require(path.join(__dirname, '..'))
const { loadLongChats } = require('./long-chats')
const { referenceTokens } = require('./reference-tokens')

const JSON_OUT = process.argv.includes('--json')
const chatsArg = process.argv.indexOf('--chats')
const CHATS = chatsArg > 0 ? Number(process.argv[chatsArg + 1]) : 10

/** The items of a five-section summary: its `- ` lines, without `(none)`. */
function items(summary) {
  return summary
    .split('\n')
    .filter((l) => l.startsWith('- ') && l !== '- (none)')
    .map((l) => l.slice(2).replace(/…$/, '').trim())
    .filter((t) => t !== '')
}

async function main() {
  const chats = (await loadLongChats({ count: CHATS })).slice(0, CHATS)
  const totals = { itemTokens: 0, evidenceItemTokens: 0, turnTokens: 0, evidenceTurnTokens: 0, newestEvidenceTokens: 0, newestTokens: 0 }
  const asked = { questions: 0, byItem: 0, byAnswer: 0, byRecord: 0 }
  let records = 0
  let turnsTotal = 0
  const perChat = []
  for (const chat of chats) {
    const turns = chat.sessions.flatMap((s) => s.turns)
    turnsTotal += turns.length
    const needed = new Set(chat.questions.flatMap((q) => q.evidence))
    const memory = new MemoryStore()
    const sessionId = `bench:${chat.id}`
    let lane = null
    for (const t of turns) {
      ;[{ threadKey: lane }] = memory.ingest([{ sessionId, chatId: chat.id, messageId: t.id, role: t.role, text: t.text, ts: t.ts }])
      const done = memory.compact(sessionId, lane, { now: t.ts })
      if (done) records += done.records
    }
    const summary = memory.record(sessionId, 'thread_summary', lane)?.body ?? ''
    const tools = memory.tools({ sessionId, threadKey: lane })
    const turnText = new Map(turns.map((t) => [t.id, t.text]))
    for (const q of chat.questions) {
      const found = JSON.parse(tools.execute('conversation_search', { query: q.question, max_results: 1 }))
      const held = (found.memories ?? []).some((m) => m.kind !== 'thread_summary' && q.evidence.some((id) => turnText.get(id).includes(m.text.replace(/…$/, ''))))
      if (held) asked.byRecord++
    }
    memory.close()
    // Each item's turn: the first turn that holds it word for word.
    const sources = items(summary).map((text) => ({ text, turn: turns.find((t) => t.text.includes(text)) ?? null }))
    const itemTokens = sources.reduce((n, s) => n + referenceTokens(s.text), 0)
    const evidenceTokens = sources.filter((s) => s.turn && needed.has(s.turn.id)).reduce((n, s) => n + referenceTokens(s.text), 0)
    totals.itemTokens += itemTokens
    totals.evidenceItemTokens += evidenceTokens
    for (const t of turns) {
      const c = referenceTokens(t.text)
      totals.turnTokens += c
      if (needed.has(t.id)) totals.evidenceTurnTokens += c
    }
    // The newest turns, to the summary's size.
    let used = 0
    for (let i = turns.length - 1; i >= 0 && used < itemTokens; i--) {
      const c = referenceTokens(turns[i].text)
      used += c
      if (needed.has(turns[i].id)) totals.newestEvidenceTokens += c
    }
    totals.newestTokens += used
    const itemTurns = new Set(sources.filter((s) => s.turn).map((s) => s.turn.id))
    const lower = summary.toLowerCase()
    for (const q of chat.questions) {
      asked.questions++
      if (q.evidence.some((id) => itemTurns.has(id))) asked.byItem++
      if (lower.includes(q.answer.toLowerCase())) asked.byAnswer++
    }
    perChat.push({ chat: chat.id, turns: turns.length, items: sources.length, summaryTokens: referenceTokens(summary), unmatchedItems: sources.filter((s) => !s.turn).length })
  }
  const out = {
    chats: chats.length,
    turns: turnsTotal,
    questions: asked.questions,
    evidenceShare: {
      summary: totals.evidenceItemTokens / totals.itemTokens,
      allTurns: totals.evidenceTurnTokens / totals.turnTokens,
      newestTurns: totals.newestEvidenceTokens / totals.newestTokens,
    },
    questionsHeld: { byEvidenceItem: asked.byItem / asked.questions, byAnswerText: asked.byAnswer / asked.questions },
    questionsWithARecordFound: asked.byRecord / asked.questions,
    recordsPer100Turns: (100 * records) / turnsTotal,
    perChat,
  }
  if (JSON_OUT) {
    console.log(JSON.stringify(out, null, 2))
    return
  }
  const pct = (x) => `${(100 * x).toFixed(1)}%`
  console.log(`memory summaries: ${out.chats} chats, ${out.turns} turns, ${out.questions} questions; each chat's final summary`)
  console.log(`summary tokens from turns a question needs: ${pct(out.evidenceShare.summary)} (those turns' share of all turns: ${pct(out.evidenceShare.allTurns)}; of the newest turns cut to the summary's size: ${pct(out.evidenceShare.newestTurns)})`)
  console.log(`questions a summary alone holds: ${pct(out.questionsHeld.byEvidenceItem)} by an item of an evidence turn, ${pct(out.questionsHeld.byAnswerText)} by the answer's text`)
  console.log(`records (facts, preferences, outcomes) per 100 turns: ${out.recordsPer100Turns.toFixed(2)}; questions whose evidence a record states, found by the search tool: ${pct(out.questionsWithARecordFound)}`)
  for (const c of perChat) console.log(`  ${c.chat}: ${c.turns} turns, summary ${c.summaryTokens} tokens, ${c.items} items (${c.unmatchedItems} not found in a turn)`)
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
