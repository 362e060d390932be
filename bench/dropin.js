#!/usr/bin/env node
// npm run bench: races every drop-in export against its plain-JS baseline (bench/baseline.js)
// and SHA-256 against node:crypto, on realistic sizes. Prints the median time per call and
// the ratio addon / JS. Outputs are checked equal before anything is timed.
//
//   node bench/dropin.js [--quick] [--json]
'use strict'
const assert = require('node:assert')
const crypto = require('node:crypto')
const os = require('node:os')
const path = require('node:path')
const addon = require(path.join(__dirname, '..'))
const js = require('./baseline')

const QUICK = process.argv.includes('--quick')
const JSON_OUT = process.argv.includes('--json')
const SAMPLES = QUICK ? 7 : 41
const SAMPLE_MS = QUICK ? 3 : 12

// ---------------------------------------------------------------- realistic data

const rand = require('./rng').xorshift(0x2545f491)
const pick = (xs) => xs[Math.floor(rand() * xs.length)]
const WORDS = (
  'deploy rollout canary latency p99 checkout service migration schema index replica ' +
  'review merge branch release flag incident pager alert dashboard metrics cache redis ' +
  'queue worker retry timeout budget tokens thread reply context snapshot staging prod'
).split(' ')
const FLAVOUR = ['🚀', '👀', '✅', '🔥', '👩‍💻', 'デプロイ完了', 'Überprüfung', '¿alguien?', 'très bien', '—', '`code`']

function text(minLen, maxLen) {
  const target = minLen + Math.floor(rand() * (maxLen - minLen))
  let s = ''
  while (s.length < target) {
    s += pick(WORDS)
    const r = rand()
    s += r < 0.05 ? '\n\n' : r < 0.1 ? '   ' : r < 0.16 ? ` ${pick(FLAVOUR)} ` : ' '
  }
  return s
}

const users = Array.from({ length: 12 }, (_, i) => ({ userId: `U0${1000 + i}`, displayName: `user${i}`, isBot: i === 11 }))
let clock = 1775853000
function message(minLen, maxLen, extra = {}) {
  clock += 1 + Math.floor(rand() * 90)
  const m = { ts: `${clock}.${String(Math.floor(rand() * 1e6)).padStart(6, '0')}`, author: pick(users), text: text(minLen, maxLen), ...extra }
  if (rand() < 0.3) m.reactions = [{ name: 'eyes', count: 1 + Math.floor(rand() * 4) }, { name: 'white_check_mark', count: 2 }]
  if (rand() < 0.15) m.media = [{ artifactId: `F${clock}`, mediaType: 'image/png', filename: 'screenshot.png', byteLength: 48213 }]
  if (rand() < 0.2) Object.assign(m, { replyCount: 1 + Math.floor(rand() * 30), repliesLast1h: Math.floor(rand() * 3), lastReplyTs: `${clock + 600}.000100` })
  return m
}

const adjacent = Array.from({ length: 50 }, () => message(20, 600))
const snapshotInput = {
  channel: { id: 'C0123ABCD', name: 'platform-eng', platform: 'slack' },
  anchor: message(40, 400),
  adjacentMessages: adjacent,
}
const threadRoot = message(100, 500)
const threadReplies = Array.from({ length: 200 }, (_, i) => message(20, i % 40 === 7 ? 2400 : 600, { threadId: threadRoot.ts }))
const thread = { root: threadRoot, replies: threadReplies, totalReplyCount: 200 }
const budgetReplies = threadReplies.map((r) => ({ ts: r.ts, text: r.text, user: r.author.userId }))

