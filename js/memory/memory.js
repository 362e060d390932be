// MemoryStore.ingest's packed path: when every message of a batch is plain (string fields,
// a known role, a finite time, well-formed ids, no other keys), its fields go to Rust as
// one joined string plus lengths instead of JSON, which V8 takes longer to write than
// Rust takes to read. Anything else goes through the native JSON path, which validates
// and names the bad field.
'use strict'

const { inputError, unreadable } = require('../core/errors.js')
const { packRows } = require('../core/packed.js')
const { connect, forward } = require('./shared.js')

const FIELDS = 6
const KEYS = new Set(require('../core/fields.js').MemoryMessage)
const ROLES = { user: 0, assistant: 1 }

const isId = (v) => typeof v === 'string' && v.length > 0 && v.isWellFormed()
const isOptionalId = (v) => v === undefined || v === null || (typeof v === 'string' && v.isWellFormed())

function pack(messages) {
  const n = messages.length
  const roles = new Uint8Array(n)
  const ts = new Float64Array(n)
  const packed = packRows(n, FIELDS, (i, parts, k) => {
    // Each property is read once: a getter that answers differently on a second read
    // cannot make the checked value and the packed value differ.
    const m = messages[i]
    if (m === null || typeof m !== 'object' || Array.isArray(m)) return false
    for (const key in m) if (!KEYS.has(key)) return false
    const sessionId = m.sessionId
    const chatId = m.chatId
    const messageId = m.messageId
    const role = ROLES[m.role]
    const text = m.text
    const time = m.ts
    const topicId = m.topicId
    const replyTo = m.replyTo
    if (!isId(sessionId) || !isId(chatId) || !isId(messageId) || role === undefined) return false
    if (typeof text !== 'string' || typeof time !== 'number' || !Number.isFinite(time)) return false
    if (!isOptionalId(topicId) || !isOptionalId(replyTo)) return false
    parts[k] = sessionId
    parts[k + 1] = chatId
    parts[k + 2] = messageId
    parts[k + 3] = text
    parts[k + 4] = topicId ?? ''
    parts[k + 5] = replyTo ?? ''
    roles[i] = role
    ts[i] = time
    return true
  })
  return packed === null ? null : { ...packed, roles, ts }
}

// Time zones: Rust gets a zone as UTC offsets over time, read here from Intl (which knows
// the IANA database) for the window the history looks at: nine days back from `now`,
// sampled every 12 hours, each change located to the minute. Cached per zone and hour.
const WINDOW_MS = 9 * 86_400_000
const STEP_MS = 12 * 3_600_000
const zoneCache = new Map()

function offsetAt(fmt, t) {
  const p = {}
  for (const part of fmt.formatToParts(new Date(t))) p[part.type] = part.value
  const local = Date.UTC(Number(p.year), Number(p.month) - 1, Number(p.day), Number(p.hour), Number(p.minute), Number(p.second))
  return Math.round((local - Math.floor(t / 1000) * 1000) / 60_000)
}

/** The offsets of `timeZone` over the nine days before `now`, as `{ from, minutes }` spans. */
function utcOffsets(timeZone, now) {
  const key = `${timeZone}\u0000${Math.floor(now / 3_600_000)}`
  const hit = zoneCache.get(key)
  if (hit) return hit
  const fmt = new Intl.DateTimeFormat('en-US', {
    timeZone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  })
  const start = now - WINDOW_MS
  const spans = [{ from: start, minutes: offsetAt(fmt, start) }]
  for (let t = start + STEP_MS; t < now + STEP_MS; t += STEP_MS) {
    const minutes = offsetAt(fmt, t)
    if (minutes === spans[spans.length - 1].minutes) continue
    // The change is in (t - STEP_MS, t]: find its minute.
    let lo = t - STEP_MS
    let hi = t
    while (hi - lo > 60_000) {
      const mid = lo + Math.floor((hi - lo) / 120_000) * 60_000
      if (offsetAt(fmt, mid) === minutes) hi = mid
      else lo = mid
    }
    spans.push({ from: hi, minutes })
  }
  if (zoneCache.size >= 256) zoneCache.delete(zoneCache.keys().next().value)
  zoneCache.set(key, spans)
  return spans
}

/**
 * The options with `timeZone` turned into `utcOffsets` (read once each); `path` names
 * them in errors, `fallbackNow` stands in for their missing `now`.
 */
function withZone(name, options, path = 'options', fallbackNow = undefined) {
  if (options === null || typeof options !== 'object') return options
  let timeZone
  let now
  try {
    timeZone = options.timeZone
    now = options.now
  } catch (err) {
    throw unreadable(name, path, err)
  }
  if (timeZone === undefined || timeZone === null) return options
  if (typeof timeZone !== 'string') throw inputError(TypeError, name, `${path}.timeZone`, `expected an IANA time zone name, got ${typeof timeZone}`)
  const given = [now, fallbackNow].find((t) => typeof t === 'number' && Number.isFinite(t))
  const at = given ?? Date.now()
  let spans
  try {
    spans = utcOffsets(timeZone, at)
  } catch (err) {
    throw inputError(RangeError, name, `${path}.timeZone`, `unknown time zone ${JSON.stringify(timeZone)} (${err.message})`)
  }
  const { timeZone: _, ...rest } = options
  return { ...rest, utcOffsets: spans }
}

/** An assemble input whose `history` names a time zone, with that zone's offsets instead. */
function assembleInput(input) {
  if (input === null || typeof input !== 'object') return input
  let history
  let now
  try {
    history = input.history
    now = input.now
  } catch (err) {
    throw unreadable('MemoryStore.assemble', 'input', err)
  }
  if (history === undefined || history === null) return input
  const zoned = withZone('MemoryStore.assemble', history, 'input.history', now)
  return zoned === history ? input : { ...input, history: zoned }
}

module.exports = function installMemory(binding) {
  const Native = binding.MemoryStore
  const nativeIngest = Native.prototype.ingest
  const nativeContext = Native.prototype.buildConversationContext
  const nativeStatus = Native.prototype.threadStatus
  const nativeAssemble = Native.prototype.assemble
  class MemoryStore extends Native {
    /** The store on PostgreSQL (`url`), its methods returning promises: see shared.js. */
    static connect(options) {
      return connect(options)
    }

    assemble(input) {
      return nativeAssemble.call(this, assembleInput(input))
    }

    ingest(messages) {
      let packed = null
      try {
        packed = Array.isArray(messages) && messages.length > 0 && messages.length <= 100_000 ? pack(messages) : null
      } catch (err) {
        throw unreadable('MemoryStore.ingest', 'messages', err)
      }
      if (packed === null) return nativeIngest.call(this, messages)
      return this._ingestPacked(packed.strings, packed.lens, packed.roles, packed.ts)
    }

    buildConversationContext(options) {
      return nativeContext.call(this, withZone('MemoryStore.buildConversationContext', options))
    }

    threadStatus(options) {
      return nativeStatus.call(this, withZone('MemoryStore.threadStatus', options))
    }
  }
  // A store from MemoryStore.connect has these methods, each returning a promise; `tools`
  // and `close` it has its own, and `_`-names are the JS layer's.
  const names = new Set([...Object.getOwnPropertyNames(Native.prototype), ...Object.getOwnPropertyNames(MemoryStore.prototype)])
  forward([...names].filter((n) => n !== 'constructor' && n !== 'tools' && n !== 'close' && !n.startsWith('_')))
  return { MemoryStore }
}
