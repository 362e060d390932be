// A gateway's use of every export (the drop-in layer and ChannelStore), type-checked in CI with `tsc --noEmit --strict`
// against the generated index.d.ts: if the typings drift from what a TypeScript caller
// writes, this file stops compiling.
import {
  ATTACHMENT_MANIFEST_KEY,
  RuntimeGuard,
  planResumeRecovery,
  repairOrphanTurn,
  type MediaPlan,
  type OverflowDecision,
  type ResumePlan,
  type RuntimeLabels,
  type StripResult,
  ChannelStore,
  buildChannelTools,
  type ChannelTool,
  type ToolDefinition,
  type BuiltContext,
  type ContextTokens,
  type FetchMediaRequest,
  type FetchRequest,
  type MediaContent,
  type StoreStats,
  type StoredMessageView,
  type ThreadSummary,
  SNIPPET_MAX_CHARS,
  THREAD_BUDGET_TOKENS,
  applyThreadBudget,
  buildChannelSnapshot,
  buildContextPromptSection,
  buildThreadContext,
  buildThreadContextWithTelemetry,
  checkAttachment,
  createAttachmentManifest,
  estimateTokens,
  getThreadAttachments,
  isAlreadyAttached,
  loadManifestFromEntries,
  recordAttachment,
  serializeManifest,
  sha256Hex,
  sha256HexAsync,
  truncateSnippet,
  type AttachmentCheck,
  type AttachmentManifest,
  type AttachmentRecord,
  type ChannelSnapshot,
  type ChannelSnapshotInput,
  type MessageInput,
  type ThreadContext,
  type ThreadInput,
  type ThreadReply,
  type Truncation,
} from '@openclaw/context-engine'

// Channel intake hands over messages in camelCase.
const sam = { userId: 'U024BE7LH', displayName: 'Sam' }
const root: MessageInput = {
  ts: '1775853000.000100',
  author: sam,
  text: 'Rollout plan for v2.4 — please review before Friday',
  replyCount: 3,
  lastReplyTs: '1775853300.000400',
  reactions: [{ name: 'eyes', count: 2 }],
  media: [{ artifactId: 'F07PLAN', mediaType: 'application/pdf', filename: 'plan.pdf', byteLength: 48_213 }],
}
const replies: MessageInput[] = [
  { ts: '1775853100.000200', author: { userId: 'U0G9QF9C6', displayName: 'Priya' }, text: 'LGTM', threadId: root.ts },
  { ts: '1775853300.000400', author: { userId: 'B01DEPLOY', displayName: 'Deploy Bot', isBot: true }, text: 'canary 5% ✅', threadId: root.ts },
]

const snapshotInput: ChannelSnapshotInput = {
  channel: { id: 'C0123', name: 'platform-eng', platform: 'slack' },
  anchor: replies[1]!,
  adjacentMessages: [root, { ts: '1775853400.000500', author: sam, text: 'lunch?', threadId: null }],
}
const snapshot: ChannelSnapshot = buildChannelSnapshot(snapshotInput)
const firstSnippet: string = snapshot.adjacent[0]?.snippet ?? ''
const activity: number | undefined = snapshot.adjacent[0]?.thread_activity?.reply_count

const thread: ThreadInput = { root, replies, totalReplyCount: 3 }
const context: ThreadContext | null = buildThreadContext(thread, THREAD_BUDGET_TOKENS)
const cut: ThreadReply[] = context?.replies.filter((r) => r.is_truncated) ?? []
const { threadContext: again, budgetUtilization } = buildThreadContextWithTelemetry(thread)
const spent: number = budgetUtilization ? budgetUtilization.actualTokens + budgetUtilization.threadBudgetTokens + budgetUtilization.messagesTruncated : 0
const omitted: [string, string] | null = again?.truncation.omitted_range_ts ?? null

// applyThreadBudget is generic: the caller's reply objects come back typed as they went in.
interface StoredReply {
  ts: string
  text: string
  permalink: string
}
const stored: StoredReply[] = replies.map((r) => ({ ts: r.ts, text: r.text, permalink: `https://example.slack.com/p${r.ts}` }))
const budgeted: { included: StoredReply[]; truncation: Truncation } = applyThreadBudget({ replies: stored, budgetTokens: 500 })
const links: string[] = budgeted.included.map((r) => r.permalink)

const tokens: number = estimateTokens(snapshot.anchor.text) + SNIPPET_MAX_CHARS
const snippet: string = truncateSnippet('  a   long\n\nmessage  ')

const section: string = buildContextPromptSection({ snapshot, threadContext: context }, { toolNames: 'api', directMessage: false })

// Attachment manifest: a plain object persisted as a session custom entry.
const manifest: AttachmentManifest = createAttachmentManifest()
const hash: string = sha256Hex(Buffer.from('plan.pdf bytes'))
recordAttachment(manifest, {
  artifact_id: 'F07PLAN',
  display_name: 'plan.pdf',
  media_type: 'application/pdf',
  content_hash: hash,
  source_message_id: root.ts,
  source_thread_id: root.ts,
  included_at_turn: 1,
})
recordAttachment(manifest, {
  artifactId: 'F07CHART',
  displayName: 'chart.png',
  mediaType: 'image/png',
  contentHash: sha256Hex('chart'),
  sourceMessageId: replies[0]!.ts,
  sourceThreadId: null,
  includedAtTurn: 2,
})
const attached: boolean = isAlreadyAttached(manifest, 'F07PLAN', hash)
const check: AttachmentCheck = checkAttachment(manifest, { artifactId: 'F99REUPLOAD', contentHash: hash })
const isReupload: boolean = check.match === 'content_hash' && check.record?.artifact_id === manifest.entries['F07PLAN']?.artifact_id
const fromThread: AttachmentRecord[] = getThreadAttachments(manifest, root.ts)
const topLevel: AttachmentRecord[] = getThreadAttachments(manifest, null)
const names: string[] = Object.values(manifest.entries).map((e) => e.display_name)
const persisted: string = serializeManifest(manifest)
const restored: AttachmentManifest = loadManifestFromEntries([
  { type: 'message' },
  { type: 'custom', customType: ATTACHMENT_MANIFEST_KEY, data: persisted },
])

