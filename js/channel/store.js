// The ChannelStore's fetch driver: the one place that awaits the caller's async
// fetcher. State and decisions stay in Rust; this module only performs what a run asks.
//
// buildContext, getMedia and the channel_messages tool resolve at once when nothing
// needs fetching (the steady state). Otherwise Rust starts a run and calls _drive with
// its first effects: call a fetcher function (with the store's fetch timeout), sleep, or
// wait on a promise (the shared limiter's answer, another run's fetch of the same data).
// Each effect's answer goes back through _step, which returns the next effects or the
// run's value. A fetch that fails never rejects: the run degrades around it (stale data
// or nothing, with a note).
'use strict'

const { asExport, inputError, unreadable } = require('../core/errors.js')
const fields = require('../core/fields.js')
const { packRows } = require('../core/packed.js')

/** The options `threadContextBlock` takes. */
const THREAD_BLOCK_OPTIONS = ['threadId', 'limit']

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

// What a rejection says, whatever was thrown: an Error, a string, undefined, null, a
// frozen object, or a Proxy that throws on every access. Never throws.
function errorText(err) {
  try {
    if (err === undefined) return 'rejected with undefined'
    if (err === null) return 'rejected with null'
    if (typeof err === 'string') return err || 'rejected with an empty string'
    if (typeof err !== 'object' && typeof err !== 'function') return `rejected with ${String(err)}`
    if (err instanceof Error) return String(err.message || err.name || 'Error')
    const json = JSON.stringify(err)
    return typeof json === 'string' ? json : `rejected with ${typeof err}`
  } catch {
    return 'rejected with a value that cannot be read'
  }
}

// Retry delay carried by a fetch error, in ms: `retryAfterMs`, or `retryAfter` in
// seconds (as @slack/web-api's rate-limited error carries it), or Discord's 429 body
// (`retry_after`, seconds as a float, on the error or as its `rawError` / `body`), or a
// Retry-After / X-RateLimit-Reset-After header. A value that cannot be read is no
// delay. Absurd delays are capped in Rust.
function retryAfterMs(err) {
  try {
    if (err === null || typeof err !== 'object') return undefined
    const num = (v) => (typeof v === 'string' && v.trim() !== '' ? Number(v) : v)
    const ms = num(err.retryAfterMs)
    if (typeof ms === 'number' && ms > 0) return ms
    const s = num(err.retryAfter ?? err.data?.retryAfter ?? err.retry_after ?? err.rawError?.retry_after ?? err.body?.retry_after)
    if (typeof s === 'number' && s > 0) return s * 1000
    const h = err.headers
    const get = (name) => (typeof h.get === 'function' ? h.get(name) : h[name] ?? h[name.replace(/(^|-)([a-z])/g, (_, d, c) => d + c.toUpperCase())])
    const header = h && (get('retry-after') ?? get('x-ratelimit-reset-after'))
    const hs = num(header)
    if (typeof hs === 'number' && hs > 0) return hs * 1000
  } catch {}
  return undefined
}

class FetchTimeout {}

// Calls `fetcher[name](request)`, waiting at most `ms`. Resolves with `{ value }` or
// `{ error, retryAfter, timedOut }`; never rejects, whatever the fetcher does (throws
// synchronously, rejects with anything, never settles).
function callFetcher(fetcher, name, request, ms) {
  let timer
  const call = new Promise((resolve) => resolve(fetcher[name].call(fetcher, request)))
  const timeout = new Promise((resolve) => {
    timer = setTimeout(() => resolve(new FetchTimeout()), ms)
  })
  return Promise.race([call, timeout]).then(
    (value) => (value instanceof FetchTimeout ? { error: `no answer within ${ms} ms (fetchTimeout)`, timedOut: true } : { value }),
    (err) => ({ error: errorText(err), retryAfter: retryAfterMs(err), timedOut: false }),
  ).finally(() => clearTimeout(timer))
}

// One effect, performed: its answer `{ id, ... }`. Never rejects.
function perform(fetcher, effect) {
  const id = effect.id
  if (effect.call !== undefined) {
    return callFetcher(fetcher, effect.call, effect.request, effect.timeoutMs).then((r) => ({ id, ...r }))
  }
  if (effect.sleep !== undefined) return sleep(effect.sleep).then(() => ({ id }))
  return Promise.resolve(effect.wait).then(
    (value) => ({ id, value }),
    (err) => ({ id, error: errorText(err) }),
  )
}

