#!/usr/bin/env node
// The token-bloat benchmark: the bundled channel's longest Slack thread replayed as agent
// turns (each human reply is a turn the agent answers in the thread; two images and a PDF
// are shared along the way), through two gateways that both run a resumed model session
// (every Messages API request carries the session's history):
//
//   naive    re-sends the thread history in every turn's prompt (OpenClaw's
//            "[Thread history - for context]" section) and re-inlines every file of the
//            thread as base64; its session compacts when a request passes 160,000 tokens
//            (near a 200k window, as agent runtimes do)
//   package  puts the ChannelStore's context (snapshot and budgeted thread) in the first
//            turn only, strips the thread history from resumed turns (stripThreadContext),
//            sends each file's bytes once and references it after (attachment manifest),
//            compacts its session with the MemoryStore's rule (30 messages or 2,500 tokens,
//            keep 10) and re-attaches the thread's media once after a compaction
//            (postCompactionRecovery), by reference
//
// Per turn: the request's text tokens by the reference tokenizer (@anthropic-ai/tokenizer;
// media counted in bytes, not tokens), media bytes sent, and the chat-API calls the
// package's store made. Prints the per-turn curve as a terminal chart and the totals.
//
//   node bench/token-bloat.js [--json]
'use strict'

const crypto = require('node:crypto')
const path = require('node:path')
const engine = require(path.join(__dirname, '..'))
const { referenceTokens } = require('./reference-tokens')
const { FakeSlack } = require('../demo/fake-slack')

const data = require('../fixtures/slack-channel.json')
const CHANNEL = data.channel.id
const AGENT = { id: 'U04ASSIST', name: 'assistant' }
/** Files shared along the way: at the turn, a reply carries it. */
const MEDIA = new Map([
  [6, { name: 'checkout-p99.png', mimetype: 'image/png', size: 182_311 }],
  [31, { name: 'incident-timeline.pdf', mimetype: 'application/pdf', size: 431_804 }],
  [58, { name: 'pool-metrics.png', mimetype: 'image/png', size: 247_950 }],
])
const NAIVE_COMPACT_AT = 160_000
const TARGETS = { tokenRatio: 0.1 }

const names = new Map(Object.values(data.users).map((u) => [u.id, u.profile?.display_name || u.real_name || u.name]))
const nameOf = (id) => names.get(id) ?? id

/** Tokens of texts, each counted once (sessions re-send the same texts every turn). */
const counted = new Map()
function tokensOf(text) {
  let n = counted.get(text)
  if (n === undefined) {
    n = referenceTokens(text)
    counted.set(text, n)
  }
  return n
}

/** One thread entry as the gateway writes its thread history. */
function entry(m) {
  const when = new Date(Number(m.ts) * 1000).toISOString().slice(0, 16).replace('T', ' ')
  return `[Slack ${nameOf(m.user)} (${m.user === AGENT.id ? 'assistant' : 'user'}) ${when} UTC] ${m.text}\n[slack message id: ${m.ts} channel: ${CHANNEL}]`
}

/** The agent's answer to a turn (its length is what matters). */
function answer(m, t) {
  const words = m.text.split(/\s+/).slice(0, 12).join(' ')
  return `On turn ${t}: noted "${words}". Summary so far: the incident is tracked in this thread, the next step is with ${nameOf(m.user)}, and I will post an update when the metrics change.`
}

function fileOf(spec, t) {
  const id = `F0BLOAT${String(t).padStart(3, '0')}`
  // The file's content hash as the manifest records it (64 hex digits).
  const hash = crypto.createHash('sha256').update(id).digest('hex')
  return { id, name: spec.name, title: spec.name, mimetype: spec.mimetype, size: spec.size, url_private: `https://files.slack.com/files-pri/T04ACME/${id}/${spec.name}`, hash }
}

/** A session's request: system, history, this turn's prompt. */
function requestTokens(system, history, prompt) {
  return tokensOf(system) + history.reduce((n, h) => n + tokensOf(h.text), 0) + tokensOf(prompt)
}

