'use strict'

// The `<slack_thread_context>` block of a Slack thread session: the thread's earlier
// messages by name, so the model can resolve "are they running?". They come from a
// ChannelStore: the gateway's own (passed to `createContextEngine` as `channelStore`,
// fed by its Slack events), or one the engine keeps over the Slack Web API when the
// config gives a bot token (`slack.botToken`). Either way a fetch goes through the
// store's rate limiter and its 5-minute thread cache; a failed fetch is a block without
// the missing part, and a note.

const { ChannelStore } = require('../index.js')

/** Slack's Web API. */
const SLACK_API_URL = 'https://slack.com/api'
/** Longest wait for the whole block (a page, its name lookups, a short rate-limit wait). */
const THREAD_BLOCK_TIMEOUT_MS = 10_000
/** A user mention without a label in Slack's markup: `<@U123>`. */
const MENTION = /<@([UW][A-Z0-9]+)>/g
/** Longest wait for one `users.info` call. */
const USERS_INFO_TIMEOUT_MS = 3_000
/** Longest wait for one `conversations.replies` page (within the store's fetch timeout). */
const FETCH_TIMEOUT_MS = 4_000
/** Authors without a name looked up per page at most (the rest show their user id). */
const MAX_NAME_LOOKUPS = 10
/** Users whose names were looked up, remembered so as not to ask again. */
const MAX_NAMED = 10_000

/** Why a Slack Web API call failed, carrying Slack's Retry-After for the rate limiter. */
class SlackApiError extends Error {
  constructor(method, message, retryAfter) {
    super(`${method}: ${message}`)
    this.name = 'SlackApiError'
    if (retryAfter !== undefined) this.retryAfter = retryAfter
  }
}

/**
 * Calls a Slack Web API method with the bot token (form-encoded POST, as Slack's own
 * clients do); resolves to the response body, rejects on a transport or HTTP error.
 */
async function callSlack(apiUrl, token, method, params, timeoutMs) {
  const body = new URLSearchParams()
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null) body.set(k, String(v))
  const res = await fetch(`${apiUrl}/${method}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/x-www-form-urlencoded' },
    body,
    signal: AbortSignal.timeout(timeoutMs),
  })
  if (res.status === 429) {
    const after = Number(res.headers.get('retry-after'))
    throw new SlackApiError(method, 'rate limited (HTTP 429)', Number.isFinite(after) && after > 0 ? after : undefined)
  }
  if (!res.ok) throw new SlackApiError(method, `HTTP ${res.status}`)
  return res.json()
}

/**
 * A ChannelStore over the Slack Web API: threads through `conversations.replies`, and
 * the authors a page does not name, and the users its text mentions without a label, looked
 * up with `users.info` before the store takes the page (the store names a message and its
 * mentions when it takes it; a failed lookup leaves the user id as the name).
 */
function slackChannelStore({ botToken, apiUrl = SLACK_API_URL, rateLimit = 'default' }) {
  const url = apiUrl.replace(/\/+$/, '')
  const call = (method, params, timeoutMs) => callSlack(url, botToken, method, params, timeoutMs)
  const named = new Set()
  let store = null
  async function nameAuthors(body) {
    const ids = new Set()
    const profiled = new Set()
    const messages = Array.isArray(body?.messages) ? body.messages : []
    for (const m of messages) {
      if (typeof m?.user === 'string' && m.user_profile) profiled.add(m.user)
    }
    const unnamed = (id) => !named.has(id) && !profiled.has(id)
    for (const m of messages) {
      if (typeof m?.user === 'string' && !m.bot_id && unnamed(m.user)) ids.add(m.user)
      if (typeof m?.text !== 'string') continue
      for (const [, id] of m.text.matchAll(MENTION)) if (unnamed(id)) ids.add(id)
    }
    const users = []
    await Promise.all(
      [...ids].slice(0, MAX_NAME_LOOKUPS).map(async (userId) => {
        try {
          const r = await call('users.info', { user: userId }, USERS_INFO_TIMEOUT_MS)
          const u = r?.ok ? r.user : null
          const name = u?.profile?.display_name || u?.real_name || u?.name
          if (typeof name === 'string' && name !== '') users.push({ userId, displayName: name, isBot: u.is_bot === true })
        } catch {
          // The user id stands for the name.
        }
      }),
    )
    if (named.size + users.length > MAX_NAMED) named.clear()
    for (const u of users) named.add(u.userId)
    if (users.length > 0) store.setUsers(users)
  }
  store = new ChannelStore({
    rateLimit: { preset: rateLimit },
    // One page and its name lookups.
    fetchTimeout: FETCH_TIMEOUT_MS + USERS_INFO_TIMEOUT_MS + 500,
    fetcher: {
      fetchThread: async ({ channelId, threadId, cursor, limit }) => {
        const body = await call('conversations.replies', { channel: channelId, ts: threadId, cursor, limit }, FETCH_TIMEOUT_MS)
        if (body?.ok === true) await nameAuthors(body)
        return body
      },
    },
  })
  return store
}

class SlackThreadSource {
  /**
   * @param {{ channelStore?: object, slack?: { botToken: string, apiUrl?: string, rateLimit?: string }, limit: number }} options
   */
  constructor({ channelStore, slack, limit }) {
    this.limit = limit
    this.store = channelStore ?? (slack ? slackChannelStore(slack) : null)
  }

  /**
   * The block for a thread session (`channelId` as Slack spells it, `threadId` the root's
   * ts), never rejecting: `{ block, notes }`, `block` `''` when there is none.
   */
  async block(channelId, threadId) {
    if (this.store === null) return { block: '', notes: [] }
    let timer
    const timeout = new Promise((resolve) => {
      timer = setTimeout(
        () => resolve({ block: '', notes: [`the Slack thread took over ${THREAD_BLOCK_TIMEOUT_MS} ms; left out`] }),
        THREAD_BLOCK_TIMEOUT_MS,
      )
    })
    try {
      const built = this.store.threadContextBlock(channelId, null, { threadId, limit: this.limit })
      return await Promise.race([built, timeout])
    } catch (err) {
      return { block: '', notes: [`the Slack thread could not be read: ${err instanceof Error ? err.message : String(err)}`] }
    } finally {
      clearTimeout(timer)
    }
  }
}

module.exports = { SlackThreadSource, SLACK_API_URL, THREAD_BLOCK_TIMEOUT_MS }