// Drives run `run` until it is done: performs its effects concurrently and hands each
// answer back as it arrives. Resolves with the run's value; rejects only with the error
// the run itself rejects with (a build whose anchor cannot be found). For a tool, any
// fault is the tool's error answer instead.
async function drive(store, run, effects, tool) {
  // Nothing below may call into the store before the caller's call returns.
  await null
  const fetcher = fetchers.get(store)
  const pending = new Map()
  try {
    for (;;) {
      for (const effect of effects) pending.set(effect.id, perform(fetcher, effect))
      // A run that is not done always waits on something; never wait on nothing.
      if (pending.size === 0) throw new Error('ChannelStore: a fetch run stopped with nothing to wait for')
      const answer = await Promise.race(pending.values())
      pending.delete(answer.id)
      const step = store._step(run, answer)
      if (step.done) return step.value
      effects = step.effects
    }
  } catch (err) {
    if (tool === undefined) throw err
    return JSON.stringify({ error: { code: 'internal', tool, message: errorText(err) } })
  }
}

/** The fetcher of each store (JS functions stay beside the Rust state). */
const fetchers = new WeakMap()

// ingestMany's packed path: when every event is a plain message (the bulk of a channel's
// traffic), its fields go to Rust as one joined string plus lengths instead of JSON,
// which V8 would take longer to write than Rust takes to apply the whole batch. Anything
// else (edits, reactions, media, odd types) goes through the native JSON path, which
// validates and names the bad field.
const FIELDS = 7
// Fields a message and its author may have (the native path refuses any other, naming
// it; a message with one goes there instead of being packed without it).
// The fields Rust reads (from the typings it generates), and the alias serde also takes.
const MESSAGE_KEYS = new Set([...fields.MessageInput, 'repliesLast1H'])
const AUTHOR_KEYS = new Set(fields.AuthorInput)
function onlyKnown(o, known) {
  for (const k in o) if (!known.has(k)) return false
  return true
}
function packMessages(events) {
  const n = events.length
  const kinds = new Uint8Array(n)
  const packed = packRows(n, FIELDS, (i, parts, k) => {
    // Each property is read once: a getter that answers differently on a second read
    // cannot make the checked value and the packed value differ.
    const e = events[i]
    if (e === null || typeof e !== 'object') return false
    const type = e.type
    const channelId = e.channelId
    const m = e.message
    if (type !== 'message' || typeof channelId !== 'string' || e.workspaceId != null) return false
    if (m === null || typeof m !== 'object') return false
    const ts = m.ts
    const text = m.text
    const a = m.author
    const thread = m.threadId
    const messageId = m.messageId
    if (typeof ts !== 'string' || typeof text !== 'string') return false
    // An empty or non-string id goes to the JSON path, which refuses it by name.
    if (messageId != null && (typeof messageId !== 'string' || messageId === '')) return false
    if (m.media != null || m.reactions != null || m.replyCount != null || m.lastReplyTs != null) return false
    if (m.edited != null || m.broadcast != null || m.hasMedia != null || m.repliesLast1h != null || m.repliesLast1H != null) return false
    if (a === null || typeof a !== 'object') return false
    if (!onlyKnown(m, MESSAGE_KEYS) || !onlyKnown(a, AUTHOR_KEYS)) return false
    const userId = a.userId
    const displayName = a.displayName
    const isBot = a.isBot
    if (typeof userId !== 'string' || typeof displayName !== 'string') return false
    if (isBot != null && typeof isBot !== 'boolean') return false
    if (thread != null && typeof thread !== 'string') return false
    parts[k] = channelId
    parts[k + 1] = ts
    parts[k + 2] = text
    parts[k + 3] = userId
    parts[k + 4] = displayName
    parts[k + 5] = thread ?? ''
    parts[k + 6] = messageId ?? ''
    kinds[i] = isBot === true ? 1 : 0
    return true
  })
  return packed === null ? null : { ...packed, kinds }
}

// How often a saved store queues changes that a full write queue held back (every
// call queues its own changes when there is room; this catches a store that goes quiet
// right after a burst). The timer holds the store weakly and does not keep the process
// alive.
const PERSIST_TICK_MS = 1000
/** The persist timer of each saved store. */
const ticks = new WeakMap()

function persistTick(store) {
  const ref = new WeakRef(store)
  const timer = setInterval(() => {
    const s = ref.deref()
    if (s === undefined) return clearInterval(timer)
    try {
      s._persistTick()
    } catch {
      // Re-entered from a fetcher's synchronous callback: the next tick queues it.
    }
  }, PERSIST_TICK_MS)
  timer.unref()
  return timer
}

