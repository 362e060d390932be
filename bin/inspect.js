// `context-engine inspect <input>`: what the model would get for one message of your own
// channel, shown so a person can read it.
//
// Input: a Slack workspace export (the folder with channels.json, users.json and
// <channel>/<date>.json), a file of Web API conversations.history / conversations.replies
// bodies (a JSON array or one body per line), or a JSONL of Events API payloads, Discord
// Gateway dispatches or Telegram Bot API updates. The
// messages go into a ChannelStore, whose fetcher only records what it is asked for: the
// report lists the calls a gateway would make, and inspect makes none.
'use strict'
const { existsSync, readdirSync, readFileSync, statSync, writeFileSync } = require('node:fs')
const { join } = require('node:path')
const { loadPlatformPayloads, platformStore, platformCallText } = require('./inspect-platforms.js')

const USAGE = `usage: context-engine inspect <input> [options]

<input>  a Slack export folder (channels.json, users.json, <channel>/<date>.json),
         a file of Web API conversations.history/replies bodies (JSON array or JSONL),
         or a JSONL file of Events API payloads, Discord Gateway dispatches
         ({ t, d }) or Telegram Bot API updates

options:
  --channel <name|id>   the channel (default: the only one, or the busiest)
  --anchor <id|latest>  the message being answered: a Slack ts, a Discord or Telegram
                        message id (default: latest)
  --budget <tokens>     the thread budget (default 8000)
  --adjacent <n>        adjacent messages in the snapshot (default 20)
  --snapshot-budget <tokens>  the snapshot budget (default 1500)
  --format <json|compact>     how the prompt shows the snapshot and thread (default json)
  --dm                  the direct-message variant of the guidance
  --tool-names <api|dotted>  how the guidance names the tools (default api)
  --real                also count each section with @anthropic-ai/tokenizer (Claude's
                        reference tokenizer; install it to use this)
  --prompt              also print the prompt section itself
  --json                print the result as JSON instead
  --html <file>         also write a self-contained HTML page of the report`

/** A user's mistake: one line, exit code 2, no stack trace. */
class UsageError extends Error {}

function parseArgs(argv) {
  const o = { input: null, channel: null, anchor: 'latest', budget: 8000, adjacent: 20, snapshotBudget: 1500, format: 'json', dm: false, toolNames: 'api', prompt: false, json: false, html: null, real: false }
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]
    const value = () => {
      if (i + 1 >= argv.length) throw new UsageError(`${arg} needs a value`)
      return argv[++i]
    }
    const count = (raw) => {
      const n = Number(raw)
      if (!/^\d+$/.test(raw) || !Number.isSafeInteger(n)) throw new UsageError(`${arg} expects a non-negative whole number, got ${JSON.stringify(raw)}`)
      return n
    }
    if (arg === '--channel') o.channel = value()
    else if (arg === '--anchor') o.anchor = value()
    else if (arg === '--budget') o.budget = count(value())
    else if (arg === '--adjacent') o.adjacent = count(value())
    else if (arg === '--snapshot-budget') o.snapshotBudget = count(value())
    else if (arg === '--format') {
      o.format = value()
      if (o.format !== 'json' && o.format !== 'compact') throw new UsageError(`--format expects json or compact, got ${JSON.stringify(o.format)}`)
    }
    else if (arg === '--dm') o.dm = true
    else if (arg === '--tool-names') {
      o.toolNames = value()
      if (o.toolNames !== 'api' && o.toolNames !== 'dotted') throw new UsageError(`--tool-names expects api or dotted, got ${JSON.stringify(o.toolNames)}`)
    } else if (arg === '--prompt') o.prompt = true
    else if (arg === '--real') o.real = true
    else if (arg === '--json') o.json = true
    else if (arg === '--html') o.html = value()
    else if (arg.startsWith('-')) throw new UsageError(`unknown option ${arg} (see context-engine inspect --help)`)
    else if (o.input === null) o.input = arg
    else throw new UsageError(`one input only, got ${JSON.stringify(o.input)} and ${JSON.stringify(arg)}`)
  }
  if (o.input === null) throw new UsageError('an input is required (see context-engine inspect --help)')
  return o
}

function readJson(file, what) {
  try {
    return JSON.parse(readFileSync(file, 'utf8'))
  } catch (err) {
    throw new UsageError(`${file}: not ${what} (${err.message})`)
  }
}

