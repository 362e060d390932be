// The OpenClaw plugin of @openclaw/context-engine. These declarations are structural:
// they need no `openclaw` install, and `integration/openclaw` checks them against the
// real plugin SDK (`ContextEngine`, `OpenClawPluginApi`).

import type { ChannelStore, CompactionResult, ToolDefinition } from '../index'

/** The engine's id: the plugin id, the registered id and `info.id`. */
export declare const ENGINE_ID: 'context-engine'

/** The plugin's config (`plugins.entries["context-engine"].config`). */
export interface ContextEngineOptions {
  /** The SQLite file (default `<agentDir>/context-engine/memory.sqlite`). */
  path?: string
  /**
   * A PostgreSQL database every gateway host shares
   * (`postgres://user:password@host:port/database`): the memory is kept there instead of
   * the SQLite file, so any host can serve any conversation. A database that does not
   * answer degrades each turn to the host's own messages, with a diagnostic.
   */
  url?: string
  /** Connections to PostgreSQL at most, per host (default 8). */
  poolSize?: number
  /**
   * With `url`: the certificates (PEM) of the authority that signed the database server's
   * certificate, trusted besides the public roots; given, the connection is TLS.
   */
  tlsCa?: string
  /** Policy text put first in the memory section (default none). */
  policy?: string
  /** Personality text put after the policy (default none). */
  personality?: string
  /**
   * `extractive` (default): summaries without a model call. `llm`: the host's model
   * (`runtimeContext.llm.complete`) writes them, validated, with the extractive summary
   * as the fallback when it fails, times out or answers another structure.
   */
  summarizer?: 'extractive' | 'llm'
  /** Longest wait for a model summary in ms (default 20,000). */
  summarizerTimeoutMs?: number
  /** Retrieved memories at most (default 5). */
  memories?: number
  /** No longer used (accepted so older configs stay valid): the assembly shares the budget among its layers by its own policy. */
  memoryBudgetTokens?: number
  /**
   * While the host's transcript and the engine's fixed parts (policy, history) fit this
   * share of `tokenBudget` (default 0.75, above 0 and at most 1), the host's messages pass
   * through unchanged and nothing is retrieved from what they already hold: a session that
   * fits sees its whole transcript at the cost of sending it. Past it, the newest messages
   * are kept from a step line on (between one and two quarters of this share of the budget,
   * growing append-only and moving on a step at a time, the summary changing only then, so a
   * prompt cache keeps the prefix between steps; the same window however the thread was
   * folded), and what the question matches near its best match is retrieved within the room
   * left.
   */
  contextThreshold?: number
  /**
   * Most tokens of earlier messages retrieved for each turn's question (default: no cap of
   * its own, the room the budget leaves after the kept messages; 0: off). Only what clears
   * the relevance bar comes back (a match whose words weigh enough: a rare word, or
   * several), never from messages already in the context, with the turns around them,
   * dated, in the turn message: sent once, after everything a prompt cache reuses.
   */
  recallTokens?: number
  /**
   * Give the model `conversation_search` and `conversation_expand` over the stored
   * conversation (the plugin registers them) and say so in the prompt (default true).
   * A direct caller of {@link createContextEngine} that does not hand
   * {@link MemoryContextEngine.agentTools} to its model sets this to false.
   */
  recallTools?: boolean
  /** After a compaction, re-attach this thread's images once (default true). */
  reattachMedia?: boolean
  /**
   * Past `contextThreshold`, fold the messages before the kept window into the thread summary
   * when the window moves on a step and at least 10 user turns wait outside the summary, in
   * one large step (default true); they stay retrievable word for word. false: only the
   * store's compaction triggers fold.
   */
  compactWhenTrimming?: boolean
  /**
   * Add the thread key's earlier conversations by calendar tiers (the last 30 minutes and
   * today in full, yesterday and up to 7 days as summaries; this session left out) as
   * `<conversation_history>` (default true).
   */
  history?: boolean
  /** Add the `<thread-status>` block: continuation or new conversation (default true). */
  threadStatus?: boolean
  /** Most tokens of the history (default 30,000, and at most a quarter of the budget). */
  historyTokens?: number
  /** IANA time zone of the history's days and clock times (default `"UTC"`). */
  timeZone?: string
  /**
   * For a Slack channel thread session, add the thread's earlier messages by name as
   * `<slack_thread_context>` (the newest `threadBlockLimit` before the current question,
   * bot replies included) inside the history's share of the budget (default true). Needs
   * a Slack source: the host's `channelStore`, or `slack.botToken`.
   */
  threadBlock?: boolean
  /** Messages of the thread block at most (default 15). */
  threadBlockLimit?: number
  /**
   * The engine's own Slack source for the thread block: `conversations.replies` (and
   * `users.info` for authors Slack does not name) with this bot token, through a
   * `ChannelStore`'s rate limiter (`rateLimit`, `"default"` or `"slack-non-marketplace"`)
   * and 5-minute thread cache. `apiUrl` defaults to `https://slack.com/api`.
   */
  slack?: { botToken: string; apiUrl?: string; rateLimit?: 'default' | 'slack-non-marketplace' }
  /**
   * Who writes the chat's turns, by name (at most 16 names each): a question naming one
   * ("What did Ann say about the trip?") ranks that speaker's turns first and searches by
   * its other words. Also the senders OpenClaw names in its "Conversation info" block
   * (`sender.name`, `sender.username`) as the user's, and the names the conversation makes
   * clear (a speaker the other greets by name, "Hey Ann!").
   */
  speakers?: { user?: string[]; assistant?: string[] }
  /**
   * Compaction thresholds: 30 messages, 2,500 tokens, 24 hours; keep at most 10, within
   * half the token threshold; fold at least 10 (the defaults).
   */
  compaction?: {
    maxRecentMessages?: number
    maxRecentTokens?: number
    maxSummaryAgeMs?: number
    keepRecent?: number
    minFold?: number
  }
}

