'use strict'

// Who writes a conversation's user turns, as the host already knows it: OpenClaw's
// "Conversation info" block before a channel message names its sender (`sender.name`,
// `sender.username`; an older version's "Sender" block the same). The engine gives the
// memory those names as the user's speakers, so a question naming one ("What did Ann say
// about the trip?") finds that person's turns, with no configuration; names set in the
// plugin's `speakers` option come first.

const { mayHoldBlocks, contextBlock } = require('./context-blocks.js')

/** Names a side may have (the memory's limit). */
const MAX_NAMES = 16
/** Longest name kept (a display name, not a paragraph). */
const MAX_NAME_CHARS = 64
/** Sessions whose senders are kept (the oldest seen is let go first). */
const MAX_SESSIONS = 4_096

/** The sender names `text`'s context blocks give, each once: name first, then username. */
function senderNames(text) {
  if (!mayHoldBlocks(text)) return []
  const sender = contextBlock(text, 'Conversation info:')?.sender ?? contextBlock(text, 'Sender:')
  if (sender === null || typeof sender !== 'object') return []
  const out = []
  for (const v of [sender.name, sender.username, sender.label]) {
    if (typeof v !== 'string') continue
    const name = v.trim().replace(/^@/, '')
    if (name === '' || name.length > MAX_NAME_CHARS || out.includes(name)) continue
    out.push(name)
  }
  return out
}

class Senders {
  constructor() {
    /** session id -> the user's names, oldest first */
    this.bySession = new Map()
  }

  /**
   * Learns the senders of `messages`' user turns in `sessionId`: of the newest
   * MAX_NAMES of them (a host's whole transcript comes with every assembly; the older
   * turns were learnt when they were new).
   */
  learn(sessionId, messages, textOf) {
    const users = []
    for (let i = messages.length - 1; i >= 0 && users.length < MAX_NAMES; i--) {
      if (messages[i]?.role === 'user') users.push(messages[i])
    }
    for (const m of users.reverse()) {
      const names = senderNames(textOf(m))
      if (names.length === 0) continue
      let known = this.bySession.get(sessionId)
      if (known === undefined) {
        if (this.bySession.size >= MAX_SESSIONS) this.bySession.delete(this.bySession.keys().next().value)
        known = []
        this.bySession.set(sessionId, known)
      }
      for (const n of names) {
        const at = known.indexOf(n)
        if (at >= 0) known.splice(at, 1)
        known.push(n)
      }
      if (known.length > MAX_NAMES) known.splice(0, known.length - MAX_NAMES)
    }
  }

  /**
   * The speakers for the memory: `configured` (the plugin's option) with the user's
   * senders of `sessionId` added while there is room; undefined when there are none.
   */
  speakers(sessionId, configured) {
    const seen = this.bySession.get(sessionId)
    if (seen === undefined) return configured ?? undefined
    const user = [...(configured?.user ?? [])]
    for (let i = seen.length - 1; i >= 0 && user.length < MAX_NAMES; i--) if (!user.includes(seen[i])) user.push(seen[i])
    return { ...configured, user }
  }
}

module.exports = { Senders, senderNames, MAX_NAMES }
