// `context-engine inspect` over Discord Gateway dispatches or Telegram Bot API updates
// (a JSON array or one payload per line, as a gateway logs them): which channels they
// hold, their messages with ids and times, and a ChannelStore fed with them whose fetcher
// only records what it is asked for (Discord's REST API shapes; Telegram's Bot API has no
// history to ask).
'use strict'

const DISCORD_EPOCH_MS = 1_420_070_400_000n
const THREAD_TYPES = new Set([10, 11, 12])

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v)
const isDiscord = (v) => isObject(v) && typeof v.t === 'string' && 'd' in v
const isTelegram = (v) => isObject(v) && Number.isInteger(v.update_id)

/** The Unix ms a snowflake was made at. */
function snowflakeMs(id) {
  return /^\d{1,20}$/.test(id) ? Number((BigInt(id) >> 22n) + DISCORD_EPOCH_MS) : NaN
}

/** Which thread channels hang off which channel, from the payloads that say so. */
function discordParents(values) {
  const parents = new Map()
  const learn = (c) => {
    if (isObject(c) && THREAD_TYPES.has(c.type) && typeof c.id === 'string' && typeof c.parent_id === 'string') parents.set(c.id, c.parent_id)
  }
  for (const v of values) {
    if (v.t === 'THREAD_CREATE' || v.t === 'THREAD_UPDATE' || v.t === 'CHANNEL_CREATE') learn(v.d)
    if (v.t === 'GUILD_CREATE' || v.t === 'THREAD_LIST_SYNC') for (const c of v.d?.threads ?? []) learn(c)
  }
  return parents
}

/**
 * The payloads as inspect's input: `null` when they are not all Discord dispatches or all
 * Telegram updates.
 */
function loadPlatformPayloads(values) {
  if (values.length === 0) return null
  if (values.every(isDiscord)) {
    const parents = discordParents(values)
    const messages = values
      .filter((v) => v.t === 'MESSAGE_CREATE' && isObject(v.d) && typeof v.d.id === 'string' && typeof v.d.channel_id === 'string')
      .map((v) => ({ id: v.d.id, ms: snowflakeMs(v.d.id), channel: parents.get(v.d.channel_id) ?? v.d.channel_id }))
    return { kind: 'JSONL of Discord Gateway dispatches', platform: 'discord', payloads: values, ...byChannel(messages) }
  }
  if (values.every(isTelegram)) {
    const messages = values
      .map((u) => u.message ?? u.channel_post)
      .filter((m) => isObject(m) && Number.isInteger(m.message_id) && isObject(m.chat))
      .map((m) => ({ id: String(m.message_id), ms: m.date * 1000 + (m.message_id % 1000) / 1000, channel: String(m.chat.id), name: m.chat.title }))
    return { kind: 'JSONL of Telegram updates', platform: 'telegram', payloads: values, ...byChannel(messages) }
  }
  return null
}

function byChannel(messages) {
  const channels = new Map()
  for (const m of messages) {
    if (!channels.has(m.channel)) channels.set(m.channel, { id: m.channel, name: m.name ?? m.channel, messages: [] })
    channels.get(m.channel).messages.push(m)
  }
  return { channels: [...channels.values()], users: [], events: [] }
}

/** A store fed with the payloads, and the calls its fetcher was asked to make. */
function platformStore(engine, data, nowMs) {
  const calls = []
  const record = (fetch) => async (request) => {
    calls.push({ fetch, request, platform: data.platform })
    return fetch === 'fetchMedia' ? new Uint8Array(0) : []
  }
  const fetcher = data.platform === 'discord' ? Object.fromEntries(['fetchThread', 'fetchHistory', 'fetchMessages', 'fetchMedia'].map((f) => [f, record(f)])) : { fetchMedia: record('fetchMedia') }
  const held = data.channels.reduce((n, c) => n + c.messages.length, 0)
  const store = new engine.ChannelStore({ clock: () => nowMs, fetcher, windowSize: Math.max(1000, held), threadReplies: { max: Math.max(500, held) } })
  const ingest = data.platform === 'discord' ? (p) => store.ingestDiscordEvent(p) : (p) => store.ingestTelegramUpdate(p)
  for (const p of data.payloads) ingest(p)
  return { store, calls }
}

/** What a recorded call asked Discord's REST API (or Telegram's Bot API) for. */
function platformCallText(c) {
  const r = c.request
  if (c.fetch === 'fetchThread') return `GET /channels/${r.threadId}/messages (thread)`
  if (c.fetch === 'fetchHistory') return `GET /channels/${r.channelId}/messages`
  if (c.fetch === 'fetchMessages') return `GET /channels/${r.channelId}/messages/${r.messageIds.join(',')}`
  return c.platform === 'telegram' ? `getFile ${r.artifactId}` : `GET attachment ${r.artifactId}`
}

module.exports = { loadPlatformPayloads, platformStore, platformCallText }