/** `countTokens` of Claude's reference tokenizer, or a usage error saying how to get it. */
function referenceCounter() {
  try {
    return require(require.resolve('@anthropic-ai/tokenizer', { paths: [process.cwd(), __dirname] })).countTokens
  } catch {
    throw new UsageError('--real needs @anthropic-ai/tokenizer: npm install --save-dev @anthropic-ai/tokenizer')
  }
}

/** The text of a prompt section's document (between its tags; '' when absent). */
function documentText(prompt, name) {
  const open = prompt.indexOf(`<${name} `)
  const close = prompt.indexOf(`</${name}>`)
  return open < 0 || close < 0 ? '' : prompt.slice(prompt.indexOf('\n', open) + 1, close - 1)
}

/**
 * Each budget against what it holds: the bound the engine counted (what the budget
 * holds it to), the central estimate, and with `count` the reference tokenizer's count.
 */
function budgetUse(engine, ctx, o, count) {
  const use = (budget, bound, text) => ({
    budget,
    bound,
    estimate: Math.round(engine.tokenEstimate(text).estimate),
    real: count ? count(text) : null,
  })
  return {
    snapshot: use(o.snapshotBudget, ctx.tokens.snapshot, documentText(ctx.promptSection, 'channel_snapshot')),
    thread: ctx.thread ? use(o.budget, ctx.tokens.thread, documentText(ctx.promptSection, 'thread_context')) : null,
    section: use(null, ctx.tokens.total, ctx.promptSection),
  }
}

const displayName = (u) => u.profile?.display_name || u.profile?.real_name || u.real_name || u.name || u.id

/** A Slack export folder: every channel's messages, threads told apart by thread_ts. */
function loadExport(dir) {
  if (!existsSync(join(dir, 'channels.json'))) throw new UsageError(`${dir}: not a Slack export (it has no channels.json; expected channels.json, users.json and <channel>/<date>.json)`)
  const channels = readJson(join(dir, 'channels.json'), 'a Slack export channels.json')
  if (!Array.isArray(channels)) throw new UsageError(`${join(dir, 'channels.json')}: expected an array of channels`)
  const users = existsSync(join(dir, 'users.json')) ? readJson(join(dir, 'users.json'), 'a Slack export users.json') : []
  const out = []
  for (const c of channels) {
    if (!c || typeof c.id !== 'string' || typeof c.name !== 'string') continue
    const folder = join(dir, c.name)
    if (!existsSync(folder) || !statSync(folder).isDirectory()) continue
    const messages = []
    for (const day of readdirSync(folder).filter((f) => /^\d{4}-\d{2}-\d{2}\.json$/.test(f)).sort()) {
      const list = readJson(join(folder, day), 'a day file of a Slack export')
      if (Array.isArray(list)) messages.push(...list.filter((m) => m && typeof m.ts === 'string'))
    }
    out.push({ id: c.id, name: c.name, messages })
  }
  if (out.length === 0) throw new UsageError(`${dir}: a Slack export without any channel folder of <date>.json files`)
  return { kind: 'Slack export', channels: out, users: Array.isArray(users) ? users : [], events: [] }
}

/** The JSON values of a file: a JSON array, one value, or one value per line. */
function jsonValues(file) {
  const text = readFileSync(file, 'utf8')
  try {
    const v = JSON.parse(text)
    return Array.isArray(v) ? v : [v]
  } catch {
    return text
      .split('\n')
      .map((line, i) => [line.trim(), i + 1])
      .filter(([line]) => line !== '')
      .map(([line, n]) => {
        try {
          return JSON.parse(line)
        } catch (err) {
          throw new UsageError(`${file}:${n}: not JSON (${err.message})`)
        }
      })
  }
}

