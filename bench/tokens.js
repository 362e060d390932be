#!/usr/bin/env node
// The engine's token estimator against Claude's reference tokenizer
// (`@anthropic-ai/tokenizer`), on the real texts of bench/token-corpus.js.
//
//   node bench/tokens.js          held-out error by kind; the sum bound (what budgets count
//                                 a section by) checked on held-out texts and on sums of
//                                 them, before and after calibration; budgets packed by it
//                                 and counted by the reference; speed. Exits 1 when a
//                                 held-out text, sum or packed budget is over its bound
//   node bench/tokens.js --fit    fits the weights and the sum bound on the training texts
//                                 and prints them as src/core/tokens.rs declares them
//
// Sums: consecutive texts of one source (a language, a file type, the chat), 1 to ~16,000
// estimated tokens, and random mixes of every kind, joined by line feeds, drawn by a
// seeded generator from the training texts (for the fit) or the held-out ones (checks).
'use strict'

const path = require('node:path')
const { performance } = require('node:perf_hooks')
const { tokenCorpus, KINDS } = require('./token-corpus')
const { referenceTokens } = require('./reference-tokens')
const jsTokens = require('./js-tokens')
const { xorshift } = require('./rng')

const addon = require(path.join(__dirname, '..'))
const FIELDS = ['words', 'longLetters', 'digits', 'digitRuns', 'punctuation', 'backslashes', 'extraSpaces', 'spaceRuns', 'lineBreaks', 'tabs', 'tabRuns', 'cjk', 'supplementary', 'joiners', 'symbols', 'other', 'otherRuns']
/** Budgets the packing check fills. */
const BUDGETS = [500, 2_000, 8_000]
/** Sums drawn per source, and of mixed kinds, per split. */
const SUMS_PER_SOURCE = 60
const MIXED_SUMS = 240
/** The largest sum drawn, in estimated tokens. */
const LARGEST_SUM = 16_000
/** Sums of this size tell what a model's calibration learns (a request's size). */
const REQUEST_SIZE = [1_000, 6_000]

const source = require('node:fs').readFileSync(path.join(__dirname, '..', 'src', 'core', 'tokens.rs'), 'utf8')
const constant = (name) => Number(source.match(new RegExp(`pub const ${name}: f64 = ([^;]+);`))[1])
/** Responses a calibration sees before a check. */
const CALIBRATION_REQUESTS = 40
const NEWLINE = () => addon.tokenEstimate('\n').estimate

const quantile = (values, q) => {
  const s = [...values].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]
}
const sum = (list, f) => list.reduce((n, x) => n + f(x), 0)
const pct = (x) => `${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)}%`

/** Least squares with non-negative weights (variables with a negative solution dropped). */
function fitWeights(rows) {
  const n = FIELDS.length
  const active = new Array(n).fill(true)
  for (;;) {
    const idx = [...Array(n).keys()].filter((i) => active[i])
    const m = idx.length
    const a = Array.from({ length: m }, () => new Array(m + 1).fill(0))
    for (const r of rows) {
      // Weighted by 1/tokens: relative errors count, not the long texts alone.
      const w = 1 / r.tokens
      for (let i = 0; i < m; i++) {
        a[i][m] += w * r.x[idx[i]] * r.tokens
        for (let j = 0; j < m; j++) a[i][j] += w * r.x[idx[i]] * r.x[idx[j]]
      }
    }
    for (let i = 0; i < m; i++) a[i][i] += 1e-6
    for (let i = 0; i < m; i++) {
      let p = i
      for (let k = i + 1; k < m; k++) if (Math.abs(a[k][i]) > Math.abs(a[p][i])) p = k
      ;[a[i], a[p]] = [a[p], a[i]]
      for (let k = 0; k < m; k++) {
        if (k === i) continue
        const q = a[k][i] / a[i][i]
        for (let j = i; j <= m; j++) a[k][j] -= q * a[i][j]
      }
    }
    const w = new Array(n).fill(0)
    idx.forEach((v, i) => (w[v] = a[i][m] / a[i][i]))
    const negative = w.findIndex((x) => x < 0)
    if (negative < 0) return w
    active[negative] = false
  }
}

/** `ceil(slope * e + spread * sqrt(e) + offset)`. */
const boundOf = (m, e) => (e > 0 ? Math.ceil(m.slope * e + m.spread * Math.sqrt(e) + m.offset) : 0)

