'use strict'

// The context engine OpenClaw loads through its `contextEngine` slot, over the package's
// SQLite memory store. Every method resolves: bad input or a storage fault degrades to
// passing the host's messages through, with a diagnostic (logged, and kept in
// `engine.diagnostics`), so the host never has to quarantine the engine.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { placeSession, laneOf } = require('./session-key.js')
const { ReplyTargets } = require('./reply-target.js')
const { turnMessage, isTurnMessage, isTurnText, hostMessages, recoveryPreamble } = require('./turn.js')
const { textOf, imagesOf, messageId, tsOf, estimateMessages, centralEstimate, tokensOfText } = require('./messages.js')
const { MemoryStore } = require('../index.js')
const { readOptions } = require('./options.js')
const { SlackThreadSource } = require('./slack-thread.js')
const { agentTools, RECALL_GUIDANCE, TOOL_NAMES } = require('./tools.js')
const { Embedder } = require('./embedder.js')

const { ENGINE_ID, ENGINE_NAME } = require('./ids.js')
const { version: VERSION } = require('../package.json')
/** Diagnostics kept on the engine (the newest). */
const MAX_DIAGNOSTICS = 100
/** Lanes whose last assembly the engine remembers (the newest). */
const MAX_WINDOWS = 10_000
/** After the store failed to open, how long before trying again (ms). */
const REOPEN_AFTER_MS = 30_000

class MemoryContextEngine {
  /**
   * @param {object} [options] the plugin's config (see `openclaw.plugin.json`)
   * @param {{ agentDir?: string, logger?: { warn?: Function, info?: Function }, channelStore?: object }} [host]
   *   `channelStore`: the gateway's `ChannelStore`, fed by its platform events, for the
   *   thread block of Slack thread sessions (else the config's `slack.botToken` gives the
   *   engine its own) and the message a Discord or Telegram turn replies to when OpenClaw
   *   names it without its body.
   *   `embedder`: the host's embedding model (OpenClaw's embedding provider, or a function
   *   `embed(texts) -> vectors`): the stored messages get their vectors after each turn,
   *   the question its vector before each assembly, and retrieval finds turns by meaning
   *   as well as by words (off without one).
   */
  constructor(options, host = {}) {
    this.logger = host.logger ?? null
    /** @type {Array<{ method: string, message: string, at: number }>} */
    this.diagnostics = []
    this.options = readOptions(options)
    for (const problem of this.options.problems) this.note('config', problem)
    this.dbPath = this.options.path ?? defaultPath(host.agentDir)
    this.store = null
    this.openFailedAt = null
    /** Summary versions whose media was re-attached, by session and lane. */
    this.recovered = new Map()
    /**
     * What the last assembly of each session's lane said of its kept window: whether the
     * host's messages went verbatim, and where the next fold should end (`foldThrough`).
     * `maintain` and `afterTurn` act on it.
     */
    this.windows = new Map()
    this.embedder = Embedder.of(host.embedder, (method, err) => this.note(method, err))
    this.replyTargets = host.channelStore ? new ReplyTargets(host.channelStore) : null
    this.slackThreads =
      this.options.threadBlock && (host.channelStore || this.options.slack)
        ? new SlackThreadSource({ channelStore: host.channelStore, slack: this.options.slack, limit: this.options.threadBlockLimit })
        : null
    this.info = Object.freeze({
      id: ENGINE_ID,
      name: ENGINE_NAME,
      version: VERSION,
      ownsCompaction: true,
      // Accepted turns arrive through `commitTurn`, atomically and once per key, and
      // `assemble` gets the history before the current turn.
      transcriptSemantics: Object.freeze({
        currentTurnFence: 'before-current-turn-entry-v1',
        turnAdvancementIdempotency: 'atomic-idempotent-v1',
      }),
    })
  }

