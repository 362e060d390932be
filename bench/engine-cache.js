#!/usr/bin/env node
// How much of each request a prompt cache can reuse when the OpenClaw engine builds it.
// A 60-turn thread (the first turns of a long chat of bench/long-chats.js, one person the
// user, the other the assistant) is replayed through the engine as OpenClaw drives it:
// each turn, `assemble` gets the transcript before the turn and the user's prompt, the
// request is the base system prompt with the engine's addition, the kept messages and the
// prompt; then `afterTurn` gets the transcript with the turn. Anthropic caches a
// request's byte prefix (a cache read costs a tenth of an input token, a cache write
// 1.25x), so for each request:
//   - prefix share: the share of its tokens in the longest byte prefix it has in common
//     with the previous request;
//   - cache-weighted input cost: 0.1 x those tokens + 1.25 x the rest.
// Raced against sending the whole transcript each turn (no engine), in the same run.
// Tokens by @anthropic-ai/tokenizer. Two budgets: what OpenClaw passes for a 200K model,
// and a tight one the thread outgrows (the kept window then moves).
// Targets (at OpenClaw's budget, where the thread fits and goes verbatim): median prefix
// share >= 0.9; cost at most 1.05x the whole transcript's (what the engine adds, cached).
// bench/session-replay.js measures whole sessions with a host-sized system prompt.
//
//   node bench/engine-cache.js [--json] [--recall 2000,500,0]   (recallTokens values to run;
//   default: the engine's defaults, then retrieval off)
'use strict'

const path = require('node:path')
const { createContextEngine } = require(path.join(__dirname, '..', 'openclaw'))
const { loadLongChats } = require('./long-chats')
const { referenceTokens } = require('./reference-tokens')
const { DEFAULTS } = require(path.join(__dirname, '..', 'openclaw', 'options.js'))

const TURNS = 60
const BUDGETS = [{ name: "OpenClaw's (200K model)", tokens: 180_000 }, { name: 'tight', tokens: 1_500 }]
const BASE_SYSTEM = 'You are the team assistant in a Slack workspace. Answer briefly and cite the thread when you can.'
const SESSION_KEY = 'agent:main:slack:channel:c0bench:thread:1700000000.000100'
const TARGETS = { medianPrefixShare: 0.9, costVsWhole: 1.05 }
/** The engine's retrieval per turn (`--recall`): its default, and off. */
const recallArg = process.argv.indexOf('--recall')
const RECALL =
  recallArg > 0
    ? process.argv[recallArg + 1].split(',').map((t) => ({ name: `recallTokens ${t}`, options: { recallTokens: Number(t) } }))
    : [
        { name: `defaults (recallTokens ${DEFAULTS.recallTokens})`, options: {} },
        { name: 'recallTokens 0 (off)', options: { recallTokens: 0 } },
      ]
const READ = 0.1
const WRITE = 1.25

const median = (xs) => {
  const s = xs.slice().sort((a, b) => a - b)
  return s.length === 0 ? 0 : s[Math.floor(s.length / 2)]
}

/** The thread: TURNS user turns, each answered, from the chat's first turns (runs of one speaker joined). */
async function thread() {
  const [chat] = await loadLongChats({ count: 1 })
  const merged = []
  for (const t of chat.sessions.flatMap((s) => s.turns)) {
    const last = merged[merged.length - 1]
    if (last && last.role === t.role) last.text += ` ${t.text}`
    else merged.push({ role: t.role, text: t.text })
  }
  const start = merged.findIndex((t) => t.role === 'user')
  return merged.slice(start, start + 2 * TURNS)
}

function commonPrefix(a, b) {
  const n = Math.min(a.length, b.length)
  let i = 0
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++
  return i
}

function request(system, messages, prompt) {
  return JSON.stringify({ system, messages: [...messages, { role: 'user', content: prompt }] })
}

