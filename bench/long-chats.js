'use strict'

// Long two-person chats with questions about them, made from the public chitchat corpus
// (bench/chat-corpus.js: `chitchat-dataset` 0.9.0 from PyPI) by a fixed method, for
// bench/memory-recall.js. Nothing here looks at how any context builder does.
//
// The chats. The corpus's conversations are between two people and carry their start
// time. Every pair of people is a chat, its conversations (in start order) its sessions,
// spread over days or weeks. The chats kept are the `count` pairs with the most turns
// (ties by the pair's ids), each of at least `minTurns` turns. A turn is one person's run
// of consecutive messages, joined by a space, at the time of its first message; its id is
// `D<session>:<turn>`, both from 1. The pair's first speaker is the `user`, the other the
// `assistant`; each gets a name from NAMES, for the questions.
//
// The questions, four kinds, each with the ids of the turns that hold its answer:
// - asked: a turn whose last sentence is a question to the other person ("you" or "your"
//   in it, at least two words that are not STOP_WORDS), answered by the other person's
//   next turn in the same session (at least four words, not itself a question). The
//   question, turned into the third person ("What do you do for fun?" asked by Ann of
//   Bo: "What does Bo do for fun?"), is asked; the answering turn is the evidence and
//   its text the answer. Its words are the asking turn's, not the answer's, as when
//   someone later asks what was said.
// - told: a turn where a person says something of themselves by one of DISCLOSURES
//   ("my favorite movie is Up", "I'm from Ohio", ...); the question is the pattern's
//   ("What is Ann's favorite movie?"), the evidence that turn, the answer the part told.
// - when: a turn where a person tells of something they did and when ("I went camping
//   last weekend", "we saw Dune on Friday": one of EVENT_VERBS, up to five words, then a
//   time word of WHEN_WORDS); the question asks when ("When did Ann go camping?"), the
//   evidence is that turn, the answer the day it was written ("14 March 2023", as a
//   context that dates its turns would show it).
// - two-turn: a told question that two or more turns of the chat answer (a person said
//   "I love hiking" in one session and "I really enjoy baking" in another: "What does Ann
//   enjoy doing?"); its evidence is every such turn, at most four (the first four), its
//   answer the first one's. A question needing them all, written in words most of them
//   do not use.
// Any other question asked twice in one chat (the same words) is dropped: its answer is
// unclear.

const { loadDataset } = require('./chat-corpus')

const NAMES = [
  'Avery', 'Blake', 'Casey', 'Dana', 'Emery', 'Finley', 'Gray', 'Harper', 'Indigo', 'Jordan',
  'Kendall', 'Logan', 'Morgan', 'Noel', 'Oakley', 'Parker', 'Quinn', 'Reese', 'Sawyer', 'Tatum',
]

/** Words that do not make a question specific. */
const STOP_WORDS = new Set(
  ('a an the i you your yours me my we us our it its is are was were be been do does did have has had ' +
    'what whats how who whom which when where why that this to of in on for with at by from and or but ' +
    'so if about up out just like really any anything some something there here ok okay yeah yes no not ' +
    'oh hey hi hello lol haha right now too much think know go going get doing').split(' '),
)