  note(method, err) {
    const message = err instanceof Error ? err.message : String(err)
    this.diagnostics.push({ method, message, at: Date.now() })
    if (this.diagnostics.length > MAX_DIAGNOSTICS) this.diagnostics.shift()
    try {
      this.logger?.warn?.(`[${ENGINE_ID}] ${method}: ${message} (passing through)`)
    } catch {
      // A logger that throws changes nothing.
    }
  }

  /** The open store, opening it on first use; null while it cannot be opened. */
  memory() {
    if (this.store) return this.store
    if (this.openFailedAt !== null && Date.now() - this.openFailedAt < REOPEN_AFTER_MS) {
      throw new Error(`the memory file ${this.dbPath} could not be opened; retrying after ${REOPEN_AFTER_MS / 1000} s`)
    }
    try {
      if (this.dbPath !== ':memory:') fs.mkdirSync(path.dirname(this.dbPath), { recursive: true })
      this.store = new MemoryStore({ path: this.dbPath, compaction: this.options.compaction })
      this.openFailedAt = null
      return this.store
    } catch (err) {
      this.openFailedAt = Date.now()
      throw err
    }
  }

  /**
   * The memory messages of the user and assistant turns of `messages`; `ids` (when given)
   * gets each message's stored id, '' for one that is not stored, and `at` its index in
   * the batch, -1 for one that is not stored.
   */
  toMemory(place, messages, ids = null, at = null) {
    const batch = []
    const now = Date.now()
    for (const m of messages) {
      const text = textOf(m)
      if (text === null || text.trim() === '' || isTurnText(m.role, text)) {
        ids?.push('')
        at?.push(-1)
        continue
      }
      batch.push({
        sessionId: place.sessionId,
        chatId: place.chatId,
        messageId: messageId(m, text),
        role: m.role,
        text,
        ts: tsOf(m, now),
        topicId: place.topicId,
        replyTo: place.replyTo,
      })
      ids?.push(batch[batch.length - 1].messageId)
      at?.push(batch.length - 1)
    }
    return batch
  }

  /**
   * The messages of `batch` stored under a qualified id (`out`: where each went), as a map
   * from the host's id to the stored one. An id another thread's message took (a provider
   * that reuses reply ids) is stored as `<id>@<threadKey>`, this message's id from now on;
   * each one newly stored is a diagnostic of `method`.
   */
  qualified(method, batch, out) {
    const map = new Map()
    for (const [i, r] of out.entries()) {
      if (r.storedAs === undefined) continue
      map.set(batch[i].messageId, r.storedAs)
      if (r.ingested) this.note(method, `message id ${batch[i].messageId} is another thread's already; stored as ${r.storedAs}`)
    }
    return map
  }

  /**
   * Stores the user and assistant turns of `messages`; returns the lane, the count stored,
   * each message's stored id ('' for one that is not stored) and the batch stored.
   */
  store_(place, messages) {
    const ids = []
    const batch = this.toMemory(place, messages, ids)
    if (batch.length === 0) return { lane: laneOf(place), count: 0, ids, batch }
    const out = this.memory().ingest(batch)
    const qualified = this.qualified('ingest', batch, out)
    const stored = qualified.size === 0 ? ids : ids.map((id) => qualified.get(id) ?? id)
    return { lane: out[out.length - 1].threadKey, count: out.filter((r) => r.ingested).length, ids: stored, batch }
  }

  async ingest(params) {
    try {
      const place = placeSession(params?.sessionKey, params?.sessionId)
      const { count } = this.store_(place, [params?.message])
      return { ingested: count > 0 }
    } catch (err) {
      this.note('ingest', err)
      return { ingested: false }
    }
  }

  async ingestBatch(params) {
    try {
      const place = placeSession(params?.sessionKey, params?.sessionId)
      const messages = Array.isArray(params?.messages) ? params.messages : []
      return { ingestedCount: this.store_(place, messages).count }
    } catch (err) {
      this.note('ingestBatch', err)
      return { ingestedCount: 0 }
    }
  }

