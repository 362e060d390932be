// The drop-in exports in the runner's shapes, built on this side of the boundary.
// Loaded by index.js over the native exports (same names, same typings).
//
// The runner's context modules map a handful of fields into new objects: done here, that
// is a property read and an object literal per field, where the native path pays a JSON
// round trip of the whole input and output (a 200-reply thread cost ~750 µs against the
// original module's ~30 µs; applyThreadBudget 13.7 µs against 0.2 µs: a napi call costs
// more than the whole budget loop). The rules stay the package's: the thread budget is the
// same newest-first rule as the Rust `most_recent_within`, with replies read newest first
// and only as far as the rule looks (as the runner's module did); replies over 300 tokens
// are cut without splitting a surrogate pair; snippets come from the native
// `truncateSnippet`.
//
// Text passes through exactly as given, as it did in the runner's modules (a lone
// surrogate included; the engine's shapes, read by Rust, turn one into U+FFFD). Each field
// is read once into a plain copy. Anything the fast path does not take (a field missing
// or of another type, the engine's nested shapes) goes to the native export with that
// copy, which validates it and throws the TypeError naming the field, or builds what the
// engine's shapes ask for.
'use strict'

const { asExport, inputError, unreadable } = require('./errors.js')

const REPLY_MAX_UNITS = 1200 // 300 tokens of 4 UTF-16 units
const tokensOf = (text) => Math.ceil(text.length / 4)
const str = (v) => typeof v === 'string'
const nullableStr = (v) => v === undefined || v === null || str(v)
const count = (v) => Number.isSafeInteger(v) && v >= 0
const budgetOk = (b) => b === undefined || b === null || (typeof b === 'number' && b >= 0 && Number.isFinite(b))

/** `text` cut to 1,199 units plus `…` when over 300 tokens (a surrogate pair kept whole). */
function cutReply(text) {
  if (text.length <= REPLY_MAX_UNITS) return null
  let keep = REPLY_MAX_UNITS - 1
  const c = text.charCodeAt(keep - 1)
  if (c >= 0xd800 && c <= 0xdbff) keep--
  return `${text.slice(0, keep)}…`
}

// ---------------------------------------------------------------- reading, once

const copyFile = (f) => (f !== null && typeof f === 'object' ? { artifactId: f.artifactId, mimeType: f.mimeType, filename: f.filename, byteLength: f.byteLength } : f)
const copyFiles = (fs) => (Array.isArray(fs) ? fs.map(copyFile) : fs)
const copyReply = (r) =>
  r !== null && typeof r === 'object'
    ? { messageId: r.messageId, ts: r.ts, authorId: r.authorId, authorName: r.authorName, authorIsBot: r.authorIsBot, text: r.text, files: copyFiles(r.files) }
    : r

/** What the native export needs to name a bad field of the runner's thread. */
function copyThread(t) {
  return {
    rootMessageId: t.rootMessageId,
    rootTs: t.rootTs,
    rootAuthorId: t.rootAuthorId,
    rootAuthorName: t.rootAuthorName,
    rootAuthorIsBot: t.rootAuthorIsBot,
    rootText: t.rootText,
    rootFiles: copyFiles(t.rootFiles),
    replies: Array.isArray(t.replies) ? t.replies.map(copyReply) : t.replies,
    totalReplyCount: t.totalReplyCount,
  }
}

const copyMessage = (m) =>
  m !== null && typeof m === 'object'
    ? { messageId: m.messageId, ts: m.ts, authorId: m.authorId, authorName: m.authorName, authorIsBot: m.authorIsBot, text: m.text, threadId: m.threadId, files: copyFiles(m.files), replyCount: m.replyCount, hasMedia: m.hasMedia, reactions: Array.isArray(m.reactions) ? [...m.reactions] : m.reactions }
    : m

function copyInput(i) {
  return {
    platform: i.platform,
    channelId: i.channelId,
    channelName: i.channelName,
    anchor: copyMessage(i.anchor),
    adjacentMessages: Array.isArray(i.adjacentMessages) ? i.adjacentMessages.map(copyMessage) : i.adjacentMessages,
  }
}

// ---------------------------------------------------------------- checking what is read

