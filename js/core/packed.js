// The packed form both ingest paths hand to Rust (`crate::core::input::packed` reads it):
// a batch's string fields joined into one string, with each field's length in UTF-16
// units, so the strings cross the boundary as one instead of as JSON, which V8 takes
// longer to write than Rust takes to read.
'use strict'

/**
 * Packs `n` rows of `fields` strings each. `row(i, parts, at)` checks row `i` and writes its
 * fields to `parts[at..at + fields]` (and anything else it packs beside them), or returns
 * `false` when the row cannot be packed: then the whole batch is `null`, for the native
 * JSON path to validate and name the bad field.
 */
function packRows(n, fields, row) {
  const parts = new Array(n * fields)
  for (let i = 0; i < n; i++) if (row(i, parts, i * fields) === false) return null
  const lens = new Uint32Array(n * fields)
  for (let k = 0; k < parts.length; k++) lens[k] = parts[k].length
  return { strings: parts.join(''), lens }
}

module.exports = { packRows }
