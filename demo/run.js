#!/usr/bin/env node
// npm run demo: builds the context a Claude agent gets for one message of the bundled Slack
// channel (fixtures/slack-channel.json) and shows what the budget did.
//
//   node demo/run.js [--anchor <ts>] [--budget <tokens>] [--adjacent <n>] [--dm] [--json]
'use strict'
const path = require('node:path')
const engine = require(path.join(__dirname, '..'))
const { indexMessages, inputsFor } = require('./slack')

function fail(message) {
  console.error(`demo: ${message}`)
  process.exit(2)
}

function parseArgs(argv) {
  const opts = { anchor: null, budget: engine.THREAD_BUDGET_TOKENS, adjacent: 50, dm: false, json: false }
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]
    const value = () => {
      if (i + 1 >= argv.length) fail(`${arg} needs a value`)
      return argv[++i]
    }
    const count = (name, raw) => {
      const n = Number(raw)
      if (!Number.isInteger(n) || n < 0) fail(`${name} must be a non-negative integer, got ${JSON.stringify(raw)}`)
      return n
    }
    if (arg === '--anchor') opts.anchor = value()
    else if (arg === '--budget') opts.budget = count('--budget', value())
    else if (arg === '--adjacent') opts.adjacent = count('--adjacent', value())
    else if (arg === '--dm') opts.dm = true
    else if (arg === '--json') opts.json = true
    else if (arg === '--help' || arg === '-h') {
      console.log('usage: node demo/run.js [--anchor <ts>] [--budget <tokens>] [--adjacent <n>] [--dm] [--json]')
      process.exit(0)
    } else fail(`unknown option ${arg} (try --help)`)
  }
  return opts
}

const opts = parseArgs(process.argv.slice(2))
const data = require(path.join(__dirname, '..', 'fixtures', 'slack-channel.json'))
const byTs = indexMessages(data)

// Default anchor: the newest reply of the longest thread (someone asking the agent).
const longest = Object.values(data.replies).reduce((a, b) => (b.length > a.length ? b : a))
const anchor = opts.anchor ? byTs.get(opts.anchor) : longest[longest.length - 1]
if (!anchor) fail(`no message with ts ${JSON.stringify(opts.anchor)} in fixtures/slack-channel.json`)

const { snapshotInput, threadInput } = inputsFor(data, anchor, opts.adjacent)
const snapshot = engine.buildChannelSnapshot(snapshotInput)
const { context: threadContext, telemetry } = engine.buildThreadContextWithTelemetry(threadInput, opts.budget)
const section = engine.buildContextPromptSection({ snapshot, threadContext }, { directMessage: opts.dm })

// ------------------------------------------------------------------ what the budget did

const parts = {
  guidance: section.slice(0, section.indexOf('<channel_snapshot')),
  snapshot: section.slice(section.indexOf('<channel_snapshot'), section.indexOf('</channel_snapshot>') + '</channel_snapshot>'.length),
  thread: threadContext ? section.slice(section.indexOf('<thread_context')) : '',
}
const collapsed = (t) => t.replace(/\s+/g, ' ').trim()
const cutSnippets = snapshotInput.adjacentMessages.filter((m) => m.ts !== snapshotInput.anchor.ts && collapsed(m.text).length > engine.SNIPPET_MAX_CHARS)

// Attachment manifest: the thread's files, as the gateway would track them across turns.
const manifest = engine.createAttachmentManifest()
const threadFiles = threadInput ? [threadInput.root, ...threadInput.replies].flatMap((m) => (m.media ?? []).map((f) => ({ m, f }))) : []
threadFiles.forEach(({ m, f }, turn) => {
  engine.recordAttachment(manifest, {
    artifactId: f.artifactId,
    displayName: f.filename ?? f.artifactId,
    mediaType: f.mediaType,
    contentHash: engine.sha256Hex(`${f.artifactId}:${f.filename}`), // stands in for the file bytes
    sourceMessageId: m.ts,
    sourceThreadId: threadInput.threadId,
    includedAtTurn: turn + 1,
  })
})
let reupload = null
if (threadFiles.length > 0) {
  const { f } = threadFiles[0]
  reupload = engine.checkAttachment(manifest, { artifactId: 'F07REUPLOAD1', contentHash: engine.sha256Hex(`${f.artifactId}:${f.filename}`) })
}
const persisted = engine.serializeManifest(manifest)
const restored = engine.loadManifestFromEntries([
  { type: 'message', message: { role: 'user', content: '...' } },
  { type: 'custom', customType: engine.ATTACHMENT_MANIFEST_KEY, data: persisted },
  { type: 'custom', customType: engine.ATTACHMENT_MANIFEST_KEY, data: '{"entries": {"F1": ' }, // a torn write
])

