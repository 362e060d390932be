'use strict'

// End to end with the real OpenClaw host: a throwaway OpenClaw home with the package
// installed as a plugin and selected in `plugins.slots.contextEngine`, a model provider
// pointed at the recorder, and scripted turns through `openclaw agent --local` in two
// Slack threads of one channel. The recorded requests must carry the engine's assembly
// and the SQLite file must hold the turns.

const assert = require('node:assert/strict')
const { execFileSync, spawn } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { startRecorder } = require('./recorder.js')
const { startSlackApi } = require('./slack-api.js')
const { packPlugin } = require('../../scripts/pack-plugin.js')

const openclawBin = path.join(__dirname, 'node_modules', 'openclaw', 'openclaw.mjs')

const THREAD_A = 'agent:main:slack:channel:C0TEAM:thread:1775835600.000100'
const THREAD_B = 'agent:main:slack:channel:C0TEAM:thread:1775839200.000200'

// Thread A as Slack holds it (thread B is not found there): a colleague's message the
// agent never saw in its session, which the thread block must bring in.
const SLACK = {
  threads: {
    'C0TEAM:1775835600.000100': [
      { type: 'message', ts: '1775835600.000100', user: 'U7', text: 'payments rollout thread', thread_ts: '1775835600.000100', reply_count: 3 },
      { type: 'message', ts: '1775835610.000100', user: 'U8', text: 'Slack-only note: the payments canary takes 5% of traffic', thread_ts: '1775835600.000100' },
      { type: 'message', ts: '1775835620.000100', bot_id: 'B1', username: 'openclaw', text: 'Noted.', thread_ts: '1775835600.000100' },
      { type: 'message', ts: '1775835630.000100', user: 'U7', text: 'and who owns the rollback?', thread_ts: '1775835600.000100' },
    ],
  },
  users: { U7: 'Priya', U8: 'Marco' },
}

/**
 * Runs the openclaw CLI without blocking this process's event loop (the recorder answers
 * the model requests from it); rejects on a non-zero exit unless `allowFailure`, then
 * resolves with the exit `status`.
 */
