#!/usr/bin/env node
// Channel search benchmark: the addon's `channel_context` tool against two plain-JS
// baselines (bench/search-baselines.js) over the same messages, in one run:
//
//   linear             the original algorithm: substring count of the query's words over
//                      every message, each text lower-cased per query;
//   linear-prelowered  the same scan over texts lower-cased once at build time;
//   minisearch         MiniSearch v7 (BM25, OR), built with addAll;
//   addon              ChannelStore({ windowSize: N }) fed with ingestMany (batches of
//                      1,000), queried through store.tools(channel).execute('channel_context',
//                      { intent, max_results: 8 }). Rows print n/a while store.tools is missing.
//
// One Slack channel of N messages (bench/search-corpus.js: deterministic chat of a platform
// team, ~10% non-English, Zipf-like vocabulary that grows with N), N = 10,000, 100,000 and
// 1,000,000. For each N and implementation:
//   - build: the median over a few builds (5 at <= 10k, 3 at <= 100k, 1 above) of the time
//     to make the structure searchable: 0 for linear, lower-casing for linear-prelowered,
//     addAll for MiniSearch, all the ingestMany calls for the addon;
//   - first query: the first query right after a build (lazy work shows up here);
//   - query p50 / p99: every query run once to warm up, then each timed once with
//     process.hrtime.bigint (200 queries at 10k and 100k, the first 50 of them at 1M);
//   - memory per message: messages + index, built in a fresh process of its own, RSS delta
//     and JS heap delta after GC, divided by N.
// Then ratios at each N, the targets at N = 100,000, results per query and the overlap of
// the top-8 ids between implementations (mean Jaccard; a sanity check, never a failure).
// A report, not a test: nothing asserts on timings.
//
//   node bench/search.js [--quick] [--sizes 10000,100000] [--json]
//
// --quick runs N = 10,000 only, with 100 queries. The full run takes ~10-15 minutes on two
// cores (1M messages: the linear scans take ~1 s and MiniSearch ~2 s per query there) and
// needs ~6 GB of RAM.
'use strict'

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { spawnSync } = require('node:child_process')

const argv = process.argv.slice(2)

// Memory figures need a forced GC, and 1M messages in MiniSearch need more than V8's
// default heap limit: re-run this script with both.
const HEAP_MB = Math.max(4096, Math.min(16384, Math.floor((os.totalmem() / 2 ** 20) * 0.75)))
if (require.main === module && (typeof global.gc !== 'function' || !process.execArgv.some((a) => a.startsWith('--max-old-space-size')))) {
  const r = spawnSync(process.execPath, ['--expose-gc', `--max-old-space-size=${HEAP_MB}`, __filename, ...argv], { stdio: 'inherit' })
  process.exit(r.status ?? 1)
}

const { makeCorpus, makeQueries, displayName } = require('./search-corpus')
const js = require('./search-baselines')

let addon = null
let addonLoadError = null
try {
  addon = require(path.join(__dirname, '..'))
} catch (err) {
  addonLoadError = `addon failed to load: ${String(err.message).split('\n')[0]}`
}

const QUICK = argv.includes('--quick')
const JSON_OUT = argv.includes('--json')
const CHANNEL = 'C1'
const CORPUS_SEED = 0x5ea4c4
const QUERY_SEED = 0x9e3779b9
const LIMIT = js.LIMIT
const INGEST_BATCH = 1000
const TARGET_N = 100_000
const TARGETS = { p50Ms: 1, vsLinear: 20, vsMiniSearchQuery: 2, vsMiniSearchBuild: 3 }

function option(name) {
  const i = argv.findIndex((a) => a === name || a.startsWith(`${name}=`))
  if (i < 0) return null
  return argv[i].includes('=') ? argv[i].slice(name.length + 1) : argv[i + 1]
}
function sizes() {
  const s = option('--sizes')
  if (s == null) return QUICK ? [10_000] : [10_000, 100_000, 1_000_000]
  const xs = s.split(',').map((x) => Number(x.replace(/_/g, '')))
  if (!xs.length || xs.some((n) => !Number.isSafeInteger(n) || n < 1)) throw new Error(`--sizes: expected positive integers, got ${s}`)
  return xs
}
const queryCount = (n) => (QUICK ? 100 : n <= 100_000 ? 200 : 50)
const buildRuns = (n) => (n <= 10_000 ? (QUICK ? 3 : 5) : n <= 100_000 ? 3 : 1)