  /**
   * One accepted turn, written atomically and once per `advancementKey`. A storage fault
   * is a diagnostic, not a failed turn: the host's transcript still holds the turn, and
   * `assemble` stores what it has not seen.
   */
  async commitTurn(params) {
    try {
      const place = placeSession(params?.sessionKey, params?.sessionId)
      const messages = Array.isArray(params?.messages) ? params.messages : []
      const key = typeof params?.advancementKey === 'string' && params.advancementKey !== '' ? params.advancementKey : null
      if (key === null) throw new TypeError('commitTurn: advancementKey: expected a non-empty string')
      const batch = this.toMemory(place, messages)
      const report = this.memory().commitTurnReport(key, batch)
      this.qualified('commitTurn', batch, report.messages)
      return { status: report.status }
    } catch (err) {
      this.note('commitTurn', err)
      return { status: 'committed' }
    }
  }

  /** After a committed turn: compacts the session's thread when it is due. */
  async maintain(params) {
    const unchanged = (reason) => ({ changed: false, bytesFreed: 0, rewrittenEntries: 0, reason })
    try {
      const place = placeSession(params?.sessionKey, params?.sessionId)
      const lane = laneOf(place)
      const done = await this.afterAssembly(place, lane, params?.runtimeContext)
      await this.embedder?.catchUp(this.memory(), place.sessionId)
      // The host's transcript is never rewritten: the summary lives in the engine's store.
      return unchanged(done === null ? 'nothing due' : `thread summary v${done.summaryVersion}: ${done.folded} messages folded`)
    } catch (err) {
      this.note('maintain', err)
      return unchanged('failed; see the engine diagnostics')
    }
  }

  async afterTurn(params) {
    try {
      const place = placeSession(params?.sessionKey, params?.sessionId)
      const messages = Array.isArray(params?.messages) ? params.messages : []
      const { lane } = this.store_(place, messages)
      await this.afterAssembly(place, lane, params?.runtimeContext)
      await this.embedder?.catchUp(this.memory(), place.sessionId)
    } catch (err) {
      this.note('afterTurn', err)
    }
  }

  /** Keeps what a lane's assembly said of its window (the newest MAX_WINDOWS lanes). */
  remember(key, window) {
    this.windows.delete(key)
    this.windows.set(key, window)
    if (this.windows.size > MAX_WINDOWS) this.windows.delete(this.windows.keys().next().value)
  }

  /**
   * After a turn, what the lane's last assembly calls for: while the host's messages went
   * verbatim (or before any assembly), the store's own compaction triggers keep the
   * summary current for search, the tools and the history; past `contextThreshold`, the
   * summary changes only at a fold step (the kept window passed its fold mark), so a
   * prompt cache keeps the prefix between steps. Resolves to the compaction or null.
   */
  async afterAssembly(place, lane, runtimeContext) {
    const key = `${place.sessionId}\u0000${lane}`
    const window = this.windows.get(key)
    if (window === undefined || window.verbatim) return this.compactLane(place, lane, { force: false }, runtimeContext)
    if (window.foldThrough === null || !this.options.compactWhenTrimming) return null
    const through = window.foldThrough
    window.foldThrough = null
    return this.compactLane(place, lane, { through }, runtimeContext)
  }

  /**
   * Compacts a lane when due (`options.force`: whenever there is something to fold;
   * `options.through`: up to that stored message), with the configured summarizer;
   * resolves to the compaction's result or null.
   */
  async compactLane(place, lane, options, runtimeContext) {
    const memory = this.memory()
    const plan = memory.planCompaction(place.sessionId, lane, options)
    if (plan === null) return null
    let summary = null
    const llm = runtimeContext?.llm
    if (this.options.summarizer === 'llm' && llm && typeof llm.complete === 'function') {
      summary = await this.summarize(llm, plan)
    }
    return this.memory().applyCompaction(plan, { summary })
  }

