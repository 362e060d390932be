'use strict'

// Past the window in the real host: one conversation of long notes and questions driven
// well past a small model window (16,000 and 32,000 tokens), through `openclaw agent
// --local`, once with this plugin in the context-engine slot and once with OpenClaw's own
// engine, against a recorder that counts each request's input tokens and refuses, as the
// Messages API does, one whose input plus `max_tokens` exceeds the window. What each run
// sent: the requests over the window, the turns that failed, the input tokens in all,
// and (the plugin) how often the thread summary was rewritten.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { startRecorder, lastUserText } = require('./recorder.js')
const { openclaw, openclawHome, installPlugin } = require('./e2e.js')
const { longNotes } = require('./long-notes.js')

/** The plugin's memory file in a run's home. */
const PLUGIN_DB = 'memory.sqlite'
const SESSION = 'agent:main:slack:channel:C0NOTES:thread:1775835600.000100'
/** The memory session and lane of SESSION as the plugin files them (OpenClaw lowercases keys). */
const MEMORY_SESSION = 'agent:main:slack:channel:c0notes'
const MEMORY_LANE = 'reply:c0notes:1775835600.000100'

/**
 * The model's answer: for OpenClaw's own compaction, the structured summary its prompt asks
 * for (its sections, the notes' decisions); for its memory flush, the "NO_REPLY" it asks
 * for when there is nothing to store; else a few sentences about the turn, as an assistant
 * writes them.
 */
function answer(body) {
  const system = typeof body.system === 'string' ? body.system : (body.system ?? []).map((b) => b.text ?? '').join('\n')
  const last = contentOf(body.messages?.at(-1) ?? { content: '' })
  if (/context summarization assistant/.test(system)) {
    const decisions = [...last.matchAll(/Decision: ([^.\n]*)\./g)].map((m) => `- ${m[1]}`)
    return ['## Decisions', ...(decisions.length ? decisions : ['- (none)']), '## Open TODOs', '- (none)', '## Constraints/Rules', '- (none)', '## Pending user asks', '- (none)', '## Exact identifiers', '- (none)'].join('\n')
  }
  if (/^Pre-compaction memory flush/m.test(lastUserText(body))) return 'NO_REPLY'
  // The newest user text of the conversation (OpenClaw's runtime context may follow it).
  const texts = (body.messages ?? []).filter((m) => m.role === 'user').map((m) => contentOf(m))
  const asked = (texts.reverse().find((t) => /Turn \d+:/.test(t)) ?? lastUserText(body)).replace(/\s+/g, ' ')
  const turn = /Turn (\d+)/.exec(asked)?.[1] ?? '?'
  const decision = /Decision: ([^.]*)\./.exec(asked)?.[1]
  return decision
    ? `Noted for turn ${turn}. I have recorded the decision: ${decision}. I will keep the open risks, the customer notice and the monitoring changes in mind, and I can draft the decision record when you want it.`
    : `On turn ${turn}: I looked back over the notes we have. ${asked.slice(0, 160)}`
}

function contentOf(m) {
  return typeof m.content === 'string' ? m.content : (m.content ?? []).map((b) => b.text ?? '').join('\n')
}

/**
 * Whether an `openclaw agent --json` run ended its turn without a reply: a non-zero exit,
 * OpenClaw's overflow guidance ("Context overflow: ... Try /reset (or /new)") or a failed
 * preflight compaction in what it printed, or no request the model answered.
 */
function failedTurn(run, asked) {
  if (run.status !== 0) return true
  if (/Context overflow:|context_overflow|Preflight compaction required but failed/.test(`${run.stdout}\n${run.stderr}`)) return true
  return !asked.some((r) => !r.refused)
}

/**
 * One conversation of `turns` turns at `contextWindow` with `engine` ('context-engine':
 * the plugin from `pack`, installed and selected; 'default': OpenClaw's own).
 */