const IMPLS = ['linear', 'linear-prelowered', 'minisearch', 'addon']

// ---------------------------------------------------------------- helpers

const nowNs = () => process.hrtime.bigint()
const msSince = (t) => Number(nowNs() - t) / 1e6
const sorted = (xs) => Float64Array.from(xs).sort()
const quantile = (s, q) => s[Math.min(s.length - 1, Math.floor(q * s.length))]
const median = (xs) => quantile(sorted(xs), 0.5)
const isPromise = (x) => x != null && typeof x.then === 'function'
const turn = () => new Promise((resolve) => setImmediate(resolve))
async function settle() {
  global.gc()
  await turn()
  global.gc()
}

/** Events as bench/channel-store.js builds them (one per message; ts is the message id). */
function toEvents(docs) {
  const events = new Array(docs.length)
  for (let i = 0; i < docs.length; i++) {
    const d = docs[i]
    events[i] = { type: 'message', channelId: CHANNEL, message: { messageId: d.id, ts: d.ts, author: { userId: d.user, displayName: displayName(d.user) }, text: d.text } }
  }
  return events
}

function ingestAll(store, events) {
  for (let i = 0; i < events.length; i += INGEST_BATCH) store.ingestMany(events.slice(i, i + INGEST_BATCH))
}

/** Why the addon rows are n/a, or null when the addon can be measured. */
function addonMissing() {
  if (!addon) return addonLoadError
  if (typeof addon.ChannelStore !== 'function') return 'ChannelStore missing'
  const store = new addon.ChannelStore({ windowSize: 10 })
  if (typeof store.tools !== 'function') return 'store.tools missing'
  return null
}

// An addon result's message id, whatever the result shape names it.
const idOf = (r) => String(r?.message_id ?? r?.messageId ?? r?.id ?? r?.ts ?? r?.message?.message_id ?? r?.message?.messageId ?? r?.message?.ts ?? '')

/**
 * Each implementation: build(docs) -> handle (timed), search(handle, intent) -> result or
 * Promise (timed), ids(result) -> top ids (not timed), release(handle).
 */
function implementation(name, n) {
  switch (name) {
    case 'linear':
      return { build: js.buildLinear, search: js.linearSearch, ids: (r) => r.map((x) => x.id) }
    case 'linear-prelowered':
      return { build: js.buildLinearPrelowered, search: js.linearPreloweredSearch, ids: (r) => r.map((x) => x.id) }
    case 'minisearch':
      return { build: js.buildMiniSearch, search: js.miniSearch, ids: (r) => r.map((x) => x.id) }
    case 'addon':
      return {
        // Events are made before the clock starts: the build is the ingestMany calls.
        prepare: toEvents,
        build: (events) => {
          const store = new addon.ChannelStore({ windowSize: n })
          ingestAll(store, events)
          return { store, tools: null }
        },
        search: (h, intent) => {
          if (!h.tools) h.tools = h.store.tools(CHANNEL)
          return h.tools.execute('channel_context', { intent, max_results: LIMIT })
        },
        // The JSON is parsed outside the timed region: an agent hands it to the model as is.
        ids: (json) => {
          const body = typeof json === 'string' ? JSON.parse(json) : json
          return (body?.results ?? []).map(idOf)
        },
      }
    default:
      throw new Error(`unknown implementation ${name}`)
  }
}

// ---------------------------------------------------------------- timing

