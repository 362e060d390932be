#!/usr/bin/env node
// One conversation on three platforms, in one run: the bundled Slack channel
// (fixtures/slack-channel.json, 324 channel messages and 25 threads) as Slack Events API
// payloads, Discord Gateway dispatches and Telegram Bot API updates (the deterministic
// conversion in demo/platforms.js). Copies of the channel under new channel ids make
// the volume. It reports:
//   - intake: messages per second through each platform's payload method (the raw
//     payload as the platform sends it, one call per payload: what a gateway does; the
//     same messages and reactions on each platform, Slack's as live events carry them),
//     and Slack's ingestMany over the neutral events as the reference lane; the ratio of
//     Slack's rate to each platform's (target: within 1.5x); and each platform's batch
//     method (500 payloads a call) against ingestMany;
//   - buildContext + prompt p50 / p99 for the same anchors on each platform (target:
//     the same p50 as Slack within 1.5x).
//
//   node bench/platforms.js [--copies <n>] [--builds <n>] [--json]
'use strict'
const path = require('node:path')
const { performance } = require('node:perf_hooks')
const engine = require(path.join(__dirname, '..'))
const { FakeSlack } = require('../demo/fake-slack')
const { FakeDiscord, FakeTelegram, timelineOf } = require('../demo/platforms')

const args = process.argv.slice(2)
const arg = (name, fallback) => {
  const i = args.indexOf(name)
  return i >= 0 ? Number(args[i + 1]) : fallback
}
const COPIES = arg('--copies', 40)
const BUILDS = arg('--builds', 400)
const JSON_OUT = args.includes('--json')
const RATIO_TARGET = 1.5

const data = require(path.join(__dirname, '..', 'fixtures', 'slack-channel.json'))
const timeline = timelineOf(data)

/** Each platform's payloads for one copy of the channel, renamed to copy `k`. */
function payloads(platform, k) {
  if (platform === 'slack') {
    // As live events carry them: a new message has no reply counts yet, and each
    // reaction is a reaction_added event of its own (as on the other two platforms).
    const slack = new FakeSlack(data)
    return timeline.flatMap((m) => {
      const { reactions, reply_count, reply_users, reply_users_count, latest_reply, ...live } = m
      void reply_count, reply_users, reply_users_count, latest_reply
      const p = slack.eventFor(live)
      p.event.channel = `C${k}`
      const out = [p]
      for (const r of reactions ?? []) {
        for (const u of r.users ?? []) {
          out.push({ ...p, event: { type: 'reaction_added', user: u, reaction: r.name, item: { type: 'message', channel: `C${k}`, ts: m.ts }, event_ts: m.ts } })
        }
      }
      return out
    })
  }
  if (platform === 'discord') {
    const discord = new FakeDiscord(data)
    const suffix = String(k).padStart(4, '0')
    const rename = (id) => (id === discord.channelId ? `11200000000000${suffix}` : id)
    return timeline.flatMap((m) =>
      discord.dispatchesFor(m).map((d) => {
        const x = structuredClone(d)
        if (x.d.channel_id) x.d.channel_id = rename(x.d.channel_id)
        if (x.d.parent_id) x.d.parent_id = rename(x.d.parent_id)
        return x
      }),
    )
  }
  const telegram = new FakeTelegram(data)
  return timeline.flatMap((m) =>
    telegram.updatesFor(m).map((u) => {
      const x = structuredClone(u)
      const chat = (x.message ?? x.message_reaction).chat
      chat.id = -1_000_000_000 - k
      if (x.message?.reply_to_message) x.message.reply_to_message.chat = chat
      return x
    }),
  )
}

const METHOD = { slack: 'ingestSlackEvent', discord: 'ingestDiscordEvent', telegram: 'ingestTelegramUpdate' }

function intake(platform) {
  const sets = Array.from({ length: COPIES }, (_, k) => payloads(platform, k))
  const warm = new engine.ChannelStore({ clock: () => 1_775_900_000_000 })
  for (const p of payloads(platform, 9999)) warm[METHOD[platform]](p)
  const store = new engine.ChannelStore({ clock: () => 1_775_900_000_000, windowSize: 1000 })
  const t0 = performance.now()
  let n = 0
  for (const set of sets) for (const p of set) n += store[METHOD[platform]](p) > 0 ? 1 : 0
  const ms = performance.now() - t0
  const messages = store.stats().messages
  const count = sets.reduce((a, s) => a + s.length, 0)
  return { platform, payloads: count, applied: n, messages, ms, msgsPerSec: (timeline.length * COPIES) / (ms / 1000), payloadsPerSec: count / (ms / 1000) }
}

const BATCH = { discord: 'ingestDiscordEvents', telegram: 'ingestTelegramUpdates' }
const BATCH_SIZE = 500

/** The same payloads through the platform's batch method, 500 per call. */
function batchIntake(platform) {
  const sets = Array.from({ length: COPIES }, (_, k) => payloads(platform, k))
  const warm = new engine.ChannelStore({ clock: () => 1_775_900_000_000 })
  warm[BATCH[platform]](payloads(platform, 9999))
  const store = new engine.ChannelStore({ clock: () => 1_775_900_000_000 })
  const t0 = performance.now()
  for (const set of sets) for (let i = 0; i < set.length; i += BATCH_SIZE) store[BATCH[platform]](set.slice(i, i + BATCH_SIZE))
  const ms = performance.now() - t0
  return { platform, msgsPerSec: (timeline.length * COPIES) / (ms / 1000) }
}