async function main() {
  const [rootTs, thread] = Object.entries(data.replies).reduce((a, b) => (b[1].length > a[1].length ? b : a))
  const root = thread[0]
  // The channel up to the thread, as its events arrived; a fetch the store needed would go
  // to Slack (the demo's stand-in, which records calls) and show in apiCalls.
  let nowMs = Number(root.ts) * 1000
  const slack = new FakeSlack(data)
  slack.at(root.ts)
  const store = new engine.ChannelStore({ clock: () => nowMs, fetcher: slack.fetcher() })
  store.setChannel({ id: CHANNEL, name: data.channel.name, platform: 'slack' })
  store.setUsers([...names].map(([userId, displayName]) => ({ userId, displayName })).concat([{ userId: AGENT.id, displayName: AGENT.name, isBot: true }]))
  for (const m of data.messages.filter((x) => Number(x.ts) <= Number(root.ts))) {
    store.ingestSlackEvent({ type: 'message', channel: CHANNEL, ...m })
  }
  const post = (m) => {
    nowMs = Number(m.ts) * 1000
    slack.at(m.ts)
    store.ingestSlackEvent({ type: 'message', channel: CHANNEL, ...m })
  }

  const manifest = engine.createAttachmentManifest()
  const memory = new engine.MemoryStore()
  const session = `slack:${CHANNEL}`
  const posted = [root]
  const files = [] // { file, turn, message }
  const naive = { history: [], compactions: 0 }
  const pkg = { history: [], compactions: 0, recoveredAt: null }
  let system = null
  const rows = []
  let turn = 0
  let lastTs = Number(root.ts)
  for (const m of thread.slice(1)) {
    if (m.bot_id) {
      post(m)
      posted.push(m)
      continue
    }
    turn++
    const spec = MEDIA.get(turn)
    const msg = spec ? { ...m, files: [fileOf(spec, turn)] } : m
    post(msg)
    if (spec) files.push({ file: msg.files[0], turn, message: msg })
    const history = posted.map(entry).join('\n\n')
    const gatewayPrompt = `[Thread history - for context]\n${history}\n\n${msg.text}`
    // The package's store: context from what events brought, no call in the steady state.
    const built = await store.buildContext(CHANNEL, msg.ts, { threadId: rootTs })
    if (system === null) system = built.promptSection.slice(0, built.promptSection.indexOf('<channel_snapshot'))
    const context = built.promptSection.slice(system.length)

    // naive: the whole thread in every prompt, every file inlined again.
    const naiveRequest = requestTokens(system, naive.history, gatewayPrompt)
    const naiveBytes = naive.history.reduce((n, h) => n + h.bytes, 0) + files.reduce((n, f) => n + f.file.size, 0)
    const naiveInline = files.reduce((n, f) => n + f.file.size, 0)

    // package: context at session start, then stripped prompts; files once.
    let prompt
    if (turn === 1) prompt = `${context}\n\n${msg.text}`
    else {
      const stripped = engine.stripThreadContext(gatewayPrompt, { resumed: true })
      if (!stripped.stripped) throw new Error(`turn ${turn}: the thread history was not stripped (${stripped.reason})`)
      prompt = stripped.text
    }
    let pkgBytes = 0
    for (const f of files) {
      const hash = f.file.hash
      if (!engine.isAlreadyAttached(manifest, f.file.id, hash)) {
        pkgBytes += f.file.size
        engine.recordAttachment(manifest, { artifactId: f.file.id, displayName: f.file.name, mediaType: f.file.mimetype, contentHash: hash, sourceMessageId: f.message.ts, sourceThreadId: rootTs, turn })
        prompt += `\n[attached: ${f.file.name} (${f.file.id})]`
      }
    }
    if (pkg.recoveredAt === null && pkg.compactions > 0) {
      const r = engine.postCompactionRecovery(manifest, rootTs)
      if (r) prompt += `\n${r.preamble}\n${r.items.map((i) => `[attached: ${i.display_name} (${i.artifact_id})]`).join('\n')}`
      pkg.recoveredAt = turn
    }
    const pkgRequest = requestTokens(system, pkg.history, prompt)

    // The agent answers in the thread; both sessions keep the turn.
    const reply = answer(msg, turn)
    lastTs = Math.max(lastTs + 1, Math.floor(Number(msg.ts)) + 1)
    const agentMessage = { type: 'message', user: AGENT.id, bot_id: 'B04ASSIST', text: reply, ts: `${lastTs}.000001`, thread_ts: rootTs }
    post(agentMessage)
    posted.push(msg, agentMessage)
    naive.history.push({ text: gatewayPrompt, bytes: naiveInline }, { text: reply, bytes: 0 })
    pkg.history.push({ text: prompt, bytes: 0 }, { text: reply, bytes: 0 })
    memory.ingest([
      { sessionId: session, chatId: CHANNEL, messageId: msg.ts, role: 'user', text: prompt, ts: Number(msg.ts) * 1000, replyTo: rootTs },
      { sessionId: session, chatId: CHANNEL, messageId: agentMessage.ts, role: 'assistant', text: reply, ts: lastTs * 1000, replyTo: rootTs },
    ])
    // Compactions: the package by the memory store's rule, naive near the window.
    const lane = `reply:${CHANNEL}:${rootTs}`
    const done = memory.compact(session, lane, { now: lastTs * 1000 })
    if (done) {
      const summary = memory.record(session, 'thread_summary', lane)
      pkg.history = [{ text: summary.body, bytes: 0 }, ...pkg.history.slice(-10)]
      pkg.compactions++
      pkg.recoveredAt = null
    }
    if (requestTokens(system, naive.history, '') > NAIVE_COMPACT_AT) {
      const kept = naive.history.slice(-10)
      const folded = naive.history.slice(0, -10)
      const summary = `Summary of the conversation so far: ${folded.length} earlier messages about the incident in this thread.`
      naive.history = [{ text: summary, bytes: 0 }, ...kept]
      naive.compactions++
    }
    rows.push({ turn, naive: naiveRequest, package: pkgRequest, naiveBytes, packageBytes: pkgBytes, apiCalls: built.apiCalls, notes: built.notes.length })
  }
  memory.close()
  report(rows, naive, pkg)
}

