#!/usr/bin/env node
// ChannelStore benchmarks, addon against the same design in plain JS (bench/js-channel-store.js),
// in one run:
//   - ingest: 100,000 message events (~200-byte texts, 10 channels) through ingestMany in
//     batches of 1,000, also with packText: true (target: at least 500,000 messages/s, and 3x the plain-JS store
//     keeping a MiniSearch index of each window as the addon keeps its own; the JS store
//     without an index is reported too);
//   - buildContext from a warm store: 50 adjacent messages, anchor in a 200-reply thread,
//     then reading promptSection (target: p50 at most 50 µs);
//   - memory per held message, its index included, at 100,000 and (full run) 1,000,000
//     messages (1,000 per channel), each store in a fresh process (target: at most twice
//     the text's UTF-8 bytes); once with the generated texts, once with real chat text
//     (bench/chat-corpus.js) joined to the same length; each also with packText: true
//     (held text compressed), which packs the generated words far tighter than chat;
//   - ingest with the store saved to SQLite (options.persist): the rate of the calls
//     (the writer thread runs behind them) and the rate until `flush()` resolves, against
//     the same store in memory (target: within 2x).
// A report, not a test: no timing assertions.
//
//   node bench/channel-store.js [--quick] [--json]
'use strict'
const path = require('node:path')
const { spawnSync } = require('node:child_process')

if (typeof global.gc !== 'function') {
  // Memory figures need a forced GC; re-run with it exposed.
  const r = spawnSync(process.execPath, ['--expose-gc', __filename, ...process.argv.slice(2)], { stdio: 'inherit' })
  process.exit(r.status ?? 1)
}

const addon = require(path.join(__dirname, '..'))
const { JsChannelStore } = require('./js-channel-store')

const QUICK = process.argv.includes('--quick')
const JSON_OUT = process.argv.includes('--json')
const RUNS = QUICK ? 3 : 7
const CALLS = QUICK ? 300 : 3000

const rand = require('./rng').xorshift(0x9e3779b9)
const WORDS = 'deploy rollout canary latency p99 checkout service migration schema index replica review merge release flag incident 🚀 デプロイ Überprüfung'.split(' ')
function text() {
  let s = ''
  while (s.length < 200) s += `${WORDS[Math.floor(rand() * WORDS.length)]} `
  return s
}
const T0 = 1775835600
const users = Array.from({ length: 20 }, (_, i) => ({ userId: `U0${1000 + i}`, displayName: `user${i}` }))
const event = (channelId, ts, threadId, body = text()) => ({
  type: 'message',
  channelId,
  message: { ts, text: body, author: users[Math.floor(rand() * users.length)], ...(threadId ? { threadId } : {}) },
})
// Flat strings, as JSON.parse of real payloads gives them.
const flat = (x) => JSON.parse(JSON.stringify(x))

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))]
const guidance = addon.buildContextPromptSection({
  snapshot: addon.buildChannelSnapshot({ channel: { id: 'C', name: 'c', platform: 'slack' }, anchor: { ts: '1.1', text: '', author: users[0] } }),
}).split('\n<channel_snapshot')[0]

// ---------------------------------------------------------------- ingest
function ingestBatches() {
  return flat(
    Array.from({ length: 100 }, (_, b) =>
      Array.from({ length: 1000 }, (_, i) => {
        const k = b * 1000 + i
        return event(`C0${k % 10}`, `${T0 + k}.${String(k % 1e6).padStart(6, '0')}`)
      }),
    ),
  )
}

function ingest(batches) {
  const rate = (make) => {
    const xs = []
    for (let r = 0; r < RUNS; r++) {
      const store = make()
      const t = process.hrtime.bigint()
      for (const b of batches) store.ingestMany(b)
      xs.push(100_000 / (Number(process.hrtime.bigint() - t) / 1e9))
    }
    return median(xs)
  }
  const addonRate = rate(() => new addon.ChannelStore())
  const addonPackedRate = rate(() => new addon.ChannelStore({ packText: true }))
  const jsRate = rate(() => new JsChannelStore())
  const jsIndexedRate = rate(() => new JsChannelStore({ index: true }))
  return {
    addonMsgsPerSec: Math.round(addonRate),
    addonPackedMsgsPerSec: Math.round(addonPackedRate),
    jsMsgsPerSec: Math.round(jsRate),
    jsIndexedMsgsPerSec: Math.round(jsIndexedRate),
    target: 500_000,
    met: addonRate >= 500_000,
    vsIndexedTarget: 3,
    vsIndexedMet: addonRate >= 3 * jsIndexedRate,
  }
}

