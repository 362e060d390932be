'use strict'

const { CONTEXT_MARKER, contextBlock } = require('./context-blocks.js')

// The quoted reply of a Discord or Telegram turn. OpenClaw tells the current message's
// id and the id it replies to in the user message's "Conversation info" block, and the
// body of the message replied to in a "Reply target" block only when the platform's
// event carried it (Discord's often does not). With the gateway's ChannelStore, fed by
// the platform's events, the engine finds that message (the store fetches it once
// through its fetcher when it lacks it) and hands it to the assembly as the quoted-reply
// layer, labelled apart from the user's text.

/** Longest wait for the store to find (or fetch) the message replied to. */
const REPLY_TARGET_TIMEOUT_MS = 5_000
/** Platforms whose replies quote a message (a Slack thread is the thread block's). */
const QUOTING_PLATFORMS = new Set(['discord', 'telegram'])

const id = (v) => (typeof v === 'string' && v !== '' ? v : typeof v === 'number' && Number.isFinite(v) ? String(v) : null)

/**
 * The current message's id and the id it replies to, when OpenClaw's blocks say so and
 * give no body for it.
 */
function missingReplyTarget(text) {
  if (typeof text !== 'string' || !text.includes(CONTEXT_MARKER)) return null
  const info = contextBlock(text, 'Conversation info:')
  const messageId = id(info?.message_id)
  const replyToId = id(info?.reply_to_id)
  if (messageId === null || replyToId === null) return null
  const target = contextBlock(text, 'Reply target of current user message:')
  const chain = text.includes(`Reply chain of current user message (nearest first): ${CONTEXT_MARKER}`)
  if (chain || (typeof target?.body === 'string' && target.body !== '') || text.includes('[Replying to: ')) return null
  return { messageId, replyToId }
}

class ReplyTargets {
  /** @param {{ buildContext?: Function }} channelStore the gateway's ChannelStore */
  constructor(channelStore) {
    this.store = channelStore
  }

  /**
   * The quoted-reply text of the turn whose user message is `text` in the chat `place`
   * names, with notes on what could not be found; null text when there is none to add.
   */
  async quoted(place, text) {
    if (!QUOTING_PLATFORMS.has(place.platform) || typeof this.store?.buildContext !== 'function') return { text: null, notes: [] }
    const ids = missingReplyTarget(text)
    if (ids === null) return { text: null, notes: [] }
    let timer
    const timeout = new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${REPLY_TARGET_TIMEOUT_MS} ms`)), REPLY_TARGET_TIMEOUT_MS)
    })
    try {
      const ctx = await Promise.race([this.store.buildContext(place.chatId, ids.messageId, { adjacent: 0 }), timeout])
      const q = ctx?.quotedReply
      if (!q || q.message_id !== ids.replyToId || typeof q.text !== 'string') {
        return { text: null, notes: [`the message ${ids.replyToId} that ${ids.messageId} replies to is not in the channel store`] }
      }
      const quote = typeof q.quote === 'string' && q.quote !== '' ? `\n(quoted part: "${q.quote}")` : ''
      return { text: `${q.author?.display_name ?? 'someone'} (${q.ts}): ${q.text}${quote}`, notes: [] }
    } catch (err) {
      return { text: null, notes: [`the message ${ids.replyToId} replied to could not be read: ${err instanceof Error ? err.message : String(err)}`] }
    } finally {
      clearTimeout(timer)
    }
  }
}

module.exports = { ReplyTargets, missingReplyTarget }
