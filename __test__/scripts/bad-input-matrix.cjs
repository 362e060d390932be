// The bad-input matrix: every export and method, each argument (and each field of an
// object argument) replaced in turn by each kind of hostile value. A call may return,
// throw or reject; it must never crash the process, and what it throws must be an
// Error: a TypeError / RangeError that names the export (or V8's own stack-overflow
// RangeError), or an Error with a `code`. Run as a child process by
// __test__/bad-input.spec.ts, which checks the exit code and the report printed here.
'use strict'
const m = require('@openclaw/context-engine')

// `new MemoryStore({ path })` with hostile strings creates files: keep them out of the checkout.
const fs = require('node:fs')
const scratch = fs.mkdtempSync(require('node:path').join(require('node:os').tmpdir(), 'bad-input-'))
process.chdir(scratch)
process.on('exit', () => fs.rmSync(scratch, { recursive: true, force: true }))

process.on('unhandledRejection', () => {})

const ts = (s) => `${1775835600 + s}.000100`
const author = { userId: 'U1', displayName: 'Sam' }
const message = (s) => ({ ts: ts(s), text: `message ${s}`, author })
const record = {
  artifact_id: 'F1',
  content_hash: 'a'.repeat(64),
  media_type: 'image/png',
  display_name: 'a.png',
  source_message_id: ts(1),
  source_thread_id: null,
  included_at_turn: 1,
}

/** The hostile values, by kind. `self` re-enters the export once (bounded). */
function hostile(self) {
  const cycle = { a: 1 }
  cycle.self = cycle
  let reads = 0
  const mutating = {}
  Object.defineProperty(mutating, 'text', { enumerable: true, get: () => (++reads % 2 ? 'text' : 42) })
  Object.defineProperty(mutating, 'ts', { enumerable: true, get: () => (reads % 2 ? ts(1) : { not: 'a string' }) })
  const trap = () => {
    throw new Error('trap')
  }
  const proxy = new Proxy({}, { get: trap, has: trap, ownKeys: trap, getOwnPropertyDescriptor: trap, getPrototypeOf: trap })
  const revocable = Proxy.revocable({}, {})
  revocable.revoke()
  let depth = 0
  const reentrant = {}
  Object.defineProperty(reentrant, 'id', {
    enumerable: true,
    get() {
      if (depth++ < 3) {
        try {
          self()
        } catch {}
      }
      return 'C1'
    },
  })
  return {
    missing: undefined,
    'wrong type (number)': 42,
    'wrong type (symbol)': Symbol('x'),
    'wrong type (function)': () => 1,
    null: null,
    NaN: NaN,
    Infinity: Infinity,
    '-Infinity': -Infinity,
    'huge number': 1e308,
    'huge string': 'x'.repeat(4_000_000),
    'huge array': Array.from({ length: 100_000 }, (_, i) => i),
    'lone surrogate': 'C\ud800',
    BigInt: 10n,
    cycle,
    'throwing Proxy': proxy,
    'revoked Proxy': revocable.proxy,
    'mutating getter': mutating,
    're-entrant getter': reentrant,
  }
}

/**
 * Every entry point: a baseline argument list that works, and how to call it. Object
 * arguments are also attacked field by field.
 */