function loadFile(file, channelOption) {
  const values = jsonValues(file)
  const platform = loadPlatformPayloads(values)
  if (platform) return platform
  const isEvent = (v) => v && typeof v === 'object' && (v.type === 'event_callback' || (v.event && typeof v.event === 'object'))
  const isBody = (v) => v && typeof v === 'object' && Array.isArray(v.messages)
  if (values.length > 0 && values.every(isEvent)) {
    const counts = new Map()
    for (const p of values) {
      const ch = p.event?.channel ?? p.event?.item?.channel
      if (typeof ch === 'string') counts.set(ch, (counts.get(ch) || 0) + 1)
    }
    const channels = [...counts.keys()].map((id) => ({ id, name: id, messages: [] }))
    return { kind: 'Events API payloads', channels, users: [], events: values }
  }
  if (values.length > 0 && values.every(isBody)) {
    if (!channelOption) throw new UsageError(`${file}: Web API bodies do not name their channel; pass --channel <id>`)
    const messages = values.flatMap((b) => b.messages.filter((m) => m && typeof m.ts === 'string'))
    return { kind: 'Web API bodies', channels: [{ id: channelOption, name: channelOption, messages }], users: [], events: [] }
  }
  throw new UsageError(`${file}: expected Web API conversations.history/replies bodies ({ ok, messages }), Events API payloads, Discord Gateway dispatches ({ t, d }) or Telegram updates ({ update_id, ... }), one per line; found none of them`)
}

function load(input, channelOption) {
  if (!existsSync(input)) throw new UsageError(`${input}: no such file or folder`)
  return statSync(input).isDirectory() ? loadExport(input) : loadFile(input, channelOption)
}

function pickChannel(data, option) {
  if (option) {
    const c = data.channels.find((ch) => ch.id === option || ch.name === option || `#${ch.name}` === option)
    if (!c) throw new UsageError(`no channel ${JSON.stringify(option)} in the input (it has ${data.channels.map((ch) => ch.name).join(', ')})`)
    return c
  }
  if (data.channels.length === 1) return data.channels[0]
  const busiest = (ch) => ch.messages.length + data.events.filter((p) => p.event?.channel === ch.id).length
  return data.channels.reduce((a, b) => (busiest(b) > busiest(a) ? b : a))
}

/** Loads the channel into a store whose fetcher records the calls and answers empty. */
function storeFor(engine, data, channel, nowMs) {
  const calls = []
  const record = (fetch) => async (request) => {
    calls.push({ fetch, request })
    return fetch === 'fetchMedia' ? new Uint8Array(0) : { ok: true, messages: [], has_more: false }
  }
  const fetcher = Object.fromEntries(['fetchThread', 'fetchHistory', 'fetchMessages', 'fetchMedia'].map((f) => [f, record(f)]))
  const messages = channel.messages.length
  const store = new engine.ChannelStore({ clock: () => nowMs, fetcher, windowSize: Math.max(1000, messages), threadReplies: { max: Math.max(500, messages) } })
  store.setChannel({ id: channel.id, name: channel.name, platform: 'slack' })
  if (data.users.length > 0) {
    store.setUsers(data.users.filter((u) => u && typeof u.id === 'string').map((u) => ({ userId: u.id, displayName: displayName(u), isBot: Boolean(u.is_bot) })))
  }
  const isReply = (m) => typeof m.thread_ts === 'string' && m.thread_ts !== m.ts
  const top = channel.messages.filter((m) => !isReply(m) || m.subtype === 'thread_broadcast')
  if (top.length > 0) store.ingestSlackResponse(channel.id, { ok: true, messages: [...top].sort((a, b) => Number(b.ts) - Number(a.ts)), has_more: false })
  const threads = new Map()
  for (const m of channel.messages.filter(isReply)) {
    if (!threads.has(m.thread_ts)) threads.set(m.thread_ts, [])
    threads.get(m.thread_ts).push(m)
  }
  for (const [threadTs, replies] of threads) {
    const root = channel.messages.find((m) => m.ts === threadTs)
    if (!root) continue
    const sorted = [...replies].sort((a, b) => Number(a.ts) - Number(b.ts))
    store.ingestSlackResponse(channel.id, { ok: true, messages: [root, ...sorted], has_more: false }, { threadId: threadTs })
  }
  for (const p of data.events) store.ingestSlackEvent(p)
  return { store, calls }
}

function allMessages(data, channel) {
  const fromEvents = data.events
    .map((p) => p.event ?? p)
    .filter((e) => e && e.type === 'message' && e.channel === channel.id)
    .map((e) => (e.subtype === 'message_changed' ? e.message : e))
    .filter((m) => m && typeof m.ts === 'string' && m.subtype !== 'message_deleted')
  return [...channel.messages, ...fromEvents]
}

