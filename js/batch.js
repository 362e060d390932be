// Fast paths that batch the boundary crossing. Loaded by index.js over the native exports.
//
// A napi call costs more than the whole JavaScript budget loop, so applyThreadBudget reads
// the replies' `text.length` here, newest first and only as far as the rule looks (as the
// original module did), and applies the rule here too. Anything malformed in what it reads
// goes to the native applyThreadBudget, which validates and throws the TypeError /
// RangeError naming the field.
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
    if (!isArray || !validBudget(budget)) return binding.applyThreadBudget({ replies, budgetTokens: budget })
    // Newest first, reading only the replies the rule looks at (as the original did): the
    // budget rule of src/budget.rs, the newest always kept.
    const n = replies.length
    const limit = budget === undefined || budget === null ? 8000 : Math.min(Math.floor(budget), 0xffffffff)
    const read = new Array(n)
    let used = 0
    let first = n
    let bad = -1
    let oldest
    try {
      for (let i = n - 1; i >= 0; i--) {
        const r = replies[i]
        if (r === null || typeof r !== 'object') {
          read[i] = r
          bad = i
          break
        }
        const text = r.text
        const ts = r.ts
        read[i] = { text, ts }
        if (typeof text !== 'string' || typeof ts !== 'string') {
          bad = i
          break
        }
        const next = used + Math.ceil(text.length / 4)
        if (next > limit && first !== n) break
        used = next
        first = i
      }
      if (bad < 0 && first > 0) {
        if (read[0] === undefined) {
          const r = replies[0]
          read[0] = r !== null && typeof r === 'object' ? { text: r.text, ts: r.ts } : r
        }
        oldest = read[0]
        if (oldest === null || typeof oldest !== 'object' || typeof oldest.text !== 'string' || typeof oldest.ts !== 'string') bad = 0
      }
      if (bad >= 0) {
        for (let j = 0; j < n; j++) {
          if (read[j] !== undefined) continue
          const x = replies[j]
          read[j] = x !== null && typeof x === 'object' ? { text: x.text, ts: x.ts } : x
        }
      }
    } catch (err) {
      throw unreadable(err)
    }
    if (bad >= 0) {
      // The native export validates what was read and names the bad field.
      const out = binding.applyThreadBudget({ replies: read, budgetTokens: budget })
      return { included: replies.slice(n - out.included.length), truncation: out.truncation }
    }
    return {
      included: replies.slice(first),
      truncation: {
        total_replies: n,
        included_replies: n - first,
        strategy: 'most_recent',
        omitted_range_ts: first > 0 ? [oldest.ts, read[first - 1].ts] : null,
      },
    }
  }
  return { applyThreadBudget }
}

// What the caller's code threw while its input was read, named after the export.
const unreadable = (err) => unreadableAs('applyThreadBudget', 'input', err)