/** Per request: tokens, those in the prefix shared with the previous one. */
function cacheFigures(requests) {
  const rows = []
  let previous = ''
  for (const r of requests) {
    const total = referenceTokens(r)
    const shared = commonPrefix(previous, r)
    const cached = shared === 0 ? 0 : referenceTokens(r.slice(0, shared))
    rows.push({ total, cached: Math.min(cached, total) })
    previous = r
  }
  const shares = rows.slice(1).map((x) => x.cached / x.total)
  const cost = rows.reduce((n, x) => n + READ * x.cached + WRITE * (x.total - x.cached), 0)
  const tokens = rows.reduce((n, x) => n + x.total, 0)
  return { medianPrefixShare: median(shares), cost, tokens }
}

async function replay(turns, budget, options) {
  const engine = createContextEngine({ path: ':memory:', ...options })
  const transcript = []
  const engineRequests = []
  const wholeRequests = []
  const t0 = 1_700_000_000_000
  for (let i = 0; i + 1 < turns.length && engineRequests.length < TURNS; i += 2) {
    const prompt = turns[i].text
    const ts = t0 + i * 60_000
    const out = await engine.assemble({ sessionId: 'bench', sessionKey: SESSION_KEY, messages: transcript.slice(), prompt, tokenBudget: budget })
    const system = out.systemPromptAddition ? `${BASE_SYSTEM}\n\n${out.systemPromptAddition}` : BASE_SYSTEM
    engineRequests.push(request(system, out.messages, prompt))
    wholeRequests.push(request(BASE_SYSTEM, transcript, prompt))
    transcript.push({ role: 'user', content: prompt, timestamp: ts })
    transcript.push({ role: 'assistant', content: [{ type: 'text', text: turns[i + 1].text }], timestamp: ts + 30_000 })
    await engine.afterTurn({ sessionId: 'bench', sessionKey: SESSION_KEY, messages: transcript.slice(), prePromptMessageCount: transcript.length - 2 })
  }
  const diagnostics = engine.diagnostics.slice()
  await engine.dispose()
  return { engine: cacheFigures(engineRequests), whole: cacheFigures(wholeRequests), diagnostics }
}

async function main() {
  const turns = await thread()
  const results = []
  for (const b of BUDGETS) {
    for (const recall of RECALL) {
      const r = await replay(turns, b.tokens, recall.options)
      results.push({ budget: b.name, tokenBudget: b.tokens, recall: recall.name, ...r, costVsWhole: r.engine.cost / r.whole.cost })
    }
  }
  const main = results[0]
  const met = {
    medianPrefixShare: main.engine.medianPrefixShare >= TARGETS.medianPrefixShare,
    costVsWhole: main.costVsWhole <= TARGETS.costVsWhole,
  }
  if (process.argv.includes('--json')) {
    console.log(JSON.stringify({ turns: TURNS, results, targets: TARGETS, met }, null, 2))
    return
  }
  console.log(`engine cache: a ${TURNS}-turn thread replayed through the OpenClaw engine`)
  console.log('budget                          engine config                     median prefix share (engine / whole)   input tokens (engine / whole)   cache-weighted cost engine / whole')
  for (const r of results) {
    console.log(
      `${`${r.budget} ${r.tokenBudget}`.padEnd(32)}${r.recall.padEnd(34)}${`${r.engine.medianPrefixShare.toFixed(4)} / ${r.whole.medianPrefixShare.toFixed(4)}`.padStart(22)}${`${r.engine.tokens} / ${r.whole.tokens}`.padStart(33)}${r.costVsWhole.toFixed(2).padStart(20)}x`,
    )
    if (r.diagnostics.length > 0) console.log(`  diagnostics: ${r.diagnostics.map((d) => d.message).join('; ')}`)
  }
  console.log(`targets (OpenClaw's budget, default config): median prefix share >= ${TARGETS.medianPrefixShare} ${met.medianPrefixShare ? 'met' : 'missed'}; cost <= ${TARGETS.costVsWhole}x the whole transcript's ${met.costVsWhole ? 'met' : 'missed'}`)
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