/** The buildContext options the command line asks for. */
function buildOptions(o, threadId) {
  return {
    budgetTokens: o.budget,
    adjacent: o.adjacent,
    snapshotBudgetTokens: o.snapshotBudget,
    format: o.format,
    directMessage: o.dm,
    toolNames: o.toolNames,
    ...(threadId ? { threadId } : {}),
  }
}

/** Discord or Telegram payloads: the newest message (or `--anchor`) of the channel. */
async function inspectPlatform(engine, o, data, channel) {
  if (channel.messages.length === 0) throw new UsageError(`channel ${channel.name} has no messages in the input`)
  const newest = channel.messages.reduce((a, b) => (b.ms > a.ms ? b : a))
  const anchor = o.anchor === 'latest' ? newest : channel.messages.find((m) => m.id === o.anchor)
  if (!anchor) throw new UsageError(`--anchor ${o.anchor}: no message with that id in ${channel.name} (expected a message id such as ${newest.id}, or latest)`)
  const { store, calls } = platformStore(engine, data, Math.round(anchor.ms) + 1000)
  const ctx = await store.buildContext(channel.id, anchor.id, buildOptions(o))
  return report(engine, o, data, channel, channel.messages.length, anchor.id, ctx, calls)
}

async function inspect(engine, o) {
  const data = load(o.input, o.channel)
  const channel = pickChannel(data, o.channel)
  if (data.platform) return inspectPlatform(engine, o, data, channel)
  const messages = allMessages(data, channel)
  if (messages.length === 0) throw new UsageError(`channel ${channel.name} has no messages in the input`)
  const newest = messages.reduce((a, b) => (Number(b.ts) > Number(a.ts) ? b : a))
  const anchor = o.anchor === 'latest' ? newest : messages.find((m) => m.ts === o.anchor)
  if (!anchor) throw new UsageError(`--anchor ${o.anchor}: no message with that ts in ${channel.name} (expected a Slack ts such as ${newest.ts}, or latest)`)
  const nowMs = Math.round(Number(anchor.ts) * 1000) + 1000
  const { store, calls } = storeFor(engine, data, channel, nowMs)
  const threadId = typeof anchor.thread_ts === 'string' ? anchor.thread_ts : undefined
  const ctx = await store.buildContext(channel.id, anchor.ts, buildOptions(o, threadId))
  return report(engine, o, data, channel, messages.length, anchor.ts, ctx, calls)
}

/** What inspect reports of one build. */
function report(engine, o, data, channel, messageCount, anchorId, ctx, calls) {
  const thread = ctx.thread
  const count = o.real ? referenceCounter() : null
  return {
    input: { path: o.input, kind: data.kind },
    channel: { id: channel.id, name: ctx.snapshot.channel.name, platform: ctx.snapshot.channel.platform, messages: messageCount },
    anchor: { ts: anchorId, author: ctx.snapshot.anchor.author.display_name, threadId: thread ? thread.thread_id : null },
    budget: o.budget,
    tokens: ctx.tokens,
    snapshot: { adjacent: ctx.snapshot.adjacent.length, adjacentAsked: o.adjacent, adjacentOmitted: ctx.snapshot.adjacent_omitted ?? 0, budget: o.snapshotBudget },
    format: o.format,
    thread: thread
      ? {
          totalReplies: thread.truncation.total_replies,
          includedReplies: thread.truncation.included_replies,
          strategy: thread.truncation.strategy,
          omittedRange: thread.truncation.omitted_range_ts,
          repliesCut: thread.replies.filter((r) => r.is_truncated).length,
          // What the thread shown counts, in the form shown.
          actualTokens: ctx.tokens.thread,
        }
      : null,
    calls,
    notes: ctx.notes,
    budgets: budgetUse(engine, ctx, o, count),
    promptSection: ctx.promptSection,
  }
}

const fmt = (n) => n.toLocaleString('en-US')

function bar(used, of, width = 32) {
  const full = of > 0 ? Math.min(width, Math.round((used / of) * width)) : 0
  return '█'.repeat(full) + '░'.repeat(width - full)
}

function callText(c) {
  if (c.platform) return platformCallText(c)
  const r = c.request
  if (c.fetch === 'fetchThread') return `conversations.replies for thread ${r.threadId}`
  if (c.fetch === 'fetchHistory') return `conversations.history for ${r.channelId}`
  if (c.fetch === 'fetchMessages') return `conversations.history for message${r.messageIds.length === 1 ? '' : 's'} ${r.messageIds.join(', ')}`
  return `files.download of ${r.artifactId}`
}

