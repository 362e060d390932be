#!/usr/bin/env node
// npm run demo: a gateway restarts in the middle of the bundled Slack channel
// (fixtures/slack-channel.json). Events flow into a ChannelStore as Slack sends them; a
// message arrives for the agent; the store builds its context, fetching only what it
// lacks (one conversations.history call warms the channel, one conversations.replies
// call loads the thread that began before the restart). A later message then costs no
// API call at all. The report shows the prompt section, tokens per part, what the budget
// cut, the calls made, the attachment manifest for the thread's files, and the stats.
//
// With --platform discord|telegram the same conversation arrives as Discord Gateway
// dispatches (and a Discord REST fetcher) or Telegram Bot API updates (demo/platforms.js).
// Telegram's Bot API cannot read history, so that run replays the channel from its start.
//
//   node demo/run.js [--platform slack|discord|telegram] [--anchor <ts>] [--budget <tokens>]
//                    [--adjacent <n>] [--dm] [--json]
'use strict'
const path = require('node:path')
const engine = require(path.join(__dirname, '..'))
const { FakeSlack } = require('./fake-slack')
const { FakeDiscord, FakeTelegram } = require('./platforms')

const PLATFORMS = ['slack', 'discord', 'telegram']

function fail(message) {
  console.error(`demo: ${message}`)
  process.exit(2)
}

function parseArgs(argv) {
  const opts = { platform: 'slack', anchor: null, budget: engine.THREAD_BUDGET_TOKENS, adjacent: 50, dm: false, json: false }
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
    if (arg === '--platform') {
      opts.platform = value()
      if (!PLATFORMS.includes(opts.platform)) fail(`--platform must be one of ${PLATFORMS.join(', ')}, got ${JSON.stringify(opts.platform)}`)
    } else if (arg === '--anchor') opts.anchor = value()
    else if (arg === '--budget') opts.budget = count('--budget', value())
    else if (arg === '--adjacent') opts.adjacent = count('--adjacent', value())
    else if (arg === '--dm') opts.dm = true
    else if (arg === '--json') opts.json = true
    else if (arg === '--help' || arg === '-h') {
      console.log('usage: node demo/run.js [--platform slack|discord|telegram] [--anchor <ts>] [--budget <tokens>] [--adjacent <n>] [--dm] [--json]')
      process.exit(0)
    } else fail(`unknown option ${arg} (try --help)`)
  }
  return opts
}

/** Restart this long before the anchor: events after it reach the store, older ones do not. */
const RESTART_BEFORE_MS = 30 * 60_000

