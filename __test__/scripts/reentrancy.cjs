// Deep re-entrancy through every class of entry point: a clock, a getter, a toJSON or
// a fetcher that calls the same API again until the stack runs out. Each case must end
// in a catchable RangeError (or, for calls documented never to throw, no throw), never
// in a crash. Run as a child process by __test__/reentrancy.spec.ts, which checks the
// exit code and the JSON this prints.
'use strict'
const m = require('@openclaw/context-engine')

process.on('unhandledRejection', () => {})

const ts = (s) => `${1775835600 + s}.000100`
const author = { userId: 'U1', displayName: 'Sam' }
const message = (s) => ({ ts: ts(s), text: `message ${s}`, author })
const results = []

/** Runs `call` (which recurses through `self`) and records how it ended. */
async function run(name, call) {
  if (process.env.REENTRANCY_TRACE) process.stderr.write(`${name}\n`)
  let outcome
  try {
    const out = call()
    if (out && typeof out.then === 'function') {
      try {
        await out
        outcome = 'resolved'
      } catch (e) {
        outcome = `rejected ${e && e.constructor ? e.constructor.name : typeof e}`
      }
    } else {
      outcome = 'returned'
    }
  } catch (e) {
    outcome = `threw ${e && e.constructor ? e.constructor.name : typeof e}`
  }
  results.push({ name, outcome })
}

/** An object whose `key` getter calls `again()` before answering `value`. */
const reentrant = (base, key, again, value) =>
  Object.defineProperty({ ...base }, key, {
    enumerable: true,
    get() {
      again()
      return value
    },
  })