  /** The model's summary of a plan, or null (then the extractive one is used) on failure or timeout. */
  async summarize(llm, plan) {
    const controller = new AbortController()
    let timer
    const timeout = new Promise((resolve) => {
      timer = setTimeout(() => {
        controller.abort()
        resolve(null)
      }, this.options.summarizerTimeoutMs)
    })
    try {
      // The store writes the request: the structure it asks for is the one it accepts.
      const prompt = plan.prompt
      // A synchronous throw from the host's model is a failed summary like a rejection.
      const call = new Promise((resolve) =>
        resolve(
          llm.complete({
            messages: [{ role: 'user', content: prompt }],
            maxTokens: 1024,
            purpose: 'context-engine thread summary',
            signal: controller.signal,
          }),
        ),
      ).then(
        (r) => (r && typeof r.text === 'string' ? r.text : null),
        (err) => {
          this.note('summarize', err)
          return null
        },
      )
      const text = await Promise.race([call, timeout])
      if (text === null && controller.signal.aborted) {
        this.note('summarize', new Error(`the model summary took over ${this.options.summarizerTimeoutMs} ms`))
      }
      return text
    } finally {
      clearTimeout(timer)
    }
  }

  async assemble(params) {
    // The host may hand back the turn message of an earlier assembly (OpenClaw assembles
    // more than once per run, on the messages the last one returned): never kept twice.
    const messages = hostMessages(params?.messages)
    try {
      return await this.assembleWithin(params, messages)
    } catch (err) {
      this.note('assemble', err)
      return { messages, estimatedTokens: estimateMessages(messages) }
    }
  }

  /**
   * One call into the store's assembly: the layers, the retrieved messages, the thread
   * block and the history share `tokenBudget` with the host's own messages, returned as
   * the host's own objects: all of them while they fit `contextThreshold` of it, else
   * those after the thread summary (whole turns, the current one always), folded in large
   * steps (`foldThrough`, acted on by `maintain` / `afterTurn`). What changes seldom (policy, personality, summary, history) is the
   * `systemPromptAddition`; what changes every turn (the memories and messages retrieved
   * for this question, the thread block) is one user message after the kept ones, just
   * before the turn's prompt, so a prompt cache reuses the system prompt and the history.
   */
  async assembleWithin(params, messages) {
    const place = placeSession(params.sessionKey, params.sessionId)
    const lane = laneOf(place)
    // Each host message's index in the batch stored with this turn (-1: not stored).
    const at = []
    const batch = this.toMemory(place, messages, null, at)
    const budget = positive(params.tokenBudget) ?? positive(params.runtimeContext?.tokenBudget) ?? MAX_BUDGET
    const lastUser = lastIndex(messages, (m) => m?.role === 'user')
    const memory = this.memory()
    // The thread block and the history each get at most a quarter of the budget; the
    // assembly budgets them with the rest and leaves out one that does not fit.
    const share = Math.min(this.options.historyTokens, Math.floor(Math.min(budget, MAX_BUDGET) / 4))
    const thread = await this.threadBlock(place)
    const history = this.historyInput(place, params, share)
    const query = params.prompt ?? (lastUser >= 0 ? textOf(messages[lastUser]) : '') ?? ''
    const quoted = await this.quotedReply(place, query)
    const queryVector = (await this.embedder?.query(query)) ?? undefined
    const now = Date.now()
    const host = messages.map((m, i) => ({ message: at[i] >= 0 ? at[i] : undefined, user: m?.role === 'user', tokens: centralEstimate(m) }))
    // One call: the turn stored (what the store has not seen of the host's transcript)
    // and recorded as this session's conversation, then the layers assembled.
    const out = memory.assemble({
      sessionId: place.sessionId,
      threadKey: lane,
      policy: this.policy(),
      personality: this.options.personality,
      userMessage: '',
      query,
      quotedReply: quoted ?? undefined,
      memories: this.options.memories,
      budgetTokens: Math.min(budget, MAX_BUDGET),
      now,
      hostMessages: host,
      verbatimShare: this.options.contextThreshold,
      retrievedMaxTokens: this.options.recallTokens ?? undefined,
      // Only what clears the bar: every turn's retrieved messages are sent anew.
      retrievedMinTerms: RECALL_MIN_TERMS,
      retrievedMinWeight: RECALL_MIN_WEIGHT,
      retrievedNeighbours: RECALL_NEIGHBOURS,
      queryVector,
      speakers: this.options.speakers ?? undefined,
      turnBlocks: thread,
      history: history?.context,
      threadStatus: this.options.threadStatus,
      turn: { messages: batch, conversation: history?.conversation },
    })
    this.qualified('ingest', batch, out.stored ?? [])
    if (out.turnBlocksLeftOut > 0) {
      this.note('threadBlock', `the Slack thread block (${tokensOfText(thread[0])} tokens) did not fit the budget (${budget}); left out`)
    }
    if (out.systemBlocksLeftOut > 0) {
      this.note('history', `${out.systemBlocksLeftOut} of the history blocks did not fit the budget (${budget}); left out`)
    }
    const from = out.keepFrom
    this.remember(`${place.sessionId}\u0000${lane}`, { verbatim: out.verbatim, foldThrough: out.foldThrough ?? null })
    let kept = messages.slice(from)
    kept = this.reattach(place, lane, out.summaryVersion ?? null, messages.slice(0, from), kept)
    // The host's message objects are never changed; this turn's part is a message of its
    // own, which OpenClaw sends once and does not write to its transcript.
    if (out.turn !== '') kept = [...kept, turnMessage(out.turn, now)]
    const result = { messages: kept, estimatedTokens: out.tokens.total }
    if (out.system !== '') result.systemPromptAddition = `<conversation_memory>\n${out.system}</conversation_memory>`
    return result
  }

