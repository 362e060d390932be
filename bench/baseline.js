// Plain-JavaScript versions of the drop-in functions, written the way the TypeScript
// modules they replace were: the baseline the addon races in bench/dropin.js. Same algorithms
// and the same output, checked by run.js before timing.
'use strict'

const THREAD_BUDGET_TOKENS = 8000
const SNIPPET_MAX_CHARS = 150
const REPLY_MAX_TOKENS = 300
const KEY = 'openclaw:claude-sdk-attachment-manifest'

const estimateTokens = (text) => Math.ceil(text.length / 4)

function cutUnits(text, keep) {
  const c = text.charCodeAt(keep - 1)
  return text.slice(0, c >= 0xd800 && c <= 0xdbff ? keep - 1 : keep)
}

function truncateSnippet(text) {
  const s = text.replace(/\s+/g, ' ').trim()
  return s.length > SNIPPET_MAX_CHARS ? cutUnits(s, SNIPPET_MAX_CHARS - 1) + '…' : s
}

function mostRecentWithin(tokens, budget) {
  let used = 0
  let first = tokens.length
  for (let i = tokens.length - 1; i >= 0; i--) {
    if (i < tokens.length - 1 && used + tokens[i] > budget) break
    used += tokens[i]
    first = i
  }
  return { first, used }
}

function applyThreadBudget({ replies, budgetTokens = THREAD_BUDGET_TOKENS }) {
  const { first } = mostRecentWithin(replies.map((r) => estimateTokens(r.text)), budgetTokens)
  return {
    included: replies.slice(first),
    truncation: {
      total_replies: replies.length,
      included_replies: replies.length - first,
      strategy: 'most_recent',
      omitted_range_ts: first > 0 ? [replies[0].ts, replies[first - 1].ts] : null,
    },
  }
}

function toIso(ts) {
  const m = /^(\d+)(?:\.(\d+))?$/.exec(ts)
  if (!m) return ts
  const iso = new Date(Number(m[1]) * 1000).toISOString() // YYYY-MM-DDTHH:MM:SS.000Z
  return m[2] === undefined ? iso.slice(0, 19) + 'Z' : `${iso.slice(0, 19)}.${m[2]}Z`
}

const author = (a) => ({ user_id: a.userId, display_name: a.displayName, is_bot: a.isBot ?? false })
const mediaRefs = (m) =>
  (m.media ?? []).map((x) => ({ artifact_id: x.artifactId, media_type: x.mediaType, filename: x.filename ?? null, byte_length: x.byteLength }))
const idOf = (m) => m.messageId ?? m.ts

function buildChannelSnapshot(input) {
  const a = input.anchor
  const anchorId = idOf(a)
  return {
    schema_version: '1.0',
    channel: { id: input.channel.id, name: input.channel.name, platform: input.channel.platform },
    anchor: { message_id: anchorId, ts: toIso(a.ts), author: author(a.author), text: a.text, media: mediaRefs(a), thread_id: a.threadId ?? null },
    adjacent: input.adjacentMessages
      .filter((m) => idOf(m) !== anchorId)
      .map((m) => ({
        message_id: idOf(m),
        ts: toIso(m.ts),
        author: author(m.author),
        snippet: truncateSnippet(m.text),
        thread_activity: m.replyCount
          ? { reply_count: m.replyCount, replies_last_1h: m.repliesLast1h ?? 0, last_reply_ts: m.lastReplyTs ? toIso(m.lastReplyTs) : null }
          : null,
        has_media: Boolean(m.hasMedia) || (m.media?.length ?? 0) > 0,
        reactions: (m.reactions ?? []).map((r) => `:${r.name.replace(/^:+|:+$/g, '')}: ${r.count}`),
      })),
  }
}

function buildThreadContextWithTelemetry(thread, budgetTokens = THREAD_BUDGET_TOKENS) {
  const total = Math.max(thread.totalReplyCount ?? 0, thread.replies.length)
  if (!thread || total === 0) return { threadContext: null }
  const root = thread.root
  const rootTokens = estimateTokens(root.text)
  const replies = thread.replies.map((r) => {
    const long = r.text.length > REPLY_MAX_TOKENS * 4
    return {
      message_id: idOf(r),
      ts: toIso(r.ts),
      author: author(r.author),
      text: long ? cutUnits(r.text, REPLY_MAX_TOKENS * 4 - 1) + '…' : r.text,
      is_truncated: long,
      media: mediaRefs(r),
    }
  })
  const { first, used } = mostRecentWithin(replies.map((r) => estimateTokens(r.text)), Math.max(0, budgetTokens - rootTokens))
  const included = replies.slice(first)
  return {
    threadContext: {
      schema_version: '1.0',
      thread_id: thread.threadId ?? root.ts,
      root: { message_id: idOf(root), ts: toIso(root.ts), author: author(root.author), text: root.text, media: mediaRefs(root) },
      replies: included,
      truncation: {
        total_replies: total,
        included_replies: included.length,
        strategy: 'most_recent',
        omitted_range_ts: first > 0 ? [replies[0].ts, replies[first - 1].ts] : null,
      },
    },
    budgetUtilization: { threadBudgetTokens: budgetTokens, actualTokens: rootTokens + used, messagesTruncated: first },
  }
}

const buildThreadContext = (thread, budget) => buildThreadContextWithTelemetry(thread, budget).threadContext

const RECORD_STRINGS = ['artifact_id', 'display_name', 'media_type', 'content_hash', 'source_message_id']

function validRecord(key, r) {
  if (!r || typeof r !== 'object') return false
  for (const f of RECORD_STRINGS) if (typeof r[f] !== 'string' || r[f] === '') return false
  if (r.source_thread_id !== null && r.source_thread_id !== undefined && typeof r.source_thread_id !== 'string') return false
  if (!Number.isInteger(r.included_at_turn) || r.included_at_turn < 0) return false
  return r.artifact_id === key
}