const validFiles = (fs) => fs === undefined || fs === null || (Array.isArray(fs) && fs.every((f) => f !== null && typeof f === 'object' && str(f.artifactId) && str(f.mimeType) && nullableStr(f.filename) && count(f.byteLength)))
const validAuthor = (m) => str(m.authorId) && str(m.authorName) && typeof m.authorIsBot === 'boolean'
const validReactions = (rs) => rs === undefined || rs === null || (Array.isArray(rs) && rs.every(str))
/** A message's own fields, as both the anchor and the adjacent messages carry them. */
const validMessage = (m) => m !== null && typeof m === 'object' && str(m.messageId) && str(m.ts) && validAuthor(m) && str(m.text)
const validAdjacent = (m) =>
  validMessage(m) &&
  (m.replyCount === undefined || m.replyCount === null || count(m.replyCount)) &&
  (m.hasMedia === undefined || m.hasMedia === null || typeof m.hasMedia === 'boolean') &&
  validReactions(m.reactions)

function validInput(i) {
  const a = i.anchor
  return (
    str(i.platform) &&
    str(i.channelId) &&
    str(i.channelName) &&
    validMessage(a) &&
    nullableStr(a.threadId) &&
    validFiles(a.files) &&
    Array.isArray(i.adjacentMessages) &&
    i.adjacentMessages.every(validAdjacent)
  )
}

// ---------------------------------------------------------------- building

const author = (m) => ({ user_id: m.authorId, display_name: m.authorName, is_bot: m.authorIsBot })
const media = (fs) => (fs ? fs.map((f) => ({ artifact_id: f.artifactId, media_type: f.mimeType, filename: f.filename ?? null, byte_length: f.byteLength })) : [])

/**
 * The runner's ThreadContext and its budget telemetry (see src/dropin/context.rs), read and built
 * in one pass from the newest reply back, as the runner's module read it: the replies the
 * budget keeps, the text of the first one it does not, and the omitted range's ends.
 * Returns null when something read is not what the runner's types say (the native
 * export then names it).
 */
function threadContext(t, budget) {
  const rootMessageId = t.rootMessageId
  const rootTs = t.rootTs
  const rootAuthorId = t.rootAuthorId
  const rootAuthorName = t.rootAuthorName
  const rootAuthorIsBot = t.rootAuthorIsBot
  const rootText = t.rootText
  const rootFiles = copyFiles(t.rootFiles)
  const replies = t.replies
  const total = t.totalReplyCount
  if (!(str(rootMessageId) && str(rootTs) && str(rootAuthorId) && str(rootAuthorName) && typeof rootAuthorIsBot === 'boolean' && str(rootText) && validFiles(rootFiles) && Array.isArray(replies) && count(total))) return null
  const n = replies.length
  const shown = []
  let used = 0
  let first = n
  let lastOmittedTs = null
  for (let i = n - 1; i >= 0; i--) {
    const r = replies[i]
    if (r === null || typeof r !== 'object') return null
    const text = r.text
    if (typeof text !== 'string') return null
    const tokens = tokensOf(text)
    if (used + tokens > budget && first !== n) {
      lastOmittedTs = r.ts
      if (!str(lastOmittedTs)) return null
      break
    }
    const messageId = r.messageId
    const ts = r.ts
    const authorId = r.authorId
    const authorName = r.authorName
    const authorIsBot = r.authorIsBot
    const files = copyFiles(r.files)
    if (!(str(messageId) && str(ts) && str(authorId) && str(authorName) && typeof authorIsBot === 'boolean' && validFiles(files))) return null
    used += tokens
    first = i
    const cut = cutReply(text)
    shown.push({ message_id: messageId, ts, author: { user_id: authorId, display_name: authorName, is_bot: authorIsBot }, text: cut ?? text, is_truncated: cut !== null, media: media(files) })
  }
  let omitted = null
  if (first > 0) {
    let oldestTs = lastOmittedTs
    if (first > 1) {
      const r = replies[0]
      if (r === null || typeof r !== 'object') return null
      oldestTs = r.ts
      if (!str(oldestTs)) return null
    }
    omitted = [oldestTs, lastOmittedTs]
  }
  shown.reverse()
  const context = {
    schema_version: '1.0',
    thread_id: rootTs,
    root: {
      message_id: rootMessageId,
      ts: rootTs,
      author: { user_id: rootAuthorId, display_name: rootAuthorName, is_bot: rootAuthorIsBot },
      text: rootText,
      media: media(rootFiles),
    },
    replies: shown,
    truncation: { total_replies: total, included_replies: shown.length, strategy: 'most_recent', omitted_range_ts: omitted },
  }
  return { context, telemetry: { threadBudgetTokens: budget, actualTokens: used, messagesTruncated: first } }
}