function textReport(r, withPrompt) {
  const t = r.tokens
  const lines = []
  lines.push(`#${r.channel.name} (${r.channel.id}), ${fmt(r.channel.messages)} messages from a ${r.input.kind}`)
  lines.push(`anchor ${r.anchor.ts} by ${r.anchor.author}${r.anchor.threadId ? ` in thread ${r.anchor.threadId}` : ''}`)
  lines.push('')
  lines.push(`prompt section: ${fmt(t.total)} tokens (upper bound of the engine's token estimator)`)
  const share = (n) => `${Math.round((n / Math.max(1, t.total)) * 100)}%`.padStart(4)
  lines.push(`  guidance  ${bar(t.guidance, t.total)} ${fmt(t.guidance).padStart(7)}  ${share(t.guidance)} of the section`)
  lines.push(`  snapshot  ${bar(t.snapshot, t.total)} ${fmt(t.snapshot).padStart(7)}  ${share(t.snapshot)} of the section, ${r.snapshot.adjacent} of ${r.snapshot.adjacentAsked} adjacent messages${r.snapshot.adjacentOmitted > 0 ? ` (the ${fmt(r.snapshot.budget)}-token snapshot budget left ${r.snapshot.adjacentOmitted} out)` : ''}`)
  if (r.thread) {
    const th = r.thread
    lines.push(`  thread    ${bar(th.actualTokens, r.budget)} ${fmt(th.actualTokens).padStart(7)}  of the ${fmt(r.budget)}-token thread budget (${Math.round((th.actualTokens / Math.max(1, r.budget)) * 100)}%)`)
    lines.push('')
    const left = th.totalReplies - th.includedReplies
    lines.push(`thread: ${th.includedReplies} of ${th.totalReplies} replies included${left > 0 ? `, ${left} left out (${th.strategy}: the newest that fit the budget are kept)` : ''}`)
    if (th.omittedRange) lines.push(`  omitted range: ${th.omittedRange[0]} to ${th.omittedRange[1]}`)
    if (th.repliesCut > 0) lines.push(`  ${th.repliesCut} included repl${th.repliesCut === 1 ? 'y' : 'ies'} cut to 300 tokens`)
  } else {
    lines.push('  thread    none (the anchor is not in a thread and has no replies)')
  }
  if (t.quotedReply > 0) lines.push(`  quoted reply ${fmt(t.quotedReply)} tokens: the message the anchor replies to, labelled apart`)
  lines.push('')
  lines.push(`budgets, counted as the engine does (bound: what the budget holds; estimate: central)${r.budgets.section.real === null ? '; --real adds the reference tokenizer' : ''}:`)
  const pctOf = (n, of) => `${Math.round((n / Math.max(1, of)) * 100)}%`
  for (const [label, b] of [['snapshot', r.budgets.snapshot], ['thread', r.budgets.thread]]) {
    if (b === null) continue
    const real = b.real === null ? '' : `, real ${fmt(b.real)} (${pctOf(b.real, b.budget)} used)`
    lines.push(`  ${label.padEnd(9)} ${fmt(b.budget).padStart(7)}: bound ${fmt(b.bound)} (${pctOf(b.bound, b.budget)}), estimate ${fmt(b.estimate)}${real}`)
  }
  const s = r.budgets.section
  lines.push(`  section   whole: bound ${fmt(s.bound)}, estimate ${fmt(s.estimate)}${s.real === null ? '' : `, real ${fmt(s.real)}`}`)
  lines.push('')
  lines.push(r.calls.length === 0 ? 'calls a gateway would make: none (the input holds everything)' : `calls a gateway would make (${r.calls.length}):`)
  for (const c of r.calls) lines.push(`  ${callText(c)}`)
  if (r.notes.length > 0) {
    lines.push('notes:')
    for (const n of r.notes) lines.push(`  ${n}`)
  }
  if (withPrompt) lines.push('', '--- prompt section ---', r.promptSection)
  else lines.push('', '(--prompt prints the prompt section itself)')
  return lines.join('\n')
}

const escapeHtml = (s) => String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c])