async function measure(name, n, docs, queries) {
  const impl = implementation(name, n)
  const input = impl.prepare ? impl.prepare(docs) : docs
  // Build a few times; keep the last handle for the queries.
  const builds = []
  let handle = null
  for (let r = 0; r < buildRuns(n); r++) {
    handle = null
    await settle()
    const t = nowNs()
    handle = impl.build(input)
    builds.push(msSince(t))
  }
  const notes = []
  if (name === 'addon' && typeof handle.store.stats === 'function') {
    const held = handle.store.stats().messages
    if (held !== n) notes.push(`store holds ${held} of ${n} messages`)
  }
  if (name === 'minisearch') notes.push(`${handle.termCount.toLocaleString('en-US')} distinct terms`)
  await settle()

  const run = async (q) => {
    const t = nowNs()
    let r = impl.search(handle, q)
    if (isPromise(r)) r = await r
    return [msSince(t), r]
  }
  // Warm-up: each query once. The results of this pass are the ones compared.
  const ids = []
  let firstQueryMs = 0
  for (let i = 0; i < queries.length; i++) {
    const [ms, r] = await run(queries[i])
    if (i === 0) firstQueryMs = ms
    ids.push(impl.ids(r))
  }
  const lat = []
  for (const q of queries) lat.push((await run(q))[0])
  const s = sorted(lat)
  handle = null
  return {
    buildMs: name === 'linear' ? 0 : median(builds),
    builds: builds.length,
    firstQueryMs,
    p50Ms: quantile(s, 0.5),
    p99Ms: quantile(s, 0.99),
    meanMs: lat.reduce((a, b) => a + b, 0) / lat.length,
    resultsPerQuery: ids.reduce((a, x) => a + x.length, 0) / ids.length,
    ids,
    notes,
  }
}

// ---------------------------------------------------------------- memory (child process)
// `--memory <impl> --n N --corpus <file>`: builds one implementation over the corpus file
// (JSON, as the parent wrote it) in a fresh process and prints the deltas. The raw file is
// a Buffer (outside the JS heap, in RSS before and after). The JS baselines parse it after
// the first reading, so their figures include the messages they hold; the addon's events
// are parsed before it (its store copies what it keeps), so its figure is the store alone.

async function memoryChild(name, n, file) {
  const wire = fs.readFileSync(file)
  const impl = implementation(name, n)
  const parse = () => JSON.parse(wire.toString('utf8'))
  // Load the code paths on a throwaway structure.
  {
    const few = parse().slice(0, 1000)
    impl.build(impl.prepare ? impl.prepare(few) : few)
  }
  let input = name === 'addon' ? impl.prepare(parse()) : null
  await settle()
  const before = process.memoryUsage()
  if (name !== 'addon') input = parse()
  let handle = impl.build(input)
  await settle()
  const after = process.memoryUsage()
  const out = {
    n,
    rssBytes: after.rss - before.rss,
    heapBytes: after.heapUsed - before.heapUsed,
    externalBytes: after.external - before.external,
  }
  if (name === 'addon' && typeof handle.store.stats === 'function') {
    const st = handle.store.stats()
    out.held = st.messages
    out.estimateBytes = st.messageBytes
  }
  if (name === 'minisearch') {
    // The index alone, without the parsed messages.
    input = null
    await settle()
    out.indexHeapBytes = process.memoryUsage().heapUsed - before.heapUsed
  }
  handle = input = null
  console.log(JSON.stringify(out))
}

function memory(name, n, file) {
  const t = Date.now()
  // A 1 MB semi-space keeps V8's young generation from growing during the run, which
  // would otherwise show in the RSS delta as tens of MB unrelated to the structure.
  const r = spawnSync(process.execPath, ['--expose-gc', `--max-old-space-size=${HEAP_MB}`, '--max-semi-space-size=1', __filename, '--memory', name, '--n', String(n), '--corpus', file], {
    encoding: 'utf8',
    maxBuffer: 1 << 20,
  })
  if (r.status !== 0) throw new Error(`memory child (${name}, N=${n}) failed:\n${r.stderr}`)
  const m = JSON.parse(r.stdout.trim().split('\n').pop())
  const per = (b) => (b == null ? null : Math.round(b / n))
  return {
    rssPerMsg: per(m.rssBytes),
    heapPerMsg: per(m.heapBytes),
    externalPerMsg: per(m.externalBytes),
    indexHeapPerMsg: per(m.indexHeapBytes),
    estimatePerMsg: per(m.estimateBytes),
    held: m.held,
    rssBytes: m.rssBytes,
    heapBytes: m.heapBytes,
    seconds: (Date.now() - t) / 1000,
  }
}

