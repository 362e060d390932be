// The ChannelStore's design in plain JavaScript (Maps and arrays), as a TypeScript
// gateway would write it: the baseline bench/channel-store.js races the addon against.
// Same rules: a per-channel window of the newest messages sorted by ts, a replies entry
// per thread (LRU by Map order, TTL), snapshot with the nearest adjacent messages and
// their thread activity, and a ThreadContext budgeted over each reply's JSON.
'use strict'
const MiniSearch = require('minisearch')
const js = require('./baseline')
const tokens = require('./js-tokens')

const ESC = { '<': '\\u003c', '>': '\\u003e', '&': '\\u0026', '`': '\\u0060' }
const sectionJson = (v) => JSON.stringify(v).replace(/[<>&`]/g, (c) => ESC[c])
const tsNum = (ts) => Number(ts)
const HOUR_MS = 3_600_000

// With `index: true` each channel's window also has a MiniSearch index (text and author
// name), kept as the addon keeps its own: a message is added when it enters the window and
// discarded when it leaves it.
const INDEX_OPTIONS = { fields: ['text', 'name'], storeFields: [], idField: 'id', extractField: (m, f) => (f === 'name' ? m.author.displayName : m[f]) }

class JsChannelStore {
  constructor({ windowSize = 1000, repliesMax = 500, repliesTtl = 300_000, clock = Date.now, guidance = '', index = false } = {}) {
    this.index = index
    this.windowSize = windowSize
    this.repliesMax = repliesMax
    this.repliesTtl = repliesTtl
    this.clock = clock
    this.guidance = guidance
    this.channels = new Map()
    this.threads = new Map()
  }

  channel(id) {
    let c = this.channels.get(id)
    if (!c) {
      c = { window: [], ids: new Map(), replyThreads: new Map(), index: this.index ? new MiniSearch(INDEX_OPTIONS) : null }
      this.channels.set(id, c)
    }
    return c
  }

  ingestMany(events) {
    for (const e of events) if (e.type === 'message') this.put(e.channelId, e.message)
    return events.length
  }

  put(channelId, input) {
    const c = this.channel(channelId)
    const m = { ...input, id: input.messageId ?? input.ts, t: tsNum(input.ts), replyCount: input.replyCount ?? 0 }
    if (m.threadId && m.threadId !== m.id) {
      const key = `${channelId}\u001f${m.threadId}`
      const root = c.ids.get(m.threadId)
      let entry = this.threads.get(key)
      if (!entry && root && root.replyCount === 0) {
        entry = { replies: [], cachedAt: this.clock() }
        this.threads.set(key, entry)
        while (this.threads.size > this.repliesMax) this.threads.delete(this.threads.keys().next().value)
      }
      if (entry) {
        entry.replies.push(m)
        c.replyThreads.set(m.id, m.threadId)
      }
      if (root) {
        root.replyCount++
        root.lastReplyTs = m.ts
      }
      return
    }
    const w = c.window
    if (w.length === 0 || w[w.length - 1].t <= m.t) w.push(m)
    else {
      let lo = 0
      let hi = w.length
      while (lo < hi) {
        const mid = (lo + hi) >> 1
        if (w[mid].t <= m.t) lo = mid + 1
        else hi = mid
      }
      w.splice(lo, 0, m)
    }
    c.ids.set(m.id, m)
    if (c.index) {
      if (c.index.has(m.id)) c.index.discard(m.id)
      c.index.add(m)
    }
    if (w.length > this.windowSize) {
      const gone = w.shift()
      c.ids.delete(gone.id)
      if (c.index) c.index.discard(gone.id)
    }
  }

  activity(channelId, m, now) {
    const entry = this.threads.get(`${channelId}\u001f${m.id}`)
    const replies = entry ? entry.replies : []
    const count = entry ? replies.length : m.replyCount
    if (!count) return null
    const since = now - HOUR_MS
    let recent = 0
    for (let i = replies.length - 1; i >= 0 && replies[i].t * 1000 >= since; i--) recent++
    const last = replies.length ? replies[replies.length - 1].ts : m.lastReplyTs
    return { reply_count: count, replies_last_1h: recent, last_reply_ts: last ? js.toIso(last) : null }
  }

  async buildContext(channelId, anchorId, { adjacent = 20, budgetTokens = 8000 } = {}) {
    const now = this.clock()
    const c = this.channel(channelId)
    let anchor = c.ids.get(anchorId)
    let threadId = null
    if (!anchor) {
      threadId = c.replyThreads.get(anchorId)
      const entry = threadId && this.threads.get(`${channelId}\u001f${threadId}`)
      anchor = entry && entry.replies.find((r) => r.id === anchorId)
      if (!anchor) throw new Error(`anchor ${anchorId} not held`)
    } else if (anchor.replyCount > 0) threadId = anchor.id
    const center = c.ids.get(threadId ?? anchor.id) ?? anchor
    // Nearest `adjacent` messages around the center, earlier first on ties.
    const w = c.window
    let i = w.indexOf(center)
    const before = []
    const after = []
    let b = i - 1
    let a = i + 1
    while (before.length + after.length < adjacent && (b >= 0 || a < w.length)) {
      if (b >= 0 && (before.length <= after.length || a >= w.length)) {
        if (w[b].id !== anchor.id) before.push(w[b])
        b--
      } else {
        if (w[a].id !== anchor.id) after.push(w[a])
        a++
      }
    }
    const adj = before.reverse().concat(after).map((m) => ({
      message_id: m.id,
      ts: js.toIso(m.ts),
      author: { user_id: m.author.userId, display_name: m.author.displayName, is_bot: m.author.isBot ?? false },
      snippet: js.truncateSnippet(m.text),
      thread_activity: this.activity(channelId, m, now),
      has_media: Boolean(m.media && m.media.length),
      reactions: (m.reactions ?? []).map((r) => `:${r.name}: ${r.count}`),
    }))
    const snapshot = {
      schema_version: '1.0',
      channel: { id: channelId, name: channelId, platform: 'slack' },
      anchor: {
        message_id: anchor.id,
        ts: js.toIso(anchor.ts),
        author: { user_id: anchor.author.userId, display_name: anchor.author.displayName, is_bot: anchor.author.isBot ?? false },
        text: anchor.text,
        media: [],
        thread_id: anchor.threadId ?? null,
      },
      adjacent: adj,
    }
    const snapshotJson = sectionJson(snapshot)
    let threadJson = null
    if (threadId) {
      const entry = this.threads.get(`${channelId}\u001f${threadId}`)
      if (!entry || now - entry.cachedAt >= this.repliesTtl) throw new Error('thread would need a fetch')
      const root = c.ids.get(threadId)
      const rootJson = sectionJson({
        message_id: root.id,
        ts: js.toIso(root.ts),
        author: { user_id: root.author.userId, display_name: root.author.displayName, is_bot: root.author.isBot ?? false },
        text: root.text,
        media: [],
      })
      const head = `{"schema_version":"1.0","thread_id":${sectionJson(threadId)},"root":${rootJson},"replies":[`
      // Budgeted as the engine does: the token estimator's upper bound of the thread's JSON,
      // from the estimates of its parts (the truncation object at its widest).
      const widest = js.toIso(entry.replies[0]?.ts ?? threadId)
      const truncationWidest = `{"total_replies":${entry.replies.length},"included_replies":${entry.replies.length},"strategy":"most_recent","omitted_range_ts":["${widest}","${widest}"]}`
      let used = tokens.estimate(head) + tokens.estimate('],"truncation":') + tokens.estimate(truncationWidest) + tokens.estimate('}')
      const comma = tokens.estimate(',')
      const fits = (e) => tokens.upperOf(e) <= budgetTokens
      const kept = []
      for (let k = entry.replies.length - 1; k >= 0; k--) {
        const r = entry.replies[k]
        const cut = r.text.length > 1200
        const json = sectionJson({
          message_id: r.id,
          ts: js.toIso(r.ts),
          author: { user_id: r.author.userId, display_name: r.author.displayName, is_bot: r.author.isBot ?? false },
          text: cut ? `${r.text.slice(0, 1199)}…` : r.text,
          is_truncated: cut,
          media: [],
        })
        const cost = tokens.estimate(json) + (kept.length ? comma : 0)
        if (kept.length && !fits(used + cost)) break
        used += cost
        kept.push(json)
      }
      const omitted = entry.replies.length - kept.length
      const truncation = {
        total_replies: entry.replies.length,
        included_replies: kept.length,
        strategy: 'most_recent',
        omitted_range_ts: omitted > 0 ? [js.toIso(entry.replies[0].ts), js.toIso(entry.replies[omitted - 1].ts)] : null,
      }
      threadJson = `${head}${kept.reverse().join(',')}],"truncation":${sectionJson(truncation)}}`
    }
    let promptSection = `${this.guidance}\n<channel_snapshot format="json">\n${snapshotJson}\n</channel_snapshot>`
    if (threadJson) promptSection += `\n\n<thread_context format="json">\n${threadJson}\n</thread_context>`
    return {
      promptSection,
      snapshotJson,
      threadJson,
      tokens: { snapshot: js.estimateTokens(snapshotJson), thread: threadJson ? js.estimateTokens(threadJson) : 0, total: js.estimateTokens(promptSection) },
    }
  }
}

module.exports = { JsChannelStore }