module.exports = function installStore(binding) {
  const Native = binding.ChannelStore
  const nativeIngestMany = Native.prototype.ingestMany
  class ChannelStore extends Native {
    constructor(options) {
      super(options)
      fetchers.set(this, options?.fetcher ?? null)
      if (options?.persist != null) ticks.set(this, persistTick(this))
    }

    close() {
      clearInterval(ticks.get(this))
      ticks.delete(this)
      return super.close()
    }

    // Called by the native methods when a run has effects to perform.
    _drive(run, effects, tool) {
      return drive(this, run, effects, tool)
    }

    ingestMany(events) {
      let packed = null
      try {
        packed = Array.isArray(events) && events.length > 0 ? packMessages(events) : null
      } catch (err) {
        // A throwing getter. Not read a second time (a getter that re-enters would be
        // called twice per level): out of stack stays the RangeError it is, anything
        // else is named after this export.
        throw unreadable('ChannelStore.ingestMany', 'events', err)
      }
      if (packed === null) return nativeIngestMany.call(this, events)
      return this._ingestPacked(packed.strings, packed.lens, packed.kinds)
    }

    // The thread-history block of a message in a thread, from the store's thread (its
    // cache, or one conversations.replies through the rate limiter on a miss). Never
    // rejects: what could not be fetched is a note and the block holds what is known.
    async threadContextBlock(channelId, messageId, options) {
      const F = 'ChannelStore.threadContextBlock'
      let keys
      let threadId
      let limit
      let shape = 'object'
      try {
        if (Array.isArray(options)) shape = 'an array'
        else if (options !== undefined && options !== null && typeof options !== 'object') shape = typeof options
        else {
          keys = Object.keys(options ?? {})
          threadId = options?.threadId
          limit = options?.limit ?? undefined
        }
      } catch (err) {
        throw unreadable(F, 'options', err)
      }
      if (shape !== 'object') throw inputError(TypeError, F, 'options', `expected an object, got ${shape}`)
      const unknown = keys.find((key) => !THREAD_BLOCK_OPTIONS.includes(key))
      if (unknown !== undefined) {
        throw inputError(TypeError, F, `options.${unknown}`, `unknown field \`${unknown}\`, expected \`threadId\` or \`limit\``)
      }
      // The limit is checked where the block is written, before anything is fetched.
      try {
        binding.formatSlackThreadContext({ messages: [], limit })
      } catch (err) {
        throw asExport(err, 'formatSlackThreadContext', F, (path) => path.replace(/^input\./, 'options.'))
      }
      // Without a message id the current question is the thread's newest human message
      // (what a gateway answering in the thread is replying to): the build anchors on the root.
      const latest = messageId === null || messageId === undefined
      if (latest && (typeof threadId !== 'string' || threadId === '')) {
        throw new TypeError('ChannelStore.threadContextBlock: options.threadId: is required when messageId is null (the thread whose newest message is the question)')
      }
      let built
      try {
        built = await this.buildContext(channelId, latest ? threadId : messageId, { threadId, adjacent: 0 })
      } catch (err) {
        // Bad arguments are the caller's to fix (named after this method); anything else
        // (an anchor that cannot be found, a store fault) is a block without that part.
        if (err instanceof TypeError || err instanceof RangeError) {
          throw asExport(err, 'ChannelStore.buildContext', F, (path) => (path === 'anchorMessageId' ? 'messageId' : path))
        }
        return { block: '', notes: [`thread history unavailable: ${err?.message ?? String(err)}`], apiCalls: 0 }
      }
      const thread = built.thread
      const none = { block: '', notes: built.notes, apiCalls: built.apiCalls }
      if (!thread) return none
      const all = [thread.root, ...thread.replies]
      let current
      if (latest) {
        current = lastOf(thread.replies, (m) => !m.author.is_bot)
        if (current === undefined) return none
      } else {
        // A direct message or a top-level message without a thread: nothing.
        if (thread.root.message_id === messageId) return none
        current = thread.replies.find((r) => r.message_id === messageId)
      }
      const id = current?.message_id ?? messageId
      const at = current?.ts ?? built.snapshot.anchor.ts
      const earlier = all.filter((m) => m.message_id !== id && m.ts < at)
      const block = binding.formatSlackThreadContext({
        messages: earlier.map((m) => ({ name: m.author.display_name, text: m.text })),
        currentQuestion: current?.text ?? built.snapshot.anchor.text,
        limit,
      })
      return { block, notes: built.notes, apiCalls: built.apiCalls }
    }
  }
  return { ChannelStore }
}

function lastOf(list, pred) {
  for (let i = list.length - 1; i >= 0; i--) if (pred(list[i])) return list[i]
  return undefined
}
