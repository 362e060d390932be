// The bundled Slack channel (fixtures/slack-channel.json) as Discord and Telegram would
// deliver the same conversation, so the demo and the benchmarks run one content on
// three platforms. The conversion is deterministic:
//   Discord: each message's snowflake is built from its Slack ts (the millisecond, and
//     the sub-millisecond digits as the increment); a Slack thread becomes a thread
//     channel started from its root (same id), opened by THREAD_CREATE just before its first
//     reply; mentions become <@id> with the user in `mentions`; files become
//     attachments; reactions become MESSAGE_REACTION_ADD dispatches. A fake REST API
//     answers GET /channels/{id}/messages (newest first, `before=` paging).
//   Telegram: the channel is a supergroup; message ids count up in posting order; a
//     Slack thread becomes a reply chain (each reply answers the root, which the update
//     carries); mentions become @name; files become documents; reactions become
//     message_reaction updates. The Bot API has no history, so Telegram has no fetcher.
// Demo and benchmark code: a gateway passes its real client instead.
'use strict'
const crypto = require('node:crypto')

const DISCORD_EPOCH_MS = 1_420_070_400_000n
const GUILD_ID = '1110000000000000001'
const CHANNEL_ID = '1120000000000000001'
const TELEGRAM_CHAT_ID = -1001775463632

/** The Slack messages of `data`, each once, in posting order. */
function timelineOf(data) {
  const seen = new Set()
  return [...data.messages, ...Object.values(data.replies).flatMap((r) => r.slice(1))]
    .filter((m) => !seen.has(m.ts) && seen.add(m.ts))
    .sort((a, b) => Number(a.ts) - Number(b.ts))
}

function displayName(data, id) {
  const u = data.users[id]
  return u ? u.profile?.display_name || u.real_name || u.name : id
}

/** The Discord snowflake of a Slack ts. */
function snowflakeOf(ts) {
  const [secs, frac = '0'] = String(ts).split('.')
  const micros = BigInt(secs) * 1_000_000n + BigInt(frac.padEnd(6, '0').slice(0, 6))
  return (((micros / 1000n - DISCORD_EPOCH_MS) << 22n) | (micros % 1000n)).toString()
}

/** A user's snowflake, stable per Slack id. */
function userSnowflake(slackId) {
  const n = BigInt('0x' + crypto.createHash('sha256').update(slackId).digest('hex').slice(0, 12))
  return (n + 1_000_000_000_000_000n).toString()
}

class FakeDiscord {
  constructor(data) {
    this.data = data
    this.timeline = timelineOf(data)
    this.channelId = CHANNEL_ID
    this.nowTs = '0'
    this.calls = []
    this.opened = new Set()
  }

  at(ts) {
    this.nowTs = ts
  }

  idOf(ts) {
    return snowflakeOf(ts)
  }

  author(m) {
    if (m.bot_id) return { id: userSnowflake(m.bot_id), username: m.username || m.bot_id, discriminator: '0', global_name: null, avatar: null, bot: true }
    const name = displayName(this.data, m.user)
    return { id: userSnowflake(m.user), username: name.toLowerCase().replace(/\s+/g, '.'), discriminator: '0', global_name: name, avatar: null }
  }

  /** The message object Discord gives for Slack message `m`. */
  message(m) {
    const mentions = []
    const content = String(m.text ?? '').replace(/<@([UW][A-Z0-9]+)(\|[^>]*)?>/g, (_, id) => {
      const name = displayName(this.data, id)
      mentions.push({ id: userSnowflake(id), username: name.toLowerCase(), discriminator: '0', global_name: name, avatar: null })
      return `<@${userSnowflake(id)}>`
    })
    const inThread = m.thread_ts && m.thread_ts !== m.ts
    const id = snowflakeOf(m.ts)
    return {
      id,
      channel_id: inThread ? snowflakeOf(m.thread_ts) : CHANNEL_ID,
      guild_id: GUILD_ID,
      author: this.author(m),
      content,
      timestamp: new Date(Number(m.ts) * 1000).toISOString(),
      edited_timestamp: null,
      tts: false,
      mention_everyone: false,
      mentions,
      mention_roles: [],
      attachments: (m.files ?? []).map((f) => ({ id: userSnowflake(f.id), filename: f.name, size: f.size, content_type: f.mimetype, url: `https://cdn.discordapp.com/attachments/${CHANNEL_ID}/${f.id}/${f.name}`, proxy_url: '' })),
      embeds: [],
      pinned: false,
      type: 0,
    }
  }

  /** The Gateway dispatches Discord sends when `m` is posted. */
  dispatchesFor(m) {
    const out = []
    const d = this.message(m)
    // THREAD_CREATE comes once, before the thread's first reply (a thread opened before
    // a restart is learnt from GUILD_CREATE instead).
    const first = this.data.replies[m.thread_ts]?.[1]?.ts === m.ts
    if (m.thread_ts && m.thread_ts !== m.ts && first && !this.opened.has(m.thread_ts)) {
      this.opened.add(m.thread_ts)
      out.push({ op: 0, t: 'THREAD_CREATE', s: 1, d: { id: snowflakeOf(m.thread_ts), type: 11, guild_id: GUILD_ID, parent_id: CHANNEL_ID, name: `thread ${m.thread_ts}`, newly_created: true } })
    }
    out.push({ op: 0, t: 'MESSAGE_CREATE', s: 2, d })
    for (const r of m.reactions ?? []) {
      for (const u of r.users ?? []) {
        out.push({ op: 0, t: 'MESSAGE_REACTION_ADD', s: 3, d: { user_id: userSnowflake(u), channel_id: d.channel_id, message_id: d.id, guild_id: GUILD_ID, emoji: { id: null, name: r.name } } })
      }
    }
    return out
  }