function neutralIngestMany() {
  const events = (k) =>
    timeline.map((m) => ({
      type: 'message',
      channelId: `N${k}`,
      message: { ts: m.ts, author: { userId: m.user ?? m.bot_id, displayName: m.username ?? m.user ?? 'bot' }, text: m.text ?? '', threadId: m.thread_ts && m.thread_ts !== m.ts ? m.thread_ts : null },
    }))
  const sets = Array.from({ length: COPIES }, (_, k) => events(k))
  const store = new engine.ChannelStore({ clock: () => 1_775_900_000_000 })
  store.ingestMany(events(9999))
  const t0 = performance.now()
  for (const set of sets) store.ingestMany(set)
  const ms = performance.now() - t0
  return { msgsPerSec: (timeline.length * COPIES) / (ms / 1000) }
}

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]
}

async function builds(platform) {
  const store = new engine.ChannelStore({ clock: () => 1_775_900_000_000 })
  for (const p of payloads(platform, 0)) store[METHOD[platform]](p)
  // Copy 0's channel on each platform (see `payloads`).
  const channel = { slack: 'C0', discord: '112000000000000000', telegram: String(-1_000_000_000) }[platform]
  const discord = new FakeDiscord(data)
  const telegram = new FakeTelegram(data)
  const idOf = { slack: (ts) => ts, discord: (ts) => discord.idOf(ts), telegram: (ts) => telegram.idOf(ts) }[platform]
  // Anchors: every 8th message of the timeline, in and out of threads.
  const anchors = timeline.filter((_, i) => i % 8 === 0)
  const opts = (m) => ({ adjacent: 20, threadId: m.thread_ts && m.thread_ts !== m.ts ? idOf(m.thread_ts) : undefined })
  for (const m of anchors.slice(0, 20)) (await store.buildContext(channel, idOf(m.ts), opts(m))).promptSection
  const times = []
  let tokens = 0
  for (let i = 0; i < BUILDS; i++) {
    const m = anchors[i % anchors.length]
    const t0 = performance.now()
    const ctx = await store.buildContext(channel, idOf(m.ts), opts(m))
    const prompt = ctx.promptSection
    times.push((performance.now() - t0) * 1000)
    tokens += ctx.tokens.total
    if (prompt.length === 0 || ctx.apiCalls !== 0) throw new Error(`${platform}: build of ${m.ts} made ${ctx.apiCalls} calls`)
  }
  times.sort((a, b) => a - b)
  return { platform, p50: percentile(times, 50), p99: percentile(times, 99), meanTokens: Math.round(tokens / BUILDS) }
}

async function main() {
  const intakes = ['slack', 'discord', 'telegram'].map(intake)
  const many = neutralIngestMany()
  const batches = ['discord', 'telegram'].map(batchIntake)
  const built = []
  for (const p of ['slack', 'discord', 'telegram']) built.push(await builds(p))
  const slackIn = intakes[0]
  const slackBuild = built[0]
  const result = {
    messagesPerCopy: timeline.length,
    copies: COPIES,
    intake: intakes.map((r) => ({ ...r, vsSlack: slackIn.msgsPerSec / r.msgsPerSec, met: slackIn.msgsPerSec / r.msgsPerSec <= RATIO_TARGET })),
    ingestManyNeutral: many,
    batch: batches.map((b) => ({ ...b, vsIngestMany: many.msgsPerSec / b.msgsPerSec })),
    build: built.map((b) => ({ ...b, vsSlack: b.p50 / slackBuild.p50, met: b.p50 / slackBuild.p50 <= RATIO_TARGET })),
  }
  if (JSON_OUT) {
    console.log(JSON.stringify(result, null, 2))
    return
  }
  const f = (n) => Math.round(n).toLocaleString('en-US')
  console.log(`one channel (${timeline.length} messages, ${Object.keys(data.replies).length} threads) x ${COPIES} copies, per platform`)
  for (const r of result.intake) {
    console.log(`intake   ${r.platform.padEnd(8)} ${f(r.msgsPerSec).padStart(9)} msgs/s  ${f(r.payloadsPerSec).padStart(9)} payloads/s  (${f(r.payloads)} payloads, ${f(r.messages)} messages held)  Slack/this ${r.vsSlack.toFixed(2)}x  target <= ${RATIO_TARGET}x: ${r.met ? 'met' : 'missed'}`)
  }
  console.log(`         ingestMany over neutral events (Slack's batch lane, for reference) ${f(many.msgsPerSec)} msgs/s`)
  for (const b of result.batch) {
    console.log(`batch    ${b.platform.padEnd(8)} ${f(b.msgsPerSec).padStart(9)} msgs/s through ${BATCH[b.platform]} (${BATCH_SIZE} payloads a call)  ingestMany/this ${b.vsIngestMany.toFixed(2)}x`)
  }
  for (const b of result.build) {
    console.log(`build    ${b.platform.padEnd(8)} buildContext+prompt p50 ${b.p50.toFixed(1)} µs  p99 ${b.p99.toFixed(1)} µs  mean ${f(b.meanTokens)} tokens  this/Slack ${b.vsSlack.toFixed(2)}x  target <= ${RATIO_TARGET}x: ${b.met ? 'met' : 'missed'}`)
  }
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
