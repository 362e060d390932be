// buildChannelTools(input) for the Claude SDK runner's own input (StructuredContextInput:
// flat channelId, adjacentMessages, thread, fetcher with fetchThread(threadId, maxReplies),
// fetchMessages(ids) and optional fetchMedia(artifactId)). The two tools answer as the
// runner's module did, as tool results `{ content: [{ type: 'text', text }], details }`:
// channel.context returns `{ results, coverage, pagination }` over the snapshot's messages
// and its thread (ranked by the engine's search, which folds accents and stems words; the
// runner's keyword count found fewer), channel.messages a thread (from the snapshot or the
// fetcher), messages of the snapshot, or a media item; fetches share a budget of 15 calls
// a minute per tool set, and every failure is a result with an `error`, never a throw.
'use strict'

const MAX_CALLS_PER_MINUTE = 15
const MEDIA_SURFACED = 3
const DEFAULT_MAX_RESULTS = 8
const DEFAULT_MAX_REPLIES = 50
const RATE_LIMITED = 'Rate limit reached. Stop fetching messages and answer using the context you have.'

/** A tool result: the payload as indented JSON text, and as `details`. */
function result(payload, extra = []) {
  return { content: [{ type: 'text', text: JSON.stringify(payload, null, 2) }, ...extra], details: payload }
}

const author = (m) => ({ user_id: m.authorId, display_name: m.authorName, is_bot: m.authorIsBot })

/** The words the runner's keyword signal names: lower case, letters and digits, over 2 long. */
function keywords(intent) {
  return intent
    .toLowerCase()
    .replace(/[^a-z0-9\s]/g, ' ')
    .split(/\s+/)
    .filter((w) => w.length > 2)
}

function toBase64(data) {
  if (typeof data === 'string') return data
  if (data instanceof ArrayBuffer) return Buffer.from(data).toString('base64')
  if (ArrayBuffer.isView(data)) return Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('base64')
  return null
}

/** Only the fields a thread reply has, so a fetcher's extra fields are not refused. */
const replyOf = (r) => ({
  messageId: String(r.messageId),
  ts: String(r.ts),
  authorId: String(r.authorId ?? ''),
  authorName: String(r.authorName ?? ''),
  authorIsBot: r.authorIsBot === true,
  text: String(r.text ?? ''),
  ...(Array.isArray(r.files) ? { files: r.files } : {}),
})