module.exports = function dropin(binding) {
  /** A thread budget as the native exports take it: the default when absent, whole tokens. */
  const budgetOf = (b) => (b === undefined || b === null ? binding.THREAD_BUDGET_TOKENS : Math.min(Math.floor(b), 0xffffffff))

  // Each value is read once. When the fast path cannot take the input, the native
  // export gets what was read (not the caller's objects again), so a getter that
  // answers differently on a second read, or re-enters, is never read twice.
  function applyThreadBudget(input) {
    if (input === null || typeof input !== 'object') return binding.applyThreadBudget(input)
    let replies
    let budget
    let isArray
    try {
      replies = input.replies
      budget = input.budgetTokens
      isArray = Array.isArray(replies)
    } catch (err) {
      throw unreadable('applyThreadBudget', 'input', err)
    }
    if (!isArray || !budgetOk(budget)) return binding.applyThreadBudget({ replies, budgetTokens: budget })
    // Newest first, reading only the replies the rule looks at (as the original did): the
    // budget rule of src/core/budget.rs, the newest always kept.
    const n = replies.length
    const limit = budgetOf(budget)
    const read = new Array(n)
    let used = 0
    let first = n
    let bad = -1
    let oldest
    try {
      for (let i = n - 1; i >= 0; i--) {
        const r = replies[i]
        if (r === null || typeof r !== 'object') {
          read[i] = r
          bad = i
          break
        }
        const text = r.text
        const ts = r.ts
        read[i] = { text, ts }
        if (typeof text !== 'string' || typeof ts !== 'string') {
          bad = i
          break
        }
        const next = used + tokensOf(text)
        if (next > limit && first !== n) break
        used = next
        first = i
      }
      if (bad < 0 && first > 0) {
        if (read[0] === undefined) {
          const r = replies[0]
          read[0] = r !== null && typeof r === 'object' ? { text: r.text, ts: r.ts } : r
        }
        oldest = read[0]
        if (oldest === null || typeof oldest !== 'object' || typeof oldest.text !== 'string' || typeof oldest.ts !== 'string') bad = 0
      }
      if (bad >= 0) {
        for (let j = 0; j < n; j++) {
          if (read[j] !== undefined) continue
          const x = replies[j]
          read[j] = x !== null && typeof x === 'object' ? { text: x.text, ts: x.ts } : x
        }
      }
    } catch (err) {
      throw unreadable('applyThreadBudget', 'input', err)
    }
    if (bad >= 0) {
      // The native export validates what was read and names the bad field.
      const out = binding.applyThreadBudget({ replies: read, budgetTokens: budget })
      return { included: replies.slice(n - out.included.length), truncation: out.truncation }
    }
    return {
      included: replies.slice(first),
      truncation: {
        total_replies: n,
        included_replies: n - first,
        strategy: 'most_recent',
        omitted_range_ts: first > 0 ? [oldest.ts, read[first - 1].ts] : null,
      },
    }
  }
  /**
   * The runner's thread built here, or `{ copy }` (what was read, or nothing for another
   * shape) for the native export. A malformed thread is read a second time into the copy
   * the native export names the bad field from.
   */
  function fast(name, thread, budget) {
    try {
      if (typeof thread !== 'object' || !('rootMessageId' in thread) || !budgetOk(budget)) return { copy: null }
      const built = threadContext(thread, budgetOf(budget))
      return built !== null ? { built } : { copy: copyThread(thread) }
    } catch (err) {
      throw unreadable(name, 'thread', err)
    }
  }

  function buildThreadContext(thread, budgetTokens) {
    if (thread === undefined || thread === null) return binding.buildThreadContext(thread, budgetTokens)
    const { copy, built } = fast('buildThreadContext', thread, budgetTokens)
    if (built) return built.context
    return binding.buildThreadContext(copy ?? thread, budgetTokens)
  }

  function buildThreadContextWithTelemetry(thread, budgetTokens) {
    if (thread === undefined || thread === null) return binding.buildThreadContextWithTelemetry(thread, budgetTokens)
    const { copy, built } = fast('buildThreadContextWithTelemetry', thread, budgetTokens)
    if (built) return { threadContext: built.context, budgetUtilization: built.telemetry }
    return binding.buildThreadContextWithTelemetry(copy ?? thread, budgetTokens)
  }

  function buildChannelSnapshot(input) {
    if (input === null || typeof input !== 'object') return binding.buildChannelSnapshot(input)
    let i = null
    try {
      if ('channelId' in input) i = copyInput(input)
    } catch (err) {
      throw unreadable('buildChannelSnapshot', 'input', err)
    }
    if (i === null) return binding.buildChannelSnapshot(input)
    if (!validInput(i)) return binding.buildChannelSnapshot(i)
    const a = i.anchor
    const adjacent = []
    for (const m of i.adjacentMessages) {
      if (m.messageId === a.messageId) continue
      const replies = m.replyCount ?? 0
      adjacent.push({
        message_id: m.messageId,
        ts: m.ts,
        author: author(m),
        snippet: binding.truncateSnippet(m.text),
        thread_activity: replies > 0 ? { reply_count: replies, replies_last_1h: 0, last_reply_ts: null } : null,
        has_media: m.hasMedia ?? false,
        reactions: m.reactions ?? [],
      })
    }
    return {
      schema_version: '1.0',
      channel: { id: i.channelId, name: i.channelName, platform: i.platform },
      anchor: { message_id: a.messageId, ts: a.ts, author: author(a), text: a.text, media: media(a.files), thread_id: a.threadId ?? null },
      adjacent,
    }
  }

  const SUBSCRIBER = 'coreSessionContextSubscriber'
  const under = (p) => (p === 'input' || p === 'thread' || p === '' ? 'event.structuredContextInput' : `event.structuredContextInput.${p}`)
  // JSON as the prompt section writes it: `<`, `>`, `&`, backticks and the characters some
  // readers end a line at, escaped (they occur only inside strings), so no message closes
  // the fence it sits in.
  const sectionJson = (value) => JSON.stringify(value, null, 2).replace(/[<>&`\u0085\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)

  function coreSessionContextSubscriber(event) {
    if (event === null || typeof event !== 'object') {
      throw inputError(TypeError, SUBSCRIBER, 'event', `expected an object, got ${event === null ? 'null' : Array.isArray(event) ? 'array' : typeof event}`)
    }
    let input
    let thread
    let channelType
    try {
      input = event.structuredContextInput
      if (input !== undefined && input !== null && typeof input === 'object') {
        thread = input.thread
        channelType = input.channelType
      }
    } catch (err) {
      throw unreadable(SUBSCRIBER, 'event', err)
    }
    if (input === undefined || input === null) return {}
    if (typeof input !== 'object' || Array.isArray(input)) {
      throw inputError(TypeError, SUBSCRIBER, 'event.structuredContextInput', `expected an object, got ${Array.isArray(input) ? 'array' : typeof input}`)
    }
    let snapshot
    let context = null
    try {
      snapshot = buildChannelSnapshot(input)
    } catch (err) {
      throw asExport(err, 'buildChannelSnapshot', SUBSCRIBER, under)
    }
    if (thread !== undefined && thread !== null) {
      try {
        context = buildThreadContext(thread)
      } catch (err) {
        throw asExport(err, 'buildThreadContext', SUBSCRIBER, (p) => under(p === 'input' ? 'thread' : `thread.${p}`))
      }
    }
    if (channelType !== undefined && channelType !== null && typeof channelType !== 'string') {
      throw inputError(TypeError, SUBSCRIBER, 'event.structuredContextInput.channelType', `expected a string, got ${typeof channelType}`)
    }
    let section = `### Channel Context\n\`\`\`json\n${sectionJson(snapshot)}\n\`\`\`\n`
    if (context !== null) section += `\n### Thread Context\n\`\`\`json\n${sectionJson(context)}\n\`\`\`\n`
    section += `\n${binding.channelToolsGuidance(channelType ?? null)}`
    return { systemPromptSections: [section] }
  }

  function estimateTokens(text) {
    return typeof text === 'string' ? tokensOf(text) : binding.estimateTokens(text)
  }

  return { applyThreadBudget, buildThreadContext, buildThreadContextWithTelemetry, buildChannelSnapshot, estimateTokens, coreSessionContextSubscriber }
}
