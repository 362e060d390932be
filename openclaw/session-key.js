'use strict'

// Where an OpenClaw session's messages go in the memory store. OpenClaw gives each Slack
// thread, each Discord thread and each Telegram forum topic its own session key:
//   agent:<agentId>:slack:channel:<C>:thread:<rootTs>
//   agent:<agentId>:discord:channel:<parentId>:thread:<threadId>
//   agent:<agentId>:telegram:group:<chatId>:topic:<n>
// The memory session is the key without its thread part (one per agent and chat, so
// facts and outcomes are shared by the chat's threads), and the thread part picks the
// lane: a Slack thread is the reply chain of its root message (`reply:<C>:<rootTs>`), a
// Discord thread (a channel of its own under its parent) and a Telegram topic are topics
// (`topic:<chatId>:<id>`), Telegram's General topic (1) and anything else the chat's
// root lane (`root:<chatId>`). These are the lanes ChannelStore.laneOf gives the same
// messages.

/** Telegram's General topic: its messages are the chat's own. */
const TELEGRAM_GENERAL_TOPIC = '1'

/**
 * @param {unknown} sessionKey OpenClaw's session key, when the host passed one.
 * @param {unknown} sessionId OpenClaw's session id (the fallback scope).
 * @returns {{ sessionId: string, chatId: string, topicId: string | null, replyTo: string | null, platform: string | null, kind: string | null }}
 */
function placeSession(sessionKey, sessionId) {
  const key = typeof sessionKey === 'string' && sessionKey.length > 0 ? sessionKey : null
  if (key === null) {
    const id = typeof sessionId === 'string' && sessionId.length > 0 ? sessionId : 'unknown'
    return { sessionId: `session:${id}`, chatId: id, topicId: null, replyTo: null, platform: null, kind: null }
  }
  const parts = key.split(':')
  let topicId = null
  let replyTo = null
  let base = parts
  // The thread part is the last `thread:<id>` / `topic:<id>` pair (a Slack ts holds a
  // dot, never a colon).
  if (parts.length >= 4) {
    const marker = parts[parts.length - 2]
    const id = parts[parts.length - 1]
    if (id !== '' && (marker === 'thread' || marker === 'topic')) {
      base = parts.slice(0, -2)
      if (marker === 'thread') replyTo = id
      else topicId = id
    }
  }
  const chatId = base[base.length - 1] || key
  // `agent:<agentId>:<platform>:<kind>:<chatId>`: the platform and the chat's kind
  // (channel, group, direct, ...), when the key has that form.
  const agentForm = base[0] === 'agent' && base.length >= 5
  const platform = agentForm ? base[2] : null
  if (platform === 'discord' && replyTo !== null) {
    topicId = replyTo
    replyTo = null
  }
  if (platform === 'telegram' && topicId === TELEGRAM_GENERAL_TOPIC) topicId = null
  return {
    sessionId: base.join(':'),
    chatId,
    topicId,
    replyTo,
    platform,
    kind: agentForm ? base[3] : null,
  }
}

/** The lane (thread key) `placeSession` leads to, as the store computes it. */
function laneOf(place) {
  if (place.topicId !== null) return `topic:${place.chatId}:${place.topicId}`
  if (place.replyTo !== null) return `reply:${place.chatId}:${place.replyTo}`
  return `root:${place.chatId}`
}

module.exports = { placeSession, laneOf }