/** What the host gives the engine besides its config. */
export interface EngineHost {
  /** The agent's directory (the SQLite file goes under it by default). */
  agentDir?: string
  logger?: { warn?: (message: string) => void }
  /**
   * The gateway's `ChannelStore` (fed by its platform events): the source of the thread
   * block for Slack thread sessions, ahead of the config's `slack`; and, with
   * `buildContext`, of the message a Discord or Telegram turn replies to when OpenClaw
   * names it without its body (fetched once through the store's fetcher when the store
   * lacks it), which the assembly shows as the quoted-reply layer.
   */
  channelStore?: Pick<ChannelStore, 'threadContextBlock'> & Partial<Pick<ChannelStore, 'buildContext'>>
  /**
   * The host's embedding model: OpenClaw's embedding provider (`embedBatch`, and
   * `embedQuery` for the question when it has one) or a function `embed(texts)`. After
   * each turn the stored messages without a vector get theirs (64 a call, at most 4 calls
   * a turn); before each assembly the question gets its own, and the turns nearest it join
   * those its words find (reciprocal rank fusion). Each call has 5 s; a fault or a late
   * answer is a diagnostic, and the words alone are searched. Absent: words only.
   */
  embedder?: EmbedText | EmbeddingProviderLike
  /**
   * The host's own config (OpenClaw's, as its plugin API and engine factory give it):
   * the `contextWindow` and `maxTokens` of the model a call names
   * (`models.providers[provider].models[]`), so that every context leaves the model room
   * for its reply and the host's own part of the request (its system prompt and tools,
   * learnt from the model's usage). Without it the engine learns the window from the
   * calls themselves.
   */
  config?: HostConfigLike
}

/** The part of a host's config the engine reads. */
export interface HostConfigLike {
  models?: { providers?: Record<string, { models?: Array<{ id: string; contextWindow?: number; maxTokens?: number }> }> }
  [key: string]: unknown
}

/** A host's embedding function: one vector per text, in order. */
export type EmbedText = (texts: string[]) => Promise<ArrayLike<number>[]> | ArrayLike<number>[]

