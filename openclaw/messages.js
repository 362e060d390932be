'use strict'

// OpenClaw's agent messages as the memory store keeps them: the text of user and
// assistant turns. Tool calls, tool results, thinking and the host's own custom entries
// stay in OpenClaw's transcript; they are not conversation to remember.

const { createHash } = require('node:crypto')
const { tokenEstimate, tokenBound } = require('../index.js')

/** The text of a user or assistant message (text blocks joined), or null for other kinds. */
function textOf(message) {
  if (message === null || typeof message !== 'object') return null
  const role = message.role
  if (role !== 'user' && role !== 'assistant') return null
  const content = message.content
  if (typeof content === 'string') return content
  if (!Array.isArray(content)) return null
  const parts = []
  for (const block of content) {
    if (block && typeof block === 'object' && block.type === 'text' && typeof block.text === 'string') {
      parts.push(block.text)
    }
  }
  return parts.join('\n')
}

/** Image blocks of a message (for re-attachment after a compaction). */
function imagesOf(message) {
  if (message === null || typeof message !== 'object' || !Array.isArray(message.content)) return []
  return message.content.filter((b) => b && typeof b === 'object' && b.type === 'image')
}

/**
 * A stable id for a message: its own `id` / `responseId` when it has one, else a hash of
 * its role, timestamp and text, so ingesting the same transcript again stores nothing new.
 */
function messageId(message, text) {
  if (typeof message.id === 'string' && message.id !== '') return message.id
  if (message.role === 'assistant' && typeof message.responseId === 'string' && message.responseId !== '') {
    return `resp:${message.responseId}`
  }
  const ts = Number.isFinite(message.timestamp) ? message.timestamp : 0
  const h = createHash('sha256').update(`${message.role}\u0000${ts}\u0000${text}`).digest('hex')
  return `oc:${h.slice(0, 32)}`
}

/** Milliseconds of a message's timestamp (OpenClaw's are epoch ms), else `fallback`. */
function tsOf(message, fallback) {
  const ts = message.timestamp
  return typeof ts === 'number' && Number.isFinite(ts) && ts >= 0 ? Math.floor(ts) : fallback
}

/**
 * Tokens a list of messages takes at most as the model receives them: one bound (the
 * engine's budgets' rule) for the summed estimates of their JSON (metadata and images'
 * base64 data counted like text: an upper bound).
 */
function estimateMessages(messages) {
  return tokenBound(messages.reduce((n, m) => n + centralEstimate(m), 0))
}

/**
 * The central token estimate of a message as the model receives it (its JSON), before
 * the model's ratio, which the store's assembly applies to its whole context once.
 */
function centralEstimate(message) {
  try {
    return tokenEstimate(JSON.stringify(message) ?? '').estimate
  } catch {
    return 0
  }
}

/** What the engine's budgets count for one text alone. */
function tokensOfText(text) {
  return typeof text === 'string' ? tokenEstimate(text).upperBound : 0
}

module.exports = { textOf, imagesOf, messageId, tsOf, estimateMessages, centralEstimate, tokensOfText }