/**
 * The smallest bound of the form above that holds on every item (texts and sums), with the
 * least mean overshoot on the sums: `fixed(item)` is what the item's source adds to the
 * slope (0 before calibration), `scale(item)` what scales the spread and offset.
 */
function fitBound(items, slopeOf, scaleOf, extras) {
  let best = null
  const sums = items.filter((x) => x.n > 1)
  for (const extra of extras) {
    for (let s10 = 0; s10 <= 80; s10++) {
      const spread = s10 / 10
      let offset = 0
      for (const x of items) offset = Math.max(offset, (x.tokens - (slopeOf(x) + extra) * x.estimate) / scaleOf(x) - spread * Math.sqrt(x.estimate))
      offset = Math.ceil(offset * 100) / 100
      const over = sum(sums, (x) => ((slopeOf(x) + extra) * x.estimate + scaleOf(x) * (spread * Math.sqrt(x.estimate) + offset)) / x.tokens) / sums.length
      if (best === null || over < best.over) best = { extra, spread, offset, over }
    }
  }
  return best
}

/** Sums of `rows` (one split): consecutive texts of each source, and mixes of every kind. */
function sums(rows, seed) {
  const random = xorshift(seed)
  const out = []
  const draw = (list, n, label, shuffle) => {
    for (let p = 0; p < n; p++) {
      const target = Math.exp(random() * Math.log(LARGEST_SUM))
      let i = Math.floor(random() * list.length)
      const parts = []
      let estimate = 0
      while (estimate < target && parts.length < list.length) {
        const r = list[shuffle ? Math.floor(random() * list.length) : i++]
        if (r === undefined) break
        estimate += r.estimate + (parts.length > 0 ? NEWLINE() : 0)
        parts.push(r)
      }
      if (parts.length < 2) continue
      out.push({ source: label, kind: parts[0].kind, n: parts.length, estimate, tokens: referenceTokens(parts.map((r) => r.text).join('\n')) })
    }
  }
  for (const src of [...new Set(rows.map((r) => r.source))]) draw(rows.filter((r) => r.source === src), SUMS_PER_SOURCE, src, false)
  draw(rows, MIXED_SUMS, 'mixed', true)
  return out
}

/**
 * What a gateway's responses would calibrate on, for each source of `rows`, each kind and
 * all of them: 40 requests of consecutive texts (as the corpus orders them), a request's
 * size each.
 */
function requestsOf(rows, seed) {
  const random = xorshift(seed)
  const make = (list) =>
    Array.from({ length: CALIBRATION_REQUESTS }, () => {
      const target = REQUEST_SIZE[0] + random() * (REQUEST_SIZE[1] - REQUEST_SIZE[0])
      let i = Math.floor(random() * list.length)
      const parts = []
      let estimate = 0
      while (estimate < target && parts.length < list.length) {
        const r = list[i++ % list.length]
        estimate += r.estimate + (parts.length > 0 ? NEWLINE() : 0)
        parts.push(r.text)
      }
      return { estimate, tokens: referenceTokens(parts.join('\n')) }
    })
  // Mixed traffic is every kind in the corpus's order: each request mostly one source.
  const out = { mixed: make(rows) }
  for (const src of [...new Set(rows.map((r) => r.source))]) out[src] = make(rows.filter((r) => r.source === src))
  for (const kind of KINDS) out[`kind:${kind}`] = make(rows.filter((r) => r.kind === kind))
  return out
}

/** Calibrates the process's "default" model on `requests`, as their responses would. */
function calibrateOn(requests) {
  addon.resetCalibration()
  for (const x of requests) addon.calibrate({ tokensEstimated: x.estimate, inputTokens: x.tokens })
  return addon.tokenCalibration()
}

function measure(corpus) {
  return corpus.map((t) => {
    const e = addon.tokenEstimate(t.text, { counts: true })
    return { ...t, n: 1, tokens: referenceTokens(t.text), x: FIELDS.map((f) => e.counts[f]), estimate: e.estimate, upper: e.upperBound }
  })
}