/** Both per-turn curves on a log scale (the package's would be a flat line on a linear one). */
function chart(rows) {
  const width = 60
  const height = 12
  const values = rows.flatMap((r) => [r.naive, r.package]).filter((v) => v > 0)
  const lo = Math.log10(Math.min(...values))
  const hi = Math.log10(Math.max(...values))
  const level = (v) => (v > 0 ? Math.round(((Math.log10(v) - lo) / (hi - lo || 1)) * (height - 1)) + 1 : 0)
  const cols = Array.from({ length: width }, (_, c) => rows[Math.min(rows.length - 1, Math.floor((c * rows.length) / width))])
  const label = (v) => (v >= 1000 ? `${Math.round(v / 1000)}k` : String(Math.round(v)))
  const lines = []
  for (let y = height; y >= 1; y--) {
    const line = cols.map((r) => (level(r.naive) === y ? '▒' : level(r.package) === y ? '█' : ' ')).join('')
    const tag = y === height ? label(10 ** hi) : y === 1 ? label(10 ** lo) : ''
    lines.push(`${tag.padStart(5)} │${line}`)
  }
  lines.push(`      └${'─'.repeat(width)}`)
  lines.push(`       turn 1${' '.repeat(width - 14)}turn ${rows.length}`)
  lines.push('       ▒ naive   █ package: tokens of each request, log scale')
  return lines.join('\n')
}

function report(rows, naive, pkg) {
  const sum = (k) => rows.reduce((n, r) => n + r[k], 0)
  const total = { naive: sum('naive'), package: sum('package'), naiveBytes: sum('naiveBytes'), packageBytes: sum('packageBytes') }
  const firstBytes = [...MEDIA.values()].reduce((n, f) => n + f.size, 0)
  const steady = rows.slice(1)
  const result = {
    turns: rows.length,
    compactions: { naive: naive.compactions, package: pkg.compactions },
    total,
    ratio: total.package / total.naive,
    mediaBytesResent: total.packageBytes - firstBytes,
    apiCallsPerTurnSteady: steady.reduce((n, r) => n + r.apiCalls, 0) / Math.max(1, steady.length),
    rows,
  }
  if (process.argv.includes('--json')) {
    console.log(JSON.stringify(result, null, 2))
  } else {
    const n = (x) => x.toLocaleString('en-US')
    console.log(`the longest thread of the bundled channel, ${rows.length} turns, ${MEDIA.size} files shared; request text tokens by the reference tokenizer`)
    console.log(chart(rows))
    console.log('')
    console.log(`| | naive | package |`)
    console.log(`| --- | ---: | ---: |`)
    console.log(`| prompt tokens, all turns | ${n(total.naive)} | ${n(total.package)} (${(result.ratio * 100).toFixed(1)}%) |`)
    console.log(`| largest request | ${n(Math.max(...rows.map((r) => r.naive)))} | ${n(Math.max(...rows.map((r) => r.package)))} |`)
    console.log(`| media bytes sent | ${n(total.naiveBytes)} | ${n(total.packageBytes)} (each file once) |`)
    console.log(`| session compactions | ${naive.compactions} | ${pkg.compactions} |`)
    console.log(`| chat-API calls per turn after the first | - | ${result.apiCallsPerTurnSteady} |`)
    const checks = [
      [`total prompt tokens <= 1/10 of naive`, result.ratio <= TARGETS.tokenRatio],
      [`0 media bytes re-sent after first attachment`, result.mediaBytesResent === 0],
      [`0 chat-API calls per turn in steady state`, result.apiCallsPerTurnSteady === 0],
      [`at least 100 turns across at least one compaction`, rows.length >= 100 && pkg.compactions >= 1],
    ]
    for (const [what, ok] of checks) console.log(`${ok ? 'met' : 'MISSED'}: ${what}`)
    if (checks.some(([, ok]) => !ok)) process.exitCode = 1
  }
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