const summary = {
  anchor: { ts: anchor.ts, iso: snapshot.anchor.ts, author: snapshot.anchor.author.display_name, inThread: Boolean(threadContext) },
  tokens: {
    total: engine.estimateTokens(section),
    guidance: engine.estimateTokens(parts.guidance),
    snapshot: engine.estimateTokens(parts.snapshot),
    thread: engine.estimateTokens(parts.thread),
  },
  adjacent: { messages: snapshot.adjacent.length, snippetsTruncated: cutSnippets.length, withThreads: snapshot.adjacent.filter((a) => a.thread_activity).length },
  thread: threadContext
    ? {
        threadId: threadContext.thread_id,
        totalReplies: threadContext.truncation.total_replies,
        given: threadInput.replies.length,
        included: threadContext.truncation.included_replies,
        omitted: threadInput.replies.length - threadContext.truncation.included_replies,
        omittedRange: threadContext.truncation.omitted_range_ts,
        repliesCut: telemetry.messagesTruncated,
        budgetTokens: telemetry.threadBudgetTokens,
        actualTokens: telemetry.actualTokens,
      }
    : null,
  manifest: {
    recorded: Object.keys(manifest.entries).length,
    fromThread: threadInput ? engine.getThreadAttachments(manifest, threadInput.threadId).length : 0,
    reupload: reupload && { match: reupload.match, of: reupload.record?.artifact_id ?? null },
    restoredAfterTornWrite: Object.keys(restored.entries).length,
  },
}

if (opts.json) {
  console.log(JSON.stringify(summary, null, 2))
  process.exit(0)
}

const bold = (s) => (process.stdout.isTTY ? `\x1b[1m${s}\x1b[0m` : s)
const rule = (title) => console.log(`\n${bold(`── ${title} ${'─'.repeat(Math.max(0, 66 - title.length))}`)}`)

rule(`prompt section for ${anchor.ts} (${summary.anchor.author}, ${summary.anchor.iso})`)
console.log(section)

rule('tokens (estimateTokens: ceil(UTF-16 length / 4))')
console.log(`whole section   ${summary.tokens.total}`)
console.log(`  guidance      ${summary.tokens.guidance}`)
console.log(`  snapshot      ${summary.tokens.snapshot}`)
console.log(`  thread        ${summary.tokens.thread}`)

rule('what was truncated or omitted')
console.log(`adjacent messages: ${summary.adjacent.messages} (${summary.adjacent.withThreads} start threads), ${summary.adjacent.snippetsTruncated} snippet(s) cut to ${engine.SNIPPET_MAX_CHARS} characters`)
if (summary.thread) {
  const t = summary.thread
  console.log(`thread ${t.threadId}: ${t.totalReplies} replies on Slack, ${t.given} up to the anchor, ${t.included} included, ${t.omitted} omitted`)
  if (t.omittedRange) console.log(`  omitted replies from ${t.omittedRange[0]} to ${t.omittedRange[1]} (oldest first, budget fills from the newest)`)
  console.log(`  ${t.repliesCut} included repl${t.repliesCut === 1 ? 'y' : 'ies'} cut to 300 tokens; root kept in full`)
  console.log(`  budget ${t.budgetTokens} tokens, used ${t.actualTokens}`)
} else {
  console.log('no thread: the anchor is a top-level message without replies')
}

rule('attachment manifest')
console.log(`${summary.manifest.recorded} file(s) from this thread recorded; getThreadAttachments finds ${summary.manifest.fromThread}`)
if (summary.manifest.reupload) console.log(`re-upload of ${summary.manifest.reupload.of} under a new id: checkAttachment says "${summary.manifest.reupload.match}"`)
console.log(`serialized ${persisted.length} bytes; after a torn newer write, loadManifestFromEntries restored ${summary.manifest.restoredAfterTornWrite} record(s)`)