function entries() {
  const store = new m.ChannelStore({ clock: () => 1775835600000 + 60_000 })
  store.ingest({ type: 'message', channelId: 'C1', message: message(1) })
  const tools = store.tools('C1')
  const guard = new m.RuntimeGuard()
  const memory = new m.MemoryStore()
  const mm = { sessionId: 's', chatId: 'c', messageId: '1', role: 'user', text: 'hi there', ts: 1 }
  memory.ingest(Array.from({ length: 12 }, (_, i) => ({ ...mm, messageId: String(i + 1) })))
  const plan = memory.planCompaction('s', 'root:c', { force: true })
  const manifest = () => m.createAttachmentManifest()
  const snapshot = { channel: { id: 'C1', name: 'c', platform: 'slack' }, anchor: message(2), adjacentMessages: [message(1)] }
  const thread = { root: message(1), replies: [{ ...message(2), threadId: ts(1) }], totalReplyCount: 1 }
  const built = m.buildChannelSnapshot(snapshot)
  return {
    estimateTokens: [(...a) => m.estimateTokens(...a), ['hello']],
    truncateSnippet: [(...a) => m.truncateSnippet(...a), ['hello']],
    applyThreadBudget: [(...a) => m.applyThreadBudget(...a), [{ replies: [{ text: 'a', ts: ts(1) }], budgetTokens: 8000 }]],
    threadBudgetCut: [(...a) => m.threadBudgetCut(...a), [new Uint32Array([3, 4]), 8000]],
    buildChannelSnapshot: [(...a) => m.buildChannelSnapshot(...a), [snapshot]],
    buildThreadContext: [(...a) => m.buildThreadContext(...a), [thread, 8000]],
    buildThreadContextWithTelemetry: [(...a) => m.buildThreadContextWithTelemetry(...a), [thread, 8000]],
    buildContextPromptSection: [(...a) => m.buildContextPromptSection(...a), [{ snapshot: built }, { pretty: false }]],
    createAttachmentManifest: [(...a) => m.createAttachmentManifest(...a), []],
    recordAttachment: [(...a) => m.recordAttachment(...a), [manifest(), record]],
    isAlreadyAttached: [(...a) => m.isAlreadyAttached(...a), [manifest(), 'F1', null]],
    checkAttachment: [(...a) => m.checkAttachment(...a), [manifest(), { artifactId: 'F1', contentHash: 'a'.repeat(64) }]],
    getThreadAttachments: [(...a) => m.getThreadAttachments(...a), [manifest(), null]],
    serializeManifest: [(...a) => m.serializeManifest(...a), [manifest()]],
    loadManifestFromEntries: [(...a) => m.loadManifestFromEntries(...a), [[{ type: 'custom', customType: m.ATTACHMENT_MANIFEST_KEY, data: { entries: {} } }]]],
    sha256Hex: [(...a) => m.sha256Hex(...a), ['abc']],
    sha256HexAsync: [(...a) => m.sha256HexAsync(...a), ['abc']],
    stripThreadContext: [(...a) => m.stripThreadContext(...a), ['prompt', { resumed: true }]],
    repairOrphanJsonl: [(...a) => m.repairOrphanJsonl(...a), ['{"type":"user"}\n']],
    repairOrphanTurn: [(...a) => m.repairOrphanTurn(...a), [[{ type: 'user', message: { role: 'user', content: 'hi' } }]]],
    classifyOverflowError: [(...a) => m.classifyOverflowError(...a), [new Error('prompt is too long: 210000 tokens > 200000 maximum')]],
    decideOverflowRetry: [(...a) => m.decideOverflowRetry(...a), [[{ error: new Error('prompt is too long') }], { maxAttempts: 3 }]],
    planResumeRecovery: [(...a) => m.planResumeRecovery(...a), [new Error('No conversation found with session ID'), { previousRecoveries: 0 }]],
    readSdkSignals: [(...a) => m.readSdkSignals(...a), [[{ type: 'system', subtype: 'status' }]]],
    buildChannelTools: [(...a) => m.buildChannelTools(...a), [{ channel: { id: 'C1' }, messages: [message(1)] }]],
    'new ChannelStore': [(...a) => new m.ChannelStore(...a), [{ windowSize: 10, fetchTimeout: 100, rateLimit: { maxCallsPerMin: 5 } }]],
    'ChannelStore.ingest': [(...a) => store.ingest(...a), [{ type: 'message', channelId: 'C1', message: message(3) }]],
    'ChannelStore.ingestMany': [(...a) => store.ingestMany(...a), [[{ type: 'message', channelId: 'C1', message: message(4) }]]],
    'ChannelStore.ingestSlackEvent': [(...a) => store.ingestSlackEvent(...a), [{ type: 'message', channel: 'C1', ts: ts(5), user: 'U1', text: 'x' }]],
    'ChannelStore.ingestDiscordEvent': [(...a) => store.ingestDiscordEvent(...a), [{ op: 0, t: 'MESSAGE_CREATE', d: { id: '1573261620019200007', channel_id: '12', author: { id: '13', username: 'ana' }, content: 'x', attachments: [], mentions: [] } }]],
    'ChannelStore.ingestTelegramUpdate': [(...a) => store.ingestTelegramUpdate(...a), [{ update_id: 1, message: { message_id: 1, date: 1775835600, chat: { id: -100, type: 'supergroup', title: 'g' }, from: { id: 1, is_bot: false, first_name: 'A' }, text: 'x' } }]],
    'ChannelStore.ingestDiscordEvents': [(...a) => store.ingestDiscordEvents(...a), [[{ op: 0, t: 'TYPING_START', d: {} }]]],
    'ChannelStore.ingestTelegramUpdates': [(...a) => store.ingestTelegramUpdates(...a), [[{ update_id: 1, poll: {} }]]],
    'ChannelStore.laneOf': [(...a) => store.laneOf(...a), ['C1', ts(1)]],
    'ChannelStore.ingestSlackResponse': [(...a) => store.ingestSlackResponse(...a), ['C1', { ok: true, messages: [] }, { firstPage: true }]],
    'ChannelStore.setUsers': [(...a) => store.setUsers(...a), [[{ userId: 'U1', displayName: 'Sam' }]]],
    'ChannelStore.setChannel': [(...a) => store.setChannel(...a), [{ id: 'C1', name: 'c' }]],
    'ChannelStore.getMessage': [(...a) => store.getMessage(...a), ['C1', ts(1)]],
    'ChannelStore.threadActivity': [(...a) => store.threadActivity(...a), ['C1', ts(1)]],
    'ChannelStore.threadContextBlock': [(...a) => store.threadContextBlock(...a), ['C1', ts(1), { threadId: ts(1), limit: 5 }]],
    formatSlackThreadContext: [(...a) => m.formatSlackThreadContext(...a), [{ messages: [{ name: 'A', text: 'x' }], currentQuestion: 'q', limit: 3 }]],
    tokenEstimate: [(...a) => m.tokenEstimate(...a), ['hello', { model: 'm', counts: true }]],
    calibrate: [(...a) => m.calibrate(...a), [{ model: 'm', text: 'hello world', inputTokens: 3 }]],
    tokenCalibration: [(...a) => m.tokenCalibration(...a), ['m']],
    resetCalibration: [(...a) => m.resetCalibration(...a), []],
    'ChannelStore.buildContext': [(...a) => store.buildContext(...a), ['C1', ts(1), { adjacent: 5, budgetTokens: 8000 }]],
    'ChannelStore.getMedia': [(...a) => store.getMedia(...a), ['F1', 'C1']],
    'ChannelStore.stats': [(...a) => store.stats(...a), []],
    'ChannelStore.tools': [(...a) => store.tools(...a), ['C1', { toolNames: 'api', maxMediaBytes: 1000 }]],
    'ChannelTools.definitions': [(...a) => tools.definitions(...a), []],
    'ChannelTools.execute': [(...a) => tools.execute(...a), ['channel_messages', { message_ids: [ts(1)] }]],
    'new RuntimeGuard': [(...a) => new m.RuntimeGuard(...a), [{ inlineMaxBytes: 1000, maxAttempts: 3 }]],
    'RuntimeGuard.stripThreadContext': [(...a) => guard.stripThreadContext(...a), ['prompt', { resumed: true }]],
    'RuntimeGuard.observe': [(...a) => guard.observe(...a), [{ type: 'system', subtype: 'status' }, { labels: { runId: 'r' } }]],
    'RuntimeGuard.signals': [(...a) => guard.signals(...a), [{ labels: { runId: 'r' } }]],
    'RuntimeGuard.planMedia': [(...a) => guard.planMedia(...a), [[{ artifactId: 'F1', mediaType: 'image/png', data: new Uint8Array([1, 2, 3]) }], { labels: { sessionKey: 's' } }]],
    'RuntimeGuard.decideOverflow': [(...a) => guard.decideOverflow(...a), [new Error('prompt is too long'), { labels: { runId: 'r' } }]],
    'RuntimeGuard.planResumeRecovery': [(...a) => guard.planResumeRecovery(...a), [new Error('x'), { labels: { runId: 'r' } }]],
    'RuntimeGuard.endRun': [(...a) => guard.endRun(...a), [{ runId: 'r' }]],
    'RuntimeGuard.mediaEntry': [(...a) => guard.mediaEntry(...a), [{ sessionKey: 's' }]],
    'RuntimeGuard.loadMedia': [(...a) => guard.loadMedia(...a), [[]]],
    'RuntimeGuard.metrics': [(...a) => guard.metrics(...a), []],
    'RuntimeGuard.prometheus': [(...a) => guard.prometheus(...a), []],
    'new MemoryStore': [(...a) => new m.MemoryStore(...a), [{ path: ':memory:', compaction: { keepRecent: 5 } }]],
    'MemoryStore.ingest': [(...a) => memory.ingest(...a), [[{ ...mm, messageId: 'x', topicId: '7', replyTo: '1' }]]],
    'MemoryStore.commitTurn': [(...a) => memory.commitTurn(...a), ['turn-key', [{ ...mm, messageId: 'y' }]]],
    'MemoryStore.putConversation': [(...a) => memory.putConversation(...a), [{ chatId: 'c', sessionId: 'x', startedAt: 1, endedAt: 2, summary: 's', turns: [{ role: 'user', text: 't', ts: 1 }], transcript: '' }]],
    'MemoryStore.buildConversationContext': [(...a) => memory.buildConversationContext(...a), [{ chatId: 'c', maxTokens: 100, now: 5, timeZone: 'UTC', activeWindowMs: 10, continuationWindowMs: 10 }]],
    'MemoryStore.threadStatus': [(...a) => memory.threadStatus(...a), [{ chatId: 'c', now: 5, continuationWindowMs: 10 }]],
    readOpenClawTranscripts: [(...a) => m.readOpenClawTranscripts(...a), ['no-such-openclaw.sqlite', { since: 0 }]],
    'MemoryStore.recent': [(...a) => memory.recent(...a), ['s', 'root:c', 5]],
    'MemoryStore.unsummarized': [(...a) => memory.unsummarized(...a), ['s', 'root:c']],
    'MemoryStore.focusAnchor': [(...a) => memory.focusAnchor(...a), [{ ...mm, messageId: '99' }, 'root:c']],
    'MemoryStore.putRecord': [(...a) => memory.putRecord(...a), [{ sessionId: 's', kind: 'fact', threadKey: '', body: 'b', summaryVersion: 1, updatedAt: 1, messageRange: { from: '1', to: '2' } }]],
    'MemoryStore.record': [(...a) => memory.record(...a), ['s', 'thread_summary', 'root:c']],
    'MemoryStore.search': [(...a) => memory.search(...a), ['s', 'hi', { threadKey: 'root:c', k: 3, maxTokens: 100 }]],
    'MemoryStore.planCompaction': [(...a) => memory.planCompaction(...a), ['s', 'root:c', { force: true, now: 1 }]],
    'MemoryStore.applyCompaction': [(...a) => memory.applyCompaction(...a), [plan, { summary: 'x', now: 1 }]],
    'MemoryStore.compact': [(...a) => memory.compact(...a), ['s', 'root:c', { force: false, now: 1 }]],
    'MemoryStore.assemble': [(...a) => memory.assemble(...a), [{ sessionId: 's', threadKey: 'root:c', policy: 'p', personality: 'q', userMessage: 'hi', quotedReply: null, recent: 3, memories: 2, budgetTokens: 500 }]],
  }
}