  /** Every thread of the channel, as GUILD_CREATE lists them on connect. */
  guildCreate() {
    const threads = Object.keys(this.data.replies).map((ts) => ({ id: snowflakeOf(ts), type: 11, parent_id: CHANNEL_ID, name: `thread ${ts}` }))
    return { op: 0, t: 'GUILD_CREATE', s: 0, d: { id: GUILD_ID, name: 'openclaw', channels: [{ id: CHANNEL_ID, type: 0, name: this.data.channel.name }], threads } }
  }

  posted(m) {
    return Number(m.ts) <= Number(this.nowTs)
  }

  /** `before=` paging over a newest-first list. */
  page(newestFirst, cursor, limit) {
    const start = cursor ? newestFirst.findIndex((x) => x.id === cursor) + 1 : 0
    return newestFirst.slice(start, start + limit)
  }

  /** The fetcher a ChannelStore calls: Discord's REST API over the fake channel. */
  fetcher() {
    const discord = this
    return {
      // GET /channels/{channelId}/messages?before=&limit=
      async fetchHistory({ cursor, limit }) {
        discord.calls.push('GET /channels/{id}/messages')
        const top = discord.data.messages.filter((m) => discord.posted(m) && !(m.thread_ts && m.thread_ts !== m.ts))
        return discord.page(top.reverse().map((m) => discord.message(m)), cursor, limit)
      },
      // GET /channels/{threadId}/messages: the thread's replies newest first, ending with
      // the starter message that carries the root.
      async fetchThread({ threadId, cursor, limit }) {
        discord.calls.push('GET /channels/{thread}/messages')
        const slackTs = discord.timeline.find((m) => snowflakeOf(m.ts) === threadId)?.ts
        const [root, ...replies] = discord.data.replies[slackTs] ?? []
        if (!root) throw Object.assign(new Error('Unknown Channel'), { status: 404 })
        const posted = replies.filter((m) => discord.posted(m)).reverse().map((m) => discord.message(m))
        posted.push({ ...discord.message({ ...root, ts: root.ts }), id: (BigInt(threadId) + 1n).toString(), channel_id: threadId, type: 21, content: '', referenced_message: { ...discord.message(root), thread: { id: threadId, message_count: posted.length } } })
        return discord.page(posted, cursor, limit)
      },
      async fetchMessages({ messageIds }) {
        discord.calls.push('GET /channels/{id}/messages/{mid}')
        const m = discord.timeline.find((x) => snowflakeOf(x.ts) === messageIds[0])
        if (!m) throw Object.assign(new Error('Unknown Message'), { status: 404 })
        return discord.message(m)
      },
      async fetchMedia({ artifactId }) {
        discord.calls.push('GET attachment')
        return crypto.createHash('sha512').update(artifactId).digest()
      },
    }
  }
}

class FakeTelegram {
  constructor(data) {
    this.data = data
    this.timeline = timelineOf(data)
    this.channelId = String(TELEGRAM_CHAT_ID)
    this.ids = new Map(this.timeline.map((m, i) => [m.ts, i + 1]))
    this.update = 0
  }

  idOf(ts) {
    return String(this.ids.get(ts))
  }

  from(m) {
    if (m.bot_id) return { id: 700_000 + this.hash(m.bot_id), is_bot: true, first_name: m.username || m.bot_id }
    const [first, ...rest] = displayName(this.data, m.user).split(' ')
    return { id: 500_000 + this.hash(m.user), is_bot: false, first_name: first, ...(rest.length ? { last_name: rest.join(' ') } : {}) }
  }

  hash(s) {
    return crypto.createHash('sha256').update(s).digest().readUInt32BE(0) % 100_000
  }

  /** The Message object Telegram gives for Slack message `m` (without its reply). */
  message(m) {
    const text = String(m.text ?? '').replace(/<@([UW][A-Z0-9]+)(\|[^>]*)?>/g, (_, id) => `@${displayName(this.data, id)}`)
    const out = {
      message_id: this.ids.get(m.ts),
      date: Math.floor(Number(m.ts)),
      chat: { id: TELEGRAM_CHAT_ID, type: 'supergroup', title: this.data.channel.name },
      from: this.from(m),
    }
    const file = m.files?.[0]
    if (file) {
      out.document = { file_id: `BQACAgQ${file.id}`, file_unique_id: file.id, file_name: file.name, mime_type: file.mimetype, file_size: file.size }
      out.caption = text
    } else {
      out.text = text
    }
    return out
  }

  /** The updates Telegram sends when `m` is posted. */
  updatesFor(m) {
    const msg = this.message(m)
    if (m.thread_ts && m.thread_ts !== m.ts) {
      const root = this.timeline.find((x) => x.ts === m.thread_ts)
      if (root) msg.reply_to_message = this.message(root)
    }
    const out = [{ update_id: ++this.update, message: msg }]
    for (const r of m.reactions ?? []) {
      for (const u of r.users ?? []) {
        out.push({ update_id: ++this.update, message_reaction: { chat: msg.chat, message_id: msg.message_id, user: this.from({ user: u }), date: msg.date, old_reaction: [], new_reaction: [{ type: 'emoji', emoji: r.name }] } })
      }
    }
    return out
  }

  fetcher() {
    return {
      // getFile + a download of file_path; the only call the Bot API offers for content.
      async fetchMedia({ artifactId }) {
        return crypto.createHash('sha512').update(artifactId).digest()
      },
    }
  }
}

module.exports = { FakeDiscord, FakeTelegram, snowflakeOf, timelineOf }