module.exports = function runnerTools(binding, ChannelStore) {
  /**
   * @param {import('../index').StructuredContextInput} input
   */
  return function buildRunnerTools(input) {
    // The native snapshot reads the whole input once and names any bad field.
    binding.buildChannelSnapshot(input)
    const anchorId = input.anchor.messageId
    const adjacent = input.adjacentMessages.filter((m) => m.messageId !== anchorId)
    const adjacentIds = new Set(adjacent.map((m) => m.messageId))
    const fromThread = []
    const t = input.thread
    if (t) {
      if (!adjacentIds.has(t.rootMessageId) && t.rootMessageId !== anchorId) {
        fromThread.push({ messageId: t.rootMessageId, ts: t.rootTs, authorId: t.rootAuthorId, authorName: t.rootAuthorName, authorIsBot: t.rootAuthorIsBot, text: t.rootText, threadId: t.rootMessageId, replyCount: t.totalReplyCount, hasMedia: (t.rootFiles?.length ?? 0) > 0 })
      }
      for (const r of t.replies) {
        if (!adjacentIds.has(r.messageId) && r.messageId !== anchorId) {
          fromThread.push({ messageId: r.messageId, ts: r.ts, authorId: r.authorId, authorName: r.authorName, authorIsBot: r.authorIsBot, text: r.text, threadId: t.rootMessageId, replyCount: 0, hasMedia: (r.files?.length ?? 0) > 0 })
        }
      }
    }
    const candidates = [...adjacent, ...fromThread]
    const byId = new Map(candidates.map((m) => [m.messageId, m]))

    // The engine's index over the candidates, for ranking.
    const store = new ChannelStore({ windowSize: Math.max(1000, candidates.length), clock: () => Date.now() })
    const channelId = input.channelId
    store.setChannel({ id: channelId, name: input.channelName, platform: input.platform })
    const events = []
    for (const m of candidates) {
      const reply = m.threadId != null && m.threadId !== m.messageId && fromThread.includes(m)
      events.push({ type: 'message', channelId, message: { messageId: m.messageId, ts: m.ts, text: m.text, author: { userId: m.authorId, displayName: m.authorName, isBot: m.authorIsBot }, ...(reply ? { threadId: m.threadId, broadcast: true } : {}) } })
    }
    // Timestamps the store cannot order (not a platform ts) leave the ranking to a count
    // of the intent's words in each message, newest first among equals.
    let search = null
    try {
      store.ingestMany(events)
      search = store.tools(channelId)
    } catch {}
    const byWordCount = (intent) => {
      const words = keywords(intent)
      return candidates
        .map((m) => [m, words.filter((w) => m.text.toLowerCase().includes(w)).length])
        .filter(([, n]) => n > 0)
        .sort((a, b) => b[1] - a[1] || Number(b[0].ts) - Number(a[0].ts))
        .map(([m]) => m)
    }

    const calls = []
    const slot = () => {
      const now = Date.now()
      while (calls.length > 0 && calls[0] < now - 60_000) calls.shift()
      if (calls.length >= MAX_CALLS_PER_MINUTE) return false
      calls.push(now)
      return true
    }
    const fetcher = input.fetcher ?? {}

    const context = {
      name: 'channel.context',
      description:
        'Search the messages of this channel captured with the conversation (the channel around the message and its thread) for context beyond the message being answered. Ranked by relevance to `intent`; not a live search.',
      parameters: {
        type: 'object',
        properties: {
          intent: { type: 'string', description: 'What you want to understand or find (required).' },
          since: { type: 'string', description: 'Only messages from this ISO 8601 time on.' },
          authors: { type: 'array', items: { type: 'string' }, description: 'Display names whose messages rank higher.' },
          max_results: { type: 'number', description: 'Results to return (default 8).' },
          offset: { type: 'number', description: 'Results to skip, for the next page (default 0).' },
        },
        required: ['intent'],
      },
      async execute(_toolCallId, params) {
        const p = params !== null && typeof params === 'object' ? params : {}
        if (!p.intent || typeof p.intent !== 'string') return result({ error: 'Missing required parameter: intent' })
        const maxResults = typeof p.max_results === 'number' && p.max_results >= 0 ? Math.floor(p.max_results) : DEFAULT_MAX_RESULTS
        const offset = typeof p.offset === 'number' && p.offset >= 0 ? Math.floor(p.offset) : 0
        const words = keywords(p.intent)
        let matched
        if (search) {
          const query = { intent: p.intent, max_results: 50 }
          if (typeof p.since === 'string') query.since = p.since
          if (Array.isArray(p.authors) && p.authors.every((a) => typeof a === 'string')) query.authors = p.authors
          let ranked = JSON.parse(await search.execute('channel_context', query))
          if (ranked.error) ranked = JSON.parse(await search.execute('channel_context', { intent: p.intent, max_results: 50 }))
          matched = (ranked.results ?? []).filter((r) => /keyword:/.test(r.relevance_signal)).map((r) => byId.get(r.message_id)).filter(Boolean)
        } else {
          matched = byWordCount(p.intent)
        }
        const matchedIds = new Set(matched.map((m) => m.messageId))
        const media = candidates
          .filter((m) => m.hasMedia && !matchedIds.has(m.messageId))
          .sort((a, b) => Number(b.ts) - Number(a.ts))
          .slice(0, MEDIA_SURFACED)
        const combined = [...matched.map((m) => [m, true]), ...media.map((m) => [m, false])]
        const results = combined.slice(offset, offset + maxResults).map(([m, hit]) => ({
          message_id: m.messageId,
          thread_id: m.threadId ?? null,
          ts: m.ts,
          author: author(m),
          text: m.text,
          has_media: m.hasMedia || undefined,
          thread_summary: m.replyCount > 0 ? { reply_count: m.replyCount, last_reply_ts: null, participant_names: [] } : null,
          relevance_signal: hit ? `keyword_match:${words.join(',')}` : 'recent_media',
        }))
        return result({
          results,
          coverage: {
            messages_scanned: candidates.length,
            time_range: [candidates.length > 0 ? candidates[0].ts : '', candidates.length > 0 ? candidates[candidates.length - 1].ts : ''],
          },
          pagination: { total: combined.length, offset, limit: maxResults },
        })
      },
    }

    const messages = {
      name: 'channel.messages',
      description:
        'Fetch content by id: a whole thread (thread_id, the root message ts), specific messages of the channel snapshot (message_ids), or a media attachment (media_artifact_id). Give one of them.',
      parameters: {
        type: 'object',
        properties: {
          thread_id: { type: 'string', description: 'A thread: its root and replies.' },
          message_ids: { type: 'array', items: { type: 'string' }, description: 'Messages by id.' },
          media_artifact_id: { type: 'string', description: 'A media attachment, as a content block.' },
          max_replies: { type: 'number', description: 'For a thread: replies to fetch, newest first (default 50).' },
        },
      },
      async execute(_toolCallId, params) {
        const p = params !== null && typeof params === 'object' ? params : {}
        if (p.thread_id) {
          if (t && t.rootTs === p.thread_id) return result({ thread: binding.buildThreadContext(t) })
          if (!slot()) return result({ error: RATE_LIMITED })
          try {
            const maxReplies = typeof p.max_replies === 'number' ? p.max_replies : DEFAULT_MAX_REPLIES
            const fetched = await fetcher.fetchThread(p.thread_id, maxReplies)
            const root = fetched.root
            const thread = binding.buildThreadContext({
              rootMessageId: p.thread_id,
              rootTs: p.thread_id,
              rootAuthorId: root?.authorId ?? '',
              rootAuthorName: root?.authorName ?? 'Unknown',
              rootAuthorIsBot: root?.authorIsBot ?? false,
              rootText: root?.text ?? '',
              ...(Array.isArray(root?.files) ? { rootFiles: root.files } : {}),
              replies: (fetched.replies ?? []).map(replyOf),
              totalReplyCount: Number(fetched.totalCount ?? fetched.replies?.length ?? 0),
            })
            return result({ thread })
          } catch {
            return result({ error: `Thread ${p.thread_id} not found in channel snapshot` })
          }
        }
        if (Array.isArray(p.message_ids) && p.message_ids.length > 0) {
          const wanted = new Set(p.message_ids)
          const found = input.adjacentMessages
            .filter((m) => wanted.has(m.messageId))
            .map((m) => ({ message_id: m.messageId, ts: m.ts, author: author(m), text: m.text, media: [] }))
          return result({ messages: found })
        }
        if (p.media_artifact_id) {
          if (typeof fetcher.fetchMedia !== 'function') return result({ error: 'Media retrieval is not supported by this channel fetcher.' })
          if (!slot()) return result({ error: RATE_LIMITED })
          try {
            const media = await fetcher.fetchMedia(p.media_artifact_id)
            const base64 = toBase64(media.data)
            const payload = { media: { artifact_id: p.media_artifact_id, media_type: media.mimeType, content: base64 ?? media.data } }
            const image = base64 !== null && /^image\//.test(String(media.mimeType)) ? [{ type: 'image', data: base64, mimeType: media.mimeType }] : []
            return result(payload, image)
          } catch {
            return result({ error: `Failed to fetch media ${p.media_artifact_id}` })
          }
        }
        return result({ error: 'No valid query parameters provided' })
      },
    }
    return [context, messages]
  }
}
