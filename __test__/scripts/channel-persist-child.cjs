// A gateway process with a saved ChannelStore, for persist.spec.ts. Prints one JSON line
// per step on stdout.
//
//   node channel-persist-child.cjs first <file> <nowMs>   ingest events, build context (which
//       fetches the channel's history and the thread), flush, print, then wait to be killed
//   node channel-persist-child.cjs again <file> <nowMs>   open the same file, build the same
//       context, print the fetcher calls it made and the prompt section, close
//   node channel-persist-child.cjs writer <file> <channel> <count>   ingest <count> messages
//       into <channel> in batches of 100, flush, exit (two at once share one file)
'use strict'
const { ChannelStore } = require('@openclaw/context-engine')

const [mode, file, arg, countArg] = process.argv.slice(2)
const C = 'C07ROLLOUT'
const T0 = 1775835600
const ts = (s) => `${T0 + s}.000100`
const say = (o) => process.stdout.write(`${JSON.stringify(o)}\n`)

/** A workspace as conversations.history / conversations.replies return it. */
function fetcher(calls) {
  const message = (s, text, thread, extra = {}) => ({
    type: 'message',
    ts: ts(s),
    user: `U${s % 3}`,
    text,
    user_profile: { display_name: ['Sam', 'Priya', 'Jonas'][s % 3] },
    ...(thread === undefined ? {} : { thread_ts: ts(thread) }),
    ...extra,
  })
  return {
    async fetchHistory() {
      calls.push('conversations.history')
      const messages = Array.from({ length: 40 }, (_, i) => {
        const s = 39 - i
        return s === 20 ? message(s, 'Rollout plan for the checkout service', s, { reply_count: 6 }) : message(s, `history ${s} about the deploy`)
      })
      return { ok: true, messages, has_more: false }
    },
    async fetchThread(request) {
      calls.push('conversations.replies')
      const root = Number(String(request.threadId).split('.')[0]) - T0
      const replies = Array.from({ length: 6 }, (_, i) => message(root + 100 + i, `step ${i}: canary at ${10 * (i + 1)}%`, root))
      return { ok: true, messages: [message(root, 'Rollout plan for the checkout service', root, { reply_count: 6 }), ...replies], has_more: false }
    },
  }
}

function open(now, calls) {
  return new ChannelStore({ clock: () => now, fetcher: fetcher(calls), persist: { path: file } })
}

async function build(store) {
  // The newest reply of the thread is the message being answered.
  const ctx = await store.buildContext(C, ts(205), { adjacent: 20 })
  return ctx.promptSection
}

async function main() {
  if (mode === 'first') {
    const calls = []
    const store = open(Number(arg), calls)
    store.setChannel({ id: C, name: 'rollout', platform: 'slack' })
    const event = (e) => store.ingestSlackEvent({ type: 'event_callback', team_id: 'T1', event: { channel: C, ...e } })
    event({ type: 'message', ts: ts(50), user: 'U7', text: 'Who owns the canary dashboard?', user_profile: { display_name: 'Aiko' } })
    event({ type: 'message', ts: ts(51), user: 'U8', text: 'to be deleted', user_profile: { display_name: 'Omar' } })
    event({ type: 'message', subtype: 'message_deleted', deleted_ts: ts(51), ts: ts(52) })
    event({ type: 'reaction_added', user: 'U1', reaction: 'eyes', item: { type: 'message', channel: C, ts: ts(50) } })
    event({ type: 'message', ts: ts(205), thread_ts: ts(20), user: 'U7', text: 'Is step 5 safe to start?', user_profile: { display_name: 'Aiko' } })
    const prompt = await build(store)
    say({ built: { calls, prompt } })
    const flushed = await store.flush()
    say({ flushed })
    // Stay up, as a gateway would, until killed.
    setInterval(() => {}, 1 << 30)
  } else if (mode === 'again') {
    const calls = []
    const store = open(Number(arg), calls)
    const loaded = store.stats().persist
    const prompt = await build(store)
    await store.close()
    say({ again: { calls, prompt, loaded } })
  } else if (mode === 'writer') {
    const store = new ChannelStore({ persist: { path: file } })
    const count = Number(countArg)
    for (let i = 0; i < count; i += 100) {
      const batch = []
      for (let j = i; j < Math.min(count, i + 100); j++) {
        batch.push({ type: 'message', channelId: arg, message: { ts: ts(j), text: `${arg} message ${j}`, author: { userId: 'U1', displayName: 'Sam' } } })
      }
      store.ingestMany(batch)
    }
    const stats = await store.close()
    say({ writer: arg, stats })
  } else {
    throw new Error(`unknown mode ${mode}`)
  }
}

main().catch((err) => {
  process.stderr.write(`${err && err.stack ? err.stack : err}\n`)
  process.exit(1)
})
