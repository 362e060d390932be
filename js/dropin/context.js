// The drop-in exports in the runner's shapes, mapped on this side of the boundary.
// Loaded by index.js over the native exports (same names, same typings).
//
// The runner's context modules map a handful of fields into new objects: done here, that
// is a property read and an object literal per field, where the native path pays a JSON
// round trip of the whole input and output (a 200-reply thread cost ~750 µs against the
// original module's ~30 µs). The rules are Rust's, decided in one typed call per export:
// the replies' text lengths go in a Uint32Array to `_threadPlan` (the budget with its
// default and clamp, newest first, which kept replies are over 300 tokens and where each
// is cut, from the one unit of it the cut looks at), the replies it names are sliced there
// here, snippets come from `truncateSnippet`, and the
// subscriber's section is laid out and escaped by `_sessionSection`. This file maps
// shapes and reads each field once; it decides nothing but whether it can take the input.
//
// Text the caller gave comes back as given, as the runner's modules return it: a lone
// surrogate (half of a UTF-16 pair) passes through, where the native exports (Rust reads
// strings as UTF-8) give U+FFFD, a cut reply being the caller's string sliced; a snippet,
// made by Rust, is well formed. On well-formed text both doors give one answer. Anything the fast path does not take (a field missing or of another type, the
// engine's nested shapes) goes to the native export with a plain copy of what was read,
// which validates it and throws the TypeError naming the field, or builds what the
// engine's shapes ask for.
'use strict'

const { asExport, inputError, unreadable } = require('../core/errors.js')

const str = (v) => typeof v === 'string'
/** An id field: a string, kept exactly as given here (the native exports refuse one with
 * a lone surrogate, which U+FFFD would make another id; here it is never converted). */
const id = str
const nullableStr = (v) => v === undefined || v === null || str(v)
const count = (v) => Number.isSafeInteger(v) && v >= 0
const budgetOk = (b) => b === undefined || b === null || (typeof b === 'number' && b >= 0 && Number.isFinite(b))

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

const validFiles = (fs) => fs === undefined || fs === null || (Array.isArray(fs) && fs.every((f) => f !== null && typeof f === 'object' && id(f.artifactId) && str(f.mimeType) && nullableStr(f.filename) && count(f.byteLength)))
const validAuthor = (m) => id(m.authorId) && str(m.authorName) && typeof m.authorIsBot === 'boolean'
const validReactions = (rs) => rs === undefined || rs === null || (Array.isArray(rs) && rs.every(str))
/** A message's own fields, as both the anchor and the adjacent messages carry them. */
const validMessage = (m) => m !== null && typeof m === 'object' && id(m.messageId) && id(m.ts) && validAuthor(m) && str(m.text)
const validAdjacent = (m) =>
  validMessage(m) &&
  (m.replyCount === undefined || m.replyCount === null || count(m.replyCount)) &&
  (m.hasMedia === undefined || m.hasMedia === null || typeof m.hasMedia === 'boolean') &&
  validReactions(m.reactions)

function validInput(i) {
  const a = i.anchor
  return (
    str(i.platform) &&
    id(i.channelId) &&
    str(i.channelName) &&
    validMessage(a) &&
    (a.threadId === undefined || a.threadId === null || id(a.threadId)) &&
    validFiles(a.files) &&
    Array.isArray(i.adjacentMessages) &&
    i.adjacentMessages.every(validAdjacent)
  )
}

// ---------------------------------------------------------------- building

const author = (m) => ({ user_id: m.authorId, display_name: m.authorName, is_bot: m.authorIsBot })
const media = (fs) => (fs ? fs.map((f) => ({ artifact_id: f.artifactId, media_type: f.mimeType, filename: f.filename ?? null, byte_length: f.byteLength })) : [])