function htmlBar(label, used, of, detail) {
  const pct = of > 0 ? Math.min(100, (used / of) * 100) : 0
  return `<div class="row"><span class="label">${escapeHtml(label)}</span><span class="bar" role="meter" aria-valuenow="${used}" aria-valuemax="${of}"><span class="fill" style="width:${pct.toFixed(1)}%"></span></span><span class="num">${escapeHtml(fmt(used))}</span><span class="detail">${escapeHtml(detail)}</span></div>`
}

function htmlReport(r) {
  const t = r.tokens
  const th = r.thread
  const rows = [
    htmlBar('guidance', t.guidance, t.total, 'of the section'),
    htmlBar('snapshot', t.snapshot, t.total, `of the section; ${r.snapshot.adjacent} of ${r.snapshot.adjacentAsked} adjacent messages`),
    th ? htmlBar('thread', th.actualTokens, r.budget, `of the ${fmt(r.budget)}-token thread budget`) : '<div class="row"><span class="label">thread</span><span class="detail">none</span></div>',
  ]
  const facts = []
  if (th) {
    facts.push(`${th.includedReplies} of ${th.totalReplies} replies included (${th.strategy})`)
    if (th.omittedRange) facts.push(`omitted range: ${th.omittedRange[0]} to ${th.omittedRange[1]}`)
    if (th.repliesCut > 0) facts.push(`${th.repliesCut} included replies cut to 300 tokens`)
  }
  facts.push(r.calls.length === 0 ? 'calls a gateway would make: none' : `calls a gateway would make: ${r.calls.map(callText).join('; ')}`)
  for (const n of r.notes) facts.push(`note: ${n}`)
  const parts = r.promptSection.split(/(?=<channel_snapshot format="json">|<thread_context format="json">)/)
  const titles = ['guidance', 'channel snapshot', 'thread context']
  const sections = parts.map((p, i) => `<details><summary>${escapeHtml(titles[i] ?? `part ${i + 1}`)}</summary><pre>${escapeHtml(p)}</pre></details>`).join('\n')
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>context-engine inspect: #${escapeHtml(r.channel.name)} ${escapeHtml(r.anchor.ts)}</title>
<style>
body{font:14px/1.5 system-ui,sans-serif;margin:2rem;max-width:60rem;color:#1b1f24}
h1{font-size:1.2rem}.row{display:flex;gap:.75rem;align-items:center;margin:.3rem 0}
.label{width:6rem}.bar{flex:0 0 20rem;height:.9rem;background:#e6e8eb;border-radius:3px;overflow:hidden}
.fill{display:block;height:100%;background:#3b6fd4}.num{width:5rem;text-align:right;font-variant-numeric:tabular-nums}
.detail{color:#57606a}pre{white-space:pre-wrap;word-break:break-word;background:#f6f8fa;padding:.75rem;border-radius:4px}
</style></head>
<body>
<h1 id="title">#${escapeHtml(r.channel.name)} (${escapeHtml(r.channel.id)}): anchor ${escapeHtml(r.anchor.ts)} by ${escapeHtml(r.anchor.author)}</h1>
<p>${escapeHtml(fmt(t.total))} tokens in the prompt section, from a ${escapeHtml(r.input.kind)} of ${escapeHtml(fmt(r.channel.messages))} messages.</p>
<section id="budget">
${rows.join('\n')}
</section>
<ul id="facts">${facts.map((f) => `<li>${escapeHtml(f)}</li>`).join('')}</ul>
<section id="prompt">
${sections}
</section>
</body></html>
`
}

async function run(argv, engine) {
  if (argv.includes('--help') || argv.includes('-h')) {
    console.log(USAGE)
    return 0
  }
  try {
    const o = parseArgs(argv)
    const report = await inspect(engine, o)
    if (o.html) writeFileSync(o.html, htmlReport(report))
    if (o.json) {
      const { promptSection, ...rest } = report
      console.log(JSON.stringify(o.prompt ? report : rest, null, 2))
    } else {
      console.log(textReport(report, o.prompt))
      if (o.html) console.log(`wrote ${o.html}`)
    }
    return 0
  } catch (err) {
    if (err instanceof UsageError) {
      console.error(`context-engine inspect: ${err.message}`)
      return 2
    }
    throw err
  }
}

module.exports = { run, inspect, parseArgs, USAGE }