// ---------------------------------------------------------------- ingest, saved to SQLite
async function ingestPersisted(batches) {
  const fs = require('node:fs')
  const os = require('node:os')
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-persist-'))
  const calls = []
  const durable = []
  const memoryRates = []
  let last = null
  try {
    for (let r = 0; r < RUNS; r++) {
      // Alternate with the in-memory store so both see the same machine state.
      const mem = new addon.ChannelStore()
      let t = process.hrtime.bigint()
      for (const b of batches) mem.ingestMany(b)
      memoryRates.push(100_000 / (Number(process.hrtime.bigint() - t) / 1e9))
      const store = new addon.ChannelStore({ persist: { path: path.join(dir, `run${r}.sqlite`) } })
      t = process.hrtime.bigint()
      for (const b of batches) store.ingestMany(b)
      calls.push(100_000 / (Number(process.hrtime.bigint() - t) / 1e9))
      last = await store.flush()
      durable.push(100_000 / (Number(process.hrtime.bigint() - t) / 1e9))
      await store.close()
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
  const memoryRate = median(memoryRates)
  const durableRate = median(durable)
  const slowdown = memoryRate / durableRate
  return {
    callsMsgsPerSec: Math.round(median(calls)),
    durableMsgsPerSec: Math.round(durableRate),
    memoryMsgsPerSec: Math.round(memoryRate),
    slowdown,
    writtenRows: last.writtenRows,
    deferred: last.deferred,
    met: slowdown <= 2,
  }
}

// ---------------------------------------------------------------- buildContext
async function latency() {
  const C = 'C0ROLLOUT'
  const now = (T0 + 2000) * 1000
  const events = []
  for (let i = 0; i < 1000; i++) events.push(event(C, `${T0 + i}.000100`))
  const root = `${T0 + 950}.000100`
  for (let j = 0; j < 200; j++) events.push(event(C, `${T0 + 1000 + j}.000200`, root))
  const anchor = `${T0 + 1199}.000200`
  const data = flat(events)
  const store = new addon.ChannelStore({ clock: () => now })
  store.ingestMany(data)
  const jsStore = new JsChannelStore({ clock: () => now, guidance })
  jsStore.ingestMany(data)
  // All 50 adjacent messages, as the JS store shows them (it has no snapshot budget).
  const opts = { adjacent: 50, snapshotBudgetTokens: 1_000_000 }
  const first = await store.buildContext(C, anchor, opts)
  if (first.apiCalls !== 0 || first.notes.length !== 0) throw new Error(`store not warm: ${first.notes.join(' ')}`)
  const jsFirst = await jsStore.buildContext(C, anchor, opts)
  const thread = first.thread
  if (thread.truncation.total_replies !== 200 || first.snapshot.adjacent.length !== 50) throw new Error('unexpected context shape')
  const ratio = first.promptSection.length / jsFirst.promptSection.length
  if (Math.abs(1 - ratio) > 0.05) throw new Error(`prompt sections differ in size: ${first.promptSection.length} vs ${jsFirst.promptSection.length}`)

  const time = async (fn) => {
    const xs = []
    for (let i = 0; i < 20; i++) await fn()
    for (let i = 0; i < CALLS; i++) {
      const t = process.hrtime.bigint()
      await fn()
      xs.push(Number(process.hrtime.bigint() - t) / 1e3)
    }
    return { p50: median(xs), p99: pct(xs, 0.99) }
  }
  const withPrompt = await time(async () => (await store.buildContext(C, anchor, opts)).promptSection)
  const buildOnly = await time(() => store.buildContext(C, anchor, opts))
  const materialized = await time(async () => {
    const c = await store.buildContext(C, anchor, opts)
    return [c.promptSection, c.snapshot, c.thread]
  })
  const jsTimes = await time(async () => (await jsStore.buildContext(C, anchor, opts)).promptSection)
  return {
    promptChars: first.promptSection.length,
    includedReplies: thread.truncation.included_replies,
    addon: withPrompt,
    addonBuildOnly: buildOnly,
    addonMaterialized: materialized,
    js: jsTimes,
    target: 50,
    met: withPrompt.p50 <= 50,
  }
}

// ---------------------------------------------------------------- memory
// Each store is measured in a fresh process of its own (`--memory addon|js`), so nothing
// else this run allocated moves the figures.
/** Real chat text: consecutive messages of the public corpus joined until each text has
 * 200 characters (the generated texts' size), written one JSON string a line to a file the
 * memory child reads, so the child never holds the corpus (freed during a measurement, its
 * pages would be subtracted from the store's). */
async function chatTextsFile() {
  const fs = require('node:fs')
  const os = require('node:os')
  const lines = (await require('./chat-corpus').loadChat()).map((m) => m.text)
  const texts = []
  for (let at = 0; at < lines.length; ) {
    let s = ''
    while (s.length < 200 && at < lines.length) s += `${lines[at++]} `
    texts.push(JSON.stringify(s))
  }
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'chat-texts-')), 'texts.jsonl')
  fs.writeFileSync(file, texts.join('\n'))
  return file
}