/** OpenClaw's embedding provider shape (only what the engine calls is named). */
export interface EmbeddingProviderLike {
  embedBatch(texts: string[]): Promise<number[][]>
  embedQuery?(text: string): Promise<number[]>
}

/** A message as OpenClaw's agent runtime keeps it (only what the engine reads is named). */
export interface HostMessage {
  role: string
  content?: unknown
  /** Epoch ms on chat turns (some host entries carry an ISO string instead). */
  timestamp?: unknown
}

/**
 * The user message `assemble` adds after the kept messages for one turn: its text is
 * `<memory_for_this_turn>` … `</memory_for_this_turn>`. Meant to be sent once; a host
 * that writes assembled messages to its transcript should leave it out
 * ({@link isTurnMessage}).
 */
export interface TurnMessage {
  role: 'user'
  content: [{ type: 'text'; text: string }]
  timestamp: number
}

/** What OpenClaw hands every lifecycle call. */
export interface HostSessionParams {
  sessionId: string
  sessionKey?: string
}

/** The host's model, when it offers one to context engines. */
export interface HostLlm {
  complete(params: {
    messages: Array<{ role: 'user'; content: string }>
    maxTokens?: number
    purpose?: string
    signal?: AbortSignal
  }): Promise<{ text: string }>
}

export interface HostRuntimeContext {
  tokenBudget?: number
  llm?: HostLlm
  [key: string]: unknown
}

/** A problem the engine met and passed through (logged as a warning as well). */
export interface EngineDiagnostic {
  method: string
  message: string
  at: number
}

/**
 * The context engine: every method resolves (bad input or a storage fault passes the
 * host's messages through and adds a diagnostic).
 */
export declare class MemoryContextEngine {
  constructor(options?: ContextEngineOptions, host?: EngineHost)
  readonly info: {
    id: 'context-engine'
    name: string
    version: string
    ownsCompaction: true
    transcriptSemantics: {
      currentTurnFence: 'before-current-turn-entry-v1'
      turnAdvancementIdempotency: 'atomic-idempotent-v1'
    }
  }
  /** The newest problems met (at most 100). */
  readonly diagnostics: EngineDiagnostic[]
  /** The SQLite file in use. */
  readonly dbPath: string
  ingest(params: HostSessionParams & { message: HostMessage; isHeartbeat?: boolean }): Promise<{ ingested: boolean }>
  ingestBatch(
    params: HostSessionParams & { messages: HostMessage[]; isHeartbeat?: boolean },
  ): Promise<{ ingestedCount: number }>
  /**
   * One accepted turn, written atomically and once per `advancementKey` (`duplicate` for
   * a host retry of a key already committed).
   */
  commitTurn(
    params: HostSessionParams & { advancementKey: string; messages: HostMessage[]; [key: string]: unknown },
  ): Promise<{ status: 'committed' | 'duplicate' }>
  /** After a committed turn: compacts the thread when due (the host's transcript is never rewritten). */
  maintain(
    params: HostSessionParams & { sessionFile?: string; runtimeContext?: HostRuntimeContext },
  ): Promise<{ changed: boolean; bytesFreed: number; rewrittenEntries: number; reason?: string }>
  /** Stores the turn's messages and compacts the thread when it is due. */
  afterTurn(
    params: HostSessionParams & {
      messages: HostMessage[]
      prePromptMessageCount: number
      sessionFile?: string
      tokenBudget?: number
      runtimeContext?: HostRuntimeContext
    },
  ): Promise<void>
  /**
   * The host's messages from where the thread summary stops, within `tokenBudget`
   * (opening on a user turn; the current turn always kept), as the host's own objects.
   * What changes seldom (policy, personality, thread summary, history) is the
   * `systemPromptAddition`; what this turn's question brought back (retrieved memories
   * and messages, the Slack thread block) is one {@link TurnMessage} after the kept
   * messages, so a prompt cache reuses the system prompt and the history. A turn message
   * handed back in `messages` is dropped: never kept twice, never stored.
   */
  assemble<M extends HostMessage>(
    params: HostSessionParams & {
      messages: M[]
      tokenBudget?: number
      prompt?: string
      model?: string
      runtimeContext?: HostRuntimeContext
    },
  ): Promise<{ messages: Array<M | TurnMessage>; estimatedTokens: number; systemPromptAddition?: string }>
  compact(
    params: HostSessionParams & { force?: boolean; tokenBudget?: number; runtimeContext?: HostRuntimeContext },
  ): Promise<{
    ok: boolean
    compacted: boolean
    reason?: string
    result?: { summary?: string; tokensBefore: number; tokensAfter?: number; details?: CompactionResult }
  }>
  /**
   * The model's tools over this engine's memory for one session, as OpenClaw's agent
   * tools: `conversation_search` (the chat's stored messages by their words, optionally
   * within a time window or one thread, with the summaries and facts that match) and
   * `conversation_expand` (a message or summary id back to the verbatim messages, within a
   * token budget). Scoped to the session `ctx.sessionKey` (else `ctx.sessionId`) names.
   * `execute` resolves to the JSON answer as text; a bad call or a storage fault is an
   * answer the model reads (`{"error":{...}}`), never a rejection.
   */
  agentTools(ctx?: { sessionKey?: string; sessionId?: string }): AgentTool[]
  dispose(): Promise<void>
}