async function main() {
  const opts = parseArgs(process.argv.slice(2))
  const data = require(path.join(__dirname, '..', 'fixtures', 'slack-channel.json'))
  const slack = new FakeSlack(data)

  // Default anchor: the newest reply of the longest thread (someone asking the agent).
  const longest = Object.values(data.replies).reduce((a, b) => (b.length > a.length ? b : a))
  const anchorTs = opts.anchor ?? longest[longest.length - 1].ts
  const anchor = slack.timeline.find((m) => m.ts === anchorTs)
  if (!anchor) fail(`no message with ts ${JSON.stringify(opts.anchor)} in fixtures/slack-channel.json`)

  // ---------------------------------------------------------------- the restart
  let nowMs = Number(anchor.ts) * 1000 - RESTART_BEFORE_MS
  const clock = () => nowMs
  const source = platformSource(opts.platform, data, slack)
  const store = new engine.ChannelStore({ clock, fetcher: source.fetcher })
  source.connect(store)
  // Telegram keeps nothing it did not see: that run starts with the channel.
  const restartTs = opts.platform === 'telegram' ? '0' : (nowMs / 1000).toFixed(6)

  /** Replays every payload the platform would send up to `ts`, moving the clock along. */
  let replayedTo = restartTs
  let payloads = 0
  function replayUntil(ts) {
    for (const m of slack.between(replayedTo, ts)) {
      nowMs = Number(m.ts) * 1000
      source.at(m.ts)
      payloads += source.ingest(store, m)
    }
    replayedTo = ts
    source.at(ts)
    nowMs = Number(ts) * 1000 + 1000 // the agent answers a second later
  }

  replayUntil(anchor.ts)
  const callsBefore = source.calls.length
  const ctx = await store.buildContext(source.channelId, source.idOf(anchor.ts), {
    threadId: anchor.thread_ts ? source.idOf(anchor.thread_ts) : undefined,
    budgetTokens: opts.budget,
    adjacent: opts.adjacent,
    directMessage: opts.dm,
  })
  const firstCalls = source.calls.slice(callsBefore)
  const snapshot = ctx.snapshot
  const thread = ctx.thread

  // ---------------------------------------------------------------- a later message
  const later = slack.timeline.find((m) => Number(m.ts) > Number(anchor.ts) && !m.thread_ts)
  let second = null
  if (later) {
    replayUntil(later.ts)
    const before = source.calls.length
    const c2 = await store.buildContext(source.channelId, source.idOf(later.ts), { adjacent: opts.adjacent, budgetTokens: opts.budget })
    second = { ts: source.idOf(later.ts), iso: c2.snapshot.anchor.ts, author: c2.snapshot.anchor.author.display_name, apiCalls: c2.apiCalls, calls: source.calls.slice(before), tokens: c2.tokens.total }
  }

  // ---------------------------------------------------------------- attachment manifest
  // The thread's files, downloaded through the store (media cache, rate limiter) and
  // recorded as the gateway would across turns.
  const manifest = engine.createAttachmentManifest()
  const files = thread ? [thread.root, ...thread.replies].flatMap((m) => m.media.map((f) => ({ m, f }))) : []
  let turn = 0
  for (const { m, f } of files) {
    const media = await store.getMedia(f.artifact_id)
    if (!media.data) continue
    const check = engine.checkAttachment(manifest, { artifactId: f.artifact_id, contentHash: media.contentHash })
    if (check.match !== 'none') continue
    engine.recordAttachment(manifest, {
      artifactId: f.artifact_id,
      displayName: f.filename ?? f.artifact_id,
      mediaType: f.media_type,
      contentHash: media.contentHash,
      sourceMessageId: m.message_id,
      sourceThreadId: thread.thread_id,
      includedAtTurn: ++turn,
    })
  }
  const again = files.length > 0 ? await store.getMedia(files[0].f.artifact_id) : null
  const reupload = again ? engine.checkAttachment(manifest, { artifactId: 'F07REUPLOAD1', contentHash: again.contentHash }) : null
  const persisted = engine.serializeManifest(manifest)
  const restored = engine.loadManifestFromEntries([
    { type: 'message', message: { role: 'user', content: '...' } },
    { type: 'custom', customType: engine.ATTACHMENT_MANIFEST_KEY, data: persisted },
    { type: 'custom', customType: engine.ATTACHMENT_MANIFEST_KEY, data: '{"entries": {"F1": ' }, // a torn write
  ])

  const stats = store.stats()
  const summary = {
    platform: opts.platform,
    restart: { at: new Date(Number(restartTs) * 1000).toISOString(), payloadsReplayed: payloads, ignoredPayloads: stats.ignoredEvents },
    anchor: { ts: source.idOf(anchor.ts), iso: snapshot.anchor.ts, author: snapshot.anchor.author.display_name, inThread: Boolean(thread) },
    firstBuild: { apiCalls: ctx.apiCalls, calls: firstCalls, notes: ctx.notes },
    laterMessage: second,
    tokens: ctx.tokens,
    adjacent: {
      messages: snapshot.adjacent.length,
      omitted: snapshot.adjacent_omitted ?? 0,
      snippetsTruncated: snapshot.adjacent.filter((a) => a.snippet.endsWith('…')).length,
      withThreads: snapshot.adjacent.filter((a) => a.thread_activity).length,
    },
    thread: thread
      ? {
          threadId: thread.thread_id,
          totalReplies: thread.truncation.total_replies,
          included: thread.truncation.included_replies,
          omitted: thread.truncation.total_replies - thread.truncation.included_replies,
          omittedRange: thread.truncation.omitted_range_ts,
          repliesCut: ctx.telemetry.messagesTruncated,
          budgetTokens: ctx.telemetry.threadBudgetTokens,
          actualTokens: ctx.telemetry.actualTokens,
        }
      : null,
    manifest: {
      recorded: Object.keys(manifest.entries).length,
      fromThread: thread ? engine.getThreadAttachments(manifest, thread.thread_id).length : 0,
      secondDownloadApiCalls: again ? again.apiCalls : null,
      reupload: reupload && { match: reupload.match, of: reupload.record?.artifact_id ?? null },
      restoredAfterTornWrite: Object.keys(restored.entries).length,
    },
    stats: { calls: stats.calls, threadReplies: stats.caches.threadReplies, media: stats.caches.media, messagesHeld: stats.messages },
  }

  if (opts.json) {
    console.log(JSON.stringify(summary, null, 2))
    return
  }

  const bold = (s) => (process.stdout.isTTY ? `\x1b[1m${s}\x1b[0m` : s)
  const rule = (title) => console.log(`\n${bold(`── ${title} ${'─'.repeat(Math.max(0, 66 - title.length))}`)}`)
  const plural = (n, one, many) => `${n} ${n === 1 ? one : many}`

  rule(`prompt section for ${summary.anchor.ts} on ${opts.platform} (${summary.anchor.author}, ${summary.anchor.iso})`)
  console.log(ctx.promptSection)

  rule('the restart and the API calls')
  if (opts.platform === 'telegram') console.log(`the bot ran from the channel's start (the Bot API cannot read history); ${plural(payloads, 'update', 'updates')} replayed into the store`)
  else console.log(`gateway restarted at ${summary.restart.at}; ${plural(payloads, source.payloadName, `${source.payloadName}s`)} replayed into the store since`)
  console.log(`first buildContext: ${plural(ctx.apiCalls, 'API call', 'API calls')} (${firstCalls.join(', ') || 'none'})`)
  for (const n of ctx.notes) console.log(`  note: ${n}`)
  if (second) {
    console.log(`later message ${second.ts} (${second.author}, ${second.iso}): ${plural(second.apiCalls, 'API call', 'API calls')}${second.apiCalls === 0 ? ' - the store is warm from events' : ` (${second.calls.join(', ')})`}`)
  }

  rule('tokens (upper bound of the engine token estimator, see tokenEstimate)')
  console.log(`whole section   ${ctx.tokens.total}`)
  console.log(`  guidance      ${ctx.tokens.guidance}`)
  console.log(`  snapshot      ${ctx.tokens.snapshot}`)
  console.log(`  thread        ${ctx.tokens.thread}`)

  rule('what was truncated or omitted')
  console.log(`adjacent messages: ${summary.adjacent.messages} of the ${summary.adjacent.messages + summary.adjacent.omitted} nearest within the 1,500-token snapshot budget (${summary.adjacent.withThreads} start threads), ${summary.adjacent.snippetsTruncated} snippet(s) cut to ${engine.SNIPPET_MAX_CHARS} characters`)
  if (summary.thread) {
    const t = summary.thread
    console.log(`thread ${t.threadId}: ${t.totalReplies} replies so far, ${t.included} included, ${t.omitted} omitted`)
    if (t.omittedRange) console.log(`  omitted replies from ${t.omittedRange[0]} to ${t.omittedRange[1]} (oldest first, budget fills from the newest)`)
    console.log(`  ${plural(t.repliesCut, 'included reply', 'included replies')} cut to 300 tokens; root kept in full`)
    console.log(`  budget ${t.budgetTokens} tokens, used ${t.actualTokens}`)
  } else {
    console.log('no thread: the anchor is a top-level message without replies')
  }

  rule('attachment manifest')
  console.log(`${plural(summary.manifest.recorded, 'file', 'files')} from this thread downloaded through the store and recorded; getThreadAttachments finds ${summary.manifest.fromThread}`)
  if (again) console.log(`a second download of ${files[0].f.artifact_id} made ${plural(again.apiCalls, 'API call', 'API calls')} (media cache)`)
  if (summary.manifest.reupload) console.log(`re-upload of ${summary.manifest.reupload.of} under a new id: checkAttachment says "${summary.manifest.reupload.match}"`)
  console.log(`serialized ${persisted.length} bytes; after a torn newer write, loadManifestFromEntries restored ${summary.manifest.restoredAfterTornWrite} record(s)`)

  rule('store stats')
  console.log(`calls: ${JSON.stringify(stats.calls)}`)
  console.log(`thread replies cache: ${JSON.stringify(stats.caches.threadReplies)}`)
  console.log(`media cache: ${JSON.stringify(stats.caches.media)}`)
  console.log(`messages held: ${stats.messages} (about ${Math.round(stats.messageBytes / Math.max(1, stats.messages))} bytes each)`)
}