  /**
   * The message a Discord or Telegram turn replies to, from the gateway's ChannelStore,
   * when OpenClaw names it without its body (null otherwise; a failure is a note).
   */
  async quotedReply(place, text) {
    if (this.replyTargets === null) return null
    const { text: quoted, notes } = await this.replyTargets.quoted(place, text)
    for (const n of notes) this.note('quotedReply', n)
    return quoted
  }

  /** The policy text: the config's, then the recall tools' guidance when they are on. */
  policy() {
    if (!this.options.recallTools) return this.options.policy
    return this.options.policy === '' ? RECALL_GUIDANCE : `${this.options.policy}\n\n${RECALL_GUIDANCE}`
  }

  /**
   * The model's tools over this engine's memory for one session, as OpenClaw's agent
   * tools (what the plugin's `api.registerTool` factory returns): `conversation_search`
   * and `conversation_expand`, scoped to the session `ctx.sessionKey` (or
   * `ctx.sessionId`) names, searching its whole chat (`lane: "current"`: its thread).
   * @param {{ sessionKey?: string, sessionId?: string }} [ctx]
   */
  agentTools(ctx) {
    const place = placeSession(ctx?.sessionKey, ctx?.sessionId)
    const scope = { sessionId: place.sessionId, threadKey: laneOf(place) }
    return agentTools(() => this.memory(), scope, (method, err) => this.note(method, err), this.embedder)
  }

  /**
   * What the assembly needs to build the thread's history (by calendar tiers, at most
   * `maxTokens`) and the thread status, each an option, and the conversation this
   * session's turn is recorded as (of its thread key: the history leaves it out, its
   * messages are sent anyway); null when both are off.
   */
  historyInput(place, params, maxTokens) {
    if (!this.options.history && !this.options.threadStatus) return null
    const sessionId = typeof params.sessionId === 'string' && params.sessionId !== '' ? params.sessionId : null
    // History stays in the thread key: a Slack thread's earlier sessions (after a reset or
    // rollover), a DM's earlier conversations; never another thread of the channel.
    const chatId = `${place.sessionId}#${laneOf(place)}`
    return {
      context: {
        chatId,
        timeZone: this.options.timeZone,
        maxTokens: this.options.history ? maxTokens : 0,
        excludeSessionId: sessionId ?? undefined,
      },
      conversation: sessionId === null ? undefined : { chatId, sessionId },
    }
  }

