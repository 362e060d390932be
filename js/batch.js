// Fast paths that batch the boundary crossing. Loaded by index.js over the native exports.
//
// A napi call per reply costs more than the whole JavaScript budget loop, so
// applyThreadBudget reads each reply's `text.length` here (one property read, as the
// original module did) and makes one native call, `threadBudgetCut`, which applies the
// budget rule in Rust. Anything malformed goes to the native applyThreadBudget, which
// validates and throws the TypeError / RangeError naming the field.
'use strict'

const { unreadable: unreadableAs } = require('./errors.js')

function validBudget(b) {
  return b === undefined || b === null || (typeof b === 'number' && b >= 0 && b !== Infinity)
}

module.exports = function fastPaths(binding) {
  // Each value is read once. When the fast path cannot take the input, the native
  // export gets what was read (not the caller's objects again), so a getter that
  // answers differently on a second read, or re-enters, is never read twice.
  function applyThreadBudget(input) {
    if (input === null || typeof input !== 'object') return binding.applyThreadBudget(input)
    let replies
    let budget
    let isArray
    try {
      replies = input.replies
      budget = input.budgetTokens
      isArray = Array.isArray(replies)
    } catch (err) {
      throw unreadable(err)
    }
    if (!isArray) return binding.applyThreadBudget({ replies, budgetTokens: budget })
    const n = replies.length
    const lengths = new Uint32Array(n)
    const tss = new Array(n)
    let read = null
    try {
      for (let i = 0; i < n; i++) {
        const r = replies[i]
        if (r === null || typeof r !== 'object') {
          read = readRest(replies, i, lengths, tss, r, undefined, undefined)
          break
        }
        const text = r.text
        const ts = r.ts
        if (typeof text !== 'string' || typeof ts !== 'string') {
          read = readRest(replies, i, lengths, tss, r, text, ts)
          break
        }
        lengths[i] = text.length
        tss[i] = ts
      }
    } catch (err) {
      throw unreadable(err)
    }
    if (read !== null || !validBudget(budget)) {
      const out = binding.applyThreadBudget({ replies: read ?? tss.map((ts, j) => ({ text: 'x'.repeat(lengths[j]), ts })), budgetTokens: budget })
      // The native export took what was read; the answer holds the caller's objects.
      const first = n - out.included.length
      return { included: replies.slice(first), truncation: out.truncation }
    }
    const first = binding.threadBudgetCut(lengths, budget)
    return {
      included: replies.slice(first),
      truncation: {
        total_replies: n,
        included_replies: n - first,
        strategy: 'most_recent',
        omitted_range_ts: first > 0 ? [tss[0], tss[first - 1]] : null,
      },
    }
  }
  return { applyThreadBudget }
}

// The replies as read so far (the first `i` as their length and ts, reply `i` with the
// text and ts already read from it) and the rest read once each, for the native export
// to validate and name the bad field.
function readRest(replies, i, lengths, tss, r, text, ts) {
  const read = []
  for (let j = 0; j < i; j++) read.push({ text: 'x'.repeat(lengths[j]), ts: tss[j] })
  read.push(r !== null && typeof r === 'object' ? { ...r, text, ts } : r)
  for (let j = i + 1; j < replies.length; j++) {
    const x = replies[j]
    read.push(x !== null && typeof x === 'object' ? { ...x, text: x.text, ts: x.ts } : x)
  }
  return read
}

// What the caller's code threw while its input was read, named after the export.
const unreadable = (err) => unreadableAs('applyThreadBudget', 'input', err)