async function smallWindowRun({ pack, contextWindow, engine, turns, paragraphs, maxTokens = 4096, refuseWithReply = false, log = () => {} }) {
  const recorder = await startRecorder({ contextWindow, refuseWithReply, reply: answer })
  const home = fs.mkdtempSync(path.join(os.tmpdir(), `openclaw-window-${engine}-`))
  const dbPath = path.join(home, PLUGIN_DB)
  const { env, configPath } = openclawHome(home, recorder, { contextWindow, maxTokens, setupDone: true })
  const perTurn = []
  try {
    if (engine === 'context-engine') await installPlugin(env, configPath, pack.tarball, { path: dbPath })
    const memory = engine === 'context-engine' ? () => new (require(pack.staged).MemoryStore)({ path: dbPath }) : null
    for (const [i, turn] of longNotes(turns, { paragraphs }).entries()) {
      const before = recorder.requests.length
      const run = await openclaw(env, ['agent', '--local', '--session-key', SESSION, '--message', turn.text, '--json', '--timeout', '120'], { allowFailure: true })
      const asked = recorder.requests.slice(before).filter((r) => r.body && Array.isArray(r.body.messages))
      let summaryVersion = null
      if (memory !== null && fs.existsSync(dbPath)) {
        const m = memory()
        try {
          summaryVersion = m.record(MEMORY_SESSION, 'thread_summary', MEMORY_LANE)?.summaryVersion ?? 0
        } finally {
          m.close()
        }
      }
      const failed = failedTurn(run, asked)
      const hostWarnings = hostMemoryWarnings(run)
      const sent = asked.filter((r) => !r.refused).at(-1)
      perTurn.push({ turn: i + 1, requests: asked.length, failed, summaryVersion, past: sent !== undefined && lacksEarlierTurn(sent.body, i + 1), largest: Math.max(0, ...asked.map((r) => r.inputTokens ?? 0)), hostWarnings, ms: run.ms })
      log(`${engine} ${contextWindow}: turn ${i + 1}: ${asked.length} requests, largest ${perTurn.at(-1).largest}${failed ? ', FAILED' : ''}${hostWarnings.length ? `, host warnings: ${hostWarnings.join(' | ')}` : ''}${summaryVersion === null ? '' : `, summary v${summaryVersion}`}`)
    }
    const requests = recorder.requests.filter((r) => r.body && Array.isArray(r.body.messages))
    if (process.env.KEEP_E2E_HOME) fs.writeFileSync(path.join(home, 'requests.json'), JSON.stringify(requests, null, 1))
    return { engine, contextWindow, turns: perTurn, requests: summarize(requests, contextWindow), home }
  } finally {
    await recorder.close()
    if (!process.env.KEEP_E2E_HOME) fs.rmSync(home, { recursive: true, force: true })
  }
}

/**
 * OpenClaw's memory index failing its session catch-up sync: the sync it starts without
 * awaiting when a run opens its memory (`runSessionStartupCatchup`) meets the run's agent
 * database already closed or closing at the end of a short run.
 */
const HOST_MEMORY_WARNING = /memory sync failed|database is not open|resources are closing/i

/**
 * The warnings OpenClaw's own memory index and agent database printed in a run (its
 * session catch-up sync failing on a closed database, a cleanup that found them closing).
 */
function hostMemoryWarnings(run) {
  return `${run.stdout}\n${run.stderr}`
    .split('\n')
    .filter((line) => HOST_MEMORY_WARNING.test(line))
    .map((line) => line.trim().slice(0, 200))
}

/**
 * Whether a request lacks one of the conversation's turns before `turn` among its
 * messages as the host's own (the session is past the window: an earlier turn is left out,
 * summarized or retrieved in the engine's turn message at most).
 */
function lacksEarlierTurn(body, turn) {
  const own = (body.messages ?? [])
    .filter((m) => m.role === 'user')
    .map(contentOf)
    .filter((t) => !t.includes('<memory_for_this_turn>'))
    .join('\n')
  for (let k = 1; k < turn; k++) if (!own.includes(`Turn ${k}:`)) return true
  return false
}

/** What a run's requests show against the window. */
function summarize(requests, contextWindow) {
  const counted = requests.filter((r) => r.inputTokens !== undefined)
  const over = counted.filter((r) => r.inputTokens + r.maxTokens > contextWindow)
  return {
    count: counted.length,
    over: over.length,
    refused: counted.filter((r) => r.refused).length,
    largestInput: Math.max(0, ...counted.map((r) => r.inputTokens)),
    largestWithReply: Math.max(0, ...counted.map((r) => r.inputTokens + r.maxTokens)),
    // What the model was sent in all (requests it refused included: they were sent).
    inputTokens: counted.reduce((n, r) => n + r.inputTokens, 0),
  }
}