function openclaw(env, args, { allowFailure = false } = {}) {
  return new Promise((resolve, reject) => {
    const started = Date.now()
    const child = spawn(process.execPath, [openclawBin, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => (stdout += d))
    child.stderr.on('data', (d) => (stderr += d))
    const timer = setTimeout(() => child.kill('SIGKILL'), 240_000)
    child.on('close', (status, signal) => {
      clearTimeout(timer)
      if (status === 0 || (allowFailure && status !== null)) resolve({ stdout, stderr, status, ms: Date.now() - started })
      else reject(new Error(`openclaw ${args.join(' ')} exited ${status} (${signal ?? 'no signal'})\n${stdout}\n${stderr}`))
    })
  })
}

/**
 * The package as a user gets it: the files `npm pack` puts in the tarball, with the addon
 * built for this machine beside its loader (where a prebuilt platform package would
 * otherwise supply it), unpacked (for the inspector and the checks).
 */
function stagePackage(home) {
  return packPlugin({ outDir: home, work: fs.mkdtempSync(path.join(home, 'pack-')) })
}

const text = (body) => JSON.stringify([body.system ?? '', body.messages])

/** What the recorded model requests must show of the engine's assembly. */
function checkRequests(requests, slackCalls) {
  const a = requests.filter((r) => /Thread A turn/.test(text(r.body)))
  const b = requests.filter((r) => /Thread B turn/.test(text(r.body)))
  assert.ok(a.length >= 5 && b.length >= 2, `requests per thread: A ${a.length}, B ${b.length}`)
  // Thread keys keep the threads apart: neither thread's requests carry the other's words.
  for (const r of a) assert.ok(!/Lisbon|offsite|40k euros/.test(text(r.body)), 'a thread A request holds thread B text')
  for (const r of b) assert.ok(!/payments|canary|rollback|Slack-only/.test(text(r.body)), 'a thread B request holds thread A text')
  // The last turn of thread A: the thread fits the budget OpenClaw passes (the model's
  // window) well within the engine's contextThreshold, so OpenClaw's own messages go
  // through verbatim, every earlier turn included, and the store's summary of them (it
  // still folds at its triggers) is not sent beside them.
  const last = a[a.length - 1].body
  const system = JSON.stringify(last.system ?? '')
  assert.match(system, /<conversation_memory>\\n<policy>\\n## Conversation recall\\n/, 'no memory section in the system prompt')
  assert.ok(!system.includes('<thread_summary>'), 'a summary of messages sent verbatim is in the system prompt')
  // This turn's part (here the Slack thread block: the thread as Slack holds it, names
  // from users.info, the channel id as Slack spells it although OpenClaw lowercases
  // session keys) changes every turn: it is one user message just before the turn's
  // prompt, after everything a prompt cache reuses, and never in the system prompt.
  assert.ok(!system.includes('memory_for_this_turn'), "the engine's turn part is in the system prompt")
  // The recall tools the plugin registers are offered in every request, and the system
  // prompt says when to use them.
  for (const r of requests) {
    const names = (r.body.tools ?? []).map((t) => t.name)
    assert.ok(names.includes('conversation_search') && names.includes('conversation_expand'), `the recall tools are not offered: ${names.join(', ')}`)
  }
  assert.match(system, /## Conversation recall/, 'no recall guidance in the system prompt')
  // The model's search at turn 4 ran in the host: its result, in the next request, is
  // the stored decision of turn 2, from this thread only.
  const results = requests.flatMap((r) =>
    r.body.messages.flatMap((m) => (Array.isArray(m.content) ? m.content.filter((b) => b.type === 'tool_result') : [])),
  )
  const found = results.map((b) => (typeof b.content === 'string' ? b.content : JSON.stringify(b.content))).find((t) => t.includes('results'))
  assert.ok(found, 'no conversation_search result came back to the model')
  assert.match(found, /Thread A turn 2: we decided the canary goes out on Tuesday/, 'the search did not find the decision')
  assert.ok(!/Lisbon|offsite/.test(found), "the search reached thread B's messages")
  const texts = last.messages.map((m) => (typeof m.content === 'string' ? m.content : m.content.map((b) => b.text ?? '').join('\n')))
  const at = texts.findIndex((t) => t.includes('<memory_for_this_turn>'))
  assert.ok(at >= 0, 'no turn message in the last request')
  assert.match(
    texts[at],
    /<memory_for_this_turn>\n(?:[^<]|<(?!\/memory_for_this_turn>))*<slack_thread_context>\nPriya: payments rollout thread\nMarco: Slack-only note: the payments canary takes 5% of traffic\nopenclaw: Noted.\nCurrent question: and who owns the rollback\?\n<\/slack_thread_context>/,
    'no Slack thread block in the turn message',
  )
  assert.match(texts[at + 1], /Thread A turn 5:/, 'the turn message is not just before the prompt')
  // Sent once, and never again: OpenClaw assembles twice a run, on what the first
  // assembly returned, and does not write the message to its transcript.
  for (const r of a) {
    const n = JSON.stringify(r.body.messages).split('<memory_for_this_turn>').length - 1
    assert.ok(n <= 1, `a request holds ${n} turn messages`)
  }
  const replies = slackCalls.filter((c) => c.method === 'conversations.replies')
  assert.ok(replies.some((c) => c.params.channel === 'C0TEAM' && c.params.ts === '1775835600.000100'), 'thread A was not fetched from Slack')
  assert.ok(slackCalls.every((c) => c.auth === 'Bearer xoxb-e2e-not-secret'), 'a Slack call without the bot token')
  // Verbatim: turn 1, which the store's summary covers, is sent as it was, with the
  // decision of turn 2 and the preference of turn 3, in order, before the current turn.
  const sent = JSON.stringify(last.messages.filter((m, i) => i !== at))
  const order = ['Thread A turn 1:', 'Thread A turn 2: we decided the canary goes out on Tuesday', 'Thread A turn 3: I prefer rollbacks to be automatic', 'Thread A turn 4:', 'Thread A turn 5:']
  const where = order.map((t) => sent.indexOf(t))
  assert.ok(where.every((x, i) => x >= 0 && (i === 0 || x > where[i - 1])), `the thread was not sent verbatim, in order: ${where.join(', ')}`)
  // (A tool result quoting earlier turns is the model's own lookup, not a kept turn.)
  const isToolResult = (m) => Array.isArray(m.content) && m.content.some((b) => b.type === 'tool_result')
  const userTurns = last.messages.filter((m, i) => i !== at && m.role === 'user' && !isToolResult(m) && /Thread A turn \d/.test(JSON.stringify(m.content))).length
  assert.ok(userTurns >= 5, `the last request sent ${userTurns} user turns of thread A verbatim, not all 5`)
  // Within the model's window (contextWindow 32,000, estimated at 4 characters a token,
  // tools and OpenClaw's own system prompt included).
  for (const r of requests) assert.ok(JSON.stringify(r.body).length / 4 <= 32_000, 'a request over the budget')
}

/** The SQLite file holds every turn, by thread key. */
function checkStore(staged, dbPath) {
  const { MemoryStore } = require(staged)
  const memory = new MemoryStore({ path: dbPath })
  try {
    // OpenClaw lowercases session keys, Slack ids included.
    const session = 'agent:main:slack:channel:c0team'
    const a = memory.recent(session, 'reply:c0team:1775835600.000100', 100)
    const b = memory.recent(session, 'reply:c0team:1775839200.000200', 100)
    const turns = (rows, re) => rows.filter((m) => m.role === 'user' && re.test(m.text)).length
    assert.equal(turns(a, /Thread A turn/), 5, `thread A holds ${a.length} messages`)
    assert.equal(turns(b, /Thread B turn/), 2, `thread B holds ${b.length} messages`)
    assert.ok(a.some((m) => m.role === 'assistant') && b.some((m) => m.role === 'assistant'), 'no assistant turns stored')
    const summary = memory.record(session, 'thread_summary', 'reply:c0team:1775835600.000100')
    assert.ok(summary && summary.summaryVersion >= 1, 'thread A has no summary')
    console.log(`store: thread A ${a.length} messages, thread B ${b.length}, summary v${summary.summaryVersion}`)
  } finally {
    memory.close()
  }
}

/** OpenClaw's own transcript database reads back as one conversation per thread. */
function checkTranscripts(staged, agentDb) {
  const { readOpenClawTranscripts } = require(staged)
  const sessions = readOpenClawTranscripts(agentDb)
  const turns = Object.fromEntries(sessions.map((s) => [s.sessionKey, s.turns.length]))
  assert.deepEqual(turns, {
    'agent:main:slack:channel:c0team:thread:1775835600.000100': 10,
    'agent:main:slack:channel:c0team:thread:1775839200.000200': 4,
  })
  console.log(`transcripts: ${sessions.length} OpenClaw sessions read back`)
}

/**
 * The package installed without its native addon (a platform package that did not come
 * with it): OpenClaw loads the plugin, the plugin says why it registers nothing, and the
 * turn runs on OpenClaw's own engine: a model request, exit 0.
 */
async function withoutAddon(staged) {
  // At turn 4 the model looks the decision up with the engine's search tool, as the
  // recall guidance tells it to.
  const recorder = await startRecorder({
    toolUse: (body) =>
      // The prompt is one of the newest messages (OpenClaw's runtime context may follow it).
      /Thread A turn 4:/.test(JSON.stringify(body.messages.slice(-2))) && (body.tools ?? []).some((t) => t.name === 'conversation_search')
        ? { name: 'conversation_search', input: { query: 'canary Tuesday', lane: 'current' } }
        : null,
  })
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'openclaw-e2e-noaddon-'))
  try {
    const bare = path.join(home, 'package')
    fs.cpSync(staged, bare, { recursive: true })
    for (const f of fs.readdirSync(bare)) if (/\.node$/.test(f)) fs.rmSync(path.join(bare, f))
    const { env, configPath } = openclawHome(home, recorder)
    await installPlugin(env, configPath, bare)
    const run = await openclaw(env, ['agent', '--local', '--session-key', THREAD_A, '--message', 'Thread A turn 1: hello without the addon', '--json', '--timeout', '120'])
    const asked = recorder.requests.filter((r) => r.body && Array.isArray(r.body.messages))
    assert.ok(asked.length > 0, `no model request without the addon\n${run.stdout}\n${run.stderr}`)
    assert.match(`${run.stdout}\n${run.stderr}`, /no native addon could be loaded/, 'the plugin did not say why it registered nothing')
    console.log(`without the addon: ${asked.length} model requests on OpenClaw's own engine`)
  } finally {
    await recorder.close()
    fs.rmSync(home, { recursive: true, force: true })
  }
}

/**
 * Installs the plugin from `source` (an archive or a directory) into the OpenClaw home of
 * `env`, selects it in the context-engine slot and, with `config`, enables it with that
 * config, keeping what the install recorded.
 */
async function installPlugin(env, configPath, source, config) {
  await openclaw(env, ['plugins', 'install', source, '--force', '--accept-capabilities'])
  const installed = JSON.parse(fs.readFileSync(configPath, 'utf8'))
  installed.plugins = installed.plugins ?? {}
  installed.plugins.slots = { ...installed.plugins.slots, contextEngine: 'context-engine' }
  if (config !== undefined) {
    installed.plugins.entries = {
      ...installed.plugins.entries,
      'context-engine': { ...installed.plugins.entries?.['context-engine'], enabled: true, config },
    }
  }
  fs.writeFileSync(configPath, JSON.stringify(installed, null, 2))
}

/**
 * A throwaway OpenClaw home whose model provider is the recorder, a model of
 * `contextWindow` tokens (32,000 unless given) answering up to `maxTokens` (4,096).
 */
function openclawHome(home, recorder, { contextWindow = 32_000, maxTokens = 4096, setupDone = false } = {}) {
  const state = path.join(home, '.openclaw')
  fs.mkdirSync(state, { recursive: true })
  if (setupDone) {
    // A workspace past its first-run setup, as a user's is from the second day on:
    // OpenClaw's own templates of its files, without the setup script (BOOTSTRAP.md).
    const templates = path.join(__dirname, 'node_modules', 'openclaw', 'docs', 'reference', 'templates')
    fs.mkdirSync(path.join(home, 'workspace'), { recursive: true })
    for (const f of ['AGENTS.md', 'SOUL.md', 'IDENTITY.md', 'USER.md']) fs.copyFileSync(path.join(templates, f), path.join(home, 'workspace', f))
  }
  const config = {
    agents: { defaults: { model: { primary: 'recorder/echo-1' }, workspace: path.join(home, 'workspace') } },
    models: {
      mode: 'merge',
      providers: {
        recorder: {
          baseUrl: recorder.url,
          apiKey: 'test-key-not-secret',
          api: 'anthropic-messages',
          models: [{ id: 'echo-1', name: 'Echo', reasoning: false, input: ['text'], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow, maxTokens }],
        },
      },
    },
  }
  const configPath = path.join(state, 'openclaw.json')
  fs.writeFileSync(configPath, JSON.stringify(config, null, 2))
  const env = {
    ...process.env,
    HOME: home,
    OPENCLAW_HOME: home,
    OPENCLAW_STATE_DIR: state,
    OPENCLAW_CONFIG_PATH: configPath,
    NO_COLOR: '1',
    CI: 'true',
  }
  return { env, configPath }
}

/**
 * Runs the scripted turns against the plugin `pack` (`packPlugin`'s result: the archive
 * installed, the unpacked package checked; default: packed now).
 */
async function main(pack) {
  // At turn 4 the model looks the decision up with the engine's search tool, as the
  // recall guidance tells it to.
  const recorder = await startRecorder({
    toolUse: (body) =>
      // The prompt is one of the newest messages (OpenClaw's runtime context may follow it).
      /Thread A turn 4:/.test(JSON.stringify(body.messages.slice(-2))) && (body.tools ?? []).some((t) => t.name === 'conversation_search')
        ? { name: 'conversation_search', input: { query: 'canary Tuesday', lane: 'current' } }
        : null,
  })
  const slack = await startSlackApi(SLACK)
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'openclaw-e2e-'))
  pack = pack ?? stagePackage(home)
  const { staged } = pack
  const dbPath = path.join(home, 'memory.sqlite')
  const { env, configPath } = openclawHome(home, recorder)
  const state = path.dirname(configPath)
  try {
    // Installed as the README says: the archive `npm run pack:plugin` writes.
    await installPlugin(env, configPath, pack.tarball, {
      path: dbPath,
      compaction: { maxRecentMessages: 6, keepRecent: 2, minFold: 1 },
      slack: { botToken: 'xoxb-e2e-not-secret', apiUrl: slack.url },
    })
    const turns = [
      [THREAD_A, 'Thread A turn 1: plan the v2.4 rollout for the payments service.'],
      [THREAD_B, 'Thread B turn 1: book the offsite venue in Lisbon.'],
      [THREAD_A, 'Thread A turn 2: we decided the canary goes out on Tuesday.'],
      [THREAD_A, 'Thread A turn 3: I prefer rollbacks to be automatic.'],
      [THREAD_B, 'Thread B turn 2: the budget is 40k euros.'],
      [THREAD_A, 'Thread A turn 4: what did we decide about the canary?'],
      [THREAD_A, 'Thread A turn 5: and who owns the rollback?'],
    ]
    for (const [key, message] of turns) {
      const before = recorder.requests.length
      const run = await openclaw(env, ['agent', '--local', '--session-key', key, '--message', message, '--json', '--timeout', '120'])
      const asked = recorder.requests.slice(before).filter((r) => r.body && Array.isArray(r.body.messages))
      assert.ok(asked.length > 0, `no model request for "${message}"\n${run.stdout}\n${run.stderr}`)
    }
    const modelRequests = recorder.requests.filter((r) => r.body && Array.isArray(r.body.messages))
    if (process.env.KEEP_E2E_HOME) fs.writeFileSync(path.join(home, 'requests.json'), JSON.stringify(modelRequests, null, 1))
    checkRequests(modelRequests, slack.calls)
    checkStore(staged, dbPath)
    checkTranscripts(staged, path.join(state, 'agents', 'main', 'agent', 'openclaw-agent.sqlite'))
    await withoutAddon(staged)
    return { requests: modelRequests.length }
  } finally {
    await recorder.close()
    await slack.close()
    if (!process.env.KEEP_E2E_HOME) fs.rmSync(home, { recursive: true, force: true })
    else console.log(`kept ${home}`)
  }
}

if (require.main === module) {
  main().then(
    (r) => {
      console.log(`e2e: ${r.requests} model requests checked`)
      process.exit(0)
    },
    (err) => {
      console.error(err)
      process.exit(1)
    },
  )
}

module.exports = { main, checkRequests, checkStore, checkTranscripts, stagePackage, withoutAddon, openclaw, openclawHome, installPlugin }
