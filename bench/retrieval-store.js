// The retrieval fixture (fixtures/retrieval-channel.json) loaded into a ChannelStore the
// way a gateway fills one after a restart: users, one conversations.history response and
// one conversations.replies response per thread. Shared by __test__/retrieval.spec.ts and
// bench/recall.js.
'use strict'
const path = require('node:path')

const FIXTURES = path.join(__dirname, '..', 'fixtures')
const channel = require(path.join(FIXTURES, 'retrieval-channel.json'))

function loadStore(ChannelStore) {
  const all = [...channel.messages, ...Object.values(channel.replies).flat()]
  const newest = Math.max(...all.map((m) => Number(m.ts)))
  const store = new ChannelStore({ clock: () => newest * 1000 + 60_000 })
  store.setUsers(
    Object.values(channel.users).map((u) => ({
      userId: u.id,
      displayName: (u.profile && u.profile.display_name) || u.real_name || u.name,
      isBot: Boolean(u.is_bot),
    })),
  )
  const id = channel.channel.id
  store.ingestSlackResponse(id, { ok: true, messages: [...channel.messages].reverse(), has_more: false })
  for (const [threadId, messages] of Object.entries(channel.replies)) {
    store.ingestSlackResponse(id, { ok: true, messages, has_more: false }, { threadId, firstPage: true })
  }
  return store.tools(id)
}

/** The addon's ranking of one question: message ids, best first. */
async function rankWithTools(tools, q, k = 8) {
  const input = { intent: q.question, max_results: k }
  if (q.since) input.since = q.since
  if (q.authors && q.authors.length) input.authors = q.authors
  const out = JSON.parse(await tools.execute('channel_context', input))
  if (out.error) throw new Error(`${q.id}: ${out.error.message}`)
  return out.results.map((r) => r.message_id)
}

module.exports = { loadStore, rankWithTools }