/** The runs the CI step makes: a window and the conversation driven well past it. */
const RUNS = [
  { contextWindow: 16_000, turns: 14, paragraphs: [8, 12] },
  { contextWindow: 32_000, turns: 30, paragraphs: [20, 28] },
]

/**
 * The most summary rewrites in any 10 consecutive turns of a run from the turn it went
 * past the window on (before, the summary stands for messages the request shows verbatim
 * and is not sent).
 */
function rewritesPer10(run) {
  const from = run.turns.findIndex((t) => t.past)
  if (from < 0) return 0
  const v = run.turns.map((t) => t.summaryVersion ?? 0)
  let most = 0
  for (let i = from; i < v.length; i++) most = Math.max(most, v[Math.min(v.length - 1, i + 9)] - v[i - 1 < 0 ? 0 : i - 1])
  return most
}

/**
 * Each run of RUNS with the plugin (`pack`) and OpenClaw's own engine side by side; checks
 * the plugin's: no request whose input plus `max_tokens` is over the window, no failed
 * turn, no more input tokens in all than OpenClaw's own engine, the summary rewritten at
 * most once in any 10 turns and at least once (the conversation went past the window).
 */
async function smallWindows(pack, log = (line) => process.stdout.write(`${line}\n`)) {
  const failures = []
  for (const r of RUNS) {
    const [plugin, host] = await Promise.all(['context-engine', 'default'].map((engine) => smallWindowRun({ pack, engine, ...r })))
    for (const run of [plugin, host]) {
      const q = run.requests
      const failed = run.turns.filter((t) => t.failed).length
      log(
        `small window ${r.contextWindow}: ${run.engine}: ${run.turns.length} turns, ${failed} failed; ${q.count} requests, ${q.over} over the window with max_tokens (largest input ${q.largestInput}, with the reply ${q.largestWithReply}); ${q.inputTokens} input tokens` +
          `; past the window on ${run.turns.filter((t) => t.past).length} turns` +
          (run.engine === 'context-engine' ? `; summary v${run.turns.at(-1).summaryVersion}, at most ${rewritesPer10(run)} rewrite(s) in 10 turns past the window` : '') +
          `; OpenClaw's memory sync warned on ${run.turns.filter((t) => t.hostWarnings.length > 0).length} turns`,
      )
    }
    const where = `window ${r.contextWindow}`
    if (plugin.requests.over > 0) failures.push(`${where}: ${plugin.requests.over} plugin requests over the window with max_tokens`)
    const failed = plugin.turns.filter((t) => t.failed).map((t) => t.turn)
    if (failed.length > 0) failures.push(`${where}: plugin turns ${failed.join(', ')} failed`)
    if (plugin.requests.inputTokens > host.requests.inputTokens) {
      failures.push(`${where}: the plugin sent ${plugin.requests.inputTokens} input tokens, OpenClaw's own engine ${host.requests.inputTokens}`)
    }
    // OpenClaw's memory index warns of its own agent database (a sync racing the end of a
    // short run, with either engine); never of the plugin's files or the plugin.
    const ours = plugin.turns.flatMap((t) => t.hostWarnings).filter((w) => w.includes(PLUGIN_DB))
    if (ours.length > 0) failures.push(`${where}: OpenClaw's memory warned of the plugin: ${ours[0]}`)
    const past = plugin.turns.filter((t) => t.past).length
    if (past < 5) failures.push(`${where}: the conversation went past the window on ${past} turns only`)
    if (rewritesPer10(plugin) > 1) failures.push(`${where}: the summary was rewritten ${rewritesPer10(plugin)} times in 10 turns`)
  }
  if (failures.length > 0) throw new Error(`past the window:\n${failures.join('\n')}`)
}

module.exports = { HOST_MEMORY_WARNING, smallWindowRun, smallWindows, rewritesPer10, RUNS, SESSION }

if (require.main === module) {
  const { stagePackage } = require('./e2e.js')
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'openclaw-windows-'))
  smallWindows(stagePackage(work)).then(
    () => {
      fs.rmSync(work, { recursive: true, force: true })
      process.exit(0)
    },
    (err) => {
      console.error(err)
      process.exit(1)
    },
  )
}
