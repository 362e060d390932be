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
const { MemoryStore, tokenBound, tokenEstimate } = require('../index.js')
const { readOptions } = require('./options.js')
const { SlackThreadSource } = require('./slack-thread.js')
const { agentTools, RECALL_GUIDANCE, TOOL_NAMES } = require('./tools.js')
const { Embedder } = require('./embedder.js')
const { LaneStates } = require('./lane-state.js')
const { Senders } = require('./senders.js')
const { withoutBlocks } = require('./context-blocks.js')

const { ENGINE_ID, ENGINE_NAME } = require('./ids.js')
const { version: VERSION } = require('../package.json')
/** Diagnostics kept on the engine (the newest). */
const MAX_DIAGNOSTICS = 100
/** After the store failed to open, how long before trying again (ms). */
const REOPEN_AFTER_MS = 30_000

class MemoryContextEngine {
  /**
   * @param {object} [options] the plugin's config (see `openclaw.plugin.json`)
   * @param {{ agentDir?: string, logger?: { warn?: Function, info?: Function }, channelStore?: object, embedder?: unknown, config?: object }} [host]
   *   `channelStore`: the gateway's `ChannelStore`, fed by its platform events, for the
   *   thread block of Slack thread sessions (else the config's `slack.botToken` gives the
   *   engine its own) and the message a Discord or Telegram turn replies to when OpenClaw
   *   names it without its body.
   *   `embedder`: the host's embedding model (OpenClaw's embedding provider, or a function
   *   `embed(texts) -> vectors`): the stored messages get their vectors after each turn,
   *   the question its vector before each assembly, and retrieval finds turns by meaning
   *   as well as by words (off without one).
   *   `config`: the host's own config (OpenClaw's, as its plugin API and engine factory
   *   give it): the `contextWindow` and `maxTokens` of the model a call names, so every
   *   context leaves the model room for the reply and the host's own part of the request.
   */
  constructor(options, host = {}) {
    this.logger = host.logger ?? null
    /** @type {Array<{ method: string, message: string, at: number }>} */
    this.diagnostics = []
    this.options = readOptions(options)
    for (const problem of this.options.problems) this.note('config', problem)
    if (this.options.url && this.options.path) this.note('config', 'path is not used: the memory is on PostgreSQL (url)')
    this.dbPath = this.options.path ?? defaultPath(host.agentDir)
    this.store = null
    /** The store being opened (a connection to PostgreSQL takes a while). */
    this.opening = null
    this.openFailedAt = null
    /** Summary versions whose media was re-attached, by session and lane. */
    this.recovered = new Map()
    /**
     * What the engine knows of each lane between calls (`./lane-state.js`): what its last
     * assembly decided of the kept window (`maintain` and `afterTurn` act on it), the host's
     * limits and overhead, the first assembly of the current turn.
     */
    this.lanes = new LaneStates(() => this.memory())
    /** Who writes each session's user turns, as OpenClaw's blocks name them. */
    this.senders = new Senders()
    /** The host's config (OpenClaw's), where its models' windows and reply sizes are. */
    this.hostConfig = host.config ?? null
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

  /**
   * The open store, opening it on first use (with `url`, connecting to PostgreSQL: its
   * methods then return promises, which every caller here awaits); rejects while it
   * cannot be opened, trying again after REOPEN_AFTER_MS.
   */
  async memory() {
    if (this.store) return this.store
    if (this.opening) return this.opening
    if (this.openFailedAt !== null && Date.now() - this.openFailedAt < REOPEN_AFTER_MS) {
      throw new Error(`the memory ${this.options.url ? 'database' : `file ${this.dbPath}`} could not be opened; retrying after ${REOPEN_AFTER_MS / 1000} s`)
    }
    this.opening = this.open()
    try {
      this.store = await this.opening
      this.openFailedAt = null
      return this.store
    } catch (err) {
      this.openFailedAt = Date.now()
      throw err
    } finally {
      this.opening = null
    }
  }

  open() {
    const compaction = this.options.compaction
    if (this.options.url) {
      return MemoryStore.connect({ url: this.options.url, compaction, poolSize: this.options.poolSize ?? undefined, tlsCa: this.options.tlsCa ?? undefined })
    }
    if (this.dbPath !== ':memory:') fs.mkdirSync(path.dirname(this.dbPath), { recursive: true })
    return new MemoryStore({ path: this.dbPath, compaction })
  }

  /**
   * The memory messages of the user and assistant turns of `messages`; `ids` (when given)
   * gets each message's stored id, '' for one that is not stored, and `at` its index in
   * the batch, -1 for one that is not stored.
   */
  toMemory(place, messages, ids = null, at = null) {
    const batch = []
    const now = Date.now()
    this.senders.learn(place.sessionId, messages, textOf)
    for (const m of messages) {
      const raw = textOf(m)
      // What the person wrote: OpenClaw's context blocks before it (conversation info,
      // sender, chat history) are the host's, told again each turn, not the turn's words.
      const text = raw === null || m.role !== 'user' ? raw : withoutBlocks(raw)
      if (text === null || text.trim() === '' || isTurnText(m.role, raw)) {
        ids?.push('')
        at?.push(-1)
        continue
      }
      batch.push({
        sessionId: place.sessionId,
        chatId: place.chatId,
        messageId: messageId(m, raw),
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
  async store_(place, messages) {
    const ids = []
    const batch = this.toMemory(place, messages, ids)
    if (batch.length === 0) return { lane: laneOf(place), count: 0, ids, batch }
    const out = await (await this.memory()).ingest(batch)
    const qualified = this.qualified('ingest', batch, out)
    const stored = qualified.size === 0 ? ids : ids.map((id) => qualified.get(id) ?? id)
    return { lane: out[out.length - 1].threadKey, count: out.filter((r) => r.ingested).length, ids: stored, batch }
  }

  async ingest(params) {
    try {
      const place = placeSession(params?.sessionKey, params?.sessionId)
      const { count } = await this.store_(place, [params?.message])
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
      return { ingestedCount: (await this.store_(place, messages)).count }
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
      const report = await (await this.memory()).commitTurnReport(key, batch)
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
      if (this.embedder) await this.embedder.catchUp(await this.memory(), place.sessionId)
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
      const { lane } = await this.store_(place, messages)
      // OpenClaw also calls afterTurn from its loop, before each model call of a turn
      // (the prompt or tool results newest): the turn's assemblies share one state, so
      // its fold waits for the turn's answer.
      if (answered(messages)) await this.afterAssembly(place, lane, params?.runtimeContext)
      if (this.embedder) await this.embedder.catchUp(await this.memory(), place.sessionId)
    } catch (err) {
      this.note('afterTurn', err)
    }
  }

  /**
   * The budget of this assembly, and whether it is the first of its turn. OpenClaw
   * assembles twice a model call: first with what the model's window leaves after its
   * reserve, its system prompt and the prompt (sent apart: `pending`), then, from its
   * loop, on what the first returned plus the prompt, with the window minus nothing of
   * those. The request carries the second's messages with the first's system prompt, so
   * the second keeps the first's budget (the prompt now among the messages, counted in
   * it). Whatever a call passes, the context stays within what the model's window leaves
   * after the reply and the host's own part of the request (`hostLimit`), and within the
   * lane's cap after the host said a request was or would be past its limit.
   */
  turnBudget(state, params, pending, lastUser, messages) {
    const passed = positive(params.tokenBudget) ?? positive(params.runtimeContext?.tokenBudget) ?? MAX_BUDGET
    let budget = Math.min(MAX_BUDGET, pending === null ? passed : passed + Math.ceil(pending.tokens))
    const prompt = pending?.text ?? (lastUser === null ? '' : (textOf(lastUser) ?? ''))
    // The prompt's own tokens: the host's message (its timestamp included) once it is one.
    const promptTokens = pending?.tokens ?? (lastUser === null ? 0 : centralEstimate(lastUser))
    const turn = state.turn
    // A later assembly of the same turn: its prompt, on what the first returned (from the
    // same first message, with the same turn message handed back). The same question
    // asked again on the whole transcript is a first assembly of its own.
    const same =
      turn !== undefined &&
      turn.prompt !== '' &&
      Date.now() - turn.at < TURN_MS &&
      (pending !== null ? pending.text === turn.prompt : prompt.includes(turn.prompt)) &&
      (turn.replay.first === null || (messages.length > 0 && identity(messages[0]) === turn.replay.first)) &&
      (turn.replay.turnPart === null || handedBack(params.messages, textOf(turn.replay.turnPart)))
    // The first's budget, for the prompt as this call counts it: the rest is the same.
    if (same) budget = Math.min(budget, turn.budget - Math.ceil(turn.promptTokens) + Math.ceil(promptTokens))
    const limit = this.hostLimit(state, params)
    if (limit !== null) budget = Math.min(budget, tokenBound(limit))
    if (typeof state.cap === 'number') budget = Math.min(budget, state.cap)
    return { budget: Math.max(1, Math.floor(budget)), first: !same, prompt, promptTokens }
  }

  /**
   * What the host says of this call's limits, kept on the lane: the model's context window
   * (its config's `contextWindow`, else the `promptTokenBudget` of a call that names no
   * reply reserve: OpenClaw's loop passes the window there), the reply's tokens (the
   * model's `maxTokens` in the config, else the reserve) and the reserve the first
   * assembly names as `maxOutputTokens` (OpenClaw's threshold keeps it).
   */
  learnLimits(state, params) {
    const model = this.modelOf(params)
    const limits = params.runtimeSettings?.limits
    const reserve = positive(limits?.maxOutputTokens)
    const window = model.window ?? (reserve === undefined ? positive(limits?.promptTokenBudget) : undefined)
    if (window !== undefined) state.window = window
    if (reserve !== undefined) state.reserve = reserve
    // The model's reply size when the config says it; else the largest reserve named.
    if (model.maxTokens !== undefined) state.output = model.maxTokens
    else if (reserve !== undefined) state.output = Math.max(reserve, state.output ?? 0)
  }

  /**
   * The model's window and reply size from the host's config (`models.providers`), for
   * the model and provider a call names; what is not there is undefined.
   */
  modelOf(params) {
    const id = typeof params.model === 'string' ? params.model : params.runtimeSettings?.model?.resolved
    const provider = params.runtimeSettings?.model?.provider
    const providers = this.hostConfig?.models?.providers
    if (typeof id !== 'string' || typeof provider !== 'string' || providers === null || typeof providers !== 'object') return {}
    const models = providers[provider]?.models
    const m = Array.isArray(models) ? models.find((x) => x?.id === id) : undefined
    return { window: positive(m?.contextWindow), maxTokens: positive(m?.maxTokens) }
  }

  /**
   * The most the engine's context may take in tokens the model counts, or null while the
   * lane's window, reply size and the host's own part are not all known: the window, less
   * the reply, less what the host's requests hold besides the context (learnt from the
   * model's usage: `learnOverhead`).
   */
  hostLimit(state, params) {
    this.learnLimits(state, params)
    const { window, output, overhead } = state
    if (window === undefined || output === undefined || typeof overhead !== 'number') return null
    return Math.max(1, window - output - overhead)
  }

  /**
   * What the host's request held besides the engine's last context: the newest answer's
   * usage (input, cache reads and writes: every input token of the request that produced
   * it) less the engine's estimate of the context it had sent. Learnt once per answer.
   */
  learnOverhead(state, messages) {
    const at = lastIndex(messages, (m) => m?.role === 'assistant' && m.usage !== null && typeof m.usage === 'object')
    if (at < 0 || typeof state.sent !== 'number') return
    const usage = messages[at].usage
    const input = [usage.input, usage.cacheRead, usage.cacheWrite].reduce((n, x) => n + (Number.isFinite(x) && x > 0 ? x : 0), 0)
    const id = identity(messages[at])
    if (input <= 0 || state.usageOf === id) return
    state.usageOf = id
    state.overhead = Math.max(0, Math.round(input - state.sent))
  }

  /**
   * After a turn, what the lane's last assembly calls for: while the host's messages went
   * verbatim (or before any assembly), the store's own compaction triggers keep the
   * summary current for search, the tools and the history; past `contextThreshold`, the
   * summary changes only at a fold step (the kept window moved on to a new step line), so a
   * prompt cache keeps the prefix between steps. Resolves to the compaction or null.
   */
  async afterAssembly(place, lane, runtimeContext) {
    const state = await this.lanes.get(place, lane)
    if (state.tokens === undefined || state.verbatim) return this.compactLane(place, lane, { force: false }, runtimeContext)
    if (typeof state.foldThrough !== 'string' || !this.options.compactWhenTrimming) return null
    const through = state.foldThrough
    state.foldThrough = null
    await this.lanes.save(place, lane)
    return this.compactLane(place, lane, { through }, runtimeContext)
  }

  /**
   * Compacts a lane when due (`options.force`: whenever there is something to fold;
   * `options.through`: up to that stored message), with the configured summarizer;
   * resolves to the compaction's result or null.
   */
  async compactLane(place, lane, options, runtimeContext) {
    const memory = await this.memory()
    const plan = await memory.planCompaction(place.sessionId, lane, options)
    if (plan === null) return null
    let summary = null
    const llm = runtimeContext?.llm
    if (this.options.summarizer === 'llm' && llm && typeof llm.complete === 'function') {
      summary = await this.summarize(llm, plan)
    }
    return memory.applyCompaction(plan, { summary })
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
   * those from the window's step line on (whole turns, the current one always), moving on
   * and folded in large steps (`foldThrough`, acted on by `maintain` / `afterTurn`). What
   * changes seldom (policy, personality, summary, history) is the
   * `systemPromptAddition`; what changes every turn (the memories and messages retrieved
   * for this question, the thread block) is one user message after the kept ones, just
   * before the turn's prompt, so a prompt cache reuses the system prompt and the history.
   */
  async assembleWithin(params, messages) {
    const place = placeSession(params.sessionKey, params.sessionId)
    const lane = laneOf(place)
    const state = await this.lanes.get(place, lane)
    // Each host message's index in the batch stored with this turn (-1: not stored).
    const at = []
    const batch = this.toMemory(place, messages, null, at)
    const lastUser = lastIndex(messages, (m) => m?.role === 'user')
    // The turn's prompt when the host sends it apart from the messages (OpenClaw's first
    // assembly of a run): the current turn, counted with the kept messages.
    const pending = pendingPrompt(params.prompt, messages)
    this.learnOverhead(state, messages)
    const turn = this.turnBudget(state, params, pending, lastUser >= 0 ? messages[lastUser] : null, messages)
    if (!turn.first) {
      const same = await this.sameContext(place, lane, state, messages, pending === null ? lastUser : messages.length, pending, turn.budget)
      if (same !== null) return same
    }
    const budget = turn.budget
    const memory = await this.memory()
    // The thread block and the history each get at most a quarter of the budget; the
    // assembly budgets them with the rest and leaves out one that does not fit.
    const share = Math.min(this.options.historyTokens, Math.floor(Math.min(budget, MAX_BUDGET) / 4))
    const thread = await this.threadBlock(place)
    const history = this.historyInput(place, params, share)
    const asked = params.prompt ?? (lastUser >= 0 ? textOf(messages[lastUser]) : '') ?? ''
    // The blocks tell which message this one replies to; the search is by its words.
    const quoted = await this.quotedReply(place, asked)
    const query = withoutBlocks(asked)
    const queryVector = (await this.embedder?.query(query)) ?? undefined
    const now = Date.now()
    const host = messages.map((m, i) => ({ message: at[i] >= 0 ? at[i] : undefined, user: m?.role === 'user', tokens: centralEstimate(m) }))
    if (pending !== null) host.push({ user: true, tokens: pending.tokens })
    // One call: the turn stored (what the store has not seen of the host's transcript)
    // and recorded as this session's conversation, then the layers assembled.
    const out = await memory.assemble({
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
      speakers: this.senders.speakers(place.sessionId, this.options.speakers),
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
    const from = Math.min(out.keepFrom, messages.length)
    // What the context must hold whatever the budget: the policy and the current turn.
    const current = lastIndex(host, (h) => h.user)
    const floor = out.tokens.policy + tokenBound(host.slice(Math.max(0, current)).reduce((n, h) => n + h.tokens, 0))
    let kept = messages.slice(from)
    kept = this.reattach(place, lane, out.summaryVersion ?? null, messages.slice(0, from), kept)
    // The host's message objects are never changed; this turn's part is a message of its
    // own, which OpenClaw sends once and does not write to its transcript.
    const turnPart = out.turn === '' ? null : turnMessage(out.turn, now)
    if (turnPart !== null) kept = [...kept, turnPart]
    const result = { messages: kept, estimatedTokens: out.tokens.total }
    if (out.system !== '') result.systemPromptAddition = `<conversation_memory>\n${out.system}</conversation_memory>`
    // The first assembly of a turn saw the host's whole transcript; a later one of the
    // same turn (OpenClaw's loop, on what the first returned) gives the same context.
    const replay = { first: from < messages.length ? identity(messages[from]) : null, turnPart, system: result.systemPromptAddition }
    // What the model is sent of it, by the estimates already made (a message re-attached
    // media to is estimated anew).
    const sent = Math.round(
      (out.system === '' ? 0 : tokenEstimate(result.systemPromptAddition).estimate) +
        kept.reduce((n, m, i) => n + (m === messages[from + i] ? host[from + i].tokens : centralEstimate(m)), 0) +
        (pending?.tokens ?? 0),
    )
    Object.assign(state, { tokens: out.tokens.total, floor, sent })
    if (turn.first) {
      Object.assign(state, { verbatim: out.verbatim, foldThrough: out.foldThrough ?? null })
      state.turn = { prompt: turn.prompt, promptTokens: turn.promptTokens, at: now, budget, sent, replay }
    } else if (state.turn !== undefined) {
      Object.assign(state.turn, { budget: Math.min(state.turn.budget, budget), sent, replay })
    }
    await this.lanes.save(place, lane)
    return result
  }

  /**
   * A later assembly of the turn whose first one the engine remembers, as OpenClaw's loop
   * makes it (on what the first returned, the prompt now among the messages at `current`
   * or still apart as `pending`, then the loop's tool calls and results): the first's
   * context, the same kept messages from the
   * same one on and the same turn message, while what the loop added fits its budget;
   * else null (a new assembly, within that budget, decides). The messages are stored as
   * an assembly stores them.
   */
  async sameContext(place, lane, state, messages, current, pending, budget) {
    const turn = state.turn
    const replay = turn?.replay
    if (replay === undefined || current < 0) return null
    const from = replay.first === null ? current : messages.findIndex((m) => identity(m) === replay.first)
    if (from < 0 || from > current) return null
    // The prompt as the host now sends it (among the messages, with its timestamp, or
    // apart again), and what the loop added after it.
    const prompt = pending === null ? centralEstimate(messages[current]) : pending.tokens
    const grown = prompt - turn.promptTokens + messages.slice(current + 1).reduce((n, m) => n + centralEstimate(m), 0)
    const tokens = state.tokens + (grown > 0 ? tokenBound(grown) : 0)
    if (tokens > budget) return null
    await this.store_(place, messages)
    const kept = messages.slice(from)
    const result = { messages: replay.turnPart === null ? kept : [...kept, replay.turnPart], estimatedTokens: tokens }
    if (replay.system !== undefined) result.systemPromptAddition = replay.system
    state.sent = Math.round(turn.sent + grown)
    await this.lanes.save(place, lane)
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
    // The speakers known when the model calls a tool (the senders learnt by then).
    const scope = () => ({ sessionId: place.sessionId, threadKey: laneOf(place), speakers: this.senders.speakers(place.sessionId, this.options.speakers) })
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

  /**
   * Compacts the session's thread, as the host's reason for asking calls for. The engine
   * never rewrites the host's transcript; what it sends is its assembly, so:
   * - after an overflow (`runtimeContext.trigger` "overflow" or "timeout_recovery": the
   *   request was refused), everything before the current turn folds into the summary
   *   and the thread's next contexts stay within what the refused request left room for
   *   (`currentTokenCount` over `tokenBudget`; else half the last context), so the retry
   *   is smaller;
   * - asked by the user (`/compact`: `forceReason` "manual", `compactionTarget`
   *   "threshold", or forced with no reason), everything before the current turn folds;
   * - before a turn, when the host projects its next request past its threshold (OpenClaw's
   *   preflight: `tokenBudget` less the reserve its first assembly named as
   *   `maxOutputTokens`), the thread's next contexts shrink by that much; the summary
   *   stays (it changes in rare steps), and the answer is a no-op the host accepts;
   * - unforced, when the store's triggers say a fold is due.
   * Says what it freed; `compacted: false` with "nothing to fold or drop" only when the
   * context holds nothing but what it must.
   */
  async compact(params) {
    try {
      const place = placeSession(params?.sessionKey, params?.sessionId)
      const lane = laneOf(place)
      const rc = params?.runtimeContext ?? {}
      if (params?.force !== true) {
        const done = await this.compactLane(place, lane, { force: false }, rc)
        if (done === null) return { ok: true, compacted: false, reason: 'below threshold: no fold is due in this thread' }
        return await this.compacted(place, lane, done, done.tokensBefore, done.tokensAfter, `thread summary v${done.summaryVersion}: ${done.folded} messages folded`)
      }
      const overflow = rc.trigger === 'overflow' || rc.trigger === 'timeout_recovery'
      const manual = !overflow && (rc.forceReason === 'manual' || rc.trigger === 'manual' || params?.compactionTarget === 'threshold' || rc.trigger === undefined)
      const state = await this.lanes.get(place, lane)
      if (!overflow && !manual) return await this.preflight(place, lane, state, params)
      const through = await this.beforeCurrentTurn(place, lane)
      const done = through === null ? null : await this.compactLane(place, lane, { through }, rc)
      // The host retries the turn: its next assembly decides anew.
      await this.lanes.newTurn(place, lane)
      let cap = null
      if (overflow) {
        const current = positive(params?.currentTokenCount)
        const budget = positive(params?.tokenBudget)
        cap = await this.squeeze(place, lane, state, current !== undefined && budget !== undefined && current > budget ? current - budget : null)
      }
      if (done === null && cap === null) {
        return { ok: true, compacted: false, reason: 'nothing to fold or drop: the thread holds only what its current turn must' }
      }
      const parts = []
      if (done !== null) parts.push(`thread summary v${done.summaryVersion}: ${done.folded} messages before the current turn folded`)
      if (cap !== null) parts.push(`the thread's next contexts within ${cap} tokens (the last took ${state.tokens})`)
      const tokensBefore = state.tokens ?? done.tokensBefore
      const tokensAfter = Math.min(tokensBefore, cap ?? done.tokensAfter)
      return await this.compacted(place, lane, done, tokensBefore, tokensAfter, parts.join('; '))
    } catch (err) {
      this.note('compact', err)
      return { ok: false, compacted: false, reason: err instanceof Error ? err.message : String(err) }
    }
  }

  /**
   * OpenClaw's preflight: its projection of the next request (`currentTokenCount`) against
   * its threshold (`tokenBudget` less the reserve). The thread's next contexts shrink by
   * what the projection is over; the answer is one the host takes as nothing to do.
   */
  async preflight(place, lane, state, params) {
    const current = positive(params?.currentTokenCount)
    const budget = positive(params?.tokenBudget)
    // OpenClaw's threshold keeps its reserve for the reply (what its first assembly names).
    const reserve = positive(state.reserve) ?? 0
    const threshold = budget === undefined ? undefined : budget - reserve
    const over = current !== undefined && threshold !== undefined && current > threshold ? current - threshold : null
    const cap = over === null ? null : await this.squeeze(place, lane, state, over)
    const said = cap === null ? 'nothing to shrink' : `the thread's next contexts within ${cap} tokens (the last took ${state.tokens})`
    return { ok: true, compacted: false, reason: `already under target: the engine assembles this thread within the budget; ${said}` }
  }

  /**
   * Caps the lane's next contexts: by `over` (tokens the host's request was past its
   * limit) and a tenth of the last context besides, or by half the last context when the
   * host did not say. Null when the last context held only what it must (the policy, the
   * current turn) or no context of the lane is known.
   */
  async squeeze(place, lane, state, over) {
    const last = state.tokens
    if (typeof last !== 'number' || last <= 1) return null
    if ((typeof state.cap === 'number' && last > state.cap) || last <= state.floor * FLOOR_SLACK) return null
    const cap = Math.max(1, Math.floor(over === null ? last / 2 : last - over * OVER_RATIO - last / 10))
    state.cap = cap
    await this.lanes.save(place, lane)
    return cap
  }

  /** A compaction's result as OpenClaw reads it. */
  async compacted(place, lane, done, tokensBefore, tokensAfter, reason) {
    const summary = await (await this.memory()).record(place.sessionId, 'thread_summary', lane)
    return { ok: true, compacted: true, reason, result: { summary: summary?.body, tokensBefore, tokensAfter, details: done ?? undefined } }
  }

  /**
   * The stored id of the lane's newest message before its current turn (the newest user
   * message and what follows it), or null when the lane holds nothing before it.
   */
  async beforeCurrentTurn(place, lane) {
    const recent = await (await this.memory()).recent(place.sessionId, lane, CURRENT_TURN_SCAN)
    const user = lastIndex(recent, (m) => m.role === 'user')
    return user > 0 ? recent[user - 1].messageId : null
  }

  async dispose() {
    try {
      const store = this.store ?? (await this.opening?.catch(() => null))
      this.store = null
      await store?.close()
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
/**
 * The engine's estimate of a context against the tokens the model counts for it (the
 * budget's bound over the central estimate, about 1.25): a request `over` real tokens past
 * a limit frees this many estimated tokens per token.
 */
const OVER_RATIO = 1.25
/** A context within this factor of what it must hold has nothing left to drop. */
const FLOOR_SLACK = 1.1
/** Messages read back to find a lane's current turn (its newest user message). */
const CURRENT_TURN_SCAN = 64
/** How long the first assembly of a turn speaks for later ones of the same turn (ms). */
const TURN_MS = 30 * 60_000

/**
 * The prompt a host sends apart from `messages` (`{ text, tokens }`), or null when it
 * sent none or it is already the newest message.
 */
function pendingPrompt(prompt, messages) {
  if (typeof prompt !== 'string' || prompt.trim() === '') return null
  const last = messages[messages.length - 1]
  if (last?.role === 'user' && (textOf(last) ?? '').includes(prompt)) return null
  return { text: prompt, tokens: centralEstimate({ role: 'user', content: prompt }) }
}

/** Whether the host hands back the engine's turn message of `text` (with a timestamp before it, perhaps). */
function handedBack(messages, text) {
  return Array.isArray(messages) && messages.some((m) => isTurnMessage(m) && (textOf(m) ?? '').includes(text))
}

/** What tells a host's message apart from the others of its transcript, as it comes back. */
function identity(message) {
  const text = textOf(message)
  return `${message?.role}\u0000${messageId(message, text ?? JSON.stringify(message?.content ?? null) ?? '')}`
}

/** Whether a transcript ends with the assistant's answer (not a prompt or a tool result). */
function answered(messages) {
  const last = messages[messages.length - 1]
  if (last?.role !== 'assistant') return false
  return !(Array.isArray(last.content) && last.content.some((b) => b?.type === 'toolCall' || b?.type === 'tool_use'))
}

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
