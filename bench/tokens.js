#!/usr/bin/env node
// The engine's token estimator against Claude's reference tokenizer
// (`@anthropic-ai/tokenizer`), on the real texts of bench/token-corpus.js.
//
//   node bench/tokens.js          held-out error by kind, budgets packed by the upper
//                                 bound checked against the reference, speed; exits 1
//                                 when a held-out text or a packed budget is over
//   node bench/tokens.js --fit    fits the weights and the upper bound on the training
//                                 texts and prints them as src/tokens.rs declares them
'use strict'

const path = require('node:path')
const { performance } = require('node:perf_hooks')
const { tokenCorpus, KINDS } = require('./token-corpus')
const { referenceTokens } = require('./reference-tokens')
const jsTokens = require('./js-tokens')

const addon = require(path.join(__dirname, '..'))
const FIELDS = ['words', 'longLetters', 'digits', 'digitRuns', 'punctuation', 'extraSpaces', 'lineBreaks', 'cjk', 'supplementary', 'joiners', 'other', 'otherRuns']
/** Budgets the packing check fills. */
const BUDGETS = [500, 2_000, 8_000]

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

/** The smallest `ceil(k * estimate + c)` over the texts: holds on each, least total. */
function fitUpper(rows, estimateOf) {
  let best = null
  const total = sum(rows, (r) => r.tokens)
  for (let k100 = 100; k100 <= 200; k100++) {
    const k = k100 / 100
    let c = 0
    for (const r of rows) c = Math.max(c, r.tokens - k * estimateOf(r))
    c = Math.ceil(c * 100) / 100
    const over = sum(rows, (r) => Math.ceil(k * estimateOf(r) + c)) / total
    if (best === null || over < best.over) best = { k, c, over }
  }
  return best
}

function measure(corpus) {
  return corpus.map((t) => {
    const e = addon.tokenEstimate(t.text, { counts: true })
    return { ...t, tokens: referenceTokens(t.text), x: FIELDS.map((f) => e.counts[f]), estimate: e.tokens, upper: e.upperBound }
  })
}

function fit(rows) {
  const train = rows.filter((r) => !r.heldOut)
  const w = fitWeights(train)
  const upper = fitUpper(train, (r) => sum(r.x.map((x, i) => x * w[i]), (v) => v))
  console.log(`fitted on ${train.length} texts (${rows.length - train.length} held out)`)
  console.log(`pub const WEIGHTS: [f64; ${FIELDS.length}] = [${w.map((x) => x.toFixed(3)).join(', ')}];`)
  console.log(`// ${FIELDS.map((f, i) => `${f} ${w[i].toFixed(3)}`).join(', ')}`)
  console.log(`pub const UPPER_SLOPE: f64 = ${upper.k.toFixed(2)};`)
  console.log(`pub const UPPER_OFFSET: f64 = ${upper.c.toFixed(2)};`)
  console.log(`training overshoot of the bound: ${pct(upper.over - 1)}`)
}

/** Held-out texts of `kinds` packed in order while their upper bounds fit `budget`. */
function packedBudgets(heldOut) {
  const failures = []
  const lines = []
  for (const kinds of [...KINDS.map((k) => [k]), KINDS]) {
    const texts = heldOut.filter((r) => kinds.includes(r.kind))
    for (const budget of BUDGETS) {
      let start = 0
      let packs = 0
      let worst = 0
      while (start < texts.length && packs < 50) {
        let used = 0
        let end = start
        // Joined by a line feed: one more token at most each.
        while (end < texts.length && used + texts[end].upper + 1 <= budget) used += texts[end++].upper + 1
        if (end === start) {
          start++
          continue
        }
        const real = referenceTokens(texts.slice(start, end).map((r) => r.text).join('\n'))
        worst = Math.max(worst, real / budget)
        if (real > budget) failures.push(`${kinds.join('+')} ${budget}: ${real} real tokens`)
        packs++
        start = end
      }
      lines.push(`  ${kinds.length > 1 ? 'mixed' : kinds[0]} within ${budget.toLocaleString('en-US')}: ${packs} packs, fullest ${(worst * 100).toFixed(1)}% of the budget`)
    }
  }
  return { failures, lines }
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
  const packed = packedBudgets(heldOut)
  console.log('budgets filled by the upper bound, then counted by the reference tokenizer:')
  for (const l of packed.lines) console.log(l)
  speed(rows)
  const problems = [...(under > 0 ? [`${under} held-out texts above their upper bound`] : []), ...packed.failures]
  if (problems.length > 0) {
    console.error(`FAIL: ${problems.join('; ')}`)
    process.exitCode = 1
  } else console.log('ok: every held-out text and every packed budget is within its upper bound')
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
