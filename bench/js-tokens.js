'use strict'

// The engine's token estimator (src/core/tokens.rs) in plain JavaScript, for the benchmarks'
// JS baselines: the same counts, weights and bound (the constants are read from the
// Rust source, so the two cannot drift apart).

const fs = require('node:fs')
const path = require('node:path')

const source = fs.readFileSync(path.join(__dirname, '..', 'src', 'core', 'tokens.rs'), 'utf8')
const constant = (name) => {
  const m = source.match(new RegExp(`pub const ${name}: [^=]+= ([^;]+);`))
  if (!m) throw new Error(`src/core/tokens.rs: ${name} not found`)
  return m[1]
}
const WEIGHTS = constant('WEIGHTS').replace(/[[\]\s]/g, '').split(',').filter(Boolean).map(Number)
const SUM_SLOPE = Number(constant('SUM_SLOPE'))
const SUM_SPREAD = Number(constant('SUM_SPREAD'))
const SUM_OFFSET = Number(constant('SUM_OFFSET'))

const isCjk = (cp) =>
  (cp >= 0x1100 && cp <= 0x11ff) || (cp >= 0x2e80 && cp <= 0x9fff) || (cp >= 0xac00 && cp <= 0xd7af) || (cp >= 0xf900 && cp <= 0xfaff) || (cp >= 0xff00 && cp <= 0xffef)

/** Indexes of the counts, in src/core/tokens.rs's `Counts::to_array` order. */
const [WORDS, LONG_LETTERS, DIGITS, DIGIT_RUNS, PUNCTUATION, BACKSLASHES, EXTRA_SPACES, SPACE_RUNS, LINE_BREAKS, TABS, TAB_RUNS, CJK, SUPPLEMENTARY, JOINERS, SYMBOLS, OTHER, OTHER_RUNS] = WEIGHTS.keys()

/** The central estimate of a text's tokens. */
function estimate(text) {
  const c = new Array(WEIGHTS.length).fill(0)
  let letters = 0
  let spaces = 0
  let prevDigit = false
  let prevTab = false
  let prevOther = false
  for (const ch of text) {
    const cp = ch.codePointAt(0)
    if (cp < 0x80) {
      const letter = (cp >= 65 && cp <= 90) || (cp >= 97 && cp <= 122)
      if (letter) {
        if (letters === 0) c[WORDS]++
        letters++
        if (letters > 6) c[LONG_LETTERS]++
      } else letters = 0
      if (cp === 32) {
        spaces++
        if (spaces > 1) c[EXTRA_SPACES]++
        if (spaces === 2) c[SPACE_RUNS]++
      } else spaces = 0
      const digit = cp >= 48 && cp <= 57
      if (digit) {
        c[DIGITS]++
        if (!prevDigit) c[DIGIT_RUNS]++
      } else if (cp === 10 || cp === 13) c[LINE_BREAKS]++
      else if (cp === 9) {
        c[TABS]++
        if (!prevTab) c[TAB_RUNS]++
      } else if (cp === 92) c[BACKSLASHES]++
      else if (!letter && cp > 32 && cp < 127) c[PUNCTUATION]++
      prevDigit = digit
      prevTab = cp === 9
      prevOther = false
      continue
    }
    letters = 0
    spaces = 0
    prevDigit = false
    prevTab = false
    let other = false
    if (cp > 0xffff) c[SUPPLEMENTARY]++
    else if (cp === 0x200d || cp === 0xfe0f) c[JOINERS]++
    else if (isCjk(cp)) c[CJK]++
    else if (cp >= 0x2190 && cp <= 0x2bff) c[SYMBOLS]++
    else {
      c[OTHER]++
      if (!prevOther) c[OTHER_RUNS]++
      other = true
    }
    prevOther = other
  }
  return c.reduce((n, x, i) => n + x * WEIGHTS[i], 0)
}

/** The bound of a central estimate (of one text or a section's sum), uncalibrated. */
const upperOf = (e) => (e > 0 ? Math.max(0, Math.ceil(SUM_SLOPE * e + SUM_SPREAD * Math.sqrt(e) + SUM_OFFSET)) : 0)
/** The upper bound of a text (0 for ""). */
const upperBound = (text) => (text === '' ? 0 : Math.max(1, upperOf(estimate(text))))

module.exports = { estimate, upperOf, upperBound }