function fit(rows) {
  const train = rows.filter((r) => !r.heldOut)
  const w = fitWeights(train)
  console.log(`fitted on ${train.length} texts (${rows.length - train.length} held out)`)
  console.log(`pub const WEIGHTS: [f64; ${FIELDS.length}] = [${w.map((x) => x.toFixed(3)).join(', ')}];`)
  console.log(`// ${FIELDS.map((f, i) => `${f} ${w[i].toFixed(3)}`).join(', ')}`)
  // The bounds are fitted on the estimates as src/core/tokens.rs computes them now: refit
  // them after the weights change.
  const trainSums = sums(train, 0x51ed)
  const items = [...train.filter((r) => r.estimate > 0), ...trainSums]
  const plain = fitBound(items, () => 1, () => 1, Array.from({ length: 51 }, (_, i) => i / 100))
  console.log(`pub const SUM_SLOPE: f64 = ${(1 + plain.extra).toFixed(2)};`)
  console.log(`pub const SUM_SPREAD: f64 = ${plain.spread.toFixed(1)};`)
  console.log(`pub const SUM_OFFSET: f64 = ${plain.offset.toFixed(2)};`)
  console.log(`mean overshoot of the bound on ${trainSums.length} training sums: ${pct(plain.over - 1)}`)
}

/**
 * Held-out texts of `kinds` packed in order while the bound of their summed estimates fits
 * `budget`, then counted by the reference tokenizer: the fill a budget gets, and whether
 * any pack is over. Packs that took every text left are not counted for the fill.
 */
function packedBudgets(heldOut, requests) {
  const failures = []
  const lines = []
  for (const calibrated of [false, true]) {
    lines.push(calibrated ? `after calibrating the "default" model on ${CALIBRATION_REQUESTS} training requests of the same kind (its sources in turn, as the corpus orders them):` : 'uncalibrated:')
    lines.push(`  kind    ${BUDGETS.map((b) => `within ${b.toLocaleString('en-US')}: packs mean  fullest`.padEnd(34)).join('')}`)
    for (const kinds of [...KINDS.map((k) => [k]), KINDS]) {
      if (calibrated) calibrateOn(requests[kinds.length > 1 ? 'mixed' : `kind:${kinds[0]}`])
      else addon.resetCalibration()
      const texts = heldOut.filter((r) => kinds.includes(r.kind))
      const cells = []
      for (const budget of BUDGETS) {
        let start = 0
        const fills = []
        while (start < texts.length && fills.length < 50) {
          let estimate = 0
          let end = start
          while (end < texts.length) {
            const next = estimate + texts[end].estimate + (end > start ? NEWLINE() : 0)
            if (addon.tokenBound(next) > budget) break
            estimate = next
            end++
          }
          if (end === start) {
            start++
            continue
          }
          const real = referenceTokens(texts.slice(start, end).map((r) => r.text).join('\n'))
          if (real > budget) failures.push(`${kinds.length > 1 ? 'mixed' : kinds[0]} ${budget}${calibrated ? ' calibrated' : ''}: ${real} real tokens`)
          if (end < texts.length) fills.push(real / budget)
          start = end
        }
        const mean = fills.length > 0 ? sum(fills, (f) => f) / fills.length : 0
        cells.push(`${String(fills.length).padStart(16)} ${(mean * 100).toFixed(1).padStart(5)}% ${(Math.max(0, ...fills) * 100).toFixed(1).padStart(6)}%`.padEnd(34))
      }
      lines.push(`  ${(kinds.length > 1 ? 'mixed' : kinds[0]).padEnd(7)} ${cells.join('')}`)
    }
  }
  addon.resetCalibration()
  return { failures, lines }
}

/**
 * Held-out sums against the bound, before calibration and once the engine has calibrated
 * on training requests of the sum's own source (a gateway's traffic): none may be over.
 */
function checkSums(heldSums, requests) {
  const problems = []
  const over = heldSums.filter((x) => addon.tokenBound(x.estimate) < x.tokens)
  if (over.length > 0) problems.push(`${over.length} held-out sums above the uncalibrated bound`)
  const before = new Map()
  const after = new Map()
  let calOver = 0
  for (const src of [...new Set(heldSums.map((x) => x.source))]) {
    const list = heldSums.filter((x) => x.source === src)
    addon.resetCalibration()
    for (const x of list) before.set(x, x.tokens / addon.tokenBound(x.estimate))
    calibrateOn(requests[src])
    for (const x of list) {
      after.set(x, x.tokens / addon.tokenBound(x.estimate))
      if (addon.tokenBound(x.estimate) < x.tokens) calOver++
    }
  }
  addon.resetCalibration()
  if (calOver > 0) problems.push(`${calOver} held-out sums above the bound calibrated on their source`)
  console.log(`held-out sums: ${heldSums.length} (2 to ${Math.max(...heldSums.map((x) => x.n))} texts, up to ${Math.round(Math.max(...heldSums.map((x) => x.estimate))).toLocaleString('en-US')} estimated tokens), ${over.length} over the bound, ${calOver} over once calibrated on their source;`)
  console.log('real / bound, mean over the sums of 1,000 estimated tokens or more:')
  const mean = (m, list) => (list.length > 0 ? sum(list, (x) => m.get(x)) / list.length : 0)
  for (const kind of [...KINDS, 'mixed']) {
    const list = heldSums.filter((x) => (kind === 'mixed' ? x.source === 'mixed' : x.kind === kind && x.source !== 'mixed') && x.estimate >= 1_000)
    console.log(`  ${kind.padEnd(7)} ${String(list.length).padStart(4)} sums   uncalibrated ${(mean(before, list) * 100).toFixed(1)}%   calibrated on the source ${(mean(after, list) * 100).toFixed(1)}%`)
  }
  return problems
}