// ---------------------------------------------------------------- comparison

function jaccard(a, b) {
  let sum = 0
  for (let i = 0; i < a.length; i++) {
    const x = new Set(a[i])
    const y = new Set(b[i])
    if (x.size === 0 && y.size === 0) {
      sum += 1
      continue
    }
    let both = 0
    for (const id of x) if (y.has(id)) both++
    sum += both / (x.size + y.size - both)
  }
  return sum / a.length
}

async function runSize(n, allQueries, tmp) {
  const started = Date.now()
  const queries = allQueries.slice(0, queryCount(n))
  // Flat strings, as JSON.parse of real payloads gives them; the same JSON feeds the
  // memory children.
  let json = JSON.stringify(makeCorpus(n, CORPUS_SEED))
  const file = path.join(tmp, `corpus-${n}.json`)
  fs.writeFileSync(file, json)
  const docs = JSON.parse(json)
  json = null
  let chars = 0
  for (const d of docs) chars += d.text.length

  const missing = addonMissing()
  const rows = {}
  for (const name of IMPLS) {
    if (name === 'addon' && missing) {
      rows[name] = { na: missing }
      continue
    }
    try {
      rows[name] = await measure(name, n, docs, queries)
    } catch (err) {
      if (name !== 'addon') throw err
      rows[name] = { na: `failed: ${String(err.message).split('\n')[0]}`, error: true }
    }
    if (!JSON_OUT && !rows[name].na) process.stderr.write(`  N=${n} ${name}: build ${fmtMs(rows[name].buildMs)} ms, p50 ${fmtMs(rows[name].p50Ms)} ms\n`)
  }
  // The pre-lowered scan must find exactly what the original finds.
  const a = rows.linear.ids
  const b = rows['linear-prelowered'].ids
  for (let i = 0; i < a.length; i++) {
    if (a[i].join() !== b[i].join()) throw new Error(`linear and linear-prelowered disagree on query ${JSON.stringify(queries[i])}`)
  }
  for (const name of IMPLS) {
    if (rows[name].na) continue
    try {
      rows[name].memory = memory(name, n, file)
    } catch (err) {
      if (name !== 'addon') throw err
      rows[name].memory = { error: String(err.message).split('\n')[0] }
    }
  }
  fs.rmSync(file, { force: true })

  const idsOf = (name) => (rows[name].na ? null : rows[name].ids)
  const overlap = {}
  for (const [x, y] of [
    ['addon', 'minisearch'],
    ['addon', 'linear'],
    ['linear', 'minisearch'],
  ]) {
    overlap[`${x}~${y}`] = idsOf(x) && idsOf(y) ? jaccard(idsOf(x), idsOf(y)) : null
  }
  const notes = []
  if (!rows.addon.na) {
    const known = new Set(docs.map((d) => d.id))
    const got = rows.addon.ids.flat()
    const unknown = got.filter((id) => !known.has(id)).length
    if (unknown) notes.push(`${unknown} of ${got.length} addon result ids are not message ids of the corpus (shape: see idOf); overlap figures are off`)
  }
  const ms = rows.minisearch
  if (ms.buildMs > 20_000 || (ms.memory?.heapBytes ?? 0) > 2 ** 30) {
    notes.push(`MiniSearch at N=${fmt(n)} is heavy: addAll ${fmtS(ms.buildMs)} s, ${fmtGiB(ms.memory?.heapBytes)} GiB of heap (messages + index), query p50 ${fmtMs(ms.p50Ms)} ms; kept in the run`)
  }
  for (const name of IMPLS) for (const t of rows[name].notes ?? []) notes.push(`${name}: ${t}`)
  for (const name of IMPLS) delete rows[name].notes
  for (const name of IMPLS) delete rows[name].ids
  return { n, queries: queries.length, meanChars: chars / n, rows, overlap, notes, seconds: (Date.now() - started) / 1000 }
}

