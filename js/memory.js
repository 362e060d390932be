// MemoryStore.ingest's fast lane: when every message of a batch is plain (string fields,
// a known role, a finite time, well-formed ids, no other keys), its fields go to Rust as
// one joined string plus lengths instead of JSON, which V8 takes longer to write than
// Rust takes to read. Anything else goes through the native JSON path, which validates
// and names the bad field.
'use strict'

const { unreadable } = require('./errors.js')

const FIELDS = 6
const KEYS = new Set(['sessionId', 'chatId', 'messageId', 'role', 'text', 'ts', 'topicId', 'replyTo'])
const ROLES = { user: 0, assistant: 1 }

const isId = (v) => typeof v === 'string' && v.length > 0 && v.isWellFormed()
const isOptionalId = (v) => v === undefined || v === null || (typeof v === 'string' && v.isWellFormed())

function pack(messages) {
  const n = messages.length
  const parts = new Array(n * FIELDS)
  const lens = new Uint32Array(n * FIELDS)
  const roles = new Uint8Array(n)
  const ts = new Float64Array(n)
  for (let i = 0; i < n; i++) {
    // Each property is read once: a getter that answers differently on a second read
    // cannot make the checked value and the packed value differ.
    const m = messages[i]
    if (m === null || typeof m !== 'object' || Array.isArray(m)) return null
    for (const k in m) if (!KEYS.has(k)) return null
    const sessionId = m.sessionId
    const chatId = m.chatId
    const messageId = m.messageId
    const role = ROLES[m.role]
    const text = m.text
    const time = m.ts
    const topicId = m.topicId
    const replyTo = m.replyTo
    if (!isId(sessionId) || !isId(chatId) || !isId(messageId) || role === undefined) return null
    if (typeof text !== 'string' || typeof time !== 'number' || !Number.isFinite(time)) return null
    if (!isOptionalId(topicId) || !isOptionalId(replyTo)) return null
    const k = i * FIELDS
    parts[k] = sessionId
    parts[k + 1] = chatId
    parts[k + 2] = messageId
    parts[k + 3] = text
    parts[k + 4] = topicId ?? ''
    parts[k + 5] = replyTo ?? ''
    for (let j = 0; j < FIELDS; j++) lens[k + j] = parts[k + j].length
    roles[i] = role
    ts[i] = time
  }
  return { strings: parts.join(''), lens, roles, ts }
}

module.exports = function installMemory(binding) {
  const Native = binding.MemoryStore
  const nativeIngest = Native.prototype.ingest
  class MemoryStore extends Native {
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
  }
  return { MemoryStore }
}
