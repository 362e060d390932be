// Fast paths that batch the boundary crossing. Loaded by index.js over the native exports.
//
// A napi call per reply costs more than the whole JavaScript budget loop, so
// applyThreadBudget reads each reply's `text.length` here (one property read, as the
// original module did) and makes one native call, `threadBudgetCut`, which applies the
// budget rule in Rust. Anything malformed goes to the native applyThreadBudget, which
// validates and throws the TypeError / RangeError naming the field.
'use strict'

function validBudget(b) {
  return b === undefined || b === null || (typeof b === 'number' && b >= 0 && b !== Infinity)
}

module.exports = function fastPaths(binding) {
  function applyThreadBudget(input) {
    const replies = input !== null && typeof input === 'object' ? input.replies : undefined
    if (!Array.isArray(replies) || !validBudget(input.budgetTokens)) return binding.applyThreadBudget(input)
    const n = replies.length
    const lengths = new Uint32Array(n)
    for (let i = 0; i < n; i++) {
      const r = replies[i]
      if (r === null || typeof r !== 'object' || typeof r.text !== 'string' || typeof r.ts !== 'string') {
        return binding.applyThreadBudget(input)
      }
      lengths[i] = r.text.length
    }
    const first = binding.threadBudgetCut(lengths, input.budgetTokens)
    return {
      included: replies.slice(first),
      truncation: {
        total_replies: n,
        included_replies: n - first,
        strategy: 'most_recent',
        omitted_range_ts: first > 0 ? [replies[0].ts, replies[first - 1].ts] : null,
      },
    }
  }
  return { applyThreadBudget }
}
