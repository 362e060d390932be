// A stand-in for Slack over the bundled channel (fixtures/slack-channel.json), as of a
// moving "now": Events API payloads for what happens, and a fetcher answering
// conversations.history / conversations.replies / file downloads the way the Web API
// does (newest-first history, oldest-first replies with the parent on every page,
// cursors, has_more). Demo code: a gateway passes its real Slack client instead.
'use strict'
const crypto = require('node:crypto')

const seconds = (ts) => Number(String(ts).split('.')[0])
const cursorFor = (offset) => Buffer.from(`offset:${offset}`).toString('base64')
const offsetOf = (cursor) => (cursor ? Number(Buffer.from(cursor, 'base64').toString().slice('offset:'.length)) : 0)

class FakeSlack {
  constructor(data, teamId = 'T04OPENCLAW') {
    this.data = data
    this.teamId = teamId
    this.nowTs = '0'
    this.calls = []
    // Every message once, in the order it was posted: channel messages and replies.
    const seen = new Set()
    this.timeline = [...data.messages, ...Object.values(data.replies).flatMap((r) => r.slice(1))]
      .filter((m) => !seen.has(m.ts) && seen.add(m.ts))
      .sort((a, b) => Number(a.ts) - Number(b.ts))
  }

  /** Moves "now" to a Slack ts: only what was posted by then exists. */
  at(ts) {
    this.nowTs = ts
  }

  posted(m) {
    return Number(m.ts) <= Number(this.nowTs)
  }

  /** The Events API payload Slack sends when `m` is posted. */
  eventFor(m) {
    const event = { ...m, type: 'message', channel: this.data.channel.id, event_ts: m.ts, channel_type: 'channel' }
    return {
      token: 'demo-verification-token',
      team_id: this.teamId,
      api_app_id: 'A04DEMOAPP',
      type: 'event_callback',
      event_id: `Ev${m.ts.replace('.', '')}`,
      event_time: seconds(m.ts),
      event,
    }
  }

  /** Messages posted in (from, to], as they happened. */
  between(fromTs, toTs) {
    return this.timeline.filter((m) => Number(m.ts) > Number(fromTs) && Number(m.ts) <= Number(toTs))
  }

  /** The fetcher a ChannelStore calls (counts every call). */
  fetcher() {
    const slack = this
    return {
      async fetchHistory({ channelId, cursor, limit }) {
        slack.calls.push('conversations.history')
        const newestFirst = slack.data.messages.filter((m) => slack.posted(m)).reverse()
        return slack.page(newestFirst, cursor, limit, channelId)
      },
      async fetchThread({ channelId, threadId, cursor, limit }) {
        slack.calls.push('conversations.replies')
        const thread = slack.data.replies[threadId]
        if (!thread) return { ok: false, error: 'thread_not_found' }
        const [root, ...replies] = thread
        const posted = replies.filter((m) => slack.posted(m))
        const page = slack.page(posted, cursor, limit, channelId)
        page.messages.unshift({ ...root, reply_count: posted.length, latest_reply: posted.at(-1)?.ts })
        return page
      },
      async fetchMedia({ artifactId }) {
        slack.calls.push('files.download')
        // Deterministic bytes stand in for the file's content.
        return crypto.createHash('sha512').update(artifactId).digest()
      },
    }
  }

  page(list, cursor, limit, channelId) {
    if (channelId !== this.data.channel.id) return { ok: false, error: 'channel_not_found' }
    const start = offsetOf(cursor)
    const messages = list.slice(start, start + limit)
    const more = start + limit < list.length
    return { ok: true, messages, has_more: more, response_metadata: { next_cursor: more ? cursorFor(start + limit) : '' } }
  }
}

module.exports = { FakeSlack, seconds }