// The same messages in the runner's flat shapes (StructuredContextInput and its thread).
const flatMessage = (m) => ({
  messageId: m.ts,
  ts: m.ts,
  authorId: m.author.userId,
  authorName: m.author.displayName,
  authorIsBot: Boolean(m.author.isBot),
  text: m.text,
  threadId: m.threadId ?? null,
  replyCount: m.replyCount ?? 0,
  hasMedia: Boolean(m.media),
  reactions: (m.reactions ?? []).map((r) => `:${r.name}: ${r.count}`),
})
const runnerThread = {
  rootMessageId: threadRoot.ts,
  rootTs: threadRoot.ts,
  rootAuthorId: threadRoot.author.userId,
  rootAuthorName: threadRoot.author.displayName,
  rootAuthorIsBot: Boolean(threadRoot.author.isBot),
  rootText: threadRoot.text,
  replies: threadReplies.map((r) => ({ messageId: r.ts, ts: r.ts, authorId: r.author.userId, authorName: r.author.displayName, authorIsBot: Boolean(r.author.isBot), text: r.text })),
  totalReplyCount: 200,
}
const runnerInput = {
  platform: 'slack',
  channelId: 'C0123ABCD',
  channelName: 'platform-eng',
  channelType: 'group',
  anchor: { ...flatMessage(snapshotInput.anchor), threadId: threadRoot.ts },
  adjacentMessages: adjacent.map(flatMessage),
  thread: runnerThread,
}
const subscriberGuidance = addon.coreSessionContextSubscriber({ structuredContextInput: runnerInput }).systemPromptSections[0].split('\n### Channel Tools')[1]
const sameSections = (a, b) => {
  assert.strictEqual(a.systemPromptSections.length, b.systemPromptSections.length)
  const heads = (x) => x.systemPromptSections[0].match(/^### .+$/gm)
  assert.deepStrictEqual(heads(a), heads(b))
}

const manifest = addon.createAttachmentManifest()
for (let i = 0; i < 1000; i++) {
  addon.recordAttachment(manifest, {
    artifactId: `F0${100000 + i}`,
    displayName: `attachment-${i}.${pick(['png', 'pdf', 'log', 'jpg'])}`,
    mediaType: pick(['image/png', 'application/pdf', 'text/plain', 'image/jpeg']),
    contentHash: crypto.createHash('sha256').update(String(i)).digest('hex'),
    sourceMessageId: `${1775853000 + i}.000100`,
    sourceThreadId: i % 3 ? `${1775850000 + (i % 17)}.000100` : null,
    includedAtTurn: 1 + (i % 40),
  })
}
const sessionEntries = []
for (let i = 0; i < 19; i++) sessionEntries.push({ type: 'message', id: `e${i}`, message: { role: i % 2 ? 'assistant' : 'user', content: text(50, 300) } })
sessionEntries.push({ type: 'custom', customType: addon.ATTACHMENT_MANIFEST_KEY, data: JSON.stringify(manifest) })

const mb1 = crypto.randomBytes(1024 * 1024)
const mb10 = crypto.randomBytes(10 * 1024 * 1024)
const nodeSha = (b) => crypto.createHash('sha256').update(b).digest('hex')

// ---------------------------------------------------------------- harness

function perCall(fn, iterations) {
  const t0 = process.hrtime.bigint()
  for (let i = 0; i < iterations; i++) fn()
  return Number(process.hrtime.bigint() - t0) / iterations
}

/** Iterations per sample so that one sample takes about SAMPLE_MS. */
function calibrate(fn) {
  let n = 1
  for (;;) {
    const ns = perCall(fn, n) * n
    if (ns >= SAMPLE_MS * 1e6 || n >= 1 << 20) return n
    n = Math.max(n * 2, Math.ceil((SAMPLE_MS * 1e6 * n) / Math.max(ns, 1)))
  }
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

/** Alternates the two sides sample by sample so drift hits both alike. */
function race(baseline, candidate) {
  for (let i = 0; i < 3; i++) (baseline(), candidate())
  const nb = calibrate(baseline)
  const nc = calibrate(candidate)
  const b = []
  const c = []
  for (let s = 0; s < SAMPLES; s++) {
    if (s % 2) {
      b.push(perCall(baseline, nb))
      c.push(perCall(candidate, nc))
    } else {
      c.push(perCall(candidate, nc))
      b.push(perCall(baseline, nb))
    }
  }
  return { baselineNs: median(b), addonNs: median(c) }
}

const cases = [
  {
    name: 'estimateTokens ×50 texts',
    target: 1.5,
    js: () => adjacent.map((m) => js.estimateTokens(m.text)),
    addon: () => adjacent.map((m) => addon.estimateTokens(m.text)),
  },
  {
    name: 'truncateSnippet ×50 texts',
    target: 1.5,
    js: () => adjacent.map((m) => js.truncateSnippet(m.text)),
    addon: () => adjacent.map((m) => addon.truncateSnippet(m.text)),
  },
  {
    name: 'applyThreadBudget, 200 replies',
    target: 1.5,
    js: () => js.applyThreadBudget({ replies: budgetReplies, budgetTokens: 8000 }),
    addon: () => addon.applyThreadBudget({ replies: budgetReplies, budgetTokens: 8000 }),
  },
  {
    name: 'buildChannelSnapshot, 50 adjacent',
    target: 1.5,
    js: () => js.buildChannelSnapshot(snapshotInput),
    addon: () => addon.buildChannelSnapshot(snapshotInput),
  },
  {
    name: 'buildThreadContext, 200 replies',
    target: 1.5,
    js: () => js.buildThreadContext(thread, 8000),
    addon: () => addon.buildThreadContext(thread, 8000),
  },
  {
    name: 'buildThreadContextWithTelemetry, 200 replies',
    target: 1.5,
    js: () => js.buildThreadContextWithTelemetry(thread, 8000),
    addon: () => addon.buildThreadContextWithTelemetry(thread, 8000),
  },
  {
    name: "buildChannelSnapshot, the runner's input, 50 adjacent",
    target: 1.5,
    js: () => js.runnerSnapshot(runnerInput),
    addon: () => addon.buildChannelSnapshot(runnerInput),
  },
  {
    name: "buildThreadContext, the runner's thread, 200 replies",
    target: 1.5,
    js: () => js.runnerThread(runnerThread, 8000),
    addon: () => addon.buildThreadContext(runnerThread, 8000),
  },
  {
    name: "buildThreadContextWithTelemetry, the runner's thread, 200 replies",
    target: 1.5,
    js: () => js.runnerThreadWithTelemetry(runnerThread, 8000),
    addon: () => addon.buildThreadContextWithTelemetry(runnerThread, 8000),
  },
  {
    name: "applyThreadBudget, the runner's 200 replies, 1,000 tokens",
    target: 1.5,
    js: () => js.applyThreadBudget({ replies: runnerThread.replies, budgetTokens: 1000 }),
    addon: () => addon.applyThreadBudget({ replies: runnerThread.replies, budgetTokens: 1000 }),
  },
  {
    name: "applyThreadBudget, the runner's 200 replies, 8,000 tokens",
    target: 1.5,
    js: () => js.applyThreadBudget({ replies: runnerThread.replies, budgetTokens: 8000 }),
    addon: () => addon.applyThreadBudget({ replies: runnerThread.replies, budgetTokens: 8000 }),
  },
  {
    name: 'coreSessionContextSubscriber, 50 adjacent, 200-reply thread',
    target: 1.5,
    js: () => js.runnerSubscriber({ structuredContextInput: runnerInput }, `### Channel Tools${subscriberGuidance}`),
    addon: () => addon.coreSessionContextSubscriber({ structuredContextInput: runnerInput }),
    check: sameSections,
  },
  {
    name: 'serializeManifest, 1000 records',
    target: 1.5,
    js: () => js.serializeManifest(manifest),
    addon: () => addon.serializeManifest(manifest),
  },
  {
    name: 'loadManifestFromEntries, 1000 records',
    target: 1.5,
    js: () => js.loadManifestFromEntries(sessionEntries),
    addon: () => addon.loadManifestFromEntries(sessionEntries),
  },
  { name: 'sha256Hex 1 MB (vs node:crypto)', target: 1.3, js: () => nodeSha(mb1), addon: () => addon.sha256Hex(mb1) },
  { name: 'sha256Hex 10 MB (vs node:crypto)', target: 1.3, js: () => nodeSha(mb10), addon: () => addon.sha256Hex(mb10) },
]

for (const c of cases) {
  if (c.check) c.check(c.addon(), c.js())
  else assert.deepStrictEqual(c.addon(), c.js(), `${c.name}: addon and baseline disagree`)
}

async function asyncHash() {
  // The async variant: how long it takes, and that the event loop keeps turning meanwhile.
  let turns = 0
  let done = false
  const spin = () => {
    if (!done) {
      turns++
      setImmediate(spin)
    }
  }
  const times = []
  let digest = ''
  for (let i = 0; i < (QUICK ? 3 : 9); i++) {
    const t0 = process.hrtime.bigint()
    digest = await addon.sha256HexAsync(mb10)
    times.push(Number(process.hrtime.bigint() - t0))
  }
  assert.strictEqual(digest, nodeSha(mb10))
  done = false
  setImmediate(spin)
  await addon.sha256HexAsync(mb10)
  done = true
  return { addonNs: median(times), loopTurnsDuringOneHash: turns }
}

const fmt = (ns) => (ns >= 1e6 ? `${(ns / 1e6).toFixed(2)} ms` : `${(ns / 1e3).toFixed(1)} µs`)

;(async () => {
  const results = []
  for (const c of cases) {
    const { baselineNs, addonNs } = race(c.js, c.addon)
    const ratio = addonNs / baselineNs
    results.push({ case: c.name, jsNs: baselineNs, addonNs, ratio, target: c.target, met: ratio <= c.target })
  }
  const nodeTimes = []
  for (let i = 0; i < (QUICK ? 3 : 9); i++) {
    const t0 = process.hrtime.bigint()
    nodeSha(mb10)
    nodeTimes.push(Number(process.hrtime.bigint() - t0))
  }
  const a = await asyncHash()
  const jsNs = median(nodeTimes)
  results.push({
    case: 'sha256HexAsync 10 MB (vs node:crypto, sync)',
    jsNs,
    addonNs: a.addonNs,
    ratio: a.addonNs / jsNs,
    target: 1.3,
    met: a.addonNs / jsNs <= 1.3,
    loopTurnsDuringOneHash: a.loopTurnsDuringOneHash,
  })
  const machine = { node: process.version, cpu: os.cpus()[0]?.model ?? 'unknown', cores: os.cpus().length, samples: SAMPLES }
  if (JSON_OUT) {
    console.log(JSON.stringify({ machine, results }, null, 2))
    return
  }
  console.log(`node ${machine.node} · ${machine.cpu} · ${machine.cores} cores · median of ${SAMPLES} samples\n`)
  console.log('| case | JS | addon | addon / JS | target | met |')
  console.log('|---|---:|---:|---:|---:|:---:|')
  for (const r of results) {
    console.log(`| ${r.case} | ${fmt(r.jsNs)} | ${fmt(r.addonNs)} | ${r.ratio.toFixed(2)}x | ≤ ${r.target}x | ${r.met ? 'yes' : 'no'} |`)
  }
  const turns = results.at(-1).loopTurnsDuringOneHash
  console.log(`\nsha256HexAsync: the event loop turned ${turns} times while one 10 MB hash ran.`)
})().catch((e) => {
  console.error(e)
  process.exit(1)
})
