// buildChannelTools(input): the drop-in for the original module's tool builder. It keeps
// that module's shape (two plain objects, `channel.context` and `channel.messages`, each
// `{ name, description, parameters, execute(toolCallId, params) }`) and runs them on the
// engine: a private ChannelStore holds the input's messages, `store.tools(channelId)`
// ranks and answers, and the input's fetcher is called for threads, messages and media
// the input does not hold (through the store's rate limiter and caches).
'use strict'

const { asExport, inputError, unreadable } = require('../core/errors.js')

function typeName(v) {
  if (v === null) return 'null'
  if (Array.isArray(v)) return 'array'
  return typeof v
}

function fail(Kind, path, message) {
  return inputError(Kind, 'buildChannelTools', path, message)
}

// What a drop-in fetcher may resolve to, as the store reads it: an array of messages,
// a thread as `{ root, replies }`, or anything ChannelStore's fetcher may return (a
// Slack Web API response, `{ messages, nextCursor }`).
function asPage(result) {
  let list = null
  if (Array.isArray(result)) list = result
  else if (result && typeof result === 'object' && result.root && Array.isArray(result.replies)) list = [result.root, ...result.replies]
  if (list === null) return result
  return list.length === 0 ? { ok: true, messages: [], has_more: false } : { messages: list }
}

function adaptFetcher(fetcher) {
  const out = {}
  for (const [key, fn] of Object.entries(fetcher)) {
    if (typeof fn !== 'function') out[key] = fn
    else if (key === 'fetchThread' || key === 'fetchMessages') out[key] = async (request) => asPage(await fn.call(fetcher, request))
    else out[key] = fn.bind(fetcher)
  }
  return out
}

// Runs a call of internal export `from`; its input errors name this export and the
// field as the caller gave it (`options.fetcher.x` is the input's `fetcher.x`).
const withoutOptions = (path) => path.replace(/^options\./, '')
function asOurs(from, run) {
  try {
    return run()
  } catch (err) {
    throw asExport(err, from, 'buildChannelTools', withoutOptions)
  }
}

