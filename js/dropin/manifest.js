// The attachment manifest's persisted form, on the JS side for the common case. Loaded by
// index.js over the native exports (same names, same typings).
//
// A manifest whose records are all well formed and already canonical (what
// recordAttachment writes) is its own persisted form: `JSON.stringify` of it, and
// `JSON.parse` of that, are the answers, and crossing the boundary with 250 KB of records
// only to check them cost 1.6x-2.2x the runner's module. Anything else (a record missing a
// field, of another type, empty, keyed by another id, in camelCase; a lone surrogate; a
// data object rather than text) goes to the native export, which names the bad field or
// drops bad records one by one, as before.
'use strict'

const { unreadable } = require('../core/errors.js')

// JSON.stringify writes a lone surrogate as `\udXXX`: such text goes to the native export,
// which turns it into U+FFFD as it always has.
const mayHoldLoneSurrogate = (text) => text.includes('\\ud')

module.exports = function manifestLayer(binding) {
  const KEY = binding.ATTACHMENT_MANIFEST_KEY
  // What a canonical manifest's text is, matched as text (a fifth of the time JSON.parse
  // takes): Rust's rule (`CANONICAL_TEXT_PATTERN` in src/dropin/manifest.rs), compiled here.
  if (typeof binding.CANONICAL_MANIFEST_TEXT !== 'string') throw new Error('the native addon does not match js/dropin/manifest.js: rebuild it')
  const CANONICAL_TEXT = new RegExp(binding.CANONICAL_MANIFEST_TEXT)

  function serializeManifest(manifest) {
    if (manifest === null || typeof manifest !== 'object') return binding.serializeManifest(manifest)
    // Read once, as the native export reads it (JSON.stringify), and checked on its parse.
    let text
    try {
      text = JSON.stringify(manifest)
    } catch (err) {
      throw unreadable('serializeManifest', 'manifest', err)
    }
    if (typeof text === 'string' && !mayHoldLoneSurrogate(text) && CANONICAL_TEXT.test(text)) return text
    // What was read, for the native export to name the bad field from.
    return binding.serializeManifest(text === undefined ? manifest : JSON.parse(text))
  }

  /** Entry `i` of `list`, its fields read once; null when reading threw (it is skipped). */
  function readEntry(list, i) {
    try {
      const e = list[i]
      if (e === null || typeof e !== 'object') return e
      const type = e.type
      const customType = e.customType
      if (type !== 'custom' || customType !== KEY) return { type, customType }
      return { type, customType, data: e.data }
    } catch {
      return null
    }
  }

  function loadManifestFromEntries(entries) {
    let list
    try {
      list = Array.isArray(entries) ? entries : null
    } catch {
      list = null
    }
    if (list === null) return binding.loadManifestFromEntries(entries)
    const read = new Array(list.length)
    let at = -1
    for (let i = list.length - 1; i >= 0; i--) {
      const r = (read[i] = readEntry(list, i))
      if (r !== null && typeof r === 'object' && r.type === 'custom' && r.customType === KEY) {
        at = i
        break
      }
    }
    if (at < 0) return { entries: {} }
    const data = read[at].data
    if (typeof data === 'string' && !mayHoldLoneSurrogate(data) && CANONICAL_TEXT.test(data)) return JSON.parse(data)
    // The native export decides on what was read (older entries read now, once each).
    for (let i = 0; i < at; i++) read[i] = readEntry(list, i)
    return binding.loadManifestFromEntries(read)
  }

  return { serializeManifest, loadManifestFromEntries }
}
