// Turns Slack Web API message objects (conversations.history / conversations.replies) into
// the addon's camelCase inputs. Demo code: the Rust Slack adapters arrive with ChannelStore.
'use strict'

/** The author of a Slack message: a workspace user, or a bot posting by bot_id. */
function authorOf(m, users) {
  const u = m.user ? users[m.user] : undefined
  if (m.subtype === 'bot_message' || (!u && m.bot_id)) {
    return { userId: m.bot_id ?? m.user ?? 'unknown', displayName: m.bot_profile?.name ?? m.username ?? 'bot', isBot: true }
  }
  if (!u) return { userId: m.user ?? 'unknown', displayName: m.user ?? 'unknown', isBot: false }
  return { userId: u.id, displayName: u.profile?.display_name || u.real_name || u.name, isBot: Boolean(u.is_bot) }
}

const seconds = (ts) => Number(String(ts).split('.')[0])

/** One Slack message as a MessageInput; `now` (a Slack ts) anchors "replies in the last hour". */
function toMessageInput(m, data, now) {
  const thread = data.replies[m.ts]?.slice(1) ?? []
  const hourAgo = seconds(now) - 3600
  return {
    messageId: m.ts,
    ts: m.ts,
    author: authorOf(m, data.users),
    text: m.text ?? '',
    threadId: m.thread_ts ?? null,
    replyCount: m.reply_count ?? 0,
    repliesLast1h: thread.filter((r) => seconds(r.ts) >= hourAgo && seconds(r.ts) <= seconds(now)).length,
    lastReplyTs: m.latest_reply ?? null,
    reactions: (m.reactions ?? []).map((r) => ({ name: r.name, count: r.count })),
    media: (m.files ?? []).map((f) => ({ artifactId: f.id, mediaType: f.mimetype, filename: f.name ?? null, byteLength: f.size })),
  }
}

/** Every message of the fixture, channel and thread replies, by ts. */
function indexMessages(data) {
  const byTs = new Map()
  for (const m of data.messages) byTs.set(m.ts, m)
  for (const list of Object.values(data.replies)) for (const m of list) if (!byTs.has(m.ts)) byTs.set(m.ts, m)
  return byTs
}

/**
 * The inputs for one anchor: the snapshot input (the `adjacent` channel messages closest
 * before the anchor) and, when the anchor is in a thread or starts one, the thread input
 * with the replies up to the anchor.
 */
function inputsFor(data, anchor, adjacent) {
  const anchorSeconds = seconds(anchor.ts)
  const before = data.messages.filter((m) => m.ts !== anchor.ts && seconds(m.ts) <= anchorSeconds)
  const adjacentMessages = before.slice(-adjacent).map((m) => toMessageInput(m, data, anchor.ts))
  const snapshotInput = {
    channel: { id: data.channel.id, name: data.channel.name, platform: 'slack' },
    anchor: toMessageInput(anchor, data, anchor.ts),
    adjacentMessages,
  }
  const threadTs = anchor.thread_ts ?? (data.replies[anchor.ts] ? anchor.ts : null)
  let threadInput = null
  if (threadTs && data.replies[threadTs]) {
    const [root, ...rest] = data.replies[threadTs]
    const upTo = rest.filter((r) => seconds(r.ts) <= anchorSeconds)
    threadInput = {
      threadId: threadTs,
      root: toMessageInput(root, data, anchor.ts),
      replies: upTo.map((r) => toMessageInput(r, data, anchor.ts)),
      totalReplyCount: root.reply_count ?? rest.length,
    }
  }
  return { snapshotInput, threadInput, threadTs }
}

module.exports = { authorOf, toMessageInput, indexMessages, inputsFor }
