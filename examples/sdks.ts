// The package against the real SDK typings a gateway uses (type-checked by `npm test`,
// never run: it would call Slack and Anthropic). The tool definitions go to the Messages
// API as they are, and each fetcher is one @slack/web-api call, with no cast anywhere.
import type Anthropic from '@anthropic-ai/sdk'
import { WebClient } from '@slack/web-api'
import { ChannelStore, MemoryStore, memoryToolDefinitions, type ContextEngineError } from '@openclaw/context-engine'

const slack = new WebClient('xoxb-not-a-real-token')

export const store = new ChannelStore({
  rateLimit: { preset: 'slack-non-marketplace' },
  fetcher: {
    // `threadId` is required in a thread request: no `!` needed.
    fetchThread: (req) => slack.conversations.replies({ channel: req.channelId, ts: req.threadId, limit: req.limit, ...(req.cursor ? { cursor: req.cursor } : {}) }),
    fetchHistory: (req) => slack.conversations.history({ channel: req.channelId, limit: req.limit, ...(req.cursor ? { cursor: req.cursor } : {}) }),
    fetchMessages: (req) => slack.conversations.history({ channel: req.channelId, latest: req.messageIds[0] ?? '', inclusive: true, limit: 1 }),
  },
})

/** One turn: the definitions are `Anthropic.Tool[]` as returned. */
export async function request(channelId: string, anchor: string, question: string): Promise<Anthropic.MessageCreateParamsNonStreaming> {
  const tools: Anthropic.Tool[] = store.tools(channelId).definitions()
  const context = await store.buildContext(channelId, anchor).catch((e: ContextEngineError) => {
    if (e.code === 'ANCHOR_NOT_FOUND') return null
    throw e
  })
  return {
    model: 'claude-sonnet-4-5',
    max_tokens: 1024,
    system: context?.promptSection ?? '',
    tools,
    messages: [{ role: 'user', content: question }],
  }
}

/**
 * The memory tools in a tool loop: their definitions are `Anthropic.Tool[]` as returned,
 * and each answer is a `tool_result` block's content as it is.
 */
export async function recallTurn(
  anthropic: Anthropic,
  memory: MemoryStore,
  sessionId: string,
  question: string,
): Promise<Anthropic.Message> {
  const recall = memory.tools({ sessionId })
  const tools: Anthropic.Tool[] = recall.definitions()
  const same: Anthropic.Tool[] = memoryToolDefinitions()
  const messages: Anthropic.MessageParam[] = [{ role: 'user', content: question }]
  for (;;) {
    const response = await anthropic.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 1024, tools: tools.length > 0 ? tools : same, messages })
    const calls = response.content.filter((b): b is Anthropic.ToolUseBlock => b.type === 'tool_use')
    if (calls.length === 0) return response
    messages.push({ role: 'assistant', content: response.content })
    messages.push({
      role: 'user',
      content: calls.map((c) => ({ type: 'tool_result' as const, tool_use_id: c.id, content: recall.execute(c.name, c.input) })),
    })
  }
}