/**
 * How the bundled channel reaches the store on `platform`: the store's fetcher, the
 * payloads each message arrives as, the ids the platform gives, the calls made.
 */
function platformSource(platform, data, slack) {
  if (platform === 'discord') {
    const discord = new FakeDiscord(data)
    return {
      channelId: discord.channelId,
      payloadName: 'Gateway dispatch',
      fetcher: discord.fetcher(),
      calls: discord.calls,
      idOf: (ts) => discord.idOf(ts),
      at: (ts) => discord.at(ts),
      // On (re)connect the Gateway lists the guild's channels and active threads.
      connect: (store) => store.ingestDiscordEvent(discord.guildCreate()),
      ingest: (store, m) => discord.dispatchesFor(m).map((d) => store.ingestDiscordEvent(d)).length,
    }
  }
  if (platform === 'telegram') {
    const telegram = new FakeTelegram(data)
    return {
      channelId: telegram.channelId,
      payloadName: 'update',
      fetcher: telegram.fetcher(),
      calls: [],
      idOf: (ts) => telegram.idOf(ts),
      at: () => {},
      connect: () => {},
      ingest: (store, m) => telegram.updatesFor(m).map((u) => store.ingestTelegramUpdate(u)).length,
    }
  }
  return {
    channelId: data.channel.id,
    payloadName: 'Events API payload',
    fetcher: slack.fetcher(),
    calls: slack.calls,
    idOf: (ts) => ts,
    at: (ts) => slack.at(ts),
    connect: (store) => {
      store.setChannel({ id: data.channel.id, name: data.channel.name, platform: 'slack', workspaceId: slack.teamId })
      store.setUsers(Object.values(data.users).map((u) => ({ userId: u.id, displayName: u.profile?.display_name || u.real_name || u.name, isBot: Boolean(u.is_bot) })))
    },
    ingest: (store, m) => {
      store.ingestSlackEvent(slack.eventFor(m))
      return 1
    },
  }
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