async function main() {
  // 1. A clock that calls back into the store (its `stats`, which reads the clock), for
  //    every method that reads the clock.
  for (const method of ['stats', 'now', 'ingest', 'ingestMany', 'threadActivity', 'buildContext', 'tools']) {
    let store
    const args = {
      stats: [],
      now: [],
      ingest: [{ type: 'message', channelId: 'C', message: message(1) }],
      ingestMany: [[{ type: 'message', channelId: 'C', message: message(1) }]],
      getMessage: ['C', ts(1)],
      threadActivity: ['C', ts(1)],
      buildContext: ['C', ts(1)],
      tools: ['C'],
    }[method]
    store = new m.ChannelStore({ clock: () => (store.stats(), Date.now()) })
    await run(`ChannelStore.${method} through clock`, () => {
      const r = store[method](...args)
      return method === 'tools' ? r.execute('channel_context', { intent: 'x' }) : r
    })
  }

  // 2. A getter in the argument that calls the same export again.
  const snapshot = { channel: { id: 'C', name: 'c', platform: 'slack' }, adjacentMessages: [] }
  const thread = { root: message(1), replies: [message(2)] }
  const free = {
    buildChannelSnapshot: (self) => [reentrant(snapshot, 'anchor', self, message(1))],
    buildThreadContext: (self) => [reentrant(thread, 'replies', self, [])],
    buildThreadContextWithTelemetry: (self) => [reentrant(thread, 'replies', self, [])],
    applyThreadBudget: (self) => [reentrant({}, 'replies', self, [])],
    buildContextPromptSection: (self) => [reentrant({}, 'snapshot', self, null)],
    recordAttachment: (self) => [m.createAttachmentManifest(), reentrant({}, 'artifact_id', self, 'F1')],
    checkAttachment: (self) => [m.createAttachmentManifest(), reentrant({}, 'artifactId', self, 'F1')],
    isAlreadyAttached: (self) => [reentrant({}, 'entries', self, {}), 'F1'],
    getThreadAttachments: (self) => [reentrant({}, 'entries', self, {}), null],
    serializeManifest: (self) => [reentrant({}, 'entries', self, {})],
    loadManifestFromEntries: (self) => [[reentrant({ type: 'custom' }, 'customType', self, m.ATTACHMENT_MANIFEST_KEY)]],
    classifyOverflowError: (self) => [reentrant({}, 'message', self, 'prompt is too long')],
    decideOverflowRetry: (self) => [[reentrant({}, 'error', self, new Error('prompt is too long'))]],
    planResumeRecovery: (self) => [new Error('x'), reentrant({}, 'hasResumeSession', self, true)],
    readSdkSignals: (self) => [[reentrant({}, 'type', self, 'system')]],
    repairOrphanTurn: (self) => [[reentrant({}, 'type', self, 'user')]],
    stripThreadContext: (self) => ['prompt', reentrant({}, 'resumed', self, true)],
    buildChannelTools: (self) => [reentrant({ messages: [] }, 'channel', self, { id: 'C' })],
  }
  for (const [name, args] of Object.entries(free)) {
    const self = () => m[name](...args(self))
    await run(`${name} through a getter`, self)
  }

  // 3. Class methods through a getter (ChannelStore, ChannelTools, RuntimeGuard).
  const store = new m.ChannelStore()
  const storeCalls = {
    ingest: (self) => [reentrant({ type: 'message', channelId: 'C' }, 'message', self, message(1))],
    ingestMany: (self) => [[reentrant({ type: 'message', channelId: 'C' }, 'message', self, message(1))]],
    ingestSlackEvent: (self) => [reentrant({ type: 'message', channel: 'C' }, 'ts', self, ts(1))],
    ingestSlackResponse: (self) => ['C', reentrant({ ok: true }, 'messages', self, [])],
    setChannel: (self) => [reentrant({}, 'id', self, 'C')],
    setUsers: (self) => [[reentrant({}, 'id', self, 'U1')]],
    buildContext: (self) => ['C', ts(1), reentrant({}, 'adjacent', self, 5)],
    tools: (self) => ['C', reentrant({}, 'toolNames', self, 'api')],
  }
  for (const [name, args] of Object.entries(storeCalls)) {
    const self = () => store[name](...args(self))
    await run(`ChannelStore.${name} through a getter`, self)
  }
  const tools = store.tools('C')
  {
    const self = () => tools.execute('channel_messages', reentrant({}, 'message_ids', self, [ts(1)]))
    await run('ChannelTools.execute through a getter', self)
  }
  const guard = new m.RuntimeGuard()
  const guardCalls = {
    observe: (self) => [reentrant({}, 'type', self, 'system')],
    planMedia: (self) => [[reentrant({}, 'mediaType', self, 'image/png')]],
    decideOverflow: (self) => [reentrant({}, 'message', self, 'prompt is too long')],
    planResumeRecovery: (self) => [reentrant({}, 'message', self, 'x')],
    signals: (self) => [reentrant({}, 'labels', self, {})],
    mediaEntry: (self) => [reentrant({}, 'sessionKey', self, 's')],
    endRun: (self) => [reentrant({}, 'runId', self, 'r')],
    loadMedia: (self) => [[reentrant({ type: 'custom' }, 'customType', self, m.MEDIA_FILE_IDS_KEY)]],
    stripThreadContext: (self) => ['prompt', reentrant({}, 'resumed', self, true)],
  }
  for (const [name, args] of Object.entries(guardCalls)) {
    const self = () => guard[name](...args(self))
    await run(`RuntimeGuard.${name} through a getter`, self)
  }

  // 4. Constructors through a getter in their options.
  {
    const self = () => new m.ChannelStore(reentrant({}, 'windowSize', self, 10))
    await run('new ChannelStore through a getter', self)
  }
  {
    const self = () => new m.RuntimeGuard(reentrant({}, 'inlineMaxBytes', self, 10))
    await run('new RuntimeGuard through a getter', self)
  }

  // 5. toJSON and a fetcher that call back in.
  {
    const self = () => m.buildThreadContext({ root: message(1), replies: [{ toJSON: () => (self(), message(2)) }] })
    await run('buildThreadContext through toJSON', self)
  }
  {
    let s2
    s2 = new m.ChannelStore({ fetchTimeout: 1000, fetcher: { fetchHistory: async () => (await s2.buildContext('C', ts(1)), { ok: true, messages: [] }) } })
    s2.ingest({ type: 'message', channelId: 'C', message: message(1) })
    await run('ChannelStore.buildContext through its fetcher', () => s2.buildContext('C', ts(1)))
  }
  process.stdout.write(JSON.stringify(results))
}

main().catch((e) => {
  process.stderr.write(String(e && e.stack))
  process.exit(2)
})