/** A tool as OpenClaw's `api.registerTool` takes it (its `AgentTool`). */
export interface AgentTool {
  name: string
  label: string
  description: string
  /** The tool's JSON Schema (a {@link ToolDefinition}'s `input_schema`). */
  parameters: ToolDefinition['input_schema']
  /** Offered to the model directly, not behind OpenClaw's tool-search catalog. */
  catalogMode: 'direct-only'
  execute(
    toolCallId: string,
    params: unknown,
  ): Promise<{ content: Array<{ type: 'text'; text: string }>; details: { tool: string } }>
}

/** The names of the tools the plugin registers (declared in its manifest's `contracts.tools`). */
export declare const TOOL_NAMES: readonly string[]

/** Builds the engine directly (what `register` does for OpenClaw). */
export declare function createContextEngine(
  options?: ContextEngineOptions,
  host?: EngineHost,
): MemoryContextEngine

/**
 * Where an OpenClaw session key puts messages: the memory session (the key without its
 * `:thread:<ts>` / `:topic:<n>` part), the chat id, and the thread part.
 */
export declare function placeSession(
  sessionKey: string | undefined,
  sessionId: string,
): {
  sessionId: string
  chatId: string
  topicId: string | null
  replyTo: string | null
  /** The platform and the chat's kind of an `agent:<id>:<platform>:<kind>:<chat>` key. */
  platform: string | null
  kind: string | null
}

/** The thread key of a placement: `topic:<chat>:<n>`, `reply:<chat>:<ts>` or `root:<chat>`. */
export declare function laneOf(place: { chatId: string; topicId: string | null; replyTo: string | null }): string

/** The text put before media attached again after a compaction. */
export declare function recoveryPreamble(items: number): string

/**
 * Whether a message is a turn message of this engine (see {@link TurnMessage}), also as
 * OpenClaw hands it back with a timestamp put before its text.
 */
export declare function isTurnMessage(message: unknown): message is TurnMessage

/** The plugin definition OpenClaw loads. */
declare const plugin: {
  id: 'context-engine'
  name: string
  description: string
  register(api: {
    pluginConfig?: Record<string, unknown>
    logger?: { warn?: (message: string) => void }
    registerContextEngine: (
      id: string,
      factory: (ctx: { agentDir?: string }) => MemoryContextEngine,
    ) => void
    /** Where the host has it, the recall tools are registered through it. */
    registerTool?: (
      factory: (ctx: { agentDir?: string; sessionKey?: string; sessionId?: string }) => AgentTool[],
      opts: { names: string[] },
    ) => void
  }): void
}
export default plugin