async function hashUpload(bytes: Uint8Array): Promise<string> {
  return sha256HexAsync(bytes)
}

// ChannelStore: events in, context out, fetches through a typed fetcher.
const store = new ChannelStore({
  windowSize: 500,
  threadReplies: { max: 200, ttl: 120_000 },
  rateLimit: { preset: 'slack-non-marketplace', overflowStrategy: 'degrade' },
  clock: () => Date.now(),
  fetcher: {
    fetchThread: async (req: FetchRequest) => ({ ok: true, messages: [], has_more: false, channel: req.channelId }),
    fetchMedia: async (req: FetchMediaRequest) => new Uint8Array(req.byteLength),
  },
})
const applied: number = store.ingestMany([
  { type: 'message', channelId: 'C1', message: { ts: '1775835600.000100', text: 'hi', author: { userId: 'U1', displayName: 'Sam' } } },
  { type: 'reaction_added', channelId: 'C1', messageId: '1775835600.000100', reaction: 'eyes', userId: 'U2' },
])
store.ingestSlackEvent({ type: 'event_callback', team_id: 'T1', event: { type: 'message', channel: 'C1', user: 'U1', text: 'yo', ts: '1775835601.000100' } })
const nextCursor: string | null = store.ingestSlackResponse('C1', { ok: true, messages: [] }, { threadId: '1775835600.000100' })

async function answer(): Promise<string> {
  const ctx: BuiltContext = await store.buildContext('C1', '1775835601.000100', { adjacent: 20, budgetTokens: 4000, toolNames: 'api' })
  const snap: ChannelSnapshot = ctx.snapshot
  const thread: ThreadContext | null = ctx.thread
  const t: ContextTokens = ctx.tokens
  const media: MediaContent = await store.getMedia('F1')
  const stats: StoreStats = store.stats()
  const summaryOfThread: ThreadSummary | null = store.threadActivity('C1', '1775835600.000100')
  const held: StoredMessageView | null = store.getMessage('C1', '1775835600.000100')
  return `${snap.anchor.text} ${thread?.truncation.total_replies ?? 0} ${t.total} ${ctx.apiCalls} ${ctx.notes.join(' ')} ${media.note ?? media.contentHash} ${stats.caches.threadReplies.hits} ${summaryOfThread?.participant_names.join(',')} ${held?.text} ${applied} ${nextCursor}`
}

// The channel tools, scoped to one channel, and the drop-in builder.
async function search(store: ChannelStore): Promise<string> {
  const tools = store.tools('C1', { maxMediaBytes: 1_000_000 })
  const defs: ToolDefinition[] = tools.definitions()
  const found: string = await tools.execute('channel_context', { intent: 'rollout plan', max_results: 5 })
  const [context, messages]: [ChannelTool, ChannelTool] = buildChannelTools({
    channel: { id: 'C1', name: 'platform-eng' },
    messages: [{ ts: '1775835600.000100', author: { userId: 'U1', displayName: 'Sam' }, text: 'Rollout plan' }],
    fetcher: { fetchThread: async ({ threadId }) => [{ ts: threadId!, author: { userId: 'U1', displayName: 'Sam' }, text: 'root' }] },
  })
  const spread = { ...context }
  const thread: string = await messages.execute('toolu_01', { thread_id: '1775835600.000100' })
  return `${defs[0].name} ${tools.channelId} ${found.length} ${spread.name} ${thread.length}`
}

/** The runtime guard as a runner uses it: strip, plan media, observe, decide. */
export function guarded(prompt: string, bytes: Uint8Array): string {
  const guard = new RuntimeGuard({ inlineMaxBytes: 128 * 1024 })
  const labels: RuntimeLabels = { runId: 'r1', sessionId: 's1', provider: 'anthropic', attempt: 1 }
  const stripped: StripResult = guard.stripThreadContext(prompt, { resumed: true, labels })
  const plans: MediaPlan[] = guard.planMedia([{ mediaType: 'image/png', filename: 'a.png', data: bytes }], { labels })
  guard.observe({ type: 'system', subtype: 'compact_boundary', compact_metadata: { trigger: 'auto', pre_tokens: 1 } }, { labels })
  const decision: OverflowDecision = guard.decideOverflow(new Error('prompt is too long: 2 tokens > 1 maximum'), { labels })
  const plan: ResumePlan = planResumeRecovery('No conversation found with session ID: x')
  const repaired = repairOrphanTurn([{ type: 'message', message: { role: 'user', content: 'hi' } }])
  return `${stripped.reason} ${plans[0].mode} ${decision.action} ${plan.action} ${repaired.repaired} ${guard.prometheus().length}`
}

export const summary = {
  guarded,
  search,
  firstSnippet,
  activity,
  cut,
  spent,
  omitted,
  links,
  tokens,
  snippet,
  section,
  attached,
  isReupload,
  fromThread,
  topLevel,
  names,
  restored,
  hashUpload,
  answer,
}