function ratios(r) {
  const { rows } = r
  const a = rows.addon
  if (a.na) return { vsLinear: null, vsLinearPrelowered: null, vsMiniSearchQuery: null, vsMiniSearchBuild: null }
  return {
    vsLinear: rows.linear.p50Ms / a.p50Ms,
    vsLinearPrelowered: rows['linear-prelowered'].p50Ms / a.p50Ms,
    vsMiniSearchQuery: rows.minisearch.p50Ms / a.p50Ms,
    vsMiniSearchBuild: rows.minisearch.buildMs / a.buildMs,
  }
}

function targets(results) {
  const r = results.find((x) => x.n === TARGET_N)
  if (!r) return { na: `N=${fmt(TARGET_N)} not in this run` }
  const a = r.rows.addon
  if (a.na) return { na: a.na }
  const q = ratios(r)
  return {
    p50: { met: a.p50Ms <= TARGETS.p50Ms, value: a.p50Ms },
    vsLinear: { met: q.vsLinear >= TARGETS.vsLinear, value: q.vsLinear, prelowered: q.vsLinearPrelowered },
    vsMiniSearchQuery: { met: q.vsMiniSearchQuery >= TARGETS.vsMiniSearchQuery, value: q.vsMiniSearchQuery },
    vsMiniSearchBuild: { met: q.vsMiniSearchBuild >= TARGETS.vsMiniSearchBuild, value: q.vsMiniSearchBuild },
  }
}

// ---------------------------------------------------------------- report

const fmt = (n) => Math.round(n).toLocaleString('en-US')
const fmtMs = (x) => (x == null ? '-' : x === 0 ? '0' : x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x >= 1 ? x.toFixed(2) : x.toFixed(3))
const fmtS = (ms) => (ms / 1000).toFixed(1)
const fmtGiB = (b) => (b == null ? '?' : (b / 2 ** 30).toFixed(2))
const fmtX = (x) => (x == null ? 'n/a' : `${x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2)}x`)
const pad = (s, w) => String(s).padStart(w)