const canonical = (r) => ({
  artifact_id: r.artifact_id,
  display_name: r.display_name,
  media_type: r.media_type,
  content_hash: r.content_hash,
  source_message_id: r.source_message_id,
  source_thread_id: r.source_thread_id ?? null,
  included_at_turn: r.included_at_turn,
})

function serializeManifest(manifest) {
  const entries = {}
  for (const [key, r] of Object.entries(manifest.entries)) {
    if (!validRecord(key, r)) throw new TypeError(`serializeManifest: entries.${key}: invalid record`)
    entries[key] = canonical(r)
  }
  return JSON.stringify({ entries })
}

function loadManifestFromEntries(sessionEntries) {
  if (!Array.isArray(sessionEntries)) return { entries: {} }
  for (let i = sessionEntries.length - 1; i >= 0; i--) {
    const e = sessionEntries[i]
    if (!e || e.type !== 'custom' || e.customType !== KEY) continue
    let data
    try {
      data = typeof e.data === 'string' ? JSON.parse(e.data) : e.data
    } catch {
      continue
    }
    if (!data || typeof data.entries !== 'object' || data.entries === null || Array.isArray(data.entries)) continue
    const entries = {}
    let total = 0
    for (const [key, r] of Object.entries(data.entries)) {
      total++
      if (validRecord(key, r)) entries[key] = canonical(r)
    }
    if (total > 0 && Object.keys(entries).length === 0) continue
    return { entries }
  }
  return { entries: {} }
}

// ---------------------------------------------------------------- the runner's shapes
// The Claude SDK runner's own context modules take a flat StructuredContextInput and a
// flat thread; these are those modules' algorithms as a plain JS port (written here from
// their documented behaviour): the baseline a gateway runs before the swap.

const runnerAuthor = (m) => ({ user_id: m.authorId, display_name: m.authorName, is_bot: m.authorIsBot })
const runnerMedia = (fs) => (fs && fs.length > 0 ? fs.map((f) => ({ artifact_id: f.artifactId, media_type: f.mimeType, filename: f.filename ?? null, byte_length: f.byteLength })) : [])

function runnerSnapshot(input) {
  const adjacent = input.adjacentMessages
    .filter((m) => m.messageId !== input.anchor.messageId)
    .map((m) => ({
      message_id: m.messageId,
      ts: m.ts,
      author: runnerAuthor(m),
      snippet: truncateSnippet(m.text),
      thread_activity: m.replyCount > 0 ? { reply_count: m.replyCount, replies_last_1h: 0, last_reply_ts: null } : null,
      has_media: m.hasMedia,
      reactions: m.reactions,
    }))
  const a = input.anchor
  return {
    schema_version: '1.0',
    channel: { id: input.channelId, name: input.channelName, platform: input.platform },
    anchor: { message_id: a.messageId, ts: a.ts, author: runnerAuthor(a), text: a.text, media: runnerMedia(a.files), thread_id: a.threadId },
    adjacent,
  }
}

function runnerThreadWithTelemetry(thread, budgetTokens) {
  if (!thread) return { threadContext: null }
  const budget = budgetTokens ?? THREAD_BUDGET_TOKENS
  const { included, truncation } = applyThreadBudget({ replies: thread.replies, budgetTokens: budget })
  const actualTokens = included.reduce((n, r) => n + estimateTokens(r.text), 0)
  const replies = included.map((r) => {
    const cut = estimateTokens(r.text) > REPLY_MAX_TOKENS
    return { message_id: r.messageId, ts: r.ts, author: runnerAuthor(r), text: cut ? cutUnits(r.text, REPLY_MAX_TOKENS * 4 - 1) + '…' : r.text, is_truncated: cut, media: runnerMedia(r.files) }
  })
  return {
    threadContext: {
      schema_version: '1.0',
      thread_id: thread.rootTs,
      root: { message_id: thread.rootMessageId, ts: thread.rootTs, author: runnerAuthor({ authorId: thread.rootAuthorId, authorName: thread.rootAuthorName, authorIsBot: thread.rootAuthorIsBot }), text: thread.rootText, media: runnerMedia(thread.rootFiles) },
      replies,
      truncation: { ...truncation, total_replies: thread.totalReplyCount },
    },
    budgetUtilization: { threadBudgetTokens: budget, actualTokens, messagesTruncated: thread.replies.length - included.length },
  }
}

const runnerThread = (thread, budgetTokens) => runnerThreadWithTelemetry(thread, budgetTokens).threadContext

/** The subscriber's section: the documents as indented JSON, then the tools' guidance. */
function runnerSubscriber(event, guidance) {
  const input = event.structuredContextInput
  if (!input) return {}
  const parts = ['### Channel Context', '```json', JSON.stringify(runnerSnapshot(input), null, 2), '```']
  const thread = runnerThread(input.thread ?? null)
  if (thread) parts.push('', '### Thread Context', '```json', JSON.stringify(thread, null, 2), '```')
  parts.push('', guidance)
  return { systemPromptSections: [parts.join('\n')] }
}

module.exports = {
  THREAD_BUDGET_TOKENS,
  runnerSnapshot,
  runnerThread,
  runnerThreadWithTelemetry,
  runnerSubscriber,
  SNIPPET_MAX_CHARS,
  ATTACHMENT_MANIFEST_KEY: KEY,
  estimateTokens,
  toIso,
  truncateSnippet,
  applyThreadBudget,
  buildChannelSnapshot,
  buildThreadContext,
  buildThreadContextWithTelemetry,
  serializeManifest,
  loadManifestFromEntries,
}