/** The name an error from `entry` must carry: the export or method name. */
// A function by its name, a method as Class.method, a constructor by its class.
const exportName = (entry) => entry.replace(/^new /, '')

function judge(entry, err) {
  if (!(err instanceof Error)) return `threw a non-Error (${typeof err})`
  const msg = String(err.message)
  if (err instanceof RangeError && /Maximum call stack size exceeded/.test(msg)) return null
  if (err instanceof TypeError || err instanceof RangeError) {
    return msg.startsWith(`${exportName(entry)}: `) ? null : `${err.constructor.name} not naming the export: ${msg.slice(0, 160)}`
  }
  if (err.code) return null
  return `${err.constructor.name} without code: ${msg.slice(0, 160)}`
}

async function main() {
  const all = entries()
  let calls = 0
  const violations = []
  const outcomes = {}
  for (const [entry, [call, baseline]] of Object.entries(all)) {
    const slots = []
    // Each argument, then each field of an object argument (arrays: their first element's fields).
    for (let i = 0; i <= baseline.length; i++) slots.push({ arg: i })
    baseline.forEach((v, i) => {
      const target = Array.isArray(v) ? v[0] : v
      if (target && typeof target === 'object' && !(target instanceof Error) && !ArrayBuffer.isView(target)) {
        for (const key of Object.keys(target)) slots.push({ arg: i, key, inArray: Array.isArray(v) })
      }
    })
    for (const slot of slots) {
      const self = () => call(...baseline)
      for (const [kind, value] of Object.entries(hostile(self))) {
        const args = baseline.map((v) => (Array.isArray(v) ? v.map((x) => (x && typeof x === 'object' ? { ...x } : x)) : v && typeof v === 'object' && !(v instanceof Error) && !ArrayBuffer.isView(v) ? { ...v } : v))
        if (slot.key === undefined) args[slot.arg] = value
        else if (slot.inArray) args[slot.arg][0][slot.key] = value
        else args[slot.arg][slot.key] = value
        calls++
        let outcome = 'ok'
        try {
          const out = call(...args)
          if (out && typeof out.then === 'function') {
            await Promise.race([out, new Promise((_, reject) => setTimeout(() => reject(Object.assign(new Error('hung for 10 s'), { code: 'HUNG' })), 10_000))]).catch((err) => {
              outcome = err && err.code === 'HUNG' ? 'hung' : 'rejected'
              const bad = err && err.code === 'HUNG' ? 'a promise that never settles' : judge(entry, err)
              if (bad) violations.push(`${entry} ${slot.key ?? `arg ${slot.arg}`} = ${kind}: rejected: ${bad}`)
            })
          }
        } catch (err) {
          outcome = 'threw'
          const bad = judge(entry, err)
          if (bad) violations.push(`${entry} ${slot.key ?? `arg ${slot.arg}`} = ${kind}: ${bad}`)
        }
        outcomes[outcome] = (outcomes[outcome] || 0) + 1
      }
    }
  }
  process.stdout.write(JSON.stringify({ entries: Object.keys(all).length, calls, outcomes, violations }))
}

main().catch((e) => {
  process.stderr.write(String(e && e.stack))
  process.exit(2)
})
