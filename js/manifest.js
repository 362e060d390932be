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

const { unreadable } = require('./errors.js')

/** The fields of a canonical record, in order. */
const FIELDS = ['artifact_id', 'display_name', 'media_type', 'content_hash', 'source_message_id', 'source_thread_id', 'included_at_turn']
const filled = (v) => typeof v === 'string' && v !== ''

/** Whether `r`, stored under `key`, is a valid record in canonical form. */
function canonical(key, r) {
  if (r === null || typeof r !== 'object' || Array.isArray(r)) return false
  const keys = Object.keys(r)
  if (keys.length !== FIELDS.length) return false
  for (let i = 0; i < FIELDS.length; i++) if (keys[i] !== FIELDS[i]) return false
  const thread = r.source_thread_id
  return (
    r.artifact_id === key &&
    filled(r.artifact_id) &&
    filled(r.display_name) &&
    filled(r.media_type) &&
    filled(r.content_hash) &&
    filled(r.source_message_id) &&
    (thread === null || typeof thread === 'string') &&
    Number.isSafeInteger(r.included_at_turn) &&
    r.included_at_turn >= 0
  )
}

/** Whether `m` is `{ entries }` with every record canonical. */
function canonicalManifest(m) {
  if (m === null || typeof m !== 'object' || Array.isArray(m)) return false
  const top = Object.keys(m)
  if (top.length !== 1 || top[0] !== 'entries') return false
  const entries = m.entries
  if (entries === null || typeof entries !== 'object' || Array.isArray(entries)) return false
  for (const key of Object.keys(entries)) if (!canonical(key, entries[key])) return false
  return true
}

// A canonical manifest's JSON text, matched as text (a fifth of the time JSON.parse takes):
// `{"entries":{...}}`, each record's fields in canonical order, filled where they must be,
// keyed by its own artifact id (the key's text equals the id's), the turn a whole number
// JSON writes plainly. A manifest this does not match is checked on its parse instead.
const STRING = '"(?:[^"\\\\]|\\\\.)+"'
const RECORD =
  '"((?:[^"\\\\]|\\\\.)+)":\\{"artifact_id":"\\1"' +
  `,"display_name":${STRING},"media_type":${STRING},"content_hash":${STRING},"source_message_id":${STRING}` +
  ',"source_thread_id":(?:null|"(?:[^"\\\\]|\\\\.)*"),"included_at_turn":(?:0|[1-9][0-9]{0,14})\\}'
const CANONICAL_TEXT = new RegExp(`^\\{"entries":\\{(?:${RECORD}(?:,(?="))?)*\\}\\}$`)

// JSON.stringify writes a lone surrogate as `\udXXX`: such text goes to the native export,
// which turns it into U+FFFD as it always has.
const mayHoldLoneSurrogate = (text) => text.includes('\\ud')

module.exports = function manifestLayer(binding) {
  const KEY = binding.ATTACHMENT_MANIFEST_KEY

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
    if (typeof text !== 'string' || mayHoldLoneSurrogate(text) || !canonicalManifest(JSON.parse(text))) {
      // What was read, for the native export to name the bad field from.
      return binding.serializeManifest(text === undefined ? manifest : JSON.parse(text))
    }
    return text
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
    if (typeof data === 'string' && !mayHoldLoneSurrogate(data)) {
      try {
        const m = JSON.parse(data)
        if (canonicalManifest(m)) return m
      } catch {
        // Not JSON: the native export falls back to an older manifest.
      }
    }
    // The native export decides on what was read (older entries read now, once each).
    for (let i = 0; i < at; i++) read[i] = readEntry(list, i)
    return binding.loadManifestFromEntries(read)
  }

  return { serializeManifest, loadManifestFromEntries }
}