function printReport(result) {
  const { results } = result
  console.log(`Channel search benchmark (${result.mode} run; node ${process.version}, ${os.cpus().length} cores, ${Math.round(os.totalmem() / 2 ** 30)} GiB; minisearch ${result.minisearchVersion})`)
  console.log(`corpus seed 0x${CORPUS_SEED.toString(16)}, query seed 0x${QUERY_SEED.toString(16)}; top ${LIMIT} results per query; times in ms; memory = messages + index, bytes per message`)
  for (const r of results) {
    console.log('')
    console.log(`N = ${fmt(r.n)} messages (mean text ${r.meanChars.toFixed(0)} chars), ${r.queries} queries, ${r.seconds.toFixed(0)} s`)
    console.log(`${''.padEnd(19)}${pad('build', 10)}${pad('1st query', 11)}${pad('p50', 10)}${pad('p99', 10)}${pad('results/q', 11)}${pad('RSS B/msg', 11)}${pad('heap B/msg', 12)}`)
    for (const name of IMPLS) {
      const x = r.rows[name]
      if (x.na) {
        console.log(`${name.padEnd(19)}n/a (${x.na})`)
        continue
      }
      const m = x.memory ?? {}
      const mem = m.error ? `  memory: ${m.error}` : `${pad(m.rssPerMsg == null ? '-' : fmt(m.rssPerMsg), 11)}${pad(m.heapPerMsg == null ? '-' : fmt(m.heapPerMsg), 12)}`
      console.log(`${name.padEnd(19)}${pad(fmtMs(x.buildMs), 10)}${pad(fmtMs(x.firstQueryMs), 11)}${pad(fmtMs(x.p50Ms), 10)}${pad(fmtMs(x.p99Ms), 10)}${pad(x.resultsPerQuery.toFixed(2), 11)}${mem}`)
    }
    const ms = r.rows.minisearch.memory
    const am = r.rows.addon.memory
    const extra = [`minisearch index alone ${fmt(ms.indexHeapPerMsg)} B/msg heap`]
    if (am && !am.error && am.estimatePerMsg != null) extra.push(`addon store estimate ${fmt(am.estimatePerMsg)} B/msg (stats().messageBytes)`)
    console.log(`  ${extra.join('; ')}`)
    const o = r.overlap
    const j = (x) => (x == null ? 'n/a' : x.toFixed(2))
    console.log(`  top-${LIMIT} overlap (mean Jaccard): addon~minisearch ${j(o['addon~minisearch'])}, addon~linear ${j(o['addon~linear'])}, linear~minisearch ${j(o['linear~minisearch'])}`)
    for (const note of r.notes) console.log(`  note: ${note}`)
  }
  console.log('')
  console.log('addon speedups (other / addon; query = p50)')
  console.log(`${'N'.padEnd(12)}${pad('vs linear', 12)}${pad('vs prelowered', 15)}${pad('vs minisearch query', 21)}${pad('vs minisearch build', 21)}`)
  for (const r of results) {
    const q = ratios(r)
    const na = r.rows.addon.na
    if (na) console.log(`${fmt(r.n).padEnd(12)}n/a (${na})`)
    else console.log(`${fmt(r.n).padEnd(12)}${pad(fmtX(q.vsLinear), 12)}${pad(fmtX(q.vsLinearPrelowered), 15)}${pad(fmtX(q.vsMiniSearchQuery), 21)}${pad(fmtX(q.vsMiniSearchBuild), 21)}`)
  }
  console.log('')
  const t = result.targets
  console.log(`targets at N = ${fmt(TARGET_N)}`)
  const line = (label, cell) => console.log(`  ${label.padEnd(46)}${cell}`)
  const verdict = (x, figure) => (t.na ? `n/a (${t.na})` : `${x.met ? 'MET' : 'MISSED'} (${figure})`)
  line(`p50 query <= ${TARGETS.p50Ms} ms`, verdict(t.p50, t.na ? '' : `${fmtMs(t.p50?.value)} ms`))
  line(`>= ${TARGETS.vsLinear}x faster than linear (p50)`, verdict(t.vsLinear, t.na ? '' : `${fmtX(t.vsLinear?.value)}; vs linear-prelowered ${fmtX(t.vsLinear?.prelowered)}`))
  line(`>= ${TARGETS.vsMiniSearchQuery}x faster than MiniSearch per query (p50)`, verdict(t.vsMiniSearchQuery, t.na ? '' : fmtX(t.vsMiniSearchQuery?.value)))
  line(`build >= ${TARGETS.vsMiniSearchBuild}x faster than MiniSearch addAll`, verdict(t.vsMiniSearchBuild, t.na ? '' : fmtX(t.vsMiniSearchBuild?.value)))
  console.log('')
  console.log(`(${result.seconds.toFixed(0)} s; p99 over ${results.map((r) => r.queries).join('/')} queries${results.some((r) => r.queries < 100) ? ' is close to the maximum where there are fewer than 100' : ''})`)
}

// ---------------------------------------------------------------- main

async function main() {
  if (argv.includes('--memory')) return memoryChild(option('--memory'), Number(option('--n')), option('--corpus'))
  const started = Date.now()
  const ns = sizes()
  const allQueries = makeQueries(Math.max(...ns.map(queryCount)), QUERY_SEED)
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'search-bench-'))
  const results = []
  try {
    for (const n of ns) results.push(await runSize(n, allQueries, tmp))
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true })
  }
  const result = {
    mode: QUICK ? 'quick' : 'full',
    node: process.version,
    minisearchVersion: minisearchVersion(),
    results: results.map((r) => ({ ...r, ratios: ratios(r) })),
    targets: targets(results),
    seconds: (Date.now() - started) / 1000,
  }
  if (JSON_OUT) console.log(JSON.stringify(result, null, 2))
  else printReport(result)
  if (results.some((r) => r.rows.addon.error || r.rows.addon.memory?.error)) process.exitCode = 1
}

function minisearchVersion() {
  try {
    const dir = path.dirname(require.resolve('minisearch'))
    for (let d = dir; d !== path.dirname(d); d = path.dirname(d)) {
      const p = path.join(d, 'package.json')
      if (fs.existsSync(p)) {
        const pkg = JSON.parse(fs.readFileSync(p, 'utf8'))
        if (pkg.name === 'minisearch') return pkg.version
      }
    }
  } catch {}
  return '?'
}

if (require.main === module) {
  main().catch((err) => {
    console.error(err)
    process.exit(1)
  })
}

module.exports = { toEvents, CHANNEL }