module.exports = function dropin(binding) {
  /** The truncation's strategy, as Rust's `Truncation` names it. */
  const STRATEGY = binding.TRUNCATION_STRATEGY
  /** The unit of a long reply its cut looks at, and what ends a cut reply. */
  const PROBE = binding.REPLY_CUT_PROBE_UNIT
  const MARK = binding.CUT_MARK
  // What `_threadPlan` reads and writes, grown as threads need and reused.
  let lengths = new Uint32Array(256)
  let probes = new Uint16Array(256)
  let plan = new Float64Array(2 * 256 + 3)
  function room(n) {
    if (lengths.length < n) {
      lengths = new Uint32Array(Math.max(n, lengths.length * 2))
      probes = new Uint16Array(lengths.length)
      plan = new Float64Array(2 * lengths.length + 3)
    }
  }
  /**
   * The runner's ThreadContext and its budget telemetry (see src/dropin/context.rs): the
   * replies' text lengths are read, `_threadPlan` keeps the newest that fit, and the kept
   * replies are mapped. Returns null when something read is not what the runner's types
   * say (the native export then names it).
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
    if (!(id(rootMessageId) && id(rootTs) && id(rootAuthorId) && str(rootAuthorName) && typeof rootAuthorIsBot === 'boolean' && str(rootText) && validFiles(rootFiles) && Array.isArray(replies) && count(total))) return null
    const n = replies.length
    room(n)
    // Every reply's text and ids are read (once) and checked, as the native export checks
    // them; the other fields only of the replies kept.
    // Per reply, four slots: its text, id, stamp and author's id.
    const read = new Array(4 * n)
    for (let i = 0; i < n; i++) {
      const r = replies[i]
      if (r === null || typeof r !== 'object') return null
      const text = r.text
      const messageId = r.messageId
      const ts = r.ts
      const authorId = r.authorId
      if (!(typeof text === 'string' && id(messageId) && id(ts) && id(authorId))) return null
      read[4 * i] = text
      read[4 * i + 1] = messageId
      read[4 * i + 2] = ts
      read[4 * i + 3] = authorId
      probes[i] = text.length > PROBE ? text.charCodeAt(PROBE) : 0
      lengths[i] = text.length
    }
    const cuts = binding._threadPlan(lengths, n, budget, probes, plan)
    const first = plan[0]
    const shown = new Array(n - first)
    // The kept replies to cut, in index order: `plan[3 + k]`, cut at `plan[3 + cuts + k]`.
    let k = 0
    let next = cuts > 0 ? plan[3] : -1
    for (let i = first; i < n; i++) {
      const r = replies[i]
      const authorName = r.authorName
      const authorIsBot = r.authorIsBot
      const files = copyFiles(r.files)
      if (!(str(authorName) && typeof authorIsBot === 'boolean' && validFiles(files))) return null
      const isCut = i === next
      let text = read[4 * i]
      if (isCut) {
        text = text.slice(0, plan[3 + cuts + k]) + MARK
        k++
        next = k < cuts ? plan[3 + k] : -1
      }
      shown[i - first] = {
        message_id: read[4 * i + 1],
        ts: read[4 * i + 2],
        author: { user_id: read[4 * i + 3], display_name: authorName, is_bot: authorIsBot },
        text,
        is_truncated: isCut,
        media: media(files),
      }
    }
    const used = plan[1]
    const applied = plan[2]
    const omitted = first > 0 ? [read[2], read[4 * (first - 1) + 2]] : null
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
      truncation: { total_replies: total, included_replies: shown.length, strategy: STRATEGY, omitted_range_ts: omitted },
    }
    return { context, telemetry: { threadBudgetTokens: applied, actualTokens: used, messagesTruncated: first } }
  }

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
    const n = replies.length
    room(n)
    // Valid input is read once (the two stamps the truncation names are read again,
    // and checked again); input the fast path does not take is read again by the native
    // export, which names the bad field.
    let ok = true
    let first = 0
    let oldest
    let newest
    try {
      for (let i = 0; i < n; i++) {
        const r = replies[i]
        if (r === null || typeof r !== 'object' || typeof r.ts !== 'string') {
          ok = false
          break
        }
        const text = r.text
        if (typeof text !== 'string') {
          ok = false
          break
        }
        lengths[i] = text.length
      }
      if (ok) {
        first = binding._threadFirst(lengths, n, budget)
        if (first > 0) {
          oldest = replies[0].ts
          newest = first > 1 ? replies[first - 1].ts : oldest
          ok = typeof oldest === 'string' && typeof newest === 'string'
        }
      }
    } catch (err) {
      throw unreadable('applyThreadBudget', 'input', err)
    }
    if (!ok) return binding.applyThreadBudget({ replies, budgetTokens: budget })
    return {
      included: replies.slice(first),
      truncation: { total_replies: n, included_replies: n - first, strategy: STRATEGY, omitted_range_ts: first > 0 ? [oldest, newest] : null },
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
      const built = threadContext(thread, budget)
      return built !== null ? { built } : { copy: copyThread(thread) }
    } catch (err) {
      throw unreadable(name, 'thread', err)
    }
  }

  function threadOf(thread, budgetTokens) {
    if (thread === undefined || thread === null) return binding.buildThreadContext(thread, budgetTokens)
    const { copy, built } = fast('buildThreadContext', thread, budgetTokens)
    if (built) return built.context
    return binding.buildThreadContext(copy ?? thread, budgetTokens)
  }
  const buildThreadContext = (thread, budgetTokens) => threadOf(thread, budgetTokens)

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
    const shown = i.adjacentMessages.filter((m) => m.messageId !== a.messageId)
    const snippets = binding._snippets(shown.map((m) => m.text))
    const adjacent = shown.map((m, k) => {
      const replies = m.replyCount ?? 0
      return {
        message_id: m.messageId,
        ts: m.ts,
        author: author(m),
        snippet: snippets[k],
        thread_activity: replies > 0 ? { reply_count: replies, replies_last_1h: 0, last_reply_ts: null } : null,
        has_media: m.hasMedia ?? false,
        reactions: m.reactions || [],
      }
    })
    return {
      schema_version: '1.0',
      channel: { id: i.channelId, name: i.channelName, platform: i.platform },
      anchor: { message_id: a.messageId, ts: a.ts, author: author(a), text: a.text, media: media(a.files), thread_id: a.threadId ?? null },
      adjacent,
    }
  }

  const SUBSCRIBER = 'coreSessionContextSubscriber'
  const under = (p) => (p === 'input' || p === 'thread' || p === '' ? 'event.structuredContextInput' : `event.structuredContextInput.${p}`)

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
        context = threadOf(thread, undefined)
      } catch (err) {
        throw asExport(err, 'buildThreadContext', SUBSCRIBER, (p) => under(p === 'input' ? 'thread' : `thread.${p}`))
      }
    }
    if (channelType !== undefined && channelType !== null && typeof channelType !== 'string') {
      throw inputError(TypeError, SUBSCRIBER, 'event.structuredContextInput.channelType', `expected a string, got ${typeof channelType}`)
    }
    // Laid out and escaped as the prompt's JSON is (no message closes its fence) in Rust.
    const json = (value) => JSON.stringify(value, null, 2)
    const section = binding._sessionSection(json(snapshot), context === null ? null : json(context), channelType ?? null)
    return { systemPromptSections: [section] }
  }

  // The one rule this side writes out: `ceil(length / 4)` in UTF-16 units, as the native
  // `estimateTokens` (src/core/text.rs `tokens_for_units`) counts. A native call per text
  // costs some 20 times the arithmetic (5.7 µs against 0.3 µs for 50 texts); the drop-in
  // property test holds the two equal on random text, lone surrogates included.
  function estimateTokens(text) {
    return typeof text === 'string' ? Math.ceil(text.length / 4) : binding.estimateTokens(text)
  }

  return { applyThreadBudget, buildThreadContext, buildThreadContextWithTelemetry, buildChannelSnapshot, estimateTokens, coreSessionContextSubscriber }
}
