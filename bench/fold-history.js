#!/usr/bin/env node
// Does the OpenClaw engine's context depend on how its lane's folds happened? The same
// long chats (bench/long-chats.js, reshaped by bench/long-turns.js as a user and an
// assistant whose turns run long), fed to three engines at each budget:
//   - every turn: the host assembles before each user turn (its session's transcript as
//     the messages, the turn as the prompt) and calls afterTurn after each message, so
//     the engine folds at its own fold marks;
//   - fed only: afterTurn after each message and no assembly (a host that assembles
//     rarely): the store's own compaction triggers fold;
//   - restarted: every turn for the first half of the sessions, then the engine disposed
//     and a new one opened on the same file, fed only from there (a gateway restarted,
//     then a host that assembles rarely).
// Then each question is asked once per budget, as a new turn of the chat's last session
// (its transcript as the messages) and as a new session (no messages), and the share of
// its evidence turns found verbatim in the context is reported per engine, in one run.
// Issue 63 #3 asks the fed and restarted engines to hold what the every-turn one holds,
// within 2 points.
//
//   node bench/fold-history.js [--chats N] [--budgets 1000,2000,4000] [--json]
'use strict'

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { createContextEngine } = require(path.join(__dirname, '..', 'openclaw'))
const { loadLongChats } = require('./long-chats')
const { lengthenAssistantTurns } = require('./long-turns')
const { engineContext } = require('./engine-context')

const chatsArg = process.argv.indexOf('--chats')
const CHATS = chatsArg > 0 ? Number(process.argv[chatsArg + 1]) : 2
const budgetsArg = process.argv.indexOf('--budgets')
const BUDGETS = (budgetsArg > 0 ? process.argv[budgetsArg + 1] : '1000,2000,4000').split(',').map(Number)
const OPTIONS = { history: false, threadStatus: false, threadBlock: false }
const FEEDS = ['every turn', 'fed only', 'restarted']
const ASKS = ['in its session', 'new session']

const message = (t) => ({ id: t.id, role: t.role, content: t.text, timestamp: t.ts })

/** Feeds `sessions` to `engine`, assembling before each user turn when `assembling`. */
async function feed(engine, chat, sessions, budget, assembling) {
  const sessionKey = `agent:main:bench:direct:${chat.id}`
  for (const s of sessions) {
    const sessionId = `${chat.id}-${s.start}`
    const transcript = []
    for (const t of s.turns) {
      if (assembling && t.role === 'user') await engine.assemble({ sessionId, sessionKey, messages: transcript.slice(), prompt: t.text, tokenBudget: budget })
      transcript.push(message(t))
      await engine.afterTurn({ sessionId, sessionKey, messages: transcript.slice() })
    }
  }
}

/** The engine of `how` after the whole chat, at `budget`. */
async function fedEngine(how, chat, budget, dir) {
  const file = path.join(dir, `${how.replace(/ /g, '-')}-${budget}.sqlite`)
  let engine = createContextEngine({ ...OPTIONS, path: file })
  if (how === 'restarted') {
    const half = Math.floor(chat.sessions.length / 2)
    await feed(engine, chat, chat.sessions.slice(0, half), budget, true)
    await engine.dispose()
    engine = createContextEngine({ ...OPTIONS, path: file })
    await feed(engine, chat, chat.sessions.slice(half), budget, false)
  } else {
    await feed(engine, chat, chat.sessions, budget, how === 'every turn')
  }
  return engine
}

async function main() {
  const chats = (await loadLongChats({ count: CHATS })).slice(0, CHATS)
  lengthenAssistantTurns(chats)
  const acc = new Map()
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fold-history-'))
  try {
    for (const chat of chats) {
      const byId = new Map(chat.sessions.flatMap((s) => s.turns).map((t) => [t.id, t]))
      const last = chat.sessions[chat.sessions.length - 1]
      const sessionKey = `agent:main:bench:direct:${chat.id}`
      for (const budget of BUDGETS) {
        for (const how of FEEDS) {
          const engine = await fedEngine(how, chat, budget, dir)
          for (const q of chat.questions) {
            const evidence = q.evidence.map((id) => byId.get(id).text)
            for (const ask of ASKS) {
              const own = ask === 'in its session'
              const out = await engine.assemble({
                sessionId: own ? `${chat.id}-${last.start}` : `${chat.id}-ask`,
                sessionKey,
                messages: own ? last.turns.map(message) : [],
                prompt: q.question,
                tokenBudget: budget,
              })
              const text = engineContext(out)
              const key = `${how}|${ask}|${budget}`
              const a = acc.get(key) ?? { evidence: 0, n: 0 }
              a.evidence += evidence.filter((t) => text.includes(t)).length / evidence.length
              a.n++
              acc.set(key, a)
            }
          }
          await engine.dispose()
        }
      }
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
  const rows = [...acc].map(([key, a]) => {
    const [how, ask, budget] = key.split('|')
    return { feed: how, ask, budget: Number(budget), evidenceRecall: a.evidence / a.n, questions: a.n }
  })
  if (process.argv.includes('--json')) {
    console.log(JSON.stringify({ chats: CHATS, rows }, null, 2))
    return
  }
  console.log(`evidence recall, ${CHATS} long-turn chats, ${rows[0].questions} questions per cell`)
  for (const ask of ASKS) {
    console.log(`\nasked ${ask}:`)
    console.log(`| engine fed | ${BUDGETS.map((b) => b.toLocaleString('en-US')).join(' | ')} |`)
    console.log(`| --- | ${BUDGETS.map(() => '---:').join(' | ')} |`)
    for (const how of FEEDS) {
      const cells = BUDGETS.map((b) => rows.find((r) => r.feed === how && r.ask === ask && r.budget === b))
      console.log(`| ${how} | ${cells.map((r) => `${(r.evidenceRecall * 100).toFixed(1)}%`).join(' | ')} |`)
    }
  }
  const gaps = rows
    .filter((r) => r.feed !== 'every turn')
    .map((r) => ({ ...r, gap: r.evidenceRecall - rows.find((e) => e.feed === 'every turn' && e.ask === r.ask && e.budget === r.budget).evidenceRecall }))
  const far = gaps.filter((g) => Math.abs(g.gap) > 0.02)
  console.log(`\ncells more than 2 points from the every-turn engine: ${far.length} of ${gaps.length}${far.length ? `: ${far.map((g) => `${g.feed} ${g.ask} ${g.budget} ${(g.gap * 100).toFixed(1)}`).join(', ')}` : ''}`)
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