function memoryChild(kind, messages, textsFile) {
  // With a file of texts (real chat), its texts in turn instead of generated words. They
  // are read before the baseline and stay alive to the end.
  let next = text
  const texts = textsFile ? require('node:fs').readFileSync(textsFile, 'utf8').split('\n').map((l) => JSON.parse(l)) : []
  if (textsFile) {
    let at = 0
    next = () => texts[at++ % texts.length]
  }
  // 1,000 messages per channel (the default window), so every message stays held. The
  // input is made a batch at a time, so it dies young; V8 still keeps some of the pages
  // it grew into (some 25 MB), which resident memory counts with the store's.
  const channels = messages / 1000
  const batch = (from) =>
    flat(
      Array.from({ length: 1000 }, (_, j) => {
        const k = from + j
        return event(`C${String(k % channels).padStart(4, '0')}`, `${T0 + Math.floor(k / channels)}.${String(k % channels).padStart(6, '0')}`, undefined, next())
      }),
    )
  const make = { addon: () => new addon.ChannelStore(), 'addon-packed': () => new addon.ChannelStore({ packText: true }), js: () => new JsChannelStore() }[kind]
  make().ingestMany(batch(0)) // warm the code path on a throwaway store
  global.gc()
  const native = kind !== 'js'
  const read = () => (native ? process.memoryUsage().rss : process.memoryUsage().heapUsed)
  let textBytes = 0
  const before = read()
  // The input batches are garbage once ingested, but V8 keeps the heap pages they grew
  // into: resident memory also counts those, reported apart.
  const heapBefore = process.memoryUsage().heapTotal
  const store = make()
  for (let i = 0; i < messages; i += 1000) {
    const b = batch(i)
    for (const e of b) textBytes += Buffer.byteLength(e.message.text)
    store.ingestMany(b)
  }
  global.gc()
  const bytes = read() - before
  const v8Growth = process.memoryUsage().heapTotal - heapBefore
  const stats = native ? store.stats() : null
  const estimate = stats ? stats.messageBytes + stats.search.indexBytes : null
  console.log(JSON.stringify({ bytes, v8Growth, messages: stats ? stats.messages : messages, estimate, textBytes, texts: texts.length }))
}

function memory(messages, textsFile) {
  const source = textsFile ? 'chat' : 'words'
  const run = (kind) => {
    const r = spawnSync(process.execPath, ['--expose-gc', '--max-old-space-size=8192', __filename, '--memory', kind, String(messages), ...(textsFile ? [textsFile] : [])], { encoding: 'utf8' })
    if (r.status !== 0) throw new Error(`memory child failed: ${r.stderr}`)
    return JSON.parse(r.stdout)
  }
  const a = run('addon')
  const packed = run('addon-packed')
  const j = run('js')
  if (a.messages !== messages) throw new Error(`the store held ${a.messages} of ${messages} messages`)
  return {
    messages: a.messages,
    source,
    addonEstimatePerMessage: Math.round(a.estimate / a.messages),
    addonRssPerMessage: Math.round(a.bytes / a.messages),
    v8GrowthPerMessage: Math.round(a.v8Growth / a.messages),
    textBytesPerMessage: Math.round(a.textBytes / a.messages),
    met: a.bytes <= 2 * a.textBytes,
    packedRssPerMessage: Math.round(packed.bytes / packed.messages),
    packedEstimatePerMessage: Math.round(packed.estimate / packed.messages),
    packedMet: packed.bytes <= 2 * packed.textBytes,
    jsHeapPerMessage: Math.round(j.bytes / j.messages),
  }
}