  /**
   * The `<slack_thread_context>` block of a Slack channel thread session (none for a
   * direct message, a top-level chat or another platform); the assembly leaves it out
   * when it does not fit the budget.
   */
  async threadBlock(place) {
    if (this.slackThreads === null || place.replyTo === null || place.platform !== 'slack') return []
    if (place.kind === 'direct' || place.kind === 'dm') return []
    // OpenClaw lowercases session keys; Slack's ids are upper case.
    const { block, notes } = await this.slackThreads.block(place.chatId.toUpperCase(), place.replyTo)
    for (const n of notes) this.note('threadBlock', n)
    return block === '' ? [] : [block]
  }

  /**
   * After a compaction, the images of the messages it left out come back once, in front
   * of the first kept user message, after the recovery preamble. Only this session's
   * (this thread's) messages are looked at; nothing is written.
   */
  reattach(place, lane, summaryVersion, dropped, kept) {
    if (!this.options.reattachMedia || kept.length === 0 || summaryVersion === null) return kept
    const key = `${place.sessionId}\u0000${lane}`
    if (this.recovered.get(key) === summaryVersion) return kept
    this.recovered.set(key, summaryVersion)
    const images = dropped.flatMap(imagesOf)
    const first = kept.findIndex((m) => m?.role === 'user')
    if (images.length === 0 || first < 0) return kept
    const target = kept[first]
    const content = typeof target.content === 'string' ? [{ type: 'text', text: target.content }] : target.content
    const out = kept.slice()
    out[first] = { ...target, content: [{ type: 'text', text: recoveryPreamble(images.length) }, ...images, ...content] }
    return out
  }

  async compact(params) {
    try {
      const place = placeSession(params?.sessionKey, params?.sessionId)
      const lane = laneOf(place)
      const done = await this.compactLane(place, lane, { force: params?.force === true }, params?.runtimeContext)
      if (done === null) return { ok: true, compacted: false, reason: 'nothing to compact' }
      const summary = this.memory().record(place.sessionId, 'thread_summary', lane)
      return {
        ok: true,
        compacted: true,
        result: {
          summary: summary?.body,
          tokensBefore: done.tokensBefore,
          tokensAfter: done.tokensAfter,
          details: done,
        },
      }
    } catch (err) {
      this.note('compact', err)
      return { ok: false, compacted: false, reason: err instanceof Error ? err.message : String(err) }
    }
  }

  async dispose() {
    try {
      this.store?.close()
    } catch (err) {
      this.note('dispose', err)
    }
    this.store = null
  }
}

/**
 * The relevance bar of what is retrieved for a turn (sent anew every turn, uncached): a
 * match of any one of the question's words, when the words it holds weigh at least
 * RECALL_MIN_WEIGHT together (each its idf in the conversation: a lone word must be in
 * about one message in 20 or fewer; a word in most messages, "today", "good", never
 * clears it), with one turn on each side. Measured by bench/session-replay.js: two words
 * at least (the bar before) left out most questions about a person by name, whose own
 * turns never hold their name; no weight bar cost 0.41x the sliding window's where it costs 0.35x, for the same recall.
 */
const RECALL_MIN_TERMS = 1
const RECALL_MIN_WEIGHT = 3
/** Turns that come with a retrieved message on each side (sent anew every turn: few). */
const RECALL_NEIGHBOURS = 1

/** The most a budget can be (the store's limit); an unbounded host gets this. */
const MAX_BUDGET = 4_294_967_295

function positive(n) {
  return typeof n === 'number' && Number.isFinite(n) && n > 0 ? n : undefined
}

function lastIndex(list, pred) {
  for (let i = list.length - 1; i >= 0; i--) if (pred(list[i])) return i
  return -1
}

function defaultPath(agentDir) {
  const base = typeof agentDir === 'string' && agentDir !== '' ? agentDir : path.join(os.homedir(), '.openclaw')
  return path.join(base, 'context-engine', 'memory.sqlite')
}

module.exports = { MemoryContextEngine, ENGINE_ID, ENGINE_NAME, recoveryPreamble, isTurnMessage, TOOL_NAMES }