module.exports = function toolsLayer(ChannelStore, binding) {
  const buildRunnerTools = require('./runner-tools.js')(binding, ChannelStore)
  /**
   * @param {import('../index').ChannelToolsInput} input
   * @returns {[import('../index').ChannelTool, import('../index').ChannelTool]}
   */
  function buildChannelTools(input) {
    try {
      return build(input)
    } catch (err) {
      // What the caller's own code threw while being read (a getter, a Proxy trap), or
      // V8's message for a value it cannot handle, is named after this export.
      if (err instanceof Error && String(err.message).startsWith('buildChannelTools: ')) throw err
      throw unreadable('buildChannelTools', 'input', err)
    }
  }

  function build(input) {
    if (typeName(input) !== 'object') throw fail(TypeError, 'input', `expected an object, got ${typeName(input)}`)
    // The Claude SDK runner's own input (flat channelId): its tools, its answers.
    if ('channelId' in input) {
      return asOurs('buildChannelSnapshot', () => buildRunnerTools(input))
    }
    const known = new Set(['channel', 'messages', 'fetcher', 'maxMediaBytes'])
    for (const key of Object.keys(input)) {
      if (!known.has(key)) throw fail(TypeError, key, `unknown field (expected ${[...known].join(', ')})`)
    }
    const { channel, messages, fetcher, maxMediaBytes } = input
    if (typeName(channel) !== 'object') throw fail(TypeError, 'channel', `expected an object, got ${typeName(channel)}`)
    // Read once: a getter cannot answer one thing to the check and another to the use.
    const channelId = channel.id
    const channelName = channel.name
    const platform = channel.platform
    if (typeof channelId !== 'string') throw fail(TypeError, 'channel.id', `expected a string, got ${typeName(channelId)}`)
    if (channelId === '') throw fail(RangeError, 'channel.id', 'must not be empty')
    if (!Array.isArray(messages)) throw fail(TypeError, 'messages', `expected an array, got ${typeName(messages)}`)
    if (fetcher != null && typeName(fetcher) !== 'object') throw fail(TypeError, 'fetcher', `expected an object, got ${typeName(fetcher)}`)

    // Room for every message given: the window holds the channel messages, the replies
    // cache one entry per thread.
    let channelMessages = 0
    const threads = new Set()
    for (let i = 0; i < messages.length; i++) {
      const m = messages[i]
      if (typeName(m) !== 'object') throw fail(TypeError, `messages[${i}]`, `expected an object, got ${typeName(m)}`)
      const own = m.messageId ?? m.ts
      if (m.threadId != null && m.threadId !== own) threads.add(m.threadId)
      else channelMessages++
    }
    const store = asOurs('ChannelStore', () =>
      new ChannelStore({
        windowSize: Math.max(binding.DEFAULT_WINDOW_SIZE, channelMessages),
        threadReplies: { max: Math.max(binding.DEFAULT_THREAD_REPLIES_MAX, threads.size) },
        ...(fetcher != null ? { fetcher: adaptFetcher(fetcher) } : {}),
      }),
    )
    if (typeof channelName === 'string' || typeof platform === 'string') {
      asOurs('ChannelStore.setChannel', () =>
        store.setChannel({
          id: channelId,
          ...(typeof channelName === 'string' ? { name: channelName } : {}),
          ...(typeof platform === 'string' ? { platform } : {}),
        }),
      )
    }
    // Roots before their replies (the store keeps a reply only when it holds its root).
    // The input is a snapshot: a root's `replyCount` already counts the replies given,
    // while each reply ingested counts as a new one, so the root goes in with the
    // replies given taken off (never below zero) and ends at max(replyCount, given).
    const isReply = (m) => m.threadId != null && m.threadId !== (m.messageId ?? m.ts)
    const given = new Map()
    for (const m of messages) if (isReply(m)) given.set(m.threadId, (given.get(m.threadId) || 0) + 1)
    const order = messages.map((m, i) => i)
    order.sort((a, b) => Number(isReply(messages[a])) - Number(isReply(messages[b])) || a - b)
    const event = (i) => {
      const m = messages[i]
      const replies = isReply(m) ? 0 : given.get(m.messageId ?? m.ts) || 0
      const message = replies && typeof m.replyCount === 'number' ? { ...m, replyCount: Math.max(0, m.replyCount - replies) } : m
      return { type: 'message', channelId, message }
    }
    // ingestMany names `events[i].message.<field>`; the caller gave `messages[j].<field>`.
    const messagePath = (path) => {
      const m = /^events\[(\d+)\]\.message(.*)$/.exec(path)
      return m ? `messages[${order[Number(m[1])]}]${m[2]}` : path
    }
    try {
      store.ingestMany(order.map(event))
    } catch (err) {
      throw asExport(err, 'ChannelStore.ingestMany', 'buildChannelTools', messagePath)
    }
    const tools = asOurs('ChannelStore.tools', () =>
      store.tools(channelId, {
        toolNames: 'dotted',
        ...(maxMediaBytes !== undefined ? { maxMediaBytes } : {}),
      }),
    )
    return tools.definitions().map((def) => ({
      name: def.name,
      description: def.description,
      parameters: def.input_schema,
      // The tool call id is the gateway's bookkeeping; the answer depends on params only.
      execute: (toolCallId, params) => tools.execute(def.name, params),
    }))
  }

  /**
   * The runner's tool factory: its two channel tools for a context with structured
   * channel input (each with a `label`, its name, as agent tools carry one), none without.
   */
  function channelToolsFactory(ctx) {
    let input
    try {
      input = ctx === null || ctx === undefined ? undefined : ctx.structuredContextInput
    } catch (err) {
      throw unreadable('channelToolsFactory', 'ctx', err)
    }
    if (!input) return []
    let tools
    try {
      tools = buildChannelTools(input)
    } catch (err) {
      throw asExport(err, 'buildChannelTools', 'channelToolsFactory', (path) => (path === 'input' ? 'ctx.structuredContextInput' : `ctx.structuredContextInput.${path}`))
    }
    return tools.map((t) => ({ ...t, label: t.name }))
  }

  return { buildChannelTools, channelToolsFactory }
}
