'use strict'

// The engine's own per-turn message: what this turn's question brought back (retrieved
// memories and messages, the thread block, the quoted reply), sent after the host's kept
// messages and never stored or kept; how it is told apart when the host hands it back;
// and the preamble of media attached again after a compaction.

const { textOf } = require('./messages.js')

/** The text put before media attached again after a compaction. */
function recoveryPreamble(n) {
  return `[Post-compaction context recovery: re-attaching ${n} media items from this thread]`
}

/** The tag of the engine's per-turn message. */
const TURN_TAG = 'memory_for_this_turn'
/** The engine's turn message, as the host may hand it back (OpenClaw prefixes a timestamp). */
const TURN_MESSAGE = new RegExp(`^\\s*(?:\\[[^\\]\\n]{0,80}\\]\\s*)?<${TURN_TAG}>\\n`)

/** The user message that carries what this turn's question brought back. */
function turnMessage(text, now) {
  return { role: 'user', content: [{ type: 'text', text: `<${TURN_TAG}>\n${text}</${TURN_TAG}>` }], timestamp: now }
}

/** Whether `message` is a turn message of this engine (never stored, never kept). */
function isTurnMessage(message) {
  return message?.role === 'user' && isTurnText(message.role, textOf(message))
}

/** Whether a message of `role` with `text` is a turn message of this engine. */
function isTurnText(role, text) {
  return role === 'user' && text !== null && TURN_MESSAGE.test(text)
}

/** The host's messages without the engine's turn messages (the same array when it has none). */
function hostMessages(messages) {
  if (!Array.isArray(messages)) return []
  return messages.some(isTurnMessage) ? messages.filter((m) => !isTurnMessage(m)) : messages
}

module.exports = { turnMessage, isTurnMessage, isTurnText, hostMessages, recoveryPreamble, TURN_TAG }