/** What a person tells of themselves: a pattern over the turn's lower-cased text, the question. */
const DISCLOSURES = [
  [/\bmy fav(?:ou?rite)? ([a-z]+(?: [a-z]+)?) (?:is|are|was|would be|has to be) ([^.,!?;]{2,40})/, (n, m) => `What is ${n}'s favorite ${m[1]}?`],
  [/\bi(?:'m| am) from ([a-z][^.,!?;]{1,30})/, (n) => `Where is ${n} from?`],
  [/\bi grew up in ([^.,!?;]{2,30})/, (n) => `Where did ${n} grow up?`],
  [/\bi(?:'m| am) (?:majoring|studying) (?:in )?([^.,!?;]{2,30})/, (n) => `What is ${n} studying?`],
  [/\bmy major is ([^.,!?;]{2,30})/, (n) => `What is ${n}'s major?`],
  [/\bi served (?:my |a )?mission in ([^.,!?;]{2,30})/, (n) => `Where did ${n} serve a mission?`],
  [/\bi work (?:at|for) ([^.,!?;]{2,30})/, (n) => `Where does ${n} work?`],
  [/\bi have (\w+) (siblings|brothers|sisters|kids|children|roommates|dogs|cats)\b/, (n, m) => `How many ${m[2]} does ${n} have?`],
  [/\bi (?:really )?(?:love|like|enjoy) ([a-z]+ing(?: [a-z]+)?)/, (n, m) => `What does ${n} enjoy doing?`],
]

/** Past-tense verbs a told event opens on, with the form a "When did ... ?" question asks by. */
const EVENT_VERBS = {
  went: 'go', got: 'get', saw: 'see', watched: 'watch', visited: 'visit', started: 'start',
  finished: 'finish', moved: 'move', bought: 'buy', met: 'meet', took: 'take', made: 'make',
  played: 'play', tried: 'try', ran: 'run', found: 'find', lost: 'lose', won: 'win',
  joined: 'join', quit: 'quit', left: 'leave', hiked: 'hike', cooked: 'cook', baked: 'bake',
  read: 'read', wrote: 'write', saw: 'see', drove: 'drive', flew: 'fly', bought: 'buy',
}
const WHEN_WORDS = '(?:yesterday|last (?:night|week|weekend|month|year|summer|semester|monday|tuesday|wednesday|thursday|friday|saturday|sunday)|this (?:morning|afternoon|weekend|past weekend)|(?:on )?(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday))'
const EVENT = new RegExp(`\\b(?:i|we) (${Object.keys(EVENT_VERBS).join('|')}) ((?:[a-z']+ ){0,4}?[a-z']+) ${WHEN_WORDS}\\b`)
const MONTH_NAMES = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December']
/** The UTC day a turn was written, as "14 March 2023". */
const dayOf = (ts) => {
  const d = new Date(ts)
  return `${d.getUTCDate()} ${MONTH_NAMES[d.getUTCMonth()]} ${d.getUTCFullYear()}`
}

/** The question's last sentence, in the third person: "you" is `other`, "I" is `asker`. */
function thirdPerson(sentence, asker, other) {
  const swaps = [
    [/\b(are|were|do|have|did|would|could|can|will|should|had) you\b/gi, (_, v) => `${{ are: 'is', were: 'was', do: 'does', have: 'has' }[v.toLowerCase()] ?? v.toLowerCase()} ${other}`],
    [/\byou're\b/gi, `${other} is`],
    [/\byou've\b/gi, `${other} has`],
    [/\byou'd\b/gi, `${other} would`],
    [/\byou'll\b/gi, `${other} will`],
    [/\byours?\b/gi, `${other}'s`],
    [/\byourself\b/gi, 'themselves'],
    [/\byou\b/gi, other],
    [/\bi'm\b/gi, `${asker} is`],
    [/\bmy\b/gi, `${asker}'s`],
    [/\bi\b/gi, asker],
    [/\bme\b/gi, asker],
  ]
  let out = sentence.trim()
  for (const [re, to] of swaps) out = out.replace(re, to)
  out = out.charAt(0).toUpperCase() + out.slice(1)
  return out.endsWith('?') ? out : `${out}?`
}

function words(text) {
  return text.toLowerCase().match(/[a-z']+/g) ?? []
}

/**
 * The chats and their questions.
 * @param {{ count?: number, minTurns?: number }} [options]
 * @returns {Promise<Array<{ id: string, names: [string, string], sessions: Array<{ start: number, turns: Array<{ id: string, speaker: 0|1, role: 'user'|'assistant', text: string, ts: number }> }>, questions: Array<{ id: string, kind: 'asked'|'told'|'when'|'two-turn', question: string, evidence: string[], answer: string }> }>>}
 */
async function loadLongChats({ count = 10, minTurns = 300 } = {}) {
  const data = await loadDataset()
  const pairs = new Map()
  for (const c of Object.values(data)) {
    const senders = [...new Set(c.messages.flat().map((m) => m.sender))].sort()
    if (senders.length !== 2) continue
    const key = senders.join('+')
    if (!pairs.has(key)) pairs.set(key, [])
    pairs.get(key).push(c)
  }
  const turnsOf = (cs) => cs.reduce((n, c) => n + c.messages.length, 0)
  const chosen = [...pairs.entries()]
    .filter(([, cs]) => turnsOf(cs) >= minTurns)
    .sort((a, b) => turnsOf(b[1]) - turnsOf(a[1]) || (a[0] < b[0] ? -1 : 1))
    .slice(0, count)
  return chosen.map(([, conversations], k) => buildChat(conversations, k))
}

function buildChat(conversations, k) {
  const sorted = conversations.slice().sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0))
  const first = sorted[0].messages[0][0].sender
  const names = [NAMES[(2 * k) % NAMES.length], NAMES[(2 * k + 1) % NAMES.length]]
  const sessions = sorted.map((c, s) => ({
    start: Date.parse(c.start),
    turns: c.messages
      .map((turn, t) => {
        const speaker = turn[0].sender === first ? 0 : 1
        return {
          id: `D${s + 1}:${t + 1}`,
          speaker,
          role: speaker === 0 ? 'user' : 'assistant',
          text: turn.map((m) => String(m.text ?? '').trim()).filter((x) => x !== '').join(' '),
          ts: Date.parse(turn[0].timestamp),
        }
      })
      .filter((t) => t.text !== '' && Number.isFinite(t.ts)),
  }))
  const candidates = []
  for (const session of sessions) {
    const turns = session.turns
    for (let i = 0; i < turns.length; i++) {
      const turn = turns[i]
      const next = turns[i + 1]
      // asked
      if (next && next.speaker !== turn.speaker && turn.text.endsWith('?')) {
        const sentence = turn.text.split(/(?<=[.!?])\s+/).pop()
        const w = words(sentence)
        const specific = w.filter((x) => !STOP_WORDS.has(x)).length >= 2
        const answer = next.text
        if ((w.includes('you') || w.includes('your')) && specific && answer.split(/\s+/).length >= 4 && !answer.endsWith('?')) {
          candidates.push({ kind: 'asked', question: thirdPerson(sentence, names[turn.speaker], names[next.speaker]), evidence: [next.id], answer })
        }
      }
      // when
      const lower = turn.text.toLowerCase()
      const event = lower.match(EVENT)
      if (event) {
        const what = event[2].replace(/\bmy\b/g, `${names[turn.speaker]}'s`).replace(/\b(?:me|myself)\b/g, names[turn.speaker])
        candidates.push({ kind: 'when', question: `When did ${names[turn.speaker]} ${EVENT_VERBS[event[1]]} ${what}?`, evidence: [turn.id], answer: dayOf(turn.ts) })
      }
      // told
      for (const [re, ask] of DISCLOSURES) {
        const m = lower.match(re)
        if (m) {
          const told = m[m.length - 1].trim()
          candidates.push({ kind: 'told', question: ask(names[turn.speaker], m), evidence: [turn.id], answer: told })
          break
        }
      }
    }
  }
  const times = new Map()
  for (const q of candidates) times.set(q.question, [...(times.get(q.question) ?? []), q])
  const kept = []
  for (const q of candidates) {
    const same = times.get(q.question)
    if (same.length === 1) kept.push(q)
    else if (q.kind === 'told' && same[0] === q) {
      const evidence = [...new Set(same.flatMap((x) => x.evidence))].slice(0, 4)
      if (evidence.length >= 2) kept.push({ kind: 'two-turn', question: q.question, evidence, answer: q.answer })
    }
  }
  const questions = kept.map((q, i) => ({ id: `c${k + 1}q${i + 1}`, ...q }))
  return { id: `chat${k + 1}`, names, sessions, questions }
}

module.exports = { loadLongChats, thirdPerson }