function speed(rows) {
  const texts = rows.map((r) => r.text)
  const bytes = sum(texts, (t) => Buffer.byteLength(t))
  const time = (f) => {
    f()
    const t0 = performance.now()
    for (let i = 0; i < 3; i++) f()
    return (performance.now() - t0) / 3
  }
  const ours = time(() => texts.forEach((t) => addon.tokenEstimate(t)))
  const plain = time(() => texts.forEach((t) => jsTokens.upperBound(t)))
  const quarter = time(() => texts.forEach((t) => addon.estimateTokens(t)))
  const reference = time(() => texts.forEach((t) => referenceTokens(t)))
  const mbps = (ms) => `${(bytes / 1e6 / (ms / 1000)).toFixed(0)} MB/s`
  console.log(`speed over ${(bytes / 1e6).toFixed(1)} MB (${texts.length} calls from JS): tokenEstimate ${mbps(ours)}, the same estimator in plain JS ${mbps(plain)} (addon ${(plain / ours).toFixed(1)}x), estimateTokens (length / 4) ${mbps(quarter)}, reference tokenizer ${mbps(reference)} (${(reference / ours).toFixed(0)}x slower)`)
}

function report(rows) {
  const heldOut = rows.filter((r) => r.heldOut)
  console.log(`held-out texts: ${heldOut.length} of ${rows.length}; error = (estimate - reference) / reference`)
  console.log('kind    texts   p5      p50     p95     total   | upper: total  under | length/4: p50   total')
  let under = 0
  for (const kind of [...KINDS, 'all']) {
    const set = kind === 'all' ? heldOut : heldOut.filter((r) => r.kind === kind)
    const rel = set.map((r) => (r.estimate - r.tokens) / r.tokens)
    const quarter = set.map((r) => (Math.ceil(r.text.length / 4) - r.tokens) / r.tokens)
    const real = sum(set, (r) => r.tokens)
    const below = set.filter((r) => r.upper < r.tokens).length
    if (kind !== 'all') under += below
    console.log(
      `${kind.padEnd(7)} ${String(set.length).padStart(5)}   ${[0.05, 0.5, 0.95].map((q) => pct(quantile(rel, q)).padEnd(7)).join(' ')} ${pct(sum(set, (r) => r.estimate) / real - 1).padEnd(7)} |        ${pct(sum(set, (r) => r.upper) / real - 1).padEnd(6)} ${String(below).padStart(4)}  |           ${pct(quantile(quarter, 0.5)).padEnd(6)} ${pct(sum(set, (r) => Math.ceil(r.text.length / 4)) / real - 1)}`,
    )
  }
  const requests = requestsOf(rows.filter((r) => !r.heldOut), 0xca1)
  const sumProblems = checkSums(sums(heldOut, 0xc0ffee), requests)
  const packed = packedBudgets(heldOut, requests)
  console.log('budgets filled by the bound of the summed estimates, then counted by the reference tokenizer (real / budget):')
  for (const l of packed.lines) console.log(l)
  speed(rows)
  const problems = [...(under > 0 ? [`${under} held-out texts above their upper bound`] : []), ...sumProblems, ...packed.failures]
  if (problems.length > 0) {
    console.error(`FAIL: ${problems.join('; ')}`)
    process.exitCode = 1
  } else console.log('ok: every held-out text, sum and packed budget is within its bound')
}

async function main() {
  addon.resetCalibration()
  const rows = measure(await tokenCorpus())
  if (process.argv.includes('--fit')) fit(rows)
  else report(rows)
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