async function main() {
  const at = process.argv.indexOf('--memory')
  if (at >= 0) return memoryChild(process.argv[at + 1], Number(process.argv[at + 2]), process.argv[at + 3])
  const batches = ingestBatches()
  const result = { ingest: ingest(batches), persisted: await ingestPersisted(batches), buildContext: await latency(), memory: [] }
  const chat = await chatTextsFile()
  for (const n of QUICK ? [100_000] : [100_000, 1_000_000]) result.memory.push(memory(n), memory(n, chat))
  require('node:fs').rmSync(path.dirname(chat), { recursive: true, force: true })
  if (JSON_OUT) {
    console.log(JSON.stringify(result, null, 2))
    return
  }
  const { ingest: i, persisted: p, buildContext: b, memory: m } = result
  const f = (n) => n.toLocaleString('en-US')
  console.log(`ChannelStore (${QUICK ? 'quick' : 'full'} run, node ${process.version})`)
  console.log(`ingestMany          addon ${f(i.addonMsgsPerSec)} msgs/s   target ${f(i.target)}: ${i.met ? 'met' : 'missed'}   with packText ${f(i.addonPackedMsgsPerSec)} msgs/s`)
  console.log(
    `  js with MiniSearch ${f(i.jsIndexedMsgsPerSec)} msgs/s   addon/js ${(i.addonMsgsPerSec / i.jsIndexedMsgsPerSec).toFixed(2)}x (target ${i.vsIndexedTarget}x: ${i.vsIndexedMet ? 'met' : 'missed'})   js without an index ${f(i.jsMsgsPerSec)} msgs/s   addon/js ${(i.addonMsgsPerSec / i.jsMsgsPerSec).toFixed(2)}x`,
  )
  console.log(`  persisted         calls ${f(p.callsMsgsPerSec)} msgs/s, until flushed ${f(p.durableMsgsPerSec)} msgs/s   in memory ${f(p.memoryMsgsPerSec)} msgs/s   slowdown ${p.slowdown.toFixed(2)}x   target within 2x: ${p.met ? 'met' : 'missed'} (${f(p.writtenRows)} rows written, ${f(p.deferred)} calls deferred)`)
  console.log(`buildContext+prompt addon p50 ${b.addon.p50.toFixed(1)} µs p99 ${b.addon.p99.toFixed(1)}   js p50 ${b.js.p50.toFixed(1)} µs p99 ${b.js.p99.toFixed(1)}   js/addon ${(b.js.p50 / b.addon.p50).toFixed(2)}x   target p50 ${b.target} µs: ${b.met ? 'met' : 'missed'}`)
  console.log(`  addon buildContext alone p50 ${b.addonBuildOnly.p50.toFixed(1)} µs; with snapshot and thread read as objects p50 ${b.addonMaterialized.p50.toFixed(1)} µs (prompt ${f(b.promptChars)} chars, ${b.includedReplies} replies)`)
  for (const x of m) {
    console.log(
      `memory per message (${x.source === 'chat' ? 'real chat text' : 'generated words'})  addon ${x.addonRssPerMessage} B (RSS delta, ${(x.addonRssPerMessage / x.textBytesPerMessage).toFixed(2)}x its ${x.textBytesPerMessage} B of text; target <= 2x: ${x.met ? 'met' : 'missed'}; of it ${x.v8GrowthPerMessage} B is V8's heap grown by the input, the store's own estimate ~${x.addonEstimatePerMessage} B with its index)   with packText ${x.packedRssPerMessage} B (${(x.packedRssPerMessage / x.textBytesPerMessage).toFixed(2)}x, ${x.packedMet ? 'met' : 'missed'}; estimate ~${x.packedEstimatePerMessage} B)   js ${x.jsHeapPerMessage} B (heap delta)   at ${f(x.messages)} messages`,
    )
  }
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
